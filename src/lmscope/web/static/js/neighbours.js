// Embedding neighbours (step 5): the tokens whose rows of W_E point most the same way as the
// selected token's, by cosine similarity over the whole matrix (POST /api/neighbours; the
// server keeps each row's length, computed once per model). The seed's claim "similar
// meanings get nearby vectors", put to the test on this model.

import { columnFormat, el, visible } from "./draw.js";
import { t } from "./catalog.js";

export function neighboursSection(ctx) {
  const { state } = ctx;
  const box = el("section", { class: "viz neighbours loading", "data-testid": "neighbours" });
  ctx
    .post("/api/neighbours", { ids: state.ids, position: state.position })
    .then((d) => {
      box.classList.remove("loading");
      box.replaceChildren(...neighboursView(d));
      box.dataset.ready = "1";
    })
    .catch((err) => {
      box.classList.remove("loading");
      box.replaceChildren(el("div", { class: "error inline", text: t("page.error-line", { message: err.message }) }));
    });
  return box;
}

function neighboursView(d) {
  const top = Math.max(...d.neighbours.map((n) => Math.abs(n.cosine)), 1e-9);
  const cosine = columnFormat(d.neighbours.map((n) => n.cosine), 3);
  const rows = d.neighbours.map((n, i) =>
    el(
      "div",
      { class: "nb-row", "data-testid": "neighbour", "data-id": n.id, "data-cosine": n.cosine },
      el("span", { class: "nb-rank", text: i + 1 }),
      el("code", { class: "nb-tok", text: visible(n.text) }),
      el("span", { class: "nb-track" }, el("span", { class: "nb-fill", style: { width: `${(Math.abs(n.cosine) / top) * 100}%` } })),
      el("span", { class: "nb-val", text: cosine(n.cosine) }),
    ),
  );
  const title = el("h4", { text: t("page.picture.nb-title", { tok: visible(d.text), id: d.id }) });
  // a byte token (<0xA0>) has no meaning to be near: say so, its rows only on request
  if (/^(<0x[0-9A-Fa-f]{2}>)+$/.test(d.text)) {
    return [
      title,
      el("p", { class: "hint", "data-testid": "neighbours-byte", text: t("page.picture.nb-byte", { tok: d.text }) }),
      el("details", {}, el("summary", { text: t("page.picture.nb-byte-list") }), el("div", { class: "nb-list" }, rows)),
    ];
  }
  return [title, el("p", { class: "hint", text: t("page.picture.nb-hint", { n: d.vocab.toLocaleString("en-US") }) }), el("div", { class: "nb-list" }, rows)];
}
