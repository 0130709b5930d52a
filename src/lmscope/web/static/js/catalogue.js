// The 20 steps as the server lists them (GET /api/steps, from lmscope.explain.catalogue):
// their order, the catalog ids of their titles and explanations for the served architecture
// with the model's values those fill in, the probes each reads, and whether it shows one layer
// or one head. Nothing here lists them again; the words are the catalog's (catalog.js), so a
// change of language says them again without asking the server.

import { t } from "./catalog.js";
import { fmt } from "./draw.js";

let steps = [];
const byKey = new Map();

export function setSteps(list) {
  steps = list;
  byKey.clear();
  for (const step of list) byKey.set(step.key, step);
}

export function stepKeys() {
  return steps.map((s) => s.key);
}

export function stepInfo(key) {
  return byKey.get(key);
}

function say(text, vars) {
  return text ? t(text.id, { ...text.values, ...vars }) : "";
}

// A step's title and explanation in the page's language, filled with the model's values
// (and vars, which the page knows better: the layer shown...).
export function stepText(key, vars = {}) {
  const texts = byKey.get(key)?.texts;
  if (!texts) return { title: key, body: "", plain: "" };
  // plain: one or two sentences for a beginner, the same for every architecture
  // (step.<key>.plain, listed by explain.catalogue.message_ids)
  const plain = t(`step.${key}.plain`);
  return { title: say(texts.title, vars), body: say(texts.text, vars), plain: plain === `step.${key}.plain` ? "" : plain };
}

// The model's facts the step texts fill in ({n_layer}, {vocab}, {scale}...), from
// GET /api/model; the page and the notebook's widgets both set them (catalog.setFacts).
export function modelFacts(m) {
  const kv = m.n_kv_head ?? m.n_head;
  return {
    model: m.name,
    n_layer: m.n_layer,
    n_head: m.n_head,
    d_model: m.d_model,
    d_head: m.d_head,
    d_mlp: m.d_mlp,
    n_kv_head: kv,
    kv_group: m.n_head / kv,
    vocab: m.vocab_size.toLocaleString("en-US"),
    n_ctx: m.n_ctx.toLocaleString("en-US"),
    scale: fmt(1 / Math.sqrt(m.d_head), 4),
  };
}
