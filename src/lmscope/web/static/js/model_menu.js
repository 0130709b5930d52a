// The model menu in the header (GET /api/models): the model the page explains, the other models
// the server holds (lmscope serve --model A --model B), and the models on this machine it does
// not hold, each with the command that serves it, or why lmscope cannot open it.
//
// Choosing a served model opens the page again with ?model=NAME in its address: every request
// then names that model (api.js), so the whole page is read again from the server and drawn for
// that model's family; reload and back keep the choice. The prompt goes along (sessionStorage).
// The menu is a disclosure: its button opens a panel of links; Escape or a click outside closes
// it, the arrow keys move between its entries.

import { chosenModel, getJSON, keepModelInLinks } from "./api.js";
import { lang, t } from "./catalog.js";
import { compact, diskSize, el } from "./draw.js";
import { copyCommand } from "./clipboard.js";

const KEPT_PROMPT = "lmscope.switch-prompt"; // the prompt carried to the page of another model
const RETRY_MS = 600; // the server is still reading the machine's stores: ask again this soon

let state = { data: null, error: null, open: false };
let retry = null;

const $ = (id) => document.getElementById(id);

// The page's address for the served model `name` (the default one: no ?model=), other
// parameters (?lang=) kept.
export function addressFor(name, isDefault, path = location.pathname) {
  const params = new URLSearchParams(location.search);
  if (isDefault) params.delete("model");
  else params.set("model", name);
  const query = params.toString();
  return `${path}${query ? `?${query}` : ""}${path === location.pathname ? location.hash : ""}`;
}

// The prompt a switch carried here, once (null when none).
export function takeCarriedPrompt() {
  try {
    const text = sessionStorage.getItem(KEPT_PROMPT);
    sessionStorage.removeItem(KEPT_PROMPT);
    return text;
  } catch {
    return null; // storage blocked: the page starts from its example
  }
}

function carryPrompt() {
  const box = $("prompt");
  if (!box || !box.value) return;
  try {
    sessionStorage.setItem(KEPT_PROMPT, box.value);
  } catch {
    // not carried: the other model's page starts from its example
  }
}

function current() {
  const served = state.data?.served ?? [];
  const asked = chosenModel();
  return served.find((m) => (asked === null ? m.default : m.name === asked)) ?? null;
}

// family, parameters, quantization, size: what `lmscope models` shows, in one line
function describe(m) {
  const parts = [];
  if (m.family) parts.push(m.experts ? t("page.models.experts", { family: m.family, experts: m.experts }) : m.family);
  if (m.n_params) parts.push(t("page.models.params", { n: compact(m.n_params) }));
  if (m.n_layer) parts.push(t("page.models.layers", { n: m.n_layer }));
  if (m.quantization) parts.push(m.quantization);
  if (m.size_bytes) parts.push(diskSize(m.size_bytes));
  return parts.join(" · ");
}

function servedItem(m, here) {
  return el(
    "li",
    {},
    el(
      "a",
      {
        class: "model-choice",
        href: addressFor(m.name, m.default),
        "data-testid": "served-model",
        "data-model": m.name,
        "aria-current": m === here ? "true" : null,
        onclick: () => carryPrompt(),
      },
      el("span", { class: "model-name", "data-verbatim": "all", text: m.name }),
      el("span", { class: "model-about", "data-verbatim": "all", text: describe(m) }),
      m === here ? el("span", { class: "model-tag", text: t("page.models.explained") }) : null,
    ),
  );
}

function diskItem(m) {
  const head = el(
    "div",
    { class: "model-head" },
    el("span", { class: "model-name", "data-verbatim": "all", text: m.name }),
    el("span", { class: "model-about", "data-verbatim": "all", text: describe(m) }),
  );
  if (m.problem) {
    return el(
      "li",
      { class: "model-disk cannot", "data-testid": "disk-model", "data-opens": "false" },
      head,
      el("span", { class: "model-why", "data-testid": "disk-model-why", text: m.problem.said }),
    );
  }
  if (m.on_page) {
    // a char model this server already shows on /rnn
    return el(
      "li",
      { class: "model-disk", "data-testid": "disk-model", "data-opens": "true" },
      head,
      el("a", { class: "model-open", href: m.page, "data-testid": "disk-model-page", text: t("page.models.open-rnn") }),
    );
  }
  const code = el("code", { "data-testid": "disk-model-command", text: m.command });
  const button = el("button", {
    type: "button",
    class: "model-copy",
    text: t("page.copy.copy"),
    "aria-label": t("page.models.copy-label", { name: m.name }),
    onclick: () => copyCommand(button, m.command, code),
  });
  return el(
    "li",
    { class: "model-disk", "data-testid": "disk-model", "data-opens": "true" },
    head,
    el("div", { class: "model-command" }, code, button),
    m.page === "/rnn" ? el("span", { class: "model-why", text: t("page.models.rnn-note") }) : null,
  );
}

function diskPart() {
  const d = state.data;
  if (!d.ready) return [el("p", { class: "model-note", text: t("page.models.looking") })];
  const out = [];
  if (d.error) out.push(el("p", { class: "model-note model-why", text: d.error.said }));
  if (!d.on_disk.length) out.push(el("p", { class: "model-note", text: t("page.models.none-on-disk") }));
  else out.push(el("ul", { class: "model-list", "data-testid": "disk-models" }, d.on_disk.map(diskItem)));
  return out;
}

function panelContent() {
  if (state.error) return [el("p", { class: "model-note model-why", text: state.error.message })];
  const here = current();
  const served = state.data.served;
  return [
    el("h3", { text: t("page.models.served", { n: served.length }) }),
    el("ul", { class: "model-list", "data-testid": "served-models" }, served.map((m) => servedItem(m, here))),
    served.length < 2 ? el("p", { class: "model-note", text: t("page.models.serve-several") }) : null,
    el("h3", { text: t("page.models.on-disk") }),
    ...diskPart(),
  ];
}

function render() {
  const button = $("model-menu-button");
  const panel = $("model-menu-panel");
  if (!button || !panel) return;
  const here = current();
  const asked = chosenModel();
  button.replaceChildren(
    el("span", { class: "model-menu-label", text: t("page.models.button") }),
    el("span", { class: "model-menu-name", "data-verbatim": "all", text: here?.name ?? asked ?? "…" }),
    el("span", { class: "model-menu-caret", "aria-hidden": "true", text: "▾" }),
  );
  button.title = t("page.models.button-title");
  if (state.data || state.error) panel.replaceChildren(...panelContent().filter(Boolean));
  else panel.replaceChildren(el("p", { class: "model-note", text: t("page.models.looking") }));
  panel.setAttribute("aria-label", t("page.models.panel"));
  keepModelInLinks();
}

function place() {
  // fixed under the button, inside the window however narrow (a phone: nearly its width)
  const button = $("model-menu-button");
  const panel = $("model-menu-panel");
  const r = button.getBoundingClientRect();
  const width = Math.min(560, window.innerWidth - 16);
  panel.style.width = `${width}px`;
  panel.style.top = `${Math.round(r.bottom + 6)}px`;
  panel.style.left = `${Math.round(Math.max(8, Math.min(r.left, window.innerWidth - width - 8)))}px`;
  panel.style.maxHeight = `${Math.max(160, window.innerHeight - r.bottom - 18)}px`;
}

function entries() {
  return [...$("model-menu-panel").querySelectorAll("a, button")];
}

function setOpen(open, focusButton = false) {
  const button = $("model-menu-button");
  const panel = $("model-menu-panel");
  state.open = open;
  button.setAttribute("aria-expanded", String(open));
  panel.hidden = !open;
  if (open) {
    place();
    load(); // the listing may have changed (a model pulled into Ollama meanwhile: not re-read)
    const first = panel.querySelector("a[aria-current]") ?? entries()[0];
    first?.focus();
  } else if (focusButton) button.focus();
}

function onKey(e) {
  if (!state.open) return;
  if (e.key === "Escape") {
    e.preventDefault();
    setOpen(false, true);
    return;
  }
  if (e.key !== "ArrowDown" && e.key !== "ArrowUp") return;
  const all = entries();
  if (!all.length) return;
  e.preventDefault();
  const i = all.indexOf(document.activeElement);
  const next = e.key === "ArrowDown" ? (i + 1) % all.length : (i - 1 + all.length) % all.length;
  all[next].focus();
}

async function load() {
  clearTimeout(retry);
  const before = JSON.stringify([state.data, state.error?.message]);
  try {
    state.data = await getJSON(`/api/models?lang=${encodeURIComponent(lang())}`);
    state.error = null;
  } catch (err) {
    state.error = err;
  }
  if (state.data && !state.data.ready) retry = setTimeout(load, RETRY_MS);
  if (JSON.stringify([state.data, state.error?.message]) === before) return; // as drawn: keep the focus
  const focused = document.activeElement?.closest?.("#model-menu-panel") ? document.activeElement.dataset.model : null;
  render();
  if (focused) $("model-menu-panel").querySelector(`a[data-model="${CSS.escape(focused)}"]`)?.focus();
}

function boot() {
  const root = $("model-menu");
  if (!root) return;
  const button = el("button", {
    type: "button",
    id: "model-menu-button",
    class: "model-menu-button",
    "data-testid": "model-menu-button",
    "aria-haspopup": "true",
    "aria-expanded": "false",
    "aria-controls": "model-menu-panel",
    onclick: () => setOpen(!state.open),
  });
  const panel = el("div", {
    id: "model-menu-panel",
    class: "model-menu-panel",
    "data-testid": "model-menu-panel",
    role: "region",
    hidden: true,
  });
  root.replaceChildren(button, panel);
  document.addEventListener("keydown", onKey);
  document.addEventListener("click", (e) => {
    if (state.open && !root.contains(e.target)) setOpen(false);
  });
  window.addEventListener("resize", () => state.open && place());
  document.addEventListener("lmscope:lang", () => {
    render(); // the menu's words now, then the reasons the server says in the new language
    load();
  });
  render();
  load();
}

boot();
