// The steps a Llama-family model does differently from GPT-2, drawn from its real numbers:
// rotary positions (RoPE), grouped-query attention, the SwiGLU MLP and RMSNorm. Each view
// reads one step's typed data from POST /api/step (what `lmscope explain --json` prints for
// it) and draws it; the page's other steps are the GPT-2 views (steps.js).

import { barList, binaryBytes, columnFormat, curveScatter, el, fmt, heatmap, hideTip, histogram, minus, showTip, strip, svg, visible } from "./draw.js";
import { listSep, paren, t } from "./catalog.js";

// The three LayerNorms (RMSNorms) a step can show, by what the state calls them.
export const LN_WORDS = { ln1: "page.ln1", ln2: "page.ln2", final: "page.lnf" };

const PALETTE = ["#7c3aed", "#0891b2", "#d97706", "#059669", "#dc2626", "#2563eb", "#db2777", "#4b5563"];

function section(title, ...content) {
  return el("section", { class: "viz" }, title ? el("h4", { text: title }) : null, ...content);
}

function op(symbol) {
  return el("div", { class: "op", text: symbol });
}

// An error size such as 2.9e−6: one decimal, the page's minus sign.
function exp1(x) {
  return minus(x.toExponential(1));
}

function hint(text, attrs = {}) {
  return el("p", { class: "hint", text, ...attrs });
}

function vec(label, v, extra = {}) {
  return strip(v.values, {
    label,
    meta: t("page.vector-stats", { n: v.values.length, norm: fmt(v.norm, 4), mean: fmt(v.mean, 3), std: fmt(v.std, 3) }),
    ...extra,
  });
}

function dataTable(head, rows, attrs = {}) {
  return el(
    "table",
    { class: "data", ...attrs },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", { class: r.class ?? "" }, r.cells.map((c) => el("td", { text: c }))))),
  );
}

// One step's typed data for the selected layer, head and position.
function stepData(ctx, key, extra = {}) {
  const s = ctx.state;
  return ctx.post("/api/step", { ids: s.ids, key, position: s.position, layer: s.layer, head: s.head, ...extra });
}

// --- RoPE ---------------------------------------------------------------------------------

// Radians per position of every pair, on a log scale: the fast pairs left, the slow right.
function frequencyChart(f, position) {
  const w = Math.min(560, Math.max(260, window.innerWidth - 80)); // a phone's panel, not scaled to it
  const h = 170;
  const pad = { l: 52, r: 10, t: 10, b: 26 };
  const logs = f.inv_freq.map((r) => Math.log10(r));
  const lo = Math.floor(Math.min(...logs));
  const hi = Math.max(0, Math.ceil(Math.max(...logs)));
  const n = logs.length;
  const bw = (w - pad.l - pad.r) / n;
  const Y = (v) => pad.t + ((hi - v) / (hi - lo || 1)) * (h - pad.t - pad.b);
  const root = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "chart", "data-testid": "rope-frequencies" });
  for (let e = lo; e <= hi; e++) {
    root.append(
      svg("line", { x1: pad.l, x2: w - pad.r, y1: Y(e), y2: Y(e), stroke: "#eceef1" }),
      svg("text", { x: pad.l - 6, y: Y(e) + 4, class: "axis", "text-anchor": "end" }, e === 0 ? "1" : `1e${e}`),
    );
  }
  f.inv_freq.forEach((r, i) => {
    const top = Y(logs[i]);
    const bar = svg("rect", {
      x: pad.l + i * bw + 1,
      y: top,
      width: Math.max(1, bw - 2),
      height: Math.max(1, Y(lo) - top),
      fill: PALETTE[0],
      "data-pair": i,
    });
    const tip = t("page.modern.rope-freq-tip", { i, j: i + n, r: fmt(r, 4), w: fmt(f.wavelength[i], 4), p: position, a: fmt(f.angle[i], 4) });
    bar.addEventListener("mousemove", (e) => showTip(e, tip));
    bar.addEventListener("mouseleave", hideTip);
    root.append(bar);
  });
  root.append(
    svg("text", { x: pad.l, y: h - 8, class: "axis" }, t("page.modern.rope-pair", { i: 0 })),
    svg("text", { x: w - pad.r, y: h - 8, class: "axis", "text-anchor": "end" }, t("page.modern.rope-pair", { i: n - 1 })),
  );
  return el("figure", { class: "line-chart" }, el("figcaption", { text: t("page.modern.rope-freq", { theta: f.theta }) }), root);
}

// Every pair (x_i, x_{i + d/2}) of a vector as an arrow on a small dial: before rotation in
// grey, after in colour, and the arc it turned through. Arrows are drawn at least half the
// radius long so that every pair's turn shows; the length above that follows the pair's size.
// Only the first 2 × angles.length dims rotate when a model's rotary factor is partial
// (Phi-4-mini): pair i is (x_i, x_{i + angles.length}); the dims after them get no dial.
function pairDials(before, after, angles, colour, testid) {
  const half = angles.length;
  const size = 42;
  const r = size / 2 - 3;
  let longest = 1e-12;
  for (let i = 0; i < half; i++) {
    // LongRoPE's attention factor lengthens the rotated pair: the longer of the two sets the scale
    longest = Math.max(longest, Math.hypot(before[i], before[i + half]), Math.hypot(after[i], after[i + half]));
  }
  const lengthOf = (x, y) => {
    const n = Math.hypot(x, y);
    return n > 0 ? (r * (0.5 + (0.5 * n) / longest)) / n : 0;
  };
  const box = el("div", { class: "rope-dials", "data-testid": testid, style: { display: "flex", flexWrap: "wrap", gap: "3px" } });
  for (let i = 0; i < half; i++) {
    const [bx, by, ax, ay] = [before[i], before[i + half], after[i], after[i + half]];
    const k = lengthOf(bx, by); // one scale for both arrows (RoPE keeps a pair's length)
    const c = size / 2;
    const dial = svg("svg", { width: size, height: size, viewBox: `0 0 ${size} ${size}`, "data-pair": i });
    const start = Math.atan2(by, bx);
    const turn = angles[i];
    const arcR = Math.max(4, Math.hypot(bx, by) * k * 0.6);
    const end = start + turn;
    const large = turn > Math.PI ? 1 : 0;
    dial.append(
      svg("circle", { cx: c, cy: c, r, fill: "#fafafa", stroke: "#e5e7eb" }),
      svg("path", {
        d: `M${c + arcR * Math.cos(start)},${c - arcR * Math.sin(start)} A${arcR},${arcR} 0 ${large} 0 ${c + arcR * Math.cos(end)},${c - arcR * Math.sin(end)}`,
        fill: "none",
        stroke: colour,
        "stroke-opacity": 0.35,
      }),
      svg("line", { x1: c, y1: c, x2: c + bx * k, y2: c - by * k, stroke: "#9ca3af", "stroke-width": 1.5 }),
      svg("line", { x1: c, y1: c, x2: c + ax * k, y2: c - ay * k, stroke: colour, "stroke-width": 2.2 }),
      svg("circle", { cx: c + ax * k, cy: c - ay * k, r: 2, fill: colour }),
      svg("circle", { cx: c, cy: c, r: 1.5, fill: "#6b7280" }),
    );
    const tip = t("page.modern.rope-dial-tip", { i, before: `(${fmt(bx, 4)}, ${fmt(by, 4)})`, after: `(${fmt(ax, 4)}, ${fmt(ay, 4)})`, a: fmt(turn, 4) });
    dial.addEventListener("mousemove", (e) => showTip(e, tip));
    dial.addEventListener("mouseleave", hideTip);
    box.append(dial);
  }
  return box;
}

function ropeCheck(c) {
  const row = (label, s, n) => ({
    cells: [n === 0 ? label : "", s.shift, s.query_at, s.key_at, s.distance, s.score.toFixed(7)],
  });
  const rows = [
    ...c.same_distance.map((s, n) => row(t("page.modern.same-distance"), s, n)),
    ...c.other_distance.map((s, n) => ({ ...row(t("page.modern.query-moved"), s, n), class: "tail" })),
  ];
  return section(
    t("page.modern.rope-check", { i: c.query_position, j: c.key_position }),
    hint(t("page.modern.rope-recorded", { i: c.query_position, j: c.key_position, s: c.recorded_score.toFixed(7) })),
    dataTable(["", t("page.modern.shift-col"), t("page.modern.query-at"), t("page.modern.key-at"), t("page.modern.distance-col"), t("page.modern.dot-col")], rows, { "data-testid": "rope-check" }),
    el("p", {
      class: "formula",
      "data-testid": "rope-verdict",
      text: t("page.modern.rope-verdict", { d: exp1(c.max_abs_difference), r: exp1(c.relative_difference) }),
    }),
  );
}

// What rotates and how fast where the model's RoPE is not the plain one (Phi-3.5, Phi-4-mini);
// the CLI says the same (explain_render._rope_notes).
function ropeNotes(f) {
  const notes = [];
  if (f.rotary_dims < f.d_head) {
    notes.push(hint(t("page.modern.rope-partial", { r: f.rotary_dims, d: f.d_head, rest: f.d_head - f.rotary_dims })));
  }
  if (f.factors) {
    const a = f.attention_factor;
    const values = { n: f.length, L: f.original_context, a: fmt(a, 4), a2: fmt(a * a, 4) };
    const id = f.factors === "long" ? "page.modern.rope-longrope-long" : "page.modern.rope-longrope-short";
    notes.push(hint(t(id, values), { "data-testid": "rope-longrope" }));
  }
  return notes;
}

async function rope(ctx) {
  const d = (await stepData(ctx, "positional-encoding")).data;
  const f = d.frequencies;
  return [
    hint(t("page.modern.rope-no-vector")),
    ...ropeNotes(f),
    frequencyChart(f, d.position),
    el(
      "div",
      { class: "pair" },
      section(t("page.modern.rope-dials-q", { h: d.head, p: d.position }), pairDials(d.q.before.values, d.q.after.values, f.angle, PALETTE[0], "rope-dials-q")),
      section(t("page.modern.rope-dials-k", { k: d.kv_head, p: d.position }), pairDials(d.k.before.values, d.k.after.values, f.angle, PALETTE[1], "rope-dials-k")),
    ),
    section(
      "",
      vec(t("page.modern.q-before", { h: d.head }), d.q.before, { testid: "rope-q-before" }),
      op("↻"),
      vec(t("page.modern.q-after"), d.q.after),
      vec(t("page.modern.k-before", { k: d.kv_head }), d.k.before),
      op("↻"),
      vec(t("page.modern.k-after"), d.k.after),
      hint(t("page.modern.rot-error", { e: exp1(d.rotation_max_error) })),
    ),
    ropeCheck(d.check),
  ];
}

// --- grouped-query attention ----------------------------------------------------------------

function groupDiagram(ctx, g) {
  const w = Math.min(560, Math.max(260, window.innerWidth - 80)); // a phone's panel, not scaled to it
  const qx = (i) => 20 + ((i + 0.5) * (w - 40)) / g.n_head;
  const kx = (i) => 20 + ((i + 0.5) * (w - 40)) / g.n_kv_head;
  const qw = Math.min(46, (w - 40) / g.n_head - 6);
  const kw = Math.min(90, (w - 40) / g.n_kv_head - 10);
  // a key/value head's |k| beside its name where the box has room, under it where not
  const below = kw < 90;
  const h = below ? 166 : 150;
  const qy = 30;
  const ky = 112;
  const root = svg("svg", { width: w, height: h, viewBox: `0 0 ${w} ${h}`, class: "chart", "data-testid": "gqa-diagram" });
  root.append(
    svg("text", { x: 4, y: 10, class: "axis" }, t("page.modern.gqa-query")),
    svg("text", { x: 4, y: h - 2, class: "axis" }, t("page.modern.gqa-kv")),
  );
  g.kv_head_of.forEach((k, q) => {
    const on = q === ctx.state.head;
    root.append(svg("line", { x1: qx(q), y1: qy + 12, x2: kx(k), y2: ky - 12, stroke: PALETTE[k % PALETTE.length], "stroke-width": on ? 3 : 1.5, opacity: on ? 1 : 0.55 }));
  });
  g.kv_head_of.forEach((k, q) => {
    const on = q === ctx.state.head;
    const node = svg("g", { "data-head": q, style: "cursor: pointer" });
    node.append(
      svg("rect", { x: qx(q) - qw / 2, y: qy - 12, width: qw, height: 24, rx: 5, fill: on ? PALETTE[k % PALETTE.length] : "#fff", stroke: PALETTE[k % PALETTE.length], "stroke-width": 1.5 }),
      svg("text", { x: qx(q), y: qy + 4, "text-anchor": "middle", "font-size": 12, fill: on ? "#fff" : "#111827" }, `q${q}`),
    );
    node.addEventListener("click", () => ctx.setHead(q));
    node.addEventListener("mousemove", (e) => showTip(e, t("page.modern.gqa-head", { h: q, k })));
    node.addEventListener("mouseleave", hideTip);
    root.append(node);
  });
  g.groups.forEach((grp) => {
    const k = grp.kv_head;
    const colour = PALETTE[k % PALETTE.length];
    const norm = `|k| ${fmt(g.k_norm_by_kv_head[k], 3)}`;
    root.append(
      svg("rect", { x: kx(k) - kw / 2, y: ky - 12, width: kw, height: 24, rx: 5, fill: colour, opacity: 0.9 }),
      svg("text", { x: kx(k), y: ky + 4, "text-anchor": "middle", "font-size": 12, fill: "#fff" }, below ? `kv${k}` : `kv${k} · ${norm}`),
    );
    if (below) root.append(svg("text", { x: kx(k), y: ky + 28, "text-anchor": "middle", "font-size": 12, fill: "#374151" }, norm));
  });
  return el("figure", { class: "line-chart" }, el("figcaption", { text: t("page.modern.gqa-title", { n_head: g.n_head, n_kv: g.n_kv_head, g: g.group_size }) }), root);
}

function cacheTable(ctx, g) {
  const c = g.kv_cache;
  const m = ctx.state.model;
  const row = (label, ours, full) => ({ cells: [label, binaryBytes(ours), binaryBytes(full), binaryBytes(full - ours)] });
  const table = dataTable(
    ["", t("page.modern.kv-this", { n_kv: g.n_kv_head }), t("page.modern.kv-full", { n_head: g.n_head }), "Δ"],
    [
      row(t("page.modern.kv-per-token"), c.per_token, c.per_token_full),
      row(t("page.modern.kv-prompt", { n: c.tokens }), c.at_prompt, c.at_prompt_full),
      row(t("page.modern.kv-context", { n: c.context.toLocaleString("en-US") }), c.at_context, c.at_context_full),
    ],
    { "data-testid": "kv-cache" },
  );
  const saved = g.n_kv_head < g.n_head
    ? t("page.modern.kv-saved", { pct: `${Math.round(c.saved_fraction * 100)}%`, l: m.n_layer, k: g.n_kv_head, d: m.d_head, b: c.bytes_per_value, bytes: binaryBytes(c.per_token) })
    : t("page.modern.kv-none");
  return section(
    t("page.modern.kv-cache", { dtype: c.dtype, b: c.bytes_per_value }),
    table,
    barList(
      [
        { name: t("page.modern.kv-bar-this", { n: g.n_kv_head }), value: c.at_context, colour: PALETTE[1] },
        { name: t("page.modern.kv-bar-full", { n: g.n_head }), value: c.at_context_full, colour: "#9ca3af" },
      ],
      { format: binaryBytes },
    ),
    hint(saved),
  );
}

async function gqa(ctx) {
  const { state } = ctx;
  const [step, layer] = await Promise.all([
    stepData(ctx, "multi-head"),
    ctx.post("/api/layer", { ids: state.ids, layer: state.layer, position: state.position }),
  ]);
  const g = step.data.grouping;
  const dh = state.model.d_head;
  const opts = (name, rows, highlight, click) => ({
    title: `${name}: ${rows.length} × ${dh}`,
    rowLabels: rows.map((_, i) => `${name}${i}`),
    highlightRow: highlight,
    size: 180,
    cellWidth: Math.max(2, Math.floor(180 / dh)),
    cellHeight: 14,
    describe: (r, c) => `${name} ${t("page.head-n", { h: r })} [${c}]`,
    onClick: click,
  });
  const kv = g.kv_head_of[state.head];
  return [
    groupDiagram(ctx, g),
    el(
      "div",
      { class: "triple" },
      heatmap(layer.q, opts("q", layer.q, state.head, (r) => ctx.setHead(r))),
      heatmap(layer.k, opts("k", layer.k, kv)),
      heatmap(layer.v, opts("v", layer.v, kv)),
    ),
    cacheTable(ctx, g),
  ];
}

// --- SwiGLU -----------------------------------------------------------------------------------

// The activation as the server sampled it, read between its points.
function curveFunction(curve) {
  const { x, y } = curve;
  return (v) => {
    if (v <= x[0]) return y[0];
    if (v >= x.at(-1)) return y.at(-1);
    let lo = 0;
    let hi = x.length - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (x[mid] <= v) lo = mid;
      else hi = mid;
    }
    const f = (v - x[lo]) / (x[hi] - x[lo]);
    return y[lo] + f * (y[hi] - y[lo]);
  };
}

async function swiglu(ctx) {
  const d = (await stepData(ctx, "mlp")).data;
  const m = ctx.state.model;
  // each column in one style (columnFormat)
  const columns = ["gate", "silu_gate", "up", "post"].map((k) => [k, columnFormat(d.strongest.map((f) => f[k]), 5)]);
  const rows = d.strongest.map((f) => ({ cells: [f.index, ...columns.map(([k, format]) => format(f[k]))] }));
  return [
    section("", vec(t("page.modern.sw-in", { d: m.d_model }), d.input), op("↓ W_gate, W_up")),
    el(
      "div",
      { class: "pair" },
      el(
        "div",
        { "data-testid": "silu-curve" },
        curveScatter(d.gate.values, d.silu_gate.values, curveFunction(d.curve), { title: t("page.modern.sw-curve", { n: d.gate.values.length }), width: 320, height: 220 }),
      ),
      el(
        "div",
        {},
        histogram(d.gate_stats.histogram, { title: t("page.modern.sw-hist-gate") }),
        histogram(d.post_stats.histogram, { title: t("page.modern.sw-hist-post") }),
      ),
    ),
    section(
      "",
      vec(t("page.modern.sw-gate", { d_mlp: d.d_mlp }), d.gate, { testid: "swiglu-gate" }),
      op(`${gateName(d)} ↓`),
      vec(t("page.modern.sw-silu"), d.silu_gate),
      op("×"),
      vec(t("page.modern.sw-up", { d_mlp: d.d_mlp }), d.up),
      op("="),
      vec(t("page.modern.sw-post", { d_mlp: d.d_mlp }), d.post),
      op("↓ W_down"),
      vec(t("page.modern.sw-out", { d: d.d_model }), d.output),
      hint(t("page.modern.sw-shapes", { g: d.W_gate.join(" × "), u: d.W_up.join(" × "), w: d.W_down.join(" × ") })),
      el("p", { class: "formula", "data-testid": "swiglu-checks", text: t("page.modern.sw-checks", { a: exp1(d.product_max_error), b: exp1(d.down_max_error) }) }),
    ),
    section(t("page.modern.sw-top"), dataTable([t("page.modern.feature"), "gate", `${gateName(d)}(gate)`, "up", `${gateName(d)}(gate) × up`], rows, { "data-testid": "swiglu-top" })),
  ];
}

// --- RMSNorm ----------------------------------------------------------------------------------

async function rms(ctx) {
  const which = ctx.state.lnWhich;
  const d = (await stepData(ctx, "layernorm", { norm: which })).data;
  const picker = el(
    "div",
    { class: "segmented", "data-testid": "ln-select" },
    ["ln1", "ln2", "final"].map((w) => el("button", { class: w === which ? "active" : "", text: t(LN_WORDS[w]), onclick: () => ctx.setLn(w) })),
  );
  return [
    picker,
    section(
      "",
      vec(t("page.modern.rms-input"), d.input, { testid: "rms-input" }),
      el("p", {
        class: "formula",
        "data-testid": "rms-formula",
        text: t("page.modern.rms-formula", { ms: fmt(d.mean_square, 6), eps: minus(String(d.eps)), rms: fmt(d.rms, 6), mean: fmt(d.input_mean, 4) }),
      }),
      vec(t("page.modern.rms-normalized", { r: fmt(d.normalized_rms, 4), m: fmt(d.normalized.mean, 4) }), d.normalized),
      op("×"),
      strip(d.gain, { label: t("page.modern.rms-gain") }),
      op("="),
      vec(t("page.modern.rms-output"), d.output),
      hint(t("page.modern.recompose", { e: exp1(d.recompose_max_error) })),
    ),
  ];
}

// --- labels the GPT-2 views get wrong for this family -------------------------------------------

async function logits(ctx) {
  const { state } = ctx;
  const [d, step] = await Promise.all([
    ctx.post("/api/final", { ids: state.ids, position: state.position }),
    stepData(ctx, "logits"),
  ]);
  const s = step.data;
  const view = d.logits;
  const top = view.ids.slice(0, 15).map((id, i) => ({ name: `“${visible(d.vocab[id] ?? ctx.tokenText(id))}”`, value: view.logits[i] }));
  const vocab = state.model.vocab_size.toLocaleString("en-US");
  return [
    section(
      t("page.modern.final-norm", { norm: s.norm, p: state.position }),
      vec(`${t("page.ln-input")}${paren(`blocks.${state.model.n_layer - 1}.hook_resid_post`)}`, d.ln_final.input),
      hint(t("page.modern.rms-hint", { rms: fmt(d.ln_final.rms, 5), mean: fmt(d.ln_final.input_mean, 5) })),
      vec(`${t("page.ln-output")}${paren("ln_final.hook_out")}`, d.ln_final.output),
      hint(s.tied ? t("page.modern.unembed-tied") : t("page.modern.unembed-head")),
    ),
    el(
      "div",
      { class: "pair" },
      section(t("page.logits-top", { vocab }), barList(top, { colour: "#0f766e" })),
      histogram(d.logit_stats.histogram, {
        title: `${t("page.logits-hist", { vocab })} · ${t("page.mean-std", { mean: fmt(d.logit_stats.mean, 4), std: fmt(d.logit_stats.std, 4) })}`,
        colour: "#0f766e",
        width: 300,
      }),
    ),
  ];
}

async function qkv(ctx, base) {
  const { state } = ctx;
  const m = state.model;
  const nKv = m.n_kv_head ?? m.n_head;
  const size = m.n_head / nKv;
  const k = Math.floor(state.head / size);
  const group = Array.from({ length: size }, (_, i) => k * size + i).filter((h) => h !== state.head);
  const content = await base(ctx);
  const note = hint(t("page.modern.qkv-shared", { n_head: m.n_head, n_kv: nKv, h: state.head, k, group: group.join(listSep()) || "—" }), { "data-testid": "qkv-shared" });
  return [note, ...[content].flat()];
}

// the gate's activation: SiLU (SwiGLU), or Gemma 3's tanh GELU (GeGLU), from the curve sent
function gateName(d) {
  return d.curve?.name?.startsWith("GELU") ? "GELU" : "SiLU";
}

// family -> step key -> view; a view gets the GPT-2 renderer of its step as `base`
const VIEWS = {
  llama: { "positional-encoding": rope, "multi-head": gqa, mlp: swiglu, layernorm: rms, logits, qkv },
};

// `family`: a name, or the model's lineage (nearest first: Gemma 3's view falls back to Llama's)
export function familyView(family, key, base) {
  const view = [family].flat().map((name) => VIEWS[name]?.[key]).find(Boolean);
  return view ? (ctx) => view(ctx, base) : null;
}
