// Attention as connections: the tokens in two columns (keys on the left, queries on the right)
// and a line from the selected query to every key it reads, as wide and as opaque as the real
// weight (POST /api/attention/lines). One head, every head of the layer in its own colour, or
// their mean. Hover a query to see where it looks, a key to see which queries read it; click a
// query to select its position. Generated tokens are positions like any other.

import { el, pct, positionLabel, svg, visible } from "./draw.js";
import { t } from "./catalog.js";

const MODES = ["head", "all", "mean"];
const MODE_WORDS = { head: "page.picture.lines-head", all: "page.picture.lines-all", mean: "page.picture.lines-mean" };
const MIN_WEIGHT = 0.004; // lighter lines are left out (their weights stay in the readout)
let mode = "head";

export function headColour(h, n) {
  return `hsl(${Math.round((h * 360) / n + 260) % 360} 72% 44%)`;
}

// The step's section: drawn when its data arrives, so the step itself does not wait for it.
export function attentionLines(ctx) {
  const box = el("section", { class: "viz attn-lines loading", "data-testid": "attention-lines" });
  const { state } = ctx;
  const body = { ids: state.ids, layer: state.layer, position: state.position };
  ctx
    .post("/api/attention/lines", body)
    .then((d) => {
      const draw = () => box.replaceChildren(...linesView(ctx, d, draw, room(box)).filter(Boolean));
      // a kept answer can come before the step has put the section on the page: drawn once it
      // is there, at the width it has
      whenShown(box, () => {
        box.classList.remove("loading");
        draw();
        box.dataset.ready = "1";
      });
    })
    .catch((err) => {
      box.classList.remove("loading");
      box.replaceChildren(el("div", { class: "error inline", text: t("page.error-line", { message: err.message }) }));
    });
  return box;
}

function whenShown(box, then) {
  if (box.isConnected || typeof ResizeObserver === "undefined") return then();
  const watch = new ResizeObserver(() => {
    if (!box.isConnected) return;
    watch.disconnect();
    then();
  });
  watch.observe(box);
}

// weights[q][k] of what is drawn: one head, or the mean of all heads
function weightsOf(d, head) {
  if (mode !== "mean") return d.patterns[head];
  const n = d.patterns.length;
  return d.patterns[0].map((row, q) => row.map((_, k) => d.patterns.reduce((s, p) => s + p[q][k], 0) / n));
}

// The picture's width: the room its own section has (the page's step panel, or a notebook
// cell, which has no #step), at most 620 px, so at 390 px the query column is in sight.
function room(box) {
  const free = box.clientWidth || (document.querySelector("#step")?.clientWidth ?? 660) - 40;
  return Math.max(240, Math.min(620, free));
}

function linesView(ctx, d, redraw, width) {
  const { state } = ctx;
  const head = Math.min(state.head, d.n_head - 1);
  const modes = el(
    "div",
    { class: "segmented", "data-testid": "lines-mode" },
    MODES.map((m) =>
      el("button", {
        type: "button",
        class: m === mode ? "active" : "",
        "data-mode": m,
        text: t(MODE_WORDS[m], { h: head }),
        onclick: () => {
          mode = m;
          redraw();
        },
      }),
    ),
  );
  const readout = el("p", { class: "lines-readout", "data-testid": "lines-readout" });
  const picture = drawLines(ctx, d, head, readout, width);
  const before = mode === "mean" ? d.outside.reduce((a, b) => a + b, 0) / d.n_head : d.outside[head];
  const outside = d.start > 0 && before > 0 ? el("p", { class: "hint", text: t("page.picture.lines-outside", { w: pct(before), a: d.start }) }) : null;
  const kv = d.n_kv_head < d.n_head ? el("p", { class: "hint", text: t("page.picture.lines-gqa", { n: d.n_head, kv: d.n_kv_head, g: d.n_head / d.n_kv_head }) }) : null;
  return [
    el("h4", { text: t("page.picture.lines-title", { l: d.layer }) }),
    el("div", { class: "lines-controls" }, modes, mode === "all" ? legend(d) : null),
    picture,
    readout,
    outside,
    kv,
    el("p", { class: "hint", text: t("page.picture.lines-hint") }),
  ];
}

function legend(d) {
  return el(
    "span",
    { class: "lines-legend" },
    d.patterns.map((_, h) => el("span", { class: "swatch", style: { background: headColour(h, d.n_head) }, text: `H${h}` })),
  );
}

function layout(d, width) {
  const rowH = Math.max(15, Math.min(22, Math.floor(640 / d.size)));
  const label = Math.min(118, Math.floor(width * 0.3));
  // as many characters of a label as its box holds (11.5 px monospace: about 7 px each)
  const chars = Math.min(14, Math.floor((label - 10) / 7));
  return { rowH, label, chars, width, height: d.size * rowH + 8, xL: label, xR: width - label };
}

function drawLines(ctx, d, head, readout, width) {
  const L = layout(d, width);
  const root = svg("svg", { class: "lines-svg", width: L.width, height: L.height, viewBox: `0 0 ${L.width} ${L.height}`, role: "img" });
  const wires = svg("g", { class: "wires" });
  root.append(wires);
  const y = (i) => 4 + (i + 0.5) * L.rowH;
  const query = ctx.state.position - d.start;
  const tokenAt = (i) => visible(d.tokens[i].text);
  const focus = (side, i) => {
    wires.replaceChildren(...wiresFor(d, head, side, i, L, y));
    readout.textContent = readoutText(d, head, side, i, tokenAt);
    for (const node of root.querySelectorAll(".line-token")) {
      node.classList.toggle("focus", node.dataset.side === side && Number(node.dataset.index) === i);
    }
  };
  for (const side of ["key", "query"]) {
    for (let i = 0; i < d.size; i++) {
      const x = side === "key" ? L.xL - 6 : L.xR + 6;
      const g = svg("g", {
        class: `line-token${side === "query" && i === query ? " sel" : ""}${d.tokens[i].position >= ctx.state.promptCount ? " gen" : ""}`,
        "data-testid": "line-token",
        "data-side": side,
        "data-index": i,
        "data-position": d.start + i,
        tabindex: side === "query" ? 0 : -1,
      });
      g.append(
        svg("rect", { x: side === "key" ? 2 : L.xR + 2, y: y(i) - L.rowH / 2 + 1, width: L.label - 4, height: L.rowH - 2, rx: 4 }),
        svg("text", { x, y: y(i) + 4, "data-verbatim": "", "text-anchor": side === "key" ? "end" : "start" }, positionLabel(d.start + i, tokenAt(i), L.chars)),
      );
      g.addEventListener("mouseenter", () => focus(side, i));
      g.addEventListener("mouseleave", () => focus("query", query));
      g.addEventListener("focus", () => focus(side, i));
      if (side === "query") g.addEventListener("click", () => ctx.selectPosition(d.start + i));
      root.append(g);
    }
  }
  focus("query", query);
  return el(
    "div",
    { class: "lines-frame" },
    el("div", { class: "lines-heads", style: { maxWidth: `${L.width}px` } }, el("span", { text: t("page.picture.lines-keys") }), el("span", { text: t("page.picture.lines-queries") })),
    root,
  );
}

// The lines of one focus: from query i to every key it reads, or from every query to key i.
function wiresFor(d, head, side, i, L, y) {
  const heads = mode === "all" ? d.patterns.map((_, h) => h) : [head];
  const out = [];
  for (const h of heads) {
    const w = mode === "all" ? d.patterns[h] : weightsOf(d, h);
    const pairs = side === "query" ? w[i].map((v, k) => [i, k, v]).filter(([, k]) => k <= i) : w.map((row, q) => [q, i, row[i]]).filter(([q]) => q >= i);
    for (const [q, k, v] of pairs) {
      if (v < MIN_WEIGHT) continue;
      const offset = mode === "all" ? (h - (heads.length - 1) / 2) * 1.2 : 0;
      const x1 = L.xL;
      const x2 = L.xR;
      const mid = (x1 + x2) / 2;
      out.push(
        svg("path", {
          class: "attn-line",
          "data-testid": "attn-line",
          "data-q": d.start + q,
          "data-k": d.start + k,
          "data-head": mode === "mean" ? "mean" : h,
          "data-w": v,
          d: `M${x2},${y(q) + offset} C${mid},${y(q) + offset} ${mid},${y(k) + offset} ${x1},${y(k) + offset}`,
          stroke: mode === "all" ? headColour(h, d.n_head) : "var(--accent)",
          "stroke-width": (0.6 + 7 * v).toFixed(2),
          "stroke-opacity": Math.min(1, 0.12 + Math.sqrt(v)).toFixed(3),
          fill: "none",
        }),
      );
    }
  }
  return out;
}

function readoutText(d, head, side, i, tokenAt) {
  const w = weightsOf(d, head); // "all": the selected head's weights, named in the readout
  const who = mode === "mean" ? t("page.picture.lines-mean") : `H${head}`;
  if (side === "query") {
    const best = w[i].map((v, k) => [v, k]).filter(([, k]) => k <= i).sort((a, b) => b[0] - a[0]).slice(0, 3);
    const list = best.map(([v, k]) => `${d.start + k} “${tokenAt(k)}” ${pct(v)}`).join(" · ");
    return t("page.picture.lines-looks", { p: d.start + i, tok: tokenAt(i), who, list });
  }
  const best = w.map((row, q) => [row[i], q]).filter(([, q]) => q >= i).sort((a, b) => b[0] - a[0]).slice(0, 3);
  const list = best.map(([v, q]) => `${d.start + q} “${tokenAt(q)}” ${pct(v)}`).join(" · ");
  return t("page.picture.lines-read-by", { p: d.start + i, tok: tokenAt(i), who, list });
}
