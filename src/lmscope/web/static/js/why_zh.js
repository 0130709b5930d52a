// Chinese for what the lab's result files say in English only: the column headers of their
// tables, the text in their cells (model shapes, why a run stopped) and the machine line. The
// explanations, verdicts and titles are bilingual in the files themselves. A header missing
// from zh_words.json would stay English: tests/commands check every shipped header has one.

import { lang } from "./catalog.js";

// The words come with /api/lab from src/lmscope/lab/zh_words.json, the file the terminal's
// `lmscope lab show --lang zh` reads too: one source for both.
let HEADERS = {};
let SAME = /^$/;
let CELLS = [];

export function setWords(words) {
  if (!words) return;
  HEADERS = words.headers;
  SAME = new RegExp(words.same_headers);
  CELLS = words.cells.map(([pattern, zh, how]) => [
    new RegExp(pattern, how === "all" ? "g" : ""),
    zh,
  ]);
}

export function header(label) {
  if (lang() !== "zh" || SAME.test(label)) return label; // SAME is anchored: ^...$
  return HEADERS[label] ?? label;
}

export function cellText(text) {
  if (lang() !== "zh") return text;
  let out = text;
  for (const [pattern, zh] of CELLS) {
    const next = out.replace(pattern, zh);
    if (next !== out && pattern.flags.indexOf("g") < 0) return next; // a whole-cell phrase
    out = next;
  }
  return out;
}

// "Intel Xeon (...), 2 cores, torch 2.13 (1 thread), 2026-11-30" in Chinese; the figures'
// footnotes say it the same way (lmscope.lab.plots.machine_words)
export function machineText(line) {
  if (lang() !== "zh") return line;
  return line
    .replace(/family (\d+) model (\d+)/, "系列 $1 型号 $2")
    .replace(/(\d+) cores/, "$1 核")
    .replace(/ ?\((\d+) threads?\)/, "（$1 线程）")
    .replace(/, /g, "，");
}
