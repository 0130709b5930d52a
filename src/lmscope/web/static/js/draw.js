// Drawing helpers: DOM building, colour scales, vector strips and heatmaps on canvas (with a
// hover readout of the exact value), and small SVG charts. They only draw numbers they are given.

import { colon, t } from "./catalog.js";

const SVG_NS = "http://www.w3.org/2000/svg";

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  setAttrs(node, attrs);
  append(node, children);
  return node;
}

export function svg(tag, attrs = {}, ...children) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined && v !== null) node.setAttribute(k, v);
  append(node, children);
  return node;
}

function setAttrs(node, attrs) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "style" && typeof v === "object") Object.assign(node.style, v);
    else node.setAttribute(k, v === true ? "" : v);
  }
}

function append(node, children) {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// --- numbers and text -------------------------------------------------------------------

// One minus sign everywhere numbers are shown: U+2212, in the mantissa and the exponent alike.
export function minus(text) {
  return String(text).replaceAll("-", "−");
}

export function fmt(x, digits = 4) {
  if (x === null || x === undefined) return "−∞";
  if (!Number.isFinite(x)) return x > 0 ? "∞" : "−∞";
  if (x === 0) return "0";
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-4) return minus(x.toExponential(Math.max(1, digits - 2)));
  return minus(Number(x.toPrecision(digits)).toString());
}

// A column of numbers in one style, so its rows read alike (26.00 under 26.93, not 26): the
// decimals that give the largest `digits` significant digits, for every row; where that would
// leave a nonzero row with under two significant digits (0.443 above 0.000003), `digits`
// significant digits in every row instead. An exact 0 is written 0. Returns the formatter.
export function columnFormat(values, digits = 4) {
  const sizes = values.filter((v) => Number.isFinite(v) && v !== 0).map(Math.abs);
  if (!sizes.length) return (x) => fmt(x, digits);
  const top = Math.max(...sizes);
  const places = digits - 1 - Math.floor(Math.log10(top));
  const fixed = top < 1e5 && places >= 0 && places <= 6 && Math.min(...sizes) >= 10 ** (1 - places);
  return (x) => {
    if (x === null || x === undefined || !Number.isFinite(x) || x === 0) return fmt(x, digits);
    if (fixed) return minus(x.toFixed(places));
    const a = Math.abs(x);
    return minus(a >= 1e5 || a < 1e-4 ? x.toExponential(digits - 1) : x.toPrecision(digits));
  };
}

// Bytes in binary units as the terminal prints them (``lmscope explain``): "1,023 B", then one
// decimal, grouped, up to GiB ("45.0 KiB", "1,023.5 MiB", "2,048.0 GiB").
export function binaryBytes(n) {
  if (n < 1024) return `${grouped(n)} B`;
  const units = ["KiB", "MiB", "GiB"];
  let x = n / 1024;
  let i = 0;
  while (x >= 1024 && i < units.length - 1) {
    x /= 1024;
    i += 1;
  }
  return `${fixed(x, 1).replace(/^\d+/, (whole) => grouped(Number(whole)))} ${units[i]}`;
}

// A file's size in decimal units as `lmscope models` prints it (and Ollama and LM Studio show
// sizes): "4.7 GB", "270 MB", "812 B".
export function diskSize(bytes) {
  for (const [unit, scale] of [
    ["GB", 1e9],
    ["MB", 1e6],
    ["kB", 1e3],
  ]) {
    const value = bytes / scale;
    if (bytes >= scale) return `${fixed(value, value < 10 ? 1 : 0)} ${unit}`;
  }
  return `${bytes} B`;
}

// x with ``digits`` decimals, rounded as Python's format rounds: toFixed takes a tie (1.25,
// exact in binary) up, Python to the even digit. toFixed(40) writes the double's exact digits
// (a size over a power of 1024 ends within 30 of them).
function fixed(x, digits) {
  const [whole, frac] = x.toFixed(40).split(".");
  const rest = frac.slice(digits);
  const last = digits ? frac[digits - 1] : whole.at(-1);
  if (rest[0] === "5" && /^0*$/.test(rest.slice(1)) && Number(last) % 2 === 0) {
    return digits ? `${whole}.${frac.slice(0, digits)}` : whole;
  }
  return x.toFixed(digits);
}

export function pct(p) {
  const x = Number((p * 100).toPrecision(12)); // 1e-6 is 0.0001%, not 9.999999999999999e-5%
  if (x >= 10) return `${x.toFixed(1)}%`;
  if (x >= 0.1) return `${x.toFixed(2)}%`;
  if (x === 0) return "0%";
  // a small share in plain decimals (0.000044%, never 4.4e−5%), the same in every language; one
  // under a millionth of a percent is said as a bound
  if (x >= SMALLEST_PCT) return `${Number(x.toPrecision(2))}%`; // JS writes these in decimals
  return `< ${SMALLEST_PCT.toFixed(6)}%`;
}
const SMALLEST_PCT = 1e-6;

// Whitespace made visible inside token chips: a space is "·", a newline "↵", a tab "→"; other
// control characters (NUL, escape, ...) show as their Unicode pictures (␀, ␛), never raw.
export function visible(text) {
  return text
    .replace(/ /g, "·")
    .replace(/\n/g, "↵")
    .replace(/\t/g, "→")
    .replace(/[\x00-\x1f]/g, (c) => String.fromCharCode(0x2400 + c.charCodeAt(0)))
    .replace(/\x7f/g, "␡")
    .replace(/\u00a0/g, "⍽")
    .replace(UNSEEN, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);
}

// "12 ·visualiz…": a position and its token's text in at most ``n`` characters, the text cut
// with "…" and the position never cut (a label box holds about 14).
export function positionLabel(position, text, n = 14) {
  const head = `${position} `;
  const chars = [...text];
  const room = Math.max(2, n - head.length);
  return head + (chars.length > room ? `${chars.slice(0, room - 1).join("")}…` : text);
}

// Characters that draw nothing or only a gap (other spaces, zero-width and format characters,
// emoji variation selectors): a token made of one would be a blank chip, so they are named.
const UNSEEN = /[\p{Zs}\p{Zl}\p{Zp}\p{Cf}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}]/gu;

// A count with its thousands grouped, in both languages: 8,192.
export function grouped(n) {
  return n.toLocaleString("en-US");
}

export function compact(n) {
  if (n >= 1e9) return `${(n / 1e9).toFixed(2)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return n.toLocaleString("en-US");
}

// --- colour ----------------------------------------------------------------------------

const NEG = [37, 99, 235];
const MID = [247, 247, 245];
const POS = [220, 68, 55];
const SEQ_LO = [248, 250, 252];
const SEQ_HI = [76, 29, 149];

function mix(a, b, t) {
  return [0, 1, 2].map((i) => Math.round(a[i] + (b[i] - a[i]) * t));
}

// Diverging (blue-white-red, symmetric around 0) or sequential (0..max, for probabilities).
export function colour(v, scale, kind = "diverging") {
  if (v === null || v === undefined) return null;
  if (kind === "sequential") {
    const t = scale > 0 ? Math.min(1, Math.max(0, v / scale)) : 0;
    return mix(SEQ_LO, SEQ_HI, Math.sqrt(t));
  }
  const t = scale > 0 ? Math.max(-1, Math.min(1, v / scale)) : 0;
  return t < 0 ? mix(MID, NEG, -t) : mix(MID, POS, t);
}

export function css(rgb) {
  return rgb ? `rgb(${rgb[0]},${rgb[1]},${rgb[2]})` : "transparent";
}

function absMax(values) {
  let m = 0;
  for (const v of values) if (v !== null && Math.abs(v) > m) m = Math.abs(v);
  return m;
}

// --- tooltip ----------------------------------------------------------------------------

let tipNode = null;

export function showTip(event, text) {
  if (!tipNode) {
    tipNode = el("div", { class: "tip", role: "tooltip", "data-testid": "tooltip" });
    document.body.append(tipNode);
  }
  tipNode.textContent = text;
  tipNode.style.display = "block";
  const pad = 14;
  const w = tipNode.offsetWidth;
  const x = Math.min(event.clientX + pad, window.innerWidth - w - 4);
  tipNode.style.left = `${x}px`;
  tipNode.style.top = `${event.clientY + pad}px`;
}

export function hideTip() {
  if (tipNode) tipNode.style.display = "none";
}

// --- canvas grids -----------------------------------------------------------------------

function sizedCanvas(width, height) {
  const ratio = window.devicePixelRatio || 1;
  const canvas = el("canvas", { width: Math.round(width * ratio), height: Math.round(height * ratio) });
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const ctx = canvas.getContext("2d");
  ctx.scale(ratio, ratio);
  return { canvas, ctx };
}

function fillCells(ctx, rows, cols, cell, valueAt, colourAt) {
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) {
      const v = valueAt(r, c);
      if (v === undefined) continue;
      const rgb = colourAt(v);
      if (rgb) {
        ctx.fillStyle = css(rgb);
        ctx.fillRect(c * cell.w, r * cell.h, Math.ceil(cell.w), Math.ceil(cell.h));
      } else {
        // masked (-inf): grey with a diagonal hatch, so it cannot be mistaken for a 0
        ctx.fillStyle = "#e5e7eb";
        ctx.fillRect(c * cell.w, r * cell.h, Math.ceil(cell.w), Math.ceil(cell.h));
        ctx.strokeStyle = "#c4c8cf";
        ctx.beginPath();
        ctx.moveTo(c * cell.w, (r + 1) * cell.h);
        ctx.lineTo((c + 1) * cell.w, r * cell.h);
        ctx.stroke();
      }
    }
  }
}

// A vector as a colour strip, wrapped into rows of `cols` cells. Hover shows index and value.
export function strip(values, opts = {}) {
  const n = values.length;
  const cols = opts.cols ?? (n <= 128 ? n : n <= 1024 ? 64 : 128);
  const rows = Math.ceil(n / cols);
  const width = opts.width ?? 560;
  const cw = width / cols;
  const ch = opts.cellHeight ?? (rows === 1 ? 22 : Math.max(5, Math.min(10, cw)));
  const { canvas, ctx } = sizedCanvas(width, rows * ch);
  // `centre` shifts the colour scale's midpoint (LayerNorm gains sit around 1, not 0)
  const centre = opts.centre ?? 0;
  const scale = opts.scale ?? absMax(values.map((v) => v - centre));
  const kind = opts.kind ?? "diverging";
  fillCells(ctx, rows, cols, { w: cw, h: ch }, (r, c) => values[r * cols + c], (v) =>
    colour(v - centre, scale, kind),
  );
  if (opts.groups) {
    // separators between heads (or other groups) in a flattened vector
    ctx.strokeStyle = "rgba(17,24,39,0.55)";
    ctx.lineWidth = 1;
    for (let g = opts.groups; g < n; g += opts.groups) {
      const r = Math.floor(g / cols);
      const c = g % cols;
      ctx.beginPath();
      ctx.moveTo(c * cw, r * ch);
      ctx.lineTo(c * cw, (r + 1) * ch);
      ctx.stroke();
    }
  }
  if (opts.marks) {
    ctx.fillStyle = "rgba(17,24,39,0.85)";
    for (const i of opts.marks) {
      const r = Math.floor(i / cols);
      const c = i % cols;
      ctx.fillRect(c * cw, r * ch, Math.ceil(cw), Math.ceil(ch));
    }
  }
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - box.left) / box.width) * cols);
    const r = Math.floor(((e.clientY - box.top) / box.height) * rows);
    const i = r * cols + c;
    if (i >= 0 && i < n) {
      const label = opts.indexLabel ? opts.indexLabel(i) : `[${i}]`;
      showTip(e, `${label} = ${fmt(values[i], 6)}`);
    }
  });
  canvas.addEventListener("mouseleave", hideTip);
  canvas.className = "strip";
  const caption = opts.label
    ? el(
        "div",
        { class: "strip-label" },
        el("span", { class: "name", text: opts.label }),
        el("span", {
          class: "meta",
          text: opts.meta ?? `${n} · ${centre ? `${fmt(centre)} ± ${fmt(scale, 3)}` : `±${fmt(scale, 3)}`}`,
        }),
      )
    : null;
  return el("div", { class: "strip-box", "data-testid": opts.testid }, caption, canvas);
}

// A matrix as a heatmap. Rows/cols may carry labels. Hovering updates a readout whose
// data-value attribute holds the exact number (tests read it).
export function heatmap(matrix, opts = {}) {
  const rows = matrix.length;
  const cols = rows ? matrix[0].length : 0;
  const size = opts.size ?? 360;
  const cell = Math.max(3, Math.min(opts.maxCell ?? 26, Math.floor(size / Math.max(rows, cols, 1))));
  const cw = opts.cellWidth ?? cell;
  const ch = opts.cellHeight ?? cell;
  const { canvas, ctx } = sizedCanvas(cols * cw, rows * ch);
  const flat = matrix.flat();
  const kind = opts.kind ?? "diverging";
  const scale = opts.scale ?? (kind === "sequential" ? Math.max(...flat.filter((v) => v !== null), 1e-9) : absMax(flat));
  fillCells(ctx, rows, cols, { w: cw, h: ch }, (r, c) => matrix[r][c], (v) => colour(v, scale, kind));
  if (opts.highlightRow !== undefined && opts.highlightRow >= 0 && opts.highlightRow < rows) {
    ctx.strokeStyle = "#111827";
    ctx.lineWidth = 2;
    ctx.strokeRect(1, opts.highlightRow * ch + 1, cols * cw - 2, ch - 2);
  }
  canvas.className = "heat";
  canvas.dataset.rows = rows;
  canvas.dataset.cols = cols;
  const readout = el("div", { class: "readout", "data-testid": opts.readoutTestid ?? "cell-readout" });
  readout.textContent = opts.hint ?? "";
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - box.left) / box.width) * cols);
    const r = Math.floor(((e.clientY - box.top) / box.height) * rows);
    if (r < 0 || r >= rows || c < 0 || c >= cols) return;
    const v = matrix[r][c];
    const where = opts.describe ? opts.describe(r, c) : `[${r}, ${c}]`;
    const text = `${where}${colon()}${v === null ? t("page.masked-value") : fmt(v, 6)}`;
    readout.textContent = text;
    readout.dataset.row = r;
    readout.dataset.col = c;
    readout.dataset.value = v === null ? "null" : String(v);
    showTip(e, text);
  });
  canvas.addEventListener("mouseleave", hideTip);
  if (opts.onClick) {
    canvas.style.cursor = "pointer";
    canvas.addEventListener("click", (e) => {
      const box = canvas.getBoundingClientRect();
      const c = Math.floor(((e.clientX - box.left) / box.width) * cols);
      const r = Math.floor(((e.clientY - box.top) / box.height) * rows);
      opts.onClick(r, c);
    });
  }
  const body = el("div", { class: "heat-body" });
  if (opts.rowLabels) body.append(rowLabels(opts.rowLabels, ch, opts.highlightRow));
  body.append(canvas);
  const attrs = { class: "heatmap", "data-testid": opts.testid };
  if (opts.data) for (const [k, v] of Object.entries(opts.data)) attrs[`data-${k}`] = v;
  return el(
    "figure",
    attrs,
    opts.title ? el("figcaption", { text: opts.title }) : null,
    body,
    opts.noReadout ? null : readout,
  );
}

// Row labels beside a heatmap. Rows too thin for text (a long prompt) keep every k-th label
// and the highlighted one, each at its row, so the axis still says where one is.
function rowLabels(labels, ch, highlight) {
  if (ch >= 10) {
    return el(
      "div",
      { class: "row-labels", "data-testid": "row-labels", "data-verbatim": "", style: { lineHeight: `${ch}px`, fontSize: `${Math.min(12, ch - 1)}px` } },
      labels.map((l) => el("div", { text: l, style: { height: `${ch}px` } })),
    );
  }
  const every = Math.ceil(11 / ch);
  const shown = labels.map((_, r) => r).filter((r) => r % every === 0 && Math.abs(r - (highlight ?? -99)) >= every);
  if (highlight !== undefined && highlight >= 0 && highlight < labels.length) shown.push(highlight);
  return el(
    "div",
    { class: "row-labels sparse", "data-testid": "row-labels", "data-verbatim": "", style: { height: `${labels.length * ch}px` } },
    shown.map((r) =>
      el("div", { text: labels[r], class: r === highlight ? "sel" : null, style: { top: `${(r + 0.5) * ch}px` } }),
    ),
  );
}

// --- SVG charts -------------------------------------------------------------------------

export function histogram(hist, opts = {}) {
  const w = opts.width ?? 260;
  const h = opts.height ?? 90;
  const counts = hist.counts;
  const max = Math.max(...counts, 1);
  const bw = w / counts.length;
  const root = svg("svg", { width: w, height: h + 18, class: "chart", viewBox: `0 0 ${w} ${h + 18}` });
  counts.forEach((c, i) => {
    const bh = (c / max) * h;
    const lo = hist.edges[i];
    const hi = hist.edges[i + 1];
    const colourFill = opts.colour ?? (hi <= 0 ? "#2563eb" : lo >= 0 ? "#dc4437" : "#9ca3af");
    const bar = svg("rect", { x: i * bw + 0.5, y: h - bh, width: Math.max(1, bw - 1), height: bh, fill: colourFill });
    bar.addEventListener("mousemove", (e) => showTip(e, `[${fmt(lo, 3)}, ${fmt(hi, 3)}): ${c}`));
    bar.addEventListener("mouseleave", hideTip);
    root.append(bar);
  });
  root.append(
    svg("text", { x: 0, y: h + 14, class: "axis" }, fmt(hist.edges[0], 3)),
    svg("text", { x: w, y: h + 14, class: "axis", "text-anchor": "end" }, fmt(hist.edges.at(-1), 3)),
  );
  return el("figure", { class: "hist" }, opts.title ? el("figcaption", { text: opts.title }) : null, root);
}

// Lines over a shared x axis. series: [{name, values, colour}]; marker: x value to mark.
export function lineChart(xs, series, opts = {}) {
  // as wide as a phone's panel, not scaled down to it (its labels were 6 px at 390 px)
  const w = opts.width ?? Math.min(520, Math.max(260, window.innerWidth - 80));
  const h = opts.height ?? 180;
  const pad = { l: 44, r: 110, t: 8, b: 24 };
  const all = series.flatMap((s) => s.values).filter((v) => v !== null && Number.isFinite(v));
  const ymin = opts.ymin ?? Math.min(...all, 0);
  const ymax = opts.ymax ?? Math.max(...all, 1e-9);
  const xmin = xs[0];
  const xmax = xs.at(-1) === xmin ? xmin + 1 : xs.at(-1);
  const X = (x) => pad.l + ((x - xmin) / (xmax - xmin)) * (w - pad.l - pad.r);
  const Y = (y) => pad.t + (1 - (y - ymin) / (ymax - ymin || 1)) * (h - pad.t - pad.b);
  const root = svg("svg", { width: w, height: h, class: "chart line-chart", viewBox: `0 0 ${w} ${h}` });
  root.append(
    svg("line", { x1: pad.l, x2: w - pad.r, y1: Y(ymin), y2: Y(ymin), class: "axis-line" }),
    svg("line", { x1: pad.l, x2: pad.l, y1: pad.t, y2: h - pad.b, class: "axis-line" }),
    svg("text", { x: pad.l - 4, y: Y(ymax) + 4, class: "axis", "text-anchor": "end" }, fmt(ymax, 3)),
    svg("text", { x: pad.l - 4, y: Y(ymin), class: "axis", "text-anchor": "end" }, fmt(ymin, 3)),
    svg("text", { x: pad.l, y: h - 6, class: "axis" }, opts.xStart ?? (opts.xLabel ? `${opts.xLabel} ${fmt(xmin, 3)}` : fmt(xmin, 3))),
    svg("text", { x: w - pad.r, y: h - 6, class: "axis", "text-anchor": "end" }, opts.xEnd ?? fmt(xmax, 3)),
  );
  if (opts.marker !== undefined) {
    root.append(svg("line", { x1: X(opts.marker), x2: X(opts.marker), y1: pad.t, y2: h - pad.b, class: "marker" }));
  }
  series.forEach((s, si) => {
    const pts = s.values
      .map((v, i) => (v === null || !Number.isFinite(v) ? null : `${X(xs[i]).toFixed(1)},${Y(v).toFixed(1)}`))
      .filter(Boolean)
      .join(" ");
    const line = svg("polyline", { points: pts, fill: "none", stroke: s.colour, "stroke-width": 2 });
    root.append(line);
    if (opts.endLabels !== false) {
      root.append(
        svg("text", { x: w - pad.r + 6, y: pad.t + 12 + si * 14, class: "legend", fill: s.colour }, s.name),
      );
    }
    if (opts.points) {
      s.values.forEach((v, i) => {
        if (v === null) return;
        const dot = svg("circle", { cx: X(xs[i]), cy: Y(v), r: 3, fill: s.colour });
        dot.addEventListener("mousemove", (e) => showTip(e, `${s.name} @ ${fmt(xs[i], 4)}: ${fmt(v, 6)}`));
        dot.addEventListener("mouseleave", hideTip);
        root.append(dot);
      });
    }
  });
  return el("figure", { class: "line-chart" }, opts.title ? el("figcaption", { text: opts.title }) : null, root);
}

// Points (x_i, y_i) over a function's curve: the MLP's real pre/post activations on GELU.
export function curveScatter(xs, ys, fn, opts = {}) {
  const w = opts.width ?? 300;
  const h = opts.height ?? 200;
  const pad = 28;
  const xmin = Math.min(...xs, -3);
  const xmax = Math.max(...xs, 3);
  const ymin = Math.min(...ys, -0.5);
  const ymax = Math.max(...ys, 3);
  const X = (x) => pad + ((x - xmin) / (xmax - xmin)) * (w - 2 * pad);
  const Y = (y) => h - pad + ((ymin - y) / (ymax - ymin)) * (h - 2 * pad);
  const { canvas, ctx } = sizedCanvas(w, h);
  ctx.strokeStyle = "#d1d5db";
  ctx.beginPath();
  ctx.moveTo(X(xmin), Y(0));
  ctx.lineTo(X(xmax), Y(0));
  ctx.moveTo(X(0), Y(ymin));
  ctx.lineTo(X(0), Y(ymax));
  ctx.stroke();
  ctx.strokeStyle = "#111827";
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  for (let i = 0; i <= 200; i++) {
    const x = xmin + ((xmax - xmin) * i) / 200;
    const px = X(x);
    const py = Y(fn(x));
    if (i === 0) ctx.moveTo(px, py);
    else ctx.lineTo(px, py);
  }
  ctx.stroke();
  ctx.fillStyle = "rgba(220,68,55,0.45)";
  for (let i = 0; i < xs.length; i++) ctx.fillRect(X(xs[i]) - 1.5, Y(ys[i]) - 1.5, 3, 3);
  ctx.fillStyle = "#6b7280";
  ctx.font = "11px system-ui, sans-serif";
  ctx.fillText(fmt(xmin, 3), pad, h - 8);
  ctx.fillText(fmt(xmax, 3), w - pad - 24, h - 8);
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect();
    const mx = ((e.clientX - box.left) / box.width) * w;
    let best = -1;
    let dist = 8;
    for (let i = 0; i < xs.length; i++) {
      const d = Math.hypot(X(xs[i]) - mx, Y(ys[i]) - ((e.clientY - box.top) / box.height) * h);
      if (d < dist) {
        dist = d;
        best = i;
      }
    }
    if (best >= 0) showTip(e, `[${best}] ${fmt(xs[best], 6)} → ${fmt(ys[best], 6)}`);
    else hideTip();
  });
  canvas.addEventListener("mouseleave", hideTip);
  return el("figure", { class: "scatter" }, opts.title ? el("figcaption", { text: opts.title }) : null, canvas);
}

// Horizontal bars with labels (norms per head, per layer...).
// Without `format`, the values are one column (columnFormat) of `digits` (4) significant digits.
export function barList(items, opts = {}) {
  const max = Math.max(...items.map((i) => Math.abs(i.value)), 1e-12);
  const format = opts.format ?? columnFormat(items.map((i) => i.value), opts.digits ?? 4);
  return el(
    "div",
    { class: "bar-list" },
    items.map((item) =>
      el(
        "div",
        { class: `bar-item${item.active ? " active" : ""}`, onclick: item.onClick, title: item.title },
        el("span", { class: "bar-name", text: item.name }),
        el(
          "span",
          { class: "bar-track" },
          el("span", {
            class: "bar-fill",
            style: { width: `${(Math.abs(item.value) / max) * 100}%`, background: item.colour ?? opts.colour ?? "#6366f1" },
          }),
        ),
        el("span", { class: "bar-value", text: format(item.value) }),
      ),
    ),
  );
}

// A redraw replaces the panel's controls. The one the keyboard was on gets the focus back, or
// the next arrow key on the Layer list reaches the page (and opens another step) and a second
// Enter on "Next →" does nothing.
export function focusedControl(container) {
  const active = document.activeElement;
  return active && active !== document.body && container.contains(active) ? active.dataset.testid : null;
}

export function refocus(container, testid) {
  // no scroll: a step opened from the panel's tour control brings its diagram part into view
  if (testid) container.querySelector(`[data-testid="${testid}"]:not([disabled])`)?.focus({ preventScroll: true });
}
