// The page: prompt -> /api/trace -> token chips, the flow view, the current step, and the sampling
// panel. Steps fetch the layer/head/position they show on demand; sampling controls recompute
// in the browser from the logits already received.

import { ApiError, cachedPost, getJSON, getModel, postJSON, streamNDJSON } from "./api.js";
import { takeCarriedPrompt } from "./model_menu.js";
import { autosize, fitHeight } from "./autosize.js";
import { modelFacts, setSteps, stepInfo, stepKeys, stepText } from "./catalogue.js";
import { el, grouped, pct, visible } from "./draw.js";
import { errorText, reasonText } from "./errors.js";
import { chatOn, chatToggle, labelChatToggle } from "./chat.js";
import { applyStatic, labelLanguageToggle, paren, sentences, setFacts, setFamily, t, wireLanguageToggle } from "./catalog.js";
import { VIEW_KEYS, renderView, viewNav } from "./inside.js";
import { flowSettled, keepInView, renderFlow } from "./flow.js";
import { byteNote, groupChips, lastPiece, quotedToken } from "./chars.js";
import { sourceText } from "./model_source.js";
import { afterPress } from "./press.js";
import { syncPool } from "./pool_sync.js";
import { drawProbBars, factSpans, poolText } from "./prob_bars.js";
import { computePool } from "./sampling.js";
import { buildScrubber, updateReadout, updateScrubber } from "./scrub.js";
import { renderStep } from "./steps.js";

const DEBOUNCE_MS = 250;

const state = {
  model: null,
  ids: [],
  promptCount: 0, // tokens that came from the prompt box; the rest were generated
  trace: null,
  position: 0,
  layer: 0,
  head: 0,
  step: "transformer",
  lnWhich: "ln1",
  sampling: { temperature: 1, top_k: 0, top_p: 1, min_p: 0, greedy: false },
  seed: 42,
  views: new Map(), // position -> LogitsView
  vocab: new Map(), // id -> text
  busy: false,
  pending: [], // tokens streamed in but not yet traced
  status: null, // the last status line as data ({ms}), said again when the language changes
  gen: null, // the last generation's status line as data
  error: null, // the error showing, as data ({what, more}), said again when the language changes
};

const $ = (id) => document.getElementById(id);
let traceSeq = 0;
let traceAbort = null;
let debounce = null;
let genAbort = null;

// --- errors and status --------------------------------------------------------------------

// An error is kept as what it is (a server error's code and numbers, or a function of the
// language), so switching the language says it again in the new one.
function sayError(what) {
  if (typeof what === "function") return what();
  if (what instanceof ApiError) return errorText(what.code, what.params, what.original);
  return String(what?.message ?? what);
}

function showError(what, more = null) {
  state.error = { what, more };
  const box = $("error");
  box.textContent = t("page.error-line", { message: sentences(sayError(what), more && t(more)) });
  box.hidden = false;
}

function clearError() {
  state.error = null;
  $("error").hidden = true;
}

let statusTimer = null;

function setStatus(status) {
  state.status = status;
  clearInterval(statusTimer);
  const say = () => {
    if (!status) return "";
    if (!status.loading) return t("page.traced", { ms: status.ms });
    // a long prompt takes a while: count the seconds, so the page is seen to be working
    const s = Math.floor((performance.now() - status.since) / 1000);
    return s >= 2 ? t("page.loading-for", { s }) : t("page.loading");
  };
  $("timing").textContent = say();
  if (status?.loading) statusTimer = setInterval(() => ($("timing").textContent = say()), 1000);
}

// A failed trace leaves nothing of the previous prompt on screen: it would read as current.
function clearView() {
  state.trace = null;
  state.ids = [];
  state.views = new Map();
  const parts = ["tokens", "pipeline", "step", "bars", "byte-note", "pool", "pool-note", "count", "sampling-sub"];
  for (const id of [...parts, "scrub-label", "scrub-readout", "scrub-note"]) $(id)?.replaceChildren();
  document.body.dataset.empty = "1";
  enableTraceControls(false); // nothing of the last prompt is left to read or generate from
}

// The controls that act on a trace: the position slider and the Generate buttons.
function enableTraceControls(on) {
  for (const id of ["generate", "generate-n", "position-slider"]) {
    const control = $(id);
    if (control) control.disabled = !on;
  }
}

// --- tracing ------------------------------------------------------------------------------

const TRACE_RETRIES = 3; // a trace the server refused for now is asked again this often

async function retrace(body, options = {}) {
  const { keepPosition = false, fromPrompt = false, generated = false, attempt = 0 } = options;
  const seq = ++traceSeq;
  if (traceAbort) traceAbort.abort();
  traceAbort = new AbortController();
  setStatus({ loading: true, since: performance.now() });
  // an error about the previous prompt must not stand beside this one while it runs (a retry
  // keeps the busy line that announced it)
  if (fromPrompt && !attempt) clearError();
  document.body.classList.add("tracing");
  const started = performance.now();
  performance.mark("trace-start");
  let data;
  try {
    data = await postJSON("/api/trace", body, traceAbort.signal);
  } catch (err) {
    if (err.name === "AbortError" || seq !== traceSeq) return;
    document.body.classList.remove("tracing");
    setStatus(null);
    clearView();
    const retry = /^error\.web\.busy\./.test(err.code ?? "") ? Number(err.params?.retry) : NaN;
    if (retry > 0 && attempt < TRACE_RETRIES) {
      // the server said when it will have room: ask again then, unless the prompt changed
      showError(err, "page.error.retry-by-itself");
      setTimeout(() => seq === traceSeq && retrace(body, { ...options, attempt: attempt + 1 }), retry * 1000);
      return;
    }
    showError(err);
    return;
  }
  if (seq !== traceSeq) return;
  document.body.classList.remove("tracing");
  delete document.body.dataset.empty;
  enableTraceControls(true);
  clearError();
  const previous = state.position;
  state.trace = data;
  state.ids = data.tokens.map((tok) => tok.id);
  if (body.text !== undefined || fromPrompt) state.promptCount = state.ids.length;
  state.pending = [];
  state.views = new Map([[state.ids.length - 1, data.next]]);
  for (const [id, text] of Object.entries(data.vocab)) state.vocab.set(Number(id), text);
  for (const tok of data.tokens) state.vocab.set(tok.id, tok.text);
  state.position = keepPosition && previous < state.ids.length ? previous : state.ids.length - 1;
  afterPress(() => {
    renderAll();
    document.body.dataset.traces = String(Number(document.body.dataset.traces ?? 0) + 1);
    performance.mark("trace-end");
    performance.measure("trace", "trace-start", "trace-end");
  });
  setStatus({ ms: Math.round(performance.now() - started) });
  // generated tokens join the prompt box, so editing the text keeps them; in chat mode the box
  // stays the user's turn (the template is the server's to add), so editing it asks anew
  if (body.ids && generated && data.text !== null && !chatOn()) {
    $("prompt").value = data.text;
    fitHeight($("prompt"));
  }
  showTokenCount();
}

// "12 / 8,192 tokens": grouped as the header writes the context
function showTokenCount() {
  $("count").textContent = t("page.tokens-of", { n: grouped(state.ids.length), ctx: grouped(state.model.n_ctx) });
}

// A model without tokenizer files takes token ids: "464 3290 318" or "[464, 3290, 318]".
function promptBody(text) {
  if (state.model.tokenizer) return chatOn() ? { text, chat: true } : { text };
  const parts = text.replace(/[[\],]/g, " ").trim().split(/\s+/).filter(Boolean);
  const ids = parts.map(Number);
  if (!ids.every((n) => Number.isInteger(n) && n >= 0)) return { ids: [], text };
  return { ids };
}

function retracePrompt(text) {
  const body = promptBody(text);
  if (body.text !== undefined && body.ids) {
    showError(() => t("page.ids-only"));
    return;
  }
  retrace(body, { fromPrompt: true });
}

function onPromptInput() {
  state.promptCount = 0;
  setGenStatus(null); // it described tokens that are now part of the prompt, or gone
  clearTimeout(debounce);
  debounce = setTimeout(() => retracePrompt($("prompt").value), DEBOUNCE_MS);
}

// --- tokens -------------------------------------------------------------------------------

function tokenText(id) {
  return state.vocab.get(id) ?? `#${id}`;
}

// The texts of the prompt's tokens 0..position, as the trace names them.
function promptTexts(position) {
  return state.ids.slice(0, position + 1).map((id, i) => state.trace?.tokens[i]?.text ?? tokenText(id));
}

function renderTokens() {
  const box = $("tokens");
  box.replaceChildren();
  const all = state.ids.map((id, i) => ({ id, i, text: state.trace.tokens[i]?.text ?? tokenText(id) }));
  state.pending.forEach((p, j) => all.push({ id: p.id, i: state.ids.length + j, text: p.text, pending: true }));
  const chips = [];
  for (const tok of all) {
    const generated = tok.i >= state.promptCount;
    const chip = el(
      "button",
      {
        class: `chip${generated ? " gen" : ""}${tok.pending ? " pending" : ""}${tok.i === state.position ? " sel" : ""}`,
        "data-testid": "token-chip",
        "data-position": tok.i,
        "data-id": tok.id,
        title: t(generated ? "page.token-title-generated" : "page.token-title", { p: tok.i, id: String(tok.id) }),
        onclick: tok.pending ? null : () => selectPosition(tok.i),
      },
      el("span", { class: "piece", "data-verbatim": "", text: visible(tok.text) }),
      el("span", { class: "id", text: tok.id }),
    );
    chips.push(chip);
  }
  box.append(...groupChips(chips, state.trace.chars)); // 我 over its three byte chips
}

function selectPosition(i) {
  if (i < 0 || i >= state.ids.length) return;
  state.position = i;
  for (const chip of document.querySelectorAll("#tokens .chip")) {
    chip.classList.toggle("sel", Number(chip.dataset.position) === i);
  }
  renderFlowNow();
  renderCurrentStep();
  updateSampling();
}

// --- header, nav, steps -----------------------------------------------------------------

function renderFacts() {
  const m = state.model;
  $("facts").replaceChildren(...factSpans(m));
  $("facts").firstChild.title = sourceText(m);
  $("facts").firstChild.dataset.verbatim = "all"; // the model's name and where it came from
}

function renderNav() {
  const nav = $("steps");
  const fresh = [
    el("h2", { text: t("page.steps") }),
    el(
      "ol",
      {},
      stepKeys().map((key, i) =>
        el(
          "li",
          {},
          el(
            "button",
            {
              class: key === state.step ? "active" : "",
              "data-step": key,
              onclick: () => openStep(key),
            },
            el("span", { class: "num", text: i + 1 }),
            stepText(key).title,
          ),
        ),
      ),
    ),
    viewNav(state.step, openStep, state.compareModels?.length === 0 ? ["compare"] : []),
  ];
  // A list that shows the same buttons keeps them: a click pressed on a button that a rebuild
  // then replaced is released on another and reaches neither (a trace landing mid-click did it).
  const shown = (nodes) => nodes.map((n) => n.outerHTML.replace(/ class="[^"]*"/g, "")).join("");
  if (shown(fresh) === shown([...nav.children])) markActiveStep();
  else nav.replaceChildren(...fresh);
}

function markActiveStep() {
  for (const b of document.querySelectorAll("#steps button")) b.classList.toggle("active", (b.dataset.step ?? b.dataset.view) === state.step);
}

function openStep(key, extra = {}) {
  Object.assign(state, extra);
  state.step = key;
  markActiveStep();
  renderFlowNow();
  // one tour: from the list, the keyboard, the card's ‹ ▶ › or the panel's buttons alike, the
  // step's lit part comes into view above the card that explains it
  keepInView();
  // the step's figures are drawn once the flow's packet has landed: the animation keeps its frames
  flowSettled().then(() => {
    if (state.step !== key) return;
    renderCurrentStep();
  });
}

function renderFlowNow() {
  if (!state.trace) return;
  // the flow view: the page's overview, lit by the open step
  renderFlow($("pipeline"), state, {
    openStep,
    setLayer: (l) => openStep(state.step === "blocks" || !stepInfo(state.step)?.layer ? "blocks" : state.step, { layer: l }),
    selectPosition,
    post: cachedPost,
  });
}

const stepContext = {
  state,
  post: cachedPost,
  openStep,
  selectPosition,
  tokenText,
  promptTexts,
  setLayer(layer) {
    state.layer = layer;
    renderFlowNow();
    renderCurrentStep();
  },
  setHead(head) {
    state.head = head;
    renderCurrentStep();
  },
  setLn(which) {
    state.lnWhich = which;
    renderCurrentStep();
  },
  currentPool: () => currentPool(),
  logitsView: () => state.views.get(state.position),
  samplingParams: () => state.sampling,
};

function renderCurrentStep() {
  if (!state.trace) return;
  if (VIEW_KEYS.includes(state.step)) renderView($("step"), state.step, stepContext);
  else renderStep($("step"), state.step, stepContext);
  updateScrubber(state, stepContext);
}

function renderAll() {
  renderFacts();
  renderNav();
  renderTokens();
  renderFlowNow();
  renderCurrentStep();
  updateSampling();
}

// --- sampling panel ---------------------------------------------------------------------

function control(label, input, output) {
  return el("label", { class: "control" }, el("span", { class: "label", text: label }), input, output);
}

function buildSamplingPanel() {
  const s = state.sampling;
  const panel = $("sampling");
  const onChange = () => readControls() && updateSampling();
  const tIn = el("input", { type: "range", min: 0.05, max: 2, step: 0.05, value: s.temperature, "data-testid": "temperature", id: "temperature", oninput: onChange });
  const kIn = el("input", { type: "number", min: 0, step: 1, value: s.top_k, "data-testid": "top-k", id: "top-k", oninput: onChange });
  const pIn = el("input", { type: "range", min: 0.01, max: 1, step: 0.01, value: s.top_p, "data-testid": "top-p", id: "top-p", oninput: onChange });
  const mIn = el("input", { type: "range", min: 0, max: 1, step: 0.01, value: s.min_p, "data-testid": "min-p", id: "min-p", oninput: onChange });
  const gIn = el("input", { type: "checkbox", "data-testid": "greedy", id: "greedy", onchange: onChange });
  const seedIn = el("input", { type: "number", min: 0, step: 1, value: state.seed, "data-testid": "seed", id: "seed", oninput: () => readControls() });
  const nIn = el("input", {
    type: "number",
    min: 1,
    max: 256,
    step: 1,
    value: 10,
    "data-testid": "generate-count",
    id: "generate-count",
    // a refused count's line goes once the box holds one that works
    oninput: () => !$("generate-count-error").hidden && sayCount(!countOk(Number(nIn.value))),
  });
  panel.replaceChildren(
    el("h2", { id: "sampling-title" }),
    el("div", { class: "sub", id: "sampling-sub", "data-testid": "sampling-sub" }),
    el(
      "div",
      { class: "controls" },
      control("", tIn, el("output", { id: "temperature-out" })),
      control("", kIn, el("output", { id: "top-k-out" })),
      control("", pIn, el("output", { id: "top-p-out" })),
      control("", mIn, el("output", { id: "min-p-out" })),
      el(
        "div",
        { class: "control-row" },
        el("label", { class: "check" }, gIn, el("span", { id: "greedy-label" })),
        el(
          "label",
          { class: "seed" },
          el("span", { id: "seed-label" }),
          seedIn,
          el("button", {
            class: "icon",
            id: "seed-random",
            "data-testid": "seed-random",
            text: "⟳",
            onclick: () => {
              seedIn.value = Math.floor(Math.random() * 1e9);
              readControls();
            },
          }),
        ),
      ),
    ),
    el("div", { class: "control-error", id: "control-error", "data-testid": "control-error", role: "alert", hidden: true }),
    el("div", { class: "pool", id: "pool", "data-testid": "pool-size" }),
    el("div", { class: "bars", id: "bars", "data-testid": "prob-bars" }),
    el("div", { class: "note", id: "byte-note", "data-testid": "byte-note", hidden: true }),
    el("div", { class: "note", id: "pool-note" }),
    el(
      "div",
      { class: "gen-row" },
      el("button", { class: "primary", id: "generate", "data-testid": "generate", onclick: () => generate(1) }),
      el("button", { id: "generate-n", "data-testid": "generate-n", onclick: () => generate(Number(nIn.value)) }),
      nIn,
      el("span", { id: "gen-tokens-word" }),
      el("button", { id: "stop", "data-testid": "stop", hidden: true, onclick: () => genAbort?.abort() }),
    ),
    el("div", { class: "control-error", id: "generate-count-error", "data-testid": "generate-count-error", role: "alert", hidden: true }),
    el("div", { class: "note", id: "gen-status", "data-testid": "gen-status" }),
  );
  labelSamplingPanel();
}

function labelSamplingPanel() {
  const labels = document.querySelectorAll("#sampling .control .label");
  [t("page.temperature"), `${t("page.top-k")}${paren(`0 = ${t("page.off")}`)}`, t("page.top-p"), t("page.min-p")].forEach((text, i) => {
    labels[i].textContent = text;
  });
  $("sampling-title").textContent = t("page.sampling");
  $("greedy-label").textContent = t("page.greedy");
  $("seed-label").textContent = t("page.seed");
  $("seed-random").title = t("page.random-seed");
  $("generate").textContent = t("page.generate");
  $("generate-n").textContent = t("page.generate-n");
  $("gen-tokens-word").textContent = t("page.tokens-word");
  $("stop").textContent = t("page.stop");
}

// Read and validate the controls; returns false (and says why) when one is out of range.
function readControls() {
  const s = state.sampling;
  const problems = [];
  s.temperature = Number($("temperature").value);
  const k = $("top-k").value.trim();
  const kNum = Number(k);
  if (k === "" || !Number.isInteger(kNum) || kNum < 0 || kNum > state.model.vocab_size) {
    problems.push(t("page.top-k-error", { vocab: state.model.vocab_size.toLocaleString("en-US") }));
  } else {
    s.top_k = kNum;
  }
  s.top_p = Number($("top-p").value);
  s.min_p = Number($("min-p").value);
  s.greedy = $("greedy").checked;
  const seed = Number($("seed").value);
  if ($("seed").value.trim() === "" || !Number.isSafeInteger(seed) || seed < 0) problems.push(t("page.seed-error", { max: Number.MAX_SAFE_INTEGER.toLocaleString("en-US") }));
  else state.seed = seed;
  const box = $("control-error");
  box.hidden = problems.length === 0;
  box.textContent = sentences(...problems); // no space after a Chinese "。"
  $("temperature-out").textContent = s.temperature.toFixed(2);
  $("top-k-out").textContent = s.top_k ? "" : t("page.off");
  $("top-p-out").textContent = s.top_p >= 1 ? t("page.off") : s.top_p.toFixed(2);
  $("min-p-out").textContent = s.min_p <= 0 ? t("page.off") : s.min_p.toFixed(2);
  document.querySelectorAll("#sampling .controls input[type=range]").forEach((r) => (r.disabled = s.greedy && r.id !== "temperature"));
  $("top-k").disabled = s.greedy;
  return problems.length === 0;
}

function currentPool() {
  const view = state.views.get(state.position);
  return view ? computePool(view, state.sampling) : null;
}

async function ensureView(position) {
  if (state.views.has(position)) return state.views.get(position);
  const ids = state.ids;
  const data = await cachedPost("/api/final", { ids, position });
  for (const [id, text] of Object.entries(data.vocab)) state.vocab.set(Number(id), text);
  if (ids === state.ids) state.views.set(position, data.logits);
  return data.logits;
}

// Recompute the pool and redraw the bars: pure browser work, timed with performance marks.
function updateSampling() {
  if (!state.trace) return;
  const position = state.position;
  $("sampling-sub").textContent = t("page.after", { p: position, tok: quotedToken(promptTexts(position)) });
  if (!state.views.has(position)) {
    $("bars").classList.add("loading");
    ensureView(position)
      .then(() => position === state.position && updateSampling())
      .catch((err) => showError(err));
    return;
  }
  $("bars").classList.remove("loading");
  performance.mark("sampling-start");
  const pool = currentPool();
  drawBars(pool);
  updateReadout(state, stepContext);
  if (["probabilities", "temperature", "sampling"].includes(state.step)) renderCurrentStep();
  performance.mark("sampling-end");
  performance.measure("sampling-render", "sampling-start", "sampling-end");
}

function drawBars(pool) {
  const box = $("bars");
  // a byte token (<0xE6><0x9B>) says what part of a character it is: in its tooltip, and the
  // most likely one under the bars
  const note = (row) => byteNote(tokenText(row.id), `“${visible(tokenText(row.id))}”`);
  const rows = drawProbBars(box, pool, tokenText, { note });
  const first = rows.map(note).find(Boolean);
  $("byte-note").hidden = !first;
  $("byte-note").textContent = first ?? "";
  $("pool").textContent = poolText(pool);
  $("pool").dataset.size = pool.poolSize;
  $("pool-note").textContent = sentences(t("page.pool-note"), t("page.from-end"), t("page.same-seed"));
  const request = { ids: state.ids, position: state.position, sampling: serverSampling() };
  syncPool(cachedPost, request, pool, { bars: box.querySelectorAll("[data-testid=prob-bar]"), label: $("pool") });
}

// --- generation -------------------------------------------------------------------------

function setGenStatus(gen) {
  state.gen = gen;
  const box = $("gen-status");
  if (!gen) {
    box.textContent = "";
    return;
  }
  // in words: "Added 10 tokens; the last was “-” at 95.8% (it was drawn from 49,152 candidates …)"
  const pool = gen.pool.toLocaleString("en-US");
  const vocab = state.model.vocab_size.toLocaleString("en-US");
  const why = gen.reason && t("page.stopped", { reason: reasonText(gen.reason) });
  box.textContent = sentences(t("page.gen-status-words", { n: gen.n, tok: visible(gen.text), p: pct(gen.prob), pool, vocab }), why);
}

function serverSampling() {
  const s = state.sampling;
  return {
    temperature: s.temperature,
    top_k: s.top_k || null,
    top_p: s.top_p >= 1 ? null : s.top_p,
    min_p: s.min_p > 0 ? s.min_p : null,
    greedy: s.greedy,
  };
}

const countOk = (n) => Number.isInteger(n) && n >= 1 && n <= 256;

// A refused count is said under its own box, not with the controls' line far above it.
function sayCount(refused) {
  const box = $("generate-count-error");
  if (!box) return;
  box.hidden = !refused;
  box.textContent = refused ? t("page.n-error") : "";
}

async function generate(n) {
  if (state.busy || !state.trace) return;
  if (!readControls()) return;
  if (!countOk(n)) {
    sayCount(true);
    return;
  }
  // Show the distribution that is being sampled from: the one after the last token.
  selectPosition(state.ids.length - 1);
  state.busy = true;
  document.body.classList.add("generating");
  $("stop").hidden = false;
  genAbort = new AbortController();
  const base = state.ids.slice();
  const added = [];
  // the texts the last token is read with: a byte token may complete a character begun before
  const texts = base.slice(-3).map(tokenText);
  let reason = "";
  setGenStatus(null);
  try {
    await streamNDJSON(
      "/api/generate",
      { ids: base, n, sampling: serverSampling(), seed: state.seed },
      (event) => {
        if (event.type === "token") {
          added.push(event.id);
          state.vocab.set(event.id, event.text);
          state.pending.push({ id: event.id, text: event.text });
          renderTokens();
          texts.push(event.text);
          setGenStatus({ n: added.length, text: lastPiece(texts), prob: event.prob, pool: event.pool_size });
        } else if (event.type === "done") {
          reason = event.reason;
        } else if (event.type === "error") {
          showError(() => errorText(event.code, event.params, event.error));
        }
      },
      genAbort.signal,
    );
  } catch (err) {
    if (err.name !== "AbortError") showError(err);
    else reason = "stopped";
  } finally {
    state.busy = false;
    document.body.classList.remove("generating");
    $("stop").hidden = true;
  }
  if (reason && reason !== "done" && state.gen) setGenStatus({ ...state.gen, reason });
  if (added.length) await retrace({ ids: base.concat(added) }, { generated: true });
}

// --- boot -------------------------------------------------------------------------------

function renderLanguage() {
  applyStatic();
  $("prompt").placeholder = t("page.prompt-placeholder");
  labelLanguageToggle($("lang"));
  labelSamplingPanel();
  labelChatToggle();
  if (state.model) buildExamples(); // their tooltips
  readControls();
  if ($("generate-count-error")?.hidden === false) sayCount(true); // in the new language
  setStatus(state.status);
  if (state.gen) setGenStatus(state.gen);
  if (state.error) showError(state.error.what, state.error.more);
  if (state.model && !state.trace) {
    // no trace to draw (the prompt was refused): the header and the step list still change
    renderFacts();
    renderNav();
  }
  if (state.trace) {
    renderAll();
    showTokenCount();
  }
}

// The server says which examples this model can read (GET /api/model: examples): a small
// model trained on its own text may lack their characters or have a short context. Those cut
// to fit say so; those that cannot work are disabled, their tooltip says why.
function exampleTitle(e) {
  const ctx = state.model.n_ctx.toLocaleString("en-US");
  if (e.problem === "unknown_chars") return t("page.example-unknown", { chars: e.unknown.join(" ") });
  if (e.problem === "too_long") return t("page.example-too-long", { ctx });
  if (e.problem) return t("page.error.no-tokenizer");
  return e.cut ? t("page.example-cut", { ctx, full: e.full }) : e.full;
}

function buildExamples() {
  $("examples").replaceChildren(
    ...(state.model?.examples ?? []).map((e) =>
      el("button", {
        class: "example",
        "data-verbatim": "all", // the example is a prompt: the model's text, not the page's
        "data-testid": "example",
        text: e.text.replace(/\n/g, " ⏎ ") + (e.cut ? " …" : ""),
        title: exampleTitle(e),
        disabled: !e.usable,
        onclick: () => {
          $("prompt").value = e.text;
          fitHeight($("prompt"));
          state.promptCount = 0;
          clearTimeout(debounce);
          retracePrompt(e.text);
        },
      }),
    ),
  );
}

async function boot() {
  $("prompt").addEventListener("input", onPromptInput);
  autosize($("prompt"));
  wireLanguageToggle($("lang"), renderLanguage);
  document.addEventListener("keydown", (e) => {
    if (e.target.closest("input, textarea, select")) return;
    const keys = stepKeys();
    const i = keys.indexOf(state.step);
    if (i < 0) return; // a "look inside" view is open: arrows are not a tour there
    if (e.key === "ArrowRight" && i < keys.length - 1) openStep(keys[i + 1]);
    if (e.key === "ArrowLeft" && i > 0) openStep(keys[i - 1]);
  });
  buildScrubber($("scrub"), $("tokens"), selectPosition);
  try {
    // the second models to compare with come first too: the step list is drawn once, whole
    const others = getJSON("/api/compare/models").then((d) => d.models, () => []);
    const [model, catalogue, compareModels] = await Promise.all([getModel(), getJSON("/api/steps"), others]);
    state.model = model;
    state.compareModels = compareModels;
    setSteps(catalogue.steps);
  } catch (err) {
    showError(err);
    return;
  }
  const m = state.model;
  setFacts(modelFacts(m));
  setFamily(m.family, m.lineage); // RMSNorm, not LayerNorm, where the model says so (or its base)
  const toggle = chatToggle(m, () => retracePrompt($("prompt").value));
  if (toggle) $("examples").parentElement.append(toggle);
  buildSamplingPanel();
  renderLanguage();
  renderFacts();
  renderNav();
  // the first example this model can read: a small model's context may be shorter than some
  const usable = (m.examples ?? []).find((e) => e.usable);
  // a switch from another served model's page carries its prompt here (model_menu.js)
  const first = !m.tokenizer ? "0 1 2 3" : (takeCarriedPrompt() ?? usable?.text ?? "");
  $("prompt").value = first;
  fitHeight($("prompt"));
  if (!m.tokenizer) $("examples").parentElement.hidden = true;
  if (first) await retrace(promptBody(first), { fromPrompt: true });
  document.body.dataset.ready = "1";
}

window.lmscope = { state }; // for the console and for tests that inspect state
boot();
