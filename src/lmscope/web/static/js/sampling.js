// The sampling pipeline of lmscope.sampling, computed in the browser from a LogitsView:
// the top logits plus, for each temperature on the slider's grid, the log-sum-exp of logit/T
// over every other token. With those, tempered probabilities of the top tokens are exact, so
// moving a control needs no request. Order and rules match the server:
// temperature -> top-k -> top-p (renormalised over the top-k survivors) -> min-p -> renormalise.

export const GREEDY_TEMPERATURE = 1e-5;

function logSumExp(values) {
  let max = -Infinity;
  for (const v of values) if (v > max) max = v;
  if (max === -Infinity) return -Infinity;
  let sum = 0;
  for (const v of values) sum += Math.exp(v - max);
  return max + Math.log(sum);
}

// logsumexp(tail / T): exact on the grid; between grid points interpolated (flagged).
export function tailLse(view, temperature) {
  const temps = view.temperatures;
  if (view.tail_count === 0) return { value: -Infinity, exact: true };
  let best = -1;
  for (let i = 0; i < temps.length; i++) {
    if (Math.abs(temps[i] - temperature) < 1e-9) best = i;
  }
  if (best >= 0) return { value: view.tail_lse[best], exact: true };
  // T * lse(z / T) is smooth in T; interpolate that between the nearest grid points.
  let hi = temps.findIndex((t) => t > temperature);
  if (hi <= 0) hi = hi === 0 ? 1 : temps.length - 1;
  const lo = hi - 1;
  const a = temps[lo] * view.tail_lse[lo];
  const b = temps[hi] * view.tail_lse[hi];
  const w = (temperature - temps[lo]) / (temps[hi] - temps[lo]);
  return { value: (a + (b - a) * w) / temperature, exact: false };
}

// Returns {rows, stages, poolSize, extendsIntoTail, exact, tailProb}:
// rows[i] = {id, logit, prob (tempered), poolProb (renormalised, 0 if filtered), survives}.
export function computePool(view, params) {
  const z = view.logits;
  const n = z.length;
  const vocab = n + view.tail_count;
  const greedy = params.greedy || params.temperature < GREEDY_TEMPERATURE;
  const rows = z.map((logit, i) => ({ id: view.ids[i], logit, prob: 0, poolProb: 0, survives: false }));

  const T = Math.max(params.temperature, GREEDY_TEMPERATURE);
  const scaled = z.map((v) => v / T);
  const tail = tailLse(view, T);
  const total = logSumExp([...scaled, tail.value]);
  const logp = scaled.map((s) => s - total);
  rows.forEach((row, i) => (row.prob = Math.exp(logp[i])));
  const tailLogMass = tail.value - total;

  // Greedy takes the argmax (ties: lowest id, our first row). The bars keep the tempered
  // probabilities so one can see what greedy ignores.
  if (greedy) {
    rows[0].poolProb = 1;
    rows[0].survives = true;
    return {
      rows,
      stages: { vocab, top_k: 1, top_p: 1, min_p: 1 },
      poolSize: 1,
      countKnown: true,
      extendsIntoTail: false,
      exact: tail.exact,
      tailProb: Math.exp(tailLogMass),
      greedy: true,
    };
  }

  // Tokens whose tempered probability underflows to exactly 0 can never be drawn; the server
  // drops them first. Sorted order means a zero among the sent rows zeroes the whole tail.
  let nonzero = rows.findIndex((r) => r.prob === 0);
  if (nonzero < 0) nonzero = Math.exp(tailLogMass) > 0 ? vocab : n;
  const k = params.top_k ? Math.min(params.top_k, nonzero) : nonzero; // top-k
  let count = k; // survivors so far, in sorted order
  let countKnown = true; // false once count is only an upper bound
  let exact = tail.exact;
  const stages = { vocab, nonzero, top_k: k };

  const topP = params.top_p !== null && params.top_p !== undefined && params.top_p < 1;
  if (topP) {
    // Top-p adds up probabilities renormalised over the top-k survivors. When top-k reaches
    // past the sent tokens that set's mass is only bounded: between the sent tokens' mass and
    // the whole distribution's. The cut is exact when both bounds put it in the same place.
    const cutWith = (norm) => {
      let cumulative = 0;
      for (let i = 0; i < Math.min(k, n); i++) {
        cumulative += Math.exp(logp[i] - norm);
        if (cumulative >= params.top_p) return i;
      }
      return -1;
    };
    let cut;
    if (k <= n) {
      cut = cutWith(logSumExp(logp.slice(0, k)));
    } else {
      cut = cutWith(0); // logp is normalised over everything: the latest possible cut
      if (k < vocab && cutWith(logSumExp(logp)) !== cut) exact = false;
    }
    if (cut >= 0) count = cut + 1;
    else countKnown = false; // the nucleus reaches into the tail
  }
  stages.top_p = count;

  if (params.min_p) {
    const threshold = logp[0] + Math.log(params.min_p);
    let kept = 0;
    while (kept < Math.min(count, n) && logp[kept] >= threshold) kept++;
    // tail tokens all lie below the last sent token: if it fails, they all do
    if (kept < Math.min(count, n) || count <= n) {
      count = kept;
      countKnown = true;
    } else {
      countKnown = false;
    }
  }
  stages.min_p = count;

  const extendsIntoTail = count > n;
  const inPool = Math.min(count, n);
  // Renormalise over the survivors. A pool reaching into the tail can only add the whole
  // tail's mass, which is right when the pool is the whole vocabulary and an estimate otherwise.
  if (extendsIntoTail && (count < vocab || !countKnown)) exact = false;
  const parts = logp.slice(0, inPool);
  if (extendsIntoTail) parts.push(tailLogMass);
  const poolLse = logSumExp(parts);
  for (let i = 0; i < inPool; i++) {
    rows[i].survives = true;
    rows[i].poolProb = Math.exp(logp[i] - poolLse);
  }
  return {
    rows,
    stages,
    poolSize: count,
    countKnown,
    extendsIntoTail,
    exact,
    tailProb: Math.exp(tailLogMass),
    greedy: false,
  };
}

// Probability of each of the first `count` tokens at every grid temperature (for charts).
export function temperatureCurves(view, count) {
  return view.temperatures.map((T, g) => {
    const scaled = view.logits.map((v) => v / T);
    const total = logSumExp([...scaled, view.tail_count ? view.tail_lse[g] : -Infinity]);
    return scaled.slice(0, count).map((s) => Math.exp(s - total));
  });
}
