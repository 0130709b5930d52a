// The char-RNN neurons page: text -> /api/rnn/activations (one unit at a time) -> coloured
// characters, the unit's gates and the top-5 predictions; the interpretable-cell finder
// (/api/rnn/cells) and sampling (/api/rnn/sample). The server runs the model; this file only
// draws the numbers it is sent.

import { ApiError, getJSON, keepModelInLinks, postJSON } from "./api.js";
import { errorText } from "./errors.js";
import { afterPress } from "./press.js";
import { autosize, fitHeight } from "./autosize.js";
import { el, fmt } from "./draw.js";
import { applyStatic, labelLanguageToggle, lang, t, wireLanguageToggle } from "./catalog.js";
import { renderTimeline, showTimeline, topUnit } from "./rnn_timeline.js";
import { KINDS, drawReadout, drawUnit, wireText } from "./rnn_view.js";

// The first is what the page opens on: War and Peace from the part of the novel the shipped
// model never trained on (its validation split), dialogue and narration in turn, on which the
// quote cell the page opens on (warpeace-lstm layer 1 unit 71, c) goes red inside the quotes
// and blue outside them (r 0.88 with "inside quotes" here; tests/web/test_browser_rnn_open.py).
const EXAMPLES = [
  'Once she had a talk with her friend Natasha about Sonya and about her\nown injustice toward her.\n\n"You know," said Natasha, "you have read the Gospels a great deal--there\nis a passage in them that just fits Sonya."\n\n"What?" asked Countess Mary, surprised.\n',
  '"Well, Prince, so Genoa and Lucca are now just family estates of the\nBuonapartes. But I warn you, if you don\'t tell me that this means war,\nif you still try to defend the infamies and horrors perpetrated by that\nAntichrist--I really believe he is Antichrist--I will have nothing more\nto do with you," said Anna Pavlovna.\n',
  "The old prince (who was in the study) said nothing for a long while.\n\"Yes,\" he said at last, \"it is so.\" And he went out.\n",
  "def find(items, key):\n    # look for key (a string)\n    for i, item in enumerate(items):\n        if item == key:\n            return i\n    return -1\n",
  'def parse(line, sep=","):\n    """Split a line into fields (quotes keep a field whole)."""\n    fields, word = [], ""  # the fields so far\n    for ch in line.strip():\n        if ch == sep and not word.startswith(\'"\'):\n            fields.append(word)\n            word = ""\n        else:\n            word += ch  # still inside (or after) "quotes"\n    return [f.strip(\'"\') for f in fields + [word]]\n',
];
const CODE = new Set([EXAMPLES[3], EXAMPLES[4]]); // the examples a code model opens on
const DEBOUNCE_MS = 300;
// the server's limits (lmscope/web/schemas/rnn.py), checked here first so a refusal is said
// beside its control, in the page's language, before any request
const MAX_TEXT = 3000;
const MIN_FIND_TEXT = 200;
const MAX_SAMPLE = 2000;
const MAX_SEED = 2 ** 53 - 1;
const n0 = (n) => n.toLocaleString("en-US");

const state = {
  models: [],
  model: null, // facts of the chosen model
  layer: 0,
  unit: 0,
  kind: "c",
  view: null, // the last /api/rnn/activations answer
  pinned: null, // step index pinned by a click
  cells: null,
  sample: "",
};
const $ = (id) => document.getElementById(id);
let seq = 0;
let sampleSeq = 0; // the sample asked for last: an older answer is dropped
let debounce = null;

// --- errors and status --------------------------------------------------------------------

function showError(message) {
  $("error").textContent = t("page.error-line", { message: message });
  $("error").hidden = false;
}

function clearError() {
  $("error").hidden = true;
}

function message(err) {
  return err instanceof ApiError ? err.message : String(err);
}

// The server's messages this page can cause (by catalog id), in this page's own words, naming
// its controls; the rest as errors.js says them.
const PAGE_WORDS = {
  "error.neurons.no-known-char": () => t("page.rnn.err-no-known"),
  "error.web.finder-text-too-short": (p) => t("page.rnn.find-short", { min: p.need, n: p.n }),
  "error.web.invalid-field": (p) => {
    if (["text", "prompt"].includes(p.field) && p.problem?.code === "error.web.schema.string-too-long") {
      return t("page.rnn.err-too-long", { max: n0(Number(p.problem.params.max_length)) });
    }
    if (p.field === "n") return t("page.rnn.bad-length", { max: n0(MAX_SAMPLE) });
    if (p.field === "seed") return t("page.rnn.bad-seed", { max: n0(MAX_SEED) });
    return null;
  },
};

function errorLine(err) {
  if (!(err instanceof ApiError)) return String(err);
  return PAGE_WORDS[err.code]?.(err.params ?? {}) ?? errorText(err.code, err.params, err.original);
}

// A refusal shown beside the control that caused it; null hides it. ``words`` is a function,
// so a change of language says it again in the other one.
const refusals = {};
function sayAt(id, words) {
  refusals[id] = words;
  const text = words ? words() : "";
  $(id).textContent = text;
  $(id).hidden = !text;
}

function showCount() {
  const len = $("rnn-input").value.length;
  const typed = t("page.rnn.typed", { len: n0(len), max: n0(MAX_TEXT) });
  const read = state.view ? `${t("page.rnn.count", { n: n0(state.view.values.length) })} · ` : "";
  $("rnn-count").textContent = read + typed;
}

// --- activations --------------------------------------------------------------------------

async function refresh() {
  const text = $("rnn-input").value;
  const mine = ++seq;
  if (!state.model) return;
  if (!text) {
    clearView();
    sayAt("rnn-text-error", () => t("page.rnn.empty"));
    return;
  }
  $("rnn-timing").textContent = t("page.loading");
  const started = performance.now();
  let view;
  try {
    view = await postJSON("/api/rnn/activations", {
      model: state.model.name,
      text,
      layer: state.layer,
      unit: state.unit,
      kind: state.kind,
    });
  } catch (err) {
    if (mine !== seq) return;
    clearView();
    sayAt("rnn-text-error", () => errorLine(err));
    return;
  }
  if (mine !== seq) return;
  clearError();
  sayAt("rnn-text-error", null);
  state.view = view;
  if (state.pinned !== null && state.pinned >= view.values.length) state.pinned = null;
  state.ms = Math.round(performance.now() - started);
  $("rnn-timing").textContent = t("page.traced", { ms: state.ms });
  afterPress(() => {
    renderView();
    if (!state.opening) document.body.dataset.ready = "1";
  });
}

// The views of a text the server did not read (or an empty box) would show the previous
// text's colours and counts as if they were this one's: clear them until a text is read.
function clearView() {
  state.view = null;
  state.pinned = null;
  state.ms = undefined;
  $("rnn-timing").textContent = "";
  $("rnn-note").hidden = true;
  $("rnn-colored").replaceChildren();
  $("rnn-gates").replaceChildren();
  renderReadout(null);
  showCount();
}

// The text box's text set by the page (an example, a sample): the box grows to show it.
function setText(text) {
  $("rnn-input").value = text;
  fitHeight($("rnn-input"));
  showCount(); // the box's own count at once ("0 / 3,000" stood beside 321 characters)
}

function schedule() {
  clearTimeout(debounce);
  debounce = setTimeout(refresh, DEBOUNCE_MS);
}

// the page's boxes of one unit's view (rnn_view.js draws into them)
function boxes() {
  const ids = { note: "rnn-note", title: "rnn-title", legendText: "rnn-legend-text", legend: "rnn-legend", colored: "rnn-colored", gates: "rnn-gates", readout: "rnn-readout" };
  return Object.fromEntries(Object.entries(ids).map(([k, id]) => [k, $(id)]));
}

function renderView() {
  if (!state.view) return;
  showCount();
  drawUnit(boxes(), state);
}

function renderReadout(step) {
  drawReadout(boxes(), state, step);
}

// --- the finder ---------------------------------------------------------------------------

async function findCells(useText) {
  const status = $("rnn-cells-status");
  state.cellsFromText = useText;
  sayAt("rnn-cells-error", null);
  const typed = $("rnn-input").value.length;
  if (useText && typed < MIN_FIND_TEXT) {
    sayAt("rnn-cells-error", () => t("page.rnn.find-short", { min: MIN_FIND_TEXT, n: n0(typed) }));
    return;
  }
  status.textContent = t("page.rnn.finding", { source: sourceLabel() });
  $("find-corpus").disabled = $("find-text").disabled = true;
  try {
    const body = { model: state.model.name, top: 3 };
    if (useText) body.text = $("rnn-input").value;
    state.cells = await postJSON("/api/rnn/cells", body);
    afterPress(renderCells);
  } catch (err) {
    status.textContent = "";
    sayAt("rnn-cells-error", () => errorLine(err));
  } finally {
    $("find-corpus").disabled = !state.model.corpus;
    $("find-text").disabled = false;
  }
}

function renderCells() {
  const r = state.cells;
  if (!r) return;
  $("rnn-cells-status").textContent = t("page.rnn.found", {
    source: sourceLabel(),
    a: r.select_chars.toLocaleString("en-US"),
    b: r.heldout_chars.toLocaleString("en-US"),
  });
  const groups = r.features.map((f) => {
    const head = el(
      "div",
      { class: "cf-head" },
      el("b", { text: f.description[lang()] || f.description.en }),
      " ",
      el("code", { class: "muted", text: f.name }),
    );
    if (f.note) {
      const note = el("div", { class: "muted small-text", text: t("page.rnn.not-scored", { note: noteText(f) }) });
      return el("div", { class: "cf-group" }, head, note);
    }
    const rows = f.best.map((u) => {
      const detail =
        f.kind === "binary"
          ? `F1 ${fmt(u.f1, 3)} · r ${fmt(u.r, 3)}`
          : `r ${fmt(u.r, 3)}`;
      const tip =
        f.kind === "binary"
          ? t("page.rnn.rule", { rule: `${u.direction} ${fmt(u.threshold, 3)}`, p: fmt(u.precision, 3), r: fmt(u.recall, 3) })
          : t("page.rnn.r-select", { r: fmt(u.r_select, 3) });
      return el(
        "button",
        {
          type: "button",
          class: "cf-unit",
          "data-testid": "cell-unit",
          "data-feature": f.name,
          title: tip,
          onclick: () => selectUnit(u.layer, u.unit, u.kind),
        },
        el("code", { text: `${u.layer}:${u.unit} ${u.kind}` }),
        el("span", { text: detail }),
      );
    });
    return el("div", { class: "cf-group" }, head, ...rows);
  });
  $("rnn-cells").replaceChildren(...groups);
}

function sourceLabel() {
  return state.cellsFromText ? t("page.rnn.source-text") : t("page.rnn.source-corpus", { corpus: state.model.corpus || "" });
}

// The server's note as data, so it reads in the page's language.
function noteText(f) {
  const d = f.note_data;
  if (!d) return f.note;
  const part = t(d.part === "selection" ? "page.rnn.part-selection" : "page.rnn.part-held-out");
  if (d.code === "rare") return t("page.rnn.note-rare", { part, positives: n0(d.positives), total: n0(d.total) });
  if (d.code === "constant") return t("page.rnn.note-constant", { part, value: fmt(d.value, 4) });
  return f.note;
}

function selectUnit(layer, unit, kind) {
  sayAt("rnn-unit-error", null);
  const top = state.top;
  if (top && (top.layer !== layer || top.unit !== unit || top.kind !== kind)) {
    state.top = null; // the "opened on the finder's first unit" line no longer describes the view
    $("rnn-top-unit").hidden = true;
  }
  state.layer = layer;
  state.unit = unit;
  state.kind = kind;
  syncControls();
  refresh();
}

// --- sampling -----------------------------------------------------------------------------

// A whole number typed in a number input, or null (empty, a fraction, text, out of range).
function wholeIn(id, low, high) {
  const raw = $(id).value.trim();
  const n = Number(raw);
  return raw !== "" && Number.isInteger(n) && n >= low && n <= high ? n : null;
}

async function sample() {
  const out = $("rnn-sample-out");
  // checked here, not replaced by a default: 0 meant 300, -5 cleared the box
  const n = wholeIn("rnn-n", 1, MAX_SAMPLE);
  const seedRaw = $("rnn-seed").value.trim();
  const seed = seedRaw === "" ? null : wholeIn("rnn-seed", 0, MAX_SEED);
  const temperature = Number($("rnn-temp").value);
  let refusal = null;
  if (n === null) refusal = () => t("page.rnn.bad-length", { max: n0(MAX_SAMPLE) });
  else if (seedRaw !== "" && seed === null) refusal = () => t("page.rnn.bad-seed", { max: n0(MAX_SEED) });
  else if (!(temperature >= 0 && temperature <= 2)) refusal = () => t("page.rnn.bad-temp");
  sayAt("rnn-sample-error", refusal);
  if (refusal) return;
  const mine = ++sampleSeq;
  out.textContent = t("page.rnn.sampling");
  $("rnn-sample-go").disabled = true; // one sample at a time
  $("rnn-sample-use").disabled = true;
  const text = $("rnn-input").value;
  try {
    const r = await postJSON("/api/rnn/sample", {
      model: state.model.name,
      prompt: text ? text.slice(-200) : "\n",
      n,
      temperature,
      seed,
    });
    if (mine !== sampleSeq) return;
    state.sample = r.sample;
    state.randomSeed = seed === null ? r.seed : null; // the server's draw, to draw again
    out.textContent = r.sample;
    $("rnn-sample-use").disabled = !r.sample;
    renderSampleSeed();
  } catch (err) {
    if (mine !== sampleSeq) return;
    out.textContent = state.sample; // the last sample stays; the reason is said beside the button
    $("rnn-sample-use").disabled = !state.sample;
    sayAt("rnn-sample-error", () => errorLine(err));
  } finally {
    if (mine === sampleSeq) $("rnn-sample-go").disabled = false;
  }
}

// No sample shown: a sample still on its way is dropped, and Sample can be pressed again.
function clearSample() {
  sampleSeq++;
  state.sample = "";
  state.randomSeed = null;
  $("rnn-sample-out").textContent = "";
  $("rnn-sample-use").disabled = true;
  $("rnn-sample-go").disabled = false;
  renderSampleSeed();
}

function renderSampleSeed() {
  const note = $("rnn-sample-seed");
  const seed = state.randomSeed;
  note.hidden = seed === null || seed === undefined;
  note.textContent = note.hidden ? "" : t("page.rnn.random-seed", { seed: String(seed) });
}

// --- controls -----------------------------------------------------------------------------

function syncControls() {
  const m = state.model;
  $("rnn-layer").replaceChildren(
    ...Array.from({ length: m.layers }, (_, i) => el("option", { value: i, text: String(i), selected: i === state.layer })),
  );
  $("rnn-kind").replaceChildren(
    ...m.kinds.map((k) => el("option", { value: k, text: t(KINDS[k]), selected: k === state.kind })),
  );
  $("rnn-unit").max = m.hidden - 1;
  $("rnn-unit").value = state.unit;
  $("rnn-unit-max").textContent = `0–${m.hidden - 1}`;
  $("find-corpus").disabled = !m.corpus;
}

function renderFacts() {
  const m = state.model;
  const fact = (label, value) => el("span", { class: "fact" }, `${label} `, el("b", { "data-verbatim": "", text: value }));
  $("facts").replaceChildren(
    fact("", m.name),
    fact("", m.arch.toUpperCase()),
    fact(t("page.layers"), String(m.layers)),
    fact(t("page.rnn.hidden"), String(m.hidden)),
    fact(t("page.vocab"), String(m.vocab_size)),
    fact(t("page.params"), m.n_params.toLocaleString("en-US")),
  );
}

function chooseModel(name) {
  state.model = state.models.find((m) => m.name === name) || state.models[0];
  // a code model reads code, a prose model prose: swap an untouched example for one that fits
  const input = $("rnn-input");
  const code = state.model.features === "code";
  if (EXAMPLES.includes(input.value) && CODE.has(input.value) !== code) {
    setText(code ? EXAMPLES[4] : EXAMPLES[0]);
  }
  state.kind = state.model.default_kind;
  state.layer = Math.min(state.layer, state.model.layers - 1);
  state.unit = Math.min(state.unit, state.model.hidden - 1);
  state.cells = null;
  $("rnn-cells").replaceChildren();
  $("rnn-cells-status").textContent = "";
  renderFacts();
  syncControls();
}

// The model list's names: a code model says so, in the page's language.
function nameModels() {
  for (const option of $("rnn-model").options) {
    const m = state.models.find((x) => x.name === option.value);
    option.textContent = m?.features === "code" ? t("page.rnn.code-model", { name: m.name }) : option.value;
  }
}

function renderLanguage() {
  applyStatic();
  $("unit-prev").setAttribute("aria-label", t("page.rnn.unit-prev"));
  $("unit-next").setAttribute("aria-label", t("page.rnn.unit-next"));
  nameModels();
  $("rnn-input").placeholder = t("page.rnn.placeholder");
  showCount();
  for (const [id, words] of Object.entries(refusals)) sayAt(id, words); // in the new language
  labelLanguageToggle($("lang"));
  if (state.model) {
    renderFacts();
    syncControls();
  }
  if (state.ms !== undefined) $("rnn-timing").textContent = t("page.traced", { ms: state.ms });
  renderView();
  renderCells();
  renderTimeline();
  renderSampleSeed();
  sayTopUnit();
  if (!state.view) renderReadout(null);
}

function buildExamples() {
  $("examples").replaceChildren(
    ...EXAMPLES.map((text) =>
      el("button", {
        class: "example",
        "data-verbatim": "all", // the example is a prompt: the model's text, not the page's
        type: "button",
        "data-testid": "example",
        text: text.replace(/\n/g, " ⏎ "),
        onclick: () => {
          setText(text);
          refresh();
        },
      }),
    ),
  );
}

function wire() {
  const input = $("rnn-input");
  input.maxLength = MAX_TEXT;
  autosize(input);
  input.addEventListener("input", () => {
    showCount();
    sayAt("rnn-sample-error", null); // the sample's prompt is this text
    sayAt("rnn-cells-error", null); // the finder's "too short" counted the old text
    schedule();
  });
  input.addEventListener("paste", (e) => {
    // the box keeps MAX_TEXT characters: say so when a paste is cut there
    const pasted = e.clipboardData?.getData("text") ?? "";
    const room = MAX_TEXT - (input.value.length - (input.selectionEnd - input.selectionStart));
    sayAt("rnn-text-error", pasted.length > room ? () => t("page.rnn.text-cut", { max: n0(MAX_TEXT) }) : null);
  });
  $("rnn-model").addEventListener("change", (e) => {
    // refusals about the other model (its units, its sample, its finder) no longer apply
    for (const id of ["rnn-sample-error", "rnn-cells-error", "rnn-unit-error"]) sayAt(id, null);
    clearSample(); // the other model wrote it
    chooseModel(e.target.value);
    openModel();
  });
  $("rnn-layer").addEventListener("change", (e) => selectUnit(Number(e.target.value), state.unit, state.kind));
  $("rnn-kind").addEventListener("change", (e) => selectUnit(state.layer, state.unit, e.target.value));
  $("rnn-unit").addEventListener("input", () => sayAt("rnn-unit-error", null)); // a new try
  $("rnn-unit").addEventListener("change", (e) => {
    const last = state.model.hidden - 1;
    const raw = e.target.value.trim();
    const u = Number(raw);
    if (raw !== "" && Number.isInteger(u) && u >= 0 && u <= last) {
      selectUnit(state.layer, u, state.kind);
      return;
    }
    // refused beside the box, which goes back to the unit on show
    const shownValue = raw === "" ? "" : raw;
    const range = Number.isInteger(u) && raw !== "";
    e.target.value = state.unit;
    sayAt("rnn-unit-error", () => (range ? t("page.rnn.unit-range", { value: shownValue, last }) : t("page.rnn.unit-whole", { last })));
  });
  $("unit-prev").addEventListener("click", () => selectUnit(state.layer, Math.max(0, state.unit - 1), state.kind));
  $("unit-next").addEventListener("click", () =>
    selectUnit(state.layer, Math.min(state.model.hidden - 1, state.unit + 1), state.kind),
  );
  wireText(boxes(), state);
  $("find-corpus").addEventListener("click", () => findCells(false));
  $("find-text").addEventListener("click", () => findCells(true));
  // two decimals from the start ("0.80"), as after the slider moves
  const showTemp = () => ($("rnn-temp-value").textContent = Number($("rnn-temp").value).toFixed(2));
  $("rnn-temp").addEventListener("input", () => {
    showTemp();
    sayAt("rnn-sample-error", null);
  });
  showTemp();
  // a refusal beside Sample or the finder was about these: once they change it is stale
  for (const id of ["rnn-n", "rnn-seed"]) $(id).addEventListener("input", () => sayAt("rnn-sample-error", null));
  $("rnn-sample-go").addEventListener("click", sample);
  $("rnn-sample-use").addEventListener("click", () => {
    setText(state.sample);
    refresh();
  });
  wireLanguageToggle($("lang"), renderLanguage);
}

async function boot() {
  wire();
  buildExamples();
  keepModelInLinks();
  renderLanguage();
  try {
    state.models = (await getJSON("/api/rnn/models")).models;
  } catch (err) {
    showError(message(err));
    return;
  }
  if (!state.models.length) {
    showError(t("page.rnn.no-model"));
    document.body.dataset.ready = "1";
    return;
  }
  $("rnn-model").replaceChildren(...state.models.map((m) => el("option", { value: m.name })));
  nameModels();
  setText(EXAMPLES[0]);
  chooseModel(state.models[0].name); // a code model swaps in a code example
  await openModel();
}

// A model opens on the unit the cell finder ranks first on its corpus (layer 0 unit 0 is
// usually a solid block), with its training timeline when it kept one.
// The text is read at once, on the unit shown, while the cell finder runs (a first visit waited
// 3 s on it at "Running the model…"); the page is ready once it shows the unit found.
async function openModel() {
  showTimeline(state.model.name, document.querySelector(".rnn-side"));
  if (!state.model.corpus) return refresh();
  state.opening = true;
  const first = refresh();
  await findCells(false);
  await first;
  state.opening = false;
  const top = topUnit(state.cells);
  if (top) {
    state.layer = top.layer;
    state.unit = top.unit;
    state.kind = top.kind;
    state.top = top;
    syncControls();
    sayTopUnit();
  }
  await refresh();
}

function sayTopUnit() {
  const u = state.top;
  const note = $("rnn-top-unit");
  if (!note || !u) return;
  const feature = state.cells?.features.find((f) => f.name === u.feature);
  const name = feature ? feature.description[lang()] || feature.description.en : u.feature;
  note.textContent = t("page.picture.rnn-top-unit", { feature: name, l: u.layer, u: u.unit, kind: u.kind });
  note.hidden = false;
}

window.lmscopeRnn = { state };
boot();
