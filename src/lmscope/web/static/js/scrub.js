// Scrubbing through positions: a slider under the token chips and ← → / Home / End on a chip.
// The readout says what followed each position and what the model predicted there; while an
// attention step (one that shows a head) is open, the chips are tinted by the selected position's attention row
// (layer and head of the step), so stepping through generated text shows where each new
// token looked.

import { stepInfo } from "./catalogue.js";
import { el, pct, visible } from "./draw.js";
import { t } from "./catalog.js";
import { quotedToken } from "./chars.js";

let tintSeq = 0;

export function buildScrubber(box, tokens, select) {
  const slider = el("input", {
    type: "range",
    min: 0,
    max: 0,
    step: 1,
    value: 0,
    id: "position-slider",
    "data-testid": "position-slider",
    oninput: (e) => select(Number(e.target.value)),
  });
  box.replaceChildren(
    el("label", { class: "scrub-label", for: "position-slider", id: "scrub-label" }),
    slider,
    el("span", { class: "scrub-readout", id: "scrub-readout", "data-testid": "position-readout" }),
    // one line that is always there (the keys, or what the tint means): nothing below moves
    el("span", { class: "scrub-note", id: "scrub-note", "data-testid": "scrub-note" }),
  );
  // Arrow keys move along the chips; stop them here so the page's step navigation keeps
  // the arrow keys everywhere else.
  tokens.addEventListener("keydown", (e) => {
    const chip = e.target.closest(".chip");
    if (!chip || chip.classList.contains("pending")) return;
    const n = tokens.querySelectorAll(".chip:not(.pending)").length;
    const here = Number(chip.dataset.position);
    const to = { ArrowLeft: here - 1, ArrowRight: here + 1, Home: 0, End: n - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    if (to < 0 || to >= n) return;
    select(to);
    tokens.querySelector(`.chip[data-position="${to}"]`)?.focus();
  });
}

export function updateScrubber(state, { post, tokenText, promptTexts }) {
  const slider = document.getElementById("position-slider");
  if (!slider || !state.trace) return;
  const n = state.ids.length;
  const p = state.position;
  slider.max = String(Math.max(0, n - 1));
  slider.value = String(p);
  slider.disabled = n < 2 || state.busy;
  document.getElementById("scrub-label").textContent = t("page.interpret.scrub-at", { p, last: n - 1 });
  slider.title = t("page.interpret.scrub-hint-long");
  updateReadout(state, { tokenText, promptTexts });
  tintChips(state, post);
}

// The sampling controls reshape only the sampling panel's numbers: the readout's are always the
// model's own (T = 1, nothing cut), and it says so once a setting makes the two differ.
function samplingChanges(s) {
  return s.greedy || s.temperature !== 1 || s.top_k > 0 || s.top_p < 1 || s.min_p > 0;
}

export function updateReadout(state, { tokenText, promptTexts }) {
  const readout = document.getElementById("scrub-readout");
  if (!readout || !state.trace) return;
  const n = state.ids.length;
  const p = state.position;
  const pred = state.trace.predictions[p];
  const word = (id) => `“${visible(tokenText(id))}”`;
  const parts = [quotedToken(promptTexts(p))];
  if (p + 1 < n) parts.push(t("page.interpret.scrub-next", { tok: word(state.ids[p + 1]), p: pct(pred.next_prob) }));
  else parts.push(t("page.interpret.scrub-last"));
  parts.push(t("page.interpret.scrub-top", { tok: word(pred.top_ids[0]), p: pct(pred.top_probs[0]) }));
  const own = samplingChanges(state.sampling) ? t("page.interpret.scrub-own") : "";
  readout.textContent = parts.join(" · ") + own;
  readout.title = t("page.interpret.scrub-own-long");
  readout.dataset.position = String(p);
}

function clearTint(tokens) {
  tokens.classList.remove("attn-tint");
  for (const chip of tokens.querySelectorAll(".chip")) {
    delete chip.dataset.attn;
    chip.style.removeProperty("--attn");
    chip.classList.remove("dark");
  }
}

async function tintChips(state, post) {
  const seq = ++tintSeq;
  const tokens = document.getElementById("tokens");
  const note = document.getElementById("scrub-note");
  if (!stepInfo(state.step)?.head) {  // an attention step shows one head
    clearTint(tokens);
    note.textContent = t("page.interpret.scrub-hint");
    note.title = t("page.interpret.scrub-hint-long");
    return;
  }
  const { layer, head, position } = state;
  note.textContent = t("page.interpret.attn-tint", { p: position, l: layer, h: head });
  note.title = `${t("page.interpret.attn-tint-long", { p: position, l: layer, h: head })} ${t("page.interpret.scrub-hint-long")}`;
  // same body (and key order) as the step's own request: the memo answers it
  const body = { ids: state.ids, layer, head, position };
  let a;
  try {
    a = await post("/api/attention", body);
  } catch {
    return; // the step shows the error
  }
  if (seq !== tintSeq) return;
  clearTint(tokens);
  tokens.classList.add("attn-tint");
  const row = a.row.pattern;
  for (const chip of tokens.querySelectorAll(".chip")) {
    const j = Number(chip.dataset.position);
    if (j >= row.length || row[j] === null) continue;
    // sqrt, like the heatmaps: small weights stay visible
    const alpha = Math.sqrt(Math.max(0, row[j]));
    chip.dataset.attn = String(row[j]);
    chip.style.setProperty("--attn", alpha.toFixed(3));
    chip.classList.toggle("dark", alpha > 0.6);
  }
}
