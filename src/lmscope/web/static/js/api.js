// Talking to the server: JSON in, JSON out, errors as readable messages.
// The server answers every failure with {"error": "..."}; network failures get a line too.

export class ApiError extends Error {
  constructor(message, status) {
    super(message);
    this.status = status;
  }
}

async function failure(response) {
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && typeof body.error === "string") message = body.error;
  } catch {
    // not JSON: keep the status line
  }
  return new ApiError(message, response.status);
}

async function request(path, init) {
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (err.name === "AbortError") throw err;
    throw new ApiError("cannot reach the lmscope server; is `lmscope serve` still running?", 0);
  }
  if (!response.ok) throw await failure(response);
  return response;
}

export async function getJSON(path, signal) {
  return (await request(path, { signal })).json();
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
