// The circuits page's pictures, in SVG: a grid of values (layers x heads, layers x positions)
// with its colour scale, a loss curve, one head's attention pattern, and a sorted bar chart.
// Every mark carries the exact number it draws (data-value), shown on hover in a tooltip and
// in the figure's readout line; they only draw numbers they are given.

import { colon, t } from "./catalog.js";
import { colour, columnFormat, css, el, fmt, hideTip, showTip, svg } from "./draw.js";

// What a hovered mark says, in the figure's readout (data-value: the exact number).
function readoutOf(figure) {
  return figure.querySelector(".circuits-readout");
}

function hover(figure, mark, text, value) {
  mark.addEventListener("mousemove", (e) => {
    showTip(e, text);
    const line = readoutOf(figure);
    if (line) {
      line.textContent = text;
      line.dataset.value = String(value);
    }
  });
  mark.addEventListener("mouseleave", hideTip);
}

function figureBox(testid, title, body, extra = {}) {
  return el(
    "figure",
    { class: "circuits-fig", "data-testid": testid, ...extra },
    title ? el("figcaption", { text: title }) : null,
    body,
    el("div", { class: "circuits-readout", "data-testid": `${testid}-readout`, text: t("page.circuits.hover") }),
  );
}

// The scale of a grid: diverging around 0 up to +-max, or sequential from 0 to max.
export function scaleOf(values, kind, fixed) {
  if (fixed !== undefined) return fixed;
  let m = 0;
  for (const v of values) if (v !== null && Number.isFinite(v) && Math.abs(v) > m) m = Math.abs(v);
  return m || 1;
}

// A colour bar: what the colours of a grid mean, with its two ends written.
export function legend(kind, max, label) {
  const w = 160;
  const h = 10;
  const id = `grad-${kind}-${Math.random().toString(36).slice(2, 8)}`;
  const lo = kind === "sequential" ? 0 : -max;
  const stops = [0, 0.25, 0.5, 0.75, 1].map((f) =>
    svg("stop", { offset: `${f * 100}%`, "stop-color": css(colour(lo + f * (max - lo), max, kind)) }),
  );
  const bar = svg(
    "svg",
    { class: "circuits-legend-bar", width: w, height: h + 14, viewBox: `0 0 ${w} ${h + 14}` },
    svg("defs", {}, svg("linearGradient", { id }, stops)),
    svg("rect", { x: 0, y: 0, width: w, height: h, fill: `url(#${id})`, stroke: "#d1d5db" }),
    svg("text", { x: 0, y: h + 12, class: "axis" }, fmt(lo, 3)),
    svg("text", { x: w, y: h + 12, class: "axis", "text-anchor": "end" }, fmt(max, 3)),
  );
  return el("div", { class: "circuits-legend", "data-testid": "legend" }, label ? el("span", { text: label }) : null, bar);
}

// A grid of values: matrix[row][col], with row and column labels. opts: testid, title, kind
// ("diverging" or "sequential"), max (the scale's end), cellW, cellH, describe(r, c) -> text,
// onClick(r, c), selected [r, c], rotate (column labels slanted: tokens), legend (its label).
export function grid(matrix, rowLabels, colLabels, opts = {}) {
  const rows = matrix.length;
  const cols = rows ? matrix[0].length : 0;
  const kind = opts.kind ?? "diverging";
  const max = scaleOf(matrix.flat(), kind, opts.max);
  const cw = opts.cellW ?? 18;
  const ch = opts.cellH ?? 14;
  const left = opts.left ?? 34;
  const top = opts.rotate ? opts.top ?? 64 : 16;
  const w = left + cols * cw + (opts.rotate ? 40 : 4);
  const h = top + rows * ch + 2;
  const root = svg("svg", { class: "circuits-grid", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img" });
  const figure = figureBox(opts.testid, opts.title, null, opts.data ?? {});
  const labelsX = svg("g", { class: "col-labels", "data-verbatim": "" }); // tokens, heads, "MLP": names
  colLabels.forEach((label, c) => {
    const x = left + (c + 0.5) * cw;
    const attrs = opts.rotate
      ? { x, y: top - 4, transform: `rotate(-55 ${x} ${top - 4})`, class: "axis" }
      : { x, y: top - 4, class: "axis", "text-anchor": "middle" };
    labelsX.append(svg("text", attrs, label));
  });
  const labelsY = svg("g", { class: "row-labels" });
  rowLabels.forEach((label, r) => {
    labelsY.append(svg("text", { x: left - 4, y: top + (r + 0.5) * ch + 4, class: "axis", "text-anchor": "end" }, label));
  });
  const cells = svg("g", { class: "cells" });
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = matrix[r][c];
      const rect = svg("rect", {
        x: left + c * cw,
        y: top + r * ch,
        width: cw - 1,
        height: ch - 1,
        fill: v === null ? "#e5e7eb" : css(colour(v, max, kind)),
        class: "cell",
        "data-row": r,
        "data-col": c,
        "data-value": v === null ? "null" : String(v),
      });
      const where = opts.describe ? opts.describe(r, c) : `[${r}, ${c}]`;
      hover(figure, rect, `${where}${colon()}${v === null ? "—" : fmt(v, 4)}`, v);
      if (opts.onClick) rect.addEventListener("click", () => opts.onClick(r, c));
      cells.append(rect);
    }
  }
  if (opts.selected) {
    const [r, c] = opts.selected;
    cells.append(
      svg("rect", {
        x: left + c * cw - 1,
        y: top + r * ch - 1,
        width: cw + 1,
        height: ch + 1,
        class: "selected-cell",
        "data-testid": "selected-cell",
      }),
    );
  }
  if (opts.onClick) root.classList.add("clickable");
  root.append(labelsX, labelsY, cells);
  figure.insertBefore(el("div", { class: "circuits-svg-box" }, root), readoutOf(figure));
  figure.insertBefore(legend(kind, max, opts.legend), readoutOf(figure));
  return figure;
}

// The loss at each position: loss[i] predicts token i + 1; a dashed line where the second copy
// starts. opts: start (the first copy's first position), length (T), testid, title.
export function lossCurve(loss, opts) {
  const w = 560;
  const h = 200;
  const pad = { l: 40, r: 10, t: 12, b: 30 };
  const finite = loss.filter((v) => v !== null && Number.isFinite(v));
  const ymax = Math.max(...finite, 1e-9);
  const n = loss.length;
  const X = (i) => pad.l + (n > 1 ? (i / (n - 1)) * (w - pad.l - pad.r) : 0);
  const Y = (v) => pad.t + (1 - v / ymax) * (h - pad.t - pad.b);
  const root = svg("svg", { class: "circuits-chart", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img" });
  const figure = figureBox(opts.testid, opts.title, null);
  // loss[i] predicts token i + 1: the second copy's tokens are predicted from start + T - 1 on
  const split = opts.start + opts.length - 1;
  root.append(
    svg("rect", { x: X(split), y: pad.t, width: Math.max(0, X(n - 1) - X(split)), height: h - pad.t - pad.b, class: "second-copy" }),
    svg("line", { x1: pad.l, x2: w - pad.r, y1: Y(0), y2: Y(0), class: "axis-line" }),
    svg("line", { x1: pad.l, x2: pad.l, y1: pad.t, y2: h - pad.b, class: "axis-line" }),
    svg("text", { x: pad.l - 4, y: Y(ymax) + 4, class: "axis", "text-anchor": "end" }, fmt(ymax, 3)),
    svg("text", { x: pad.l - 4, y: Y(0), class: "axis", "text-anchor": "end" }, "0"),
    svg("text", { x: (pad.l + X(split)) / 2, y: h - 8, class: "axis", "text-anchor": "middle" }, t("page.circuits.induction.first-copy")),
    svg("text", { x: (X(split) + w - pad.r) / 2, y: h - 8, class: "axis", "text-anchor": "middle" }, t("page.circuits.induction.second-copy")),
  );
  const pts = loss
    .map((v, i) => (v === null ? null : `${X(i).toFixed(1)},${Y(v).toFixed(1)}`))
    .filter(Boolean)
    .join(" ");
  root.append(svg("polyline", { points: pts, class: "loss-line", fill: "none" }));
  loss.forEach((v, i) => {
    if (v === null) return;
    const dot = svg("circle", {
      cx: X(i),
      cy: Y(v),
      r: 2.2,
      class: "loss-point",
      "data-testid": "loss-point",
      "data-position": i,
      "data-value": String(v),
    });
    hover(figure, dot, t("page.circuits.induction.loss-at", { position: i, next: i + 1, loss: fmt(v, 4) }), v);
    root.append(dot);
  });
  figure.insertBefore(el("div", { class: "circuits-svg-box" }, root), readoutOf(figure));
  return figure;
}

// One head's attention pattern (rows: queries, the causal part only), with the induction
// stripe (query i to key i - T + 1 in the second copy) outlined. pattern[q] has q + 1 values.
export function patternView(pattern, opts) {
  const n = pattern.length;
  const cell = Math.max(2, Math.min(8, Math.floor(420 / Math.max(n, 1))));
  const pad = 30;
  const w = pad + n * cell + 4;
  const h = pad + n * cell + 4;
  const root = svg("svg", { class: "circuits-pattern", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img" });
  const figure = figureBox(opts.testid, opts.title, null, { "data-layer": opts.layer, "data-head": opts.head });
  root.append(
    svg("text", { x: pad, y: pad - 8, class: "axis" }, t("page.circuits.induction.keys")),
    svg("text", { x: pad - 8, y: pad, class: "axis", transform: `rotate(-90 ${pad - 8} ${pad})`, "text-anchor": "end" }, t("page.circuits.induction.queries")),
  );
  const cells = svg("g", { class: "cells" });
  for (let q = 0; q < n; q++) {
    for (let k = 0; k <= q; k++) {
      const v = pattern[q][k];
      const rect = svg("rect", {
        x: pad + k * cell,
        y: pad + q * cell,
        width: cell,
        height: cell,
        fill: css(colour(v, 1, "sequential")),
        class: "cell",
        "data-row": q,
        "data-col": k,
        "data-value": String(v),
      });
      hover(figure, rect, t("page.circuits.induction.attention-at", { query: q, key: k, weight: fmt(v, 4) }), v);
      cells.append(rect);
    }
  }
  root.append(cells);
  // the stripe: in the second copy, query i attends to key i - T + 1
  const first = opts.start + opts.length;
  const last = opts.start + 2 * opts.length - 1;
  if (last < n) {
    const k0 = first - opts.length + 1;
    const k1 = last - opts.length + 1;
    root.append(
      svg("line", {
        x1: pad + k0 * cell,
        y1: pad + first * cell,
        x2: pad + (k1 + 1) * cell,
        y2: pad + (last + 1) * cell,
        class: "stripe",
        "data-testid": "induction-stripe",
      }),
    );
  }
  figure.insertBefore(el("div", { class: "circuits-svg-box" }, root), readoutOf(figure));
  figure.insertBefore(legend("sequential", 1, t("page.circuits.induction.weight")), readoutOf(figure));
  return figure;
}

// Signed horizontal bars, largest size first: items [{name, value}]. A bar goes right of the
// zero line for a positive value, left for a negative one.
export function bars(items, opts) {
  const rowH = 18;
  const labelW = 64;
  const valueW = 56;
  const w = 420;
  const h = items.length * rowH + 8;
  const max = Math.max(...items.map((i) => Math.abs(i.value)), 1e-12);
  const half = (w - labelW - valueW) / 2;
  const mid = labelW + half;
  const root = svg("svg", { class: "circuits-bars", width: w, height: h, viewBox: `0 0 ${w} ${h}`, role: "img" });
  const figure = figureBox(opts.testid, opts.title, null);
  root.append(svg("line", { x1: mid, x2: mid, y1: 0, y2: h, class: "axis-line" }));
  const label = columnFormat(items.map((i) => i.value), 3); // one column: 2.10 under 2.14
  items.forEach((item, i) => {
    const y = 4 + i * rowH;
    const len = (Math.abs(item.value) / max) * (half - 2);
    const bar = svg("rect", {
      x: item.value >= 0 ? mid : mid - len,
      y: y + 2,
      width: Math.max(len, 0.5),
      height: rowH - 5,
      class: item.value >= 0 ? "bar pos" : "bar neg",
      "data-testid": "bar",
      "data-name": item.name,
      "data-value": String(item.value),
    });
    hover(figure, bar, `${item.name}${colon()}${fmt(item.value, 4)}`, item.value);
    root.append(
      svg("text", { x: labelW - 6, y: y + rowH - 5, class: "axis name", "text-anchor": "end", "data-verbatim": "" }, item.name),
      bar,
      svg("text", { x: w - 2, y: y + rowH - 5, class: "axis", "text-anchor": "end", "data-testid": "bar-value" }, label(item.value)),
    );
  });
  figure.insertBefore(el("div", { class: "circuits-svg-box" }, root), readoutOf(figure));
  return figure;
}
