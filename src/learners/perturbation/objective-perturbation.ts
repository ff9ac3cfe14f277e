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
 * Exactness, and why this learner is refused by default. Thm. 3.1/3.2 hold for the EXACT
 * minimiser with continuous b, which floating point cannot deliver. The learner minimises to a
 * tight gradient tolerance (Newton's method for d <= 200, L-BFGS otherwise, then the certified
 * fallback of `glm/certified-minimum.ts`, so that nothing fails), and that point, with b on its
 * grid, identifies the dataset (grid inversion, `objective-perturbation-opt-in.ts`). So it runs
 * only with `acceptNoGuarantee: true`, and its report says `guarantee: "none"` with the reason
 * (the epsilon of Thm. 3.1/3.2 is kept, for research). `trainAmp` (`003` Alg. 1) is the variant
 * whose output noise hides b and whose proven guarantee covers the tolerance.
 *
 * Noise: either a target (epsilon, delta) — sigma calibrated by the RDP accountant (default, as
 * `003` Sec. 5; an RDP-calibrated event also meets the target under the tighter PLD accountant)
 * or by the PLD accountant (`accountant: 'pld'`, tighter), and re-accounted (epsilon <= target
 * checked) before any noise is drawn; lambda given, or chosen by `003` Sec. 5's rule
 * (`selectObjectivePerturbationParameters`: the smallest lambda with sigma <= 1.3 sigma_G) — or an
 * explicit `noiseStd` with an explicit lambda, reported at `delta`.
 *
 * Randomness: exactly d draws, the coordinates of b: exact discrete Gaussian on a public grid far
 * finer than any optimiser tolerance (`objectiveNoiseGrid`), and nothing else (tests reproduce b
 * from the same seed). Neither b nor any number computed from it (its norm, the tolerance it
 * sets) is returned or reported: with the data such a number identifies the dataset.
 */
import {
  calibrateObjectivePerturbation,
  objectivePerturbationAccountant,
  type AmpOutputParameters,
  type ObjectivePerturbationAccountant,
} from '../../accounting/calibration/calibrate-objective-perturbation.js';
import { objectivePerturbationFamilyEvent } from '../../accounting/calibration/calibrate-objective-perturbation.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { pldEpsilon } from '../../accounting/pld/accountant.js';
import { selectObjectivePerturbationParameters } from '../../accounting/calibration/approximate-minima-perturbation-parameters.js';
import type { ObjectivePerturbationEvent } from '../../accounting/events/types.js';
import { NON_PRIVATE_EVENT, objectivePerturbationEvent } from '../../accounting/events/constructors.js';
import { CalibrationError, InvalidParameterError, NumericalError } from '../../errors.js';
import { norm2 } from '../../math/linear-algebra.js';
import { griddedGaussianEffectiveMultiplier, powerOfTwoAtMost } from '../../mechanisms/grid-noise.js';
import { fillGaussian } from '../../random/continuous.js';
import { fillDiscreteGaussian } from '../../random/exact.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../../validate.js';
import { certifiedMinimum, objectiveSmoothness } from '../glm/certified-minimum.js';
import { glmConstants, mulUp } from '../glm/constants.js';
import { huberLoss } from '../glm/losses/huber.js';
import { checkedRowNormBound, validateGlmData } from '../glm/data.js';
import { minimizeGlmObjective } from '../glm/minimize.js';
import { glmGradientRoundingBound, glmObjective, withKernelFeatures } from '../glm/objective.js';
import type { GlmConstants, GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import { privacyReport, type ExtraAccountant, type GuaranteeCondition, type PrivacyReport } from '../models/privacy-report.js';
import { optimizerProgress } from '../glm/optimizer-progress.js';
import { OBJECTIVE_PERTURBATION_NOT_PRIVATE, requireObjectivePerturbationOptIn } from './objective-perturbation-opt-in.js';
import { requireOwnMethod, type TrainingDiagnostics } from '../training.js';
import type { TrainResult } from '../training.js';

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
  /** Floating-point noise instead of the default exact discrete noise on a grid (guarantee `none`; for experiments). */
  readonly continuousNoise?: boolean;
}

export interface ObjectivePerturbationOptions extends ObjectivePerturbationNoiseOptions {
  /** `train()`'s name of this learner: only 'objpert' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'objpert';
  /** 'logistic' (default), 'huber', 'smoothedHinge', or 'squared' (minimised as Huber, see the module comment). */
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
  /** Squared loss: B, a bound on |y_i| (with parameterNormBound sets h = R P + B). */
  readonly labelBound?: number;
  /** Squared loss: P, the parameter norm up to which the objective is exactly ridge's. */
  readonly parameterNormBound?: number;
  /** Squared loss: the Huber threshold h directly (instead of labelBound and parameterNormBound). */
  readonly huberThreshold?: number;
  /** ||grad|| of the SUM objective at the released point (default 1e-10 (n L + ||b||_2 + 1)). */
  readonly gradTolerance?: number;
  /** Step cap of the fast optimiser (default 100 for Newton, 10000 for L-BFGS); beyond it a certified fallback takes over. */
  readonly maxIterations?: number;
  /** 'newton' (default for d <= 200) or 'lbfgs'. */
  readonly optimizer?: 'newton' | 'lbfgs';
  readonly featureNames?: readonly string[];
  /** Progress of the minimisation for a bar (`glm/optimizer-progress.ts`): (done, total) units, done < total. */
  readonly onStep?: (step: number, steps: number) => void;
  /**
   * Must be `true`: the release has NO guarantee (its minimiser identifies the dataset,
   * `objective-perturbation-opt-in.ts`); for research on `003` Thm. 3.1/3.2 only. Use `trainAmp`
   * for a private model.
   */
  readonly acceptNoGuarantee?: boolean;
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
 * minimises with its constants (`objectivePerturbationLossFor`). Throws `InvalidParameterError`
 * for a row above R, or a loss with no finite Lipschitz constant.
 */
export function objectivePerturbationLoss(loss: GlmLoss, data: GlmData, options: Pick<ObjectivePerturbationOptions, 'rowNormBound' | 'labelBound' | 'parameterNormBound' | 'huberThreshold'>): ResolvedObjectiveLoss {
  return objectivePerturbationLossFor(loss, checkedRowNormBound(data, options.rowNormBound ?? 1), options);
}

/**
 * The loss objective perturbation minimises and its constants for rows of norm <= R, from public
 * values only (squared -> Huber with h = R P + B). Throws `InvalidParameterError` for a loss with
 * no finite Lipschitz constant.
 */
export function objectivePerturbationLossFor(loss: GlmLoss, rowNormBound: number, options: Pick<ObjectivePerturbationOptions, 'labelBound' | 'parameterNormBound' | 'huberThreshold'>): ResolvedObjectiveLoss {
  if (loss.name !== 'squared') {
    const constants = glmConstants(loss, { rowNormBound });
    if (!Number.isFinite(constants.lipschitz)) {
      throw new InvalidParameterError('loss', loss.name, 'a loss with a finite Lipschitz constant', 'its guarantee needs ||grad l|| <= L');
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
      'the squared loss has no finite Lipschitz constant on R^d (the guarantee needs one); it is minimised as the Huber loss with threshold h = R P + B',
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
      throw new InvalidParameterError('regularization', lambda, `> beta = ${smoothness} (the smoothness for rows with norm <= R)`, 'the guarantee needs lambda > beta');
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

/** What an objective-perturbation-family report says besides its event. */
export interface ObjectivePerturbationReportOptions {
  readonly warnings?: readonly string[];
  readonly conditions?: readonly GuaranteeCondition[];
  readonly granularity?: number;
  readonly granularities?: Readonly<Record<string, number>>;
}

/**
 * The privacy report of an objective-perturbation-family event: RDP (`003` Thm. 3.2 / 4.1) and the
 * PLD accountant (`003` Thm. 3.1, App. D.3 dominating pair); add/remove-one. When the PLD
 * accountant cannot reach its accuracy (NumericalError, e.g. for an almost non-private event) the
 * report keeps the RDP bound and says so in a warning.
 */
export function objectivePerturbationReport(event: DpEvent, delta: number, rng: Rng, options: ObjectivePerturbationReportOptions = {}): PrivacyReport {
  let pld: ReturnType<ExtraAccountant>;
  const extra = [...(options.warnings ?? [])];
  try {
    pld = pldEpsilon(event, delta);
  } catch (error) {
    if (!(error instanceof NumericalError)) throw error;
    extra.push(`the PLD accountant gave no bound (${error.message}); the RDP bound is reported`);
  }
  return privacyReport(event, delta, {
    relation: 'addOrRemoveOne',
    rng,
    pld: () => pld,
    warnings: extra,
    ...(options.conditions === undefined ? {} : { conditions: options.conditions }),
    ...(options.granularity === undefined ? {} : { granularity: options.granularity }),
    ...(options.granularities === undefined ? {} : { granularities: options.granularities }),
  });
}

/** Grid steps beyond which the smoothing coupling's continuous noise C and the drawn b~ never differ (40 s2, s2 = 8: probability < e^-795). */
const COUPLING_MARGIN = 320;

/** The objective noise b on its grid: what is drawn and what the event says. */
export interface ObjectiveNoiseGrid {
  /** g_b, a power of two. */
  readonly granularity: number;
  /** s_b, the integer std parameter in grid steps. */
  readonly gridNoiseStd: number;
  /** g_b s_b: the std parameter of b (the event's noiseStd; the accountants use g_b sqrt(s_b^2 - 64) >= sigma). */
  readonly noiseStd: number;
  /** ||b~ - C|| <= g_b 320 sqrt(d): what the optimiser's tolerance must leave room for (AMP). */
  readonly toleranceCost: number;
  /** Draws b~ (d coordinates). */
  readonly draw: (rng: Rng) => Float64Array;
}

/**
 * Objective perturbation's noise b on a public grid, for an accounted std >= sigma. Why this is
 * sound (`accounting/discrete-coupling.ts`): b~ = g K with K exact discrete Gaussian of parameter
 * s is, within a factor e^{+-1e-500} pointwise, distributed as the rounding-like post-processing
 * K ~ D_{s2, C/g} of a CONTINUOUS C ~ N(0, g^2 (s^2 - 64) I) — the ideal noise the theorems of
 * `003` assume — and in that coupling every coordinate of b~ - C is below g 320 except with
 * probability < d e^-795. AMP pays that gap in its gradient tolerance (a point with
 * ||grad + b~|| <= tau - g 320 sqrt(d) has ||grad + C|| <= tau) and the miss probability in
 * delta (far below double precision: the accountants' final upward rounding covers it).
 * The grid is at most 2^-40 sigma (and, with a tolerance, at most 2^-14 tau / (320 sqrt d)).
 */
export function objectiveNoiseGrid(sigma: number, d: number, gradTolerance?: number): ObjectiveNoiseGrid {
  requirePositive('noiseStd', sigma);
  const bound = gradTolerance === undefined ? sigma * 2 ** -40 : Math.min(sigma * 2 ** -40, (2 ** -14 * gradTolerance) / (COUPLING_MARGIN * Math.sqrt(d)));
  const granularity = powerOfTwoAtMost(bound);
  const target = sigma * (1 + 1e-12);
  let steps = Math.max(1024, Math.ceil(target / granularity));
  while (granularity * griddedGaussianEffectiveMultiplier(steps, steps) < target) steps = Math.max(steps + 1, Math.ceil(steps * (1 + 1e-12)));
  return {
    granularity,
    gridNoiseStd: steps,
    noiseStd: granularity * steps,
    toleranceCost: granularity * COUPLING_MARGIN * Math.sqrt(d) * (1 + 1e-12),
    draw: (rng) => {
      const b = fillDiscreteGaussian(rng, new Float64Array(d), steps);
      for (let j = 0; j < d; j++) b[j] *= granularity;
      return b;
    },
  };
}

/** The objective-perturbation event of a gridded b (its accounted std is >= the calibrated sigma). */
export function griddedObjectivePerturbationEvent(grid: ObjectiveNoiseGrid, constants: GlmConstants, regularization: number): ObjectivePerturbationEvent {
  return objectivePerturbationEvent({
    noiseStd: grid.noiseStd,
    lipschitz: constants.lipschitz,
    smoothness: constants.smoothness,
    regularization,
    discrete: true,
    gridNoiseStd: grid.gridNoiseStd,
  });
}

const MINIMIZE_PERTURBED_OBJECTIVE_OPTIONS = optionNames<NonNullable<Parameters<typeof minimizePerturbedObjective>[3]>>({ regularization: true, gradTolerance: true, lipschitz: true, maxIterations: true, optimizer: true, clipNorm: true, onStep: true });

/**
 * Minimises the perturbed objective SUM l + lambda/2 ||theta||^2 + b.theta with b given, to a
 * certified ||grad|| <= gradTolerance (`glm/certified-minimum.ts`: the fast optimiser, then a
 * fallback that cannot fail). Exposed so that tests can pass b explicitly. Its result is NOT a
 * private release, whatever b is: with b on a grid, the minimiser identifies the dataset
 * (`objective-perturbation-opt-in.ts`); release `trainAmp`'s output instead.
 */
export function minimizePerturbedObjective(
  loss: GlmLoss,
  data: GlmData,
  b: Float64Array,
  options: { regularization: number; gradTolerance: number; lipschitz: number; maxIterations?: number; optimizer?: 'newton' | 'lbfgs'; clipNorm?: number; onStep?: (step: number, steps: number) => void },
): { theta: Float64Array; optimizer: 'newton' | 'lbfgs'; iterations: number; certificate: 'checked' | 'theorem' } {
  rejectUnknownOptions(options, MINIMIZE_PERTURBED_OBJECTIVE_OPTIONS, 'minimizePerturbedObjective');
  const objectiveOptions = { regularization: options.regularization, linear: b, ...(options.clipNorm === undefined ? {} : { clipNorm: options.clipNorm }) };
  const progress = options.onStep === undefined ? undefined : optimizerProgress(options.gradTolerance / 2, options.onStep);
  // The features in a feature memory: margins and gradient sums by the SIMD kernels, the same numbers.
  const kernelData = withKernelFeatures(data);
  const fast = minimizeGlmObjective(loss, kernelData, objectiveOptions, { gradTolerance: options.gradTolerance / 2, maxIterations: options.maxIterations, optimizer: options.optimizer, ...(progress === undefined ? {} : { onIteration: progress.onIteration }) });
  const bNorm = norm2(b) * (1 + 4 * Number.EPSILON);
  const certified = certifiedMinimum(glmObjective(loss, kernelData, objectiveOptions), {
    strongConvexity: options.regularization,
    smoothness: objectiveSmoothness(loss, data, options.regularization),
    tolerance: options.gradTolerance,
    roundingBound: (theta) => glmGradientRoundingBound(data.n, data.d, options.lipschitz, options.regularization, norm2(theta) * (1 + 4 * Number.EPSILON), bNorm),
    start: fast.theta,
    ...(progress === undefined ? {} : { onProgress: progress.onFallback }),
  });
  return { theta: certified.theta, optimizer: fast.optimizer, iterations: fast.iterations + certified.fallbackIterations, certificate: certified.certificate };
}

/**
 * What a budget reserves for objective perturbation (`Learner.plan`): every option checked and
 * sigma calibrated as `trainObjectivePerturbation` does, from public values, then the release
 * charged as NON-PRIVATE: it has no guarantee (its minimiser identifies the data set,
 * `objective-perturbation-opt-in.ts`), so no finite budget can hold it, and the `003` epsilon its
 * report keeps for research is not a bound a budget may count.
 */
export function planObjectivePerturbation(d: number, options: ObjectivePerturbationOptions): DpEvent {
  rejectUnknownOptions(options, OBJECTIVE_PERTURBATION_OPTIONS, 'trainObjectivePerturbation');
  requireOwnMethod(options.method, 'objpert', 'trainObjectivePerturbation');
  requireObjectivePerturbationOptIn(options.acceptNoGuarantee);
  const resolved = objectivePerturbationLossFor(lossByName(options.loss ?? 'logistic', options.lossParameters), requirePositive('rowNormBound', options.rowNormBound ?? 1), options);
  checkObjectivePerturbationRun(options);
  objectiveNoiseGrid(objectivePerturbationNoise(resolved.constants, options).noiseStd, d);
  return NON_PRIVATE_EVENT;
}

/** The optimiser options of objective perturbation, checked before anything is read. */
function checkObjectivePerturbationRun(options: ObjectivePerturbationOptions): void {
  if (options.optimizer !== undefined && options.optimizer !== 'newton' && options.optimizer !== 'lbfgs') {
    throw new InvalidParameterError('optimizer', options.optimizer, "'newton' or 'lbfgs'");
  }
  if (options.maxIterations !== undefined) requireInteger('maxIterations', options.maxIterations, 1);
  if (options.gradTolerance !== undefined) requirePositive('gradTolerance', options.gradTolerance);
}

export const OBJECTIVE_PERTURBATION_OPTIONS = optionNames<ObjectivePerturbationOptions>({ method: true, loss: true, lossParameters: true, labelBound: true, parameterNormBound: true, huberThreshold: true, gradTolerance: true, maxIterations: true, optimizer: true, featureNames: true, onStep: true, acceptNoGuarantee: true, epsilon: true, delta: true, noiseStd: true, regularization: true, noiseFactor: true, accountant: true, rowNormBound: true, rng: true, continuousNoise: true });

/**
 * Objective perturbation (see the module comment): refused unless `acceptNoGuarantee: true`, and
 * then reported `guarantee: "none"`.
 *
 * @example
 * // Research only: the model is NOT private (use trainAmp for a private one).
 * const {model, privacy} = trainObjectivePerturbation(data, {loss: 'logistic', epsilon: 1, delta: 1e-5, acceptNoGuarantee: true});
 */
export function trainObjectivePerturbation(data: GlmData, options: ObjectivePerturbationOptions): TrainResult {
  rejectUnknownOptions(options, OBJECTIVE_PERTURBATION_OPTIONS, 'trainObjectivePerturbation');
  requireOwnMethod(options.method, 'objpert', 'trainObjectivePerturbation');
  requireObjectivePerturbationOptIn(options.acceptNoGuarantee);
  const baseLoss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(baseLoss, data);
  const { n, d } = glmData;
  validateGlmData(baseLoss, glmData);
  const { loss, constants, rowNormBound, huberThreshold } = objectivePerturbationLoss(baseLoss, glmData, options);
  checkObjectivePerturbationRun(options);
  const noise = objectivePerturbationNoise(constants, options);
  const maxIterations = options.maxIterations;
  const rng = options.rng ?? defaultRng();

  // The only randomness: the d coordinates of b (exact discrete Gaussian on a public grid).
  const grid = objectiveNoiseGrid(noise.noiseStd, d);
  const b = options.continuousNoise ? fillGaussian(rng, new Float64Array(d), noise.noiseStd) : grid.draw(rng);
  // A private tolerance (it depends on n and on b): used, never reported; never below 16 floating-point floors of the gradient test.
  const floor = 16 * glmGradientRoundingBound(n, d, constants.lipschitz, noise.regularization, 0, norm2(b));
  const gradTolerance = Math.max(floor, options.gradTolerance ?? 1e-10 * (n * constants.lipschitz + norm2(b) + 1));
  const { theta, optimizer, certificate } = minimizePerturbedObjective(loss, glmData, b, {
    regularization: noise.regularization,
    gradTolerance,
    lipschitz: constants.lipschitz,
    maxIterations,
    optimizer: options.optimizer,
    ...(options.onStep === undefined ? {} : { onStep: options.onStep }),
  });

  const event = options.continuousNoise ? noise.event : griddedObjectivePerturbationEvent(grid, constants, noise.regularization);
  const privacy = objectivePerturbationReport(event, noise.delta, rng, {
    conditions: [{ level: 'none', reason: OBJECTIVE_PERTURBATION_NOT_PRIVATE }],
    ...(options.continuousNoise ? {} : { granularity: grid.granularity }),
  });
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
    certificate,
    accountant: options.accountant ?? 'rdp',
    ...(huberThreshold === undefined ? {} : { huberThreshold }),
    ...(noise.selection === undefined ? {} : { gaussianNoiseStd: noise.selection.gaussianNoiseStd, noiseFactor: noise.selection.noiseFactor }),
  };
  return { model: { ...model, privacy }, privacy, diagnostics };
}
