/**
 * Moments of differences of Gaussian likelihood ratios, the ingredients of the RDP bounds for
 * sampling without replacement (without-replacement.ts), each returned as the log of an upper
 * bound (rounded up; never rounded down).
 *
 * With W ~ N(0, I) and L_x = dN(x, s^2 I) / dN(0, s^2 I) (W) the likelihood ratio:
 * - `logAlternatingMoment(j, P, G)` = log E[(L_x - L_y)^j] for even j, where the Gram matrix of
 *   (x, y) / s is [[P, G], [G, P]]: the alternating sum
 *   T_j = sum_a C(j, a) (-1)^(j-a) exp(P (a(a-1) + b(b-1)) / 2 + a b G), b = j - a.
 * - `logGaussianPearsonMoments(t2, J)` = log B_j, j = 0..J, the binary Pearson-Vajda moments
 *   B_j = E[(L_x - 1)^j] with |x|^2 / s^2 = t2 (the case y = 0, Sigma = [[t2, 0], [0, 0]]): the j-th
 *   forward difference at 0 of g(i) = exp((i - 1) eps(i)) = exp(t2 i (i - 1) / 2), which is what
 *   Wang, Balle & Kasiviswanathan 2019 (arXiv:1808.00087) Thm. 27 bounds the ternary moments of
 *   the subsampled Gaussian by.
 *
 * Both alternating sums cancel heavily when t2 j is small (B_j ~ t^j (j-1)!! while the terms are
 * ~ 2^j): in double precision they then carry no correct digit (dp_accounting's evaluation of
 * Thm. 27 comes out up to e^700 too large, or 6e-5 too small, there). B_j is evaluated as a sum
 * of POSITIVE terms instead (`positiveSeries`), with a proven tail bound.
 */
import { logBinomial, logGamma } from '../../../math/gamma.js';

const U = Number.EPSILON;

/**
 * log T_j(Sigma) for Sigma = [[P, G], [G, P]] (even j), rounded up (a bound on its rounding error
 * added); Infinity when that error exceeds `maxRelativeError` times the sum (heavy cancellation).
 */
export function logAlternatingMoment(j: number, P: number, G: number, maxRelativeError = 0.5): number {
  return alternatingMoment(j, P, P, G, maxRelativeError).log;
}

/**
 * The alternating sum T_j behind `logAlternatingMoment`, for Sigma = [[P1, G], [G, P2]]: `log`
 * (rounded up; Infinity when the error bound exceeds `maxRelativeError` of the sum, or half of
 * it), the bound's `relativeError`, and `logScale`, the largest log-term: exp of a log-term x
 * carries a relative error ~ EPS |x| that no evaluation in doubles avoids.
 */
function alternatingMoment(
  j: number,
  P1: number,
  P2: number,
  G: number,
  maxRelativeError: number,
): { log: number; logScale: number; relativeError: number } {
  if (j > MAX_PRODUCT_ROW) return alternatingMomentByLogs(j, P1, P2, G, maxRelativeError);
  // T_j = 2^BINOMIAL_SHIFT e^M sum_a (-1)^(j-a) [C(j, a) 2^-BINOMIAL_SHIFT] e^(x_a - M), x_a the
  // exponent of term a and M the largest; C(j, a) by products (relative error <= 2 min(a, b) EPS).
  const x = new Float64Array(j + 1);
  let maxX = -Infinity;
  for (let a = 0; a <= j; a++) {
    const b = j - a;
    x[a] = (P1 * a * (a - 1) + P2 * b * (b - 1)) / 2 + a * b * G;
    if (x[a] > maxX) maxX = x[a];
  }
  if (!Number.isFinite(maxX)) return { log: Infinity, logScale: maxX, relativeError: Infinity };
  let sum = 0;
  let err = 0;
  let c = BINOMIAL_SCALE;
  const common = 16 * U * (Math.abs(maxX) + 1) + (j + 8) * U;
  for (let a = 0; a <= j; a++) {
    const b = j - a;
    const v = c * Math.exp(x[a] - maxX);
    sum += b % 2 === 0 ? v : -v;
    // relative error of v: both exponents (16 EPS of their magnitude each), C(j, a)
    // (2 min(a, b) EPS), this product and the summation ((j + 8) EPS); e^y - 1 <= 2y for y <= 1.
    const eta = 16 * U * (Math.abs((P1 * a * (a - 1) + P2 * b * (b - 1)) / 2) + Math.abs(a * b * G) + 4) + 2 * U * Math.min(a, b);
    err += v * 2 * (eta + common);
    c = (c / (a + 1)) * b; // C(j, a + 1) 2^-BINOMIAL_SHIFT, finite for j <= 1029
  }
  const relativeError = sum > 0 ? err / sum : Infinity;
  if (!(relativeError <= Math.min(0.5, maxRelativeError))) return { log: Infinity, logScale: maxX, relativeError };
  const log = maxX + BINOMIAL_SHIFT * Math.LN2 + Math.log(sum + err);
  return { log: log + 4 * U * (Math.abs(log) + Math.abs(maxX) + 2), logScale: maxX + j * Math.LN2, relativeError };
}

/** The binomials are carried as C(j, a) 2^-BINOMIAL_SHIFT so that their sum 2^j stays finite. */
const BINOMIAL_SHIFT = 64;
const BINOMIAL_SCALE = 2 ** -BINOMIAL_SHIFT;
/** Rows whose binomials all fit a double (C(1029, 514) < 2^1024) are built by products. */
const MAX_PRODUCT_ROW = 1029;

/** `alternatingMoment` with the binomials as logs (`logBinomial`), for rows beyond MAX_PRODUCT_ROW. */
function alternatingMomentByLogs(j: number, P1: number, P2: number, G: number, maxRelativeError: number): { log: number; logScale: number; relativeError: number } {
  const logs = new Float64Array(j + 1);
  const eta = new Float64Array(j + 1);
  let max = -Infinity;
  for (let a = 0; a <= j; a++) {
    const b = j - a;
    const logC = logBinomial(j, a);
    const pPart = (P1 * a * (a - 1) + P2 * b * (b - 1)) / 2;
    const gPart = a * b * G;
    logs[a] = logC + pPart + gPart;
    eta[a] = 16 * U * (Math.abs(pPart) + Math.abs(gPart) + 4) + 80 * U * Math.abs(logC);
    if (logs[a] > max) max = logs[a];
  }
  if (!Number.isFinite(max)) return { log: Infinity, logScale: max, relativeError: Infinity };
  let sum = 0;
  let err = 0;
  for (let a = 0; a <= j; a++) {
    const v = Math.exp(logs[a] - max);
    sum += (j - a) % 2 === 0 ? v : -v;
    err += v * (Math.expm1(eta[a] + 16 * U * (Math.abs(max) + 1)) + (j + 4) * U);
  }
  const relativeError = sum > 0 ? err / sum : Infinity;
  if (!(relativeError <= Math.min(0.5, maxRelativeError))) return { log: Infinity, logScale: max, relativeError };
  return { log: max + Math.log(sum + err) + 4 * U * (Math.abs(max) + 2), logScale: max, relativeError };
}

/**
 * The alternating sum is used for B_j when its error bound is within this factor of what the
 * exponentials alone carry (EPS (|largest log-term| + 1)) or below 1e-11 relative; otherwise
 * (cancellation) the positive series.
 */
const DIRECT_ERROR_FACTOR = 256;
/** Work cap of the positive series (cells = orders x terms): beyond it the tail bound is added. */
const MAX_SERIES_CELLS = 4e7;
/** The series stops once every needed tail is below e^-TAIL_LOG_MARGIN of its partial sum. */
const TAIL_LOG_MARGIN = 46;

/**
 * log of upper bounds on B_j = E[(L - 1)^j] (L the likelihood ratio of N(t, 1) to N(0, 1), t^2 =
 * `t2`) for every EVEN j in 0..`maxOrder` (odd entries are NaN: B_j for odd j can be negative and
 * is not needed). Each is the alternating sum where it is accurate to `DIRECT_RELATIVE_ERROR`,
 * otherwise the positive series; +Infinity where neither gives a finite bound. t2 = 0 gives
 * B_0 = 1 and B_j = 0 (log -Infinity) for j >= 1.
 *
 * @example Math.exp(logGaussianPearsonMoments(0.25, 4)[2]) // e^0.25 - 1
 */
export function logGaussianPearsonMoments(t2: number, maxOrder: number): Float64Array {
  const out = new Float64Array(maxOrder + 1).fill(NaN);
  out[0] = 0;
  if (maxOrder < 2) return out;
  if (t2 === 0) {
    for (let j = 2; j <= maxOrder; j += 2) out[j] = -Infinity;
    return out;
  }
  let seriesOrder = 0;
  for (let j = 2; j <= maxOrder; j += 2) {
    const direct = alternatingMoment(j, t2, 0, 0, Infinity);
    const accepted = Math.max(1e-11, DIRECT_ERROR_FACTOR * U * (Math.abs(direct.logScale) + 1));
    out[j] = direct.relativeError <= accepted ? direct.log : Infinity;
    if (out[j] === Infinity) seriesOrder = j;
  }
  if (seriesOrder === 0 || !Number.isFinite(t2)) return out;
  const series = positiveSeries(t2, seriesOrder);
  for (let j = 2; j <= seriesOrder; j += 2) out[j] = Math.min(out[j], series[j]);
  return out;
}

/**
 * log upper bounds on B_j, j = 0..J, from a series of positive terms. With h = t2 / 2,
 *
 *   B_j = sum_i C(j, i) (-1)^(j-i) e^(h i (i-1)) = sum_{n>=0} (h^n / n!) N_n(j),
 *   N_n(j) = Delta^j [(i (i-1))^n] (0)   (the j-th forward difference at 0 of i -> (i(i-1))^n),
 *
 * and N_n(j) are the coefficients of (i(i-1))^n in the binomial basis C(i, j). Multiplying by
 * i (i-1) acts on that basis as i (i-1) C(i, j) = (j+1)(j+2) C(i, j+2) + 2 j (j+1) C(i, j+1) +
 * j (j-1) C(i, j) (from i C(i, j) = (j+1) C(i, j+1) + j C(i, j)), so
 *
 *   N_0(j) = [j = 0],   N_{n+1}(j) = j (j-1) (N_n(j) + 2 N_n(j-1) + N_n(j-2)),
 *
 * every N_n(j) >= 0 (by induction), and the terms b_n(j) = N_n(j) h^n / n! obey
 * b_{n+1}(j) = (h / (n+1)) j (j-1) (b_n(j) + 2 b_n(j-1) + b_n(j-2)): no cancellation, each step
 * adds at most 5 roundings (relative), the partial sums one per term. Each row j carries its own
 * power-of-two exponent (the values span e^(+-10^4)); rescaling by powers of two is exact.
 *
 * Tail: N_n(j) <= sum_i C(j, i) (i (i-1))^n <= 2^j (j (j-1))^n, so with lambda = h j (j-1),
 * sum_{n>N} b_n(j) <= 2^j lambda^(N+1) / (N+1)! / (1 - lambda / (N+2)) when N + 2 > lambda. The
 * series stops when every row's tail is below e^-46 of its partial sum (or at the work cap); the
 * tail bound (doubled for its own rounding) is then added, so the result is an upper bound.
 */
function positiveSeries(t2: number, J: number): Float64Array {
  const h = t2 / 2;
  // Row j holds its current term mant[j] 2^exps[j] and its partial sum sums[j] 2^sumExps[j]; a
  // term is rescaled (exactly, by a power of two) when it leaves [TINY, HUGE].
  const mant = new Float64Array(J + 1);
  const exps = new Int32Array(J + 1);
  const sums = new Float64Array(J + 1);
  const sumExps = new Int32Array(J + 1);
  mant[0] = 1;
  sums[0] = 1;
  const logLambda = new Float64Array(J + 1);
  for (let j = 2; j <= J; j++) logLambda[j] = Math.log(h) + Math.log(j) + Math.log(j - 1);
  const maxSteps = Math.max(J, Math.floor(MAX_SERIES_CELLS / (J + 1)));
  let steps = 0;
  let tails: Float64Array | undefined;
  for (let n = 0; n < maxSteps; n++) {
    const hn = h / (n + 1);
    // terms n -> n + 1, rows in descending order so that rows j-1, j-2 still hold term n
    for (let j = J; j >= 2; j--) {
      const a = mant[j];
      const b = mant[j - 1];
      const c = mant[j - 2];
      if (a === 0 && b === 0 && c === 0) continue;
      // the new term in the unit of the largest contributor (every scaling below is <= 1)
      let e = -2147483648;
      if (a > 0) e = exps[j];
      if (b > 0 && exps[j - 1] > e) e = exps[j - 1];
      if (c > 0 && exps[j - 2] > e) e = exps[j - 2];
      const v = (a > 0 ? a * pow2(exps[j] - e) : 0) + (b > 0 ? 2 * b * pow2(exps[j - 1] - e) : 0) + (c > 0 ? c * pow2(exps[j - 2] - e) : 0);
      let term = hn * (j * (j - 1)) * v;
      if (!(term >= TINY && term <= HUGE)) {
        const k = Math.floor(Math.log2(term));
        term *= pow2(-k); // exact: term is a normal number, 2^-k puts it in [1/2, 2]
        e += k;
      }
      mant[j] = term;
      exps[j] = e;
      if (sums[j] === 0) {
        sums[j] = term;
        sumExps[j] = e;
      } else if (e > sumExps[j]) {
        // the sum moves to the term's unit (what underflows is below 2^-1074 of the term)
        sums[j] = sums[j] * pow2(sumExps[j] - e) + term;
        sumExps[j] = e;
      } else {
        sums[j] += term * pow2(e - sumExps[j]); // an underflow drops < 2^-1074 of the sum
      }
      if (sums[j] > HUGE) {
        const k = Math.floor(Math.log2(sums[j]));
        sums[j] *= pow2(-k);
        sumExps[j] += k;
      }
    }
    mant[0] = 0;
    mant[1] = 0;
    steps = n + 1;
    // the last row converges last (its lambda is the largest): test it alone first
    if ((steps % 8 === 0 && rowConverged(J - (J % 2), steps, logLambda, sums, sumExps)) || steps === maxSteps) {
      tails = tailBounds(J, steps, logLambda);
      if (converged(J, sums, sumExps, tails)) break;
    }
  }
  tails ??= tailBounds(J, steps, logLambda);
  const out = new Float64Array(J + 1).fill(NaN);
  // 5 roundings per term and 1 per addition, relative, per step (all quantities positive), plus
  // underflows below 2^-1074 of a sum: 8 EPS per step covers them.
  const inflate = Math.log1p(8 * U * (steps + 2));
  for (let j = 0; j <= J; j += 2) {
    if (!(sums[j] > 0)) {
      out[j] = tails[j];
      continue;
    }
    const logSum = Math.log(sums[j]) + sumExps[j] * Math.LN2;
    const withTail = tails[j] === -Infinity ? logSum : Math.max(logSum, tails[j]) + Math.log1p(Math.exp(-Math.abs(logSum - tails[j])));
    out[j] = withTail + inflate + 4 * U * (Math.abs(withTail) + 1);
  }
  return out;
}

const TINY = 2 ** -256;
const HUGE = 2 ** 256;
/** 2^d for integer d <= 0, exactly (0 below 2^-1100, as the products it scales round to). */
const POW2 = new Float64Array(2200).map((_, i) => 2 ** (i - 1100));
function pow2(d: number): number {
  return d < -1100 ? 0 : POW2[d + 1100];
}

/**
 * log of twice (for the bound's own rounding) the tail bound of each row after `steps` steps, which
 * summed the terms n = 0..steps: with N = steps + 1 and lambda = h j (j - 1),
 * sum_{n >= N} b_n(j) <= (1 + e^(-2N/j))^j lambda^N / N! / (1 - lambda / (N+1)) (Infinity while
 * lambda >= N + 1), since for n >= N, N_n(j) <= sum_i C(j, i) (i (i-1))^n <= (j (j-1))^n
 * sum_i C(j, i) (i/j)^(2n) <= (j (j-1))^n (1 + e^(-2n/j))^j (i (i-1) / (j (j-1)) <= (i/j)^2 and
 * (i/j)^(2n) <= e^(-2n (j-i)/j)).
 */
function tailBounds(J: number, steps: number, logLambda: Float64Array): Float64Array {
  const tails = new Float64Array(J + 1).fill(-Infinity);
  const first = steps + 1;
  const logFactorial = logGamma(first + 1);
  for (let j = 2; j <= J; j++) {
    const ratio = Math.exp(logLambda[j]) / (first + 1);
    const spread = j * Math.log1p(Math.exp((-2 * first) / j));
    tails[j] = ratio < 1 ? spread + first * logLambda[j] - logFactorial - Math.log1p(-ratio) + Math.LN2 : Infinity;
  }
  return tails;
}

function rowConverged(j: number, steps: number, logLambda: Float64Array, sums: Float64Array, sumExps: Int32Array): boolean {
  if (!(sums[j] > 0)) return false;
  const first = steps + 1;
  const ratio = Math.exp(logLambda[j]) / (first + 1);
  if (!(ratio < 1)) return false;
  const tail = j * Math.log1p(Math.exp((-2 * first) / j)) + first * logLambda[j] - logGamma(first + 1) - Math.log1p(-ratio) + Math.LN2;
  return tail <= Math.log(sums[j]) + sumExps[j] * Math.LN2 - TAIL_LOG_MARGIN;
}

function converged(J: number, sums: Float64Array, exps: Int32Array, tails: Float64Array): boolean {
  for (let j = 2; j <= J; j += 2) {
    if (!(sums[j] > 0)) return false;
    if (tails[j] > Math.log(sums[j]) + exps[j] * Math.LN2 - TAIL_LOG_MARGIN) return false;
  }
  return true;
}
