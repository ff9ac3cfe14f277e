/**
 * From a mechanism's privacy loss distribution to two discrete PLDs on the grid i * h,
 * i in [minIndex, maxIndex]: a pessimistic one (every delta(epsilon) of every composition is >=
 * the truth) and an optimistic one (<=). Both are built from the P-mass W and the Q-mass
 * V = E_P[e^{-L}; cell] of each cell (e_{i-1}, e_i] (see `discrete-pld.ts` for the orders used in
 * the proofs).
 *
 * Pessimistic: "connect the dots" (Doroshenko, Ghazi, Kamath, Kumar, Manurangsi 2022, Sec. 3).
 * The mass of each cell is split between its two end points so that both its P-mass and its
 * Q-mass are kept: b at e_i and W - b at e_{i-1} with
 *
 *   b = (W - V e^{e_{i-1}}) / (1 - e^{-h}).
 *
 * This is a mean-preserving spread of u = e^{-L}, so it raises H everywhere; the resulting privacy
 * curve passes through the exact delta(e_i) at every grid point and interpolates linearly in
 * e^epsilon in between (a chord of the convex H), an error of order h^2 instead of the h of
 * rounding losses up. Beyond the grid: mass above the top point is split between the top point
 * and +infinity keeping P- and Q-mass (again a spread in u, u = 0 at infinity); mass below the
 * bottom point is moved up to it.
 *
 * Optimistic: each cell's mass is contracted to its u-mean, the point s* = e_{i-1} + log(W / (V
 * e^{e_{i-1}})) of the cell (Jensen: lowers H). These points are then merged greedily, in
 * increasing order, into pools whose u-mean is exactly a grid point (contractions again, so no
 * first-order error): a pool below grid point g takes just enough mass from the next points above
 * g to bring its u-mean to e^{-g}, and the rest of that point starts the next pool. Only the last
 * pool is rounded down to the grid; mass below the grid is dropped and mass above it rounded down to
 * the top point (all lower H). The sweep is also run downwards (pools above a grid point balanced
 * by mass below it, the last pool at the bottom) and the one that rounded less is kept: a loss
 * piled up at its lower bound (Poisson subsampling, remove direction: L > log(1 - q)) needs the
 * upward sweep, one piled up at its upper bound (add direction: L < -log(1 - q)) the downward one;
 * otherwise a first-order error on the pile, multiplied by 1e6 compositions, ruins the bound.
 * Rounding losses down instead, as the optimistic PLD of dp_accounting does, errs by up to h per
 * step, which is why its lower bound collapses over 1e5 compositions (ACCOUNTING-NOTES.md).
 *
 * Atoms of the loss (randomized response, Laplace) that fall on grid points are kept exactly in
 * both PLDs; the grid is aligned to the heaviest ones (`grid.ts`, `alignStep`).
 */
import type { DiscretePld } from './discrete-pld.js';
import type { PrivacyLossModel } from './models/loss-model.js';

export interface DiscretizedPair {
  readonly pessimistic: DiscretePld;
  readonly optimistic: DiscretePld;
}

/** Relative size of floating-point errors tolerated when deciding that a point lies on the grid. */
const ON_GRID = 1e-9;

/** V e^{e} without overflow (V may underflow to 0 for huge losses: then 0). */
function scaledQ(v: number, e: number): number {
  if (!(v > 0)) return 0;
  return e < 700 && e > -700 ? v * Math.exp(e) : Math.exp(Math.log(v) + e);
}

/**
 * `margin`: relative safety margin applied to every mass (pessimistic up, optimistic down). The
 * cell masses come from differences of tail probabilities, and delta from differences of such
 * sums, whose rounding (a few ulps amplified by the cancellations; measured up to 2e-11 of delta
 * for one release) no proof covers. A margin m on each of K composed mechanisms moves delta by
 * about K m, so the caller passes 1e-10 / K (the default 1e-10 is for one release).
 */
export function discretize(model: PrivacyLossModel, h: number, minIndex: number, maxIndex: number, margin = 1e-10): DiscretizedPair {
  const n = maxIndex - minIndex + 1;
  const edges = new Float64Array(n);
  for (let i = 0; i < n; i++) edges[i] = (minIndex + i) * h;
  const { p: W, q: V } = model.cellMasses(edges);
  // R[c] = V[c] e^{e_{c-1}}: the cell's Q-mass relative to its lower end (W e^{-h} <= R <= W).
  const R = new Float64Array(n + 1);
  for (let c = 1; c <= n; c++) R[c] = scaledQ(V[c], edges[c - 1]);
  const pessimistic = connectTheDots(W, R, h, minIndex, model.infinityMass);
  // Atoms: on a grid point they are exact in both PLDs. Off the grid, connect-the-dots splits them
  // like any other mass, and the optimistic contraction pools them with their cell.
  const Wopt = Float64Array.from(W);
  const Ropt = Float64Array.from(R);
  const exact = new Float64Array(n);
  let topTruncation = 0;
  const oneMinusEMinusH = -Math.expm1(-h);
  for (const { loss, mass: w } of model.atoms) {
    const position = loss / h;
    const nearest = Math.round(position);
    const onGrid = Math.abs(position - nearest) <= ON_GRID * Math.max(1, Math.abs(position)) * 1e-3;
    const low = onGrid ? nearest : Math.floor(position);
    const j = low - minIndex;
    if (j < 0) {
      pessimistic.masses[0] += w; // below the grid: moved up (pessimistic), dropped (optimistic)
      continue;
    }
    if (j >= n - 1 && !(onGrid && j === n - 1)) {
      // above the top point: split between it and +infinity keeping P- and Q-mass
      const b = Math.min(w, w * Math.exp(edges[n - 1] - loss));
      pessimistic.masses[n - 1] += b;
      topTruncation += w - b;
      Wopt[n] += w;
      Ropt[n] += w * Math.exp(edges[n - 1] - loss);
      continue;
    }
    if (onGrid) {
      pessimistic.masses[j] += w;
      exact[j] += w;
      continue;
    }
    const offset = loss - edges[j];
    const b = Math.min(w, (w * -Math.expm1(-offset)) / oneMinusEMinusH + (64 * Number.EPSILON * w) / oneMinusEMinusH);
    pessimistic.masses[j] += w - b;
    pessimistic.masses[j + 1] += b;
    Wopt[j + 1] += w;
    Ropt[j + 1] += w * Math.exp(-offset);
  }
  // Pools that cannot be balanced are rounded down at the end of the sweep: sweep upwards for a loss
  // piled up at its lower bound (Poisson subsampling, remove direction), downwards for one piled up
  // at its upper bound (add direction), and keep whichever rounded less (the smaller Q-mass
  // E[e^{-L}], which the contractions keep and the roundings down increase).
  const up = contract(Wopt, Ropt, edges, h, minIndex, model.infinityMass);
  const down = contractDownwards(Wopt, Ropt, edges, h, minIndex, model.infinityMass);
  const optimistic = relativeQMass(down.masses, h) < relativeQMass(up.masses, h) ? down : up;
  for (let j = 0; j < n; j++) optimistic.masses[j] += exact[j];
  for (let j = 0; j < n; j++) {
    pessimistic.masses[j] *= 1 + margin;
    optimistic.masses[j] *= 1 - margin;
  }
  return {
    pessimistic: {
      ...pessimistic,
      infinityMass: pessimistic.infinityMass + topTruncation,
      truncationMass: pessimistic.truncationMass + topTruncation,
    },
    optimistic,
  };
}

function connectTheDots(W: Float64Array, R: Float64Array, h: number, minIndex: number, infinityMass: number): DiscretePld {
  const n = W.length - 1;
  const masses = new Float64Array(n);
  const oneMinusEMinusH = -Math.expm1(-h);
  // Rounding safety: b is computed from two masses with relative errors of a few ulps each; its
  // error is at most about 64 eps W / (1 - e^{-h}), and moving that much more mass up is
  // pessimistic.
  const bump = (64 * Number.EPSILON) / oneMinusEMinusH;
  masses[0] += W[0];
  for (let c = 1; c < n; c++) {
    const w = W[c];
    if (!(w > 0)) continue;
    let b = (w - R[c]) / oneMinusEMinusH;
    b = Math.min(w, Math.max(0, b) + bump * w);
    masses[c - 1] += w - b;
    masses[c] += b;
  }
  let truncation = 0;
  const top = W[n];
  if (top > 0) {
    const b = Math.min(top, R[n]);
    masses[n - 1] += b;
    truncation = top - b;
  }
  return {
    valueDiscretization: h,
    minIndex,
    masses,
    tilt: 0,
    logScale: 0,
    infinityMass: infinityMass + truncation,
    truncationMass: truncation,
    errorPerBin: 0,
    pessimistic: true,
    belowWindowMass: 0,
  };
}

/** sum_j m_j e^{-j h} (the Q-mass up to a common factor). */
function relativeQMass(masses: Float64Array, h: number): number {
  let s = 0;
  const decay = Math.exp(-h);
  let w = 1;
  for (let j = 0; j < masses.length; j++) {
    s += masses[j] * w;
    w *= decay;
    if (w === 0) break;
  }
  return s;
}

function contract(W: Float64Array, R: Float64Array, edges: Float64Array, h: number, minIndex: number, infinityMass: number): DiscretePld {
  const n = edges.length;
  const masses = new Float64Array(n);
  const loss = (k: number) => (minIndex + k) * h; // grid point k, also beyond the top
  const emit = (k: number, mass: number) => {
    if (mass > 0) masses[Math.max(0, Math.min(k, n - 1))] += mass;
  };
  // The pool: target grid point `target`, mass, and excess = sum w (e^{e_target - s} - 1) >= 0,
  // which is 0 exactly when the pool's u-mean is e^{-e_target}.
  let target = -1;
  let poolMass = 0;
  let excess = 0;

  const add = (weight: number, s: number, base: number, offset: number) => {
    let w = weight;
    while (w > 0) {
      if (target < 0) {
        // A new pool, aimed at the grid point above the atom (or the atom's own grid point).
        if (offset <= ON_GRID * h) return emit(base, w);
        const steps = Math.ceil(offset / h - ON_GRID);
        if (Math.abs(offset - steps * h) <= ON_GRID * h) return emit(base + steps, w);
        target = base + steps;
        poolMass = w;
        excess = w * Math.expm1(loss(target) - s);
        return;
      }
      const gap = loss(target) - s;
      if (gap >= 0) {
        poolMass += w;
        excess += w * Math.expm1(gap);
        return;
      }
      // Just enough of this atom (above the target) to bring the pool's u-mean to e^{-e_target}.
      const need = excess / -Math.expm1(gap);
      if (need <= w) {
        emit(target, poolMass + need);
        target = -1;
        w -= need;
        continue;
      }
      poolMass += w;
      excess += w * Math.expm1(gap);
      return;
    }
  };

  // W[0] (below the grid) is dropped. Cells c = 1..n-1 lie between grid points c-1 and c; c = n is
  // the tail above the top point.
  for (let c = 1; c <= n; c++) {
    const w = W[c];
    if (!(w > 0)) continue;
    const base = c - 1;
    const r = R[c];
    let offset = r > 0 ? Math.log(w / r) : Infinity; // the cell's u-mean, above e_base
    if (!(offset >= 0)) offset = 0;
    if (c < n && offset > h) offset = h;
    if (offset === Infinity) {
      emit(n - 1, w); // a loss beyond every double: rounded down to the top point
      continue;
    }
    add(w, edges[base] + offset, base, offset);
  }
  if (target >= 0) emit(target - 1, poolMass); // the pool's u-mean lies in (e_{target-1}, e_target)
  return {
    valueDiscretization: h,
    minIndex,
    masses,
    tilt: 0,
    logScale: 0,
    infinityMass,
    truncationMass: 0,
    errorPerBin: 0,
    pessimistic: false,
    belowWindowMass: 0,
  };
}

/**
 * The same contraction sweeping downwards: a pool above grid point g (its target, the point at or
 * below its first atom) takes just enough mass from the next points below g to bring its u-mean to
 * e^{-g}; the last pool, at the bottom, is rounded down.
 */
function contractDownwards(W: Float64Array, R: Float64Array, edges: Float64Array, h: number, minIndex: number, infinityMass: number): DiscretePld {
  const n = edges.length;
  const masses = new Float64Array(n);
  const loss = (k: number) => (minIndex + k) * h;
  const emit = (k: number, mass: number) => {
    if (mass > 0) masses[Math.max(0, Math.min(k, n - 1))] += mass;
  };
  // excess = sum w (e^{e_target - s} - 1) <= 0 while the pool's u-mean is below e^{-e_target}.
  let target = -1;
  let poolMass = 0;
  let excess = 0;
  const add = (weight: number, s: number, base: number, offset: number) => {
    let w = weight;
    while (w > 0) {
      if (target < 0) {
        if (offset <= ON_GRID * h) return emit(base, w);
        const steps = Math.floor(offset / h + ON_GRID);
        if (Math.abs(offset - steps * h) <= ON_GRID * h) return emit(base + steps, w);
        target = base + steps;
        poolMass = w;
        excess = w * Math.expm1(loss(target) - s);
        return;
      }
      const gap = loss(target) - s;
      if (gap <= 0) {
        poolMass += w;
        excess += w * Math.expm1(gap);
        return;
      }
      // Just enough of this atom (below the target) to bring the pool's u-mean to e^{-e_target}.
      const need = -excess / Math.expm1(gap);
      if (need <= w) {
        emit(target, poolMass + need);
        target = -1;
        w -= need;
        continue;
      }
      poolMass += w;
      excess += w * Math.expm1(gap);
      return;
    }
  };
  for (let c = n; c >= 1; c--) {
    const w = W[c];
    if (!(w > 0)) continue;
    const base = c - 1;
    const r = R[c];
    let offset = r > 0 ? Math.log(w / r) : Infinity;
    if (!(offset >= 0)) offset = 0;
    if (c < n && offset > h) offset = h;
    if (offset === Infinity) {
      emit(n - 1, w);
      continue;
    }
    add(w, edges[base] + offset, base, offset);
  }
  if (target >= 0) emit(target, poolMass); // its u-mean lies above e_target: rounded down to it
  return { valueDiscretization: h, minIndex, masses, tilt: 0, logScale: 0, infinityMass, truncationMass: 0, errorPerBin: 0, pessimistic: false, belowWindowMass: 0 };
}
