// /rnn's training timeline: the samples the model kept while it trained (GET
// /api/rnn/timeline), drawn with the same seed and prime at each iteration, so a slider moves
// through the model's own progress from noise to spaced "words" to sentences. And the unit
// the page opens on: one the cell finder ranks, not layer 0 unit 0.

import { getJSON } from "./api.js";
import { el, fmt } from "./draw.js";
import { t } from "./catalog.js";

// The unit the page opens on, for the first feature the finder ranked units for: the best one
// that lights up (red) where the feature is, its rule "value > t" (for a measure, r > 0), if it
// scores at least 90% of the first on the held-out text; else the first. A unit ranked first
// because it goes dark on the feature (War and Peace's 1:234 c, held-out F1 0.61, r −0.51) shows
// the quotes as its palest stretch of red; 1:71 c (F1 0.61, r 0.48) turns them red, the rest blue.
export function topUnit(report) {
  const lit = (u) => (u.direction ? u.direction === ">" : u.r_select > 0);
  const score = (u) => u.f1 ?? Math.abs(u.r);
  for (const f of report?.features ?? []) {
    if (!f.best?.length) continue;
    const first = f.best[0];
    const unit = f.best.find((u) => lit(u) && score(u) >= 0.9 * score(first)) ?? first;
    return { ...unit, feature: f.name };
  }
  return null;
}

let panel = null;
let timeline = null;

export async function showTimeline(modelName, aside) {
  timeline = null;
  if (!panel) {
    panel = el("section", { class: "panel", "data-testid": "rnn-timeline", id: "rnn-timeline" });
    aside.append(panel);
  }
  panel.hidden = true;
  try {
    timeline = await getJSON(`/api/rnn/timeline?${new URLSearchParams({ model: modelName })}`);
  } catch {
    return; // a model that kept no timeline: no panel
  }
  renderTimeline();
}

export function renderTimeline() {
  if (!panel || !timeline) return;
  const samples = timeline.samples;
  const slider = el("input", {
    type: "range",
    min: 0,
    max: samples.length - 1,
    step: 1,
    value: samples.length - 1,
    "data-testid": "rnn-timeline-slider",
    "aria-label": t("page.picture.tl-slider"),
    style: { width: "100%" },
  });
  const label = el("div", { class: "muted small-text", "data-testid": "rnn-timeline-label" });
  const text = el("pre", { class: "rnn-sample-out", "data-testid": "rnn-timeline-text" });
  const show = () => {
    const s = samples[Number(slider.value)];
    const loss = s.train_loss !== null ? ` · ${t("page.picture.tl-loss", { loss: fmt(s.train_loss, 4) })}` : "";
    // the held-out loss where the run measured one: a gap to the train loss is over-fitting
    const val = s.val_loss !== null ? ` · ${t("page.rnn.tl-val-loss", { loss: fmt(s.val_loss, 4) })}` : "";
    label.textContent = `${t("page.picture.tl-iteration", { i: s.iteration.toLocaleString("en-US") })}${loss}${val}`;
    text.textContent = s.text;
    panel.dataset.iteration = s.iteration;
  };
  slider.addEventListener("input", show);
  panel.replaceChildren(
    el("h2", { text: t("page.picture.tl-title") }),
    el("p", { class: "muted small-text", text: t("page.picture.tl-note", { seed: timeline.seed, n: timeline.length, corpus: timeline.corpus ?? "" }) }),
    slider,
    label,
    text,
  );
  show();
  panel.hidden = false;
}
