// Errors in the reader's language. The server answers every failure with its line, the
// catalog id of the message (code) and the values it fills in (params; a value that is a
// message itself is {code, params}); the page says the message from the catalog, as the CLI
// and Python do. Where the page has its own words for a message (naming its controls, not the
// Python API's options), PAGE_WORDS names them, keyed by the catalog id. A code the catalog
// does not have keeps the server's line.

import { has, t } from "./catalog.js";

// catalog id of the server's message -> the page's own words for it, where it has some: the
// id and values to say instead, or null to say the server's message
const typed = (spec) => String(spec).replace(/^(['"])(.*)\1$/, "$2"); // the spec as typed, not its repr
const PAGE_WORDS = {
  // an ablation typed in the Ablation view's box: its own words, naming the numbers it takes
  "error.ablation.no-layer": (p) => ["page.error.ablation-no-layer", { ...p, spec: typed(p.spec) }],
  "error.ablation.no-head": (p) => ["page.error.ablation-no-head", { ...p, spec: typed(p.spec) }],
  "error.ablation.unreadable": (p) => ["page.error.ablation-unreadable", { spec: typed(p.spec) }],
  // an empty prompt box, refused by the request's schema: "the prompt is empty"
  "error.web.invalid-field": (p) =>
    ["text", "prompt"].includes(p.field) && p.problem?.code === "error.web.schema.string-too-short"
      ? ["page.error.empty-prompt", {}]
      : null,
};

// The page's own errors (no server answer to read).
const PAGE_ERRORS = {
  unreachable: "page.error.unreachable",
  internal: "page.error.internal",
};

// Params as the catalog fills them in: numbers and text as the server sent them, a message
// inside ({code, params}) said in the same language.
function values(params) {
  const out = {};
  for (const [name, value] of Object.entries(params ?? {})) {
    const message = value && typeof value === "object" && typeof value.code === "string";
    out[name] = message ? errorText(value.code, value.params, "") : value;
  }
  return out;
}

// The line to show for an error with this code, params and server line.
export function errorText(code, params = {}, message = "") {
  if (code in PAGE_ERRORS) return t(PAGE_ERRORS[code]);
  const [id, vars] = PAGE_WORDS[code]?.(params ?? {}) ?? [code, params];
  if (id && has(id)) {
    try {
      return t(id, values(vars));
    } catch {
      // the server's values do not fit this page's catalog (an older page): its own line
    }
  }
  return message || t("page.error.generic", { code: code ?? "error" });
}

// Why a generation stopped ("end of text", "context full", "done"), in the page's language.
const REASONS = {
  "end of text": "page.reason.end-of-text",
  "context full": "page.reason.context-full",
  done: "page.reason.done",
  stopped: "page.reason.stopped",
};

export function reasonText(reason) {
  return REASONS[reason] ? t(REASONS[reason]) : reason;
}
