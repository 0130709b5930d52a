// The precision the page's numbers are in (GET /api/model: dtype), and in bfloat16 or float16
// what it costs on the current prompt against float32: the largest change of any logit and
// whether the top-5 next tokens changed, measured on request (POST /api/precision).
// A separate piece: it adds one line under the model facts and reads the prompt box.

import { getJSON, postJSON } from "./api.js";
import { minus } from "./draw.js";
import { addStrings, t } from "./i18n.js";

addStrings(
  {
    precisionIs: "Numbers in {dtype}",
    precisionExact: "Numbers in float32, the exact reference",
    precisionMeasure: "compare with float32",
    precisionMeasuring: "measuring against float32…",
    precisionResult:
      "max |Δlogit| {delta} over {tokens} tokens against {reference}; top-{k} next tokens {verdict}",
    precisionSame: "unchanged",
    precisionReordered: "the same, reordered",
    precisionChanged: "changed",
    precisionTop1: "; another top token at {n} position(s)",
  },
  {
    precisionIs: "数值精度：{dtype}",
    precisionExact: "数值精度：float32（精确的参照）",
    precisionMeasure: "与 float32 比较",
    precisionMeasuring: "正在与 float32 比较…",
    precisionResult:
      "{tokens} 个词元上 logit 的最大变化 |Δ| 为 {delta}（对照：{reference}）；前 {k} 个候选词元{verdict}",
    precisionSame: "不变",
    precisionReordered: "相同但顺序改变",
    precisionChanged: "有变化",
    precisionTop1: "；{n} 个位置的首选词元不同",
  },
);

let dtype = null;
let result = null; // the last measurement, shown until the prompt changes

function render(line) {
  line.replaceChildren();
  if (dtype === null) return;
  const label = document.createElement("span");
  label.textContent = dtype === "float32" ? t("precisionExact") : t("precisionIs", { dtype });
  line.append(label);
  if (dtype === "float32") return;
  if (result === null) {
    const button = document.createElement("button");
    button.type = "button";
    button.textContent = t("precisionMeasure");
    button.setAttribute("data-testid", "precision-measure");
    button.addEventListener("click", () => measure(line));
    line.append(" · ", button);
    return;
  }
  const out = document.createElement("span");
  out.setAttribute("data-testid", "precision-result");
  if (result.pending) {
    out.textContent = t("precisionMeasuring");
  } else if (result.error) {
    out.textContent = result.error;
  } else {
    const verdict = result.same_top_k
      ? t("precisionSame")
      : result.same_top_k_set
        ? t("precisionReordered")
        : t("precisionChanged");
    out.textContent =
      t("precisionResult", {
        delta: minus(result.max_abs_delta_logit.toPrecision(3)),
        tokens: result.tokens,
        reference: result.reference,
        k: result.top_k,
        verdict,
      }) +
      (result.top1_changed_positions ? t("precisionTop1", { n: result.top1_changed_positions }) : "");
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
    result = { error: String(err.message ?? err) };
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
  // the page switches language on this button; redraw in the new one after it did
  document.getElementById("lang")?.addEventListener("click", () => setTimeout(() => render(line)));
  dtype = (await getJSON("/api/model")).dtype ?? "float32";
  render(line);
}

start();
