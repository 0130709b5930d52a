// The API manual, drawn from /openapi.json in the browser (no CDN, unlike FastAPI's /docs).
// Each endpoint lists its request and response schemas and has a small "try it" form.

import { el } from "./draw.js";

const EXAMPLES = {
  "/api/trace": { text: "Data visualization empowers users to" },
  "/api/tokenizer": { ids: [6601, 32704, 795, 30132], position: 2 },
  "/api/embedding": { ids: [6601, 32704, 795, 30132], position: 2 },
  "/api/layer": { ids: [6601, 32704, 795, 30132], layer: 0, position: 3 },
  "/api/attention": { ids: [6601, 32704, 795, 30132], layer: 0, head: 0, position: 3 },
  "/api/final": { ids: [6601, 32704, 795, 30132], position: 3 },
  "/api/pool": { ids: [6601, 32704, 795, 30132], position: 3, sampling: { temperature: 0.8, top_k: 10 } },
  "/api/generate": { ids: [6601, 32704, 795, 30132], n: 3, seed: 42, sampling: { temperature: 0.8 } },
};

function refName(ref) {
  return ref.split("/").at(-1);
}

function typeOf(schema) {
  if (!schema) return "";
  if (schema.$ref) return refName(schema.$ref);
  if (schema.anyOf) return schema.anyOf.map(typeOf).join(" | ");
  if (schema.type === "array") return `${typeOf(schema.items)}[]`;
  if (schema.type === "object" && schema.additionalProperties) return `{${typeOf(schema.additionalProperties)}}`;
  if (schema.enum) return schema.enum.map((v) => JSON.stringify(v)).join(" | ");
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  return schema.type ?? "any";
}

function limits(schema) {
  const parts = [];
  const all = [schema, ...(schema.anyOf ?? [])];
  for (const s of all) {
    if (s.minimum !== undefined) parts.push(`≥ ${s.minimum}`);
    if (s.exclusiveMinimum !== undefined) parts.push(`> ${s.exclusiveMinimum}`);
    if (s.maximum !== undefined) parts.push(`≤ ${s.maximum}`);
    if (s.exclusiveMaximum !== undefined) parts.push(`< ${s.exclusiveMaximum}`);
    if (s.maxLength !== undefined) parts.push(`max length ${s.maxLength}`);
    if (s.minLength !== undefined) parts.push(`min length ${s.minLength}`);
    if (s.maxItems !== undefined) parts.push(`max ${s.maxItems} items`);
    if (s.minItems !== undefined) parts.push(`min ${s.minItems} items`);
  }
  return parts.join(", ");
}

// Descriptions use `backticks` for code, as in Markdown.
function prose(tag, attrs, text) {
  const parts = (text ?? "").split("`");
  return el(tag, attrs, parts.map((part, i) => (i % 2 ? el("code", { text: part }) : part)));
}

function schemaTable(schema) {
  const props = schema.properties ?? {};
  const required = new Set(schema.required ?? []);
  return el(
    "table",
    { class: "data" },
    el("thead", {}, el("tr", {}, ["field", "type", "limits", "default", "description"].map((h) => el("th", { text: h })))),
    el(
      "tbody",
      {},
      Object.entries(props).map(([name, p]) =>
        el(
          "tr",
          {},
          el("td", {}, el("code", { text: name + (required.has(name) ? " *" : "") })),
          el("td", {}, el("code", { text: typeOf(p) })),
          el("td", { text: limits(p) }),
          el("td", { text: p.default === undefined ? "" : JSON.stringify(p.default) }),
          el("td", { text: p.description ?? "" }),
        ),
      ),
    ),
  );
}

function tryIt(path, method) {
  const input = el("textarea", { rows: 3 });
  input.value = JSON.stringify(EXAMPLES[path] ?? {}, null, 0);
  const out = el("pre", { text: "" });
  const send = async () => {
    out.textContent = "…";
    try {
      const init = method === "get" ? {} : { method: "POST", headers: { "content-type": "application/json" }, body: input.value };
      const response = await fetch(path, init);
      const text = await response.text();
      let shown = text;
      try {
        shown = JSON.stringify(JSON.parse(text), null, 1);
      } catch {
        // a stream or plain text: show as is
      }
      out.textContent = `${response.status}\n${shown.slice(0, 20000)}`;
    } catch (err) {
      out.textContent = String(err);
    }
  };
  return el(
    "details",
    {},
    el("summary", { text: "try it" }),
    method === "get" ? null : input,
    el("button", { class: "primary", text: "send", onclick: send }),
    out,
  );
}

function endpoint(path, method, op) {
  const body = op.requestBody?.content?.["application/json"]?.schema;
  const responses = Object.entries(op.responses ?? {}).map(([code, r]) => {
    const content = r.content ?? {};
    const schema = Object.values(content)[0]?.schema;
    return el(
      "li",
      {},
      el("b", { text: code }),
      " ",
      schema ? el("a", { class: "schema-name", href: `#schema-${typeOf(schema)}`, text: typeOf(schema) }) : null,
      r.description ? ` — ${r.description}` : "",
    );
  });
  return el(
    "section",
    { class: "endpoint", id: `${method}-${path}` },
    el("h3", {}, el("span", { class: `method ${method}`, text: method.toUpperCase() }), path),
    prose("div", { class: "desc" }, op.description ?? op.summary ?? ""),
    body ? el("p", {}, "body: ", el("a", { class: "schema-name", href: `#schema-${typeOf(body)}`, text: typeOf(body) })) : null,
    el("ul", {}, responses),
    tryIt(path, method),
  );
}

async function main() {
  const root = document.getElementById("api");
  const spec = await (await fetch("/openapi.json")).json();
  root.append(
    el("h1", { text: `${spec.info.title} ${spec.info.version}` }),
    prose("p", { class: "intro" }, spec.info.description ?? ""),
  );
  for (const [path, methods] of Object.entries(spec.paths)) {
    for (const [method, op] of Object.entries(methods)) root.append(endpoint(path, method, op));
  }
  root.append(el("h2", { text: "Schemas" }));
  for (const [name, schema] of Object.entries(spec.components?.schemas ?? {})) {
    root.append(
      el(
        "section",
        { class: "schema", id: `schema-${name}` },
        el("h4", { text: name }),
        schema.description ? el("p", { class: "hint", text: schema.description }) : null,
        schemaTable(schema),
      ),
    );
  }
}

main();
