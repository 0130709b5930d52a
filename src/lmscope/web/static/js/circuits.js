// The Circuits page: induction heads, activation patching and direct logit attribution run on
// the served model (/api/circuits/...), each drawn with its numbers (circuits_views.js), its
// words in the page's language. The ready-made prompt pairs come from the server, which keeps
// only those that fit its model. Errors are one line in the reader's language.

import { getJSON, postJSON } from "./api.js";
import { applyStatic, has, labelLanguageToggle, lang, t, wireLanguageToggle } from "./catalog.js";
import { attributeView, inductionView, patchView } from "./circuits_views.js";
import { el, hideTip } from "./draw.js";
import { errorText } from "./errors.js";
import { afterPress } from "./press.js";

const $ = (id) => document.getElementById(id);
const testid = (id) => document.querySelector(`[data-testid="${id}"]`);

const state = {
  model: null, // /api/model
  examples: [], // /api/circuits/examples
  results: { induction: null, patch: null, attribute: null }, // the last answers, redrawn on a language switch
  errors: { induction: null, patch: null, attribute: null }, // the last errors (ApiError)
  busy: { induction: 0, patch: 0, attribute: 0 },
};

const VIEWS = { induction: inductionView, patch: patchView, attribute: attributeView };

// The page's own words for a field the server names: "right" -> "Right answer".
const FIELDS = {
  right: "page.circuits.patch.right",
  wrong: "page.circuits.patch.wrong",
  token: "page.circuits.attribute.token",
  versus: "page.circuits.attribute.versus",
};

// An error of an experiment, in the page's language: the server's message from the catalog,
// an answer that is not one token said with the form's own field name.
function errorLine(err) {
  if (err.code === "error.circuits.not-one-token" && err.params) {
    const field = FIELDS[err.params.what];
    return t("page.circuits.error.not-one-token", { ...err.params, field: field ? t(field) : err.params.what });
  }
  // said again in the page's current language (the language may have changed since)
  return err.code ? errorText(err.code, err.params, err.original) : err.message;
}

function show(kind) {
  const box = testid(`${kind}-error`);
  const err = state.errors[kind];
  box.hidden = !err;
  box.textContent = err ? t("page.error-line", { message: errorLine(err) }) : "";
  const out = $(`${kind}-result`);
  const result = state.results[kind];
  out.replaceChildren(result ? VIEWS[kind](result, kind === "induction" ? chooseHead : undefined) : []);
  testid(`${kind}-section`).dataset.state = state.busy[kind] ? "running" : err ? "error" : result ? "ready" : "empty";
  testid(`${kind}-status`).textContent = state.busy[kind] ? t("page.circuits.running") : "";
}

async function run(kind, path, body) {
  const ticket = ++state.busy[kind];
  const section = testid(`${kind}-section`);
  section.dataset.state = "running";
  testid(`${kind}-status`).textContent = t("page.circuits.running");
  section.querySelector("button.run").disabled = true;
  try {
    const answer = await postJSON(path, body);
    if (ticket !== state.busy[kind]) return; // a later run replaced this one
    state.results[kind] = answer;
    state.errors[kind] = null;
  } catch (err) {
    if (ticket !== state.busy[kind]) return;
    state.errors[kind] = err;
  }
  state.busy[kind] = 0;
  section.querySelector("button.run").disabled = false;
  afterPress(() => {
    hideTip();
    show(kind);
  });
}

// --- induction ------------------------------------------------------------------------------

function inductionBody(extra = {}) {
  return { length: Number($("induction-length").value), seed: Number($("induction-seed").value), ...extra };
}

// Another head's pattern: the same run (kept by the server), that head.
function chooseHead(layer, head) {
  const r = state.results.induction;
  if (!r) return;
  run("induction", "/api/circuits/induction", { length: r.length, seed: r.seed, layer, head });
}

// --- the example pairs ------------------------------------------------------------------------

// the label of each ready-made pair (lmscope.web.circuits.EXAMPLES), by its key
const EXAMPLE_LABELS = {
  capital: "page.circuits.example.capital",
  opposite: "page.circuits.example.opposite",
  days: "page.circuits.example.days",
  eiffel: "page.circuits.example.eiffel",
  ioi: "page.circuits.example.ioi",
};

function exampleLabel(e) {
  const id = EXAMPLE_LABELS[e.key];
  return id && has(id) ? t(id) : e.key;
}

function fillExamples() {
  for (const id of ["patch-example", "attribute-example"]) {
    const select = $(id);
    const chosen = select.value;
    select.replaceChildren(
      el("option", { value: "", text: t("page.circuits.example-own") }),
      ...state.examples.map((e, i) => el("option", { value: String(i), text: exampleLabel(e) })),
    );
    select.value = chosen;
  }
}

function useExample(kind, index) {
  const e = state.examples[Number(index)];
  if (!e) return;
  if (kind === "patch") {
    $("patch-clean").value = e.clean;
    $("patch-corrupt").value = e.corrupt;
    $("patch-right").value = e.right;
    $("patch-wrong").value = e.wrong;
  } else {
    $("attribute-text").value = e.clean;
    $("attribute-token").value = e.right;
    $("attribute-versus").value = e.wrong;
  }
}

// --- the page ---------------------------------------------------------------------------------

function sayFacts() {
  const m = state.model;
  const facts = $("facts");
  if (!m || !facts) return;
  facts.replaceChildren(
    el("span", { class: "fact", "data-verbatim": "", text: m.name }),
    el("span", { class: "fact", text: t("page.circuits.facts", { layers: m.n_layer, heads: m.n_head }) }),
  );
}

function renderAll() {
  applyStatic();
  document.title = t("page.circuits.title-page");
  labelLanguageToggle($("lang"));
  sayFacts();
  fillExamples();
  for (const kind of Object.keys(VIEWS)) show(kind);
}

function wire() {
  $("induction-form").addEventListener("submit", (e) => {
    e.preventDefault();
    run("induction", "/api/circuits/induction", inductionBody());
  });
  $("patch-form").addEventListener("submit", (e) => {
    e.preventDefault();
    run("patch", "/api/circuits/patch", {
      clean: $("patch-clean").value,
      corrupt: $("patch-corrupt").value,
      right: $("patch-right").value,
      wrong: $("patch-wrong").value,
    });
  });
  $("attribute-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const body = { text: $("attribute-text").value, token: $("attribute-token").value };
    if ($("attribute-versus").value) body.versus = $("attribute-versus").value;
    run("attribute", "/api/circuits/attribute", body);
  });
  $("patch-example").addEventListener("change", (e) => useExample("patch", e.target.value));
  $("attribute-example").addEventListener("change", (e) => useExample("attribute", e.target.value));
  wireLanguageToggle($("lang"), renderAll);
}

async function boot() {
  wire();
  renderAll();
  try {
    const [model, examples] = await Promise.all([getJSON("/api/model"), getJSON("/api/circuits/examples")]);
    state.model = model;
    state.examples = examples.examples;
    $("induction-length").max = String(examples.max_induction_length);
  } catch (err) {
    state.errors.induction = err;
  }
  renderAll();
  for (const [select, kind] of [["patch-example", "patch"], ["attribute-example", "attribute"]]) {
    if (state.examples.length) {
      $(select).value = "0";
      useExample(kind, 0);
    }
  }
  document.body.dataset.ready = "1";
  document.body.dataset.lang = lang();
}

window.lmscopeCircuits = { state }; // for the console and for tests
boot();
