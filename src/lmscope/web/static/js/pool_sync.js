// The server's candidate pool when the browser's is only an estimate. The browser computes the
// pool from the top logits it was sent and the tail's log-sum-exps (sampling.js): exact while
// the pool stays among the sent tokens. When it reaches past them (top-p 0.9 on a flat
// distribution keeps thousands), the renormalised probabilities need the whole vocabulary, so
// the bars take the numbers of POST /api/pool: the pool Generate really samples from.

import { pct } from "./draw.js";
import { t } from "./catalog.js";

let seq = 0;

// bars: the prob-bar elements; pool: the browser's estimate; request: {ids, position, sampling}
export async function syncPool(post, request, pool, { bars, label }) {
  const mine = ++seq;
  label.dataset.source = "browser";
  if (pool.exact && pool.countKnown) return;
  let server;
  try {
    server = await post("/api/pool", request);
  } catch {
    return; // the estimate stays, marked ≈
  }
  if (mine !== seq) return;
  const prob = new Map(server.top.map((tok) => [tok.id, tok.prob]));
  for (const bar of bars) {
    const id = Number(bar.dataset.id);
    const p = prob.get(id);
    if (p === undefined || bar.dataset.survives !== "1") continue;
    bar.dataset.poolProb = String(p);
    bar.querySelector(".val").textContent = `${pct(Number(bar.dataset.prob))} → ${pct(p)}`;
  }
  const vocab = pool.stages.vocab.toLocaleString("en-US");
  label.textContent = t("page.pool", { n: server.size.toLocaleString("en-US"), vocab });
  label.dataset.size = server.size;
  label.dataset.source = "server";
}
