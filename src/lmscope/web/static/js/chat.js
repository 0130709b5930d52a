// The chat toggle: when the served model has a chat template (an instruction-tuned model such
// as SmolLM2), the prompt can be sent as one user turn of a conversation. The server wraps the
// text (POST /api/trace with chat: true), so the token chips show the special tokens the model
// really reads; Generate then stops at the end of its answer, and the box keeps the user's turn
// (editing it asks anew). Plain completion stays the default.

import { el } from "./draw.js";
import { t } from "./catalog.js";

let input = null;
let label = null;

// The toggle, or null for a model without a template; onChange(on) runs when it is flipped.
export function chatToggle(model, onChange) {
  if (!model.chat) return null;
  input = el("input", { type: "checkbox", "data-testid": "chat-toggle", onchange: () => onChange(input.checked) });
  label = el("span", {});
  const box = el("label", { class: "check chat-toggle", style: { marginLeft: "auto" } }, input, label);
  labelChatToggle();
  return box;
}

export function labelChatToggle() {
  if (!input) return;
  label.textContent = ` ${t("page.modern.chat")}`;
  label.parentElement.title = t("page.modern.chat-tip");
}

export function chatOn() {
  return Boolean(input?.checked);
}
