/**
 * Rényi DP amplification by sampling WITHOUT replacement (a uniformly random subset of m of the
 * n records, gamma = m / n), replace-one adjacency: Wang, Balle & Kasiviswanathan 2019,
 * "Subsampled Rényi Differential Privacy and Analytical Moments Accountant" (AISTATS), Thm. 9.
 * The thesis `004` Thm. 3.2 is its special case eps(Infinity) = Infinity. For a Gaussian base
 * mechanism, the least of a bound derived here and WBK's Gaussian-specific Thm. 27 (arXiv
 * version), moment by moment (`withoutReplacementGaussianRdpCurve`).
 */
import { InvalidParameterError } from '../../../errors.js';
import { logBinomial } from '../../../math/gamma.js';
import { requireProbability } from '../../../validate.js';
import { accountedNoiseMultiplier } from '../../extreme-noise.js';
import { gaussianRdp } from '../base-mechanisms.js';
import { logAlternatingMoment, logGaussianPearsonMoments } from './gaussian-moments.js';
import {
  evaluateBaseRdp,
  interpolateIntegerOrders,
  logExpm1,
  MAX_SERIES_ORDER,
  rdpFromLogExcessTerms,
  requireOrder,
  type RdpCurve,
} from '../series.js';

const LOG2 = Math.LN2;
const LOG4 = 2 * Math.LN2;

/**
 * Wang, Balle & Kasiviswanathan 2019, Thm. 9 at integer alpha >= 2:
 *
 *   (alpha - 1) eps'(alpha) <= log(1 + gamma^2 C(alpha,2) min{4 (e^eps(2) - 1), e^eps(2) min{2, (e^eps(inf) - 1)^2}}
 *                                 + sum_{j=3}^{alpha} gamma^j C(alpha,j) e^((j-1) eps(j)) min{2, (e^eps(inf) - 1)^j}),
 *
 * all terms positive; `logExpm1Inf` = log(e^eps(inf) - 1) (Infinity when eps(inf) is infinite,
 * which gives the thesis' form 4 (e^eps(2) - 1) and 2 e^((j-1) eps(j))).
 */
function wbkIntegerBound(gamma: number, baseRdp: RdpCurve, alpha: number, logExpm1Inf: number): number {
  const logGamma = Math.log(gamma);
  const terms: number[] = [];
  let maxWeight = 0;
  for (let j = 2; j <= alpha; j++) {
    const eps = evaluateBaseRdp(baseRdp, j);
    const pureCap = Math.min(LOG2, j * logExpm1Inf); // log min{2, (e^eps(inf) - 1)^j}
    const moment = j === 2 ? Math.min(LOG4 + logExpm1(eps), eps + pureCap) : (j - 1) * eps + pureCap;
    const logC = logBinomial(alpha, j);
    const a = j * logGamma;
    const term = a + logC + moment;
    terms.push(term);
    if (Number.isFinite(term)) {
      maxWeight = Math.max(maxWeight, 2 + Math.abs(a) + Math.abs(logC) + (j - 1) * eps + Math.abs(moment) + Math.abs(pureCap));
    }
  }
  return rdpFromLogExcessTerms(terms, maxWeight, alpha);
}

/**
 * Upper bound on the Rényi DP at `order` of M o SampleWithoutReplacement with
 * `samplingRatio` = m / n, for ANY mechanism M whose RDP under replace-one adjacency is bounded
 * by `baseRdp` (e.g. the Gaussian with L2 sensitivity 2 c for per-record clip norm c:
 * order * 4c^2 / (2 sigma^2)): Wang, Balle & Kasiviswanathan 2019, Thm. 9, which holds at integer
 * orders >= 2. It uses the refinement by baseRdp(Infinity) (the pure-DP epsilon of M) when that
 * is finite; Infinity, or NaN from a curve undefined at Infinity, disables it (the bound is
 * increasing in eps(Infinity), so that is always safe).
 *
 * A fractional order is bounded by linear interpolation of (alpha - 1) RDP(alpha) between the
 * neighbouring integer orders, valid because that function is convex in alpha (van Erven &
 * Harremoës 2014; `interpolateIntegerOrders`) — an upper bound, looser than an exact value.
 * The result is never above `baseRdp(order)` (subsampling cannot hurt: the subsampled pairs
 * are replace-one neighbours, and Rényi divergence is jointly quasi-convex); at ratio 1 Thm. 9
 * is looser than the base curve, so the base RDP is returned. Orders above `MAX_SERIES_ORDER`
 * (and Infinity) return baseRdp(order). Cost O(order) calls of baseRdp.
 *
 * @example withoutReplacementRdp(0.01, (a) => (a * 4) / (2 * 1.1 ** 2), 8)
 */
export function withoutReplacementRdp(samplingRatio: number, baseRdp: RdpCurve, order: number): number {
  const gamma = requireProbability('samplingRatio', samplingRatio);
  const alpha = requireOrder('order', order);
  if (typeof baseRdp !== 'function') throw new InvalidParameterError('baseRdp', baseRdp, 'a function order -> RDP');
  if (gamma === 0) return 0;
  const base = evaluateBaseRdp(baseRdp, alpha);
  if (gamma === 1 || alpha > MAX_SERIES_ORDER) return base;
  const epsInf = baseRdp(Infinity);
  const logExpm1Inf = typeof epsInf === 'number' && epsInf >= 0 ? logExpm1(epsInf) : Infinity;
  const bound = interpolateIntegerOrders(alpha, (a) =>
    Math.min(wbkIntegerBound(gamma, baseRdp, a, logExpm1Inf), evaluateBaseRdp(baseRdp, a)),
  );
  return Math.min(bound, base);
}

/**
 * Tighter bound for a GAUSSIAN base mechanism (noise multiplier z = sigma / Delta, Delta the
 * replace-one L2 sensitivity of the query on the subsample), derived here (WBK 2019 mention a
 * Gaussian-specific refinement; this derivation is self-contained and only uses what is proved
 * below). Notation: gamma = m / n, t^2 = 1/z^2, integer alpha >= 2.
 *
 * Step 1 (reduction to three neighbouring subsamples). Let record n differ (x_n vs x_n'). A uniform
 * m-subset S of [n] contains n with probability gamma and is then T + {n} with T a uniform
 * (m-1)-subset of [n-1]; otherwise it is a uniform m-subset of [n-1], which has the law of
 * T + {j} with T as before and j uniform in [n-1] \ T (each m-subset arises from m equally likely
 * pairs). Hence P = E_T P_T, Q = E_T Q_T with P_T = (1-gamma) N_T + gamma X_T,
 * Q_T = (1-gamma) N_T + gamma Y_T, X_T = M(T + x_n), Y_T = M(T + x_n'), N_T = E_j M(T + x_j).
 * (p, q) -> integral p^alpha q^(1-alpha) is jointly convex, so it suffices to bound one T.
 * Step 2 (binomial expansion). With P - Q = gamma (X - Y) and integer alpha,
 * E_Q[(P/Q)^alpha] = sum_{j=0}^{alpha} C(alpha, j) gamma^j E_Q[((X - Y)/Q)^j]; j = 1 gives 0 and
 * every other term is at most gamma^j C(alpha, j) integral |X - Y|^j Q^(1-j).
 * Step 3 (ternary moments). c -> c^(1-j) is convex, so pointwise Q^(1-j) <= (1-gamma) E_j
 * M(T + x_j)^(1-j) + gamma Y^(1-j): the j-th term is at most gamma^j C(alpha, j) zeta_j with
 * zeta_j = sup integral |X - Y|^j Z^(1-j) over triples X, Y, Z = M(.) of PAIRWISE replace-one
 * neighbouring subsamples (Z = Y included). For the Gaussian these are N(x, s^2 I), N(y, s^2 I),
 * N(0, s^2 I) with |x|, |y|, |x - y| <= Delta; with L_x = dN(x)/dN(0),
 * zeta_j = sup E[|L_x - L_y|^j], where (log L_x + r_x/2, log L_y + r_y/2) ~ N(0, Sigma), Sigma
 * = Gram(x, y) / s^2 (r_x = Sigma_11), and for even j the moment is, with b = j - a,
 *   T_j(Sigma) = sum_a C(j, a) (-1)^(j-a) exp(Sigma_11 a(a-1)/2 + Sigma_22 b(b-1)/2 + a b Sigma_12).
 * Step 4 (j = 2, exact supremum). T_2 = e^(r_x) + e^(r_y) - 2 e^((r_x + r_y - r_xy)/2) with
 * r_xy = |x - y|^2 / s^2; it increases in r_xy, and then in r_x when r_x + t^2 >= r_y (always on
 * [0, t^2]^3), so over the box: zeta_2 <= 2 e^(t^2/2) (e^(t^2/2) - 1) (attained by the
 * equilateral triangle). WBK's min{4 (e^eps(2) - 1), 2 e^eps(2)} is larger (about 4 t^2 vs t^2).
 * Step 5 (monotonicity in Sigma). If Sigma <= Sigma' (PSD order), take the Gaussian of Sigma'
 * as that of Sigma plus independent W ~ N(0, Sigma' - Sigma): L'_i = L_i exp(W_i - Var(W_i)/2)
 * and E[L' | L] = L, so by conditional Jensen E F(L') >= E F(L) for the convex
 * F(u, v) = |u - v|^j. So zeta_j <= T_j(Sigma*) for any Sigma* that dominates every feasible Gram.
 * Step 6 (dominating matrices). For coefficients (a, b), the feasible sup of |a x + b y|^2 / Delta^2
 * is at most (|a| + |b|)^2 when a b >= 0 and max(a^2, b^2) when a b < 0 (write a x + b y as
 * (a+b) x + |b| (x - y) when a >= -b >= 0). Sigma* = t^2 [[p, g], [g, p]] dominates both when
 * p >= 1, p + g >= 2 and p^2 - p >= g^2 (minimise p (1 + s^2) -+ 2 g s over s in [0, 1]). We use
 * g = sqrt(p^2 - p) with p in {4/3, 2, 4} (p = 4/3: the equilateral triangle of side 2 Delta/sqrt 3).
 * Step 7 (odd j). Cauchy-Schwarz: E|D|^j <= sqrt(E D^(j-1) E D^(j+1)) <= sqrt(zeta_(j-1) zeta_(j+1)).
 * Step 8 (generic). |X - Y|^j <= X^j + Y^j gives zeta_j <= 2 e^((j-1) eps(j)), eps(j) = j t^2 / 2.
 * Step 9 (WBK 2019 Thm. 27). Wang, Balle & Kasiviswanathan, arXiv:1808.00087 Thm. 27 (what
 * dp_accounting's `_compute_rdp_sample_wor_gaussian` implements) bounds the same ternary moments of
 * the Gaussian by the binary ones: zeta_j <= 4 B_j for even j and 4 sqrt(B_(j-1) B_(j+1)) for odd j,
 * B_j = E[(L_x - 1)^j] (|x| = Delta) = sum_i C(j, i) (-1)^(j-i) e^((i-1) eps(i)), the j-th forward
 * difference at 0 of e^((i-1) eps(i)), and zeta_2 <= min{4 (e^eps(2) - 1), 2 e^eps(2)}. Its terms
 * bound the same zeta_j as steps 3-8 (the ternary |chi|^j divergence of WBK's Thm. 9, which
 * steps 1-3 re-derive), so each zeta_j takes the minimum of all; Thm. 27 is then never tighter than
 * the result at any order, nor is steps 1-8 alone (the whole sum is increasing in each zeta_j).
 * Odd j through step 7 from the even minima gives 4 sqrt(B_(j-1) B_(j+1)) or better. B_j is
 * evaluated without cancellation where the alternating sum has none left (gaussian-moments.ts).
 * Each zeta_j bound is the minimum of those that apply. The alternating sum T_j is evaluated in
 * log space with a bound on its rounding error added; where that error exceeds half the sum (heavy
 * cancellation) the bound is not used (never rounded down).
 */
const GAUSSIAN_MENU: readonly number[] = [4 / 3, 2, 4];
/** Largest j for which the alternating sums T_j are tried (cost O(j) each, cached per curve). */
const MAX_TERNARY_MOMENT = 1024;
/** The binary moments B_j (step 9) are computed for j up to the next of these that a call needs. */
const PEARSON_CHUNK = 64;
/** Terms this far (log) below the j = 2 term of the series take the generic moment bound. */
const NEGLIGIBLE_TERM = 60;
const U = Number.EPSILON;

/**
 * Which bounds on the ternary moments zeta_j the Gaussian curve uses: `minimum` (the default) the
 * least of all; `derived` steps 4-8 alone; `thm27` WBK 2019 Thm. 27 alone (step 9 with step 7 for
 * odd j, and step 8) — the last two for comparisons: both are valid, never below `minimum`.
 */
export type WithoutReplacementGaussianBound = 'minimum' | 'derived' | 'thm27';
const WITHOUT_REPLACEMENT_GAUSSIAN_BOUNDS: readonly string[] = ['minimum', 'derived', 'thm27'];

/** Recently used ternary-moment tables, by t^2 (they depend on nothing else): a curve is rebuilt
 * for every trial order of the accountant's order refinement. */
const MOMENT_TABLES = new Map<string, (j: number) => number>();
const MOMENT_TABLES_KEPT = 8;

/**
 * j -> log of an upper bound on zeta_j for the Gaussian with t^2 = `t2` (steps 4, 6-9), each
 * computed once and kept (a table per t2, the last MOMENT_TABLES_KEPT t2 values kept).
 */
function ternaryMomentBounds(t2: number, bound: WithoutReplacementGaussianBound): (j: number) => number {
  const key = `${bound}:${t2}`;
  const known = MOMENT_TABLES.get(key);
  if (known !== undefined) {
    MOMENT_TABLES.delete(key);
    MOMENT_TABLES.set(key, known);
    return known;
  }
  const derived = bound !== 'thm27';
  const thm27 = bound !== 'derived';
  const generic = (j: number): number => LOG2 + ((j - 1) * j * t2) / 2;
  const cache = new Map<number, number>();
  // log B_j (step 9), computed for j up to a multiple of PEARSON_CHUNK, extended as orders need.
  let pearson: Float64Array = new Float64Array(0);
  const logPearson = (j: number): number => {
    if (j >= pearson.length) {
      const order = Math.min(MAX_TERNARY_MOMENT, Math.ceil((j + 1) / PEARSON_CHUNK) * PEARSON_CHUNK);
      pearson = logGaussianPearsonMoments(t2, order);
    }
    return pearson[j];
  };
  const evenMoment = (j: number): number => {
    let best = generic(j);
    if (j === 2) {
      if (derived) best = Math.min(best, LOG2 + t2 / 2 + logExpm1(t2 / 2));
      return thm27 ? Math.min(best, LOG4 + logExpm1(t2)) : best;
    }
    if (j > MAX_TERNARY_MOMENT || !Number.isFinite(t2)) return best;
    if (derived) for (const p of GAUSSIAN_MENU) best = Math.min(best, logAlternatingMoment(j, p * t2, Math.sqrt(p * p - p) * t2));
    return thm27 ? Math.min(best, LOG4 + logPearson(j)) : best;
  };
  const zeta = (j: number): number => {
    let value = cache.get(j);
    if (value === undefined) {
      if (j % 2 === 0) value = evenMoment(j);
      else {
        const lo = zeta(j - 1);
        const hi = j + 1 <= MAX_TERNARY_MOMENT ? zeta(j + 1) : Infinity;
        value = Math.min(generic(j), (lo + hi) / 2 + 4 * U * (Math.abs(lo) + Math.abs(hi) + 1));
      }
      cache.set(j, value);
    }
    return value;
  };
  MOMENT_TABLES.set(key, zeta);
  if (MOMENT_TABLES.size > MOMENT_TABLES_KEPT) MOMENT_TABLES.delete(MOMENT_TABLES.keys().next().value as string);
  return zeta;
}

/**
 * The RDP curve of M o SampleWithoutReplacement (ratio m / n, replace-one) for the Gaussian
 * mechanism of noise multiplier z (RDP alpha / (2 z^2)): at integer orders the bound above with
 * each zeta_j the least of steps 4-9 (`bound` chooses; see WithoutReplacementGaussianBound), at
 * fractional orders its interpolation by convexity (`interpolateIntegerOrders`: Thm. 27, like
 * Thm. 9, is proven at integer orders only), never above the base curve; orders above
 * `MAX_SERIES_ORDER` and Infinity give the base curve. The ternary-moment bounds zeta_j are
 * computed once per t^2 (O(J^2) for orders up to J <= 1024, kept for the last 8 values of t^2),
 * then each order costs O(order).
 *
 * @example withoutReplacementGaussianRdpCurve(0.01, 2)(13)
 */
export function withoutReplacementGaussianRdpCurve(samplingRatio: number, noiseMultiplier: number, bound: WithoutReplacementGaussianBound = 'minimum'): RdpCurve {
  const gamma = requireProbability('samplingRatio', samplingRatio);
  if (typeof noiseMultiplier !== 'number' || !(noiseMultiplier > 0)) {
    throw new InvalidParameterError('noiseMultiplier', noiseMultiplier, '> 0 (Infinity allowed)');
  }
  if (!WITHOUT_REPLACEMENT_GAUSSIAN_BOUNDS.includes(bound)) {
    throw new InvalidParameterError('bound', bound, `one of ${WITHOUT_REPLACEMENT_GAUSSIAN_BOUNDS.join(', ')}`);
  }
  const z = accountedNoiseMultiplier(noiseMultiplier);
  const t2 = 1 / (z * z);
  const base = (order: number): number => gaussianRdp(z, order);
  if (gamma === 0) return () => 0;
  const logGamma = Math.log(gamma);
  const zeta = ternaryMomentBounds(t2, bound);
  const generic = (j: number): number => LOG2 + ((j - 1) * j * t2) / 2;
  const integerBound = (alpha: number): number => {
    const terms: number[] = [];
    let maxWeight = 0;
    let floor = -Infinity; // log of the j = 2 term: the sum is at least that
    for (let j = 2; j <= alpha; j++) {
      const logC = logBinomial(alpha, j);
      const a = j * logGamma;
      // A term whose generic bound (step 8) is below e^-NEGLIGIBLE_TERM of the j = 2 term keeps it:
      // valid, and at most alpha e^-60 (relative) above the least bound, at a fraction of the cost.
      const moment = j > 2 && a + logC + generic(j) < floor - NEGLIGIBLE_TERM ? generic(j) : zeta(j);
      if (j === 2) floor = a + logC + moment;
      const term = a + logC + moment;
      terms.push(term);
      if (Number.isFinite(term)) maxWeight = Math.max(maxWeight, 2 + Math.abs(a) + Math.abs(logC) + Math.abs(moment));
    }
    return Math.min(rdpFromLogExcessTerms(terms, maxWeight, alpha), base(alpha));
  };
  return (order: number): number => {
    const alpha = requireOrder('order', order);
    const b = base(alpha);
    if (gamma === 1 || alpha > MAX_SERIES_ORDER) return b;
    return Math.min(interpolateIntegerOrders(alpha, integerBound), b);
  };
}
