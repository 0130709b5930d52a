// The 20 steps as the server lists them (GET /api/steps, from lmscope.explain.catalogue):
// their order, titles and explanations in both languages for the served architecture, the
// probes each reads, and whether it shows one layer or one head. Nothing here lists them again.

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
