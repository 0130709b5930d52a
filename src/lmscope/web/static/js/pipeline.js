// The pipeline overview: tokens -> embedding -> N blocks -> final LayerNorm -> logits ->
// probabilities, as one SVG. The selected block opens up into its sublayers; every part opens
// its step. Under each block, the selected position's residual norm after it (real numbers).

import { fmt, hideTip, showTip, svg } from "./draw.js";
import { t } from "./i18n.js";

const ACTIVE = {
  "token-embedding": ["tokens"],
  embedding: ["embedding"],
  "positional-encoding": ["embedding"],
  blocks: ["blocks"],
  "self-attention": ["attn"],
  qkv: ["attn", "ln1"],
  "multi-head": ["attn"],
  "masked-attention": ["attn"],
  "attention-output": ["attn"],
  mlp: ["mlp"],
  residual: ["add1", "add2"],
  dropout: ["attn", "add1"],
  logits: ["final", "logits"],
  probabilities: ["probs"],
  temperature: ["probs"],
  sampling: ["probs"],
};

export function renderPipeline(container, state, { openStep, setLayer }) {
  const m = state.model;
  const width = Math.max(container.clientWidth || 1100, 760);
  const height = 118;
  const mid = 52;
  const active = new Set(ACTIVE[state.step] ?? []);
  if (state.step === "layernorm") active.add(state.lnWhich === "final" ? "final" : state.lnWhich);
  const everything = ["transformer", "how-it-works", "architecture"].includes(state.step);

  const arrow = 16;
  const fixed = { tokens: 78, embedding: 96, final: 74, logits: 66, probs: 104 };
  const expanded = 300;
  const fixedTotal = Object.values(fixed).reduce((a, b) => a + b, 0) + arrow * 5 + expanded + 12;
  const others = m.n_layer - 1;
  const collapsed = others ? Math.max(14, Math.min(70, (width - fixedTotal) / others - 4)) : 0;

  const root = svg("svg", { width, height, viewBox: `0 0 ${width} ${height}`, class: "pipeline-svg", role: "img" });
  let x = 4;
  // residual stream: one line through every block
  const stream = svg("line", { class: "stream", y1: mid, y2: mid, x1: 0, x2: 0 });
  root.append(stream);

  const box = (part, label, w, onClick, opts = {}) => {
    const on = everything || active.has(part) || (part === "blocks" && active.has("blocks"));
    const g = svg("g", { class: `part${on ? " on" : ""}${opts.cls ? ` ${opts.cls}` : ""}`, "data-part": part, tabindex: 0 });
    g.append(svg("rect", { x, y: mid - 22, width: w, height: 44, rx: 7 }));
    g.append(svg("text", { x: x + w / 2, y: mid + 4, "text-anchor": "middle" }, label));
    if (opts.sub) g.append(svg("text", { x: x + w / 2, y: mid + 36, "text-anchor": "middle", class: "sub" }, opts.sub));
    g.addEventListener("click", onClick);
    g.addEventListener("keydown", (e) => e.key === "Enter" && onClick());
    if (opts.tip) {
      g.addEventListener("mousemove", (e) => showTip(e, opts.tip));
      g.addEventListener("mouseleave", hideTip);
    }
    root.append(g);
    x += w;
  };
  const link = () => {
    root.append(svg("path", { d: `M${x + 2},${mid} L${x + arrow - 4},${mid}`, class: "arrow" }));
    root.append(svg("path", { d: `M${x + arrow - 8},${mid - 4} L${x + arrow - 3},${mid} L${x + arrow - 8},${mid + 4}`, class: "arrow-head" }));
    x += arrow;
  };

  const T = state.ids.length;
  box("tokens", `${t("tokens")}`, fixed.tokens, () => openStep("token-embedding"), { sub: `[${T}]` });
  link();
  box("embedding", t("embedding"), fixed.embedding, () => openStep("embedding"), { sub: `[${T}, ${m.d_model}]` });
  link();
  const streamStart = x;

  const norms = state.trace.resid_norms.map((row) => row[state.position]);
  const maxNorm = Math.max(...norms, 1e-9);
  for (let l = 0; l < m.n_layer; l++) {
    const isSel = l === state.layer;
    const left = x;
    if (isSel) {
      drawExpanded(root, x, mid, expanded, l, active, everything, openStep);
      x += expanded;
    } else {
      box(`block-${l}`, collapsed >= 54 ? `${t("block")} ${l}` : `${l}`, collapsed, () => setLayer(l), {
        cls: `block${active.has("blocks") ? " on" : ""}`,
        tip: `${t("block")} ${l}: |x| ${fmt(norms[l + 1], 4)}`,
      });
    }
    const w = x - left;
    const h = Math.max(2, (norms[l + 1] / maxNorm) * 18);
    root.append(svg("rect", { x: left + 2, y: height - 4 - h, width: Math.max(2, w - 4), height: h, class: "norm-bar" }));
    x += 4;
  }
  root.append(svg("text", { x: streamStart - 4, y: height - 5, "text-anchor": "end", class: "sub" }, "|x|"));
  stream.setAttribute("x1", streamStart);
  stream.setAttribute("x2", x);
  link();
  box("final", t("finalLn"), fixed.final, () => openStep("layernorm", { lnWhich: "final" }), { sub: "ln_final" });
  link();
  box("logits", t("logits"), fixed.logits, () => openStep("logits"), { sub: `[${m.vocab_size}]` });
  link();
  box("probs", t("probabilities"), fixed.probs, () => openStep("probabilities"), { sub: "softmax" });
  container.replaceChildren(root);
}

function drawExpanded(root, x0, mid, width, layer, active, everything, openStep) {
  const g = svg("g", { class: "expanded", "data-part": `block-${layer}` });
  g.append(svg("rect", { x: x0, y: mid - 34, width, height: 68, rx: 9, class: "frame" }));
  g.append(svg("text", { x: x0 + 8, y: mid - 22, class: "sub" }, `${t("block")} ${layer}`));
  const parts = [
    ["ln1", t("lnShort"), 36, "layernorm", { lnWhich: "ln1" }],
    ["attn", t("attention"), 78, "self-attention", {}],
    ["add1", "+", 26, "residual", {}],
    ["ln2", t("lnShort"), 36, "layernorm", { lnWhich: "ln2" }],
    ["mlp", "MLP", 60, "mlp", {}],
    ["add2", "+", 26, "residual", {}],
  ];
  const gap = (width - 16 - parts.reduce((s, p) => s + p[2], 0)) / (parts.length - 1);
  let x = x0 + 8;
  for (const [part, label, w, step, extra] of parts) {
    const on = everything || active.has(part) || active.has("blocks");
    const sub = svg("g", { class: `part inner${on ? " on" : ""}${part.startsWith("add") ? " add" : ""}`, "data-part": part, tabindex: 0 });
    const round = part.startsWith("add");
    sub.append(
      round
        ? svg("circle", { cx: x + w / 2, cy: mid + 4, r: 12 })
        : svg("rect", { x, y: mid - 12, width: w, height: 32, rx: 5 }),
    );
    sub.append(svg("text", { x: x + w / 2, y: mid + 9, "text-anchor": "middle" }, label));
    const go = () => openStep(step, extra);
    sub.addEventListener("click", go);
    sub.addEventListener("keydown", (e) => e.key === "Enter" && go());
    g.append(sub);
    x += w + gap;
  }
  root.append(g);
}
