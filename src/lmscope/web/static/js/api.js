// Talking to the server: JSON in, JSON out, errors as readable messages.
// The server answers every failure with {"error": "...", "code": "...", "params": {...}};
// the message is said in the page's language (errors.js); network failures get a line too.

import { lang } from "./catalog.js";
import { errorText } from "./errors.js";

export class ApiError extends Error {
  constructor(message, status, code = null, params = {}, original = message) {
    super(message);
    this.status = status;
    this.code = code;
    this.params = params;
    this.original = original; // the server's own line (English)
  }
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  let code = response.status === 500 ? "internal" : null; // a body that is not lmscope's
  let params = {};
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
    if (body && typeof body.code === "string") code = body.code;
    if (body && body.params) params = body.params;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(errorText(code, params, message), response.status, code, params, message);
}

// The served model this page explains: ?model=NAME in its address (lmscope serve --model A
// --model B; the model menu sets it), else null (the server's first). Every request of the
// explainer's API names it; /rnn's and /why's have models of their own.
export function chosenModel() {
  return new URLSearchParams(location.search).get("model");
}

// The header's links to the site's pages keep ?model=: the explainer and /circuits show that
// model, and /why and /rnn (which do not use it) hand it back when the reader returns.
export function keepModelInLinks() {
  const name = chosenModel();
  if (name === null) return;
  for (const a of document.querySelectorAll(".top-actions a[href^='/']")) {
    const path = new URL(a.href).pathname;
    if (!path.startsWith("/docs")) a.href = `${path}?model=${encodeURIComponent(name)}`;
  }
}

export function withModel(path) {
  const name = chosenModel();
  if (name === null || !path.startsWith("/api/") || /^\/api\/(rnn|lab)\b/.test(path)) return path;
  return `${path}${path.includes("?") ? "&" : "?"}model=${encodeURIComponent(name)}`;
}

async function request(path, init) {
  let response;
  // the server's own line of an error, for a code this page does not know, in its language
  const headers = { "accept-language": lang(), ...init.headers };
  try {
    response = await fetch(withModel(path), { ...init, headers });
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError(errorText("unreachable"), 0, "unreachable");
  }
  if (!response.ok) throw await failure(response);
  return response;
}

export async function getJSON(path, signal) {
  return (await request(path, { signal })).json();
}

// The model's facts (GET /api/model), asked for once per page however many modules read them
// (the explainer and the precision line asked twice on every first load).
let modelFacts = null;
export function getModel() {
  modelFacts ??= getJSON("/api/model").catch((err) => {
    modelFacts = null; // a failed answer is asked for again next time
    throw err;
  });
  return modelFacts;
}

export async function postJSON(path, body, signal) {
  const response = await request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  return response.json();
}

// Memoised POSTs for data that depends only on the request (the server's traces are
// deterministic): switching back to a step or position costs nothing.
const memo = new Map();
const MEMO_LIMIT = 200;

export function cachedPost(path, body) {
  const key = `${path} ${JSON.stringify(body)}`;
  if (memo.has(key)) {
    const hit = memo.get(key);
    memo.delete(key);
    memo.set(key, hit);
    return hit;
  }
  const promise = postJSON(path, body);
  memo.set(key, promise);
  promise.catch(() => memo.delete(key)); // do not remember failures
  while (memo.size > MEMO_LIMIT) memo.delete(memo.keys().next().value);
  return promise;
}

// POST and read a newline-delimited JSON stream, calling onEvent for each object.
export async function streamNDJSON(path, body, onEvent, signal) {
  const response = await request(path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal,
  });
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let newline;
    while ((newline = buffer.indexOf("\n")) >= 0) {
      const line = buffer.slice(0, newline).trim();
      buffer = buffer.slice(newline + 1);
      if (line) onEvent(JSON.parse(line));
    }
  }
  if (buffer.trim()) onEvent(JSON.parse(buffer));
}
