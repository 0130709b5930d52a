// Step 11's "row of the query at each stage": QKᵀ, scaled, masked and softmax for each key the
// query can see. A short prompt gets the whole table; a long one its strongest keys (in
// position order) with the full table one click away, never a small scroll box.

import { columnFormat, el } from "./draw.js";
import { t } from "./catalog.js";

const FULL = 16; // keys shown in full without folding
const STRONGEST = 12;

function table(head, rows, testid) {
  return el(
    "table",
    { class: "data", "data-testid": testid },
    el("thead", {}, el("tr", {}, head.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows.map((r) => el("tr", { class: r.cls ?? "" }, r.cells.map((c) => el("td", { text: c }))))),
  );
}

// tokenText(j): the readable text of the token at position j
export function queryRowTable(a, position, tokenText) {
  const math = (text) => el("code", { text }); // the operations' own names
  const head = [t("page.key"), t("page.token"), math("QKᵀ"), math("/√d"), t("page.mask-col"), math("softmax")];
  const seen = Array.from({ length: Math.min(position + 1, a.row.raw.length) }, (_, j) => j);
  // each column in one style over the keys the query sees (0.4430 above 0.0078, not 0.443)
  const stages = ["raw", "scaled", "masked", "pattern"];
  const formats = stages.map((s) => columnFormat(seen.map((j) => a.row[s][j]), 5));
  const row = (j) => ({
    cls: j === position ? "sel" : "",
    cells: [j, `“${tokenText(j)}”`, ...stages.map((s, i) => formats[i](a.row[s][j]))],
  });
  const after = a.row.raw.length - seen.length;
  const masked = after > 0 ? [{ cls: "tail", cells: ["", t("page.picture.masked-keys", { a: position + 1, b: a.row.raw.length - 1 }), "", "", "−∞", "0"] }] : [];
  if (seen.length <= FULL) return table(head, seen.map(row).concat(masked), "query-row");
  const strongest = seen
    .slice()
    .sort((x, y) => (a.row.pattern[y] ?? 0) - (a.row.pattern[x] ?? 0))
    .slice(0, STRONGEST)
    .sort((x, y) => x - y);
  return el(
    "div",
    {},
    el("p", { class: "hint", text: t("page.picture.strongest-keys", { n: STRONGEST, of: seen.length }) }),
    table(head, strongest.map(row), "query-row"),
    el(
      "details",
      { class: "all-keys" },
      el("summary", { text: t("page.picture.all-keys", { n: seen.length }) }),
      table(head, seen.map(row).concat(masked), "query-row-all"),
    ),
  );
}
