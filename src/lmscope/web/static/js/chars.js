// Readable byte-level tokens. A byte-level BPE splits text into UTF-8 bytes before merging, so
// one character (我 is E6 88 91) may lie across several tokens whose chips show bytes such as
// <0xE6>. The server lists those runs (TraceResponse.chars, lmscope/explain/chars.py); here the
// chips of a run are wrapped together under one label showing the character they form.

import { el } from "./draw.js";
import { t } from "./i18n.js";
import "./i18n_picture.js";

// chips: token chips in position order (chip.dataset.position); spans: [{start, end, text,
// complete}]. Returns the nodes to put in the chip row: chips, and groups of chips.
export function groupChips(chips, spans) {
  const byStart = new Map((spans ?? []).map((s) => [s.start, s]));
  const out = [];
  for (let i = 0; i < chips.length; i++) {
    const span = byStart.get(Number(chips[i].dataset.position));
    if (!span) {
      out.push(chips[i]);
      continue;
    }
    const members = chips.slice(i, i + span.end - span.start + 1);
    i += members.length - 1;
    out.push(charGroup(span, members));
  }
  return out;
}

// The text of tokens 0..last as a reader writes it: a character whose bytes lie over several
// tokens is written once as itself, not as their <0xE8><0xA7> pieces; one cut at `last` keeps
// the bytes it has so far.
export function readableText(tokens, spans, last) {
  const byStart = new Map((spans ?? []).filter((s) => s.complete).map((s) => [s.start, s]));
  let text = "";
  for (let i = 0; i <= last && i < tokens.length; i++) {
    const span = byStart.get(i);
    if (span && span.end <= last) {
      text += span.text;
      i = span.end;
    } else {
      text += tokens[i].text;
    }
  }
  return text;
}

function charGroup(span, members) {
  const label = el("span", {
    class: `char-label${span.complete ? "" : " partial"}`,
    "data-testid": "char-span",
    "data-start": span.start,
    "data-end": span.end,
    text: span.text.replace(/\n/g, "↵"),
    title: t(span.complete ? "charSpanTip" : "charSpanPartial", { n: span.end - span.start + 1, text: span.text }),
  });
  return el("span", { class: "char-group" }, label, el("span", { class: "char-chips" }, members));
}

// Step 5's paragraph on how this tokenizer cuts text (byte-level BPE, or SentencePiece's BPE
// over characters), with this prompt's own example of a character split into bytes when it
// has one; none for a character vocabulary.
export function tokenizerNote(kind, spans) {
  if (kind === "chars") return [];
  const spm = kind === "sentencepiece-bpe";
  const example = spans?.find((s) => s.complete);
  return [
    el(
      "section",
      { class: "viz byte-note", "data-testid": spm ? "sentencepiece-note" : "byte-level-note" },
      el("h4", { text: t(spm ? "spmTitle" : "byteTitle") }),
      el("p", { text: t(spm ? "spmText" : "byteText") }),
      example ? el("p", { class: "hint", text: t("byteHere", { text: example.text, n: example.end - example.start + 1, a: example.start, b: example.end }) }) : null,
    ),
  ];
}
