/**
 * Output perturbation (Chaudhuri, Monteleoni & Sarwate 2011, "Differentially private empirical
 * risk minimization", Alg. 1 and Cor. 8; `004` Sec. 3.2.2): minimise the lambda-regularised
 * AVERAGE loss
 *
 *   F(theta) = (1/n) sum_i l(theta; x_i, y_i) + lambda/2 ||theta||^2
 *
 * and release theta + N(0, sigma^2 I).
 *
 * Sensitivity (replace-one, n public). F is lambda-strongly convex; if every per-example gradient
 * has norm <= L, the exact minimisers on neighbouring data sets are within 2L / (n lambda)
 * (Chaudhuri et al. 2011, Cor. 8). The minimiser is computed numerically, so we do not pretend
 * it is exact: the optimiser must reach ||grad F(theta~)|| <= tau (checked by recomputing the
 * gradient at the released point), and lambda-strong convexity gives ||theta~ - theta*|| <= tau / lambda
 * on each data set, so the L2 sensitivity of theta~ is at most
 *
 *   Delta = 2L / (n lambda) + 2 tau / lambda,
 *
 * the quantity the Gaussian noise is scaled to (sigma = z Delta; event gaussian(z)). If the
 * optimiser stops before the gradient test passes, nothing is released (NumericalError).
 *
 * L is the clipping norm C when one is given (the loss is then the clipped-gradient loss of `003`
 * App. F.2, convex and C-Lipschitz, so this works for the squared loss too), else the loss's own
 * Lipschitz bound for rows with ||x|| <= rowNormBound (a PUBLIC bound; rows are checked against it).
 */
import { gaussianEvent } from '../accounting/events.js';
import { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } from '../accounting/gaussian-composition.js';
import { InvalidParameterError, NumericalError } from '../errors.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { requireInteger, requireOpenUnit, requirePositive, requirePositiveOrInfinity } from '../validate.js';
import { nonPrivateReport, type TrainResult } from './dp-gd.js';
import { glmConstants, mulUp } from './glm/constants.js';
import { checkedRowNormBound } from './glm/data.js';
import { minimizeGlmObjective } from './glm/minimize.js';
import type { GlmData, GlmLoss } from './glm/types.js';
import { dataForLoss, lossByName } from './losses.js';
import { linearModel } from './model.js';
import { privacyReport, type PrivacyReport } from './privacy-report.js';
import { noiseTarget, type NoiseOptions, type NoiseTarget, type TrainingDiagnostics } from './training.js';

/** Options shared by both output-perturbation learners. */
export interface OutputPerturbationCommonOptions extends NoiseOptions {
  readonly loss?: string;
  readonly lossParameters?: Record<string, number>;
  /** lambda > 0: strength of the L2 regulariser of the AVERAGE loss (the strong convexity the bound needs). */
  readonly regularization: number;
  /** C: use the clipped-gradient loss (`003` App. F.2), so L = C. Give this or rowNormBound. */
  readonly clipNorm?: number;
  /** R: a PUBLIC bound on every row norm; L is the loss's Lipschitz bound for it (rows are checked). */
  readonly rowNormBound?: number;
  readonly featureNames?: readonly string[];
}

export interface OutputPerturbationOptions extends OutputPerturbationCommonOptions {
  /**
   * tau: the released minimiser must satisfy ||grad F|| <= tau (F the average objective); it
   * adds 2 tau / lambda to the sensitivity. Default 1e-6 L / n (a millionth of the exact term's
   * share per example).
   */
  readonly gradTolerance?: number;
  /** Optimiser step cap (default 1000); hitting it releases nothing. */
  readonly maxIterations?: number;
}

/**
 * The loss's Lipschitz constant L (the per-example gradient-norm bound) and the clipping norm to
 * use: C when a clipping norm is given, else the loss's own bound for rows with ||x|| <= R, R the
 * public bound ALREADY CHECKED against the data (`checkedRowNormBound`).
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

/**
 * Adds N(0, (z Delta)^2 I) to theta, with z calibrated exactly for the target (the analytic
 * Gaussian mechanism, Balle & Wang 2018) or given; the report's event is gaussian(z), replace-one.
 */
export function releaseWithGaussianNoise(theta: Float64Array, sensitivity: number, target: NoiseTarget, delta: number, rng: Rng): NoisyRelease {
  const noiseMultiplier = target.kind === 'target'
    ? exactGaussianCompositionNoiseMultiplier(target.epsilon, target.delta)
    : target.noiseMultiplier;
  if (noiseMultiplier === 0) return { theta, noiseMultiplier, noiseStd: 0, privacy: nonPrivateReport(rng.description) };
  const noiseStd = mulUp(noiseMultiplier, sensitivity);
  const noise = new Float64Array(theta.length);
  fillGaussian(rng, noise, noiseStd);
  const out = new Float64Array(theta.length);
  for (let j = 0; j < theta.length; j++) out[j] = theta[j] + noise[j];
  const privacy = privacyReport(gaussianEvent(noiseMultiplier), requireOpenUnit('delta', delta), { relation: 'replaceOne', rng, pld: gaussianCompositionEpsilon });
  return { theta: out, noiseMultiplier, noiseStd, privacy };
}

/**
 * Output perturbation of the regularised ERM minimiser (Chaudhuri et al. 2011). Randomness: only
 * the output noise (d Gaussians from `rng`).
 */
export function trainOutputPerturbation(data: GlmData, options: OutputPerturbationOptions): TrainResult {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  const { n } = glmData;
  const lambda = requirePositive('regularization', options.regularization);
  if (lambda === Infinity) throw new InvalidParameterError('regularization', lambda, 'finite');
  const target = noiseTarget(options);
  const rng = options.rng ?? defaultRng();
  const rowNormBound = options.clipNorm === undefined && options.rowNormBound !== undefined ? checkedRowNormBound(glmData, options.rowNormBound) : undefined;
  const { lipschitz, clipNorm } = outputPerturbationLipschitz(loss, options.clipNorm, rowNormBound);
  const tau = options.gradTolerance === undefined ? (1e-6 * lipschitz) / n : requirePositiveOrInfinity('gradTolerance', options.gradTolerance);
  if (!Number.isFinite(tau)) throw new InvalidParameterError('gradTolerance', tau, 'finite');
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 1000, 1);

  // The SUM objective n F: its gradient is n grad F, so the test ||grad F|| <= tau is ||grad|| <= n tau.
  const result = minimizeGlmObjective(loss, glmData, { regularization: n * lambda, clipNorm }, { gradTolerance: n * tau * (1 - 1e-12), maxIterations });
  const gradNorm = result.gradNorm / n;
  if (!result.met || !(gradNorm <= tau)) {
    throw new NumericalError(
      `output perturbation: the optimiser stopped (${result.reason}) with ||grad F|| = ${gradNorm} > gradTolerance ${tau}; ` +
        'the sensitivity bound needs the tolerance to be met, so nothing is released (raise maxIterations or gradTolerance)',
    );
  }
  // Delta = 2L/(n lambda) + 2 tau/lambda, rounded up.
  const sensitivity = mulUp(2 * (lipschitz / n + tau), 1 / lambda) * (1 + 4 * Number.EPSILON);
  const delta = target.kind === 'target' ? target.delta : options.delta;
  const release = releaseWithGaussianNoise(result.theta, sensitivity, target, delta, rng);
  const model = linearModel(loss, release.theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'output',
    steps: result.iterations,
    noiseMultiplier: release.noiseMultiplier,
    noiseStd: release.noiseStd,
    clipNorm,
    sensitivity,
    lipschitz,
    regularization: lambda,
    gradTolerance: tau,
    optimizer: result.optimizer,
  };
  return { model: { ...model, privacy: release.privacy }, privacy: release.privacy, diagnostics };
}
