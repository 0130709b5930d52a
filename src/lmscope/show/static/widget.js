// The notebook's widgets (lmscope.show): the page's own views, mounted in a notebook cell.
// This module lives beside the page's modules when the widget is built (lmscope/show/bundle.py
// loads it with them), so "./flow.js" is the page's flow view itself, not a copy. It only puts
// the views together: the token chips, the step list, the sampling controls. Every number is the
// kernel's: a view's ctx.post(path, body) goes to Python over the widget's messages, where the
// web API's explain functions answer it from the notebook's trace (lmscope/show/answers.py).

import { el, hideTip, visible } from "./draw.js";
import { colon, setFacts, setFamily, t, useCatalogs } from "./catalog.js";
import { modelFacts, setSteps, stepKeys, stepText } from "./catalogue.js";
import { groupChips } from "./chars.js";
import { renderFlow } from "./flow.js";
import { renderStep, selectBox } from "./steps.js";
import { attentionLines } from "./attention_lines.js";
import { renderView } from "./inside.js";
import { computePool } from "./sampling.js";
import { drawProbBars, factSpans, poolText } from "./prob_bars.js";
import { attributeView, inductionView, patchView } from "./circuits_views.js";
import { KINDS, drawUnit, wireText } from "./rnn_view.js";
import { compareRows } from "./compare.js";

// Requests to the kernel: one message each, answered by id; an answer is kept, as the page's
// cachedPost keeps one, so going back to a step asks nothing.
function messenger(model) {
  let seq = 0;
  const waiting = new Map();
  const kept = new Map();
  model.on("msg:custom", (msg) => {
    const w = waiting.get(msg?.id);
    if (!w) return;
    waiting.delete(msg.id);
    if (msg.ok) w.resolve(msg.data);
    else w.reject(Object.assign(new Error(msg.error), { code: msg.code, params: msg.params }));
  });
  return (path, body) => {
    const key = `${path} ${JSON.stringify(body)}`;
    if (!kept.has(key)) {
      const answer = new Promise((resolve, reject) => {
        const id = ++seq;
        waiting.set(id, { resolve, reject });
        model.send({ id, path, body });
      });
      answer.catch(() => kept.delete(key));
      kept.set(key, answer);
    }
    return kept.get(key);
  };
}

// One widget: its state (as the page's), the ctx the page's views take, and its parts.
function widget(setup, post, root) {
  const state = {
    model: setup.model,
    trace: setup.trace,
    ids: setup.trace ? setup.trace.tokens.map((tok) => tok.id) : [],
    promptCount: setup.trace ? setup.trace.tokens.length : 0,
    position: setup.position,
    layer: setup.layer,
    head: setup.head,
    step: setup.step,
    lnWhich: "ln1",
    sampling: { temperature: 1, top_k: 0, top_p: 1, min_p: 0, greedy: false },
    views: new Map(),
    vocab: new Map(),
  };
  if (setup.trace) {
    state.views.set(state.ids.length - 1, setup.trace.next);
    for (const [id, text] of Object.entries(setup.trace.vocab)) state.vocab.set(Number(id), text);
    for (const tok of setup.trace.tokens) state.vocab.set(tok.id, tok.text);
  }
  const parts = {};
  const tokenText = (id) => state.vocab.get(id) ?? `#${id}`;
  const promptTexts = (p) => state.ids.slice(0, p + 1).map((id, i) => state.trace?.tokens[i]?.text ?? tokenText(id));
  async function ensureView(position) {
    if (state.views.has(position)) return state.views.get(position);
    const data = await post("/api/final", { ids: state.ids, position });
    for (const [id, text] of Object.entries(data.vocab)) state.vocab.set(Number(id), text);
    state.views.set(position, data.logits);
    return data.logits;
  }
  const redraw = () => {
    for (const part of Object.values(parts)) part.draw();
  };
  // a control's new value (the layer, the head, which norm), then every part drawn again
  const set = (key) => (value) => {
    state[key] = value;
    redraw();
  };
  const ctx = {
    state,
    post,
    tokenText,
    promptTexts,
    openStep(key, extra = {}) {
      Object.assign(state, extra);
      state.step = key;
      redraw();
    },
    selectPosition(i) {
      if (i < 0 || i >= state.ids.length) return;
      state.position = i;
      redraw();
    },
    setLayer: set("layer"),
    setHead: set("head"),
    setLn: set("lnWhich"),
    currentPool: () => {
      const view = state.views.get(state.position);
      return view ? computePool(view, state.sampling) : null;
    },
    logitsView: () => state.views.get(state.position),
    samplingParams: () => state.sampling,
    ensureView,
  };
  return { state, ctx, parts, root };
}

// --- the parts --------------------------------------------------------------------------------

function factsPart({ state, root }) {
  const box = el("div", { class: "lmscope-facts", "data-testid": "facts" });
  root.append(box);
  return { draw: () => box.replaceChildren(...factSpans(state.model, "lmscope-fact")) };
}

function tokensPart({ state, ctx, root }) {
  const box = el("div", { class: "tokens", "data-testid": "tokens" });
  root.append(box);
  return {
    draw() {
      const chips = state.ids.map((id, i) =>
        el(
          "button",
          {
            class: `chip${i === state.position ? " sel" : ""}`,
            "data-testid": "token-chip",
            "data-position": i,
            "data-id": id,
            title: t("page.token-title", { p: i, id: String(id) }),
            onclick: () => ctx.selectPosition(i),
          },
          el("span", { class: "piece", "data-verbatim": "", text: visible(state.trace.tokens[i]?.text ?? ctx.tokenText(id)) }),
          el("span", { class: "id", text: id }),
        ),
      );
      box.replaceChildren(...groupChips(chips, state.trace.chars));
    },
  };
}

function flowPart({ state, ctx, root }) {
  const box = el("div", { class: "pipeline", "data-testid": "pipeline" });
  root.append(box);
  const hooks = { openStep: ctx.openStep, setLayer: ctx.setLayer, selectPosition: ctx.selectPosition, post: ctx.post };
  return { draw: () => renderFlow(box, state, hooks) };
}

function navPart({ state, ctx, root }) {
  const box = el("nav", { class: "steps lmscope-steps", "data-testid": "steps" });
  root.append(box);
  return {
    draw() {
      const keys = [...stepKeys(), ...INSIDE];
      box.replaceChildren(
        ...keys.map((key, i) =>
          el(
            "button",
            { class: key === state.step ? "active" : "", "data-step": key, onclick: () => ctx.openStep(key) },
            el("span", { class: "num", text: INSIDE.includes(key) ? "↗" : i + 1 }),
            INSIDE.includes(key) ? t(INSIDE_TITLES[key]) : stepText(key).title,
          ),
        ),
      );
    },
  };
}

function stepPart({ state, ctx, root }) {
  const box = el("section", { class: "step panel", "data-testid": "step" });
  root.append(box);
  let seq = 0;
  return {
    async draw() {
      const mine = ++seq;
      if (INSIDE.includes(state.step)) {
        await renderView(box, state.step, ctx); // the page's "look inside" views: lens, ablation
        return;
      }
      // the sampling steps read the position's logits, which the kernel sends once
      await ctx.ensureView(state.position).catch(() => null);
      if (mine === seq) await renderStep(box, state.step, ctx);
    },
  };
}

// Attention as connections for a layer, a head and a query, with their controls.
function attentionPart({ state, ctx, root }, setup) {
  const controls = el("div", { class: "step-controls", "data-testid": "attention-controls" });
  const box = el("div", { class: "attention-box" });
  root.append(controls, box);
  return {
    draw() {
      controls.replaceChildren(
        setup.n_layer > 1 ? selectBox(t("page.layer"), setup.n_layer, state.layer, ctx.setLayer, "layer-select") : "",
        selectBox(t("page.head"), state.model.n_head, state.head, ctx.setHead, "head-select"),
        el("span", { class: "position-label", "data-testid": "position-label" }, `${t("page.position-n", { p: state.position })}${colon()}`, el("code", { text: `“${visible(ctx.tokenText(state.ids[state.position]))}”` })),
      );
      box.replaceChildren(attentionLines(ctx));
    },
  };
}

// The sampling panel: the position's next-token distribution after temperature, top-k, top-p
// and min-p, computed in the browser by the page's own sampling.js from the logits the kernel
// sent (exact while the pool stays among them, as on the page).
function samplingPart({ state, ctx, root }) {
  const s = state.sampling;
  const out = {};
  const bars = el("div", { class: "bars", "data-testid": "bars" });
  const sub = el("div", { class: "sub", "data-testid": "sampling-sub" });
  const pool = el("div", { class: "pool", "data-testid": "pool-size" });
  let draw = () => {};
  const slider = (key, attrs, word, shown) => {
    out[key] = el("output", {});
    const input = el("input", {
      type: "range",
      "data-testid": key.replace("_", "-"),
      value: s[key],
      ...attrs,
      oninput: (e) => {
        s[key] = Number(e.target.value);
        draw();
      },
    });
    const label = el("span", { class: "label" });
    return { key, node: el("label", { class: "control" }, label, input, out[key]), label, word, shown };
  };
  const controls = [
    slider("temperature", { min: 0.05, max: 2, step: 0.05 }, "page.temperature", (v) => v.toFixed(2)),
    slider("top_k", { min: 0, max: 50, step: 1 }, "page.top-k", (v) => (v <= 0 ? t("page.off") : String(v))),
    slider("top_p", { min: 0.01, max: 1, step: 0.01 }, "page.top-p", (v) => (v >= 1 ? t("page.off") : v.toFixed(2))),
    slider("min_p", { min: 0, max: 1, step: 0.01 }, "page.min-p", (v) => (v <= 0 ? t("page.off") : v.toFixed(2))),
  ];
  const panel = el("section", { class: "panel sampling", "data-testid": "sampling" }, el("h2", { text: t("page.sampling") }), sub, el("div", { class: "controls" }, controls.map((c) => c.node)), bars, pool);
  root.append(panel);
  draw = async () => {
    const position = state.position;
    const view = await ctx.ensureView(position);
    if (position !== state.position) return;
    sub.textContent = t("page.after", { p: position, tok: `“${visible(ctx.tokenText(state.ids[position]))}”` });
    for (const c of controls) {
      c.label.textContent = t(c.word);
      out[c.key].textContent = c.shown(s[c.key]);
    }
    const p = computePool(view, s);
    drawProbBars(bars, p, ctx.tokenText, { n: 15 });
    pool.textContent = poolText(p);
  };
  return { draw: () => draw() };
}

// A circuits experiment (issue 37): its title and what it shows, the Circuits page's own
// drawing of the kernel's answer (circuits_views.js), and what it cannot show. A click on the
// induction grid asks the kernel for that head's pattern, as the page asks its server.
const CIRCUITS = {
  induction: [inductionView, ["page.circuits.induction.title", "page.circuits.induction.shows", "page.circuits.induction.cannot"]],
  patch: [patchView, ["page.circuits.patch.title", "page.circuits.patch.shows", "page.circuits.patch.cannot"]],
  attribute: [attributeView, ["page.circuits.attribute.title", "page.circuits.attribute.shows", "page.circuits.attribute.cannot"]],
};

function circuitsPart({ ctx, root }, setup) {
  const [view, [title, shows, cannot]] = CIRCUITS[setup.view];
  const box = el("div", { class: "circuits-result", "data-testid": `${setup.view}-result` });
  const error = el("p", { class: "circuits-line error", "data-testid": "circuits-error", hidden: true });
  root.append(
    el("h3", { text: t(title) }),
    el("p", { class: "circuits-line muted", text: t(shows) }),
    error,
    box,
    el("p", { class: "circuits-limits" }, el("b", { text: t("page.circuits.cannot") }), " ", t(cannot)),
  );
  let result = setup.result;
  const draw = () => {
    hideTip();
    box.replaceChildren(view(result, onHead));
  };
  async function onHead(layer, head) {
    try {
      result = await ctx.post("/api/circuits/induction", { length: result.length, seed: result.seed, layer, head });
      error.hidden = true;
    } catch (err) {
      error.hidden = false;
      error.textContent = t("page.error-line", { message: err.message });
    }
    draw();
  }
  return { draw };
}

// A char-RNN unit over the text (lmscope.show.neurons): /rnn's own drawing (rnn_view.js) of the
// kernel's answer, with the page's layer, unit and kind controls; another unit is asked of the
// kernel, which reads it from the run it holds.
function neuronsPart({ ctx, root }, setup) {
  const m = setup.model;
  const unit = { view: setup.result, pinned: null };
  const chosen = { layer: unit.view.layer, unit: unit.view.unit, kind: unit.view.kind };
  const controls = el("div", { class: "step-controls rnn-controls", "data-testid": "neuron-controls" });
  const error = el("p", { class: "rnn-error", "data-testid": "neuron-error", hidden: true });
  const boxes = {
    note: el("div", { class: "rnn-note", "data-testid": "rnn-note", hidden: true }),
    title: el("h3", { "data-testid": "rnn-title" }),
    legendText: el("p", { class: "muted small-text" }),
    legend: el("div", { class: "rnn-legend", "aria-hidden": "true" }),
    colored: el("div", { class: "rnn-colored", "data-testid": "rnn-colored" }),
    gates: el("div", { "data-testid": "rnn-gates" }),
    readout: el("div", { class: "rnn-readout", "data-testid": "rnn-readout" }),
  };
  const gatesTitle = el("h4", {});
  const readoutTitle = el("h4", {});
  root.append(
    controls,
    error,
    boxes.note,
    el("section", { class: "panel" }, boxes.title, boxes.legendText, boxes.legend, boxes.colored),
    el("div", { class: "rnn-grid lmscope-neuron-grid" }, el("section", { class: "panel" }, gatesTitle, boxes.gates), el("section", { class: "panel" }, readoutTitle, boxes.readout)),
  );
  wireText(boxes, unit);
  async function ask(change) {
    Object.assign(chosen, change);
    try {
      unit.view = await ctx.post("/api/rnn/activations", { model: m.name, text: unit.view.text, ...chosen });
      unit.pinned = null;
      error.hidden = true;
    } catch (err) {
      error.hidden = false;
      error.textContent = t("page.error-line", { message: err.message });
    }
    draw();
  }
  const unitBox = el("input", {
    type: "number",
    min: 0,
    max: m.hidden - 1,
    value: chosen.unit,
    "data-testid": "rnn-unit",
    onchange: (e) => {
      const u = Number(e.target.value);
      if (Number.isInteger(u) && u >= 0 && u < m.hidden) ask({ unit: u });
      else e.target.value = chosen.unit;
    },
  });
  const draw = () => {
    controls.replaceChildren(
      m.layers > 1 ? selectBox(t("page.layer"), m.layers, chosen.layer, (layer) => ask({ layer }), "rnn-layer") : "",
      el("label", {}, el("span", { text: `${t("page.rnn.unit")} ` }), unitBox, el("span", { class: "muted", text: ` 0–${m.hidden - 1}` })),
      el(
        "label",
        {},
        el("span", { text: `${t("page.rnn.kind")} ` }),
        el("select", { "data-testid": "rnn-kind", onchange: (e) => ask({ kind: e.target.value }) }, ...m.kinds.map((k) => el("option", { value: k, text: t(KINDS[k]), selected: k === chosen.kind }))),
      ),
    );
    unitBox.value = chosen.unit;
    gatesTitle.textContent = t("page.rnn.gates");
    readoutTitle.textContent = t("page.rnn.readout");
    drawUnit(boxes, unit);
  };
  return { draw };
}

// Two models on one text (lmscope.show.compare): the page's compare view (compare.js) of the
// kernel's comparison.
function comparePart({ root }, setup) {
  const box = el("section", { class: "panel", "data-testid": "compare" });
  root.append(box);
  return { draw: () => box.replaceChildren(el("h3", { text: t("page.interpret.view-compare") }), ...compareRows(setup.result)) };
}

// the page's "look inside" views the explainer answers (compare needs a second model: lmscope.show.compare)
const INSIDE = ["lens", "ablation"];
const INSIDE_TITLES = { lens: "page.interpret.view-lens", ablation: "page.interpret.view-ablation" };

const VIEWS = {
  explainer: [factsPart, tokensPart, flowPart, navPart, stepPart, samplingPart],
  flow: [tokensPart, flowPart],
  step: [tokensPart, stepPart],
  attention: [tokensPart, attentionPart],
  sampling: [tokensPart, samplingPart],
  lens: [tokensPart, stepPart],
  ablation: [tokensPart, stepPart],
  induction: [factsPart, circuitsPart],
  patch: [factsPart, circuitsPart],
  attribute: [factsPart, circuitsPart],
  neurons: [neuronsPart],
  compare: [comparePart],
};

export function mount(host, model) {
  const setup = model.get("setup");
  useCatalogs(setup.catalogs, setup.lang);
  if (setup.model.n_head) setFacts(modelFacts(setup.model)); // a Transformer's (not a char-RNN's)
  setFamily(setup.model.family);
  setSteps(setup.steps);
  const shadow = host.attachShadow({ mode: "open" });
  const style = el("style", { text: model.get("styles") });
  const root = el("div", { class: `lmscope-widget view-${setup.view}`, "data-testid": "lmscope-widget", "data-view": setup.view, lang: setup.lang === "zh" ? "zh-CN" : setup.lang });
  shadow.append(style, root);
  const w = widget(setup, messenger(model), root);
  VIEWS[setup.view].forEach((make, i) => (w.parts[i] = make(w, setup)));
  for (const part of Object.values(w.parts)) part.draw();
  root.dataset.ready = "1";
  return () => shadow.replaceChildren();
}
