/**
 * Objective perturbation for GLMs (`003` Sec. 2.2; Kifer et al. 2012; privacy by `003` Thm. 3.1
 * and 3.2): release
 *
 *   theta^P = argmin_theta  SUM_i l(theta; x_i, y_i) + lambda/2 ||theta||^2 + b.theta,   b ~ N(0, sigma^2 I_d).
 *
 * Conditions, checked before any randomness is drawn (`InvalidParameterError` naming the one that
 * fails):
 * - GLM loss l = f(x.theta; y), convex, f beta_f-smooth, |f'| bounded (L finite).
 * - Rows bounded: ||x_i||_2 <= R for a PUBLIC R (`rowNormBound`, default 1: `003` Sec. 2.2
 *   assumes ||x|| <= 1 after row normalisation). The theorems are stated for R = 1, but their
 *   proof (`003` App. C, D.2) uses the row norm only in two places: mu = x^T (grad^2 J)^{-1} x
 *   <= ||x||^2 / lambda, so f'' mu <= beta_f R^2 / lambda, and b.x ~ N(0, sigma^2 ||x||^2), so
 *   |f'| |b.x| is half-normal with scale sigma sup|f'| R. Both hold with the constants of
 *   `glmConstants` for R: beta = sup f'' R^2, L = sup|f'| R. The data are checked against R.
 * - lambda > beta (Thm. 3.1/3.2).
 *
 * Neighbouring relation: add/remove one (`003` Sec. 2.1 and App. C: Z' = Z with one more point);
 * the objective is a SUM, so n need not be public.
 *
 * The squared loss is not Lipschitz on R^d, and objective perturbation minimises over all of R^d
 * (a norm ball would break the first-order condition b = -grad J(theta^P) the proofs rest on).
 * For `loss: 'squared'` this learner therefore minimises the Huber loss with threshold
 * h = R P + B (B: `labelBound`, P: `parameterNormBound`; or `huberThreshold` = h directly):
 * f(z) = (z - y)^2 / 2 for |z - y| <= h, linear beyond. It is a convex GLM with
 * L = h R and beta = R^2 for ANY labels, so the guarantee needs no assumption on the data beyond
 * ||x|| <= R; and its minimiser is the ridge solution (X^T X + lambda I)^{-1} (X^T y - b)
 * whenever every residual there is within h (in particular when ||theta^P|| <= P and |y_i| <= B).
 * The model records the Huber loss it minimised. Without h (nor B and P) the squared loss is
 * refused. (Huber's f'' jumps at |r| = h; the change of variables b <-> theta^P in the proofs
 * needs only a Lipschitz, injective gradient map, as for the clipped-gradient loss of `003`
 * App. F.2, whose f'' jumps too.)
 *
 * Exactness. Thm. 3.1/3.2 hold for the EXACT minimiser. The learner minimises to a tight gradient
 * tolerance (Newton's method for d <= 200, L-BFGS otherwise), recomputes the gradient at the
 * returned point, and throws `NumericalError` (releasing nothing) if the test fails; the report
 * carries a warning that the minimiser is numerical. For a guarantee that covers an approximate
 * minimiser use `trainAmp` (`003` Alg. 1).
 *
 * Noise: either a target (epsilon, delta) — sigma calibrated by the RDP accountant (default, as
 * `003` Sec. 5; an RDP-calibrated event also meets the target under the tighter PLD accountant)
 * or by the PLD accountant (`accountant: 'pld'`, tighter), and re-accounted (epsilon <= target
 * checked) before any noise is drawn; lambda given, or chosen by `003` Sec. 5's rule
 * (`selectObjectivePerturbationParameters`: the smallest lambda with sigma <= 1.3 sigma_G) — or an
 * explicit `noiseStd` with an explicit lambda, reported at `delta`.
 *
 * Randomness: exactly d standard draws, b = fillGaussian(rng, new Float64Array(d), sigma), and
 * nothing else (tests reproduce b from the same seed). b is not returned: with the data it reveals
 * theta^P's privacy-critical noise.
 */
import {
  calibrateObjectivePerturbation,
  objectivePerturbationAccountant,
  type AmpOutputParameters,
  type ObjectivePerturbationAccountant,
} from '../accounting/calibrate-objective-perturbation.js';
import { objectivePerturbationFamilyEvent } from '../accounting/calibrate-objective-perturbation.js';
import type { DpEvent } from '../accounting/events.js';
import { pldEpsilon } from '../accounting/pld/accountant.js';
import { selectObjectivePerturbationParameters } from '../accounting/select-amp-parameters.js';
import { CalibrationError, InvalidParameterError, NumericalError } from '../errors.js';
import { norm2 } from '../math/linear-algebra.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { requireInteger, requireOpenUnit, requirePositive } from '../validate.js';
import type { TrainResult } from './dp-gd.js';
import { glmConstants, mulUp } from './glm/constants.js';
import { huberLoss } from './glm/huber.js';
import { checkedRowNormBound, validateGlmData } from './glm/data.js';
import { minimizeGlmObjective, NEWTON_MAX_DIMENSION } from './glm/minimize.js';
import type { GlmConstants, GlmData, GlmLoss } from './glm/types.js';
import { dataForLoss, lossByName } from './losses.js';
import { linearModel } from './model.js';
import { privacyReport, type ExtraAccountant, type PrivacyReport } from './privacy-report.js';
import type { TrainingDiagnostics } from './training.js';

/** Privacy options shared by objective perturbation and AMP. */
export interface ObjectivePerturbationNoiseOptions {
  /** Target epsilon; with `delta`, sigma is calibrated. Give this or `noiseStd`. */
  readonly epsilon?: number;
  /** delta of the target, or the delta at which explicit noise is reported. */
  readonly delta: number;
  /** Explicit sigma (std of each coordinate of b), instead of a target; needs `regularization`. */
  readonly noiseStd?: number;
  /**
   * lambda > beta: regulariser of the SUM objective. Optional with a target: then `003` Sec. 5's
   * smallest lambda with sigma <= noiseFactor * sigma_G.
   */
  readonly regularization?: number;
  /** f of `003` Sec. 5's lambda selection (default 1.3). */
  readonly noiseFactor?: number;
  /** Accountant that calibrates sigma (and selects lambda): 'rdp' (default, `003` Sec. 5) or 'pld' (tighter). */
  readonly accountant?: ObjectivePerturbationAccountant;
  /** R: PUBLIC bound on every row norm ||x_i||_2 (default 1; the data are checked). */
  readonly rowNormBound?: number;
  /** Randomness (default: the secure generator). */
  readonly rng?: Rng;
}

export interface ObjectivePerturbationOptions extends ObjectivePerturbationNoiseOptions {
  /** 'logistic' (default), 'huber', 'smoothedHinge', or 'squared' (minimised as Huber, see the module comment). */
  readonly loss?: string;
  readonly lossParameters?: Record<string, number>;
  /** Squared loss: B, a bound on |y_i| (with parameterNormBound sets h = R P + B). */
  readonly labelBound?: number;
  /** Squared loss: P, the parameter norm up to which the objective is exactly ridge's. */
  readonly parameterNormBound?: number;
  /** Squared loss: the Huber threshold h directly (instead of labelBound and parameterNormBound). */
  readonly huberThreshold?: number;
  /** ||grad|| of the SUM objective at the released point (default 1e-10 (n L + ||b||_2 + 1)). */
  readonly gradTolerance?: number;
  /** Optimiser step cap (default 100 for Newton, 10000 for L-BFGS); hitting it releases nothing. */
  readonly maxIterations?: number;
  /** 'newton' (default for d <= 200) or 'lbfgs'. */
  readonly optimizer?: 'newton' | 'lbfgs';
  readonly featureNames?: readonly string[];
}

/** The loss to minimise, its constants for the declared row-norm bound, and the Huber threshold used for the squared loss. */
export interface ResolvedObjectiveLoss {
  readonly loss: GlmLoss;
  readonly constants: GlmConstants;
  readonly rowNormBound: number;
  readonly huberThreshold?: number;
}

/**
 * Checks the rows against R (default 1) and resolves the loss that objective perturbation
 * minimises with its constants (squared -> Huber with h = R P + B). Throws `InvalidParameterError`
 * for a row above R, or a loss with no finite Lipschitz constant.
 */
export function objectivePerturbationLoss(loss: GlmLoss, data: GlmData, options: Pick<ObjectivePerturbationOptions, 'rowNormBound' | 'labelBound' | 'parameterNormBound' | 'huberThreshold'>): ResolvedObjectiveLoss {
  const rowNormBound = checkedRowNormBound(data, options.rowNormBound ?? 1);
  if (loss.name !== 'squared') {
    const constants = glmConstants(loss, { rowNormBound });
    if (!Number.isFinite(constants.lipschitz)) {
      throw new InvalidParameterError('loss', loss.name, 'a loss with a finite Lipschitz constant', '003 Thm. 3.1/3.2 need ||grad l|| <= L');
    }
    return { loss, constants, rowNormBound };
  }
  let threshold: number;
  if (options.huberThreshold !== undefined) {
    threshold = requirePositive('huberThreshold', options.huberThreshold);
  } else if (options.labelBound !== undefined && options.parameterNormBound !== undefined) {
    const b = requirePositive('labelBound', options.labelBound);
    const p = requirePositive('parameterNormBound', options.parameterNormBound);
    threshold = mulUp(rowNormBound, p) + b;
  } else {
    throw new InvalidParameterError(
      'parameterNormBound',
      options.parameterNormBound,
      'given with labelBound (or huberThreshold given)',
      'the squared loss has no finite Lipschitz constant on R^d (003 Thm. 3.1/3.2 need one); it is minimised as the Huber loss with threshold h = R P + B',
    );
  }
  const huber = huberLoss(threshold);
  return { loss: huber, constants: glmConstants(huber, { rowNormBound }), rowNormBound, huberThreshold: threshold };
}

/** sigma, lambda and the event of a run, decided before any noise is drawn. */
export interface ObjectivePerturbationNoise {
  readonly noiseStd: number;
  readonly regularization: number;
  readonly event: DpEvent;
  readonly delta: number;
  /** The target epsilon (undefined for explicit noise). */
  readonly targetEpsilon?: number;
  /** sigma_G and f when lambda was selected by `003` Sec. 5's rule. */
  readonly selection?: { readonly gaussianNoiseStd: number; readonly noiseFactor: number };
}

/**
 * Decides sigma and lambda for objective perturbation (or AMP, with `output`) from the options and
 * the constants; with a target, re-accounts the event with the calibrating accountant and throws
 * `CalibrationError` unless epsilon <= target.
 */
export function objectivePerturbationNoise(constants: GlmConstants, options: ObjectivePerturbationNoiseOptions, output?: AmpOutputParameters): ObjectivePerturbationNoise {
  const { lipschitz, smoothness } = constants;
  const delta = requireOpenUnit('delta', options.delta);
  if ((options.epsilon === undefined) === (options.noiseStd === undefined)) {
    throw new InvalidParameterError('epsilon', options.epsilon, 'given, or noiseStd given instead (exactly one of the two)');
  }
  const lambda = options.regularization;
  if (lambda !== undefined) {
    requirePositive('regularization', lambda);
    if (!(lambda > smoothness)) {
      throw new InvalidParameterError('regularization', lambda, `> beta = ${smoothness} (the smoothness for rows with norm <= R)`, '003 Thm. 3.1/3.2/4.1 need lambda > beta');
    }
  }
  if (options.noiseStd !== undefined) {
    const noiseStd = requirePositive('noiseStd', options.noiseStd);
    if (lambda === undefined) throw new InvalidParameterError('regularization', lambda, 'given with an explicit noiseStd');
    const event = objectivePerturbationFamilyEvent(noiseStd, { lipschitz, smoothness, regularization: lambda, output });
    return { noiseStd, regularization: lambda, event, delta };
  }
  const targetEpsilon = requirePositive('epsilon', options.epsilon);
  const accountant = options.accountant ?? 'rdp';
  let result: ObjectivePerturbationNoise;
  if (lambda === undefined) {
    const s = selectObjectivePerturbationParameters({ targetEpsilon, delta, lipschitz, smoothness, noiseFactor: options.noiseFactor, output, accountant });
    result = { noiseStd: s.noiseStd, regularization: s.regularization, event: s.event, delta, targetEpsilon, selection: { gaussianNoiseStd: s.gaussianNoiseStd, noiseFactor: s.noiseFactor } };
  } else {
    const c = calibrateObjectivePerturbation({ targetEpsilon, delta, lipschitz, smoothness, regularization: lambda, output, accountant });
    result = { noiseStd: c.noiseStd, regularization: lambda, event: c.event, delta, targetEpsilon };
  }
  const recheck = objectivePerturbationAccountant(accountant)(result.event, delta).epsilon;
  if (!(recheck <= targetEpsilon)) {
    throw new CalibrationError(`objective perturbation: the calibrated event re-accounts to epsilon ${recheck} > target ${targetEpsilon}; nothing was trained`);
  }
  return result;
}

/**
 * The privacy report of an objective-perturbation-family event: RDP (`003` Thm. 3.2 / 4.1) and the
 * PLD accountant (`003` Thm. 3.1, App. D.3 dominating pair); add/remove-one. When the PLD
 * accountant cannot reach its accuracy (NumericalError, e.g. for an almost non-private event) the
 * report keeps the RDP bound and says so in a warning.
 */
export function objectivePerturbationReport(event: DpEvent, delta: number, rng: Rng, warnings: readonly string[] = []): PrivacyReport {
  let pld: ReturnType<ExtraAccountant>;
  const extra = [...warnings];
  try {
    pld = pldEpsilon(event, delta);
  } catch (error) {
    if (!(error instanceof NumericalError)) throw error;
    extra.push(`the PLD accountant gave no bound (${error.message}); the RDP bound is reported`);
  }
  return privacyReport(event, delta, { relation: 'addOrRemoveOne', rng, pld: () => pld, warnings: extra });
}

/**
 * Minimises the perturbed objective SUM l + lambda/2 ||theta||^2 + b.theta with b given, to
 * ||grad|| <= gradTolerance, checked on a fresh gradient evaluation at the returned point; throws
 * `NumericalError` otherwise. Exposed so that tests can pass b explicitly; never release its
 * result without the noise (use `trainObjectivePerturbation`).
 */
export function minimizePerturbedObjective(
  loss: GlmLoss,
  data: GlmData,
  b: Float64Array,
  options: { regularization: number; gradTolerance: number; maxIterations?: number; optimizer?: 'newton' | 'lbfgs' },
): { theta: Float64Array; optimizer: 'newton' | 'lbfgs'; iterations: number } {
  const result = minimizeGlmObjective(loss, data, { regularization: options.regularization, linear: b }, options);
  if (!result.met) {
    throw new NumericalError(
      `objective perturbation: the optimiser (${result.optimizer}) stopped (${result.reason}) with ||grad|| = ${result.gradNorm} > ${options.gradTolerance}; ` +
        '003 Thm. 3.1/3.2 hold only for the exact minimiser, so nothing is released (raise maxIterations, or use trainAmp, whose guarantee covers approximate minimisers)',
    );
  }
  return { theta: result.theta, optimizer: result.optimizer, iterations: result.iterations };
}

/**
 * Objective perturbation (see the module comment).
 *
 * @example
 * const {model, privacy} = trainObjectivePerturbation(data, {loss: 'logistic', epsilon: 1, delta: 1e-5});
 */
export function trainObjectivePerturbation(data: GlmData, options: ObjectivePerturbationOptions): TrainResult {
  const baseLoss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(baseLoss, data);
  const { n, d } = glmData;
  validateGlmData(baseLoss, glmData);
  const { loss, constants, rowNormBound, huberThreshold } = objectivePerturbationLoss(baseLoss, glmData, options);
  if (options.optimizer !== undefined && options.optimizer !== 'newton' && options.optimizer !== 'lbfgs') {
    throw new InvalidParameterError('optimizer', options.optimizer, "'newton' or 'lbfgs'");
  }
  const noise = objectivePerturbationNoise(constants, options);
  const maxIterations = options.maxIterations === undefined ? undefined : requireInteger('maxIterations', options.maxIterations, 1);
  if (options.gradTolerance !== undefined) requirePositive('gradTolerance', options.gradTolerance);
  const rng = options.rng ?? defaultRng();

  // The only randomness: d draws of N(0, sigma^2).
  const b = fillGaussian(rng, new Float64Array(d), noise.noiseStd);
  const gradTolerance = options.gradTolerance ?? 1e-10 * (n * constants.lipschitz + norm2(b) + 1);
  const { theta, optimizer } = minimizePerturbedObjective(loss, glmData, b, {
    regularization: noise.regularization,
    gradTolerance,
    maxIterations,
    optimizer: options.optimizer,
  });

  const privacy = objectivePerturbationReport(noise.event, noise.delta, rng, [
    `003 Thm. 3.1/3.2 assume the exact minimiser; the released one has ||grad|| <= ${gradTolerance} (use AMP for a guarantee that covers approximate minimisers)`,
  ]);
  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'objectivePerturbation',
    steps: 1,
    noiseMultiplier: noise.noiseStd / constants.lipschitz,
    noiseStd: noise.noiseStd,
    clippedFraction: 0,
    clipNorm: Infinity,
    regularization: noise.regularization,
    lipschitz: constants.lipschitz,
    smoothness: constants.smoothness,
    rowNormBound,
    gradTolerance,
    optimizer,
    accountant: options.accountant ?? 'rdp',
    ...(huberThreshold === undefined ? {} : { huberThreshold }),
    ...(noise.selection === undefined ? {} : { gaussianNoiseStd: noise.selection.gaussianNoiseStd, noiseFactor: noise.selection.noiseFactor }),
  };
  return { model: { ...model, privacy }, privacy, diagnostics };
}
