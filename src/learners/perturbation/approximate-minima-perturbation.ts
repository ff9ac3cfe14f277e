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
 * Stopping test, honestly and without a failure path: after L-BFGS returns, the gradient of L^P
 * at the returned point is recomputed and accepted if ||grad|| + (a rigorous bound on its
 * rounding error) <= tau; otherwise Nesterov's accelerated method runs for a number of steps that
 * provably reaches tau (`glm/certified-minimum.ts`). No outcome depends on the data in a way the
 * guarantee does not cover: an optimiser cap never makes AMP release nothing.
 *
 * Floating-point-safe noise. b is exact discrete Gaussian noise on a grid far below tau
 * (`objectiveNoiseGrid`: the coupling with the ideal continuous b costs g_b 320 sqrt(d) of the
 * tolerance, so the optimiser aims at tau minus that), and the output noise is exact discrete
 * Gaussian noise on the grid of `mechanisms/grid-noise.ts` (the rounding paid in the sensitivity
 * 2 tau / lambda). The event records both grids' noise (`discrete`, `gridNoiseStd`).
 *
 * Parameters (`003` Sec. 5): tau = 0.01 and sigma_out = 0.15, data-independent. With the SUM
 * objective, tau = 0.01 is a tight but reachable tolerance for L-BFGS in double precision (on
 * Adult, n = 32561: about 45 L-BFGS steps with `DEFAULT_AMP_MEMORY` pairs, 0.4-0.6 s), and the Gaussian term's noise multiplier is
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
 * Randomness, in this order: d draws for b, then d draws for the output noise. Neither b nor
 * theta~ (nor any number computed from them) is returned or reported.
 */
import { ampOutputNoiseMultiplier } from '../../accounting/events/approximate-minima-perturbation.js';
import { composeEvent } from '../../accounting/events/constructors.js';
import { DEFAULT_AMP_GRAD_TOLERANCE, DEFAULT_AMP_OUTPUT_NOISE_STD } from '../../accounting/calibration/approximate-minima-perturbation-parameters.js';
import { InvalidParameterError } from '../../errors.js';
import { lbfgs } from '../../math/lbfgs.js';
import { norm2 } from '../../math/linear-algebra.js';
import { addGaussianGridNoise, planGaussianGrid, type GaussianGridPlan } from '../../mechanisms/grid-noise.js';
import { fillGaussian } from '../../random/continuous.js';
import { defaultRng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requirePositive } from '../../validate.js';
import { certifiedMinimum, objectiveSmoothness } from '../glm/certified-minimum.js';
import { glmConstants } from '../glm/constants.js';
import { checkTheta, rowsWithinBound, validateGlmData } from '../glm/data.js';
import { glmGradientRoundingBound, glmObjective, withKernelFeatures } from '../glm/objective.js';
import type { GlmConstants, GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName, type LossParameters } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import {
  griddedObjectivePerturbationEvent,
  objectiveNoiseGrid,
  objectivePerturbationNoise,
  objectivePerturbationReport,
  type ObjectiveNoiseGrid,
  type ObjectivePerturbationNoise,
  type ObjectivePerturbationNoiseOptions,
} from './objective-perturbation.js';
import type { DpEvent } from '../../accounting/events/types.js';
import { optimizerProgress } from '../glm/optimizer-progress.js';
import { requireOwnMethod, type TrainingDiagnostics } from '../training.js';
import type { TrainResult } from '../training.js';

export interface AmpOptions extends ObjectivePerturbationNoiseOptions {
  /** `train()`'s name of this learner: only 'amp' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'amp';
  /** 'logistic' (default), 'squared', 'huber', 'smoothedHinge' (the clipped loss is Lipschitz for each). */
  readonly loss?: string;
  readonly lossParameters?: LossParameters;
  /** C: per-example gradient clipping norm (default sqrt(2), `003` Sec. 5). */
  readonly clipNorm?: number;
  /** tau: the released theta~ has ||grad L^P|| <= tau, L^P the SUM objective (default 0.01, `003` Sec. 5). */
  readonly gradTolerance?: number;
  /** sigma_out: output noise std (default 0.15, `003` Sec. 5). */
  readonly outputNoiseStd?: number;
  // Optimiser settings: free (no privacy cost, see the module comment).
  /** L-BFGS memory: correction pairs kept (default `DEFAULT_AMP_MEMORY`, 50). */
  readonly memory?: number;
  /** L-BFGS step cap (default 5000); beyond it the certified fallback takes over (nothing fails). */
  readonly maxIterations?: number;
  /** L-BFGS objective-call cap (default 20 maxIterations + 20). */
  readonly maxEvaluations?: number;
  /** Starting point (default 0). */
  readonly initialTheta?: Float64Array;
  /** The tolerance L-BFGS aims at, <= tau (default tau / 2, leaving room for the rounding check). */
  readonly optimizerTolerance?: number;
  readonly featureNames?: readonly string[];
  /** Progress of the minimisation for a bar (`glm/optimizer-progress.ts`): (done, total) units, done < total. */
  readonly onStep?: (step: number, steps: number) => void;
}

/**
 * L-BFGS's memory for AMP (correction pairs kept). AMP's stopping test is tight (||grad L^P|| <=
 * tau on the SUM objective, n times tighter than on the mean), and one-hot features make the
 * objective ill-conditioned: with `lbfgs`'s usual 10 pairs L-BFGS forgets the curvature it has
 * learnt. On UCI Adult (32561 x 146, epsilon 1, seeds 1/2/3, each seed's b in every run) it reaches the test in
 * 114/88/123 iterations (129/112/139 evaluations; scipy's L-BFGS-B with 10 pairs: 110/125/118
 * evaluations) with 10 pairs, 55/54/53 with 30, 45/43/42 (47/45/44 evaluations) with 50, and no
 * fewer with 80. Each pair costs 2d doubles (50 pairs: 800 d bytes, 80 MB at d = 1e5: set `memory`
 * lower for very wide data) and 4d flops a step, small beside an evaluation's 4nd flops. A free setting: the guarantee pays only for the stopping test, which stays as it is
 * (`certifiedMinimum` on the same objective after L-BFGS; `003` Sec. 5: "the privacy guarantees are
 * independent of the choice of optimizer"), so any optimiser path that stops there keeps it. The
 * path, and so the released model, differs from that of 10 pairs; a seed still fixes it.
 */
export const DEFAULT_AMP_MEMORY = 50;

/** `003` Sec. 5's clipping norm: rows of norm 1 plus a bias column of 1. */
export const DEFAULT_AMP_CLIP_NORM = Math.SQRT2;

/**
 * The smallest tau AMP accepts: 16 times the floating-point floor of its gradient test
 * (`glmGradientRoundingBound`) at n = 2^32, the most rows dpfit can index. n is private under
 * add/remove-one, so this public bound replaces n; it keeps the certified fallback's rounding far
 * below tau whatever the dataset (about 9.5e-4 C, so the default 0.01 passes for C <= 10).
 */
export function ampToleranceFloor(d: number, clipNorm: number): number {
  return 16 * glmGradientRoundingBound(2 ** 32, d, clipNorm, 0, 0, 0);
}

export const AMP_OPTIONS = optionNames<AmpOptions>({ method: true, loss: true, lossParameters: true, clipNorm: true, gradTolerance: true, outputNoiseStd: true, memory: true, maxIterations: true, maxEvaluations: true, initialTheta: true, optimizerTolerance: true, featureNames: true, onStep: true, epsilon: true, delta: true, noiseStd: true, regularization: true, noiseFactor: true, accountant: true, rowNormBound: true, rng: true, continuousNoise: true });

/** AMP's constants, noise, grids and event: everything `003` Alg. 1 decides before it reads a row (`setUpAmp`). */
export interface AmpRun {
  readonly loss: GlmLoss;
  /** L = min(C, sup|f'| R) and beta = sup f'' R^2 of the clipped loss (`003` Thm. F.3). */
  readonly constants: GlmConstants;
  readonly clipNorm: number;
  readonly gradTolerance: number;
  readonly outputNoiseStd: number;
  readonly optimizerTolerance: number;
  readonly maxIterations: number;
  readonly memory: number;
  readonly maxEvaluations: number | undefined;
  readonly start: Float64Array;
  readonly noise: ObjectivePerturbationNoise;
  /** b's grid (`objectiveNoiseGrid`). */
  readonly grid: ObjectiveNoiseGrid;
  /** sigma_out lambda / (2 tau): the output Gaussian's noise multiplier. */
  readonly outputMultiplier: number;
  /** The output noise's grid (absent with continuous noise). */
  readonly outputPlan: GaussianGridPlan | undefined;
  /** The release: compose([objective perturbation on b's grid, the gridded output Gaussian]) (`ampEvent`); the continuous mechanism's event with `continuousNoise`. */
  readonly event: DpEvent;
}

/**
 * Everything AMP decides from public values, before any row is read: the options checked, lambda
 * and sigma (`003` Sec. 5), both grids and the event (`003` Thm. 4.1, Remark 4.2). `rowNormBound`
 * is R, the public bound (checked against the rows by `trainAmp`, by nobody when a budget plans the
 * run). n is not used: it is private.
 */
export function setUpAmp(d: number, options: AmpOptions, rowNormBound: number): AmpRun {
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const clipNorm = requirePositive('clipNorm', options.clipNorm ?? DEFAULT_AMP_CLIP_NORM);
  const tau = requirePositive('gradTolerance', options.gradTolerance ?? DEFAULT_AMP_GRAD_TOLERANCE);
  const floor = ampToleranceFloor(d, clipNorm);
  if (!(tau >= floor)) {
    throw new InvalidParameterError('gradTolerance', tau, `>= ${floor} (16 times the floating-point floor of the gradient test for up to 2^32 rows: n is private, so the floor is taken at the largest n dpfit can index)`);
  }
  const outputNoiseStd = requirePositive('outputNoiseStd', options.outputNoiseStd ?? DEFAULT_AMP_OUTPUT_NOISE_STD);
  const optimizerTolerance = requirePositive('optimizerTolerance', options.optimizerTolerance ?? tau / 2);
  if (!(optimizerTolerance <= tau)) throw new InvalidParameterError('optimizerTolerance', optimizerTolerance, `<= gradTolerance (${tau})`);
  const maxIterations = requireInteger('maxIterations', options.maxIterations ?? 5000, 1);
  const memory = requireInteger('memory', options.memory ?? DEFAULT_AMP_MEMORY, 1);
  const maxEvaluations = options.maxEvaluations === undefined ? undefined : requireInteger('maxEvaluations', options.maxEvaluations, 1);
  const start = options.initialTheta === undefined ? new Float64Array(d) : Float64Array.from(options.initialTheta);
  checkTheta(start, d, 'initialTheta');

  // Constants of the clipped loss l_C: L = min(C, sup|f'| R) (clipping only lowers gradient norms), beta = sup f'' R^2 (Thm. F.3).
  const own = glmConstants(loss, { rowNormBound });
  const constants = { lipschitz: Math.min(clipNorm, own.lipschitz), smoothness: own.smoothness };
  const noise = objectivePerturbationNoise(constants, options, { gradTolerance: tau, outputNoiseStd });
  const lambda = noise.regularization;
  const grid = objectiveNoiseGrid(noise.noiseStd, d, tau);
  const outputMultiplier = ampOutputNoiseMultiplier({ regularization: lambda, gradTolerance: tau, outputNoiseStd });
  // theta~ has L2 sensitivity 2 tau / lambda around theta^P (003 Remark 4.2); noise multiplier sigma_out lambda / (2 tau).
  const outputPlan = options.continuousNoise ? undefined : planGaussianGrid({ sensitivity: (2 * tau) / lambda, noiseMultiplier: outputMultiplier, dimension: d });
  const event = outputPlan === undefined ? noise.event : composeEvent([griddedObjectivePerturbationEvent(grid, constants, lambda), outputPlan.event]);
  return { loss, constants, clipNorm, gradTolerance: tau, outputNoiseStd, optimizerTolerance, maxIterations, memory, maxEvaluations, start, noise, grid, outputMultiplier, outputPlan, event };
}

/** AMP's release from public values alone (`Learner.plan`): `setUpAmp` with the declared R (default 1), no row read. */
export function planAmp(d: number, options: AmpOptions): DpEvent {
  rejectUnknownOptions(options, AMP_OPTIONS, 'trainAmp');
  requireOwnMethod(options.method, 'amp', 'trainAmp');
  return setUpAmp(d, options, requirePositive('rowNormBound', options.rowNormBound ?? 1)).event;
}

/**
 * `003` Alg. 1 (see the module comment).
 *
 * @example
 * const {model, privacy} = trainAmp(data, {epsilon: 1, delta: 1e-5, rowNormBound: Math.SQRT2});
 */
export function trainAmp(data: GlmData, options: AmpOptions): TrainResult {
  rejectUnknownOptions(options, AMP_OPTIONS, 'trainAmp');
  requireOwnMethod(options.method, 'amp', 'trainAmp');
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const lossData = dataForLoss(loss, data);
  validateGlmData(loss, lossData);
  const { n, d } = lossData;
  const rowNormBound = options.rowNormBound ?? 1;
  const glmData = rowsWithinBound(lossData, rowNormBound);
  const run = setUpAmp(d, options, rowNormBound);
  const { constants, clipNorm, gradTolerance: tau, outputNoiseStd, optimizerTolerance, maxIterations, memory, maxEvaluations, start, noise, grid, outputMultiplier, outputPlan, event } = run;
  const lambda = noise.regularization;
  const rng = options.rng ?? defaultRng();

  const b = options.continuousNoise ? fillGaussian(rng, new Float64Array(d), noise.noiseStd) : grid.draw(rng);
  // The optimiser aims below tau by the coupling's gap between b~ and the ideal continuous b.
  const target = options.continuousNoise ? tau : tau - grid.toleranceCost;
  // The features in a feature memory: margins and gradient sums by the SIMD kernels, the same numbers.
  const objective = glmObjective(loss, withKernelFeatures(glmData), { regularization: lambda, linear: b, clipNorm });
  const progress = options.onStep === undefined ? undefined : optimizerProgress(Math.min(optimizerTolerance, target / 2), options.onStep);
  const fast = lbfgs(objective, start, { gradTolerance: Math.min(optimizerTolerance, target / 2), maxIterations, maxEvaluations, memory, ...(progress === undefined ? {} : { onIteration: progress.onIteration }) });
  const bNorm = norm2(b) * (1 + 4 * Number.EPSILON);
  const certified = certifiedMinimum(objective, {
    strongConvexity: lambda,
    smoothness: objectiveSmoothness(loss, glmData, lambda),
    tolerance: target,
    roundingBound: (point) => glmGradientRoundingBound(n, d, constants.lipschitz, lambda, norm2(point) * (1 + 4 * Number.EPSILON), bNorm),
    start: fast.x,
    ...(progress === undefined ? {} : { onProgress: progress.onFallback }),
  });
  const theta = certified.theta;
  let granularities: Record<string, number> | undefined;
  let granularity: number | undefined;
  if (outputPlan === undefined) {
    const outputNoise = fillGaussian(rng, new Float64Array(d), outputNoiseStd);
    for (let j = 0; j < d; j++) theta[j] += outputNoise[j];
  } else {
    addGaussianGridNoise(theta, outputPlan, rng);
    granularity = outputPlan.granularity;
    granularities = { objective: grid.granularity, output: outputPlan.granularity };
  }

  const privacy = objectivePerturbationReport(event, noise.delta, rng, {
    ...(granularity === undefined ? {} : { granularity }),
    ...(granularities === undefined ? {} : { granularities }),
  });
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
    outputNoiseMultiplier: outputMultiplier,
    iterations: fast.iterations + certified.fallbackIterations,
    certificate: certified.certificate,
    accountant: options.accountant ?? 'rdp',
    ...(noise.selection === undefined ? {} : { gaussianNoiseStd: noise.selection.gaussianNoiseStd, noiseFactor: noise.selection.noiseFactor }),
  };
  return { model: { ...model, privacy }, privacy, diagnostics };
}
