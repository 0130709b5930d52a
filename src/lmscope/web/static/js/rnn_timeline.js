// /rnn's training timeline: the samples the model kept while it trained (GET
// /api/rnn/timeline), drawn with the same seed and prime at each iteration, so a slider moves
// through the model's own progress from noise to spaced "words" to sentences. And the unit
// the page opens on: one the cell finder ranks, not layer 0 unit 0.

import { getJSON } from "./api.js";
import { el, fmt } from "./draw.js";
import { t } from "./catalog.js";

// A unit shows its feature when it scores at least this on the held-out text (F1 of its rule,
// or |r| for a measure). The code LSTM's best "inside a string" unit scores 0.45 and goes dark
// in strings: no unit holds that feature, and the page opened on it.
const SHOWS = 0.5;

// The unit the page opens on, for the first feature whose first-ranked unit shows it (when none
// does, the first feature the finder ranked units for): the best one that lights up (red) where
// the feature is, its rule "value > t" (for a measure, r > 0), if it scores at least 90% of the
// first on the held-out text; else the first. A unit ranked first because it goes dark on the
// feature (War and Peace's 1:234 c, held-out F1 0.61, r −0.51) shows the quotes as its palest
// stretch of red; 1:71 c (F1 0.61, r 0.48) turns them red, the rest blue.
export function topUnit(report) {
  const lit = (u) => (u.direction ? u.direction === ">" : u.r_select > 0);
  const score = (u) => u.f1 ?? Math.abs(u.r);
  const ranked = (report?.features ?? []).filter((f) => f.best?.length);
  const f = ranked.find((g) => score(g.best[0]) >= SHOWS) ?? ranked[0];
  if (!f) return null;
  const first = f.best[0];
  const unit = f.best.find((u) => lit(u) && score(u) >= 0.9 * score(first)) ?? first;
  return { ...unit, feature: f.name };
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
