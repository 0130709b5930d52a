// Compare: the served model (A) and one from the server's allowlist (B) on the current text,
// each unit (token, or character when their tokenizers differ) coloured by its loss, and B − A.

import { getJSON } from "./api.js";
import { colour, css, el, fmt, hideTip, showTip, visible } from "./draw.js";
import { t } from "./catalog.js";

let offered = null; // GET /api/compare/models, asked once per page
let chosen = null;

function shortName(name) {
  return name.startsWith("/") ? name.split("/").filter(Boolean).at(-1) : name;
}

function absMax(values) {
  return Math.max(...values.filter((v) => v !== null).map(Math.abs), 1e-9);
}

function tip(d, i) {
  const v = (x) => (x === null ? "—" : `${fmt(x, 5)} nats`);
  const lines = [`“${visible(d.pieces[i])}”`];
  if (d.loss_a[i] === null && d.loss_b[i] === null) lines.push(t("page.interpret.cmp-unscored"));
  lines.push(`A ${v(d.loss_a[i])}`, `B ${v(d.loss_b[i])}`, `B − A ${v(d.diff[i])}`);
  return lines.join("\n");
}

function row(d, key, title, scale) {
  const values = d[key];
  const spans = d.pieces.map((piece, i) => {
    const value = values[i];
    const span = el("span", {
      class: `unit${value === null ? " unscored" : ""}`,
      "data-i": i,
      "data-value": value === null ? "null" : String(value),
      style: { background: value === null ? "" : css(colour(value, scale, "diverging")) },
    });
    // newlines stay visible and still break the line
    piece.split("\n").forEach((part, j) => {
      if (j > 0) span.append(el("span", { class: "nl", text: "↵" }), el("br"));
      if (part) span.append(part);
    });
    span.addEventListener("mousemove", (e) => showTip(e, tip(d, i)));
    span.addEventListener("mouseleave", hideTip);
    return span;
  });
  return el(
    "section",
    { class: "viz" },
    el("h4", { text: title }),
    el("div", { class: "cmp-text", "data-testid": "compare-row", "data-row": key }, spans),
  );
}

export async function renderCompare(ctx, { controls, refresh }) {
  const { state } = ctx;
  offered ??= await getJSON("/api/compare/models");
  if (!offered.models.length) {
    return el("p", { class: "notice", "data-testid": "compare-none", text: t("page.interpret.cmp-none") });
  }
  if (!offered.models.includes(chosen)) chosen = offered.models[0];
  controls.append(
    el(
      "label",
      { class: "select" },
      el("span", { text: t("page.interpret.cmp-with") }),
      el(
        "select",
        {
          "data-testid": "compare-model",
          onchange: (e) => {
            chosen = e.target.value;
            refresh();
          },
        },
        offered.models.map((name) => el("option", { value: name, selected: name === chosen, text: shortName(name), title: name })),
      ),
    ),
  );
  return compareRows(await ctx.post("/api/compare", { model: chosen, ids: state.ids }));
}

// What a comparison shows (the /api/compare answer d): its unit, the two means, the loss rows of
// A and B and B − A. The page's compare view and the notebook's (lmscope.show.compare) draw it.
export function compareRows(d) {
  const unitWord = t(d.unit === "token" ? "page.interpret.cmp-token" : "page.interpret.cmp-char");
  const mean = (x) => (x === null ? "—" : fmt(x, 4));
  // one scale for both loss rows, so equal colours mean equal surprise
  const lossScale = absMax([...d.loss_a, ...d.loss_b]);
  const [a, b] = d.names.map(shortName);
  return [
    el("p", {
      class: `notice${d.unit === "character" ? " warn" : ""}`,
      "data-testid": "compare-unit",
      "data-unit": d.unit,
      text: t(d.unit === "token" ? "page.interpret.cmp-per-token" : "page.interpret.cmp-per-char"),
    }),
    el("p", {
      class: "cmp-means",
      "data-testid": "compare-means",
      "data-mean-a": String(d.mean_a),
      "data-mean-b": String(d.mean_b),
      text: t("page.interpret.cmp-means", { a: mean(d.mean_a), b: mean(d.mean_b), unit: unitWord }),
    }),
    row(d, "loss_a", t("page.interpret.cmp-row-a", { name: a }), lossScale),
    row(d, "loss_b", t("page.interpret.cmp-row-b", { name: b }), lossScale),
    row(d, "diff", t("page.interpret.cmp-row-diff"), absMax(d.diff)),
    // characters, not UTF-16 units: an emoji is one, as in the rows above
    el("p", { class: "hint", text: t("page.interpret.cmp-text", { n: [...d.pieces.join("")].length }) }),
  ];
}
