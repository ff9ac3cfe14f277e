/**
 * Privacy queries on a discrete PLD: the hockey-stick divergence (`003` Thm. D.2, eq. D.1)
 *
 *   delta(epsilon) = P(L = inf) + sum_{s_i > epsilon} p_i (1 - e^{epsilon - s_i}),
 *
 * and its inverse, the smallest epsilon >= 0 with delta(epsilon) <= delta. The probabilities are
 * p_i = m_i e^{logScale - tilt s_i} (a tilted PLD, see `compose.ts`). The PLD's error terms are
 * applied on the safe side: each entry gets its floating-point error bound added (pessimistic PLD,
 * whose negative entries are first raised to 0) or subtracted (optimistic), the truncation bound is
 * subtracted from an optimistic delta, and a relative bound on the rounding of the sums (n ulps
 * for n terms) is applied on the safe side too.
 *
 * Inverse: scanning down from the top, with the sums taken relative to s_j (so that nothing
 * overflows, and nothing is subtracted),
 *
 *   B_j = sum_{i >= j} m_i e^{-(tilt + 1)(s_i - s_j)},   D_j = sum_{i >= j} m_i e^{-tilt (s_i - s_j)} (1 - e^{s_j - s_i}),
 *   B_{j-1} = m_{j-1} + e^{-(tilt + 1) h} B_j,        D_{j-1} = e^{-tilt h} (D_j + (1 - e^{-h}) B_j),
 *
 * delta(s_j) = inf + e^{logScale - tilt s_j} D_j, and on (s_{j-1}, s_j] the curve
 * delta(s_j - t) = inf + e^{logScale - tilt s_j} (D_j + (1 - e^{-t}) B_j) is inverted exactly: the
 * discrete curve is searched monotonically, not sampled.
 */
import type { DiscretePld } from './discrete-pld.js';

/** Relative rounding bound of a sum of n terms of one sign. */
function roundingBound(n: number): number {
  return 4 * (n + 8) * Number.EPSILON;
}

/** The entry j on the safe side of its floating-point error. */
function safeMass(pld: DiscretePld, j: number): number {
  const m = pld.masses[j];
  return pld.pessimistic ? (m > 0 ? m : 0) + pld.errorPerBin : m - pld.errorPerBin;
}

/** delta(epsilon) of the PLD, on its safe side (never NaN; in [0, 1]). */
export function deltaForEpsilon(pld: DiscretePld, epsilon: number): number {
  const { masses, minIndex, valueDiscretization: h, tilt } = pld;
  let first = masses.length;
  while (first > 0 && (minIndex + first - 1) * h > epsilon) first--;
  let sum = 0;
  let weight = first < masses.length ? Math.exp(-tilt * ((minIndex + first) * h - epsilon)) : 0;
  const decay = Math.exp(-tilt * h);
  for (let j = first; j < masses.length && weight > 0; j++) {
    const s = (minIndex + j) * h;
    sum += safeMass(pld, j) * weight * -Math.expm1(epsilon - s);
    weight *= decay;
  }
  const count = masses.length - first;
  // Below the grid (a tilted window leaves out the mass below it): add its bound.
  const below = pld.pessimistic && epsilon < minIndex * h ? pld.belowWindowMass : 0;
  const finite = sum > 0 ? Math.exp(pld.logScale - tilt * epsilon + Math.log(sum)) : sum < 0 ? -Math.exp(pld.logScale - tilt * epsilon + Math.log(-sum)) : 0;
  const rounding = roundingBound(count) * Math.abs(finite);
  if (pld.pessimistic) return Math.min(1, pld.infinityMass + finite + rounding + below);
  return Math.max(0, Math.min(1, pld.infinityMass + finite - rounding - pld.truncationMass));
}

export interface EpsilonSearch {
  /** The smallest epsilon >= 0 with delta(epsilon) <= delta (Infinity if none). */
  readonly epsilon: number;
  /** true when delta is below the mass at infinity that truncation created (pessimistic PLD only). */
  readonly belowTruncation: boolean;
  /** |d delta / d epsilon| at the solution (0 when there is none). */
  readonly slope: number;
}

/** The smallest epsilon >= 0 with delta(epsilon) <= delta, on the PLD's safe side. */
export function epsilonForDelta(pld: DiscretePld, delta: number): EpsilonSearch {
  const { masses, minIndex, valueDiscretization: h, tilt, logScale } = pld;
  const n = masses.length;
  const slack = roundingBound(n);
  // What the finite part may contribute.
  const target = pld.pessimistic ? delta * (1 - slack) - pld.infinityMass : delta * (1 + slack) - pld.infinityMass + pld.truncationMass;
  if (!(target > 0)) {
    const trueInfinity = pld.pessimistic ? pld.infinityMass - pld.truncationMass : pld.infinityMass;
    return { epsilon: Infinity, belowTruncation: pld.pessimistic && delta > trueInfinity, slope: 0 };
  }
  const logTarget = Math.log(target);
  // true when e^{logScale - tilt s} D <= target
  const within = (D: number, s: number) => !(D > 0) || Math.log(D) + logScale - tilt * s <= logTarget;
  const bDecay = Math.exp(-(tilt + 1) * h);
  const dDecay = Math.exp(-tilt * h);
  const rise = -Math.expm1(-h);
  const eta = pld.errorPerBin;
  const pessimistic = pld.pessimistic;
  let j = n - 1;
  let B = n > 0 ? safeMass(pld, j) : 0;
  let D = 0;
  // Scan down in blocks of 64 steps, checking delta(s_j) <= target only at block ends (delta(s)
  // increases as s decreases); the block where it fails is rescanned step by step.
  const BLOCK = 64;
  scan: while (j > 0) {
    let d = D;
    let b = B;
    let k = j;
    const stop = Math.max(0, j - BLOCK);
    while (k > stop) {
      d = dDecay * (d + rise * b);
      const m = masses[k - 1];
      b = (pessimistic ? (m > 0 ? m : 0) + eta : m - eta) + bDecay * b;
      k--;
    }
    if (within(d, (minIndex + k) * h)) {
      D = d;
      B = b;
      j = k;
      continue;
    }
    while (j > 0) {
      const nextD = dDecay * (D + rise * B);
      if (!within(nextD, (minIndex + j - 1) * h)) break scan;
      D = nextD;
      B = safeMass(pld, j - 1) + bDecay * B;
      j--;
    }
  }
  const sj = (minIndex + j) * h;
  // Below the grid the pessimistic delta also counts the mass the window left out.
  let solveTarget = logTarget;
  if (j === 0 && pld.pessimistic && pld.belowWindowMass > 0) {
    const rest = target - pld.belowWindowMass;
    if (!(rest > 0) || (D > 0 && Math.log(D) + logScale - tilt * sj > Math.log(rest))) {
      return { epsilon: sj + 8 * Number.EPSILON * (Math.abs(sj) + h), belowTruncation: false, slope: 0 };
    }
    solveTarget = Math.log(rest);
  }
  // Solve e^{logScale - tilt s_j} (D + (1 - e^{-t}) B) = target for t = s_j - epsilon >= 0.
  let t: number;
  if (!(B > 0)) t = 0;
  else {
    const ratio = (Math.exp(solveTarget - logScale + tilt * sj) - D) / B;
    t = ratio >= 1 ? Infinity : ratio <= 0 ? 0 : -Math.log1p(-ratio);
  }
  if (j > 0 && t > h) t = h; // numerical safety: the root lies in (s_{j-1}, s_j]
  let epsilon = sj - t;
  const slope = B > 0 && Number.isFinite(t) ? Math.exp(logScale - tilt * sj - t + Math.log(B)) : 0;
  if (!(epsilon > 0)) return { epsilon: 0, belowTruncation: false, slope };
  // Round to the safe side by a few ulps of the quantities involved.
  const ulps = 8 * Number.EPSILON * (Math.abs(sj) + Math.abs(t) + h);
  epsilon = pld.pessimistic ? epsilon + ulps : Math.max(0, epsilon - ulps);
  return { epsilon, belowTruncation: false, slope };
}

/**
 * A bound on the part of delta(epsilon) that is the floating-point error term: errorPerBin on every
 * bin above epsilon, weighted as in delta (at most 1 each).
 */
export function noiseAt(pld: DiscretePld, epsilon: number): number {
  const { masses, minIndex, valueDiscretization: h, tilt } = pld;
  if (pld.errorPerBin === 0) return 0;
  const top = (minIndex + masses.length - 1) * h;
  if (!(top > epsilon)) return 0;
  const count = Math.min(masses.length, Math.ceil((top - epsilon) / h) + 1);
  const geometric = tilt > 0 ? Math.min(count, 1 / -Math.expm1(-tilt * h)) : count;
  const from = Math.max(epsilon, minIndex * h);
  return pld.errorPerBin * Math.exp(pld.logScale - tilt * from) * geometric;
}
