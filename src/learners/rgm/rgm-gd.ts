/**
 * RGM gradient descent for ridge regression with Propose-Test-Release (Hendrikx, Mangold, Bellet
 * 2024 — `000` Sec. 5).
 *
 * Objective (`000` eq. 9, AVERAGE normalisation): f(theta) = (1/n) sum 1/2 (x~_i.theta - y~_i)^2
 * + mu/2 |theta|^2, gradient A~ theta - b~ with A~ = (1/n) sum x~_i x~_i^T + mu I and
 * b~ = (1/n) sum x~_i y~_i, on clipped data:
 *   - features (`000` Prop. 3's clipping, with a public SPD C, identity by default):
 *     x~_i = R_c x_i / max(R_c, sqrt(x_i^T C^-1 x_i)), so x~^T C^-1 x~ <= R_c^2. Prop. 1's rule
 *     (|x|^2 x^T C^-2 x <= R_c^4) implies this one by Cauchy-Schwarz and gives the same eta below,
 *     so it would only clip more; for C = c I the two coincide;
 *   - the products b_i = x~_i y_i (`000` Sec. 5.2, "controlled by clipping the b_i's"):
 *     y~_i = y_i min(1, B / |x~_i y_i|), so |x~_i y~_i| <= B = bClip.
 *
 * Mechanism, replace-one neighbours (n public, as `000` App. B.4 assumes):
 *   1. Propose rho (default `000` Prop. 3, eq. 12, which ASSUMES rows x_i ~ N(0, C) i.i.d.; if
 *      that is wrong the test may reject — privacy does not depend on it). Test privately that
 *      A~ >= rho C holds on the data and its neighbours (propose-test-release.ts: Laplace on a
 *      1-sensitive statistic, threshold log(1/delta_ptr)/epsilon_ptr as in `000` Prop. 2). If the
 *      test fails, return NO model.
 *   2. Otherwise run T steps theta <- theta - tau RGM_{gamma,sigma}(A~ theta - b~) (`000` eq. 7),
 *      with the relative sensitivity derived from eq. (10):
 *        eta^2 = 6 kappa_C R_c^4 / (rho^2 n^2),
 *        R_rel = 2 sqrt(3) B (s + 1) / n,  s = sqrt(kappa_C) R_c^2 / rho,
 *      (optional: with a PTR-tested bound ||b~|| <= bNormBound, R_rel = 2 sqrt(3) (s bNormBound + B) / n).
 *      Derivation: n (grad f - grad f') = (A_0 - A_0') A~^-1 grad f + (A_0 - A_0') A~^-1 b~ - (b_0 - b_0')
 *      with A_i = x~_i x~_i^T, b_i = x~_i y~_i; (a + b + c)^2 <= 3 (a^2 + b^2 + c^2) gives eq. (10);
 *      ||A_i A~^-1|| = |x~_i| |A~^-1 x~_i| <= sqrt(lambda_max(C)) R_c * R_c / (rho sqrt(lambda_min(C)))
 *      = s, and |b~| <= B. `000` Prop. 1 states eta^2 = 6 R_c^4/(rho^2 n^2) from "A~^-2 <= rho^-2 C^-2",
 *      which does not follow from A~ >= rho C unless C commutes with A~ (t -> t^2 is not operator
 *      monotone); the factor kappa_C (condition number of C, 1 for C = I) makes it a theorem. It is
 *      the factor `000` Prop. 3 has (eq. 78).
 *   3. gamma is the smallest value for which the RDP accountant gives epsilon <= target at
 *      delta_rgm for the WHOLE released event compose([laplace(1/epsilon_ptr), selfCompose(RGM, T)])
 *      (RDP composes additively, Mironov 2017 Prop. 1; `calibrateRelativeGaussian` calibrates one
 *      release only, so the composition is calibrated here). sigma = sqrt(gamma) R_rel / eta meets
 *      Thm. 1's sigma^2 >= gamma eta^-2 [1 - eta(alpha - 1)] R_rel^2 at every order.
 *
 * Guarantee (`000` Prop. 2, with the PTR case analysis of Vadhan 2017 Sec. 3.2): (epsilon, delta)
 * with epsilon = the RDP epsilon of the composed event at delta_rgm, delta = delta_rgm + delta_ptr.
 * On a neighbouring pair that is not safe both datasets pass the test with probability <= delta_ptr/2;
 * on a safe pair the run is the adaptive composition of the Laplace test and T RGMs.
 *
 * Step size: `000` Thm. 2 states tau <= 1/(L + gamma); its proof (App. B.1) uses
 * E|xi|^2 = gamma |grad|^2 + sigma^2, but the noise N(0, (gamma |g|^2 + sigma^2) I_d) has
 * E|xi|^2 = d (gamma |g|^2 + sigma^2), so the proof needs tau <= 1/((1 + d gamma) L). The default
 * learning rate is that bound with the PUBLIC L = lambda_max(C) R_c^2 + mu (A~ <= R_c^2 C + mu I);
 * the true L = lambda_max(A~) depends on the data and is not checked (the check would leak).
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { composeEvent, NON_PRIVATE_EVENT, selfComposeEvent } from '../../accounting/events/constructors.js';
import { calibrateNoiseMultiplier, rdpAtOrder } from '../../accounting/calibration/calibrate.js';
import { rdpEpsilon } from '../../accounting/rdp/accountant.js';
import { CalibrationError, InvalidParameterError, dataValueError } from '../../errors.js';
import { ceilSignificant, floorSignificant } from '../../math/decimal-rounding.js';
import { choleskyFactor, choleskySolve } from '../../math/linear-algebra.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import type { GlmData } from '../glm/types.js';
import { squaredLoss } from '../glm/losses/squared.js';
import { linearModel, type LinearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport, type PrivacyReport } from '../models/privacy-report.js';
import { gaussianFeatureRho, pencilMinEigenvalue, proposeTestRelease, ptrNoisePlan, ptrStatistic, ptrStatisticSensitivity } from './propose-test-release.js';
import { addRgmGridNoise, projectOntoBall, rgmBaselineSteps, rgmGrid, rgmGriddedEvent, type RgmGrid } from './rgm-grid.js';
import { requireOwnMethod } from '../training.js';

export interface RgmGdOptions {
  /** `train()`'s name of this learner: only 'rgm' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'rgm';
  /** RGM trains ridge regression: only 'squared' (a caller naming another loss is refused, not trained as ridge). */
  readonly loss?: 'squared';
  /** Target epsilon of the whole run (PTR + T RGM steps). Give this, or noiseMultiplier: 0. */
  readonly epsilon?: number;
  /** Target delta of the whole run: delta_ptr + delta_rgm. */
  readonly delta: number;
  /** Only 0 is accepted: no test, no noise, NOT private (for testing convergence). */
  readonly noiseMultiplier?: number;
  readonly steps: number;
  /** mu >= 0 of `000` eq. 9 (on the average loss). */
  readonly regularization: number;
  /** R_c > 0: rows are clipped to x^T C^-1 x <= R_c^2. */
  readonly featureClip: number;
  /** B > 0: the products x~_i y_i are clipped to L2 norm B. */
  readonly bClip: number;
  /** Public SPD d x d matrix C (row-major). Default: identity. Must not depend on the data. */
  readonly clipMatrix?: Float64Array;
  /** The proposed rho > 0. Default: `000` Prop. 3 (assumes rows ~ N(0, C)). */
  readonly rho?: number;
  /** Optional proposed bound on ||b~||, tested by the same PTR; tightens R_rel. Must be < bClip to matter. */
  readonly bNormBound?: number;
  /** Fraction of epsilon given to the PTR test, in (0, 1) (default 0.1). */
  readonly ptrEpsilonFraction?: number;
  /** Fraction of delta given to the PTR test, in (0, 1) (default 0.5). */
  readonly ptrDeltaFraction?: number;
  /** Step size tau; default 1/((1 + d gamma) L) with the public L (file comment). */
  readonly learningRate?: number;
  readonly featureNames?: readonly string[];
  readonly rng?: Rng;
}

export interface RgmSensitivity {
  readonly eta: number;
  readonly rRel: number;
  /** s = sqrt(kappa_C) R_c^2 / rho, the bound on ||x~ x~^T A~^-1||. */
  readonly s: number;
}

const RGM_RIDGE_SENSITIVITY_OPTIONS = optionNames<NonNullable<Parameters<typeof rgmRidgeSensitivity>[0]>>({ n: true, featureClip: true, rho: true, bClip: true, conditionNumber: true, bNormBound: true });

/**
 * eta and R_rel of the ridge gradient on clipped data when A~ >= rho C (file comment, from
 * `000` eq. 10-11 and Prop. 1 with the kappa_C factor), rounded up.
 */
export function rgmRidgeSensitivity(options: {
  n: number;
  featureClip: number;
  rho: number;
  bClip: number;
  conditionNumber?: number;
  bNormBound?: number;
}): RgmSensitivity {
  rejectUnknownOptions(options, RGM_RIDGE_SENSITIVITY_OPTIONS, 'rgmRidgeSensitivity');
  const n = requireInteger('n', options.n, 1);
  const rc = requirePositive('featureClip', options.featureClip);
  const rho = requirePositive('rho', options.rho);
  const bClip = requirePositive('bClip', options.bClip);
  const kappa = options.conditionNumber ?? 1;
  if (!(kappa >= 1 && Number.isFinite(kappa))) throw new InvalidParameterError('conditionNumber', kappa, 'a finite number >= 1');
  const bNorm = Math.min(bClip, options.bNormBound === undefined ? bClip : requirePositive('bNormBound', options.bNormBound));
  const up = 1 + 16 * Number.EPSILON;
  const s = ((Math.sqrt(kappa) * rc * rc) / rho) * up;
  const eta = ((Math.sqrt(6) * s) / n) * up;
  const rRel = ((2 * Math.sqrt(3) * (s * bNorm + bClip)) / n) * up;
  return { eta, rRel, s };
}

export interface RgmGdPrivacyReport extends PrivacyReport {
  /** The PTR part: epsilon_ptr (pure DP, discrete Laplace), delta_ptr, the public threshold and the released outcome. */
  readonly ptr: { readonly epsilon: number; readonly delta: number; readonly passed: boolean; readonly threshold: number };
  /** delta = rdp (conversion of the composed RDP curve) + ptr (an unsafe dataset passing the test). */
  readonly deltaComponents: { readonly rdp: number; readonly ptr: number };
}

export interface RgmGdDiagnostics {
  readonly method: 'rgmgd';
  readonly message: string;
  readonly steps: number;
  readonly learningRate: number;
  readonly rho: number;
  readonly eta: number;
  readonly rRel: number;
  readonly gamma: number;
  readonly baselineStd: number;
  readonly conditionNumber: number;
  /** The released noisy PTR statistic (a DP release, kept with the diagnostics; undefined without a test). */
  readonly noisyStatistic?: number;
  /** Fractions of rows whose features / products were clipped: data-dependent, NOT private (as DP-GD's clippedFraction). */
  readonly clippedFeatureFraction: number;
  readonly clippedProductFraction: number;
}

export interface RgmGdResult {
  /** undefined when the PTR test rejected: the mechanism released nothing else. */
  readonly model: LinearModel | undefined;
  readonly privacy: RgmGdPrivacyReport | PrivacyReport;
  readonly diagnostics: RgmGdDiagnostics;
}

export interface ClippedData {
  readonly gram: Float64Array;
  readonly b: Float64Array;
  readonly clippedFeatures: number;
  readonly clippedProducts: number;
}

/** Clips features (Mahalanobis, radius R_c) and products (L2, B), and forms A~ and b~. */
export function clipAndAggregate(data: GlmData, cFactor: Float64Array, featureClip: number, bClip: number, regularization: number): ClippedData {
  const { n, d, x, y } = data;
  const gram = new Float64Array(d * d);
  const b = new Float64Array(d);
  const row = new Float64Array(d);
  const solved = new Float64Array(d);
  // Clip a hair inside the radius so that rounding never leaves a row above it.
  const radius = featureClip * (1 - 1e-9);
  let clippedFeatures = 0;
  let clippedProducts = 0;
  for (let i = 0; i < n; i++) {
    for (let k = 0; k < d; k++) {
      const v = x[i * d + k];
      if (!Number.isFinite(v)) throw dataValueError(`data.x[${i * d + k}]`, 'a finite number');
      row[k] = v;
    }
    const yi = y[i];
    if (!Number.isFinite(yi)) throw dataValueError(`data.y[${i}]`, 'a finite number');
    choleskySolve(cFactor, d, row, solved);
    let q = 0;
    for (let k = 0; k < d; k++) q += row[k] * solved[k];
    const m = Math.sqrt(Math.max(q, 0));
    if (m > radius) {
      const factor = radius / m;
      for (let k = 0; k < d; k++) row[k] *= factor;
      clippedFeatures++;
    }
    let norm = 0;
    for (let k = 0; k < d; k++) norm += row[k] * row[k];
    norm = Math.sqrt(norm);
    let yc = yi;
    const product = norm * Math.abs(yi);
    if (product > bClip * (1 - 1e-9)) {
      yc = yi * ((bClip * (1 - 1e-9)) / product);
      clippedProducts++;
    }
    for (let r = 0; r < d; r++) {
      b[r] += row[r] * yc;
      for (let c = 0; c <= r; c++) gram[r * d + c] += row[r] * row[c];
    }
  }
  for (let r = 0; r < d; r++) {
    b[r] /= n;
    for (let c = 0; c <= r; c++) {
      const v = gram[r * d + c] / n + (r === c ? regularization : 0);
      gram[r * d + c] = v;
      gram[c * d + r] = v;
    }
  }
  return { gram, b, clippedFeatures, clippedProducts };
}

function identity(d: number): Float64Array {
  const m = new Float64Array(d * d);
  for (let k = 0; k < d; k++) m[k * d + k] = 1;
  return m;
}

export function requireClipMatrix(matrix: Float64Array | undefined, d: number): { matrix: Float64Array; factor: Float64Array; conditionNumber: number; lambdaMax: number } {
  const c = matrix ?? identity(d);
  if (!(c instanceof Float64Array) || c.length !== d * d) throw new InvalidParameterError('clipMatrix', c, `a Float64Array of length d * d = ${d * d}`);
  for (let r = 0; r < d; r++) {
    for (let k = 0; k < d; k++) {
      const v = c[r * d + k];
      if (!Number.isFinite(v)) throw new InvalidParameterError(`clipMatrix[${r}, ${k}]`, v, 'a finite number');
      if (k < r && v !== c[k * d + r]) throw new InvalidParameterError(`clipMatrix[${r}, ${k}]`, v, `symmetric (== clipMatrix[${k}, ${r}] = ${c[k * d + r]})`);
    }
  }
  const factor = choleskyFactor(c, d);
  if (factor === null) throw new InvalidParameterError('clipMatrix', 'not positive definite', 'symmetric positive definite (RGM uses its inverse)');
  const eye = identity(d);
  const lambdaMin = pencilMinEigenvalue(c, eye, d);
  const negC = Float64Array.from(c, (v) => -v);
  const lambdaMax = -pencilMinEigenvalue(negC, eye, d);
  if (!(lambdaMin > 0)) throw new InvalidParameterError('clipMatrix', `lambda_min ${lambdaMin}`, 'positive definite');
  // Pessimistic: the bisection ends are on the safe sides; widen by a relative 1e-9 more.
  const conditionNumber = Math.max(1, (lambdaMax / lambdaMin) * (1 + 1e-9));
  return { matrix: c, factor, conditionNumber, lambdaMax };
}

/** Everything RGM-GD needs before it reads the data: calibrated from public quantities only. */
export interface RgmPlanInput {
  readonly n: number;
  readonly d: number;
  readonly steps: number;
  readonly regularization: number;
  readonly featureClip: number;
  readonly bClip: number;
  readonly clip: ReturnType<typeof requireClipMatrix>;
  readonly rho: number;
  readonly bNormBound?: number;
  /** Target (epsilon, delta) of the whole run: PTR + T RGM steps. */
  readonly epsilon: number;
  readonly delta: number;
  readonly ptrEpsilonFraction: number;
  readonly ptrDeltaFraction: number;
  /**
   * Calibrate to a Renyi-DP target instead (`000` App. C: alpha = 2): `epsilon` is then the RDP of
   * the whole event (PTR included) at this order; delta still splits into delta_ptr and the
   * delta of the reported (epsilon, delta).
   */
  readonly rdpOrder?: number;
}

export interface RgmPlan {
  readonly input: RgmPlanInput;
  readonly epsilon: number;
  readonly delta: number;
  readonly ptrEpsilon: number;
  readonly ptrDelta: number;
  /** delta_rgm = delta - delta_ptr: the delta of the RDP conversion of `event`. */
  readonly rdpDelta: number;
  readonly testB: boolean;
  readonly sensitivity: RgmSensitivity;
  readonly grid: RgmGrid;
  readonly gamma: number;
  readonly baselineSteps: number;
  readonly baselineStd: number;
  /** The whole release: compose([PTR's discrete Laplace, selfCompose(gridded RGM step, T)]). */
  readonly event: DpEvent;
}

/**
 * Calibrates RGM-GD (file comment, step 3): the eta and R_rel of the rounded, computed gradient,
 * the PTR noise, and the smallest gamma for which the whole event meets epsilon at delta_rgm.
 * Public inputs only: a data owner (or a federated node, `federated/node.ts`) can plan and account
 * before reading its data.
 */
export function planRgmGd(input: RgmPlanInput): RgmPlan {
  const { n, d, steps, featureClip, bClip, clip, rho, regularization, bNormBound, epsilon, delta } = input;
  const testB = bNormBound !== undefined && bNormBound < bClip;
  const ptrEpsilon = epsilon * input.ptrEpsilonFraction;
  const ptrDelta = delta * input.ptrDeltaFraction;
  const rdpDelta = delta - ptrDelta;
  const sensitivity = rgmRidgeSensitivity({ n, featureClip, rho, bClip, conditionNumber: clip.conditionNumber, bNormBound: testB ? bNormBound : undefined });
  // The released gradients are rounded to a grid and computed in floating point: their relative sensitivity is (eta', R') (rgm-grid.ts).
  const grid = rgmGrid({
    eta: sensitivity.eta,
    rRel: sensitivity.rRel,
    n,
    d,
    featureClip,
    bClip,
    lambdaMaxC: clip.lambdaMax,
    lambdaMinC: clip.lambdaMax / clip.conditionNumber,
    rho,
    regularization,
  });
  const { eta } = grid;
  const ptrPlan = ptrNoisePlan(ptrEpsilon, ptrStatisticSensitivity({ clipMatrix: clip.matrix, d, n, rho, regularization, featureClip, ...(testB ? { bNorm: { bound: bNormBound as number, bClip } } : {}) }));
  const makeEvent = (g: number): DpEvent => composeEvent([ptrPlan.event, selfComposeEvent(rgmGriddedEvent(grid, g), steps)]);
  const accountant = input.rdpOrder === undefined ? undefined : rdpAtOrder(input.rdpOrder);
  // 000 Sec. 4.1: no gamma reaches every target; the floor is the limit gamma -> infinity.
  const floor = (accountant ?? rdpEpsilon)(makeEvent(1e200), rdpDelta).epsilon;
  if (!(epsilon > floor * (1 + 1e-6))) {
    throw new CalibrationError(
      `epsilon ${epsilon} cannot be reached: RGM's epsilon over ${steps} steps is above ${ceilSignificant(floor)} whatever its noise (eta = ${ceilSignificant(eta)} for n = ${n}, R_c = ${ceilSignificant(featureClip)}, rho = ${floorSignificant(rho)}; d = ${d}, delta = ${rdpDelta}); use more rows, a smaller R_c, a larger rho or fewer steps`,
    );
  }
  const gamma0 = (2 * steps * eta * eta * Math.max(1, -Math.log(rdpDelta))) / (epsilon * epsilon);
  const calibration = calibrateNoiseMultiplier((z) => makeEvent(z * gamma0), { targetEpsilon: epsilon, delta: rdpDelta, ...(accountant === undefined ? {} : { accountant }) });
  const gamma = calibration.noiseMultiplier * gamma0;
  const baselineSteps = rgmBaselineSteps(grid, gamma);
  return {
    input,
    epsilon,
    delta,
    ptrEpsilon,
    ptrDelta,
    rdpDelta,
    testB,
    sensitivity,
    grid,
    gamma,
    baselineSteps,
    baselineStd: grid.granularity * baselineSteps,
    event: calibration.event,
  };
}

/** The Propose-Test-Release test of a plan on clipped data (`000` Prop. 2; the only release before the steps). */
export function runRgmPtr(clipped: ClippedData, plan: RgmPlan, rng: Rng): ReturnType<typeof proposeTestRelease> {
  const { n, d, rho, regularization, featureClip, bClip, bNormBound, clip } = plan.input;
  const statistic = ptrStatistic({
    gram: clipped.gram,
    clipMatrix: clip.matrix,
    d,
    n,
    rho,
    regularization,
    featureClip,
    ...(plan.testB ? { bNorm: { value: Math.hypot(...clipped.b), bound: bNormBound as number, bClip } } : {}),
  });
  return proposeTestRelease(statistic.value, { epsilon: plan.ptrEpsilon, delta: plan.ptrDelta, rng, sensitivity: statistic.sensitivity });
}

/** The exact ridge gradient A~ theta - b~ on clipped data (`000` eq. 9), into `out`. */
export function ridgeGradient(clipped: ClippedData, theta: Float64Array, out: Float64Array): Float64Array {
  const d = theta.length;
  for (let r = 0; r < d; r++) {
    let s = -clipped.b[r];
    for (let c = 0; c < d; c++) s += clipped.gram[r * d + c] * theta[c];
    out[r] = s;
  }
  return out;
}

/**
 * One released RGM gradient (`000` eq. 7): A~ theta - b~ rounded to the plan's grid plus exact
 * discrete RGM noise. theta must lie in the plan's ball (`projectOntoBall`): the floating-point
 * error bound of the grid assumes it.
 */
export function noisyRgmGradient(clipped: ClippedData, plan: RgmPlan, theta: Float64Array, rng: Rng, out: Float64Array): Float64Array {
  ridgeGradient(clipped, theta, out);
  return addRgmGridNoise(out, plan.grid, plan.gamma, plan.baselineSteps, rng);
}

export const RGM_GD_OPTIONS = optionNames<RgmGdOptions>({ method: true, loss: true, epsilon: true, delta: true, noiseMultiplier: true, steps: true, regularization: true, featureClip: true, bClip: true, clipMatrix: true, rho: true, bNormBound: true, ptrEpsilonFraction: true, ptrDeltaFraction: true, learningRate: true, featureNames: true, rng: true });

/**
 * What every RGM gradient descent (ridge here, GLMs in `rgm-glm.ts`) checks before the data are
 * read: n >= 1 rows of d features in row-major Float64Arrays, and either a target epsilon or an
 * explicit `noiseMultiplier: 0` (no noise, NOT private): RGM calibrates its noise from epsilon.
 */
export function checkRgmInput(data: GlmData, options: { readonly epsilon?: number; readonly noiseMultiplier?: number }): { n: number; d: number } {
  const n = requireInteger('data.n', data.n, 1);
  const d = requireInteger('data.d', data.d, 1);
  if (!(data.x instanceof Float64Array) || data.x.length !== n * d) throw new InvalidParameterError('data.x', data.x, `a Float64Array of length n * d = ${n * d}`);
  if (!(data.y instanceof Float64Array) || data.y.length !== n) throw new InvalidParameterError('data.y', data.y, `a Float64Array of length n = ${n}`);
  checkRgmNoise(options);
  return { n, d };
}

/** RGM's noise options: a target epsilon, or an explicit `noiseMultiplier: 0` (no noise, NOT private). */
export function checkRgmNoise(options: { readonly epsilon?: number; readonly noiseMultiplier?: number }): void {
  if ((options.epsilon === undefined) === (options.noiseMultiplier === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or noiseMultiplier: 0 given instead (exactly one of the two)');
  }
  if (options.noiseMultiplier !== undefined && options.noiseMultiplier !== 0) {
    throw new InvalidParameterError('noiseMultiplier', options.noiseMultiplier, '0 (RGM-GD calibrates its noise from a target epsilon; 0 means no noise, NOT private)');
  }
}

/** What ridge RGM-GD decides before it reads a row (`setUpRgmGd`): its checked options and, for a private run, its plan. */
export interface RgmGdRun {
  readonly steps: number;
  readonly regularization: number;
  readonly featureClip: number;
  readonly bClip: number;
  readonly clip: ReturnType<typeof requireClipMatrix>;
  readonly rho: number;
  readonly learningRate: number | undefined;
  /** Absent for `noiseMultiplier: 0` (no test, no noise). */
  readonly plan: RgmPlan | undefined;
}

/**
 * Ridge RGM-GD's options checked and its plan (`planRgmGd`: PTR's noise, the grid, gamma and the
 * event of the whole run), from the public n (replace-one) and d only: the same whether the test
 * then passes or not.
 */
export function setUpRgmGd(shape: { readonly n: number; readonly d: number }, options: RgmGdOptions): RgmGdRun {
  if (options.loss !== undefined && options.loss !== 'squared') throw new InvalidParameterError('loss', options.loss, "'squared' or absent (RGM trains ridge regression)");
  const n = requireInteger('data.n', shape.n, 1);
  const d = requireInteger('data.d', shape.d, 1);
  checkRgmNoise(options);
  const steps = requireInteger('steps', options.steps, 1);
  const regularization = requireNonNegative('regularization', options.regularization);
  const featureClip = requirePositive('featureClip', options.featureClip);
  const bClip = requirePositive('bClip', options.bClip);
  const clip = requireClipMatrix(options.clipMatrix, d);
  const rho = options.rho === undefined ? gaussianFeatureRho(d, featureClip) : requirePositive('rho', options.rho);
  const bNormBound = options.bNormBound === undefined ? undefined : requirePositive('bNormBound', options.bNormBound);
  const ptrEpsilonFraction = requireOpenUnit('ptrEpsilonFraction', options.ptrEpsilonFraction ?? 0.1);
  const ptrDeltaFraction = requireOpenUnit('ptrDeltaFraction', options.ptrDeltaFraction ?? 0.5);
  const learningRate = options.learningRate === undefined ? undefined : requirePositive('learningRate', options.learningRate);
  const plan = options.epsilon === undefined
    ? undefined
    : planRgmGd({
        n,
        d,
        steps,
        regularization,
        featureClip,
        bClip,
        clip,
        rho,
        bNormBound,
        epsilon: requirePositive('epsilon', options.epsilon),
        delta: requireOpenUnit('delta', options.delta),
        ptrEpsilonFraction,
        ptrDeltaFraction,
      });
  return { steps, regularization, featureClip, bClip, clip, rho, learningRate, plan };
}

/**
 * What a budget reserves for ridge RGM-GD (`Learner.plan`): the whole mechanism's event (PTR's
 * Laplace and the T RGM steps, what the run charges whether or not the test passes) and
 * delta_ptr, paid outside RDP (`000` Prop. 2); `nonPrivate` without noise.
 */
export function planRgmRidge(shape: { readonly n: number; readonly d: number }, options: RgmGdOptions): { event: DpEvent; extraDelta: number } {
  rejectUnknownOptions(options, RGM_GD_OPTIONS, 'trainRgmGd');
  requireOwnMethod(options.method, 'rgm', 'trainRgmGd');
  const { plan } = setUpRgmGd(shape, options);
  return plan === undefined ? { event: NON_PRIVATE_EVENT, extraDelta: 0 } : { event: plan.event, extraDelta: plan.ptrDelta };
}

/**
 * Trains ridge regression by RGM gradient descent after a Propose-Test-Release check (file comment).
 * Returns model: undefined when the test rejects (diagnostics.message says so; the test's budget is spent).
 *
 * @example
 * const r = trainRgmGd(data, { epsilon: 1, delta: 1e-6, steps: 100, regularization: 0.05, featureClip: 4, bClip: 12 });
 * if (r.model === undefined) console.log(r.diagnostics.message);
 */
export function trainRgmGd(data: GlmData, options: RgmGdOptions): RgmGdResult {
  rejectUnknownOptions(options, RGM_GD_OPTIONS, 'trainRgmGd');
  requireOwnMethod(options.method, 'rgm', 'trainRgmGd');
  // ---- validate everything before touching the data or the randomness
  if (options.loss !== undefined && options.loss !== 'squared') throw new InvalidParameterError('loss', options.loss, "'squared' or absent (RGM trains ridge regression)");
  const { n, d } = checkRgmInput(data, options);
  const privateRun = options.epsilon !== undefined;
  const { steps, regularization, featureClip, bClip, clip, rho, learningRate: learningRateOption, plan } = setUpRgmGd({ n, d }, options);
  const rng = options.rng ?? defaultRng();
  const publicSmoothness = clip.lambdaMax * featureClip * featureClip + regularization;

  const delta = plan?.delta ?? 0;
  const gamma = plan?.gamma ?? 0;
  const baselineStd = plan?.baselineStd ?? 0;
  const sensitivity: RgmSensitivity = plan?.sensitivity ?? { eta: 0, rRel: 0, s: 0 };
  const grid = plan?.grid;
  const event = plan?.event;
  const ptrEpsilon = plan?.ptrEpsilon ?? 0;
  const ptrDelta = plan?.ptrDelta ?? 0;

  // ---- the data: clipping and the sufficient statistics of the quadratic (000 eq. 9)
  const clipped = clipAndAggregate(data, clip.factor, featureClip, bClip, regularization);
  const defaultRate = 1 / ((1 + d * gamma) * publicSmoothness);
  const learningRate = learningRateOption ?? defaultRate;
  const common = {
    method: 'rgmgd' as const,
    steps,
    learningRate,
    rho,
    eta: grid?.eta ?? sensitivity.eta,
    rRel: grid?.rRel ?? sensitivity.rRel,
    gamma,
    baselineStd,
    conditionNumber: clip.conditionNumber,
    clippedFeatureFraction: clipped.clippedFeatures / n,
    clippedProductFraction: clipped.clippedProducts / n,
  };

  /** The report of the whole mechanism (PTR + T RGM steps) at delta = delta_rgm + delta_ptr, with the test's outcome. */
  const mechanismReport = (outcome: ReturnType<typeof proposeTestRelease>, extra: readonly string[]): RgmGdPrivacyReport => {
    const rdpDelta = delta - ptrDelta;
    const report = privacyReport(event as DpEvent, rdpDelta, {
      relation: 'replaceOne',
      rng,
      granularity: (grid as RgmGrid).granularity,
      granularities: { ptr: outcome.granularity, gradient: (grid as RgmGrid).granularity },
      warnings: [
        ...extra,
        `delta = ${rdpDelta} (RDP conversion of the composed event) + ${ptrDelta} (PTR: an unsafe dataset passes the test with at most this probability)`,
        ...(options.rho === undefined ? [`rho = ${rho} is the RGM paper's proposal, which assumes rows ~ N(0, C); the guarantee does not depend on that assumption`] : []),
      ],
    });
    return Object.freeze({
      ...report,
      delta,
      ptr: { epsilon: ptrEpsilon, delta: ptrDelta, passed: outcome.passed, threshold: outcome.threshold },
      deltaComponents: { rdp: rdpDelta, ptr: ptrDelta },
    });
  };
  let ptrOutcome: ReturnType<typeof proposeTestRelease> | undefined;
  if (privateRun) {
    ptrOutcome = runRgmPtr(clipped, plan as RgmPlan, rng);
    if (!ptrOutcome.passed) {
      // The headline is the mechanism's ex-ante guarantee: whether the test passes depends on the
      // data, so a smaller number reported only on rejection would not be a guarantee of the
      // mechanism (it would need a privacy filter). The test's own cost is given beside it.
      const privacy = mechanismReport(ptrOutcome, [
        `PTR rejected: only the test's outcome was released (Laplace, epsilon_ptr = ${ptrEpsilon} pure DP, in privacy.ptr); the headline is the whole mechanism's (epsilon, delta), which is what the run costs`,
      ]);
      const message = `Propose-Test-Release rejected rho = ${rho}: the noisy distance to a dataset where A~ >= rho C fails (${ptrOutcome.noisyStatistic.toFixed(3)}) is not above log(1/delta_ptr)/epsilon_ptr = ${ptrOutcome.threshold.toFixed(3)}. No model is released; the test's budget is spent. Propose a smaller rho, clip harder, or use more rows.`;
      return { model: undefined, privacy: Object.freeze(privacy), diagnostics: { ...common, noisyStatistic: ptrOutcome.noisyStatistic, message } };
    }
  }

  // ---- T steps of 000 eq. (7)
  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  for (let t = 0; t < steps; t++) {
    if (plan !== undefined) {
      // Released: the gradient on the grid plus exact discrete RGM noise; the step and the projection are post-processing.
      noisyRgmGradient(clipped, plan, theta, rng, gradient);
      for (let r = 0; r < d; r++) theta[r] -= learningRate * gradient[r];
      projectOntoBall(theta, plan.grid.thetaRadius);
    } else {
      ridgeGradient(clipped, theta, gradient);
      for (let r = 0; r < d; r++) theta[r] -= learningRate * gradient[r];
    }
  }
  const model = linearModel(squaredLoss, theta, options.featureNames);

  if (!privateRun) {
    const privacy = nonPrivateReport(rng, 'replaceOne');
    return { model: { ...model, privacy }, privacy, diagnostics: { ...common, message: 'no noise and no test: this model is NOT private' } };
  }
  const privacy = mechanismReport(ptrOutcome as ReturnType<typeof proposeTestRelease>, []);
  const passed = ptrOutcome as ReturnType<typeof proposeTestRelease>;
  const message = `PTR passed (rho = ${rho}); ${steps} RGM steps with eta = ${sensitivity.eta.toExponential(3)}, gamma = ${gamma.toExponential(3)}, sigma = ${baselineStd.toExponential(3)}`;
  return { model: { ...model, privacy }, privacy, diagnostics: { ...common, noisyStatistic: passed.noisyStatistic, message } };
}
