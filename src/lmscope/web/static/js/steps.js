// One renderer per explainer step. Each fetches what it shows (a layer, head or position of the
// server's cached trace) and draws it; every number shown is from the API.

import {
  barList,
  columnFormat,
  curveScatter,
  el,
  fmt,
  heatmap,
  histogram,
  lineChart,
  minus,
  pct,
  positionLabel,
  showTip,
  hideTip,
  strip,
  visible,
  colour,
  css,
  focusedControl,
  refocus,
} from "./draw.js";
import { stepInfo, stepKeys, stepText } from "./catalogue.js";
import { colon, paren, t } from "./catalog.js";
import { LN_WORDS, familyView } from "./modern.js";
import { familyExtras } from "./family_steps.js";
import { temperatureCurves } from "./sampling.js";
import { tourBar } from "./flow.js";
import { queryRowTable } from "./query_row.js";
import { groupChips, readableText, tokenizerNote } from "./chars.js";
import { attentionLines } from "./attention_lines.js";
import { neighboursSection } from "./neighbours.js";

const PALETTE = ["#7c3aed", "#dc2626", "#2563eb", "#059669", "#d97706", "#db2777", "#0891b2", "#4b5563"];

let renderSeq = 0;

// --- shared pieces ----------------------------------------------------------------------

function section(title, ...content) {
  return el("section", { class: "viz" }, title ? el("h4", { text: title }) : null, ...content);
}

function op(symbol) {
  return el("div", { class: "op", text: symbol });
}

function vec(label, v, extra = {}) {
  return strip(v.values ?? v, {
    label,
    meta: v.norm !== undefined ? t("page.vector-stats", { n: v.values.length, norm: fmt(v.norm, 4), mean: fmt(v.mean, 3), std: fmt(v.std, 3) }) : undefined,
    ...extra,
  });
}

function tokenLabel(ctx, position) {
  return visible(ctx.state.trace.tokens[position]?.text ?? ctx.tokenText(ctx.state.ids[position]));
}

function ids(ctx) {
  return ctx.state.ids;
}

export function selectBox(label, count, value, onChange, testid, name = (i) => String(i)) {
  return el(
    "label",
    { class: "select" },
    el("span", { text: label }),
    el(
      "select",
      { "data-testid": testid, onchange: (e) => onChange(Number(e.target.value)) },
      Array.from({ length: count }, (_, i) => el("option", { value: i, selected: i === value, text: name(i) })),
    ),
  );
}

function table(head, rows, attrs = {}) {
  return el(
    "table",
    { class: "data", ...attrs },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", { text: h })))),
    el(
      "tbody",
      {},
      rows.map((r) => el("tr", { class: r.class ?? "" }, (r.cells ?? r).map((c) => (c instanceof Node ? el("td", {}, c) : el("td", { text: c }))))),
    ),
  );
}

// --- the step frame ---------------------------------------------------------------------

export async function renderStep(container, key, ctx) {
  const seq = ++renderSeq;
  const { state } = ctx;
  const keys = stepKeys();
  const number = keys.indexOf(key) + 1;
  const info = stepInfo(key);
  const text = stepText(key);
  const controls = el("div", { class: "step-controls" });
  if (info.layer) {
    controls.append(selectBox(t("page.layer"), state.model.n_layer, state.layer, ctx.setLayer, "layer-select"));
  }
  if (info.head) {
    controls.append(selectBox(t("page.head"), state.model.n_head, state.head, ctx.setHead, "head-select"));
  }
  controls.append(
    el(
      "span",
      { class: "position-label", "data-testid": "position-label" },
      `${t("page.position-n", { p: state.position })}${colon()}`,
      el("code", { text: `“${tokenLabel(ctx, state.position)}”` }),
      el("span", { class: "hint", text: ` — ${t("page.click-position")}` }),
    ),
  );
  const body = el("div", { class: "step-body", "data-step": key });
  const probes = probeNames(state, key);
  // the tour's one control (flow.js), as the diagram's card shows it: the same buttons and state
  const nav = tourBar("tour", { openStep: ctx.openStep, current: () => key });
  const focus = focusedControl(container);
  container.replaceChildren(
    el(
      "header",
      {},
      el("h3", { "data-testid": "step-title" }, el("span", { class: "num", text: number }), text.title),
      nav,
    ),
    text.plain ? el("p", { class: "explain plain", "data-testid": "step-plain", text: text.plain }) : null,
    el("p", { class: "explain", "data-testid": "step-explain", text: text.body }),
    controls,
    body,
    probesNote(probes),
  );
  refocus(container, focus);
  body.classList.add("loading");
  try {
    // an architecture that does this step differently (RoPE, RMSNorm, ...) has its own view
    const render = familyView(state.model.lineage ?? state.model.family, key, RENDER[key]) ?? RENDER[key];
    const content = await render(ctx);
    const extras = await familyExtras(ctx, key); // Gemma 3, Qwen3, Phi-3, MoE: what they add
    if (seq !== renderSeq) return;
    body.classList.remove("loading");
    body.replaceChildren(...[content].flat(), ...extras);
    markNumbers(body);
  } catch (err) {
    if (seq !== renderSeq) return;
    body.classList.remove("loading");
    body.replaceChildren(el("div", { class: "error inline", "data-testid": "step-error", text: t("page.error-line", { message: err.message }) }));
  }
}

// A table cell that holds only a number, a size or a shape ("24.6176662", "450.0 KiB",
// "[5, 49152]"): on a phone its digits stay together (style.css), where a cell's words may
// break anywhere to fit the panel ("100" over "0" read as two numbers).
const NUMBER = /^[−\-+]?[\d\[(][\d.,\s\[\]()−\-+×→e]*(\s?(%|B|KiB|MiB|GiB))?$/u;

function markNumbers(root) {
  for (const td of root.querySelectorAll("table.data td")) {
    if (NUMBER.test(td.textContent.trim())) td.classList.add("num");
  }
}

// The probes behind a disclosure for programmers: what a probe is and how to read one.
function probesNote(probes) {
  if (!probes.length) return null;
  return el(
    "details",
    { class: "probes-box", "data-testid": "probes" },
    el("summary", { text: t("page.for-programmers") }),
    el("p", { class: "hint", text: t("page.probes-explained", { probe: probes[0] }) }),
    el("div", { class: "probes" }, `${t("page.probes")}${colon()}`, probes.map((p) => el("code", { text: p }))),
  );
}

function probeNames(state, key) {
  const names = (stepInfo(key)?.probes ?? []).map((p) => p.replace("{L}", state.layer));
  if (key !== "layernorm" || state.lnWhich === "ln1") return names;
  if (state.lnWhich === "ln2") return names.map((p) => p.replace("ln1", "ln2").replace("hook_resid_pre", "hook_resid_mid"));
  const last = state.model.n_layer - 1;
  return [`blocks.${last}.hook_resid_post`, "ln_final.hook_scale", "ln_final.hook_normalized", "ln_final.hook_out"];
}

// --- fetchers ---------------------------------------------------------------------------

const layerData = (ctx) => ctx.post("/api/layer", { ids: ids(ctx), layer: ctx.state.layer, position: ctx.state.position });
const attentionData = (ctx) =>
  ctx.post("/api/attention", { ids: ids(ctx), layer: ctx.state.layer, head: ctx.state.head, position: ctx.state.position });
const embeddingData = (ctx) => ctx.post("/api/embedding", { ids: ids(ctx), position: ctx.state.position });
const finalData = (ctx) => ctx.post("/api/final", { ids: ids(ctx), position: ctx.state.position });

// --- renderers --------------------------------------------------------------------------

function predictionBars(ctx, probs, tokenIds, n = 5) {
  return barList(
    tokenIds.slice(0, n).map((id, i) => ({ name: `“${visible(ctx.tokenText(id))}”`, value: probs[i] })),
    { colour: "#7c3aed", format: pct },
  );
}

function factsTable(m) {
  return table(
    [t("page.model-facts"), ""],
    [
      ["name", m.name],
      ["n_layer", m.n_layer],
      ["n_head", m.n_head],
      ["d_model", m.d_model],
      ["d_head", m.d_head],
      ["d_mlp", m.d_mlp],
      ["vocab_size", m.vocab_size.toLocaleString("en-US")],
      ["n_ctx", m.n_ctx.toLocaleString("en-US")],
      ["n_params", m.n_params.toLocaleString("en-US")],
      ["activation", m.activation],
      ["tokenizer", m.tokenizer ?? t("page.no-tokenizer")],
    ].map(([field, value]) => [el("code", { text: field }), m.tokenizer || field !== "tokenizer" ? el("span", { "data-verbatim": "", text: String(value) }) : value]),
    { "data-testid": "model-facts-table" },
  );
}

const RENDER = {
  transformer(ctx) {
    const { state } = ctx;
    const p = state.trace.predictions[state.position];
    return [
      section(
        t("page.predicted-next"),
        el(
          "div",
          { class: "big-prediction" },
          el("span", { class: "ctx", "data-verbatim": "", text: readableText(state.trace.tokens, state.trace.chars, state.position).slice(-80) }),
          el("span", { class: "arrow", text: " → " }),
          el("span", { class: "next", "data-verbatim": "", text: visible(ctx.tokenText(p.top_ids[0])) }),
          el("span", { class: "p", text: ` ${pct(p.top_probs[0])}` }),
        ),
        predictionBars(ctx, p.top_probs, p.top_ids),
      ),
      section("", factsTable(state.model)),
    ];
  },

  "how-it-works"(ctx) {
    const { state } = ctx;
    const rows = state.trace.predictions.map((p, i) => {
      const next = state.ids[i + 1];
      return {
        class: i === state.position ? "sel" : "",
        cells: [
          i,
          `“${tokenLabel(ctx, i)}”`,
          `“${visible(ctx.tokenText(p.top_ids[0]))}” ${pct(p.top_probs[0])}`,
          next === undefined ? t("page.no-next") : `“${visible(ctx.tokenText(next))}” ${pct(p.next_prob)}`,
        ],
      };
    });
    const tbl = table([t("page.position"), t("page.token"), t("page.top-prediction"), t("page.next-prob")], rows);
    tbl.querySelectorAll("tbody tr").forEach((tr, i) => tr.addEventListener("click", () => ctx.selectPosition(i)));
    return [section(t("page.loop", { n: state.model.n_layer })), el("div", { class: "scroll" }, tbl)];
  },

  architecture(ctx) {
    const { state } = ctx;
    const m = state.model;
    const T = state.ids.length;
    // the shapes only: the residual stream's size through the blocks is step 7's picture
    return [
      section(
        t("page.shapes"),
        table(
          [t("page.embedding"), t("page.blocks-n", { n: m.n_layer }), t("page.final-ln"), t("page.logits"), t("page.probabilities")],
          [[`[${T}, ${m.d_model}]`, `[${T}, ${m.d_model}] → [${T}, ${m.d_model}]`, `[${T}, ${m.d_model}]`, `[${T}, ${m.vocab_size}]`, `[${m.vocab_size}]`]],
        ),
      ),
    ];
  },

  async embedding(ctx) {
    const d = await embeddingData(ctx);
    return section(
      `${t("page.position-n", { p: d.position })}${colon()}“${visible(d.token.text)}”${paren(`id ${d.token.id}`)}`,
      vec(t("page.token-emb", { id: d.token.id }), d.token_embedding, { testid: "embedding-strip" }),
      // a model without learned positions (rotary ones act inside attention) adds nothing here
      d.position_embedding && op("+"),
      d.position_embedding && vec(t("page.pos-emb", { p: d.position }), d.position_embedding),
      op("="),
      vec(t("page.sum"), d.sum),
      el("p", { class: "hint", text: [`W_E ${d.embedding_matrix.join(" × ")}`, d.position_matrix && `W_P ${d.position_matrix.join(" × ")}`, t("page.hover-hint")].filter(Boolean).join(" · ") }),
      neighboursSection(ctx),
    );
  },

  async "token-embedding"(ctx) {
    const { state } = ctx;
    const [tok, emb] = await Promise.all([
      ctx.post("/api/tokenizer", { ids: ids(ctx), position: state.position }),
      embeddingData(ctx),
    ]);
    const chips = el(
      "div",
      { class: "mini-chips" },
      groupChips(
        state.trace.tokens.map((x) =>
          el(
            "button",
            { class: `chip small${x.position === state.position ? " sel" : ""}`, "data-position": x.position, onclick: () => ctx.selectPosition(x.position) },
            el("span", { class: "piece", "data-verbatim": "", text: visible(x.text) }),
            el("span", { class: "id", text: x.id }),
          ),
        ),
        state.trace.chars,
      ),
    );
    const merges = tok.merges.length
      ? el(
          "ol",
          { class: "merges", "data-testid": "merges" },
          tok.merges.map((m) =>
            el(
              "li",
              {},
              el("code", { text: visible(m.left) }),
              " + ",
              el("code", { text: visible(m.right) }),
              " → ",
              el("code", { class: "res", text: visible(m.result) }),
              el("span", { class: "rank", text: ` ${t("page.rank-n", { r: String(m.rank) })}` }),
            ),
          ),
        )
      : el("p", { class: "hint", text: tok.note ?? t("page.no-merges") });
    // a character tokenizer merges nothing: say which character the token is instead
    const vocab = state.model.vocab_size.toLocaleString("en-US");
    const built =
      state.model.tokenizer_kind === "chars"
        ? section(
            t("page.char-token", { tok: visible(tok.token.text), id: tok.token.id }),
            el("p", { class: "hint", text: t("page.char-token-hint", { id: tok.token.id, vocab }) }),
          )
        : section(
            `${t("page.merges")}${colon()}“${visible(tok.token.text)}”${paren(`id ${tok.token.id}`)}`,
            tok.pretoken !== null ? el("p", { class: "hint" }, `${t("page.pretoken")}${colon()}`, el("code", { text: visible(tok.pretoken) })) : null,
            merges,
            tok.note && tok.merges.length ? el("p", { class: "hint", text: tok.note }) : null,
          );
    // the token's id picks its row of W_E: named here, drawn in the next step (embedding)
    return [
      section("", chips),
      ...tokenizerNote(state.model.tokenizer_kind, state.trace.chars),
      built,
      el("p", { class: "hint", "data-testid": "token-row", text: `${t("page.token-emb", { id: tok.token.id })} — W_E ${emb.embedding_matrix.join(" × ")}` }),
    ];
  },

  async "positional-encoding"(ctx) {
    const d = await embeddingData(ctx);
    const cos = d.position_cosine_previous;
    return [
      d.position_embedding && section("", vec(t("page.pos-emb", { p: d.position }), d.position_embedding)),
      cos.length
        ? lineChart(
            cos.map((_, i) => i + 1),
            [{ name: t("page.cos-series"), values: cos, colour: "#0891b2" }],
            { title: t("page.cos-prev"), marker: d.position, xLabel: "p", points: cos.length <= 64 },
          )
        : null,
    ];
  },

  blocks(ctx) {
    const { state } = ctx;
    const norms = state.trace.resid_norms.map((row) => row[state.position]);
    const items = [];
    for (let l = 0; l < state.model.n_layer; l++) {
      items.push({
        name: t("page.block-n", { l }),
        value: norms[l + 1],
        active: l === state.layer,
        title: `${t("page.resid-in")} ${fmt(norms[l], 5)} → ${t("page.resid-out")} ${fmt(norms[l + 1], 5)}`,
        onClick: () => ctx.setLayer(l),
      });
    }
    return [
      section(`|${t("page.resid-out")}| · ${t("page.embedding")}${colon()}${fmt(norms[0], 5)}`, barList(items)),
      lineChart(
        norms.map((_, i) => i),
        [{ name: "|x|", values: norms, colour: "#7c3aed" }],
        {
          title: t("page.resid-norm-chart"),
          points: true,
          marker: state.layer + 1,
          xStart: t("page.embedding"),
          xEnd: t("page.block-n", { l: state.model.n_layer - 1 }),
        },
      ),
    ];
  },

  async "self-attention"(ctx) {
    const { state } = ctx;
    const [a, layer] = await Promise.all([attentionData(ctx), layerData(ctx)]);
    const labels = windowLabels(ctx, a);
    const row = a.row.pattern;
    const order = row.map((w, j) => [w ?? 0, j]).sort((x, y) => y[0] - x[0]).slice(0, 5);
    return [
      attentionLines(ctx),
      el(
        "div",
        { class: "attn-layout" },
        heatmap(a.pattern, {
          title: `${t("page.softmax-scores")} · L${a.layer} H${a.head} · ${t("page.window", { a: a.start, b: a.start + a.size - 1 })}`,
          kind: "sequential",
          scale: 1,
          rowLabels: labels,
          highlightRow: state.position - a.start,
          describe: describer(ctx, a),
          testid: "attention-matrix",
          data: { stage: "pattern", start: a.start, size: a.size, layer: a.layer, head: a.head },
          onClick: (r) => ctx.selectPosition(a.start + r),
        }),
        headsGrid(ctx, a),
      ),
      section(
        t("page.attends-to", { p: state.position }),
        barList(order.map(([w, j]) => ({ name: `${j}${colon()}“${tokenLabel(ctx, j)}”`, value: w })), { colour: "#4c1d95" }),
      ),
      section("", vec(t("page.attn-out"), layer.attn_out)),
    ];
  },

  async qkv(ctx) {
    const { state } = ctx;
    const [layer, a] = await Promise.all([layerData(ctx), attentionData(ctx)]);
    const h = state.head;
    const dh = state.model.d_head;
    // with grouped-query attention k and v have fewer heads than q: query head h reads kv head
    // `kv`, and the keys and values shown are that head's, so they are named by it
    const nKv = state.model.n_kv_head ?? state.model.n_head;
    const kv = Math.floor((h * nKv) / state.model.n_head);
    const shared = nKv < state.model.n_head;
    const groups = (id) => ({ groups: dh, indexLabel: (i) => t(id, { h: Math.floor(i / dh), i: i % dh }) });
    const kvGroups = groups(shared ? "page.kv-head-index" : "page.head-index");
    const span = { a: a.start, b: a.start + a.size - 1, h, k: kv };
    const labels = windowLabels(ctx, a);
    const rowHeight = a.size <= 24 ? 12 : undefined; // rows tall enough to label each position
    return [
      section("", vec(`${t("page.ln-output")}${paren("ln1")} → ${t("page.qkv-weights")}`, layer.ln1.output)),
      section(
        t(shared ? "page.qkv-all-gqa" : "page.qkv-all", { n_head: state.model.n_head, n_kv: nKv, d_head: dh }),
        strip(layer.q.flat(), { label: `${t("page.q-vec")}${paren(`${t("page.head-n", { h: h })}${colon()}[${h * dh}, ${(h + 1) * dh})`)}`, ...groups("page.head-index") }),
        strip(layer.k.flat(), { label: t("page.k-vec"), ...kvGroups }),
        strip(layer.v.flat(), { label: t("page.v-vec"), ...kvGroups }),
      ),
      el(
        "div",
        { class: "pair" },
        heatmap(a.k, { title: t(shared ? "page.k-window-kv" : "page.k-window", span), rowLabels: labels, size: 260, cellWidth: Math.max(2, Math.floor(260 / dh)), cellHeight: rowHeight, describe: (r, c) => `k[${a.start + r}][${c}]` }),
        heatmap(a.v, { title: t(shared ? "page.v-window-kv" : "page.v-window", span), rowLabels: labels, size: 260, cellWidth: Math.max(2, Math.floor(260 / dh)), cellHeight: rowHeight, describe: (r, c) => `v[${a.start + r}][${c}]` }),
      ),
    ];
  },

  async "multi-head"(ctx) {
    const { state } = ctx;
    const layer = await layerData(ctx);
    const dh = state.model.d_head;
    const heads = Array.from({ length: state.model.n_head }, (_, i) => `${t("page.head-n", { h: i })}`);
    const opts = (name) => ({
      title: `${name}: ${state.model.n_head} × ${dh}`,
      rowLabels: heads,
      highlightRow: state.head,
      size: 180,
      cellWidth: Math.max(2, Math.floor(180 / dh)),
      cellHeight: 14,
      describe: (r, c) => `${name} ${t("page.head-n", { h: r })} [${c}]`,
      onClick: (r) => ctx.setHead(r),
    });
    const norm = (rows) => rows.map((r) => Math.sqrt(r.reduce((s, x) => s + x * x, 0)));
    return [
      el("div", { class: "triple" }, heatmap(layer.q, opts("q")), heatmap(layer.k, opts("k")), heatmap(layer.v, opts("v"))),
      section(
        `|q| ${t("page.head")}`,
        barList(norm(layer.q).map((v, i) => ({ name: heads[i], value: v, active: i === state.head, onClick: () => ctx.setHead(i) }))),
      ),
    ];
  },

  async "masked-attention"(ctx) {
    const { state } = ctx;
    const a = await attentionData(ctx);
    const example = await maskedExample(ctx, a); // a row with masked positions, first
    const labels = windowLabels(ctx, a);
    const common = (stage, title, kind, scale) =>
      heatmap(a[stage], {
        title,
        kind,
        scale,
        size: 250,
        rowLabels: labels,
        highlightRow: state.position - a.start,
        describe: describer(ctx, a),
        testid: "attention-matrix",
        data: { stage, start: a.start, size: a.size, layer: a.layer, head: a.head },
      });
    return [
      el(
        "div",
        { class: "stages" },
        common("raw", t("page.raw-scores"), "diverging"),
        op("→"),
        common("scaled", `${t("page.scaled-scores")} = ${fmt(a.scale, 4)}`, "diverging"),
        op("→"),
        common("masked", t("page.masked-scores"), "diverging"),
        op("→"),
        common("pattern", t("page.softmax-scores"), "sequential", 1),
      ),
      example,
      section(
        t("page.query-row", { p: state.position }),
        queryRowTable(a, state.position, (j) => tokenLabel(ctx, j)),
      ),
    ];
  },

  async "attention-output"(ctx) {
    const { state } = ctx;
    const layer = await layerData(ctx);
    const dh = state.model.d_head;
    const heads = Array.from({ length: state.model.n_head }, (_, i) => `${t("page.head-n", { h: i })}`);
    return [
      heatmap(layer.z, {
        title: `${t("page.z-heads")}${paren(`${state.model.n_head} × ${dh}`)}`,
        rowLabels: heads,
        highlightRow: state.head,
        size: 420,
        cellWidth: Math.max(2, Math.floor(420 / dh)),
        cellHeight: 14,
        describe: (r, c) => `z ${t("page.head-n", { h: r })} [${c}]`,
        onClick: (r) => ctx.setHead(r),
      }),
      section("", strip(layer.z.flat(), { label: t("page.concat", { d: state.model.d_model }), groups: dh, indexLabel: (i) => `${t("page.head-n", { h: Math.floor(i / dh) })}, [${i % dh}]` })),
      section(t("page.head-results"), barList(layer.head_results.map((r, i) => ({ name: heads[i], value: r.norm, active: i === state.head, onClick: () => ctx.setHead(i) })))),
      section("", layer.attn_bias && strip(layer.attn_bias, { label: t("page.attn-bias") }), layer.attn_bias && op("→"), vec(t("page.attn-out"), layer.attn_out)),
    ];
  },

  async mlp(ctx) {
    const { state } = ctx;
    const layer = await layerData(ctx);
    const m = state.model;
    const act = curveOf(layer.activation_curve);
    return [
      section("", vec(t("page.mlp-in", { d: m.d_model }), layer.ln2.output), op("↓"), vec(t("page.mlp-pre", { d_mlp: m.d_mlp }), layer.mlp_pre)),
      el(
        "div",
        { class: "pair" },
        curveScatter(layer.mlp_pre.values, layer.mlp_post.values, act, {
          title: t("page.gelu-scatter", { act: layer.activation, n: layer.mlp_pre.values.length }),
        }),
        el(
          "div",
          {},
          histogram(layer.mlp_pre_stats.histogram, { title: `${t("page.hist-pre")} · ${t("page.frac-pos", { pct: pct(layer.mlp_pre_stats.fraction_positive) })}` }),
          histogram(layer.mlp_post_stats.histogram, { title: `${t("page.hist-post")} · ${t("page.frac-pos", { pct: pct(layer.mlp_post_stats.fraction_positive) })}` }),
        ),
      ),
      section("", vec(t("page.mlp-post", { d_mlp: m.d_mlp }), layer.mlp_post), op("↓"), vec(t("page.mlp-out", { d: m.d_model }), layer.mlp_out)),
    ];
  },

  async logits(ctx) {
    const { state } = ctx;
    const d = await finalData(ctx);
    const view = d.logits;
    const top = view.ids.slice(0, 15).map((id, i) => ({ name: `“${visible(d.vocab[id] ?? ctx.tokenText(id))}”`, value: view.logits[i] }));
    return [
      section(
        t("page.final-ln-title", { p: state.position }),
        vec(`${t("page.ln-input")}${paren(`blocks.${state.model.n_layer - 1}.hook_resid_post`)}`, d.ln_final.input),
        el("p", { class: "hint", text: t("page.mean-std", { mean: fmt(d.ln_final.mean, 5), std: fmt(d.ln_final.std, 5) }) }),
        vec(`${t("page.ln-output")}${paren("ln_final.hook_out")} · W_Eᵀ`, d.ln_final.output),
      ),
      el(
        "div",
        { class: "pair" },
        section(t("page.logits-top", { vocab: state.model.vocab_size.toLocaleString("en-US") }), barList(top, { colour: "#0f766e" })),
        histogram(d.logit_stats.histogram, {
          title: `${t("page.logits-hist", { vocab: state.model.vocab_size.toLocaleString("en-US") })} · ${t("page.mean-std", { mean: fmt(d.logit_stats.mean, 4), std: fmt(d.logit_stats.std, 4) })}`,
          colour: "#0f766e",
          width: 300,
        }),
      ),
    ];
  },

  probabilities(ctx) {
    const view = ctx.logitsView();
    if (!view) return el("p", { class: "hint", text: t("page.loading") });
    const max = view.logits[0];
    const logits = view.logits.slice(0, 20);
    const exps = logits.map((z) => Math.exp(z - max));
    const [logit, exp] = [columnFormat(logits, 6), columnFormat(exps, 5)];
    const rows = view.ids.slice(0, 20).map((id, i) => [
      i + 1,
      `“${visible(ctx.tokenText(id))}”`,
      logit(logits[i]),
      exp(exps[i]),
      pct(Math.exp(view.logits[i] - view.lse)),
    ]);
    const shown = view.logits.slice(0, 20).reduce((s, z) => s + Math.exp(z - view.lse), 0);
    rows.push({ class: "tail", cells: ["", t("page.others", { n: (view.ids.length - 20 + view.tail_count).toLocaleString("en-US") }), "", "", pct(Math.max(0, 1 - shown))] });
    return section(
      t("page.softmax-table", { vocab: ctx.state.model.vocab_size.toLocaleString("en-US"), lse: fmt(view.lse, 6) }),
      table(["#", t("page.token"), t("page.logit"), t("page.exp-col"), t("page.prob")], rows, { "data-testid": "softmax-table" }),
    );
  },

  temperature(ctx) {
    const view = ctx.logitsView();
    if (!view) return el("p", { class: "hint", text: t("page.loading") });
    const count = Math.min(6, view.ids.length);
    const curves = temperatureCurves(view, count);
    const series = Array.from({ length: count }, (_, i) => ({
      name: `“${visible(ctx.tokenText(view.ids[i]))}”`.slice(0, 16),
      values: curves.map((c) => c[i]),
      colour: PALETTE[i],
    }));
    const pool = ctx.currentPool();
    const T = ctx.samplingParams().temperature;
    const one = T === 1; // a second column would repeat the first
    const rows = pool.rows.slice(0, 8).map((r) => {
      const cells = [`“${visible(ctx.tokenText(r.id))}”`, pct(Math.exp(r.logit - view.lse))];
      return one ? cells : [...cells, pct(r.prob)];
    });
    const head = [t("page.token"), t("page.at-t1"), ...(one ? [] : [t("page.at-t", { t: T.toFixed(2) })])];
    return [
      lineChart(view.temperatures, series, { title: t("page.temp-curve"), marker: T, xLabel: "T", ymin: 0 }),
      table(head, rows, { "data-testid": "temperature-table" }),
      one ? el("p", { class: "hint", "data-testid": "temperature-hint", text: t("page.temp-hint") }) : null,
    ].filter(Boolean);
  },

  sampling(ctx) {
    const pool = ctx.currentPool();
    if (!pool) return el("p", { class: "hint", text: t("page.loading") });
    const s = pool.stages;
    const stages = pool.greedy
      ? [[t("page.stage-vocab"), s.vocab], [t("page.stage-greedy"), 1]]
      : [[t("page.stage-vocab"), s.vocab], [t("page.stage-top-k"), s.top_k], [t("page.stage-top-p"), s.top_p], [t("page.stage-min-p"), s.min_p]];
    const max = Math.log(s.vocab + 1);
    const funnel = el(
      "div",
      { class: "funnel", "data-testid": "funnel" },
      stages.map(([name, n]) =>
        el(
          "div",
          { class: "stage" },
          el("span", { class: "name", text: name }),
          el("span", { class: "track" }, el("span", { class: "fill", style: { width: `${(Math.log(n + 1) / max) * 100}%` } })),
          el("span", { class: "count", text: n.toLocaleString("en-US") }),
        ),
      ),
    );
    const kept = pool.rows.filter((r) => r.survives).slice(0, 12);
    return [
      section(t("page.stages"), funnel),
      section(
        t("page.pool", { n: pool.poolSize.toLocaleString("en-US"), vocab: s.vocab.toLocaleString("en-US") }),
        barList(kept.map((r) => ({ name: `“${visible(ctx.tokenText(r.id))}”`, value: r.poolProb })), { colour: "#7c3aed", format: pct }),
      ),
    ];
  },

  async residual(ctx) {
    const layer = await layerData(ctx);
    const diff = (a, b, c) => Math.max(...a.values.map((x, i) => Math.abs(x + b.values[i] - c.values[i])));
    return [
      section(
        t("page.residual-formula", { ln: t("page.modern.ln-short"), diff: fmt(diff(layer.resid_pre, layer.attn_out, layer.resid_mid), 2) }),
        vec(t("page.resid-pre"), layer.resid_pre),
        op("+"),
        vec(t("page.attn-out-short"), layer.attn_out),
        op("="),
        vec(t("page.resid-mid"), layer.resid_mid),
      ),
      section(
        t("page.residual-formula-mlp", { ln: t("page.modern.ln-short"), diff: fmt(diff(layer.resid_mid, layer.mlp_out, layer.resid_post), 2) }),
        op("+"),
        vec(t("page.mlp-out-short"), layer.mlp_out),
        op("="),
        vec(t("page.resid-post"), layer.resid_post),
      ),
    ];
  },

  async layernorm(ctx) {
    const { state } = ctx;
    const which = state.lnWhich;
    const ln = which === "final" ? (await finalData(ctx)).ln_final : (await layerData(ctx))[which];
    const picker = el(
      "div",
      { class: "segmented", "data-testid": "ln-select" },
      ["ln1", "ln2", "final"].map((w) =>
        el("button", { class: w === which ? "active" : "", text: t(LN_WORDS[w]), onclick: () => ctx.setLn(w) }),
      ),
    );
    return [
      picker,
      section(
        "",
        vec(t("page.ln-input"), ln.input),
        el("p", { class: "formula", text: t("page.ln-formula", { mean: fmt(ln.mean, 6), eps: minus(String(ln.eps)), std: fmt(ln.std, 6) }) }),
        vec(t("page.normalized"), ln.normalized),
        op("× γ + β"),
        strip(ln.gamma, { label: t("page.gamma"), centre: 1 }),
        ln.beta && strip(ln.beta, { label: t("page.beta") }),  // RMSNorm has no β
        op("="),
        vec(t("page.ln-output"), ln.output),
      ),
    ];
  },

  async dropout(ctx) {
    const layer = await layerData(ctx);
    const d = layer.dropout;
    const n = d.after.length;
    const scale = Math.max(...d.after.map(Math.abs), 1e-12);
    return [
      el("p", { class: "hint", text: t("page.model-rate", { r: d.model_rate }) }),
      // one colour scale for all three, so the 1/(1 - p) scaling is visible
      section(
        "",
        vec(t("page.drop-before"), layer.attn_out, { scale }),
        strip(layer.attn_out.values, { label: t("page.drop-mask", { p: d.example_rate, z: d.zeroed.length, n }), marks: d.zeroed, scale }),
        strip(d.after, { label: t("page.drop-after"), scale }),
      ),
    ];
  },
};

// The activation function as the server sampled it (its own function over this position's
// range), read between the points.
function curveOf({ x, y }) {
  return (v) => {
    if (v <= x[0]) return y[0];
    if (v >= x.at(-1)) return y.at(-1);
    let i = 1;
    while (x[i] < v) i += 1;
    return y[i - 1] + ((v - x[i - 1]) / (x[i] - x[i - 1])) * (y[i] - y[i - 1]);
  };
}

// --- attention helpers ------------------------------------------------------------------

// The last query sees every key, so its row has nothing masked: an earlier query's row is shown
// too, first, with the later positions the mask hides (issue 38).
async function maskedExample(ctx, a) {
  const { state } = ctx;
  const last = state.ids.length - 1;
  if (state.position !== last || last < 1) return null;
  const q = Math.floor(last / 2);
  const b = await ctx.post("/api/attention", { ids: ids(ctx), layer: a.layer, head: a.head, position: q });
  // the API's row stops at the query; the keys after it are the ones the mask hides
  const pad = (values) => values.concat(Array(last + 1 - values.length).fill(null));
  const row = Object.fromEntries(Object.entries(b.row).map(([stage, values]) => [stage, pad(values)]));
  const rows = queryRowTable({ ...b, row }, q, (j) => tokenLabel(ctx, j));
  // its own names: the selected query's table below keeps query-row and all-keys
  for (const node of [rows, ...rows.querySelectorAll("[data-testid]")]) {
    if (node.dataset.testid?.startsWith("query-row")) node.dataset.testid = node.dataset.testid.replace("query-row", "masked-example-row");
  }
  rows.querySelector("details.all-keys")?.classList.replace("all-keys", "all-keys-example");
  return el("section", { class: "viz", "data-testid": "masked-example" }, el("h4", { text: t("page.masked-example", { p: q, tok: tokenLabel(ctx, q), n: last - q }) }), rows);
}

function windowLabels(ctx, a) {
  return Array.from({ length: a.size }, (_, i) => positionLabel(a.start + i, tokenLabel(ctx, a.start + i)));
}

function describer(ctx, a) {
  return (r, c) => t("page.query-key-tip", { q: a.start + r, qt: tokenLabel(ctx, a.start + r), k: a.start + c, kt: tokenLabel(ctx, a.start + c) });
}

// Every head's pattern as a small thumbnail (bytes 0..255 from the server); click selects.
function headsGrid(ctx, a) {
  const size = a.size;
  const px = Math.max(1, Math.floor(72 / size));
  const grid = el("div", { class: "heads-grid", "data-testid": "heads-grid" });
  a.heads.forEach((b64, h) => {
    const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
    const canvas = el("canvas", { width: size * px, height: size * px });
    const g = canvas.getContext("2d");
    for (let r = 0; r < size; r++) {
      for (let c = 0; c < size; c++) {
        const masked = a.start + c > a.start + r;
        g.fillStyle = masked ? "#eceef1" : css(colour(bytes[r * size + c] / 255, 1, "sequential"));
        g.fillRect(c * px, r * px, px, px);
      }
    }
    const cell = el(
      "button",
      { class: `head-thumb${h === a.head ? " active" : ""}`, "data-head": h, onclick: () => ctx.setHead(h) },
      canvas,
      el("span", { text: `H${h}` }),
    );
    cell.addEventListener("mousemove", (e) => showTip(e, `${t("page.head-n", { h: h })}`));
    cell.addEventListener("mouseleave", hideTip);
    grid.append(cell);
  });
  return el("figure", { class: "heads" }, el("figcaption", { text: t("page.all-heads", { l: a.layer }) }), grid);
}
