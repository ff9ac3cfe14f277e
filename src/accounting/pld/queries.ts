/**
 * Privacy queries on a discrete PLD: the hockey-stick divergence (`003` Thm. D.2, eq. D.1)
 *
 *   delta(epsilon) = P(L = inf) + sum_{s_i > epsilon} p_i (1 - e^{epsilon - s_i}),
 *
 * and its inverse, the smallest epsilon >= 0 with delta(epsilon) <= delta. The probabilities are
 * p_i = m_i e^{logScale - tilt s_i} (a tilted PLD, see `compose.ts`). The PLD's error terms are
 * applied on the safe side: each entry gets its floating-point error bound added (pessimistic PLD,
 * whose negative entries are first raised to 0) or subtracted (optimistic), the truncation bound is
 * subtracted from an optimistic delta, and a bound on the rounding of the sums (a few ulps per
 * term) is applied on the safe side too.
 *
 * Both directions scan down from the top, with the sums taken relative to s_j (so that nothing
 * overflows, and nothing is subtracted),
 *
 *   B_j = sum_{i >= j} m_i e^{-(tilt + 1)(s_i - s_j)},   D_j = sum_{i >= j} m_i e^{-tilt (s_i - s_j)} (1 - e^{s_j - s_i}),
 *   B_{j-1} = m_{j-1} + e^{-(tilt + 1) h} B_j,        D_{j-1} = e^{-tilt h} (D_j + (1 - e^{-h}) B_j),
 *
 * delta(s_j) = inf + e^{logScale - tilt s_j} D_j, and on (s_{j-1}, s_j] the curve
 * delta(s_j - t) = inf + e^{logScale - tilt s_j} (D_j + (1 - e^{-t}) B_j): delta(epsilon) evaluates
 * it (the scan kept, so that queries at nearby epsilons cost O(1) after the first), and the inverse
 * inverts it exactly: the discrete curve is searched monotonically, not sampled.
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

/**
 * The sums of the downward scan (file comment) at grid point j: B_j and D_j on the safe side of
 * each entry's error, and the same sums of |safe entry| (which bound the rounding when entries of
 * an optimistic PLD are negative; equal to B_j, D_j otherwise).
 */
interface ScanPoint {
  readonly j: number;
  readonly B: number;
  readonly D: number;
  readonly absB: number;
  readonly absD: number;
}

/**
 * Points of the scans already made, per PLD and per choice of entries (with or without the
 * per-bin error): a query resumes the scan at the nearest point above its own, so that many
 * queries at nearby epsilons (an inverse checked point by point, a bisection) cost one scan. The
 * sums at j are computed by the same operations in the same order whichever point a scan resumes
 * from, so they do not depend on earlier queries.
 */
const scans = new WeakMap<DiscretePld, { withError: ScanPoint[]; withoutError: ScanPoint[] }>();
/** Points kept per PLD and choice (the scan's most recent stops). */
const SCAN_POINTS = 8;

/** The scan's sums at j (0 <= j < masses.length), resumed from the nearest kept point above. */
function scanAt(pld: DiscretePld, j: number, withError: boolean): ScanPoint {
  let kept = scans.get(pld);
  if (kept === undefined) scans.set(pld, (kept = { withError: [], withoutError: [] }));
  const points = withError ? kept.withError : kept.withoutError;
  let from: ScanPoint | undefined;
  for (const point of points) if (point.j >= j && (from === undefined || point.j < from.j)) from = point;
  if (from !== undefined && from.j === j) return from;
  const { masses, valueDiscretization: h, tilt } = pld;
  const eta = withError ? pld.errorPerBin : 0;
  const pessimistic = pld.pessimistic;
  const bDecay = Math.exp(-(tilt + 1) * h);
  const dDecay = Math.exp(-tilt * h);
  const rise = -Math.expm1(-h);
  let k = from?.j ?? masses.length - 1;
  const top = masses[masses.length - 1];
  const topSafe = pessimistic ? (top > 0 ? top : 0) + eta : top - eta;
  let B = from?.B ?? topSafe;
  let D = from?.D ?? 0;
  let absB = from?.absB ?? Math.abs(topSafe);
  let absD = from?.absD ?? 0;
  if (pessimistic) {
    // Every entry is >= 0: the sums are their own absolute values.
    while (k > j) {
      D = dDecay * (D + rise * B);
      const m = masses[k - 1];
      B = (m > 0 ? m : 0) + eta + bDecay * B;
      k--;
    }
    absB = B;
    absD = D;
  } else {
    while (k > j) {
      D = dDecay * (D + rise * B);
      absD = dDecay * (absD + rise * absB);
      const safe = masses[k - 1] - eta;
      B = safe + bDecay * B;
      absB = Math.abs(safe) + bDecay * absB;
      k--;
    }
  }
  const point: ScanPoint = { j, B, D, absB, absD };
  if (points.length >= SCAN_POINTS) points.shift();
  points.push(point);
  return point;
}

/**
 * delta(epsilon) of the PLD, on its safe side (never NaN; in [0, 1]), from the downward scan
 * (file comment): with j the first grid point above epsilon and t = s_j - epsilon in (0, h] (any
 * t > 0 below the grid),
 *
 *   delta(epsilon) = P(L = inf) + e^{logScale - tilt s_j} (D_j + (1 - e^{-t}) B_j).
 *
 * Rounding (u = 2^-53): each entry reaches D_j + (1 - e^{-t}) B_j through at most 2 (i - j) + 8
 * roundings and i - j products by the decay factors, each of which Math.exp computes within 2u of
 * e^{-(tilt + 1) h} (resp. e^{-tilt h}) from an argument rounded by 2u relative: a relative error of
 * at most 4 (i - j + 8) u + 4 (tilt + 1) (s_top - s_j + h) u per entry, counted on the sums of
 * |entries| (absB, absD). t is computed from s_j = (minIndex + j) h rounded, which moves it by at most
 * u (|s_j| + t): (1 - e^{-t}) B_j then by at most u (|s_j| + h + 2) absB. Terms below the smallest
 * subnormal lose at most 4 (n - j + 1) of it in all. The scale e^{logScale - tilt s_j + log S} errs by
 * at most 2u (|logScale| + 3 |tilt s_j| + 2 |log S| + 8) relative. All of it is added (pessimistic)
 * or subtracted (optimistic).
 */
export function deltaForEpsilon(pld: DiscretePld, epsilon: number): number {
  return deltaOnSafeSide(pld, epsilon, true);
}

/**
 * delta(epsilon) as `deltaForEpsilon`, with the entries taken without their floating-point error
 * bound (errorPerBin 0): the difference of the two shows how much of delta that bound is.
 */
export function deltaWithoutBinError(pld: DiscretePld, epsilon: number): number {
  return deltaOnSafeSide(pld, epsilon, false);
}

function deltaOnSafeSide(pld: DiscretePld, epsilon: number, withError: boolean): number {
  const { masses, minIndex, valueDiscretization: h, tilt } = pld;
  const n = masses.length;
  // j: the first grid point strictly above epsilon ((minIndex + j) h is nondecreasing in j).
  let j = Math.min(n, Math.max(0, Math.ceil(epsilon / h) - minIndex));
  if (!Number.isFinite(epsilon)) j = epsilon > 0 ? n : 0;
  while (j > 0 && (minIndex + j - 1) * h > epsilon) j--;
  while (j < n && !((minIndex + j) * h > epsilon)) j++;
  // Below the grid (a tilted window leaves out the mass below it): add its bound.
  const below = pld.pessimistic && epsilon < minIndex * h ? pld.belowWindowMass : 0;
  let finite = 0;
  if (j < n) {
    const u = Number.EPSILON / 2;
    const sj = (minIndex + j) * h;
    const top = (minIndex + n - 1) * h;
    const { B, D, absB, absD } = scanAt(pld, j, withError);
    const r = -Math.expm1(epsilon - sj);
    const sum = D + r * B;
    const relative = 4 * (n - j + 8) * u + 4 * (tilt + 1) * (top - sj + h) * u;
    const error = 1.001 * (relative * (absD + r * absB) + u * (Math.abs(sj) + h + 2) * absB) + 4 * (n - j + 1) * Number.MIN_VALUE;
    const safe = pld.pessimistic ? sum + error : sum - error;
    if (safe !== 0) {
      const logSafe = Math.log(Math.abs(safe));
      const scaleError = 2 * u * (Math.abs(pld.logScale) + 3 * Math.abs(tilt * sj) + 2 * Math.abs(logSafe) + 8);
      const magnitude = Math.exp(pld.logScale - tilt * sj + logSafe);
      // Away from zero for the pessimistic side when positive, towards it otherwise (and the other
      // way for the optimistic side).
      const up = pld.pessimistic === safe > 0;
      finite = Math.sign(safe) * magnitude * (up ? 1 + scaleError : 1 - scaleError);
    }
  }
  // The last additions round by at most u of their operands each: 4u of them on the safe side.
  const slack = 2 * Number.EPSILON * (pld.infinityMass + Math.abs(finite) + below + pld.truncationMass);
  if (pld.pessimistic) return Math.min(1, pld.infinityMass + finite + below + slack);
  return Math.max(0, Math.min(1, pld.infinityMass + finite - pld.truncationMass - slack));
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
