/**
 * Exact Rényi DP of the Poisson-subsampled Gaussian mechanism (the "sampled Gaussian mechanism"
 * of DP-SGD) under add/remove-one adjacency: Mironov, Talwar & Zhang 2019, "Rényi Differential
 * Privacy of the Sampled Gaussian Mechanism" (MTZ below).
 *
 * With sensitivity 1, noise multiplier z (= sigma), sampling probability q, mu0 = N(0, z^2),
 * mu1 = N(1, z^2) and the likelihood ratio r(x) = mu1(x)/mu0(x) = exp((2x - 1)/(2 z^2)), the RDP
 * at order alpha is log(A_alpha) / (alpha - 1) with (MTZ Sec. 3, Thm. 4)
 *
 *     A_alpha = E_{x ~ mu0}[((1 - q) + q r(x))^alpha].
 *
 * Nothing here rounds toward less privacy loss: every value is an upper bound of A_alpha - 1
 * that includes a first-order bound on its own rounding error (see `SignedLogSum`), so the RDP
 * returned is >= the exact value. Measured against mpmath it is above by a relative < 1e-13 at
 * integer orders and < 1e-11 at fractional orders for z <= 5; at fractional orders the signed
 * series cancels like q^2/z^2 against O(1) terms, so the allowance grows like z^2: ~5e-11 at
 * z = 20, ~1e-8 at z = 100, ~1e-3 at z = 1e5 (still a valid bound, just looser).
 *
 * Why A - 1 and not A: at q = 1e-4, z = 5 the RDP is ~6e-11 while A is 1 + 6e-11; computing A and
 * then log(A) would leave 5 correct digits. Both series below are rewritten so that the O(1)
 * parts cancel analytically, using E_{mu0}[1 + alpha q (r - 1)] = 1.
 */
import { normalLogCdf } from '../../../math/normal.js';
import { requirePositiveOrInfinity, requireProbability } from '../../../validate.js';
import { accountedNoiseMultiplier } from '../../extreme-noise.js';
import { logExpm1, MAX_SERIES_ORDER, rdpFromLogExcess, requireOrder } from '../series.js';

const EPS = Number.EPSILON;

/** 3 + sqrt(8): the convergence factor per term of `alternatingTailSum`. */
const CVZ_RATE = 3 + Math.sqrt(8);
/** At most this many tail terms (truncation error <= 2 b0 / 5.83^24 ~ 1e-18 b0). */
const MAX_TAIL_TERMS = 24;

/** log(e^x + e^y) for x, y < Infinity. */
function logPlus(x: number, y: number): number {
  const hi = Math.max(x, y);
  return hi === -Infinity ? hi : hi + Math.log1p(Math.exp(Math.min(x, y) - hi));
}

/**
 * Sums positive and negative terms given as (log |term|, error weight) with separate running
 * log-scaled accumulators, and keeps beside each sum the sum of term * weight. The weight of a
 * term is 1 + the sum of the magnitudes of the logarithms it was assembled from: each of those
 * carries a rounding error of a few ulps of itself, so the term has a relative error below
 * 8 EPS * weight (the factor 8 covers products of up to ~4 roundings per part). `upperLog`
 * returns log(P - N + allowance), the allowance covering those errors plus 2 EPS per addition.
 */
class SignedLogSum {
  private scale = -Infinity;
  private pos = 0;
  private neg = 0;
  private weighted = 0;
  private count = 0;
  /** Extra non-negative allowance (e.g. a truncation bound), as a log-scaled sum. */
  private extra = 0;

  add(logAbsTerm: number, negative: boolean, weight: number): void {
    if (logAbsTerm === -Infinity) return;
    this.count++;
    if (logAbsTerm > this.scale) this.rescale(logAbsTerm);
    const v = Math.exp(logAbsTerm - this.scale);
    if (negative) this.neg += v;
    else this.pos += v;
    this.weighted += v * weight;
  }

  /** Adds a non-negative error allowance exp(logAmount) to the final sum. */
  addAllowance(logAmount: number): void {
    if (logAmount === -Infinity) return;
    if (logAmount > this.scale) this.rescale(logAmount);
    this.extra += Math.exp(logAmount - this.scale);
  }

  private rescale(newScale: number): void {
    const f = this.scale === -Infinity ? 0 : Math.exp(this.scale - newScale);
    this.pos *= f;
    this.neg *= f;
    this.weighted *= f;
    this.extra *= f;
    this.scale = newScale;
  }

  /** log(P + N), the scale of the rounding errors. */
  logMagnitude(): number {
    return this.scale + Math.log(this.pos + this.neg);
  }

  /** log of an upper bound of (sum of terms); -Infinity if that bound is <= 0. */
  upperLog(): number {
    if (this.scale === Infinity) return Infinity;
    const rounding = 8 * EPS * this.weighted + 2 * EPS * (this.count + 2) * (this.pos + this.neg);
    const value = this.pos - this.neg + rounding + this.extra;
    return value > 0 ? this.scale + Math.log(value) : -Infinity;
  }
}

/**
 * log((1 - q)^alpha - 1 + alpha q) for alpha > 1, 0 < q < 1: the remainder after the first
 * two terms of the binomial series of (1 - q)^alpha, which is >= 0 by convexity. For q <= 1/2 and
 * alpha q <= 1 the series sum_{j>=2} C(alpha, j) (-q)^j (terms shrink by a factor <= 1/2; the
 * partial sums never cancel more than a factor ~2); otherwise (alpha - 1) q - (1 - q)(1 - (1 - q)^(alpha - 1)),
 * where the subtracted part is at most 0.74 of the first (q > 1/2) or O(1) against alpha q > 1.
 */
function logBinomialRemainder(alpha: number, q: number, log1mq: number): number {
  if (q <= 0.5 && alpha * q <= 1) {
    let term = 0.5 * alpha * (alpha - 1) * q * q;
    let sum = term;
    for (let j = 2; j < 200 && Math.abs(term) > 1e-18 * Math.abs(sum); j++) {
      term *= (-(alpha - j) * q) / (j + 1);
      sum += term;
    }
    return Math.log(sum);
  }
  const g = -Math.expm1((alpha - 1) * log1mq);
  return Math.log((alpha - 1) * q - (1 - q) * g);
}

/** log(Phi(b) - Phi(a)) for a < b, without cancellation in either tail. */
function logNormalInterval(a: number, b: number): number {
  if (b <= 0) return logDiff(normalLogCdf(b), normalLogCdf(a));
  if (a >= 0) return logDiff(normalLogCdf(-a), normalLogCdf(-b));
  return Math.log1p(-(Math.exp(normalLogCdf(a)) + Math.exp(normalLogCdf(-b))));
}

/** log(e^x - e^y), -Infinity unless x > y. */
function logDiff(x: number, y: number): number {
  return x > y ? x + Math.log1p(-Math.exp(y - x)) : -Infinity;
}

/**
 * Cohen, Rodriguez Villegas & Zagier 2000, "Convergence acceleration of alternating series",
 * Algorithm 1: S = sum_{i>=0} (-1)^i b_i from b_0..b_{n-1}, for b_i = integral of t^i dmu(t) with
 * mu >= 0 on [0, 1]. Truncation error |S - S_n| <= S / T_n(3) <= 2 b_0 / (3 + sqrt 8)^n (their
 * Prop. 1). `logB[i]` = log b_i, `weights[i]` its error weight (see `SignedLogSum`). Returns log S_n
 * and the log of an error allowance: truncation plus the rounding of each weighted term (the
 * weights c_i / d lie in [0, 1]).
 */
function alternatingTailSum(logB: Float64Array, weights: Float64Array): { logSum: number; logError: number } {
  const n = logB.length;
  const b0 = logB[0];
  if (b0 === -Infinity) return { logSum: -Infinity, logError: -Infinity };
  let d = Math.pow(CVZ_RATE, n);
  d = (d + 1 / d) / 2;
  let b = -1;
  let c = -d;
  let s = 0;
  let err = 0;
  for (let k = 0; k < n; k++) {
    c = b - c;
    const v = Math.exp(logB[k] - b0);
    s += c * v;
    err += Math.abs(c) * v * (8 * EPS * (weights[k] + weights[0]) + 2 * n * EPS);
    b = ((k + n) * (k - n) * b) / ((k + 0.5) * (k + 1));
  }
  const sum = s / d;
  const relError = 2 / d + err / d;
  return { logSum: sum > 0 ? b0 + Math.log(sum) : -Infinity, logError: b0 + Math.log(relError) };
}

/**
 * log(n!) for n = 0..length-1 as compensated (Neumaier) running sums of log i: absolute error a
 * few ulps of log(n!). Grown on demand and shared by every call (a memo, not state).
 */
let logFactorials = new Float64Array([0, 0]);

function logFactorialTable(n: number): Float64Array {
  if (n >= logFactorials.length) {
    const table = new Float64Array(Math.max(n + 1, 2 * logFactorials.length));
    table.set(logFactorials);
    let sum = 0;
    let carry = 0;
    for (let i = 2; i < table.length; i++) {
      const x = Math.log(i);
      const t = sum + x;
      carry += sum >= x ? sum - t + x : x - t + sum;
      sum = t;
      table[i] = sum + carry;
    }
    logFactorials = table;
  }
  return logFactorials;
}

/** Quantities that depend on (q, z) only, with caches shared by all orders of a curve. */
class SampledGaussian {
  readonly logQ: number;
  readonly log1mQ: number;
  /** 1 / (2 z^2). */
  readonly halfPrecision: number;
  /** The point where (1 - q) mu0 = q mu1: z0 = 1/2 + z^2 log(1/q - 1) (MTZ Sec. 3.3). */
  readonly z0: number;
  /** Weight (see `SignedLogSum`) of the last `leftTerm` / `rightTerm`. */
  lastWeight = 0;
  private readonly logPhiLeft: number[] = [];
  private readonly logPhiRight = new Map<number, number>();
  /** k log(q/(1-q)) + log expm1((k^2-k)/(2z^2)) - log k!, and its weight, by k >= 2. */
  private readonly integerTerm: number[] = [];
  private readonly integerWeight: number[] = [];

  constructor(
    readonly q: number,
    readonly z: number,
  ) {
    this.logQ = Math.log(q);
    this.log1mQ = Math.log1p(-q);
    this.halfPrecision = 1 / (2 * z * z);
    this.z0 = 0.5 + z * z * (this.log1mQ - this.logQ);
  }

  /** log Phi((z0 - k)/z) = log of the N(k, z^2)-mass of (-inf, z0], cached by integer k >= 0. */
  logMassLeft(k: number): number {
    let v = this.logPhiLeft[k];
    if (v === undefined) {
      v = normalLogCdf((this.z0 - k) / this.z);
      this.logPhiLeft[k] = v;
    }
    return v;
  }

  /** log Phi((j - z0)/z) = log of the N(j, z^2)-mass of (z0, inf), cached by j. */
  logMassRight(j: number): number {
    let v = this.logPhiRight.get(j);
    if (v === undefined) {
      v = normalLogCdf((j - this.z0) / this.z);
      this.logPhiRight.set(j, v);
    }
    return v;
  }

  /**
   * Left-region term without its binomial coefficient (MTZ Sec. 3.3, A_alpha1):
   * log[(1-q)^(alpha-k) q^k E_mu0[r^k; x <= z0]] = log[(1-q)^(alpha-k) q^k e^((k^2-k)/(2z^2)) Phi((z0-k)/z)].
   */
  leftTerm(alpha: number, k: number): number {
    const a = (alpha - k) * this.log1mQ;
    const b = k * this.logQ;
    const c = (k * k - k) * this.halfPrecision;
    const d = this.logMassLeft(k);
    this.lastWeight = Math.abs(a) + Math.abs(b) + c + Math.abs(d);
    return a + b + c + d;
  }

  /**
   * Right-region term without its binomial coefficient (MTZ Sec. 3.3, A_alpha2), j = alpha - k:
   * log[(1-q)^k q^j E_mu0[r^j; x > z0]] = log[(1-q)^k q^j e^((j^2-j)/(2z^2)) Phi((j - z0)/z)].
   */
  rightTerm(alpha: number, k: number): number {
    const j = alpha - k;
    const a = k * this.log1mQ;
    const b = j * this.logQ;
    const c = (j * j - j) * this.halfPrecision;
    const d = this.logMassRight(j);
    this.lastWeight = Math.abs(a) + Math.abs(b) + Math.abs(c) + Math.abs(d);
    return a + b + c + d;
  }

  /** The k-dependent part of the integer-order term (`integerOrderLogExcess`); sets lastWeight. */
  integerPart(k: number, logFact: Float64Array): number {
    let v = this.integerTerm[k];
    if (v === undefined) {
      const a = k * this.logQ;
      const b = k * this.log1mQ;
      const c = logExpm1((k * k - k) * this.halfPrecision);
      v = a - b + c - logFact[k];
      this.integerTerm[k] = v;
      this.integerWeight[k] = Math.abs(a) + Math.abs(b) + Math.abs(c) + logFact[k];
    }
    this.lastWeight = this.integerWeight[k];
    return v;
  }
}

/** Compensated (Neumaier) running sum of log |C(alpha, k)|, advanced one k at a time. */
class LogBinomialRecurrence {
  private k = 0;
  private sum = 0;
  private carry = 0;
  constructor(private readonly alpha: number) {}

  /** log |C(alpha, k)| for the current k. */
  get value(): number {
    return this.sum + this.carry;
  }

  /** Number of recurrence steps so far (its rounding error is <= ~2 EPS per step). */
  get steps(): number {
    return this.k;
  }

  /** k -> k + 1: |C(alpha, k+1)| = |C(alpha, k)| |alpha - k| / (k + 1). */
  next(): void {
    const x = Math.log(Math.abs(this.alpha - this.k) / (this.k + 1));
    const t = this.sum + x;
    this.carry += Math.abs(this.sum) >= Math.abs(x) ? this.sum - t + x : x - t + this.sum;
    this.sum = t;
    this.k++;
  }
}

/**
 * log(A_alpha - 1) for integer alpha >= 2 (MTZ Sec. 3.2, binomial expansion of the integrand):
 * A_alpha = sum_{k=0}^{alpha} C(alpha,k) (1-q)^(alpha-k) q^k exp((k^2-k)/(2 z^2)); subtracting
 * 1 = sum_k C(alpha,k) (1-q)^(alpha-k) q^k leaves only positive terms:
 * A_alpha - 1 = sum_{k=2}^{alpha} C(alpha,k) (1-q)^(alpha-k) q^k expm1((k^2-k)/(2 z^2)).
 * Each term is log alpha! + alpha log(1-q) - log (alpha-k)! + `integerPart(k)`.
 */
function integerOrderLogExcess(g: SampledGaussian, alpha: number): number {
  const logFact = logFactorialTable(alpha);
  const common = logFact[alpha] + alpha * g.log1mQ;
  const commonWeight = 1 + logFact[alpha] + Math.abs(alpha * g.log1mQ);
  const sum = new SignedLogSum();
  for (let k = 2; k <= alpha; k++) {
    const part = g.integerPart(k, logFact);
    sum.add(common + part - logFact[alpha - k], false, commonWeight + g.lastWeight + logFact[alpha - k]);
  }
  return sum.upperLog();
}

/**
 * log(A_alpha - 1) for fractional alpha > 1 (MTZ Sec. 3.3). Split the integral at z0, where
 * (1-q) mu0 = q mu1, and expand ((1-q) + q r)^alpha by the binomial series in q r / (1-q) on the
 * left and in (1-q) / (q r) on the right (both ratios <= 1 there):
 *
 *   A_alpha = sum_{k>=0} C(alpha,k) [L_k + R_k],
 *   L_k = (1-q)^(alpha-k) q^k e^((k^2-k)/(2z^2)) Phi((z0-k)/z),
 *   R_k = (1-q)^k q^(alpha-k) e^(((alpha-k)^2-(alpha-k))/(2z^2)) Phi((alpha-k-z0)/z).
 *
 * The signed sum is exact (not the sum of absolute values). To get A_alpha - 1 without
 * cancellation we subtract 1 = E[(1 - alpha q) + alpha q r] region by region: on the left it
 * turns the k = 0 and k = 1 terms into f Phi(z0/z) and -alpha q (1 - (1-q)^(alpha-1)) Phi((z0-1)/z),
 * f = (1-q)^alpha - 1 + alpha q >= 0 (`logBinomialRemainder`); on the right it leaves
 * -Phi(-z0/z) - alpha q [Phi((1-z0)/z) - Phi(-z0/z)].
 *
 * C(alpha, k) > 0 for k <= floor(alpha) + 1; beyond, the signs alternate and |C(alpha,k)|,
 * L_k and R_k are all moment sequences of positive measures on [0, 1] (|C(alpha,k)| is a beta
 * integral; L_k, R_k integrate u^k with u = q r/(1-q) <= 1 resp. (1-q)/(q r) <= 1), hence so is
 * b_k = |C(alpha,k)| (L_k + R_k): the tail is summed by the CVZ acceleration with a proven bound
 * (`alternatingTailSum`) instead of the ~k^-(alpha+2) slow direct convergence.
 */
function fractionalOrderLogExcess(g: SampledGaussian, alpha: number): number {
  const { q, z, z0 } = g;
  const sum = new SignedLogSum();
  const logAlphaQ = Math.log(alpha) + g.logQ;

  // Left region, k = 0 and k = 1, minus (1 - alpha q) Phi(z0/z) and alpha q Phi((z0-1)/z).
  const f = logBinomialRemainder(alpha, q, g.log1mQ);
  const massLeft0 = g.logMassLeft(0);
  sum.add(f + massLeft0, false, 32 + Math.abs(massLeft0)); // the series: <= 60 terms, cancellation <= 2
  const shrink = Math.log(-Math.expm1((alpha - 1) * g.log1mQ));
  const massLeft1 = g.logMassLeft(1);
  sum.add(logAlphaQ + shrink + massLeft1, true, 2 + Math.abs(logAlphaQ) + Math.abs(shrink) + Math.abs(massLeft1));
  // Right region: minus (1 - alpha q) Phi(-z0/z) + alpha q Phi((1-z0)/z).
  const massRight0 = normalLogCdf(-z0 / z);
  sum.add(massRight0, true, 1 + Math.abs(massRight0));
  const slab = logNormalInterval(-z0 / z, (1 - z0) / z);
  sum.add(logAlphaQ + slab, true, 2 + Math.abs(logAlphaQ) + Math.abs(slab));

  // Positive head k = 0 .. floor(alpha) + 1.
  const head = Math.floor(alpha) + 1;
  const binom = new LogBinomialRecurrence(alpha);
  for (let k = 0; k <= head; k++) {
    const logC = binom.value;
    const cWeight = Math.abs(logC) + binom.steps;
    if (k >= 2) {
      const left = g.leftTerm(alpha, k);
      sum.add(logC + left, false, 1 + cWeight + g.lastWeight);
    }
    const right = g.rightTerm(alpha, k);
    sum.add(logC + right, false, 1 + cWeight + g.lastWeight);
    binom.next();
  }

  // Alternating tail k = head + 1, head + 2, ... whose first term is negative; as many terms as
  // make its truncation bound 2 b0 / 5.83^n at most EPS (P + N), the size of the rounding errors.
  const logB = new Float64Array(MAX_TAIL_TERMS);
  const weights = new Float64Array(MAX_TAIL_TERMS);
  let n = MAX_TAIL_TERMS;
  for (let i = 0; i < n; i++) {
    const k = head + 1 + i;
    const left = g.leftTerm(alpha, k);
    const leftWeight = g.lastWeight;
    const right = g.rightTerm(alpha, k);
    logB[i] = binom.value + logPlus(left, right);
    weights[i] = 2 + Math.abs(binom.value) + binom.steps + Math.max(leftWeight, g.lastWeight);
    binom.next();
    if (i === 0) {
      const needed = Math.ceil((Math.LN2 + logB[0] - Math.log(EPS) - sum.logMagnitude()) / Math.log(CVZ_RATE));
      n = needed > 2 ? Math.min(MAX_TAIL_TERMS, needed) : 2;
    }
  }
  const tail = alternatingTailSum(logB.subarray(0, n), weights.subarray(0, n));
  sum.add(tail.logSum, true, 0);
  sum.addAllowance(tail.logError);
  return sum.upperLog();
}

/** A pure function of (q, z, order) once the (q, z) context exists; shared by both exports. */
function rdpAtOrder(g: SampledGaussian | undefined, q: number, z: number, alpha: number): number {
  if (q === 0 || z === Infinity) return 0;
  if (alpha === Infinity) return Infinity;
  const full = alpha / (2 * z * z); // the unsampled Gaussian: exact at q = 1, an upper bound always
  if (q === 1 || g === undefined || alpha > MAX_SERIES_ORDER || full === Infinity) return full;
  const logExcess = Number.isInteger(alpha) ? integerOrderLogExcess(g, alpha) : fractionalOrderLogExcess(g, alpha);
  // logExcess = -Infinity: A - 1 <= 0 within the rounding bound, the RDP is 0.
  return Math.min(rdpFromLogExcess(logExcess, alpha), full);
}

/**
 * A finite z above 1e100 is accounted as 1e100 (`../extreme-noise.ts`, pessimistic): at z = 1e308
 * the tail masses of the fractional orders' series were NaN. Infinity stays (RDP 0, exact).
 */
function cappedNoise(z: number): number {
  return z === Infinity ? z : accountedNoiseMultiplier(z);
}

function context(q: number, z: number): SampledGaussian | undefined {
  return q > 0 && q < 1 && z < Infinity ? new SampledGaussian(q, z) : undefined;
}

/**
 * Rényi DP at `order` of one step of the Poisson-subsampled Gaussian mechanism (add/remove-one
 * adjacency, L2 sensitivity 1, noise std = `noiseMultiplier`): exact up to a relative ~1e-14
 * (always rounded up), Mironov, Talwar & Zhang 2019, Sec. 3.2 (integer orders) and Sec. 3.3
 * (fractional orders, signed two-sided series). q = 1 gives order / (2 z^2); q = 0 gives 0;
 * order = Infinity gives Infinity (for q > 0). Cost O(order).
 *
 * @example poissonGaussianRdp(0.01, 2.5, 5) * 50 // 2.18075656e-3 (dp_accounting's test value)
 */
export function poissonGaussianRdp(samplingProbability: number, noiseMultiplier: number, order: number): number {
  const q = requireProbability('samplingProbability', samplingProbability);
  const z = cappedNoise(requirePositiveOrInfinity('noiseMultiplier', noiseMultiplier));
  const alpha = requireOrder('order', order);
  return rdpAtOrder(context(q, z), q, z, alpha);
}

/**
 * `poissonGaussianRdp` at each of `orders`, sharing the (q, z)-dependent work (normal tail masses,
 * exp moments, log-factorials) between orders: ~0.6 ms for the accountant's default grid of 111
 * orders up to 1024 once the JIT has warmed up (the first call in a process takes ~10-20 ms).
 */
export function poissonGaussianRdpCurve(samplingProbability: number, noiseMultiplier: number, orders: readonly number[]): Float64Array {
  const q = requireProbability('samplingProbability', samplingProbability);
  const z = cappedNoise(requirePositiveOrInfinity('noiseMultiplier', noiseMultiplier));
  orders.forEach((order, i) => requireOrder(`orders[${i}]`, order));
  const g = context(q, z);
  const out = new Float64Array(orders.length);
  for (let i = 0; i < orders.length; i++) out[i] = rdpAtOrder(g, q, z, orders[i]);
  return out;
}

/**
 * log(A_alpha - 1) at each of `orders` (finite, in (1, MAX_SERIES_ORDER]), an upper bound that
 * includes its rounding error, for 0 < q <= 1 and 0 < z < Infinity: the quantity whose
 * log1p(exp(.)) / (alpha - 1) is the RDP before the cap alpha / (2 z^2). At q = 1, A_alpha =
 * exp(alpha (alpha - 1) / (2 z^2)). Used by the chord bounds of `sampled-gaussian-schedule.ts`.
 */
export function poissonGaussianLogExcessCurve(samplingProbability: number, noiseMultiplier: number, orders: readonly number[]): Float64Array {
  const q = samplingProbability;
  const z = noiseMultiplier;
  if (!(q > 0 && q <= 1) || !(z > 0 && z < Infinity)) throw new RangeError(`internal error: poissonGaussianLogExcessCurve(${q}, ${z})`);
  const out = new Float64Array(orders.length);
  const g = q < 1 ? new SampledGaussian(q, z) : undefined;
  for (let i = 0; i < orders.length; i++) {
    const alpha = orders[i];
    if (!(alpha > 1 && alpha <= MAX_SERIES_ORDER)) throw new RangeError(`internal error: poissonGaussianLogExcessCurve at order ${alpha}`);
    if (g === undefined) {
      const exponent = ((alpha * (alpha - 1)) / (2 * z * z)) * (1 + 4 * EPS);
      const v = logExpm1(exponent);
      out[i] = v + 4 * EPS * (Math.abs(v) + 1);
    } else out[i] = Number.isInteger(alpha) ? integerOrderLogExcess(g, alpha) : fractionalOrderLogExcess(g, alpha);
  }
  return out;
}
