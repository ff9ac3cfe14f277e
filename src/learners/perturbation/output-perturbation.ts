/**
 * Output perturbation (Chaudhuri, Monteleoni & Sarwate 2011, "Differentially private empirical
 * risk minimization", Alg. 1 and Cor. 8; `004` Sec. 3.2.2): minimise the lambda-regularised
 * AVERAGE loss
 *
 *   F(theta) = (1/n) sum_i l(theta; x_i, y_i) + lambda/2 ||theta||^2
 *
 * and release theta + noise of std sigma.
 *
 * Sensitivity (replace-one, n public). F is lambda-strongly convex; if every per-example gradient
 * has norm <= L, the exact minimisers on neighbouring data sets are within 2L / (n lambda)
 * (Chaudhuri et al. 2011, Cor. 8). The minimiser is computed numerically, so we do not pretend
 * it is exact: the released point has ||grad F|| <= tau, and lambda-strong convexity gives
 * ||theta~ - theta*|| <= tau / lambda on each data set, so the L2 sensitivity of theta~ is at most
 *
 *   Delta = 2L / (n lambda) + 2 tau / lambda,
 *
 * the quantity the noise is scaled to (sigma = z Delta; event gaussian(z)). The tolerance is
 * certified and never fails (`glm/certified-minimum.ts`): the fast optimiser's point is released
 * when a gradient test with a rigorous floating-point error bound passes, otherwise Nesterov's
 * accelerated method runs for a number of steps that provably reaches tau. So no outcome of the
 * optimiser depends on the data in a way the guarantee does not cover. The noise is exact
 * discrete Gaussian noise on a public power-of-two grid (`mechanisms/grid-noise.ts`).
 *
 * L is the clipping norm C when one is given (the loss is then the clipped-gradient loss of `003`
 * App. F.2, convex and C-Lipschitz, so this works for the squared loss too), else the loss's own
 * Lipschitz bound for rows with ||x|| <= rowNormBound (a PUBLIC bound; rows are checked against it).
 */
import { gaussianEvent, NON_PRIVATE_EVENT } from '../../accounting/events/constructors.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../../accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError } from '../../errors.js';
import { addGaussianGridNoise, planGaussianGrid, type GaussianGridPlan } from '../../mechanisms/grid-noise.js';
import { fillGaussian } from '../../random/continuous.js';
import { defaultRng, type Rng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive, requirePositiveOrInfinity } from '../../validate.js';
import { certifiedMinimum, objectiveSmoothness } from '../glm/certified-minimum.js';
import { glmConstants, mulUp } from '../glm/constants.js';
import { rowsWithinBound } from '../glm/data.js';
import { minimizeGlmObjective } from '../glm/minimize.js';
import { glmGradientRoundingBound, glmObjective, withKernelFeatures } from '../glm/objective.js';
import type { GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import { nonPrivateReport, privacyReport, type PrivacyReport } from '../models/privacy-report.js';
import { optimizerProgress } from '../glm/optimizer-progress.js';
import { noiseTarget, requireOwnMethod, type NoiseOptions, type NoiseTarget, type TrainingDiagnostics } from '../training.js';
import type { TrainResult } from '../training.js';

/** Options shared by both output-perturbation learners. */
export interface OutputPerturbationCommonOptions extends NoiseOptions {
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
  /** lambda > 0: strength of the L2 regulariser of the AVERAGE loss (the strong convexity the bound needs). */
  readonly regularization: number;
  /** C: use the clipped-gradient loss (`003` App. F.2), so L = C. Give this or rowNormBound. */
  readonly clipNorm?: number;
  /** R: a PUBLIC bound on every row norm; L is the loss's Lipschitz bound for it (rows are checked). */
  readonly rowNormBound?: number;
  readonly featureNames?: readonly string[];
}

export interface OutputPerturbationOptions extends OutputPerturbationCommonOptions {
  /** `train()`'s name of this learner: only 'output' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'output';
  /**
   * tau: the released minimiser satisfies ||grad F|| <= tau (F the average objective); it adds
   * 2 tau / lambda to the sensitivity. Default max(1e-6 L / n, 64 times the floating-point floor
   * of the gradient test): a millionth of the exact term's share per example.
   */
  readonly gradTolerance?: number;
  /** Step cap of the fast optimiser (default 1000); beyond it the certified fallback takes over (nothing fails). */
  readonly maxIterations?: number;
  /** Progress of the minimisation (the fast optimiser, then the certified fallback) for a bar (`glm/optimizer-progress.ts`): done < total. */
  readonly onStep?: (step: number, steps: number) => void;
}

/**
 * The loss's Lipschitz constant L (the per-example gradient-norm bound) and the clipping norm to
 * use: C when a clipping norm is given, else the loss's own bound for rows with ||x|| <= R, R the
 * public bound ALREADY CHECKED against the data (`rowsWithinBound`).
 */
export function outputPerturbationLipschitz(loss: GlmLoss, clipNormOption: number | undefined, rowNormBound: number | undefined): { lipschitz: number; clipNorm: number } {
  if (clipNormOption !== undefined) {
    const clipNorm = requirePositive('clipNorm', clipNormOption);
    if (clipNorm === Infinity) throw new InvalidParameterError('clipNorm', clipNorm, 'finite (it is the Lipschitz constant L of the clipped loss)');
    return { lipschitz: clipNorm, clipNorm };
  }
  if (rowNormBound === undefined) {
    throw new InvalidParameterError('rowNormBound', undefined, 'a public bound on the row norms, or clipNorm instead (the sensitivity needs a Lipschitz constant L)');
  }
  const { lipschitz } = glmConstants(loss, { rowNormBound });
  if (!Number.isFinite(lipschitz)) {
    throw new InvalidParameterError('clipNorm', undefined, `given: the ${loss.name} loss has no finite Lipschitz bound on R^d (clipping makes it C-Lipschitz)`);
  }
  return { lipschitz, clipNorm: Infinity };
}

/** The outcome of adding calibrated Gaussian noise to a point of known L2 sensitivity. */
export interface NoisyRelease {
  readonly theta: Float64Array;
  readonly noiseMultiplier: number;
  readonly noiseStd: number;
  readonly privacy: PrivacyReport;
}

/** The Gaussian noise of a release of known L2 sensitivity, decided before any noise is drawn (`planGaussianRelease`). */
export interface GaussianRelease {
  readonly noiseMultiplier: number;
  /** The grid of the noise (absent: no noise, or continuous noise). */
  readonly grid?: GaussianGridPlan;
  /** The release's event: the grid's, `gaussian(z)` for continuous noise, `nonPrivate` for z = 0. */
  readonly event: DpEvent;
}

/**
 * The noise multiplier z (calibrated exactly for the target: the analytic Gaussian mechanism,
 * Balle & Wang 2018, or given) and the grid of a release of L2 sensitivity `sensitivity` in
 * `dimension` coordinates, with its event: public values only.
 */
export function planGaussianRelease(sensitivity: number, target: NoiseTarget, delta: number, dimension: number, continuous = false): GaussianRelease {
  const noiseMultiplier = target.kind === 'target'
    ? exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta)
    : target.noiseMultiplier;
  if (noiseMultiplier === 0) return { noiseMultiplier, event: NON_PRIVATE_EVENT };
  requireOpenUnit('delta', delta);
  if (continuous) return { noiseMultiplier, event: gaussianEvent(noiseMultiplier) };
  const grid = planGaussianGrid({ sensitivity, noiseMultiplier, dimension });
  return { noiseMultiplier, grid, event: grid.event };
}

/**
 * Adds the noise of `planGaussianRelease` to theta of L2 sensitivity `sensitivity`: exact
 * discrete Gaussian noise on a grid (`mechanisms/grid-noise.ts`) unless `continuous`. The report's
 * event is the release's (replace-one).
 */
export function releaseWithGaussianNoise(theta: Float64Array, sensitivity: number, target: NoiseTarget, delta: number, rng: Rng, continuous = false): NoisyRelease {
  const release = planGaussianRelease(sensitivity, target, delta, theta.length, continuous);
  const { noiseMultiplier, grid } = release;
  if (noiseMultiplier === 0) return { theta, noiseMultiplier, noiseStd: 0, privacy: nonPrivateReport(rng, 'replaceOne') };
  const out = Float64Array.from(theta);
  if (grid === undefined) {
    const noiseStd = mulUp(noiseMultiplier, sensitivity);
    const noise = fillGaussian(rng, new Float64Array(theta.length), noiseStd);
    for (let j = 0; j < out.length; j++) out[j] += noise[j];
    const privacy = privacyReport(release.event, delta, { relation: 'replaceOne', rng, pld: gaussianCompositionEpsilon });
    return { theta: out, noiseMultiplier, noiseStd, privacy };
  }
  addGaussianGridNoise(out, grid, rng);
  const privacy = privacyReport(release.event, delta, { relation: 'replaceOne', rng, pld: gaussianCompositionEpsilon, granularity: grid.granularity });
  return { theta: out, noiseMultiplier, noiseStd: grid.noiseStd, privacy };
}

/**
 * The floating-point floor of output perturbation's gradient test, in average units: the computed
 * gradient of the SUM objective errs by E <= gamma_D (n L + n lambda ||theta||) and ||theta|| <=
 * L / lambda near the minimiser, so E / n <= 2 gamma_D L (`glmGradientRoundingBound`). Public: n is
 * public under replace-one.
 */
export function outputGradientFloor(n: number, d: number, lipschitz: number): number {
  return (glmGradientRoundingBound(n, d, lipschitz, 0, 0, 0) * 2) / n;
}

/** The default tolerance of output perturbation on the average objective: max(1e-6 L / n, 64 floors). */
export function defaultOutputGradTolerance(n: number, d: number, lipschitz: number): number {
  return Math.max((1e-6 * lipschitz) / n, 64 * outputGradientFloor(n, d, lipschitz));
}

export const OUTPUT_PERTURBATION_OPTIONS = optionNames<OutputPerturbationOptions>({ method: true, gradTolerance: true, maxIterations: true, onStep: true, loss: true, lossParameters: true, regularization: true, clipNorm: true, rowNormBound: true, featureNames: true, epsilon: true, delta: true, noiseMultiplier: true, rng: true, continuousNoise: true });

/** What output perturbation decides before it reads a row (`setUpOutputPerturbation`). */
export interface OutputPerturbationRun {
  readonly loss: GlmLoss;
  readonly lambda: number;
  readonly lipschitz: number;
  readonly clipNorm: number;
  readonly gradTolerance: number;
  readonly maxIterations: number;
  /** Delta = 2L/(n lambda) + 2 tau/lambda, rounded up. */
  readonly sensitivity: number;
  readonly target: NoiseTarget;
  /** The delta the release is reported at. */
  readonly delta: number;
  readonly release: GaussianRelease;
}

/**
 * Output perturbation's options checked, its sensitivity and its noise, from public values: the
 * public n (replace-one), d, and R (`rowNormBound`: checked against the rows by the caller that
 * has them; absent with a clipping norm).
 */
export function setUpOutputPerturbation(shape: { readonly n: number; readonly d: number }, options: OutputPerturbationOptions, rowNormBound: number | undefined): OutputPerturbationRun {
  const { n, d } = shape;
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const lambda = requirePositive('regularization', options.regularization);
  if (lambda === Infinity) throw new InvalidParameterError('regularization', lambda, 'finite');
  const target = noiseTarget(options);
  const { lipschitz, clipNorm } = outputPerturbationLipschitz(loss, options.clipNorm, rowNormBound);
  const tau = options.gradTolerance === undefined ? defaultOutputGradTolerance(n, d, lipschitz) : requirePositiveOrInfinity('gradTolerance', options.gradTolerance);
  if (!Number.isFinite(tau)) throw new InvalidParameterError('gradTolerance', tau, 'finite');
  const floor = 16 * outputGradientFloor(n, d, lipschitz);
  if (!(tau >= floor)) {
    throw new InvalidParameterError('gradTolerance', tau, `>= ${floor} (16 times the floating-point floor of the gradient test for ${n} rows: below it no computed point can be certified)`);
  }
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 1000, 1);
  // Delta = 2L/(n lambda) + 2 tau/lambda, rounded up.
  const sensitivity = mulUp(2 * (lipschitz / n + tau), 1 / lambda) * (1 + 4 * Number.EPSILON);
  const delta = target.kind === 'target' ? target.delta : options.delta;
  const release = planGaussianRelease(sensitivity, target, delta, d, options.continuousNoise);
  return { loss, lambda, lipschitz, clipNorm, gradTolerance: tau, maxIterations, sensitivity, target, delta, release };
}

/** The release of output perturbation from public values alone (`Learner.plan`): the declared R, no row read. */
export function planOutputPerturbation(shape: { readonly n: number; readonly d: number }, options: OutputPerturbationOptions): DpEvent {
  rejectUnknownOptions(options, OUTPUT_PERTURBATION_OPTIONS, 'trainOutputPerturbation');
  requireOwnMethod(options.method, 'output', 'trainOutputPerturbation');
  const rowNormBound = options.clipNorm === undefined && options.rowNormBound !== undefined ? requirePositive('rowNormBound', options.rowNormBound) : undefined;
  return setUpOutputPerturbation(shape, options, rowNormBound).release.event;
}

/**
 * Output perturbation of the regularised ERM minimiser (Chaudhuri et al. 2011). Randomness: only
 * the output noise.
 */
export function trainOutputPerturbation(data: GlmData, options: OutputPerturbationOptions): TrainResult {
  rejectUnknownOptions(options, OUTPUT_PERTURBATION_OPTIONS, 'trainOutputPerturbation');
  requireOwnMethod(options.method, 'output', 'trainOutputPerturbation');
  const lossData = dataForLoss(lossByName(options.loss ?? 'logistic', options.lossParameters), data);
  const { n, d } = lossData;
  const rng = options.rng ?? defaultRng();
  const rowNormBound = options.clipNorm === undefined ? options.rowNormBound : undefined;
  const glmData = rowNormBound === undefined ? lossData : rowsWithinBound(lossData, rowNormBound);
  const run = setUpOutputPerturbation({ n, d }, options, rowNormBound);
  const { loss, lambda, lipschitz, clipNorm, gradTolerance: tau, maxIterations, sensitivity, target, delta } = run;

  // The SUM objective n F: its gradient is n grad F, so the test ||grad F|| <= tau is ||grad|| <= n tau.
  const objectiveOptions = { regularization: n * lambda, clipNorm };
  const progress = options.onStep === undefined ? undefined : optimizerProgress(n * tau * 0.5, options.onStep);
  // The features in a feature memory: margins and gradient sums by the SIMD kernels, the same numbers.
  const kernelData = withKernelFeatures(glmData);
  const fast = minimizeGlmObjective(loss, kernelData, objectiveOptions, { gradTolerance: n * tau * 0.5, maxIterations, ...(progress === undefined ? {} : { onIteration: progress.onIteration }) });
  const certified = certifiedMinimum(glmObjective(loss, kernelData, objectiveOptions), {
    strongConvexity: n * lambda,
    smoothness: objectiveSmoothness(loss, glmData, n * lambda),
    tolerance: n * tau,
    roundingBound: (theta) => glmGradientRoundingBound(n, d, lipschitz, n * lambda, norm(theta), 0),
    start: fast.theta,
    ...(progress === undefined ? {} : { onProgress: progress.onFallback }),
  });
  const release = releaseWithGaussianNoise(certified.theta, sensitivity, target, delta, rng, options.continuousNoise);
  const model = linearModel(loss, release.theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'output',
    steps: fast.iterations + certified.fallbackIterations,
    noiseMultiplier: release.noiseMultiplier,
    noiseStd: release.noiseStd,
    clipNorm,
    sensitivity,
    lipschitz,
    regularization: lambda,
    gradTolerance: tau,
    optimizer: fast.optimizer,
    certificate: certified.certificate,
  };
  return { model: { ...model, privacy: release.privacy }, privacy: release.privacy, diagnostics };
}

function norm(v: Float64Array): number {
  let s = 0;
  for (let j = 0; j < v.length; j++) s += v[j] * v[j];
  return Math.sqrt(s) * (1 + 4 * Number.EPSILON);
}
