/**
 * Propose-Test-Release (Dwork & Lei 2009; Vadhan 2017, Sec. 3.2) for the relative sensitivity of
 * ridge regression, `000` Sec. 5.3, Prop. 2 — with a test statistic that is provably 1-sensitive.
 *
 * What is tested. RGM-GD (`000` Prop. 1, eq. 10-11) needs, for the clipped data (rows with
 * x^T C^-1 x <= R_c^2), A~ = (1/n) sum x~_i x~_i^T + mu I  >=  rho C  on the dataset AND on each
 * of its neighbours (Def. 2 is used in both directions in the proof of Thm. 1). Call such a
 * dataset "safe". PTR releases `g(X) + Lap(1/epsilon)` and aborts when it is <= log(1/delta)/epsilon
 * (`000` Prop. 2 (iii), same direction and constants).
 *
 * Why not the paper's Delta_+ as the statistic. The Laplace test is epsilon-DP only if the
 * released statistic has sensitivity 1 (Vadhan 2017, Sec. 3.2: "the distance to the nearest unsafe
 * dataset" is 1-Lipschitz). `000` App. B.4 proves Delta_+ <= Delta but not that Delta_+ is
 * 1-Lipschitz, and it is not: its weights x_i^T (A~ - rho C)^-1 x_i are measured in the dataset's
 * own metric, which one record can change drastically. With C = I, mu = 0.1, rho = mu - 1e-6,
 * n = 100 rows (1, 0): Delta_+ = n (the weights never sum to n), but replacing one row by (0, 1)
 * gives Delta_+ = 2 (test/learners/rgm/rgm-gd.test.ts reproduces this). A Laplace test on Delta_+ can
 * then pass on X and fail on X' with probabilities far apart: not epsilon-DP. `paperDeltaPlus`
 * computes it for comparison only.
 *
 * The statistic used instead (a lower bound on the distance to unsafety, 1-Lipschitz):
 *   m(X) = lambda_min(C^-1/2 A~ C^-1/2) - rho,    g(X) = n m(X) / R_c^2 - 1.
 * Proof. Clipping gives x x^T <= (x^T C^-1 x) C <= R_c^2 C, so replacing one row moves
 * C^-1/2 A~ C^-1/2 by -P + Q with 0 <= P, Q <= (R_c^2/n) I; by Weyl, |m(X) - m(X')| <= R_c^2/n,
 * i.e. g is 1-Lipschitz under replace-one. If X is unsafe, some X'' in {X} u N(X) has m(X'') < 0,
 * so m(X) < R_c^2/n and g(X) < 0; then P[g + Lap(1/eps) > log(1/delta)/eps] <= delta/2. This is
 * the bound `000` App. B.5 (eq. 75-76) itself uses to show acceptance for Gaussian features.
 * Optionally the test also enforces ||b~|| <= bNormBound (b~ = (1/n) sum x~_i y~_i, ||x~_i y~_i||
 * <= B): g_b = n (bNormBound - ||b~||) / (2B) - 1 is 1-Lipschitz by the same argument, and the
 * test uses min(g, g_b) (a min of 1-Lipschitz functions is 1-Lipschitz).
 *
 * Two slips of `000` App. B.5 are not repeated here: eq. (75) drops the factor rho-bar
 * (A~ - rho C >= (1 - beta) rho-bar Sigma, not (1 - beta) Sigma), and eq. (77) claims
 * Delta_+ + Lap >= Delta_+ (Laplace noise is symmetric): acceptance is only with high probability.
 *
 * Floating point: m(X) is found by bisection on Cholesky factorisations, whose rounding makes the
 * computed g 1-Lipschitz only up to an error e. `ptrStatistic` returns a PUBLIC sensitivity bound
 * 1 + 2e, with e = n (64 d eps + 1e-15) lambda_max-bound / R_c^2 (Cholesky backward error
 * O(d eps ||K||) plus the bisection tolerance, K = C^-1/2 A~ C^-1/2 <= (R_c^2 + mu / lambda_min(C)) I),
 * and the test scales its noise by it (an exact neighbour pair at distance exactly 1 differs by
 * 1 + 3e-15 in floating point: see the tests).
 *
 * Floating-point-safe noise: the statistic is rounded to a public power-of-two grid and released
 * with exact discrete Laplace noise (`mechanisms/grid-noise.ts` `planLaplaceGrid`: the rounding
 * costs one grid step of sensitivity, paid in the scale), so the released value is exactly what
 * the pure-DP analysis speaks of (Mironov 2012's attack on textbook Laplace noise does not apply).
 */
import type { LaplaceEvent } from '../../accounting/events/types.js';
import { InvalidParameterError } from '../../errors.js';
import { addLaplaceGridNoise, planLaplaceGrid, type LaplaceGridPlan } from '../../mechanisms/grid-noise.js';
import { choleskyFactor, choleskySolve } from '../../math/linear-algebra.js';
import { integrate } from '../../math/quadrature.js';
import { logGamma } from '../../math/gamma.js';
import type { Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';

/**
 * sup { t : A - t B is positive definite } for symmetric A and SPD B (d x d, row-major), i.e. the
 * smallest generalised eigenvalue of the pencil (A, B), by bisection on Cholesky factorisations.
 * Returns the end of the final bracket at which the factorisation SUCCEEDED (never above the
 * computed supremum). Cost O(d^3) per step, 200 steps at most.
 */
export function pencilMinEigenvalue(a: Float64Array, b: Float64Array, d: number): number {
  const work = new Float64Array(d * d);
  const factor = new Float64Array(d * d);
  const positive = (t: number): boolean => {
    for (let k = 0; k < d * d; k++) work[k] = a[k] - t * b[k];
    return choleskyFactor(work, d, factor) !== null;
  };
  let scale = 0;
  for (let k = 0; k < d * d; k++) scale = Math.max(scale, Math.abs(a[k]));
  let traceB = 0;
  for (let k = 0; k < d; k++) traceB += b[k * d + k];
  scale = Math.max(scale / Math.max(Number.MIN_VALUE, traceB / d), 1e-300);
  let lo = -scale;
  for (let i = 0; !positive(lo); i++) {
    if (i > 2000) throw new InvalidParameterError('matrix', 'pencil', 'finite entries with a positive-definite B');
    lo *= 2;
  }
  let hi = Math.max(scale, Math.abs(lo));
  for (let i = 0; positive(hi); i++) {
    if (i > 2000) throw new InvalidParameterError('matrix', 'pencil', 'finite entries');
    hi *= 2;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-15 * Math.max(Math.abs(lo), Math.abs(hi), 1e-300); i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (positive(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

export interface PtrStatisticInput {
  /** A~ = (1/n) sum x~_i x~_i^T + mu I, row-major d x d. */
  readonly gram: Float64Array;
  /** The public SPD matrix C of the clipping. */
  readonly clipMatrix: Float64Array;
  readonly d: number;
  readonly n: number;
  /** The proposed rho (`000` Prop. 2 (i)). */
  readonly rho: number;
  /** mu >= 0 included in A~ (public; bounds lambda_max(K) for the rounding slack). */
  readonly regularization: number;
  /** R_c: every row satisfies x~^T C^-1 x~ <= R_c^2. */
  readonly featureClip: number;
  /** Optional test ||b~|| <= bNormBound, with b~ and the per-row bound B = bClip. */
  readonly bNorm?: { readonly value: number; readonly bound: number; readonly bClip: number };
}

export interface PtrStatistic {
  /** m(X) = lambda_min(C^-1/2 A~ C^-1/2) - rho. */
  readonly margin: number;
  /** g(X) = min(n m / R_c^2, n (bNormBound - ||b~||) / (2B)) - 1, 1-Lipschitz under replace-one. */
  readonly value: number;
  /** Public bound on the sensitivity of the COMPUTED g: 1 plus twice its rounding error bound (>= 1). */
  readonly sensitivity: number;
}

/**
 * The public bound 1 + 2e on the sensitivity of the COMPUTED statistic (file comment): from n, d,
 * C, mu, rho, R_c and the b-norm test's constants only, never from the data, so the test's noise
 * (and event) are known before the data are read.
 */
export function ptrStatisticSensitivity(input: Omit<PtrStatisticInput, 'gram' | 'bNorm'> & { readonly bNorm?: { readonly bound: number; readonly bClip: number } }): number {
  const { clipMatrix, d, n, rho, featureClip } = input;
  const mu = input.regularization;
  const r2 = featureClip * featureClip;
  const identity = new Float64Array(d * d);
  for (let k = 0; k < d; k++) identity[k * d + k] = 1;
  const lambdaMinC = pencilMinEigenvalue(clipMatrix, identity, d);
  let error = (n * (64 * d * Number.EPSILON + 1e-15) * (r2 + mu / lambdaMinC + Math.abs(rho))) / r2;
  if (input.bNorm !== undefined) {
    const { bound, bClip } = input.bNorm;
    error = Math.max(error, n * (4 * d * Number.EPSILON) * (1 + bound / bClip));
  }
  return 1 + 2 * error;
}

const PTR_STATISTIC_INPUT = optionNames<PtrStatisticInput>({ gram: true, clipMatrix: true, d: true, n: true, rho: true, regularization: true, featureClip: true, bNorm: true });

/** The 1-sensitive PTR statistic g(X) (see the file comment for the proof). PRIVATE: release it only through `proposeTestRelease`. */
export function ptrStatistic(input: PtrStatisticInput): PtrStatistic {
  rejectUnknownOptions(input, PTR_STATISTIC_INPUT, 'ptrStatistic');
  const { gram, clipMatrix, d, n, rho, featureClip } = input;
  const r2 = featureClip * featureClip;
  const margin = pencilMinEigenvalue(gram, clipMatrix, d) - rho;
  let value = (n * margin) / r2;
  if (input.bNorm !== undefined) {
    const { value: norm, bound, bClip } = input.bNorm;
    value = Math.min(value, (n * (bound - norm)) / (2 * bClip));
  }
  return { margin, value: value - 1, sensitivity: ptrStatisticSensitivity(input) };
}

/**
 * `000` Prop. 2's Delta_+ = min{ |I| : sum_{i in I} x~_i^T (A~ - rho C)^-1 x~_i >= n } (0 when
 * A~ - rho C is not positive definite), by sorting the weights as App. B.4 says; capped at n
 * (Delta <= n always). A lower bound on the number of rows to change to break A~ >= rho C, but
 * NOT 1-Lipschitz (file comment): for comparison only, never released.
 */
export function paperDeltaPlus(x: Float64Array, gram: Float64Array, clipMatrix: Float64Array, d: number, n: number, rho: number): number {
  const shifted = new Float64Array(d * d);
  for (let k = 0; k < d * d; k++) shifted[k] = gram[k] - rho * clipMatrix[k];
  const factor = choleskyFactor(shifted, d);
  if (factor === null) return 0;
  const weights = new Float64Array(n);
  const row = new Float64Array(d);
  const solved = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    row.set(x.subarray(i * d, (i + 1) * d));
    choleskySolve(factor, d, row, solved);
    let w = 0;
    for (let k = 0; k < d; k++) w += row[k] * solved[k];
    weights[i] = w;
  }
  weights.sort().reverse();
  let sum = 0;
  for (let k = 0; k < n; k++) {
    sum += weights[k];
    if (sum >= n) return k + 1;
  }
  return n;
}

/**
 * `000` Prop. 3, eq. (12): the proposal rho = beta * rho-bar for rows x_i ~ N(0, C) clipped to
 * x^T C^-1 x <= R_c^2, with rho-bar = E[min(||u||^2, R_c^2)] / d, u ~ N(0, I_d) (App. B.5, eq. 74),
 * and beta = 1/2 as in the proposition. Computed as rho-bar = 1 - E[(||u||^2 - R_c^2)_+] / d by
 * quadrature of the chi-square density. Only a proposal: any rho > 0 is private (the test decides).
 */
export function gaussianFeatureRho(dimension: number, featureClip: number, beta = 0.5): number {
  const d = requireInteger('dimension', dimension, 1);
  const r2 = requirePositive('featureClip', featureClip) ** 2;
  requireOpenUnit('beta', beta);
  const logNorm = (d / 2) * Math.log(2) + logGamma(d / 2);
  const density = (t: number) => (t <= 0 ? 0 : Math.exp((d / 2 - 1) * Math.log(t) - t / 2 - logNorm));
  const tail = integrate((t) => (t - r2) * density(t), r2, Infinity, { relTol: 1e-10, absTol: 1e-300 }).value;
  return beta * (1 - tail / d);
}

export interface PtrResult {
  readonly passed: boolean;
  /** The released value: the statistic rounded to the grid plus exact discrete Laplace noise. */
  readonly noisyStatistic: number;
  /** log(1/delta) / epsilon: the test passes when the noisy statistic is above it (`000` Prop. 2 (iii)). */
  readonly threshold: number;
  readonly epsilon: number;
  readonly delta: number;
  /** Discrete Laplace mechanism on the statistic: noise multiplier >= sensitivity / (epsilon sensitivity) = 1/epsilon. */
  readonly event: LaplaceEvent;
  /** The grid of the released value. */
  readonly granularity: number;
}

/**
 * The noise of the test: discrete Laplace on a grid with noise multiplier >= 1/epsilon relative
 * to the statistic's (public) sensitivity, i.e. epsilon-DP. Known before the data are read.
 */
export function ptrNoisePlan(epsilon: number, sensitivity = 1): LaplaceGridPlan {
  requirePositive('ptrEpsilon', epsilon);
  if (!(sensitivity >= 1 && Number.isFinite(sensitivity))) throw new InvalidParameterError('sensitivity', sensitivity, 'a finite number >= 1 (the statistic is a distance: 1-Lipschitz at best)');
  return planLaplaceGrid({ sensitivity, noiseMultiplier: 1 / epsilon, dimension: 1 });
}

const PROPOSE_TEST_RELEASE_OPTIONS = optionNames<NonNullable<Parameters<typeof proposeTestRelease>[1]>>({ epsilon: true, delta: true, rng: true, sensitivity: true });

/**
 * The test of `000` Prop. 2 (ii)-(iii) on a statistic of sensitivity `sensitivity` (default 1):
 * passes iff the statistic, rounded to the grid, plus discrete Laplace noise of scale >=
 * sensitivity/epsilon (in the statistic's units) exceeds T = log(1/delta)/epsilon. epsilon-DP.
 * On an unsafe dataset (statistic < 0, so its grid value is <= 0) it passes only if the discrete
 * Laplace K (scale b >= 1024 grid steps) reaches m = floor(T/g) + 1: P[K >= m] =
 * e^{-m/b} / (1 + e^{-1/b}) <= delta^{1/c} / (1 + e^{-1/b}) with c = epsilon g b = s (1 + g/s)(1 + 8u)
 * <= s (1 + 2^-13) (s the statistic's sensitivity bound, g <= 2^-14 s). That is <= delta (the
 * budget `rgm-gd.ts` gives the test) iff (1 - 1/c) log(1/delta) <= log(1 + e^{-1/b}) ~ 0.69, which
 * holds for every double delta (log(1/delta) <= 745, 1 - 1/c < 2^-12).
 */
export function proposeTestRelease(statistic: number, options: { epsilon: number; delta: number; rng: Rng; sensitivity?: number }): PtrResult {
  rejectUnknownOptions(options, PROPOSE_TEST_RELEASE_OPTIONS, 'proposeTestRelease');
  const epsilon = requirePositive('ptrEpsilon', options.epsilon);
  const delta = requireOpenUnit('ptrDelta', options.delta);
  const plan = ptrNoisePlan(epsilon, options.sensitivity ?? 1);
  if (Number.isNaN(statistic)) throw new InvalidParameterError('statistic', statistic, 'a number');
  const threshold = -Math.log(delta) / epsilon;
  const noisyStatistic = addLaplaceGridNoise(Float64Array.of(statistic), plan, options.rng)[0];
  return { passed: noisyStatistic > threshold, noisyStatistic, threshold, epsilon, delta, event: plan.event, granularity: plan.granularity };
}
