// Ablation: every head of every layer as a clickable attention thumbnail (from /api/heads),
// whole attention / MLP switches per block, zero or mean mode, and the server's before/after
// next-token probabilities and KL divergence (from /api/ablate).

import { colour, css, el, fmt, hideTip, pct, showTip, visible } from "./draw.js";
import { t } from "./catalog.js";

// What is switched off, as the server's spec names (L0H1, attn1, mlp0). It survives new
// prompts and positions: a head exists whatever the text is.
export const ablation = { off: new Set(), mode: "zero" };

const headSpec = (l, h) => `L${l}H${h}`;
let effectSeq = 0;

function thumb(bytes, size) {
  const px = Math.max(2, Math.floor(40 / size));
  const canvas = el("canvas", { width: size * px, height: size * px });
  const g = canvas.getContext("2d");
  for (let r = 0; r < size; r++) {
    for (let c = 0; c < size; c++) {
      g.fillStyle = c > r ? "#eceef1" : css(colour(bytes[r * size + c] / 255, 1, "sequential"));
      g.fillRect(c * px, r * px, px, px);
    }
  }
  return canvas;
}

function withTip(node, text) {
  node.addEventListener("mousemove", (e) => showTip(e, text()));
  node.addEventListener("mouseleave", hideTip);
  // after a mouse click the toggle has run: say the new state (keyboard clicks have no spot)
  node.addEventListener("click", (e) => e.detail && showTip(e, text()));
  return node;
}

// Mark every switch from the current set, without rebuilding (thumbnails stay drawn).
function markGrid(grid) {
  for (const b of grid.querySelectorAll("[data-spec]")) {
    const off = ablation.off.has(b.dataset.spec);
    b.classList.toggle("off", off);
    b.setAttribute("aria-pressed", off ? "true" : "false");
    b.dataset.off = off ? "1" : "0";
    if (b.dataset.head !== undefined) b.classList.toggle("covered", ablation.off.has(`attn${b.dataset.layer}`));
  }
}

function grid(ctx, heads, onChange) {
  const m = ctx.state.model;
  const rows = heads.layers.map((layer, l) =>
    el(
      "div",
      { class: "abl-row" },
      el("span", { class: "abl-layer", text: t("page.block-n", { l }) }),
      el(
        "div",
        { class: "abl-heads" },
        layer.map((b64, h) => {
          const bytes = Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0));
          const spec = headSpec(l, h);
          const button = el(
            "button",
            { class: "abl-head", "data-testid": "ablate-head", "data-spec": spec, "data-layer": l, "data-head": h, onclick: () => onChange(spec) },
            thumb(bytes, heads.size),
            el("span", { text: `H${h}` }),
          );
          return withTip(button, () =>
            t(ablation.off.has(`attn${l}`) ? "page.interpret.abl-covered" : ablation.off.has(spec) ? "page.interpret.abl-head-off" : "page.interpret.abl-head-on", { l, h }),
          );
        }),
      ),
      withTip(
        el("button", { class: "abl-part", "data-testid": "ablate-attn", "data-spec": `attn${l}`, "data-layer": l, text: t("page.interpret.abl-attn"), onclick: () => onChange(`attn${l}`) }),
        () => t(ablation.off.has(`attn${l}`) ? "page.interpret.abl-attn-off" : "page.interpret.abl-attn-on", { l }),
      ),
      withTip(
        el("button", { class: "abl-part", "data-testid": "ablate-mlp", "data-spec": `mlp${l}`, "data-layer": l, text: t("page.interpret.abl-mlp"), onclick: () => onChange(`mlp${l}`) }),
        () => t(ablation.off.has(`mlp${l}`) ? "page.interpret.abl-mlp-off" : "page.interpret.abl-mlp-on", { l }),
      ),
    ),
  );
  const box = el(
    "figure",
    { class: "abl-grid", "data-testid": "ablation-grid", style: { "--heads": m.n_head } },
    el("figcaption", { text: t("page.interpret.abl-grid", { a: heads.start, b: heads.start + heads.size - 1 }) }),
    rows,
  );
  markGrid(box);
  return box;
}

function effectView(ctx, d) {
  const rows = d.diff
    .slice()
    .sort((a, b) => Math.max(b.before, b.after) - Math.max(a.before, a.after))
    .slice(0, 12);
  const max = Math.max(...rows.flatMap((r) => [r.before, r.after]), 1e-12);
  const tok = ctx.state.trace.tokens[d.position]?.text ?? "";
  const width = (p) => `${(p / max) * 100}%`;
  return [
    el("h4", { text: t("page.interpret.abl-effect", { p: d.position, tok: `“${visible(tok)}”` }) }),
    el("div", {
      class: "abl-kl",
      "data-testid": "ablation-kl",
      "data-kl": d.kl === null ? "inf" : String(d.kl),
      text: t("page.interpret.abl-kl", { kl: d.kl === null ? "∞" : fmt(d.kl, 5) }),
    }),
    el(
      "p",
      { class: "hint abl-list" },
      `${t("page.interpret.abl-off-list", { mode: t(d.mode === "mean" ? "page.interpret.abl-mean" : "page.interpret.abl-zero") })} `,
      d.ablations.map((a) => el("code", { text: a })),
    ),
    el(
      "div",
      { class: "abl-bars", "data-testid": "ablation-diff" },
      rows.map((r) => {
        const up = r.change >= 0;
        return el(
          "div",
          { class: "abl-bar", "data-testid": "ablation-row", "data-id": r.id, "data-before": r.before, "data-after": r.after },
          el("span", { class: "tok", "data-verbatim": "", text: `“${visible(r.token)}”` }),
          el(
            "span",
            { class: "track" },
            el("span", { class: "before", style: { width: width(r.before) } }),
            el("span", { class: `after ${up ? "up" : "down"}`, style: { width: width(r.after) } }),
          ),
          el("span", { class: "val", text: `${pct(r.before)} → ${pct(r.after)}` }),
          el("span", { class: `chg ${up ? "up" : "down"}`, text: `Δ ${up ? "+" : "−"}${pct(Math.abs(r.change))}` }),
        );
      }),
    ),
    el("p", { class: "hint", text: t("page.interpret.abl-legend") }),
  ];
}

async function updateEffect(ctx, box, known = null) {
  const seq = ++effectSeq;
  const { state } = ctx;
  if (!ablation.off.size) {
    box.dataset.state = "none";
    box.replaceChildren(el("p", { class: "hint", text: t("page.interpret.abl-none-off") }));
    return;
  }
  box.dataset.state = "loading";
  box.classList.add("loading");
  if (!box.firstChild) box.append(el("p", { class: "hint", text: t("page.interpret.abl-updating") }));
  try {
    const body = { ids: state.ids, ablate: [...ablation.off].sort(), mode: ablation.mode, position: state.position };
    const d = known ?? (await ctx.post("/api/ablate", body));
    if (seq !== effectSeq) return;
    box.replaceChildren(...effectView(ctx, d));
    box.dataset.state = "ready";
  } catch (err) {
    if (seq !== effectSeq) return;
    box.dataset.state = "error";
    box.replaceChildren(el("div", { class: "error inline", "data-testid": "ablation-error", text: t("page.error-line", { message: err.message }) }));
  } finally {
    if (seq === effectSeq) box.classList.remove("loading");
  }
}

export async function renderAblation(ctx, { controls }) {
  const { state } = ctx;
  const heads = await ctx.post("/api/heads", { ids: state.ids, position: state.position });
  const effect = el("section", { class: "viz abl-effect", "data-testid": "ablation-effect" });
  const count = el("span", { class: "hint", "data-testid": "ablate-count" });
  const reset = el("button", { "data-testid": "ablate-reset", text: t("page.interpret.abl-reset") });
  const modes = el(
    "div",
    { class: "segmented", "data-testid": "ablate-modes" },
    ["zero", "mean"].map((mode) =>
      el("button", { "data-testid": "ablate-mode", "data-mode": mode, text: t(mode === "mean" ? "page.interpret.abl-mean" : "page.interpret.abl-zero") }),
    ),
  );
  const specInput = el("input", { type: "text", "data-testid": "ablate-spec", placeholder: "L0H1, attn1, mlp0, L1H*", "data-verbatim": "all", spellcheck: "false" }); // the syntax itself
  const specError = el("div", { class: "error inline", "data-testid": "ablate-spec-error", role: "alert", hidden: true });
  let gridBox = null;

  const refresh = (known = null) => {
    markGrid(gridBox);
    sayScope(ablation.off.size);
    count.textContent = t("page.interpret.abl-off-count", { n: ablation.off.size });
    reset.disabled = ablation.off.size === 0;
    for (const b of modes.children) b.classList.toggle("active", b.dataset.mode === ablation.mode);
    updateEffect(ctx, effect, known);
  };
  const toggle = (spec) => {
    if (ablation.off.has(spec)) ablation.off.delete(spec);
    else ablation.off.add(spec);
    specError.hidden = true;
    refresh();
  };
  reset.addEventListener("click", () => {
    ablation.off.clear();
    specError.hidden = true;
    refresh();
  });
  for (const b of modes.children) {
    b.addEventListener("click", () => {
      ablation.mode = b.dataset.mode;
      refresh();
    });
  }
  // Typed specs are checked by the server (the one parser); its canonical list becomes the set.
  const addByName = async (e) => {
    e.preventDefault();
    const typed = specInput.value.split(/[\s,;]+/).filter(Boolean);
    if (!typed.length) return;
    try {
      const body = { ids: state.ids, ablate: [...ablation.off, ...typed].sort(), mode: ablation.mode, position: state.position };
      const d = await ctx.post("/api/ablate", body);
      ablation.off = new Set(d.ablations);
      specError.hidden = true;
      specInput.value = "";
      refresh(d);
    } catch (err) {
      specError.textContent = t("page.error-line", { message: err.message });
      specError.hidden = false;
    }
  };
  controls.append(
    el("span", { class: "select" }, el("span", { text: t("page.interpret.abl-mode") }), modes),
    reset,
    count,
    el(
      "form",
      { class: "abl-form", onsubmit: addByName },
      el("label", {}, el("span", { text: t("page.interpret.abl-by-name") }), specInput),
      el("button", { type: "submit", "data-testid": "ablate-add", text: t("page.interpret.abl-add") }),
    ),
    specError,
  );
  gridBox = grid(ctx, heads, toggle);
  refresh();
  const scope = el("p", { class: "abl-scope", "data-testid": "ablation-scope", text: t("page.picture.abl-scope") });
  return [scope, gridBox, effect];
}

// The switches change this panel's numbers only; the sidebar says so while any is off.
function sayScope(n) {
  const panel = document.getElementById("sampling");
  if (!panel) return;
  let note = panel.querySelector("[data-testid=ablation-scope-note]");
  if (!n) {
    note?.remove();
    return;
  }
  if (!note) {
    note = el("p", { class: "abl-scope small", "data-testid": "ablation-scope-note" });
    panel.querySelector("#sampling-sub")?.after(note);
  }
  note.textContent = t("page.picture.abl-scope-side", { n });
}
