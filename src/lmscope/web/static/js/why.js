// The "Why Transformers" page: the lab's saved results (/api/lab) as figures beside the
// lesson's argument, with their tables, in the page's language, and the commands that re-run
// each experiment on the reader's machine. Every number comes from a result file, and every
// word from the catalog: a result file keeps its texts as catalog ids with values (said).

import { getJSON, keepModelInLinks } from "./api.js";
import { el, minus } from "./draw.js";
import { has, labelLanguageToggle, lang, t, wireLanguageToggle } from "./catalog.js";
import { copyCommand } from "./clipboard.js";

const LONG_TABLE = 12; // rows; longer tables start folded so the figures stay close together

const state = {
  index: null, // /api/lab
  docs: new Map(), // "name:source" -> result document
  chosen: new Map(), // name -> the source shown
};

const $ = (id) => document.getElementById(id);
const key = (name, source) => `${name}:${source}`;
const q = (params) => new URLSearchParams(params).toString();

function showError(message) {
  const box = $("error");
  box.textContent = `${t("page.error")}: ${message}`;
  box.hidden = false;
}

// --- a result file's texts (lmscope.lab.results.shown) -------------------------------------

// A text of a result file in the page's language: {id, values} is a catalog text whose values
// may be texts too; a list is sentences one after another; a string is a name; an {en, zh}
// pair is the text of a file written before the catalog.
export function said(text) {
  if (text === null || text === undefined) return "";
  if (typeof text === "string" || typeof text === "number") return String(text);
  if (Array.isArray(text)) {
    return text
      .map(said)
      .filter(Boolean)
      .reduce((first, then) => t("lab.then", { first, then }));
  }
  if (text.id) {
    const values = Object.fromEntries(
      Object.entries(text.values ?? {}).map(([k, v]) => [k, typeof v === "object" && v !== null ? said(v) : v]),
    );
    return t(text.id, values);
  }
  return text[lang()] ?? text.en ?? "";
}

// A text cell: a code its column says by catalog id (cells: "lab.method.{}"), a text, a name.
function cellText(value, column) {
  const id = column?.cells?.replace("{}", value);
  if (typeof value === "string" && id && has(id)) return t(id);
  return said(value);
}

// --- numbers, as the CLI's tables show them (lmscope.commands.lab.format_cell) -------------

function trimmed(v, digits) {
  return String(Number(v.toPrecision(digits)));
}

export function formatSeconds(v) {
  const units = [
    [1, "s"],
    [1e-3, "ms"],
    [1e-6, "µs"],
    [1e-9, "ns"],
    [1e-12, "ps"],
  ];
  // whole, grouped seconds past a thousand (as lab.results.format_seconds): not "3220 s"
  if (v >= 999.5) return `${Math.round(v).toLocaleString("en-US")} s`;
  for (const [scale, unit] of units) if (v >= scale) return `${trimmed(v / scale, 3)} ${unit}`;
  return `${v.toPrecision(1)} s`;
}

export function formatBytes(v) {
  const units = [
    [2 ** 40, "TiB"],
    [2 ** 30, "GiB"],
    [2 ** 20, "MiB"],
    [2 ** 10, "KiB"],
  ];
  for (const [scale, unit] of units) if (v >= scale) return `${trimmed(v / scale, 3)} ${unit}`;
  return `${Math.round(v)} B`;
}

export function formatCell(value, kind, column = null) {
  if (value === null || value === undefined) return "—";
  if (typeof value !== "number") {
    if (kind === "bool") return value ? t("page.why.yes") : t("page.why.no");
    return cellText(value, column);
  }
  const grouped = (v, digits = 0) =>
    minus(v.toLocaleString("en-US", { maximumFractionDigits: digits }));
  switch (kind) {
    case "int":
      return grouped(value, Number.isInteger(value) ? 0 : 2);
    case "seconds":
      return formatSeconds(value);
    case "bytes":
      return formatBytes(value);
    case "ratio":
      // three significant digits, as the terminal prints them: 0.183×, 7.45×, 10.7×, 102×
      if (value >= 100) return `${grouped(value)}×`;
      return `${value >= 10 ? value.toFixed(1) : value < 1 ? value.toPrecision(3) : value.toFixed(2)}×`;
    case "sci":
      return minus(value.toExponential(1));
    case "float":
      return Math.abs(value) >= 1e15 || (value !== 0 && Math.abs(value) < 1e-4)
        ? minus(value.toExponential(3))
        : grouped(Number(value.toPrecision(4)), 20);
    default:
      return String(value);
  }
}

// --- drawing ----------------------------------------------------------------------------

function plotUrl(name, source, file) {
  return `/api/lab/${encodeURIComponent(name)}/plot/${encodeURIComponent(file)}?${q({ source })}`;
}

function table(section) {
  const cols = section.columns;
  const head = el(
    "tr",
    {},
    // a header that is no catalog text is a name (N, x.sum(), d_model): the same in every language
    cols.map((c) =>
      el("th", {
        class: c.kind === "text" ? "text" : null,
        "data-verbatim": typeof c.label === "string" ? "" : null,
        text: said(c.label),
      }),
    ),
  );
  const body = section.rows.map((row) =>
    el(
      "tr",
      {},
      cols.map((c) =>
        el("td", { class: c.kind === "text" ? "text" : null, "data-verbatim": c.kind === "text" ? "" : null, text: formatCell(row[c.key], c.kind, c) }),
      ),
    ),
  );
  const wrap = el(
    "div",
    { class: "why-table-wrap" },
    el("table", { class: "why-table", "data-testid": "why-table" }, el("thead", {}, head), el("tbody", {}, body)),
  );
  if (section.rows.length <= LONG_TABLE) return wrap;
  return el("details", {}, el("summary", { text: t("page.why.table", { n: section.rows.length }) }), wrap);
}

// A figure of two or more panels is too wide to share a row: it takes the full width and
// its text goes underneath, explanation and verdict side by side.
function widen(event) {
  const img = event.target;
  if (img.naturalWidth > 2 * img.naturalHeight) img.closest(".why-row")?.classList.add("wide");
}

// The figure in the page's language: a result names its English files (<stem>.png); the
// Chinese ones beside them are <stem>.zh.png, where the index says they were drawn
// (info.figures). A result made before there were Chinese figures shows its English ones.
function plotFiles(plot, figures, L = lang()) {
  if (L === "en" || !figures?.includes(L)) return plot;
  const translated = (file) => file.replace(/\.(png|svg)$/, `.${L}.$1`);
  return { png: translated(plot.png), svg: translated(plot.svg) };
}

function figure(name, source, section, figures) {
  const title = said(section.title);
  const files = plotFiles(section.plot, figures);
  const png = plotUrl(name, source, files.png);
  const svgUrl = plotUrl(name, source, files.svg);
  return el(
    "figure",
    { class: "why-figure" },
    el(
      "a",
      { href: png, target: "_blank", rel: "noopener" },
      el("img", {
        src: png,
        alt: t("page.why.plot-alt", { title }),
        loading: "lazy", // eleven plots (1.4 MB): each loads as the reader scrolls to it
        decoding: "async",
        "data-testid": "why-plot",
        onload: widen,
      }),
    ),
    el(
      "figcaption",
      {},
      el("a", { href: png, target: "_blank", rel: "noopener", "data-verbatim": "", text: "PNG" }),
      " · ",
      el("a", { href: svgUrl, target: "_blank", rel: "noopener", "data-verbatim": "", text: "SVG" }),
    ),
  );
}

function sectionView(name, source, section, figures) {
  const text = el(
    "div",
    { class: "why-text" },
    el("p", { class: "why-explain", text: said(section.explain) }),
    section.verdict
      ? el("p", { class: "why-verdict", "data-testid": "why-verdict", text: said(section.verdict) })
      : null,
  );
  return el(
    "section",
    { class: "why-section", "data-testid": "why-section", "data-key": section.key },
    el("h3", { text: said(section.title) }),
    el(
      "div",
      { class: section.plot ? "why-row" : "why-row noplot" },
      section.plot ? figure(name, source, section, figures) : null,
      text,
    ),
    section.rows.length ? table(section) : null,
  );
}

// A command word by word, so a narrow screen wraps it between words, never inside "--clock"
// (a line ending "--threads 1 -" reads as another flag); it copies as the same text.
function commandWords(command) {
  return command.split(" ").flatMap((word, i) => [...(i ? [" "] : []), el("span", { text: word })]);
}

function rerun(entry, open) {
  const rows = entry.commands.map((c) => {
    const code = el("code", {}, commandWords(c.command));
    const button = el("button", { type: "button", text: t("page.copy.copy") });
    button.addEventListener("click", () => copyCommand(button, c.command, code));
    return el(
      "div",
      { class: "why-cmd", "data-testid": "why-command" },
      code,
      button,
      el("span", { class: "note", text: said(c.note) }),
    );
  });
  if (!rows.length) return null;
  return el(
    "details",
    { class: "why-rerun", open: open || null },
    el("summary", { text: t("page.why.rerun") }),
    rows,
  );
}

function sourceSwitch(entry, shown) {
  const label = (s) => (s === "local" ? t("page.why.local") : t("page.why.shipped"));
  if (entry.sources.length < 2) return shown ? el("span", { text: label(shown) }) : null;
  return el(
    "span",
    { class: "why-sources" },
    entry.sources.map((s) =>
      el("button", {
        type: "button",
        class: s.source === shown ? "on" : null,
        "data-testid": `why-source-${s.source}`,
        text: label(s.source),
        onclick: () => choose(entry, s.source),
      }),
    ),
  );
}

// the lesson's claim each experiment tests, by the experiment's name
const CLAIMS = {
  "serial-depth": "page.why.claim-serial-depth",
  "memory-wall": "page.why.claim-memory-wall",
  race: "page.why.claim-race",
  "gradient-flow": "page.why.claim-gradient-flow",
  recall: "page.why.claim-recall",
};

function claimText(name) {
  const id = CLAIMS[name.replace(/_/g, "-")];
  return id ? t(id) : null;
}

function experimentView(entry) {
  const source = state.chosen.get(entry.name);
  const doc = source ? state.docs.get(key(entry.name, source)) : null;
  const info = entry.sources.find((s) => s.source === source);
  const claim = claimText(entry.name);
  return el(
    "article",
    {
      class: "exp-card why-exp",
      id: `exp-${entry.name}`,
      "data-testid": "why-experiment",
      "data-name": entry.name,
      "data-source": source ?? "",
    },
    el("h2", { text: said((doc ?? entry).title) }),
    claim ? el("p", { class: "why-claim", text: claim }) : null,
    info
      ? el(
          "div",
          { class: "why-meta", "data-testid": "why-hardware" },
          sourceSwitch(entry, source),
          el("span", { text: t("page.why.measured", { machine: said(info.machine) }) }),
          info.created ? el("span", { text: t("page.why.created", { date: info.created.slice(0, 10) }) }) : null,
        )
      : null,
    rerun(entry, !doc),
    doc
      ? doc.sections.map((s) => sectionView(entry.name, source, s, info?.figures))
      : el("p", { class: "why-empty", text: t("page.why.not-yet") }),
  );
}

function renderToc() {
  $("why-toc").replaceChildren(
    ...state.index.results.map((entry) =>
      el("a", {
        href: `#exp-${entry.name}`,
        class: entry.sources.length ? null : "missing",
        text: said(entry.title),
      }),
    ),
  );
}

function renderAll() {
  const dir = state.index?.local_dir ?? "./lmscope-results";
  document.querySelectorAll("[data-i18n]").forEach((node) => {
    node.textContent = t(node.dataset.i18n, { dir: `${dir}/<name>` });
  });
  document.title = t("page.why.title-page");
  labelLanguageToggle($("lang"));
  if (!state.index) return;
  renderToc();
  $("why-results").replaceChildren(...state.index.results.map(experimentView));
}

async function load(name, source) {
  const k = key(name, source);
  if (!state.docs.has(k)) {
    state.docs.set(k, await getJSON(`/api/lab/${encodeURIComponent(name)}?${q({ source })}`));
  }
}

async function choose(entry, source) {
  try {
    await load(entry.name, source);
  } catch (err) {
    showError(err.message);
    return;
  }
  state.chosen.set(entry.name, source);
  $(`exp-${entry.name}`).replaceWith(experimentView(entry));
}

async function boot() {
  wireLanguageToggle($("lang"), renderAll);
  keepModelInLinks();
  renderAll();
  try {
    state.index = await getJSON("/api/lab");
    // the reader's own result when there is one: that is what they re-ran it for
    const picks = state.index.results
      .filter((e) => e.sources.length)
      .map((e) => {
        const source = e.sources.some((s) => s.source === "local") ? "local" : "shipped";
        state.chosen.set(e.name, source);
        return load(e.name, source);
      });
    await Promise.all(picks);
  } catch (err) {
    showError(err.message);
  }
  renderAll();
  if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  document.body.dataset.ready = "1";
}

window.lmscopeWhy = { state }; // for the console and for tests
boot();
