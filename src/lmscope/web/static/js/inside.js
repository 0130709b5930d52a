// The "look inside" views next to the 20 steps: logit lens, ablation, compare. They share the
// step panel and its frame (title, explanation, controls, body); each view fetches what it
// draws from the server and computes no model math itself.

import { renderAblation } from "./ablation.js";
import { renderCompare } from "./compare.js";
import { el, focusedControl, hideTip, refocus } from "./draw.js";
import { colon, t } from "./catalog.js";
import { renderLens } from "./lens.js";

export const VIEW_KEYS = ["lens", "ablation", "compare"];
const RENDER = { lens: renderLens, ablation: renderAblation, compare: renderCompare };
const ICONS = { lens: "◎", ablation: "⊘", compare: "⇄" };
const VIEWS = {
  lens: { title: "page.interpret.view-lens", explain: "page.interpret.view-lens-explain" },
  ablation: { title: "page.interpret.view-ablation", explain: "page.interpret.view-ablation-explain" },
  compare: { title: "page.interpret.view-compare", explain: "page.interpret.view-compare-explain" },
};
const USES_POSITION = new Set(["lens", "ablation"]);

let renderSeq = 0;

// hide: views this server cannot show ("compare" without a second model: issue 38)
export function viewNav(active, open, hide = []) {
  return el(
    "div",
    { class: "view-nav", "data-testid": "view-nav" },
    el("h2", { text: t("page.interpret.look-inside") }),
    el(
      "ol",
      {},
      VIEW_KEYS.filter((key) => !hide.includes(key)).map((key) =>
        el(
          "li",
          {},
          el(
            "button",
            { class: key === active ? "active" : "", "data-view": key, onclick: () => open(key) },
            el("span", { class: "num", text: ICONS[key] }),
            t(VIEWS[key].title),
          ),
        ),
      ),
    ),
  );
}

export async function renderView(container, key, ctx) {
  const seq = ++renderSeq;
  const { state } = ctx;
  hideTip(); // whatever it described is about to be replaced
  const controls = el("div", { class: "step-controls" });
  const body = el("div", { class: "step-body loading", "data-view": key });
  if (USES_POSITION.has(key)) {
    const tok = state.trace.tokens[state.position];
    controls.append(
      el(
        "span",
        { class: "position-label", "data-testid": "position-label" },
        `${t("page.position-n", { p: state.position })}${colon()}`,
        el("code", { text: `“${tok ? tok.text.replace(/ /g, "·").replace(/\n/g, "↵") : ""}”` }),
        el("span", { class: "hint", text: ` — ${t("page.click-position")}` }),
      ),
    );
  }
  const focus = focusedControl(container);
  container.replaceChildren(
    el("header", {}, el("h3", { "data-testid": "step-title" }, el("span", { class: "num", text: ICONS[key] }), t(VIEWS[key].title))),
    el("p", { class: "explain", "data-testid": "step-explain", text: t(VIEWS[key].explain) }),
    controls,
    body,
  );
  const refresh = () => renderView(container, key, ctx);
  try {
    const content = await RENDER[key](ctx, { controls, refresh, current: () => seq === renderSeq });
    if (seq !== renderSeq) return;
    body.classList.remove("loading");
    body.replaceChildren(...[content].flat().filter(Boolean));
    refocus(container, focus); // the view's own controls (the compare list) came with it
  } catch (err) {
    if (seq !== renderSeq) return;
    body.classList.remove("loading");
    body.replaceChildren(el("div", { class: "error inline", "data-testid": "step-error", text: t("page.error-line", { message: err.message }) }));
  }
}
