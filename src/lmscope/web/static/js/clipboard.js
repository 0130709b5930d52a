// Copy a command with a button beside it, the one way the page does it (the model menu's
// commands, /why's re-run commands). Where the page may not write the clipboard (an insecure
// origin, a refused permission) the command's text is selected instead, for Ctrl+C, and the
// button says so; either way it says "Copy" again after a moment.

import { t } from "./catalog.js";

export async function copyCommand(button, text, code) {
  try {
    await navigator.clipboard.writeText(text);
    button.textContent = t("page.copy.copied");
  } catch {
    const range = document.createRange();
    range.selectNodeContents(code);
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
    button.textContent = t("page.copy.selected");
  }
  setTimeout(() => (button.textContent = t("page.copy.copy")), 1500);
}
