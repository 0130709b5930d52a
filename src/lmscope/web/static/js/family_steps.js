// What a family built on the Llama recipe adds to a step (Gemma 3, Qwen3, Phi-3, a mixture of
// experts): POST /api/step's family_data, drawn under the step's own view. Each view opens with
// the line that says what GPT-2 and Llama do and what this model does instead, with its numbers
// (the same catalog messages as `lmscope explain`). GPT-2 and plain Llama models add nothing.

import { el, fmt, heatmap, strip } from "./draw.js";
import { colon, t } from "./catalog.js";

// the steps a family may add to (explain.family_views): others are not asked for
const KEYS = new Set(["embedding", "blocks", "layernorm", "qkv", "positional-encoding", "masked-attention", "mlp"]);

// each norm of a sandwich block: where it sits
const WHERE = {
  ln1: "report.family.where.ln1",
  ln1_post: "report.family.where.ln1_post",
  ln2: "report.family.where.ln2",
  ln2_post: "report.family.where.ln2_post",
};

function note(text) {
  return el("p", { class: "hint family-note", text });
}

function table(head, rows) {
  return el(
    "table",
    { class: "data" },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))),
    el("tbody", {}, rows.map((r) => el("tr", {}, r.map((c) => el("td", { text: String(c) }))))),
  );
}

function vector(label, v) {
  return strip(v.values, { label, meta: `‖·‖ ${fmt(v.norm, 4)}` });
}

const VIEWS = {
  "embed-scale": (d) => [
    note(t("report.family.embed-scale", { d_model: d.d_model, scale: fmt(d.scale, 4), before: fmt(d.stored_rms, 4), after: fmt(d.scaled_rms, 4) })),
    vector(t("report.family.stored-row"), d.stored),
    vector(t("report.family.scaled-row"), d.scaled),
  ],
  sandwich: (d) => [
    note(t("report.family.sandwich")),
    table(
      [t("report.family.norm"), t("report.family.where"), t("report.family.input-rms"), t("report.family.gain"), t("report.family.output-rms")],
      d.norms.map((n) => [n.which, t(WHERE[n.which]), fmt(n.input_rms, 4), `${fmt(n.gain_mean, 3)} [${fmt(n.gain_min, 3)}, ${fmt(n.gain_max, 3)}]`, fmt(n.output_rms, 4)]),
    ),
  ],
  "qk-norm": (d) => [
    note(
      t("report.family.qk-norm", {
        gain: d.gain,
        q_before: fmt(d.q.rms_before, 3),
        q_after: fmt(d.q.rms_after, 3),
        k_before: fmt(d.k.rms_before, 3),
        k_after: fmt(d.k.rms_after, 3),
        dot_before: fmt(d.dot_before, 3),
        dot_after: fmt(d.dot_after, 3),
      }),
    ),
    vector(t("report.family.q-before"), d.q.before),
    vector(t("report.family.q-after"), d.q.after),
    vector(t("report.family.k-before"), d.k.before),
    vector(t("report.family.k-after"), d.k.after),
    el("p", { class: "hint", text: t("report.family.heads-rms", { before: d.q_rms_by_head_before.map((x) => fmt(x, 2)).join(", "), after: d.q_rms_by_head_after.map((x) => fmt(x, 2)).join(", ") }) }),
  ],
  geglu: (d) => [
    note(t("report.family.geglu", { gap: fmt(d.max_gelu_silu_gap, 3) })),
    table(
      [t("report.explain.feature"), "gate", "GELU(gate)", "SiLU(gate)", "× up", "= post"],
      d.strongest.map((f) => [f.index, fmt(f.gate, 3), fmt(f.gelu_gate, 3), fmt(f.silu_gate, 3), fmt(f.up, 3), fmt(f.post, 3)]),
    ),
  ],
  "sliding-window": (d) => [
    note(
      d.local
        ? t("report.family.window-local", { layer: d.layer, query: d.query_position, window: d.window, first: d.first_key, hidden: d.hidden_by_window, outside: fmt(d.outside_weight, 2) })
        : t("report.family.window-global", { layer: d.layer, query: d.query_position }),
    ),
    el("p", {
      class: "hint",
      text: t("report.family.layers", {
        window: d.window,
        local_theta: d.rope_local_theta.toLocaleString("en-US"),
        local: d.local_layers.join(", ") || "—",
        global_theta: d.rope_global_theta.toLocaleString("en-US"),
        global: d.global_layers.join(", ") || "—",
      }),
    }),
    el("p", { class: "hint", text: t("page.family.mask", { start: d.window_start }) }),
    // the mask the model applied: 1 where the query may look, 0 where the window or the future
    // hides the key; rows are queries, columns keys, both from window_start; the last row is
    // the chosen query
    heatmap(
      d.allowed.map((row) => row.map((ok) => (ok ? 1 : 0))),
      {
        kind: "sequential",
        scale: 1,
        size: 220,
        rowLabels: d.allowed.map((_, r) => String(d.window_start + r)),
        highlightRow: d.allowed.length - 1,
        describe: (r, c) => t("page.family.mask-cell", { query: d.window_start + r, key: d.window_start + c }),
        readoutTestid: "window-readout",
      },
    ),
  ],
  fused: (d) => [
    note(t(d.matrix === "qkv_proj" ? "report.family.fused-qkv" : "report.family.fused-gate-up", { shape: `[${d.weight_shape.join(", ")}]` })),
    el(
      "ul",
      {},
      d.parts.map((p) => el("li", { text: t("report.family.fused-part", { name: p.name, start: p.rows[0], end: p.rows[1] - 1, probe: p.probe, error: p.max_error.toExponential(1) }) })),
    ),
  ],
  router: (d) => [
    note(t("report.family.router", { layer: d.layer, n: d.n_expert, k: d.top_k })),
    // tokens x experts: the router's probabilities over the prompt, a row per token (labelled
    // with its position and text), a column per expert, wide enough to see
    el("p", { class: "hint", text: `${t("report.family.probs")}${colon()}${t("page.family.router-axes", { last: d.n_expert - 1 })}` }),
    heatmap(
      d.tokens.map((tok) => tok.probs),
      {
        kind: "sequential",
        scale: 1,
        cellWidth: Math.max(12, Math.min(36, Math.floor(240 / d.n_expert))),
        cellHeight: 14,
        rowLabels: d.tokens.map((tok) => `${tok.position} ${JSON.stringify(tok.token)}`),
        describe: (r, c) => t("page.family.router-cell", { token: JSON.stringify(d.tokens[r].token), position: d.tokens[r].position, expert: c }),
        readoutTestid: "router-readout",
      },
    ),
    table(
      ["#", t("report.explain.token"), t("report.family.experts")],
      d.tokens.slice(-12).map((tok) => [tok.position, JSON.stringify(tok.token), tok.chosen.map((e, i) => `${e} (${fmt(tok.weights[i], 2)})`).join(", ")]),
    ),
    el("p", {
      class: "hint",
      text: t("report.family.spread", {
        n: Math.round(d.tokens_per_expert.reduce((a, b) => a + b, 0) / Math.max(d.top_k, 1)),
        counts: d.tokens_per_expert.map((n, e) => `#${e}: ${n}`).join(", "),
      }),
    }),
  ],
};

// The family's views of step `key` for the chosen layer, head and position ([] when none).
export async function familyExtras(ctx, key) {
  const lineage = ctx.state.model.lineage ?? [];
  if (!KEYS.has(key) || lineage.length < 2) return []; // GPT-2, Llama: nothing to add
  const { state } = ctx;
  const body = { ids: state.ids, key, layer: state.layer, head: state.head, position: state.position };
  const step = await ctx.post("/api/step", body);
  return (step.family_data ?? []).map((d) =>
    el("section", { class: "viz family-view", "data-testid": `family-${d.kind}` }, ...(VIEWS[d.kind]?.(d) ?? [])),
  );
}
