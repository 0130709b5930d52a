// Drawing for the flow view (flow.js): vectors as small colour strips on canvas, the wires
// between the flow's columns, and the packet that carries a vector from one part to the next
// when the step changes. Only numbers the server sent are drawn.

import { colour, css, el, fmt, hideTip, showTip, svg } from "./draw.js";

const COLS = 64; // cells per row of a strip: 576 values are 9 rows, 768 are 12

// A vector as a strip of cells, COLS to a row (fewer for short vectors). scale: the value at
// full colour (default: the vector's largest magnitude). Hover: index and exact value.
export function vectorStrip(values, { width = 128, cell = 3, scale, label, testid } = {}) {
  const n = values.length;
  const cols = Math.min(COLS, n);
  const rows = Math.ceil(n / cols);
  const cw = width / cols;
  const ratio = window.devicePixelRatio || 1;
  const canvas = el("canvas", {
    class: "flow-strip",
    width: Math.round(width * ratio),
    height: Math.round(rows * cell * ratio),
    "data-testid": testid,
    "data-n": n,
  });
  canvas.style.width = `${width}px`;
  canvas.style.height = `${rows * cell}px`;
  const g = canvas.getContext("2d");
  g.scale(ratio, ratio);
  const top = scale ?? robustScale(values);
  for (let i = 0; i < n; i++) {
    g.fillStyle = css(colour(values[i], top));
    g.fillRect((i % cols) * cw, Math.floor(i / cols) * cell, Math.ceil(cw), cell);
  }
  canvas.addEventListener("mousemove", (e) => {
    const box = canvas.getBoundingClientRect();
    const c = Math.floor(((e.clientX - box.left) / box.width) * cols);
    const r = Math.floor(((e.clientY - box.top) / box.height) * rows);
    const i = r * cols + c;
    if (i >= 0 && i < n) showTip(e, `${label ? `${label} ` : ""}[${i}] = ${fmt(values[i], 4)}`);
  });
  canvas.addEventListener("mouseleave", hideTip);
  return canvas;
}

// Full colour at the 98th percentile of the magnitudes, not the largest: a few outlier
// dimensions (SmolLM2's residual stream has some hundreds of times the rest) would otherwise
// leave every other cell white. Hover still reads the exact value.
export function robustScale(values, q = 0.98) {
  const sorted = values.map(Math.abs).sort((a, b) => a - b);
  return Math.max(1e-9, sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 1);
}

function centre(rect, box) {
  return { x: rect.left - box.left + rect.width / 2, y: rect.top - box.top + rect.height / 2 };
}

function edge(rect, box, side) {
  const c = centre(rect, box);
  if (side === "right") return { x: rect.right - box.left, y: c.y };
  if (side === "left") return { x: rect.left - box.left, y: c.y };
  if (side === "bottom") return { x: c.x, y: rect.bottom - box.top };
  return { x: c.x, y: rect.top - box.top };
}

// Wires: pairs [from element, to element, class]; side by side they join right edge to left
// edge, one under the other bottom to top. Drawn into the flow's own SVG overlay.
export function drawWires(overlay, root, pairs) {
  const box = root.getBoundingClientRect();
  overlay.setAttribute("width", box.width);
  overlay.setAttribute("height", box.height);
  overlay.setAttribute("viewBox", `0 0 ${box.width} ${box.height}`);
  const paths = [];
  for (const [a, b, cls] of pairs) {
    if (!a || !b || !a.isConnected || !b.isConnected) continue;
    const ra = a.getBoundingClientRect();
    const rb = b.getBoundingClientRect();
    if (!ra.width || !rb.width) continue;
    const vertical = rb.left < ra.right - 2;
    const p = edge(ra, box, vertical ? "bottom" : "right");
    const q = edge(rb, box, vertical ? "top" : "left");
    const d = vertical
      ? `M${p.x},${p.y} C${p.x},${(p.y + q.y) / 2} ${q.x},${(p.y + q.y) / 2} ${q.x},${q.y}`
      : `M${p.x},${p.y} C${(p.x + q.x) / 2},${p.y} ${(p.x + q.x) / 2},${q.y} ${q.x},${q.y}`;
    paths.push(svg("path", { d, class: `flow-wire${cls ? ` ${cls}` : ""}` }));
  }
  overlay.replaceChildren(...paths);
}

// The packet: a copy of a vector's strip gliding from one part to another along an arc. The
// motion is a Web Animation of transform only (the compositor runs it); a frame loop beside it
// records each frame's gap in `frames` (the benchmark reads them). Resolves when it lands.
export function flyPacket(root, from, to, strip, frames, duration = 520) {
  return new Promise((resolve) => {
    if (!from || !to || !from.isConnected || !to.isConnected) return resolve();
    const box = root.getBoundingClientRect();
    const a = centre(from.getBoundingClientRect(), box);
    const b = centre(to.getBoundingClientRect(), box);
    const packet = el("div", { class: "flow-packet", "data-testid": "flow-packet" }, strip);
    root.append(packet);
    const at = (k) => {
      const e = k < 0.5 ? 2 * k * k : 1 - (-2 * k + 2) ** 2 / 2;
      const x = a.x + (b.x - a.x) * e;
      const y = a.y + (b.y - a.y) * e - Math.sin(Math.PI * k) * 24;
      return { transform: `translate(${x.toFixed(1)}px, ${y.toFixed(1)}px) translate(-50%, -50%)` };
    };
    const keyframes = Array.from({ length: 13 }, (_, i) => at(i / 12));
    const motion = packet.animate(keyframes, { duration, easing: "linear", fill: "forwards" });
    let last = null;
    let running = true;
    const frame = (now) => {
      if (!running) return; // landed: what the page draws next is not the animation's
      if (last !== null) frames.push(now - last);
      last = now;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
    motion.finished
      .catch(() => {})
      .then(() => {
        running = false;
        packet.remove();
        resolve();
      });
  });
}
