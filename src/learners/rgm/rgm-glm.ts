/**
 * RGM gradient descent for generalized linear models (Hendrikx, Mangold, Bellet 2024 — `000`
 * App. B.2, "Bounding relative sensitivity for general functions"), replace-one, n public.
 *
 * Objective (AVERAGE normalisation, as ridge's `000` eq. 9):
 *   f(theta; D) = (1/n) sum_i l(x~_i . theta; y_i) + lambda/2 |theta|^2,
 * on rows clipped to ||x~_i||_2 <= R (the per-record clipping of `000` Prop. 1 with C = I).
 * The per-record loss is f_0(theta) = l(x_0 . theta; y_0), so f - f' = (f_0 - f'_0) / n.
 *
 * App. B.2's statement and its conditions. Let f, f' be mu-strongly convex, f_0, f'_0 L-smooth
 * (and convex: the first inequality of eq. 62, |grad h(a) - grad h(b)|^2 <= 2 L D_h(a, b), is the
 * co-coercivity of a CONVEX L-smooth h), and f_0, f'_0 L_rel-relatively smooth w.r.t. f and f'
 * (App. B.2 writes "f and f'_0", a typo: its eq. 62 uses f_0 w.r.t. f). Then, with theta* the
 * minimiser of f and (a + b + c)^2 <= 3 (a^2 + b^2 + c^2) (App. B.2 writes "=", and its first
 * bracket reads grad f'_0(theta*) for grad f_0(theta*): both typos),
 *   n^2 |grad f(theta) - grad f'(theta)|^2
 *     <= 3 |grad f_0(theta) - grad f_0(theta*)|^2 + 3 |grad f'_0(theta) - grad f'_0(theta*)|^2
 *        + 3 |grad f_0(theta*) - grad f'_0(theta*)|^2,
 * and eq. (62), 2 L D_{f_0} <= 2 L L_rel D_f <= (L L_rel / mu) |grad f(theta)|^2, bounds each of
 * the first two terms. (The last step is D_f(theta, theta*) <= |grad f(theta)|^2 / (2 mu), eq. 54
 * with f* (1/mu)-smooth and grad f(theta*) = 0.) So f's gradient has (eta, R_rel)-relative L2
 * sensitivity (`000` Def. 2) with
 *   eta^2 = 6 L L_rel / (mu n^2),   R_rel^2 = 3 G*^2 / n^2,
 * G* >= |grad f_0(theta*) - grad f'_0(theta*)|. App. B.2 writes only eta^2 = O(kappa L_rel / n^2);
 * the constants here are the ones its three displayed inequalities give.
 *
 * The constants App. B.2 leaves implicit, for a GLM loss l with sup|l'| = D (`derivativeBound`) and
 * sup l'' = c (`curvatureBound`), on ||x~|| <= R, labels in the loss's convention:
 *   - L = c R^2: the Hessian of f_0 is l''(x~_0 . theta) x~_0 x~_0^T <= c R^2 I.
 *   - mu = lambda: the data part of f's Hessian, (1/n) sum l''(x~_i . theta) x~_i x~_i^T, has no
 *     public positive lower bound (l'' -> 0 for logistic and for huber/smoothed hinge beyond their
 *     knees), so only the regulariser is certain. Hence the condition lambda > 0.
 *   - L_rel = L / mu = c R^2 / lambda: D_{f_0}(a, b) <= (L/2)|a - b|^2 <= (L/mu) D_f(a, b) by
 *     eq. 53. This is also the best PUBLIC constant: f'_0 (the record NOT in D) is dominated only by
 *     f's regulariser, and when l''(x~_i . theta) ~ 0 for every i (possible, see above) f's
 *     Hessian is lambda I. So here eta = sqrt(6) c R^2 / (lambda n) — App. B.2's "condition number
 *     replaced by L_rel" gives nothing better without a data-dependent (PTR-tested) Hessian bound;
 *     for logistic, a bound on the ball |theta| <= Theta scales with l''(R Theta) ~ e^{-R Theta},
 *     which is negligible at Theta = 2 R / lambda, so no PTR is run.
 *   - G* = 2 D R: |l'| <= D and |x~| <= R for both records (this is where the label and feature
 *     bounds are needed). R_rel = 2 sqrt(3) D R / n.
 *
 * What this means (measured in `test/learners/rgm/rgm-glm.test.ts`, reported in the privacy
 * warnings): for a loss with bounded derivative the absolute L2 sensitivity is already
 * |grad f - grad f'| <= 2 D R / n < R_rel, so App. B.2's bound holds with eta = 0 and the Gaussian
 * mechanism (DP-GD clipped at D R) adds less noise for the same (epsilon, delta) (`000` Sec. 4.2:
 * RGM compares to GM with local sensitivity eta^2 |g|^2 + R_rel^2 >= R_abs^2). The method is a valid,
 * exactly-accounted instance of App. B.2, not an improvement over DP-GD for these losses.
 *
 * Mechanism and accounting (as ridge's `rgm-gd.ts`, without PTR since every constant is public):
 * T steps theta <- Proj_Theta(theta - tau RGM_{gamma,sigma}(grad f(theta))) (`000` eq. 7), each
 * gradient rounded to a public grid with exact discrete RGM noise (`mechanisms/relative-gaussian-grid.ts`),
 * gamma the smallest value for which the RDP accountant meets epsilon at delta for
 * selfCompose(gridded RGM step, T). The projection radius Theta = 2 D R / lambda contains theta*
 * (lambda theta* = -(1/n) sum l' x~_i, so |theta*| <= D R / lambda); it is post-processing and
 * bounds the floating-point error below. The step size is 1/((1 + d gamma) beta), beta = c R^2 + lambda
 * (as ridge's, `000` Thm. 2 with the d factor).
 *
 * Losses: 'logistic' (D = 1, c = 1/4, labels {0,1} -> {-1,+1} by `dataForLoss`). Huber and the
 * smoothed hinge meet App. B.2's conditions too but need their own floating-point error bound of the
 * computed derivative (`glmComputationError`) before they can be released on the grid: refused.
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { NON_PRIVATE_EVENT, selfComposeEvent } from '../../accounting/events/constructors.js';
import { calibrateNoiseMultiplier } from '../../accounting/calibration/calibrate.js';
import { rdpEpsilon } from '../../accounting/rdp/accountant.js';
import { CalibrationError, InvalidParameterError, dataValueError } from '../../errors.js';
import { ceilSignificant, floorSignificant } from '../../math/decimal-rounding.js';
import { planRelativeGaussianGrid } from '../../mechanisms/relative-gaussian-grid.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';
import { dataForLoss, lossByName } from '../glm/losses/by-name.js';
import { glmValueAndGradient, withKernelFeatures } from '../glm/objective.js';
import type { GlmData, GlmLoss } from '../glm/types.js';
import { linearModel, type LinearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport, type PrivacyReport } from '../models/privacy-report.js';
import { requireOwnMethod } from '../training.js';
import { checkRgmInput, checkRgmNoise } from './rgm-gd.js';
import { addRgmGridNoise, gammaOf, projectOntoBall, rgmBaselineSteps, rgmGriddedEvent, type RgmGrid } from './rgm-grid.js';

const U = Number.EPSILON / 2;

/** The losses App. B.2 is implemented for here (module comment). */
export const RGM_GLM_LOSSES: readonly string[] = Object.freeze(['logistic']);

export interface RgmGlmOptions {
  readonly method?: 'rgm';
  /** A loss of `RGM_GLM_LOSSES` ('logistic'). */
  readonly loss: string;
  /** Target epsilon of the whole run (T RGM steps). Give this, or noiseMultiplier: 0. */
  readonly epsilon?: number;
  readonly delta: number;
  /** Only 0: no noise, NOT private (for testing convergence). */
  readonly noiseMultiplier?: number;
  readonly steps: number;
  /** lambda > 0 (App. B.2's mu: f must be strongly convex). */
  readonly regularization: number;
  /** R > 0: rows are clipped to L2 norm R. */
  readonly featureClip: number;
  /** Step size tau; default 1/((1 + d gamma) beta), beta = c R^2 + lambda. */
  readonly learningRate?: number;
  readonly featureNames?: readonly string[];
  readonly rng?: Rng;
}

export const RGM_GLM_OPTIONS = optionNames<RgmGlmOptions>({ method: true, loss: true, epsilon: true, delta: true, noiseMultiplier: true, steps: true, regularization: true, featureClip: true, learningRate: true, featureNames: true, rng: true });

export interface RgmGlmSensitivity {
  /** eta = sqrt(6 L L_rel / mu) / n. */
  readonly eta: number;
  /** R_rel = sqrt(3) G* / n. */
  readonly rRel: number;
  /** App. B.2's constants: L = c R^2, mu = lambda, L_rel = L / mu, G* = 2 D R. */
  readonly smoothness: number;
  readonly strongConvexity: number;
  readonly relativeSmoothness: number;
  readonly gradientGap: number;
  /** The absolute L2 sensitivity 2 D R / n (< R_rel): the bound without App. B.2. */
  readonly absoluteSensitivity: number;
}

/** The loss of a name, refused unless App. B.2 is implemented for it (module comment). */
export function rgmGlmLoss(name: string): GlmLoss {
  if (!RGM_GLM_LOSSES.includes(name)) {
    throw new InvalidParameterError('loss', name, `one of ${RGM_GLM_LOSSES.map((l) => `'${l}'`).join(', ')} (RGM's bound for GLMs; 'squared' trains ridge)`);
  }
  const loss = lossByName(name);
  const D = loss.derivativeBound();
  const c = loss.curvatureBound;
  if (!(Number.isFinite(D) && D > 0)) throw new InvalidParameterError('loss', name, 'a loss with finite sup|l\'| (G* = 2 D R bounds |grad f_0(theta*) - grad f\'_0(theta*)|)');
  if (!(Number.isFinite(c) && c > 0)) throw new InvalidParameterError('loss', name, 'a loss with finite sup l\'\' (f_0 L-smooth)');
  return loss;
}

const SENSITIVITY_OPTIONS = optionNames<Parameters<typeof rgmGlmSensitivity>[0]>({ loss: true, n: true, featureClip: true, regularization: true });

/**
 * eta and R_rel of the GLM gradient (`000` App. B.2 with the constants of the module comment),
 * rounded up. Refuses lambda <= 0 (no strong convexity: eta would be infinite).
 */
export function rgmGlmSensitivity(options: { loss: string; n: number; featureClip: number; regularization: number }): RgmGlmSensitivity {
  rejectUnknownOptions(options, SENSITIVITY_OPTIONS, 'rgmGlmSensitivity');
  const loss = rgmGlmLoss(options.loss);
  const n = requireInteger('n', options.n, 1);
  const R = requirePositive('featureClip', options.featureClip);
  const lambda = options.regularization;
  if (!(typeof lambda === 'number' && Number.isFinite(lambda) && lambda > 0)) {
    throw new InvalidParameterError('regularization', lambda, 'a finite number > 0', "RGM's bound for GLMs needs f mu-strongly convex; only the regulariser gives a public mu (mu = lambda)");
  }
  const up = 1 + 16 * Number.EPSILON;
  const smoothness = loss.curvatureBound * R * R * up;
  const strongConvexity = lambda;
  const relativeSmoothness = (smoothness / strongConvexity) * up;
  const gradientGap = 2 * loss.derivativeBound() * R * up;
  const eta = (Math.sqrt((6 * smoothness * relativeSmoothness) / strongConvexity) / n) * up * up;
  const rRel = ((Math.sqrt(3) * gradientGap) / n) * up;
  return { eta, rRel, smoothness, strongConvexity, relativeSmoothness, gradientGap, absoluteSensitivity: gradientGap / n };
}

/**
 * E: a public bound on ||computed gradient - exact gradient|| for ||theta|| <= Theta, ||x~|| <= R,
 * n rows, d features, PESSIMISTIC (Higham 2002, Sec. 3.1). z = x~ . theta has error
 * <= gamma_d R Theta; l' is c-Lipschitz in z and evaluated within e_l = 16 u (logistic:
 * -y / (1 + deterministicExp(y z)), exp within 4 ulp = 8 u relative, then one addition and one
 * division on a value of magnitude <= 1: about 10 u); the product l' x~ adds u; the sum of n
 * vectors of norm <= D R (1 + small) errs by <= gamma_n n D R, the division by n and the addition
 * of lambda theta by <= 2 u (D R + lambda Theta). Everything is doubled to absorb the (1 + small)
 * factors of second order.
 */
export function glmComputationError(loss: GlmLoss, n: number, d: number, featureClip: number, regularization: number, thetaRadius: number): number {
  const R = featureClip;
  const D = loss.derivativeBound();
  const c = loss.curvatureBound;
  const derivativeError = c * gammaOf(d) * R * thetaRadius + 16 * U;
  const perRow = R * (derivativeError + 2 * U * D);
  const summed = gammaOf(n + 4) * (D * R + regularization * thetaRadius);
  return 2 * (perRow + summed);
}

export interface RgmGlmPlan {
  readonly sensitivity: RgmGlmSensitivity;
  readonly grid: RgmGrid;
  readonly gamma: number;
  readonly baselineSteps: number;
  readonly baselineStd: number;
  readonly event: DpEvent;
}

/** The grid, gamma and the event of the whole run, from public quantities only (module comment). */
export function planRgmGlm(input: { loss: GlmLoss; n: number; d: number; steps: number; featureClip: number; regularization: number; epsilon: number; delta: number }): RgmGlmPlan {
  const { loss, n, d, steps, featureClip, regularization, epsilon, delta } = input;
  const sensitivity = rgmGlmSensitivity({ loss: loss.name, n, featureClip, regularization });
  const thetaRadius = (2 * loss.derivativeBound() * featureClip) / regularization;
  const computationError = glmComputationError(loss, n, d, featureClip, regularization, thetaRadius);
  const grid: RgmGrid = { ...planRelativeGaussianGrid({ eta: sensitivity.eta, rRel: sensitivity.rRel, dimension: d, extraError: computationError }), thetaRadius, computationError };
  const makeEvent = (g: number): DpEvent => selfComposeEvent(rgmGriddedEvent(grid, g), steps);
  // 000 Sec. 4.1: no gamma reaches every target; the floor is the limit gamma -> infinity.
  const floor = rdpEpsilon(makeEvent(1e200), delta).epsilon;
  if (!(epsilon > floor * (1 + 1e-6))) {
    throw new CalibrationError(
      `epsilon ${epsilon} cannot be reached: RGM's epsilon over ${steps} steps is above ${ceilSignificant(floor)} whatever its noise (eta = ${ceilSignificant(grid.eta)} for n = ${n}, R = ${ceilSignificant(featureClip)}, lambda = ${floorSignificant(regularization)}; d = ${d}, delta = ${delta}); use more rows, a larger regularization, a smaller featureClip or fewer steps`,
    );
  }
  const gamma0 = (2 * steps * grid.eta * grid.eta * Math.max(1, -Math.log(delta))) / (epsilon * epsilon);
  const calibration = calibrateNoiseMultiplier((z) => makeEvent(z * gamma0), { targetEpsilon: epsilon, delta });
  const gamma = calibration.noiseMultiplier * gamma0;
  const baselineSteps = rgmBaselineSteps(grid, gamma);
  return { sensitivity, grid, gamma, baselineSteps, baselineStd: grid.granularity * baselineSteps, event: calibration.event };
}

/** Clips rows to L2 norm R (a hair inside, so that rounding never leaves one above). Returns the clipped copy and the count clipped. */
function clipRows(data: GlmData, featureClip: number): { x: Float64Array; clipped: number } {
  const { n, d } = data;
  const x = Float64Array.from(data.x);
  const radius = featureClip * (1 - 1e-9);
  let clipped = 0;
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let k = 0; k < d; k++) {
      const v = x[i * d + k];
      if (!Number.isFinite(v)) throw dataValueError(`data.x[${i * d + k}]`, 'a finite number');
      s += v * v;
    }
    const norm = Math.sqrt(s);
    if (norm > radius) {
      const f = radius / norm;
      for (let k = 0; k < d; k++) x[i * d + k] *= f;
      clipped++;
    }
  }
  return { x, clipped };
}

/**
 * grad f(theta) = (1/n) sum l'(x~_i . theta; y_i) x~_i + lambda theta, into `out`. The sum
 * sum_i l'(z_i) x~_i is the GLM objective's (`glmValueAndGradient`, no regularization, no clipping):
 * with `data.x` in a feature memory (`withKernelFeatures`, as `trainRgmGlm` does) its margins and
 * its sum come from the WebAssembly SIMD kernels, about 4 times faster than a scalar loop on Adult's
 * shape. `glmComputationError` still bounds the result: the margins sum d rounded products in some
 * order (<= d roundings each), each term l' x~_ij is one rounded product (no fused multiply-add), and
 * the n terms of each coordinate are summed along a tree of height <= n - 1 (blocks, then a cascade),
 * whose error Higham (2002) Sec. 4.2 bounds by gamma_{n-1} sum |terms| whatever the tree; then one
 * division by n and one fused-free lambda theta and addition, as before.
 */
export function glmGradient(loss: GlmLoss, data: GlmData, regularization: number, theta: Float64Array, out: Float64Array): Float64Array {
  const { n, d } = data;
  glmValueAndGradient(loss, data, theta, out);
  for (let k = 0; k < d; k++) out[k] = out[k] / n + regularization * theta[k];
  return out;
}

export interface RgmGlmDiagnostics {
  readonly method: 'rgmglm';
  readonly message: string;
  readonly steps: number;
  readonly learningRate: number;
  readonly eta: number;
  readonly rRel: number;
  readonly absoluteSensitivity: number;
  readonly gamma: number;
  readonly baselineStd: number;
  /** Fraction of rows whose features were clipped: data-dependent, NOT private (as DP-GD's clippedFraction). */
  readonly clippedFeatureFraction: number;
}

export interface RgmGlmResult {
  readonly model: LinearModel;
  readonly privacy: PrivacyReport;
  readonly diagnostics: RgmGlmDiagnostics;
}

/** What the GLM path decides before it reads a row (`setUpRgmGlm`). */
export interface RgmGlmRun {
  readonly loss: GlmLoss;
  readonly steps: number;
  readonly featureClip: number;
  readonly regularization: number;
  readonly sensitivity: RgmGlmSensitivity;
  readonly learningRate: number | undefined;
  /** Absent for `noiseMultiplier: 0` (no noise). */
  readonly plan: RgmGlmPlan | undefined;
}

/**
 * The GLM path's options checked (App. B.2's conditions included) and its plan, from the public
 * n (replace-one) and d only.
 */
export function setUpRgmGlm(shape: { readonly n: number; readonly d: number }, options: RgmGlmOptions): RgmGlmRun {
  const loss = rgmGlmLoss(options.loss);
  const n = requireInteger('data.n', shape.n, 1);
  const d = requireInteger('data.d', shape.d, 1);
  checkRgmNoise(options);
  const steps = requireInteger('steps', options.steps, 1);
  const featureClip = requirePositive('featureClip', options.featureClip);
  // The strong-convexity condition (and the rest of App. B.2's) is checked here, before the data.
  const sensitivity = rgmGlmSensitivity({ loss: loss.name, n, featureClip, regularization: options.regularization });
  const regularization = options.regularization;
  const learningRate = options.learningRate === undefined ? undefined : requirePositive('learningRate', options.learningRate);
  const plan =
    options.epsilon === undefined
      ? undefined
      : planRgmGlm({ loss, n, d, steps, featureClip, regularization, epsilon: requirePositive('epsilon', options.epsilon), delta: requireOpenUnit('delta', options.delta) });
  return { loss, steps, featureClip, regularization, sensitivity, learningRate, plan };
}

/** What a budget reserves for the GLM path (`Learner.plan`): its whole event (no test), `nonPrivate` without noise. */
export function planRgmGlmRelease(shape: { readonly n: number; readonly d: number }, options: RgmGlmOptions): DpEvent {
  rejectUnknownOptions(options, RGM_GLM_OPTIONS, 'trainRgmGlm');
  requireOwnMethod(options.method, 'rgm', 'trainRgmGlm');
  return setUpRgmGlm(shape, options).plan?.event ?? NON_PRIVATE_EVENT;
}

/**
 * Trains a GLM (logistic) by RGM gradient descent with App. B.2's relative sensitivity (module
 * comment). Every condition is checked before the data are read.
 *
 * @example
 * const r = trainRgmGlm(data, { loss: 'logistic', epsilon: 1, delta: 1e-6, steps: 50, regularization: 0.1, featureClip: 1 });
 */
export function trainRgmGlm(data: GlmData, options: RgmGlmOptions): RgmGlmResult {
  rejectUnknownOptions(options, RGM_GLM_OPTIONS, 'trainRgmGlm');
  requireOwnMethod(options.method, 'rgm', 'trainRgmGlm');
  rgmGlmLoss(options.loss);
  const { n, d } = checkRgmInput(data, options);
  const { loss, steps, featureClip, sensitivity, regularization, learningRate: learningRateOption, plan } = setUpRgmGlm({ n, d }, options);
  const rng = options.rng ?? defaultRng();
  const gamma = plan?.gamma ?? 0;
  const smoothness = loss.curvatureBound * featureClip * featureClip + regularization;
  const learningRate = learningRateOption ?? 1 / ((1 + d * gamma) * smoothness);

  // ---- the data: the label condition (|l'| <= D, 000 App. B.2's G* = 2 D R, needs labels in the
  // loss's convention: `dataForLoss` refuses any label but 0/1/-1/+1 and maps them to -1/+1) and the feature bound
  const glmData = dataForLoss(loss, data);
  const { x, clipped } = clipRows(glmData, featureClip);
  const kernelData = withKernelFeatures({ x, y: glmData.y, n, d });

  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  for (let t = 0; t < steps; t++) {
    glmGradient(loss, kernelData, regularization, theta, gradient);
    if (plan !== undefined) addRgmGridNoise(gradient, plan.grid, plan.gamma, plan.baselineSteps, rng);
    for (let k = 0; k < d; k++) theta[k] -= learningRate * gradient[k];
    if (plan !== undefined) projectOntoBall(theta, plan.grid.thetaRadius);
  }
  const model = linearModel(loss, theta, options.featureNames);
  const common = {
    method: 'rgmglm' as const,
    steps,
    learningRate,
    eta: plan?.grid.eta ?? sensitivity.eta,
    rRel: plan?.grid.rRel ?? sensitivity.rRel,
    absoluteSensitivity: sensitivity.absoluteSensitivity,
    gamma,
    baselineStd: plan?.baselineStd ?? 0,
    clippedFeatureFraction: clipped / n,
  };
  if (plan === undefined) {
    const privacy = nonPrivateReport(rng, 'replaceOne');
    return { model: { ...model, privacy }, privacy, diagnostics: { ...common, message: 'no noise: this model is NOT private' } };
  }
  const report = privacyReport(plan.event, options.delta, {
    relation: 'replaceOne',
    rng,
    granularity: plan.grid.granularity,
    warnings: [
      `RGM's relative sensitivity for the ${loss.name} loss: eta = ${sensitivity.eta.toExponential(3)} (L = ${sensitivity.smoothness}, mu = lambda = ${regularization}, L_rel = L/mu), R_rel = ${sensitivity.rRel.toExponential(3)} exceeds the absolute L2 sensitivity ${sensitivity.absoluteSensitivity.toExponential(3)}: DP-GD (--method dpgd) adds less noise at the same (epsilon, delta)`,
    ],
  });
  // The public inputs of eta and R_rel, so that verify re-derives them (no PTR: they hold for every dataset).
  const privacy: PrivacyReport = Object.freeze({ ...report, relativeSensitivity: Object.freeze({ source: 'glm' as const, featureClip, regularization }) });
  const message = `${steps} RGM steps (${loss.name} loss) with eta = ${sensitivity.eta.toExponential(3)}, R_rel = ${sensitivity.rRel.toExponential(3)}, gamma = ${gamma.toExponential(3)}, sigma = ${common.baselineStd.toExponential(3)}`;
  return { model: { ...model, privacy }, privacy, diagnostics: { ...common, message } };
}
