// The next-token bars and the model's facts line, drawn alike by the page (app.js) and the
// notebook's widget (lmscope/show/static/widget.js): one drawing of each, imported by both.

import { t } from "./catalog.js";
import { compact, el, fmt, grouped, pct, visible } from "./draw.js";

// The pool's first n rows as bars (the probability before the filters, → after them for a row
// that survives) and the rest's share, drawn into box. tokenText(id): a token's text;
// note(row, rank): a further line for a bar's tooltip (a byte token's part of a character).
export function drawProbBars(box, pool, tokenText, { n = 20, note = () => "" } = {}) {
  const rows = pool.rows.slice(0, n);
  const max = Math.max(...rows.map((r) => r.prob), 1e-12);
  box.replaceChildren(
    ...rows.map((row, rank) =>
      el(
        "div",
        {
          class: `prob-bar${row.survives ? " kept" : " out"}`,
          "data-testid": "prob-bar",
          "data-id": row.id,
          "data-prob": row.prob,
          "data-pool-prob": row.poolProb,
          "data-survives": row.survives ? "1" : "0",
          title: [t(row.survives ? "page.bar-title-kept" : "page.bar-title-filtered", { id: String(row.id), logit: fmt(row.logit, 6) }), note(row, rank)].filter(Boolean).join("\n"),
        },
        el("span", { class: "rank", text: rank + 1 }),
        el("span", { class: "tok", "data-verbatim": "", text: visible(tokenText(row.id)) }),
        el("span", { class: "track" }, el("span", { class: "fill", style: { width: `${(row.prob / max) * 100}%` } })),
        el("span", { class: "val", text: row.survives ? `${pct(row.prob)} → ${pct(row.poolProb)}` : pct(row.prob) }),
      ),
    ),
    el(
      "div",
      { class: "prob-bar tail" },
      el("span", { class: "others", text: t("page.others", { n: (pool.stages.vocab - rows.length).toLocaleString("en-US") }) }),
      el("span", { class: "val", text: pct(Math.max(0, 1 - rows.reduce((a, r) => a + r.prob, 0))) }),
    ),
  );
  // the value column fits its longest value (in the bars' own monospace digits)
  const longest = Math.max(8, ...[...box.querySelectorAll(".val")].map((v) => v.textContent.length));
  box.style.setProperty("--val-w", `${longest + 1}ch`);
  return rows;
}

// What the pool holds: "N of V tokens" (or "N+ …" where only the rows sent are known).
export function poolText(pool) {
  const vocab = pool.stages.vocab.toLocaleString("en-US");
  const shown = pool.countKnown ? t("page.pool", { n: pool.poolSize.toLocaleString("en-US"), vocab }) : t("page.pool-plus", { n: grouped(Math.min(pool.poolSize, pool.rows.length)), vocab });
  return shown + (pool.exact ? "" : ` ${t("page.approx")}`);
}

// The model's facts (name, layers, heads, width, vocabulary, context, parameters), one span
// each; a model loaded from a folder is named by its path's last part.
export function factSpans(m, cls = "fact") {
  const short = m.name.includes("/") && m.name.startsWith("/") ? m.name.split("/").filter(Boolean).at(-1) : m.name;
  const facts = [
    [short, ""],
    [m.n_layer, t("page.layers")],
    [m.n_head, t("page.heads")],
    [grouped(m.d_model), t("page.d-model")],
    [compact(m.vocab_size), t("page.vocab")],
    [grouped(m.n_ctx), t("page.context")],
    [compact(m.n_params), t("page.params")],
  ];
  return facts.map(([v, label]) => el("span", { class: cls }, el("b", { "data-verbatim": "", text: v }), label ? ` ${label}` : ""));
}
