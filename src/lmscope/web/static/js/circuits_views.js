// The three experiments' results drawn from the server's answers (/api/circuits/...), in the
// page's language: every number shown is the answer's own.

import { t } from "./catalog.js";
import { bars, grid, lossCurve, patternView } from "./circuits_draw.js";
import { el, fmt, visible } from "./draw.js";

const TOP_BARS = 16; // the attribution's largest contributions in the bar chart

const layerLabels = (rows) => rows.map((l) => `L${l}`);
const headLabels = (n) => Array.from({ length: n }, (_, h) => `H${h}`);
const tokenLabel = (position, token) => `${position} ${visible(token)}`;
const quoted = (token) => `“${visible(token)}”`;

function line(text, testid, extra = {}) {
  return el("p", { class: "circuits-line", "data-testid": testid, text, ...extra });
}

// --- induction ------------------------------------------------------------------------------

// r: the /api/circuits/induction answer; onHead(layer, head): show another head's pattern.
export function inductionView(r, onHead) {
  const nHead = r.scores[0]?.length ?? 0;
  const layers = r.scores.map((_, l) => l);
  const start = r.bos ? 1 : 0;
  const name = (l, h) => `L${l}H${h}`;
  const describe = (what) => (row, col) => t(what, { head: name(row, col) });
  const top = (list, testid, label) =>
    el(
      "div",
      { class: "circuits-top", "data-testid": testid },
      el("span", { text: label }),
      list.map((e) => {
        const [l, h] = e.head.slice(1).split("H").map(Number);
        return el("button", {
          type: "button",
          class: "chip",
          "data-head": e.head,
          "data-value": String(e.score),
          text: `${e.head} ${fmt(e.score, 2)}`,
          onclick: () => onHead(l, h),
        });
      }),
    );
  return el(
    "div",
    { class: "circuits-block", "data-testid": "induction-view", "data-length": r.length, "data-seed": r.seed },
    line(
      t("page.circuits.induction.summary", {
        n: r.ids.length,
        length: r.length,
        first: fmt(r.loss_first_copy, 3),
        second: fmt(r.loss_second_copy, 3),
      }),
      "induction-summary",
    ),
    line(t(r.bos ? "page.circuits.induction.bos" : "page.circuits.induction.no-bos"), "induction-bos", { class: "circuits-line muted" }),
    top(r.top_induction, "top-induction", t("page.circuits.induction.top")),
    top(r.top_previous_token, "top-previous", t("page.circuits.induction.top-previous")),
    el(
      "div",
      { class: "circuits-row" },
      grid(r.scores, layerLabels(layers), headLabels(nHead), {
        testid: "induction-grid",
        title: t("page.circuits.induction.grid"),
        kind: "sequential",
        max: 1,
        describe: describe("page.circuits.induction.cell"),
        onClick: onHead,
        selected: [r.layer, r.head],
        legend: t("page.circuits.induction.score"),
      }),
      grid(r.previous_token, layerLabels(layers), headLabels(nHead), {
        testid: "previous-grid",
        title: t("page.circuits.induction.grid-previous"),
        kind: "sequential",
        max: 1,
        describe: describe("page.circuits.induction.cell-previous"),
        onClick: onHead,
        selected: [r.layer, r.head],
        legend: t("page.circuits.induction.score"),
      }),
      el(
        "div",
        { class: "circuits-col" },
        lossCurve(r.loss, {
          testid: "loss-curve",
          title: t("page.circuits.induction.loss-title"),
          start,
          length: r.length,
        }),
        patternView(r.pattern, {
          testid: "pattern",
          title: t("page.circuits.induction.pattern-title", {
            head: name(r.layer, r.head),
            score: fmt(r.scores[r.layer][r.head], 3),
            previous: fmt(r.previous_token[r.layer][r.head], 3),
          }),
          layer: r.layer,
          head: r.head,
          start,
          length: r.length,
        }),
        line(t("page.circuits.induction.stripe", { offset: r.length - 1 }), "stripe-note", { class: "circuits-line muted" }),
      ),
    ),
  );
}

// --- activation patching --------------------------------------------------------------------

// what a hovered cell of each site's grid says
const CELL_TEXTS = {
  resid_pre: "page.circuits.patch.cell.resid",
  attn_head: "page.circuits.patch.cell.head",
  mlp_out: "page.circuits.patch.cell.mlp",
};

export function patchView(r) {
  const right = quoted(r.right.token);
  const wrong = quoted(r.wrong.token);
  const sites = r.sites;
  const fraction = (site) => Math.max(1, ...sites[site].values.flat().map((v) => Math.abs(v ?? 0)));
  const max = Math.max(fraction("resid_pre"), fraction("attn_head"), fraction("mlp_out"));
  const cell = (what) => (row, col) => {
    const site = sites[what];
    const layer = site.rows[row];
    const values = { layer, diff: fmt(site.diffs[row][col], 4) };
    if (what === "resid_pre") {
      values.position = col;
      values.token = visible(r.clean_tokens[col]);
    }
    if (what === "attn_head") values.head = `L${layer}H${site.cols[col]}`;
    return t(CELL_TEXTS[what], values);
  };
  const common = { kind: "diverging", max, legend: t("page.circuits.patch.fraction") };
  return el(
    "div",
    { class: "circuits-block", "data-testid": "patch-view" },
    line(t("page.circuits.patch.clean-diff", { right, wrong, diff: fmt(r.clean_diff, 4) }), "patch-clean-diff", {
      "data-value": String(r.clean_diff),
    }),
    line(t("page.circuits.patch.corrupt-diff", { right, wrong, diff: fmt(r.corrupt_diff, 4) }), "patch-corrupt-diff", {
      "data-value": String(r.corrupt_diff),
    }),
    line(t("page.circuits.patch.reading"), "patch-reading", { class: "circuits-line muted" }),
    el(
      "div",
      { class: "circuits-row" },
      grid(
        sites.resid_pre.values,
        layerLabels(sites.resid_pre.rows),
        sites.resid_pre.cols.map((p) => tokenLabel(p, r.clean_tokens[p])),
        { ...common, testid: "patch-resid", title: t("page.circuits.patch.resid-title"), rotate: true, top: 84, cellW: 20, describe: cell("resid_pre") },
      ),
      grid(sites.attn_head.values, layerLabels(sites.attn_head.rows), headLabels(sites.attn_head.cols.length), {
        ...common,
        testid: "patch-heads",
        title: t("page.circuits.patch.head-title"),
        describe: cell("attn_head"),
      }),
      grid(sites.mlp_out.values, layerLabels(sites.mlp_out.rows), ["MLP"], {
        ...common,
        testid: "patch-mlp",
        title: t("page.circuits.patch.mlp-title"),
        cellW: 30,
        describe: cell("mlp_out"),
      }),
    ),
  );
}

// --- direct logit attribution ---------------------------------------------------------------

export function attributeView(r) {
  const token = quoted(r.token.text);
  const after = quoted(r.tokens[r.position]);
  const logitLine = r.versus
    ? t("page.circuits.attribute.logit-versus", { token, versus: quoted(r.versus.text), position: r.position, after, logit: fmt(r.logit, 4) })
    : t("page.circuits.attribute.logit", { token, position: r.position, after, logit: fmt(r.logit, 4) });
  const remainder = Object.entries(r.remainder);
  const largest = Object.entries(r.contributions)
    .map(([name, value]) => ({ name, value }))
    .sort((a, b) => Math.abs(b.value) - Math.abs(a.value))
    .slice(0, TOP_BARS);
  const parts = [...r.heads.flat(), ...r.mlps];
  const max = Math.max(...parts.map((v) => Math.abs(v ?? 0)), 1e-12);
  const nHead = r.heads[0]?.length ?? 0;
  const layers = r.heads.map((_, l) => l);
  const say = (what) => (row, col) => t(what, { part: what.endsWith("mlp") ? `mlp${row}` : `L${row}H${col}` });
  return el(
    "div",
    { class: "circuits-block", "data-testid": "attribute-view" },
    line(logitLine, "attribute-logit", { "data-value": String(r.logit) }),
    line(
      t("page.circuits.attribute.total", {
        total: fmt(r.total, 6),
        logit: fmt(r.logit, 6),
        n: Object.keys(r.contributions).length,
      }),
      "attribute-total",
      { "data-value": String(r.total) },
    ),
    remainder.length
      ? line(
          remainder.map(([name, value]) => t("page.circuits.attribute.remainder", { name, value: fmt(value, 4) })).join(" · "),
          "attribute-remainder",
        )
      : null,
    line(t("page.circuits.attribute.frozen"), "attribute-frozen", { class: "circuits-line note" }),
    el(
      "div",
      { class: "circuits-row" },
      bars(largest, { testid: "attribute-bars", title: t("page.circuits.attribute.bars-title", { n: largest.length }) }),
      grid(r.heads, layerLabels(layers), headLabels(nHead), {
        testid: "attribute-heads",
        title: t("page.circuits.attribute.grid-title"),
        kind: "diverging",
        max,
        describe: say("page.circuits.attribute.cell"),
        legend: t("page.circuits.attribute.contribution"),
      }),
      grid(
        r.mlps.map((v) => [v]),
        layerLabels(layers),
        ["MLP"],
        {
          testid: "attribute-mlps",
          title: t("page.circuits.attribute.mlp-title"),
          kind: "diverging",
          max,
          cellW: 30,
          describe: say("page.circuits.attribute.cell-mlp"),
          legend: t("page.circuits.attribute.contribution"),
        },
      ),
    ),
  );
}
