/**
 * Approximate Minima Perturbation with gradient clipping (`003` Alg. 1, Thm. 4.1; Iyengar et al.
 * 2019):
 *
 *   1. l_C: the clipped-gradient loss of `003` App. F.2 (per-example gradients clipped to norm C;
 *      convex, same smoothness beta, Thm. F.2/F.3);
 *   2. b ~ N(0, sigma^2 I_d);
 *   3. L^P(theta) = SUM_i l_C(theta; z_i) + lambda/2 ||theta||^2 + b.theta   (a SUM, as in `003`);
 *   4. theta~ with ||grad L^P(theta~)||_2 <= tau, found by L-BFGS;
 *   output theta~ + N(0, sigma_out^2 I_d).
 *
 * Privacy (`003` Thm. 4.1, Remark 4.2): objective perturbation of the clipped loss (L = C, or the
 * loss's own smaller sup|f'| R; beta = sup f'' R^2) composed with the Gaussian mechanism releasing
 * theta~ - theta^P, whose L2 sensitivity is 2 tau / lambda (lambda-strong convexity); the event
 * is `ampEvent` = compose([objectivePerturbation, gaussian(sigma_out lambda / (2 tau))]),
 * add/remove-one. Conditions (checked, `InvalidParameterError`): GLM loss, ||x_i|| <= R (PUBLIC
 * R, default 1; the data are checked — the proof bounds x^T H^{-1} x by ||x||^2 / lambda, see
 * `objective-perturbation.ts`), lambda > beta.
 *
 * Stopping test, honestly: after L-BFGS returns, the gradient of L^P at the returned point is
 * recomputed and the release goes ahead only if ||grad|| + (a bound on its rounding error) <= tau.
 * If the optimiser stops for any other reason (iteration or evaluation cap, failed line search),
 * Thm. 4.1's sensitivity bound would be void: `NumericalError`, nothing released. (The failure is
 * itself data-dependent; it releases one bit, which the caller learns whatever happens.)
 *
 * Parameters (`003` Sec. 5): tau = 0.01 and sigma_out = 0.15, data-independent. With the SUM
 * objective, tau = 0.01 is a tight but reachable tolerance for L-BFGS in double precision (on
 * Adult, n = 32561, about 3-15 s), and the Gaussian term's noise multiplier is
 * sigma_out lambda / (2 tau) = 7.5 lambda: for L = sqrt(2), beta = 0.5, delta = 1e-5 the selection
 * picks lambda = 27.2 / 2.87 / 0.596 at epsilon 0.1 / 1 / 8 (RDP), where objective perturbation
 * alone would account to 0.098 / 0.975 / 7.88 — the output Gaussian costs about 1.5-2.5 % of the budget
 * (`experiments/adult-amp-check.ts`; the selection accounts for it). C = sqrt(2) (rows normalised
 * to 1 plus a bias column, `003` Sec. 5). lambda and sigma by `selectAmpParameters` (smallest
 * lambda with sigma <= 1.3 sigma_G) unless lambda is given.
 *
 * FREE hyperparameters: the guarantee covers ANY theta~ that passes the gradient test, however it
 * was found (`003` Sec. 5: "any theta~ that satisfies the convergence guarantees with the tolerance
 * parameter tau will have the RDP guarantees of Theorem 4.1"), so the optimiser's settings
 * (`memory`, `maxIterations`, `maxEvaluations`, `initialTheta`, `optimizerTolerance`) cost no
 * privacy. What is NOT free: choosing among several released (noisy) outputs, or changing tau,
 * sigma_out, C, lambda or sigma after looking at the data.
 *
 * Randomness, in this order: d draws for b (fillGaussian(rng, d, sigma)), then d draws for the
 * output noise (fillGaussian(rng, d, sigma_out)). Neither b nor theta~ is returned.
 */
import { ampOutputNoiseMultiplier } from '../accounting/amp-event.js';
import { DEFAULT_AMP_GRAD_TOLERANCE, DEFAULT_AMP_OUTPUT_NOISE_STD } from '../accounting/select-amp-parameters.js';
import { InvalidParameterError, NumericalError } from '../errors.js';
import { lbfgs } from '../math/lbfgs.js';
import { norm2 } from '../math/linear-algebra.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng } from '../random/rng.js';
import { requireInteger, requirePositive } from '../validate.js';
import type { TrainResult } from './dp-gd.js';
import { glmConstants } from './glm/constants.js';
import { checkedRowNormBound, checkTheta, validateGlmData } from './glm/data.js';
import { glmObjective } from './glm/objective.js';
import type { GlmData } from './glm/types.js';
import { dataForLoss, lossByName } from './losses.js';
import { linearModel } from './model.js';
import { objectivePerturbationNoise, objectivePerturbationReport, type ObjectivePerturbationNoiseOptions } from './objective-perturbation.js';
import type { TrainingDiagnostics } from './training.js';

export interface AmpOptions extends ObjectivePerturbationNoiseOptions {
  /** 'logistic' (default), 'squared', 'huber', 'smoothedHinge' (the clipped loss is Lipschitz for each). */
  readonly loss?: string;
  readonly lossParameters?: Record<string, number>;
  /** C: per-example gradient clipping norm (default sqrt(2), `003` Sec. 5). */
  readonly clipNorm?: number;
  /** tau: the released theta~ has ||grad L^P|| <= tau, L^P the SUM objective (default 0.01, `003` Sec. 5). */
  readonly gradTolerance?: number;
  /** sigma_out: output noise std (default 0.15, `003` Sec. 5). */
  readonly outputNoiseStd?: number;
  // Optimiser settings: free (no privacy cost, see the module comment).
  /** L-BFGS memory (default 10). */
  readonly memory?: number;
  /** L-BFGS step cap (default 5000); hitting it releases nothing. */
  readonly maxIterations?: number;
  /** L-BFGS objective-call cap (default 20 maxIterations + 20). */
  readonly maxEvaluations?: number;
  /** Starting point (default 0). */
  readonly initialTheta?: Float64Array;
  /** The tolerance L-BFGS aims at, <= tau (default tau / 2, leaving room for the rounding check). */
  readonly optimizerTolerance?: number;
  readonly featureNames?: readonly string[];
}

/** `003` Sec. 5's clipping norm: rows of norm 1 plus a bias column of 1. */
export const DEFAULT_AMP_CLIP_NORM = Math.SQRT2;

/**
 * A bound on the rounding error of the computed gradient norm of the SUM objective:
 * each coordinate is a sum of n + 2 terms, so the error of the vector is at most about
 * (n + d + 2) u (SUM_i |f_C'(z_i)| ||x_i|| + lambda ||theta|| + ||b||) with u = 2^-53, and
 * SUM_i |f_C'| ||x_i|| <= n C. A factor 4 covers the rounding of f_C' itself and of the norm.
 */
export function gradientRoundingBound(n: number, d: number, clipNorm: number, regularization: number, theta: Float64Array, b: Float64Array): number {
  return 4 * (n + d + 2) * Number.EPSILON * (n * clipNorm + regularization * norm2(theta) + norm2(b));
}

/**
 * `003` Alg. 1 (see the module comment).
 *
 * @example
 * const {model, privacy} = trainAmp(data, {epsilon: 1, delta: 1e-5, rowNormBound: Math.SQRT2});
 */
export function trainAmp(data: GlmData, options: AmpOptions): TrainResult {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const glmData = dataForLoss(loss, data);
  validateGlmData(loss, glmData);
  const { n, d } = glmData;
  const rowNormBound = checkedRowNormBound(glmData, options.rowNormBound ?? 1);
  const clipNorm = requirePositive('clipNorm', options.clipNorm ?? DEFAULT_AMP_CLIP_NORM);
  const tau = requirePositive('gradTolerance', options.gradTolerance ?? DEFAULT_AMP_GRAD_TOLERANCE);
  const outputNoiseStd = requirePositive('outputNoiseStd', options.outputNoiseStd ?? DEFAULT_AMP_OUTPUT_NOISE_STD);
  const optimizerTolerance = requirePositive('optimizerTolerance', options.optimizerTolerance ?? tau / 2);
  if (!(optimizerTolerance <= tau)) throw new InvalidParameterError('optimizerTolerance', optimizerTolerance, `<= gradTolerance (${tau})`);
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 5000, 1);
  const memory = requireInteger('memory', options.memory ?? 10, 1);
  const maxEvaluations = options.maxEvaluations === undefined ? undefined : requireInteger('maxEvaluations', options.maxEvaluations, 1);
  const start = options.initialTheta === undefined ? new Float64Array(d) : Float64Array.from(options.initialTheta);
  checkTheta(start, d, 'initialTheta');

  // Constants of the clipped loss l_C: L = min(C, sup|f'| R) (clipping only lowers gradient norms), beta = sup f'' R^2 (Thm. F.3).
  const own = glmConstants(loss, { rowNormBound });
  const constants = { lipschitz: Math.min(clipNorm, own.lipschitz), smoothness: own.smoothness };
  const output = { gradTolerance: tau, outputNoiseStd };
  const noise = objectivePerturbationNoise(constants, options, output);
  const lambda = noise.regularization;
  const rng = options.rng ?? defaultRng();

  const b = fillGaussian(rng, new Float64Array(d), noise.noiseStd);
  const objective = glmObjective(loss, glmData, { regularization: lambda, linear: b, clipNorm });
  const result = lbfgs(objective, start, { gradTolerance: optimizerTolerance, maxIterations, maxEvaluations, memory });
  const gradient = new Float64Array(d);
  objective(result.x, gradient);
  const gradNorm = norm2(gradient);
  const bound = gradNorm + gradientRoundingBound(n, d, clipNorm, lambda, result.x, b);
  if (!result.converged || !(bound <= tau)) {
    throw new NumericalError(
      `AMP: L-BFGS stopped (${result.reason}) at ||grad|| = ${gradNorm} (with its rounding bound ${bound}) against tau = ${tau}; ` +
        '003 Thm. 4.1 needs ||grad|| <= tau at the released point, so its guarantee would be void and nothing is released ' +
        '(raise maxIterations or maxEvaluations: the optimiser settings cost no privacy)',
    );
  }
  const theta = result.x;
  const outputNoise = fillGaussian(rng, new Float64Array(d), outputNoiseStd);
  for (let j = 0; j < d; j++) theta[j] += outputNoise[j];

  const privacy = objectivePerturbationReport(noise.event, noise.delta, rng);
  const model = linearModel(loss, theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'amp',
    steps: 1,
    noiseMultiplier: noise.noiseStd / constants.lipschitz,
    noiseStd: noise.noiseStd,
    clipNorm,
    regularization: lambda,
    lipschitz: constants.lipschitz,
    smoothness: constants.smoothness,
    rowNormBound,
    gradTolerance: tau,
    outputNoiseStd,
    outputNoiseMultiplier: ampOutputNoiseMultiplier({ regularization: lambda, gradTolerance: tau, outputNoiseStd }),
    accountant: options.accountant ?? 'rdp',
    ...(noise.selection === undefined ? {} : { gaussianNoiseStd: noise.selection.gaussianNoiseStd, noiseFactor: noise.selection.noiseFactor }),
  };
  return { model: { ...model, privacy }, privacy, diagnostics };
}
