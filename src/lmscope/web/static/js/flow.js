// The flow view: the page's overview. The prompt's tokens enter on the left, their real
// embedding vectors (strips) go into the stack of blocks, the residual stream of the selected
// position runs through every block (its real vector after each), the selected block opens
// into its attention and MLP, and the final vector becomes the real logits and probabilities.
// It draws what the architecture does (GET /api/model's family; POST /api/flow's design):
// GPT-2 adds position vectors and uses LayerNorm and a GELU MLP; the Llama family adds none
// (RoPE rotates q and k inside attention), uses RMSNorm, SwiGLU and grouped-query attention.
//
// Each of the 20 steps lights its part and opens its explanation in the tour card; a step change
// sends a packet (the vector that moves on) from the old part to the new one. Play / pause /
// step run through the steps in sync with the step list; everything is a button or reachable
// by Tab and Enter; with prefers-reduced-motion nothing moves. Frame gaps of each step change
// are kept (window.lmscope.flow.changes) and marked with performance marks for the benchmark.

import { stepInfo, stepKeys, stepText } from "./catalogue.js";
import { columnFormat, el, fmt, pct, visible } from "./draw.js";
import { drawWires, flyPacket, vectorStrip } from "./flow_draw.js";
import { afterPress } from "./press.js";
import { lang, lineageOf, llamaLike, t } from "./catalog.js";

const EVERYTHING = new Set(["transformer", "how-it-works", "architecture"]);
const PARTS = {
  embedding: ["tokens", "embedding"],
  "token-embedding": ["tokens", "embedding"],
  "positional-encoding": ["embedding", "position"],
  blocks: ["blocks", "stream"],
  "self-attention": ["attn"],
  qkv: ["ln1", "attn"],
  "multi-head": ["attn"],
  "masked-attention": ["attn"],
  "attention-output": ["attn", "add1"],
  mlp: ["ln2", "mlp"],
  logits: ["final", "logits"],
  probabilities: ["probs"],
  temperature: ["probs"],
  sampling: ["probs"],
  residual: ["add1", "add2", "stream"],
  layernorm: ["ln1", "ln2", "final"],
  dropout: ["attn", "add1"],
};
const PLAY_MS = 0; // a step's time on screen while playing: 0 paces it by its text (tests set ms)
// reading speed: about 250 English words a minute, 400 Chinese characters a minute
const READ_MS_PER_CHAR = { en: 45, zh: 150 };
const NARROW = 760; // below this width the columns stack

// changes: one {step, frames: [ms between frames]} per animated step change (the benchmark's)
const flow = { key: null, root: null, data: null, dataKey: null, step: null, playing: false, timer: null, changes: [], observer: null, moving: null, playMs: PLAY_MS };
let hooksRef = null;

const reducedMotion = () => window.matchMedia?.("(prefers-reduced-motion: reduce)").matches;

// The step's parts: the rotary step lives inside attention in a model without position vectors.
function partsOf(key, data) {
  if (key === "positional-encoding" && data && data.positions !== "learned") return ["attn", "rope"];
  return PARTS[key] ?? [];
}

export function renderFlow(container, state, hooks) {
  hooksRef = hooks;
  if (window.lmscope) window.lmscope.flow = flow; // frames and state, for tests and the benchmark
  const narrow = (container.clientWidth || 1200) < NARROW;
  const dataKey = `${state.model.name}|${state.ids.join(",")}|${state.position}`;
  const key = `${dataKey}|${state.layer}|${lang()}|${narrow}|${flow.dataKey === dataKey}`;
  if (key !== flow.key || !flow.root?.isConnected) {
    flow.key = key;
    build(container, state, narrow, flow.dataKey === dataKey ? flow.data : null);
    setStep(state.step, false);
    if (flow.dataKey !== dataKey) load(container, state, dataKey);
    return;
  }
  if (state.step !== flow.step) setStep(state.step, true);
}

async function load(container, state, dataKey) {
  let data;
  try {
    data = await hooksRef.post("/api/flow", { ids: state.ids, position: state.position });
  } catch {
    return; // the skeleton stays; the step panel shows errors
  }
  if (dataKey !== `${state.model.name}|${state.ids.join(",")}|${state.position}`) return;
  flow.data = data;
  afterPress(() => {
    if (flow.data !== data) return; // a newer answer was drawn meanwhile
    flow.dataKey = dataKey;
    renderFlow(container, state, hooksRef);
    flow.root.dataset.loaded = "1";
    requestAnimationFrame(() => {
      if (!performance.getEntriesByName("flow-data-frame").length) performance.mark("flow-data-frame");
    });
  });
}

// --- building ---------------------------------------------------------------------------

function build(container, state, narrow, data) {
  const root = el("div", {
    class: `flow${narrow ? " narrow" : ""}`,
    "data-testid": "flow",
    "data-family": state.model.family ?? "gpt2",
    "data-loaded": data ? "1" : null,
  });
  const stage = el(
    "div",
    { class: "flow-stage" },
    tokensColumn(state, data),
    embeddingColumn(state, data),
    stackColumn(state, data),
    outputColumn(state, data),
  );
  // the tour's one card: its navigator (‹ ▶ ›, the step's number and title) over the step's
  // explanation; it stays at the foot of the window while the diagram is on screen, so the
  // lit part (scrolled into the room above it, keepInView) and its explanation are seen together
  const card = el(
    "div",
    { class: "flow-tour", "data-testid": "flow-tour" },
    tourBar(),
    el("div", { class: "flow-explain", "data-testid": "flow-explain", role: "region", "aria-live": "polite" }),
  );
  const overlay = document.createElementNS("http://www.w3.org/2000/svg", "svg");
  overlay.setAttribute("class", "flow-wires");
  overlay.setAttribute("aria-hidden", "true");
  root.append(archLine(state, data), stage, overlay, card);
  container.replaceChildren(root);
  flow.root = root;
  flow.step = null;
  requestAnimationFrame(() => {
    wire(root, overlay);
    if (!performance.getEntriesByName("flow-first-frame").length) performance.mark("flow-first-frame");
    root.dataset.drawn = "1";
  });
  flow.observer?.disconnect();
  flow.observer = new ResizeObserver(() => {
    const now = (container.clientWidth || 1200) < NARROW;
    if (now !== root.classList.contains("narrow")) {
      root.classList.toggle("narrow", now); // the explanation moves under its part, or back
      placeExplanation(flow.step, root.querySelector("[data-testid=flow-explain]"));
    }
    wire(root, overlay);
  });
  flow.observer.observe(root);
}

function part(name, { go, ...attrs }, ...children) {
  const node = el("div", { ...attrs, class: `flow-part ${attrs.class ?? ""}`, "data-part": name }, ...children);
  if (go) {
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    node.addEventListener("click", (e) => {
      e.stopPropagation();
      pause();
      go();
    });
    node.addEventListener("keydown", (e) => {
      if (e.key === "Enter" || e.key === " ") {
        e.preventDefault();
        e.stopPropagation();
        pause();
        go();
      }
    });
  }
  return node;
}

function heading(text, sub) {
  return el("div", { class: "flow-head" }, el("b", { text }), sub ? el("span", { "data-verbatim": "", text: sub }) : null);
}

function tokenWindow(state, data) {
  if (data) return { start: data.start, tokens: data.tokens };
  const n = state.trace.tokens.length;
  const size = Math.min(12, n);
  const start = Math.max(0, Math.min(state.position - Math.floor(size * 0.75), n - size));
  return { start, tokens: state.trace.tokens.slice(start, start + size) };
}

// position -> [the character a run of byte tokens forms, whether it starts the run here]
function charMarks(state) {
  const marks = new Map();
  for (const span of state.trace.chars ?? []) {
    for (let p = span.start; p <= span.end; p++) marks.set(p, [span.text, p === span.start]);
  }
  return marks;
}

function tokensColumn(state, data) {
  const { start, tokens } = tokenWindow(state, data);
  const marks = charMarks(state);
  const rows = tokens.map((tok) =>
    el(
      "button",
      {
        type: "button",
        class: `flow-token${tok.position === state.position ? " sel" : ""}${tok.position >= state.promptCount ? " gen" : ""}`,
        "data-testid": "flow-token",
        "data-position": tok.position,
        title: t("page.token-title", { p: tok.position, id: String(tok.id) }),
        onclick: (e) => {
          e.stopPropagation(); // the column around it opens step 5
          pause();
          hooksRef.selectPosition(tok.position);
        },
      },
      marks.has(tok.position)
        ? el("span", { class: "flow-char", "data-testid": "flow-char", text: marks.get(tok.position)[1] ? marks.get(tok.position)[0] : "↳" })
        : null,
      el("span", { class: "piece", "data-verbatim": "", text: visible(tok.text) }),
      el("span", { class: "id", text: tok.id }),
    ),
  );
  // the heading opens step 5 (the column holds the token buttons: no button inside a button)
  const head = part("tokens-head", { class: "flow-head-btn", go: () => hooksRef.openStep("token-embedding") }, heading(t("page.tokens"), `[${state.ids.length}]`));
  return part(
    "tokens",
    { class: "flow-col flow-tokens" },
    head,
    start > 0 ? el("div", { class: "flow-more", text: t("page.picture.flow-earlier", { n: start }) }) : null,
    el("div", { class: "flow-rows" }, rows),
  );
}

function embeddingColumn(state, data) {
  const { tokens } = tokenWindow(state, data);
  const d = state.model.d_model;
  const rows = tokens.map((tok, i) =>
    el(
      "div",
      { class: `flow-row${tok.position === state.position ? " sel" : ""}`, "data-position": tok.position },
      data ? vectorStrip(data.embeddings[i], { width: 112, cell: Math.max(1, Math.min(4, 18 / Math.ceil(d / 64))), label: `x${tok.position}`, testid: "flow-embedding" }) : el("span", { class: "flow-wait" }),
    ),
  );
  const learned = data ? data.positions === "learned" : !llamaLike(state.model);
  const sum = learned ? t("page.picture.flow-emb-sum") : t("page.picture.flow-emb-only");
  const children = [heading(t("page.embedding"), `[${state.ids.length}, ${d}]`), el("div", { class: "flow-rows" }, rows)];
  if (data) children.push(decomposition(state, data));
  return part("embedding", { class: "flow-col flow-embed", title: sum, go: () => hooksRef.openStep("embedding") }, ...children);
}

// The selected token's vector, taken apart: W_E row (+ W_P row) = what enters block 0.
function decomposition(state, data) {
  const p = data.position;
  const i = p - data.start;
  const parts = [el("div", { class: "flow-cap", text: `W_E[${state.ids[p]}]` }), vectorStrip(data.token_embedding, { width: 112, label: "W_E" })];
  if (data.position_embedding) {
    parts.push(
      el("div", { class: "flow-op", text: "+" }),
      part("position", { class: "flow-pos" }, el("div", { class: "flow-cap", text: `W_P[${p}]` }), vectorStrip(data.position_embedding, { width: 112, label: "W_P" })),
      el("div", { class: "flow-op", text: "=" }),
      vectorStrip(data.embeddings[i], { width: 112, label: "x" }),
    );
  } else {
    parts.push(el("p", { class: "flow-note", "data-testid": "flow-no-positions", text: t("page.picture.flow-no-positions") }));
  }
  return el("div", { class: "flow-decomp", "data-testid": "flow-decomposition" }, parts);
}

function stackColumn(state, data) {
  const m = state.model;
  const n = m.n_layer;
  const cell = Math.max(1, Math.min(4, 16 / Math.ceil(m.d_model / 64)));
  const biggest = data ? Math.max(...data.norms) : 1;
  const row = (l) => {
    const v = data?.stream[l + 1];
    const label = l < 0 ? t("page.picture.flow-emb") : `L${l}`;
    const body = [
      el("span", { class: "flow-l", text: label }),
      v ? vectorStrip(v, { width: 190, cell, label: l < 0 ? "x" : `x${l + 1}`, testid: "flow-stream" }) : el("span", { class: "flow-wait" }),
      el(
        "span",
        { class: "flow-norm" },
        el("i", { class: "flow-norm-bar", style: { width: data ? `${(48 * data.norms[l + 1]) / biggest}px` : "0" } }),
        data ? `|x| ${fmt(data.norms[l + 1], 3)}` : "",
      ),
    ];
    if (l < 0) return el("div", { class: "flow-block emb", "data-testid": "flow-stream-start" }, body);
    const open = l === state.layer;
    const block = part(`block-${l}`, { class: `flow-block${open ? " open" : ""}`, "data-layer": l, "data-testid": "flow-block", go: () => hooksRef.setLayer(l) }, body);
    return open ? [block, openBlock(state, data, l)] : block;
  };
  const rows = [row(-1)];
  for (let l = 0; l < n; l++) rows.push(row(l));
  return part(
    "blocks",
    { class: "flow-col flow-stack" },
    heading(t("page.picture.flow-blocks", { n }), t("page.picture.flow-stream-of", { p: state.position })),
    el("div", { class: "flow-rail", "data-part": "stream" }, rows.flat()),
  );
}

// The selected block opened: norm -> attention -> + -> norm -> MLP -> +, as this family does it.
function openBlock(state, data, l) {
  const m = state.model;
  const llama = data ? data.positions !== "learned" : llamaLike(m);
  const norm = data?.norm ?? (llama ? "RMSNorm" : "LayerNorm");
  const kv = data?.n_kv_head ?? m.n_kv_head ?? m.n_head;
  const go = (key, extra) => () => hooksRef.openStep(key, extra);
  const sub = (name, title, detail, key, extra, cls = "") =>
    part(name, { class: `flow-sub ${cls}`, "data-testid": `flow-${name}`, go: go(key, extra) }, el("b", { "data-verbatim": "", text: title }), detail);
  return el(
    "div",
    { class: "flow-open", "data-testid": "flow-open-block", "data-layer": l },
    sub("ln1", norm, null, "layernorm", { lnWhich: "ln1" }, "norm"),
    sub("attn", t("page.attention"), heads(m.n_head, kv, llama), "self-attention", {}),
    sub("add1", "+", null, "residual", {}, "add"),
    sub("ln2", norm, null, "layernorm", { lnWhich: "ln2" }, "norm"),
    sub("mlp", data?.mlp ?? (llama ? "SwiGLU" : "MLP"), mlpDetail(m, llama), "mlp", {}),
    sub("add2", "+", null, "residual", {}, "add"),
  );
}

function heads(nHead, nKv, rotary) {
  const per = nHead / nKv;
  const groups = Array.from({ length: nKv }, (_, g) =>
    el(
      "span",
      { class: "flow-kv", title: per > 1 ? t("page.picture.flow-kv-group", { a: g * per, b: (g + 1) * per - 1, g }) : t("page.picture.flow-kv-own") },
      Array.from({ length: per }, (_, j) => el("i", { class: "flow-head-dot", title: `H${g * per + j}` })),
    ),
  );
  return el(
    "div",
    { class: "flow-heads" },
    el("div", { class: "flow-dots" }, groups),
    el("small", { text: per > 1 ? t("page.picture.flow-gqa", { n: nHead, kv: nKv }) : t("page.picture.flow-mha", { n: nHead }) }),
    rotary ? el("small", { class: "flow-rope", "data-part": "rope", "data-testid": "flow-rope", text: t("page.picture.flow-rope") }) : null,
  );
}

function mlpDetail(m, llama) {
  const text = llama ? t("page.picture.flow-swiglu", { d: m.d_model, f: m.d_mlp }) : t("page.picture.flow-gelu", { d: m.d_model, f: m.d_mlp });
  return el("small", { "data-testid": "flow-mlp-kind", text });
}

function outputColumn(state, data) {
  const top = data ? data.top : fallbackTop(state);
  const maxP = Math.max(...top.map((c) => c.prob), 1e-12);
  const logits = data ? data.top.map((c) => c.logit) : [];
  const lo = Math.min(...logits, 0);
  const hi = Math.max(...logits, 1e-9);
  const norm = data?.norm ?? (llamaLike(state.model) ? "RMSNorm" : "LayerNorm");
  const logit = columnFormat(logits, 4); // one column: 26.00 under 26.93
  const bar = (c, value, width, testid) =>
    el(
      "div",
      { class: "flow-bar-row", "data-testid": testid, "data-id": c.id, "data-value": value },
      el("span", { class: "tok", "data-verbatim": "", text: visible(c.text) }),
      el("span", { class: "track" }, el("span", { class: "fill", style: { width: `${width * 100}%` } })),
      el("span", { class: "val", text: testid === "flow-prob" ? pct(value) : logit(value) }),
    );
  return el(
    "div",
    { class: "flow-col flow-out" },
    part("final", { class: "flow-final", go: () => hooksRef.openStep("layernorm", { lnWhich: "final" }) }, heading(t("page.picture.flow-final", { norm }), t("page.picture.flow-at", { p: state.position })), data ? vectorStrip(data.final, { width: 150, label: "ln_final" }) : el("span", { class: "flow-wait" })),
    part("logits", { class: "flow-logits", go: () => hooksRef.openStep("logits") }, heading(t("page.logits"), `× W_Eᵀ → [${state.model.vocab_size}]`), data ? top.map((c, i) => bar(c, logits[i], (logits[i] - lo) / (hi - lo || 1), "flow-logit")) : null),
    part("probs", { class: "flow-probs", go: () => hooksRef.openStep("probabilities") }, heading(t("page.probabilities"), "softmax"), top.map((c) => bar(c, c.prob, c.prob / maxP, "flow-prob"))),
  );
}

function fallbackTop(state) {
  const p = state.trace.predictions[state.position];
  return p.top_ids.map((id, i) => ({ id, text: state.trace.vocab[id] ?? `#${id}`, prob: p.top_probs[i] }));
}

// The line under the flow: the recipe of the model's family, or of the nearest family it
// builds on (/api/model's lineage: Qwen3-MoE is told as a mixture of experts).
const ARCH_LINES = {
  gemma3: "page.picture.flow-arch-gemma3",
  qwen3: "page.picture.flow-arch-qwen3",
  phi3: "page.picture.flow-arch-phi3",
  moe: "page.picture.flow-arch-moe",
  llama: "page.picture.flow-arch-llama",
};

function archLine(state, data) {
  const llama = data ? data.positions !== "learned" : llamaLike(state.model);
  const family = lineageOf(state.model).find((name) => name in ARCH_LINES) ?? "llama";
  const id = llama ? ARCH_LINES[family] : "page.picture.flow-arch-gpt2";
  const text = t(id, { kv: state.model.n_kv_head ?? state.model.n_head });
  return el("p", { class: "flow-arch", "data-testid": "flow-arch", text });
}

// --- controls ---------------------------------------------------------------------------

// The tour's one control, ‹ ▶ › and where the tour is: the card at the diagram's foot shows it
// and so does the step panel's header (steps.js), both built here on the same state (the open
// step, flow.playing) with the same handlers, so the two can never say different things. A step
// opened any other way (the list, the keyboard, a part of the diagram) pauses a playing tour.
// hooks: { openStep, current() } of the view that shows the bar (the flow's own by default).
const bars = new Set();

export function tourBar(prefix = "flow", hooks = null) {
  const button = (name, text, label, onclick) => el("button", { type: "button", class: `flow-btn flow-${name}`, "data-testid": `${prefix}-${name}`, text, "aria-label": label, title: label, onclick });
  const go = (by) => {
    pause();
    move(by, hooks);
  };
  const bar = el(
    "div",
    { class: "flow-bar", role: "toolbar", "aria-label": t("page.picture.flow-controls") },
    button("prev", "‹", t("page.picture.flow-prev"), () => go(-1)),
    button("play", "▶", t("page.picture.flow-play"), () => (flow.playing ? pause() : play(hooks))),
    button("next", "›", t("page.picture.flow-next"), () => go(1)),
    el("span", { class: "flow-where", "data-testid": `${prefix}-where` }),
  );
  bar.tourHooks = hooks;
  bars.add(bar);
  sayBar(bar);
  return bar;
}

function tourHooks(hooks) {
  return hooks ?? { openStep: (key) => hooksRef.openStep(key), current: () => flow.step };
}

// Every bar on screen says the same: the open step's number and whether the tour plays.
function sayTour() {
  for (const bar of bars) {
    if (bar.isConnected) sayBar(bar);
    else if (bar.wasShown) bars.delete(bar); // the bar of a panel drawn again
  }
  if (flow.root) flow.root.dataset.playing = flow.playing ? "1" : "0";
}

function sayBar(bar) {
  bar.wasShown ||= bar.isConnected;
  const keys = stepKeys();
  const n = keys.indexOf(tourHooks(bar.tourHooks).current()) + 1;
  bar.querySelector(".flow-where").textContent = n ? `${n} / ${keys.length}` : "";
  bar.querySelector(".flow-prev").disabled = n === 1;
  bar.querySelector(".flow-next").disabled = n === keys.length;
  const b = bar.querySelector(".flow-play");
  b.textContent = flow.playing ? "❚❚" : "▶";
  b.title = b.ariaLabel = flow.playing ? t("page.picture.flow-pause") : t("page.picture.flow-play");
  b.setAttribute("aria-pressed", String(flow.playing));
}

function move(by, hooks) {
  const { openStep, current } = tourHooks(hooks);
  const keys = stepKeys();
  const i = keys.indexOf(current());
  const j = Math.max(0, Math.min(keys.length - 1, (i < 0 ? 0 : i) + by));
  if (keys[j] !== current()) openStep(keys[j]);
}

// the tour's own moves, which leave it playing
function advance(hooks, key) {
  flow.advancing = true;
  try {
    if (key) tourHooks(hooks).openStep(key);
    else move(1, hooks);
  } finally {
    flow.advancing = false;
  }
}

export function play(hooks = null) {
  flow.playing = true;
  flow.playHooks = hooks;
  sayTour();
  const keys = stepKeys();
  const current = () => tourHooks(flow.playHooks).current();
  if (keys.indexOf(current()) >= keys.length - 1) advance(hooks, keys[0]);
  clearTimeout(flow.timer);
  const tick = () => {
    if (!flow.playing) return;
    const i = stepKeys().indexOf(current());
    if (i >= stepKeys().length - 1) return pause();
    advance(flow.playHooks);
    flow.timer = setTimeout(tick, stepMs(current()));
  };
  flow.timer = setTimeout(tick, stepMs(current()));
}

// How long the playing tour stays on a step: the time to read what the card says (at least 5 s),
// unless a test set flow.playMs.
function stepMs(key) {
  if (flow.playMs) return flow.playMs;
  const said = stepText(key);
  const text = (said?.plain || said?.body) ?? ""; // what the card shows: the plain words
  return Math.max(5000, text.length * (READ_MS_PER_CHAR[lang()] ?? READ_MS_PER_CHAR.en));
}

// Scroll the window so the step's lit part stands in the room above the tour card (its top at
// least, for a part taller than that room); the card itself sits at the window's foot.
export function keepInView() {
  const root = flow.root;
  const node = root && activeNode(flow.step);
  const card = root?.querySelector(".flow-tour");
  if (!node || !card || !root.isConnected) return;
  const margin = 8;
  const room = window.innerHeight - card.getBoundingClientRect().height - margin;
  const r = node.getBoundingClientRect();
  if (r.top >= margin && r.top + Math.min(r.height, room / 2) <= room) return; // seen already
  const wanted = r.height >= room - margin ? margin : Math.max(margin, Math.min((room - r.height) / 2, room - r.height - margin));
  window.scrollBy({ top: r.top - wanted, behavior: "instant" });
}

export function pause() {
  if (!flow.playing) return;
  flow.playing = false;
  clearTimeout(flow.timer);
  sayTour();
}

// --- the step: light its parts, open its explanation, fly the packet -----------------------

function setStep(key, animate) {
  const root = flow.root;
  if (!root) return;
  const previous = flow.step;
  if (flow.playing && !flow.advancing && previous !== key) pause(); // the list, the keys...
  flow.step = key;
  root.dataset.step = key;
  const all = EVERYTHING.has(key);
  const on = new Set(partsOf(key, flow.data));
  root.classList.toggle("all-on", all);
  for (const node of root.querySelectorAll("[data-part]")) {
    const name = node.dataset.part;
    const row = name.startsWith("block-") && (on.has("blocks") || on.has("stream"));
    const own = on.has(name) || on.has(name.replace(/-head$/, "")); // a column's heading with it
    node.classList.toggle("on", all || own || row);
  }
  for (const node of root.querySelectorAll(".flow-part")) {
    node.classList.toggle("holds-on", !node.classList.contains("on") && node.querySelector(".on") !== null);
  }
  explain(key);
  sayTour();
  if (!animate || !previous || previous === key || reducedMotion()) return;
  const from = activeNode(previous);
  const to = activeNode(key);
  if (!from || !to || from === to) return;
  const change = { step: key, frames: [] };
  flow.changes.push(change);
  // The parts just lit and dimmed are painted first, in a frame of their own (two frames on:
  // the second callback comes after that paint); the packet then starts on a settled page, so
  // its first frame is motion, not a repaint of the whole flow (which cost the first flight of
  // a session a 33 ms frame).
  const settled = new Promise((go) => requestAnimationFrame(() => requestAnimationFrame(go)));
  const fly = () => {
    performance.mark("flow-step-start"); // the flight's own frames, from here to its landing
    return flyPacket(root, from, to, packetStrip(key), change.frames);
  };
  flow.moving = settled.then(fly).then(() => {
    performance.mark("flow-step-end");
    performance.measure("flow-step", "flow-step-start", "flow-step-end");
    flow.moving = null;
  });
}

// Resolves once the packet has landed (at once when nothing moves): the step panel draws
// after it, so building its figures does not take frames from the animation.
export function flowSettled() {
  return flow.moving ?? Promise.resolve();
}

function activeNode(key) {
  if (EVERYTHING.has(key)) return flow.root.querySelector("[data-part=tokens]");
  const names = partsOf(key, flow.data);
  for (const name of names.slice().reverse()) {
    const node = flow.root.querySelector(`[data-part="${name}"]`);
    if (node) return node;
  }
  return null;
}

// What travels: the vector that leaves the part (the embedding, the stream, the final vector).
function packetStrip(key) {
  const d = flow.data;
  if (!d) return el("span", { class: "flow-packet-dot" });
  const i = d.position - d.start;
  const v = ["logits", "probabilities", "temperature", "sampling"].includes(key) ? d.final : ["embedding", "token-embedding", "positional-encoding"].includes(key) ? d.embeddings[i] : d.stream.at(-1);
  return vectorStrip(v, { width: 64, cell: 2 });
}

function explain(key) {
  const box = flow.root.querySelector("[data-testid=flow-explain]");
  const n = stepKeys().indexOf(key) + 1;
  if (n === 0) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const text = stepText(key);
  // plain words first; the numbers and this architecture's way behind a disclosure
  box.replaceChildren(
    el("h4", {}, el("span", { class: "num", text: n }), text.title),
    text.plain ? el("p", { class: "flow-plain", "data-testid": "flow-plain", text: text.plain }) : null,
    text.plain ? el("details", { class: "flow-detail" }, el("summary", { text: t("page.more-detail") }), el("p", { text: text.body })) : el("p", { text: text.body }),
    el("button", {
      type: "button",
      class: "flow-more-btn",
      "data-testid": "flow-details",
      text: t("page.picture.flow-details"),
      onclick: () => document.getElementById("step")?.scrollIntoView({ block: "start", behavior: reducedMotion() ? "auto" : "smooth" }),
    }),
  );
  placeExplanation(key, box);
  box.dataset.step = key;
  box.dataset.layer = stepInfo(key)?.layer ? "1" : "0";
}

// The explanation names the part it explains (the card itself stays at the window's foot).
function placeExplanation(key, box) {
  box.dataset.part = activeNode(key)?.dataset.part ?? ""; // the part it explains, for tests
}

function wire(root, overlay) {
  if (!root.isConnected) return;
  const q = (s) => root.querySelector(s);
  const pairs = [];
  for (const tok of root.querySelectorAll("[data-testid=flow-token]")) {
    const strip = root.querySelector(`.flow-embed .flow-row[data-position="${tok.dataset.position}"]`);
    pairs.push([tok, strip, tok.classList.contains("sel") ? "sel" : ""]);
  }
  // the selected vector enters the stack: from its sum (or its own row) to the stream's start
  pairs.push([q(".flow-decomp") ?? q(".flow-embed .flow-row.sel"), q("[data-testid=flow-stream-start]"), "sel"]);
  const blocks = root.querySelectorAll("[data-testid=flow-block]");
  pairs.push([blocks[blocks.length - 1] ?? q(".flow-stack"), q("[data-part=final]"), "sel"]);
  pairs.push([q("[data-part=final]"), q("[data-part=logits]")]);
  pairs.push([q("[data-part=logits]"), q("[data-part=probs]")]);
  drawWires(overlay, root, pairs);
}
