// The precision the page's numbers are in (GET /api/model: dtype), and in bfloat16 or float16
// what it costs on the current prompt against float32: the largest change of any logit and
// whether the top-5 next tokens changed, measured on request (POST /api/precision).
// A separate piece: it adds one line under the model facts and reads the prompt box.

import { getModel, postJSON } from "./api.js";
import { minus } from "./draw.js";
import { t } from "./catalog.js";
import { errorText } from "./errors.js";

let dtype = null;
let result = null; // the last measurement, shown until the prompt changes

function render(line) {
  line.replaceChildren();
  if (dtype === null) return;
  const label = document.createElement("span");
  label.textContent = dtype === "float32" ? t("page.precision.exact") : t("page.precision.is", { dtype });
  line.append(label);
  if (dtype === "float32") return;
  if (result === null) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = t("page.precision.measure");
    button.setAttribute("data-testid", "precision-measure");
    button.addEventListener("click", () => measure(line));
    line.append(" · ", button);
    return;
  }
  const out = document.createElement("span");
  out.setAttribute("data-testid", "precision-result");
  if (result.pending) {
    out.textContent = t("page.precision.measuring");
  } else if (result.error) {
    const err = result.error;
    out.textContent = err.code ? errorText(err.code, err.params, err.original) : String(err.message ?? err);
  } else {
    const verdict = result.same_top_k
      ? t("page.precision.same")
      : result.same_top_k_set
        ? t("page.precision.reordered")
        : t("page.precision.changed");
    out.textContent = t("page.precision.result", {
      delta: minus(result.max_abs_delta_logit.toPrecision(3)),
      tokens: result.tokens,
      reference: t(result.reference === "upcast" ? "page.precision.ref-upcast" : "page.precision.ref-float32"),
      k: result.top_k,
      verdict,
      changed: result.top1_changed_positions ?? 0,
    });
  }
  line.append(" · ", out);
}

async function measure(line) {
  const text = document.getElementById("prompt")?.value ?? "";
  if (!text) return;
  result = { pending: true };
  render(line);
  try {
    result = await postJSON("/api/precision", { text, top_k: 5 });
  } catch (err) {
    result = { error: err };
  }
  render(line);
}

async function start() {
  const facts = document.getElementById("facts");
  if (!facts) return;
  const line = document.createElement("div");
  line.className = "precision";
  line.setAttribute("data-testid", "precision");
  line.style.fontSize = "0.85em";
  facts.insertAdjacentElement("afterend", line);
  document.getElementById("prompt")?.addEventListener("input", () => {
    if (result !== null) {
      result = null;
      render(line);
    }
  });
  // the page switched language: say it again in the new one
  document.addEventListener("lmscope:lang", () => render(line));
  dtype = (await getModel()).dtype ?? "float32";
  render(line);
}

// no model facts (a ?model= this server does not hold, or no server): the explainer says why
// (app.js), and the precision line stays empty instead of an uncaught rejection
start().catch(() => {});
