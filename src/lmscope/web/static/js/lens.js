// Logit lens: a stages x positions grid from /api/lens. Each cell is the top next-token
// prediction read out of the residual stream at that depth, coloured by its probability.

import { colour, css, el, grouped, hideTip, pct, showTip, visible } from "./draw.js";
import { t } from "./catalog.js";

const SIZE = 12; // columns: fits the step panel at common widths; the window follows the selection

function stageLabel(stage, index) {
  return index === 0 ? t("page.interpret.lens-embed") : t("page.interpret.lens-block", { l: index - 1 });
}

// The server sends the lens's probabilities to 6 decimals: its 0 is a probability under
// 0.0001%, not none.
function prob(p) {
  return p === 0 ? `< ${pct(1e-6)}` : pct(p);
}

function tip(d, s, j) {
  const cell = d.cells[s][j];
  const tok = d.tokens[j];
  const lines = [
    `${t("page.position-n", { p: tok.position })} “${visible(tok.text)}” · ${stageLabel(d.stages[s], s)}`,
    t("page.interpret.lens-tip-top", { k: cell.top.length, stage: stageLabel(d.stages[s], s) }),
    ...cell.top.map((x, i) => `  ${i + 1}. “${visible(x.token)}” ${prob(x.prob)}`),
    t("page.interpret.lens-tip-final", { tok: visible(d.final[j].text), r: grouped(cell.final_rank + 1), p: prob(cell.final_prob) }),
  ];
  return lines.join("\n");
}

function cellNode(ctx, d, s, j) {
  const cell = d.cells[s][j];
  const top = cell.top[0];
  const position = d.positions[j];
  // sequential scale is sqrt-shaped: beyond ~0.3 the purple is dark enough for white text
  const dark = top.prob > 0.3;
  const node = el(
    "td",
    {
      class: `lens-cell${cell.final_rank === 0 ? " final" : ""}${position === ctx.state.position ? " sel" : ""}`,
      "data-testid": "lens-cell",
      "data-verbatim": "",
      "data-stage": s,
      "data-position": position,
      "data-top-id": top.id,
      "data-top-prob": top.prob,
      "data-final-rank": cell.final_rank,
      "data-final-prob": cell.final_prob,
      style: { background: css(colour(top.prob, 1, "sequential")), color: dark ? "#fff" : "" },
      onclick: () => ctx.selectPosition(position),
    },
    el("span", { text: visible(top.token) }),
  );
  node.addEventListener("mousemove", (e) => showTip(e, tip(d, s, j)));
  node.addEventListener("mouseleave", hideTip);
  return node;
}

export async function renderLens(ctx) {
  const { state } = ctx;
  const d = await ctx.post("/api/lens", { ids: state.ids, position: state.position, size: SIZE });
  const last = d.stages.length - 1;
  const sel = (p) => (p === state.position ? "sel" : "");
  const header = el(
    "tr",
    {},
    el("th", { class: "corner", text: t("page.interpret.lens-input") }),
    d.tokens.map((tok) =>
      el(
        "th",
        { class: `col ${sel(tok.position)}`, onclick: () => ctx.selectPosition(tok.position) },
        el("span", { class: "pos", text: tok.position }),
        el("span", { class: "tok", "data-verbatim": "", text: visible(tok.text) }),
      ),
    ),
  );
  const rows = d.cells.map((row, s) =>
    el(
      "tr",
      { class: s === last ? "output" : "" },
      el("th", { class: "stage", text: `${stageLabel(d.stages[s], s)}${s === last ? ` ${t("page.interpret.lens-output")}` : ""}` }),
      row.map((_, j) => cellNode(ctx, d, s, j)),
    ),
  );
  const actual = el(
    "tr",
    { class: "actual" },
    el("th", { class: "stage", text: t("page.interpret.lens-actual") }),
    d.next.map((n) => el("td", { "data-verbatim": "", text: n ? visible(n.text) : "—" })),
  );
  const end = d.start + d.positions.length - 1;
  const move = (to) => ctx.selectPosition(Math.max(0, Math.min(d.n_tokens - 1, to)));
  const nav = el(
    "div",
    { class: "lens-nav" },
    el("button", { "data-testid": "lens-earlier", disabled: d.start === 0, text: t("page.interpret.lens-earlier"), onclick: () => move(state.position - SIZE) }),
    el("span", { class: "hint", text: t("page.interpret.lens-window", { a: d.start, b: end, n: d.n_tokens }) }),
    el("button", { "data-testid": "lens-later", disabled: end >= d.n_tokens - 1, text: t("page.interpret.lens-later"), onclick: () => move(state.position + SIZE) }),
  );
  return [
    nav,
    el(
      "div",
      { class: "scroll lens-scroll" },
      el("table", { class: "lens", "data-testid": "lens-grid" }, el("thead", {}, header), el("tbody", {}, rows, actual)),
    ),
    el("p", { class: "hint", text: t("page.interpret.lens-legend") }),
  ];
}
