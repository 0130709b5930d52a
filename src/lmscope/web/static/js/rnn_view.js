// One unit of a char-RNN over a text (the /api/rnn/activations answer), drawn into the boxes it
// is given: the coloured text, its legend, the unit's gates over time and the readout of one
// character (its values and the next characters predicted). /rnn (rnn.js) and the notebook's
// neuron widget (lmscope.show.neurons) both draw with this module. `state` holds the answer
// (state.view) and the character pinned by a click (state.pinned).

import { el, fmt, pct, svg } from "./draw.js";
import { t } from "./catalog.js";

const SIGMOID = new Set(["i", "f", "o", "r", "z"]);
const RED = [214, 39, 40];
const BLUE = [31, 119, 180];
const PAD = 0.1; // a gate chart's margin above 1 and below 0, in units of the gate (rnn.css)
const n0 = (n) => n.toLocaleString("en-US");

// What each kind of unit is called, by the letter the model's state uses.
export const KINDS = {
  h: "page.rnn.kind-h",
  c: "page.rnn.kind-c",
  i: "page.rnn.kind-i",
  f: "page.rnn.kind-f",
  g: "page.rnn.kind-g",
  o: "page.rnn.kind-o",
  r: "page.rnn.kind-r",
  z: "page.rnn.kind-z",
  n: "page.rnn.kind-n",
};


// --- colours (same mapping as lmscope.interpret.cell_views) -------------------------------

function shade(kind, v) {
  if (kind === "c") return Math.tanh(v);
  if (SIGMOID.has(kind)) return Math.max(-1, Math.min(1, 2 * v - 1));
  return Math.max(-1, Math.min(1, v));
}

function rgb(x) {
  const end = x >= 0 ? RED : BLUE;
  const a = Math.min(Math.abs(x), 1);
  const c = end.map((e) => Math.round(255 + (e - 255) * a));
  return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
}

export function shown(ch) {
  return ch === "\n" ? "↵" : ch === "\t" ? "→" : ch === " " ? "␣" : ch;
}

// Everything of the unit: boxes {note, title, legendText, legend, colored, gates, readout}.
export function drawUnit(boxes, state) {
  const v = state.view;
  boxes.note.hidden = !v.skipped.length;
  if (v.skipped.length) {
    const n = v.slots.filter((s) => s === null).length;
    boxes.note.textContent = t("page.rnn.skipped", { n, chars: v.skipped.map((c) => `“${shown(c)}”`).join(" ") });
  }
  boxes.title.textContent = t("page.rnn.title", { layer: v.layer, unit: v.unit, kind: t(KINDS[v.kind]) });
  const legendKey = v.kind === "c" ? "page.rnn.legend-c" : SIGMOID.has(v.kind) ? "page.rnn.legend-gate" : "page.rnn.legend-h";
  boxes.legendText.textContent = t(legendKey);
  renderLegend(boxes.legend, v.kind);
  renderColored(boxes.colored, state);
  renderGates(boxes, state);
  drawReadout(boxes, state, state.pinned);
}

// Hovering over a character reads it out; a click pins it (another click lets it go).
export function wireText(boxes, state) {
  const colored = boxes.colored;
  colored.addEventListener("mouseover", (e) => {
    const step = stepOf(e);
    if (step !== null) drawReadout(boxes, state, step);
  });
  colored.addEventListener("mouseleave", () => drawReadout(boxes, state, state.pinned));
  colored.addEventListener("click", (e) => {
    const step = stepOf(e);
    state.pinned = step === state.pinned ? null : step;
    colored.querySelectorAll(".pinned").forEach((n) => n.classList.remove("pinned"));
    if (state.pinned !== null) colored.querySelector(`[data-step="${state.pinned}"]`)?.classList.add("pinned");
    drawReadout(boxes, state, state.pinned);
  });
}

function renderLegend(box, kind) {
  const stops = [];
  for (let i = 0; i <= 10; i++) stops.push(rgb(-1 + i / 5));
  const ends = SIGMOID.has(kind) ? ["0", "0.5", "1"] : kind === "c" ? ["tanh(c) = −1", "0", "+1"] : ["−1", "0", "+1"];
  box.replaceChildren(
    el("span", { "data-verbatim": "", text: ends[0] }), // math: tanh(c) = −1
    el("span", { class: "ramp", style: { background: `linear-gradient(to right, ${stops.join(", ")})` } }),
    el("span", { text: ends[2] }),
  );
}

function renderColored(box, state) {
  const v = state.view;
  const nodes = [];
  for (let i = 0; i < v.text.length; i++) {
    const ch = v.text[i];
    const step = v.slots[i];
    if (step === null) {
      nodes.push(el("span", { class: "skipped", text: shown(ch), title: "skipped" }));
      continue;
    }
    const span = el("span", {
      class: step === state.pinned ? "ch pinned" : "ch",
      "data-step": step,
      text: ch === "\n" ? "↵" : ch,
      style: { background: rgb(shade(v.kind, v.values[step])) },
    });
    nodes.push(span);
    if (ch === "\n") nodes.push(el("br"));
  }
  box.replaceChildren(...nodes);
}

function stepOf(event) {
  const node = event.target.closest("[data-step]");
  return node ? Number(node.dataset.step) : null;
}

function renderGates(boxes, state) {
  const v = state.view;
  const box = boxes.gates;
  const names = Object.keys(v.gates);
  if (!names.length) {
    box.replaceChildren(el("p", { class: "muted", text: t("page.rnn.no-gates") }));
    return;
  }
  const n = v.values.length;
  const rows = names.map((g) => {
    const values = v.gates[g];
    const points = values.map((y, i) => `${(i + 0.5).toFixed(1)},${(1 - y).toFixed(4)}`).join(" ");
    // a margin of PAD above 1 and below 0, and a line at each, so a gate near 1 does not run
    // into the line of the gate above it near 0; the 0 and 1 marks sit level with those lines
    const chart = svg(
      "svg",
      { viewBox: `0 ${-PAD} ${n} ${1 + 2 * PAD}`, preserveAspectRatio: "none", class: "spark", "data-gate": g },
      svg("line", { x1: 0, x2: n, y1: 0, y2: 0, class: "edge edge-1" }),
      svg("line", { x1: 0, x2: n, y1: 0.5, y2: 0.5, class: "mid" }),
      svg("line", { x1: 0, x2: n, y1: 1, y2: 1, class: "edge edge-0" }),
      svg("polyline", { points, class: "trace" }),
      svg("line", { x1: -1, x2: -1, y1: -PAD, y2: 1 + PAD, class: "cursor" }),
    );
    chart.addEventListener("mousemove", (e) => {
      const box = chart.getBoundingClientRect();
      const step = Math.min(n - 1, Math.max(0, Math.floor(((e.clientX - box.left) / box.width) * n)));
      drawReadout(boxes, state, step);
    });
    const scale = el(
      "div",
      { class: "gate-scale", "aria-hidden": "true" },
      el("span", { "data-value": "1", text: "1", title: t("page.rnn.gate-open") }),
      el("span", { "data-value": "0", text: "0", title: t("page.rnn.gate-closed") }),
    );
    return el("div", { class: "gate-row" }, el("span", { class: "gate-name", text: t(KINDS[g]) }), scale, chart);
  });
  box.replaceChildren(...rows);
}

function moveCursor(gates, step) {
  gates.querySelectorAll("svg .cursor").forEach((line) => {
    const x = step === null ? -1 : step + 0.5;
    line.setAttribute("x1", x);
    line.setAttribute("x2", x);
  });
}

// The readout of the character at a step (null: the hint to hover).
export function drawReadout(boxes, state, step) {
  const v = state.view;
  const box = boxes.readout;
  moveCursor(boxes.gates, step);
  if (!v || step === null || step === undefined || step >= v.values.length) {
    box.replaceChildren(el("p", { class: "muted", text: t("page.rnn.hover-hint") }));
    return;
  }
  const index = v.slots.indexOf(step);
  const ch = v.text[index];
  const rows = [
    // the character's place in the text, counted from 1 (a step skips unknown characters)
    el("div", { class: "ro-head", "data-testid": "readout-char" }, t("page.rnn.after", { ch: shown(ch), i: n0(index + 1), n: n0(v.text.length) })),
    el(
      "div",
      { class: "ro-values" },
      el("span", { class: "ro-kind" }, `${v.kind} = `, el("b", { "data-testid": "readout-value", text: fmt(v.values[step], 4) })),
      ...Object.entries(v.gates).map(([g, values]) =>
        el("span", { class: "ro-kind" }, `${g} = `, el("b", { text: fmt(values[step], 3) })),
      ),
    ),
    el("div", { class: "ro-sub", text: t("page.rnn.next") }),
  ];
  const top = v.top[step];
  const best = top.length ? top[0].prob : 1;
  for (const p of top) {
    rows.push(
      el(
        "div",
        { class: "ro-pred", "data-testid": "readout-pred" },
        el("code", { text: `“${shown(p.char)}”` }),
        el("span", { class: "bar" }, el("span", { style: { width: `${(100 * p.prob) / Math.max(best, 1e-9)}%` } })),
        el("span", { class: "p", text: pct(p.prob) }),
      ),
    );
  }
  if (v.next_prob[step] !== null) rows.push(el("div", { class: "muted small-text", text: t("page.rnn.actual", { p: pct(v.next_prob[step]) }) }));
  box.replaceChildren(...rows);
}

