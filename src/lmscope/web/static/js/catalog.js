// Every word the page shows comes from lmscope's catalog (src/lmscope/i18n/catalog/<lang>.json),
// the same texts the CLI and the Python API speak, served as JSON by GET /i18n/<lang>.json.
// t(id, values) renders one in the page's language with the same message syntax as
// lmscope.i18n.message_format: {name} fills in a value, {n, plural, =0 {...} one {# token}
// other {# tokens}} picks a form by the number (# is the number, with thousands separators),
// '{' and '}' are literal braces and any other apostrophe is just one.
//
// The page's language: ?lang=<code> in the address (pseudo, the test language, is chosen only
// this way), else the reader's last choice (localStorage, and a cookie so that the server sends
// the page in it), else the first of the browser's languages the page speaks (zh-CN, zh-TW:
// zh), else English. The server chooses the same way (web/pages.py page_language). This
// module loads that language's catalog before any module that imports it runs, so t() is
// synchronous; setLang() loads another and tells the page (a "lmscope:lang" event on document).

const KEY = "lmscope.lang";
const SOURCE = "en";
// The languages served, code -> the page's lang tag (zh -> zh-CN), as the server lists them in
// <meta name="lmscope-languages"> (lmscope.i18n.LANGUAGES). The menu offers all but "pseudo"
// (every letter accented, each text bracketed and a third longer), which is for tests and
// translators, chosen with ?lang=pseudo.
const TAGS = languageTags();
const SERVED = Object.keys(TAGS);
export const MENU = SERVED.filter((code) => code !== "pseudo");

function languageTags() {
  const listed = typeof document !== "undefined" && document.querySelector('meta[name="lmscope-languages"]');
  return listed ? JSON.parse(listed.content) : { [SOURCE]: SOURCE };
}

const catalogs = new Map(); // lang -> {id: text}
const parsed = new Map(); // text -> parts
let current = SOURCE;
let facts = {};
let family = null;

// The words the GPT-2 views use that a Llama-family model says its own way (RMSNorm for
// LayerNorm, no bias...): the served model's family picks them (setFamily).
const FAMILY_WORDS = {
  llama: {
    "page.modern.ln-short": "page.llama.ln-short",
    "page.final-ln": "page.llama.final-ln",
    "page.ln-input": "page.llama.ln-input",
    "page.ln-output": "page.llama.ln-output",
    "page.normalized": "page.llama.normalized",
    "page.gamma": "page.llama.gamma",
    "page.mlp-in": "page.llama.mlp-in",
    "page.final-ln-title": "page.llama.final-ln-title",
    "page.ln-which": "page.llama.ln-which",
    "page.attn-out": "page.llama.attn-out",
    "page.qkv-weights": "page.llama.qkv-weights",
    "page.interpret.view-lens-explain": "page.llama.view-lens-explain",
  },
};

// -- the message syntax (lmscope.i18n.message_format, the same subset) -------------------------

export class MessageFormatError extends Error {}

export function parse(text) {
  return parseParts(text, 0, true)[0];
}

function parseParts(text, start, top) {
  const parts = [];
  let literal = "";
  let i = start;
  const flush = () => {
    if (literal) parts.push({ text: literal });
    literal = "";
  };
  while (i < text.length) {
    const c = text[i];
    if (text.startsWith("'{'", i) || text.startsWith("'}'", i)) {
      literal += text[i + 1]; // a literal brace; any other apostrophe is just one
      i += 3;
      continue;
    }
    if (c === "{") {
      flush();
      const [part, next] = argument(text, i + 1);
      parts.push(part);
      i = next;
      continue;
    }
    if (c === "}") {
      if (top) throw new MessageFormatError(`unmatched '}' in ${JSON.stringify(text)}`);
      break;
    }
    if (c === "#" && !top) {
      flush();
      parts.push({ number: true });
      i += 1;
      continue;
    }
    literal += c;
    i += 1;
  }
  flush();
  return [parts, i];
}

function findAny(text, start, chars) {
  const found = [...chars].map((c) => text.indexOf(c, start)).filter((p) => p >= 0);
  if (!found.length) throw new MessageFormatError(`unclosed placeholder in ${JSON.stringify(text)}`);
  return Math.min(...found);
}

function argument(text, start) {
  const close = findAny(text, start, ",}");
  const name = text.slice(start, close).trim();
  if (!/^[A-Za-z_]\w*$/.test(name)) {
    throw new MessageFormatError(`bad placeholder ${JSON.stringify(name)} in ${JSON.stringify(text)}`);
  }
  if (text[close] === "}") return [{ name }, close + 1];
  const comma = findAny(text, close + 1, ",}");
  if (text.slice(close + 1, comma).trim() !== "plural" || text[comma] !== ",") {
    throw new MessageFormatError(`only {name} and {name, plural, ...} are used: ${JSON.stringify(text)}`);
  }
  const forms = {};
  let i = comma + 1;
  for (;;) {
    while (i < text.length && /\s/.test(text[i])) i += 1;
    if (i >= text.length) throw new MessageFormatError(`unclosed plural in ${JSON.stringify(text)}`);
    if (text[i] === "}") break;
    const brace = text.indexOf("{", i);
    if (brace < 0) throw new MessageFormatError(`plural form without text in ${JSON.stringify(text)}`);
    const selector = text.slice(i, brace).trim();
    const [body, end] = parseParts(text, brace + 1, false);
    if (end >= text.length || text[end] !== "}") {
      throw new MessageFormatError(`unclosed plural form in ${JSON.stringify(text)}`);
    }
    forms[selector] = body;
    i = end + 1;
  }
  if (!("other" in forms)) throw new MessageFormatError(`a plural needs an 'other' form: ${JSON.stringify(text)}`);
  return [{ name, forms }, i + 1];
}

// A whole number with thousands separators ("12,345"), as lmscope.i18n._number; other values
// as they are.
export function number(value) {
  if (typeof value === "number" && Number.isInteger(value)) return value.toLocaleString("en-US");
  return String(value);
}

const pluralRules = new Map();
function pluralForm(code, n) {
  // the CLDR rules (Python reads them from Babel, the browser has them in Intl); pseudo is English
  const locale = code === "pseudo" ? SOURCE : code;
  if (!pluralRules.has(locale)) pluralRules.set(locale, new Intl.PluralRules(locale));
  return pluralRules.get(locale).select(n);
}

// text with its placeholders filled from values, plural forms chosen by code's rules; a
// missing value is an error, as in Python.
export function format(text, values = {}, code = current) {
  if (!parsed.has(text)) parsed.set(text, parse(text));
  const out = []; // [piece, whether it is a value filled in]
  const walk = (parts, count) => {
    for (const part of parts) {
      if (part.text !== undefined) out.push([part.text, false]);
      else if (part.number) out.push([number(count), true]);
      else {
        if (!(part.name in values)) {
          throw new MessageFormatError(`no value for {${part.name}} in ${JSON.stringify(text)}`);
        }
        const value = values[part.name];
        if (!part.forms) {
          out.push([number(value), true]);
          continue;
        }
        const exact = `=${value}`;
        const form = exact in part.forms ? exact : pluralForm(code, Number(value));
        walk(part.forms[form] ?? part.forms.other, value);
      }
    }
  };
  walk(parsed.get(text));
  return closeWideGaps(out).join("");
}

// A text writes a space on each side of a placeholder, which Chinese wants beside a number or a
// Latin word; beside a value that starts or ends with a Chinese character or full-width mark,
// the text's space is left out ("{method} 在": "LSTM 在", "朴素注意力在"), as
// lmscope.i18n.message_format does. The value itself is never changed.
const WIDE = /[\u3000-\u303f\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]/;

function closeWideGaps(pieces) {
  const said = pieces.map(([piece]) => piece);
  pieces.forEach(([piece, isValue], i) => {
    if (!isValue || !piece) return;
    const before = said[i - 1];
    if (i > 0 && !pieces[i - 1][1] && WIDE.test(piece[0])) {
      if (before.length >= 2 && before.at(-1) === " " && WIDE.test(before.at(-2))) {
        said[i - 1] = before.slice(0, -1);
      }
    }
    const after = said[i + 1];
    if (i + 1 < pieces.length && !pieces[i + 1][1] && WIDE.test(piece.at(-1))) {
      if (after.length >= 2 && after[0] === " " && WIDE.test(after[1])) said[i + 1] = after.slice(1);
    }
  });
  return said;
}

// -- the page's language -----------------------------------------------------------------------

export function lang() {
  return current;
}

// The version of the served catalogs (the page's <meta name="lmscope-catalog">), so a
// catalog is fetched once and then kept by the browser's cache until the texts change.
function version() {
  return document.querySelector('meta[name="lmscope-catalog"]')?.content ?? "";
}

// One request per catalog however many ask at once (the page's language and the fallback
// are the same catalog for an English reader); a failed one may be asked for again.
const loading = new Map(); // lang -> Promise of {id: text}

function load(code) {
  if (catalogs.has(code)) return Promise.resolve(catalogs.get(code));
  if (!loading.has(code)) {
    const asked = fetchCatalog(code).finally(() => loading.delete(code));
    loading.set(code, asked);
  }
  return loading.get(code);
}

async function fetchCatalog(code) {
  const response = await fetch(`/i18n/${code}.json?v=${encodeURIComponent(version())}`);
  if (!response.ok) throw new Error(`the ${code} catalog did not load (${response.status})`);
  const texts = await response.json();
  catalogs.set(code, texts);
  return texts;
}

function chosen() {
  const asked = new URLSearchParams(location.search).get("lang");
  if (asked && SERVED.includes(asked)) return asked;
  try {
    const saved = localStorage.getItem(KEY);
    if (saved && MENU.includes(saved)) {
      remember(saved); // a choice saved before the cookie was: the next page is sent in it
      return saved;
    }
  } catch {
    // storage may be blocked (private mode): the browser's languages decide
  }
  return fromBrowser() ?? SOURCE;
}

// The reader's choice, for this page's script (localStorage) and for the server, which sends
// the next page in it (the cookie; web/pages.py page_language), so it is not first drawn in
// another language.
function remember(code) {
  try {
    localStorage.setItem(KEY, code);
  } catch {
    // not remembered, still switched
  }
  document.cookie = `${KEY}=${code}; path=/; max-age=31536000; SameSite=Lax`;
}

// The first of the reader's languages (navigator.languages, best first) the page speaks.
function fromBrowser() {
  const tags = navigator.languages?.length ? navigator.languages : [navigator.language];
  const codes = tags.filter(Boolean).map((tag) => tag.split("-")[0].toLowerCase());
  return codes.find((code) => MENU.includes(code)) ?? null;
}

function htmlLang(code) {
  return TAGS[code] ?? code;
}

// Speak code from now on: its catalog is loaded first (English stays if it cannot be), the
// choice remembered (not pseudo's), then "lmscope:lang" tells every part of the page to say
// its words again.
export async function setLang(code) {
  const next = SERVED.includes(code) ? code : SOURCE;
  await Promise.all([load(SOURCE), load(next)]);
  current = next;
  await load(nextLang()).catch(() => null); // the toggle's words
  if (MENU.includes(next)) remember(next);
  document.documentElement.lang = htmlLang(next);
  document.dispatchEvent(new CustomEvent("lmscope:lang", { detail: next }));
  return next;
}

// The language the page's toggle offers next (the menu's languages in turn; from pseudo,
// English).
export function nextLang() {
  const i = MENU.indexOf(current);
  return MENU[(i + 1) % MENU.length];
}

// A page's language toggle: a click switches to the next language, then the page redraws its
// words (and labels the toggle again with labelLanguageToggle).
export function wireLanguageToggle(button, redraw) {
  button.addEventListener("click", async () => {
    await setLang(nextLang());
    redraw();
  });
}

// The language toggle: the next language's name and "switch to ..." in that language (under
// pseudo, in pseudo, so that every word on the page is the test language's).
export function labelLanguageToggle(button) {
  const say = MENU.includes(current) ? nextLang() : current;
  button.textContent = tIn(say, "page.language-name");
  button.title = tIn(say, "page.switch-language");
  button.lang = htmlLang(say);
}

// The text of id in a loaded language other than the page's.
export function tIn(code, id, values = {}) {
  const text = catalogs.get(code)?.[id] ?? catalogs.get(SOURCE)?.[id] ?? id;
  return format(text, { ...facts, ...values }, catalogs.has(code) ? code : SOURCE);
}

// The loaded model's config ({n_layer}, {d_model}...), filled into any text that names them.
export function setFacts(values) {
  facts = values;
}

// The served model's family ("gpt2", "llama"...): its own words replace the GPT-2 views'.
// `lineage`: the family and those it builds on, nearest first (/api/model's lineage): Gemma 3
// takes Llama's words where it has none of its own.
export function setFamily(name, lineage = [name]) {
  family = lineage.find((f) => f in FAMILY_WORDS) ?? name;
}

// The model's family and those it builds on, nearest first (/api/model's lineage; a model
// that names none, its family alone).
export function lineageOf(model) {
  return model?.lineage ?? [model?.family];
}

// The model is a Llama-recipe model (Llama itself, or a family built on it).
export function llamaLike(model) {
  return lineageOf(model).includes("llama");
}

export function has(id) {
  return id in (catalogs.get(SOURCE) ?? {});
}

// The text of id in the page's language (English where a translation lacks it), filled in
// with values and the model's facts. An id nobody has is shown as itself and reported.
export function t(message, values = {}) {
  const id = FAMILY_WORDS[family]?.[message] ?? message;
  const text = catalogs.get(current)?.[id] ?? catalogs.get(SOURCE)?.[id];
  if (text === undefined) {
    console.error(`lmscope: no message ${id} in the catalog`);
    return id;
  }
  return format(text, { ...facts, ...values }, current);
}

// Punctuation in the page's language, from the catalog: Chinese takes the full-width colon
// and parentheses ("位置 4：", "（id 249）"), English the ASCII ones with their spaces.
export function colon() {
  return t("page.punct.colon");
}

export function listSep() {
  return t("page.punct.list-separator");
}

export function paren(text) {
  return t("page.punct.paren", { text });
}

// Sentences one after another: a space between English ones, none after a Chinese "。".
export function sentences(...parts) {
  return parts.filter(Boolean).join(t("page.punct.sentence-separator"));
}

// Every element with data-i18n="<id>" gets its text; data-i18n-title, -placeholder and
// -aria-label name the id of that attribute.
export function applyStatic(root = document) {
  for (const el of root.querySelectorAll("[data-i18n]")) el.textContent = t(el.dataset.i18n);
  for (const [data, attr] of [
    ["i18nTitle", "title"],
    ["i18nPlaceholder", "placeholder"],
    ["i18nAriaLabel", "aria-label"],
  ]) {
    const selector = `[data-${data.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}]`;
    for (const el of root.querySelectorAll(selector)) el.setAttribute(attr, t(el.dataset[data]));
  }
}

// The notebook's widgets (lmscope.show) load these modules from blob: addresses, with no server
// to fetch a catalog from: the kernel hands them the catalogs it speaks (useCatalogs).
const embedded = import.meta.url.startsWith("blob:");

export function useCatalogs(texts, code) {
  for (const [name, entries] of Object.entries(texts)) catalogs.set(name, entries);
  for (const name of Object.keys(texts)) TAGS[name] ??= name;
  current = catalogs.has(code) ? code : SOURCE;
}

if (typeof document !== "undefined" && !embedded) {
  const start = chosen();
  await Promise.all([load(SOURCE), load(start).catch(() => null)]);
  current = catalogs.has(start) ? start : SOURCE;
  await load(nextLang()).catch(() => null); // the toggle's words
  document.documentElement.lang = htmlLang(current);
}
