/**
 * Output perturbation of SGD on a smooth, strongly convex objective (`004` Sec. 3.2.2, after Wu
 * et al. 2017, "Bolt-on differential privacy"): run plain mini-batch SGD (no noise) on
 *
 *   F(theta) = (1/n) sum_i [ l(theta; x_i, y_i) + mu/2 ||theta||^2 ],
 *
 * then release theta_T + N(0, sigma^2 I) with sigma scaled to the L2 sensitivity of theta_T.
 *
 * The sensitivity, by the contraction argument of `004` Fig. 3 (replace-one, n public). Each
 * epoch draws a fresh data-independent permutation and processes m = floor(n / b) batches of b
 * consecutive records (the n - m b records left over sit out that epoch). A step is the gradient
 * step G_B(u) = u - gamma grad F_B(u) of F_B = average over the batch of l_i + mu/2 ||.||^2, which
 * is beta'-smooth (beta' = beta + mu, beta the loss's smoothness for the row bound) and
 * mu-strongly convex; for gamma <= 2 / (beta' + mu), G_B is rho-Lipschitz with
 *
 *   rho = 1 - gamma beta' mu / (beta' + mu)    (Hardt, Recht & Singer 2016, Lemma 3.7.3).
 *
 * On neighbouring data sets the two runs use the same permutations; a batch without the differing
 * record applies the same map to both iterates (their distance shrinks by rho), a batch with it
 * moves them apart by at most 2 gamma L / b more (the two per-example gradients have norm <= L).
 * The record is in at most one batch per epoch, and at least (k - 1 - j) m steps follow its use
 * in epoch j, so after k epochs
 *
 *   ||theta_T - theta'_T|| <= (2 gamma L / b) sum_{j=0}^{k-1} rho^{j m}
 *                          = (2 gamma L / b) (1 - rho^{k m}) / (1 - rho^m)
 *
 * whatever the permutations (the worst position is the last batch of each epoch; Wu et al.'s
 * averaging over random positions is tighter but not needed). The regulariser is the same
 * function on both data sets, so only the loss part's Lipschitz constant L enters; with a
 * clipping norm C the loss is the clipped-gradient loss of `003` App. F.2 (convex, same beta,
 * L = C).
 */
import { InvalidParameterError } from '../../errors.js';
import { randomPermutation } from '../../random/discrete.js';
import { defaultRng } from '../../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requirePositive } from '../../validate.js';
import type { TrainResult } from '../training.js';
import { glmConstants, mulUp } from '../glm/constants.js';
import { rowsWithinBound } from '../glm/data.js';
import { clippedSumRoundingBound, sumClippedGradients } from '../glm/per-example.js';
import type { GlmData, GlmLoss } from '../glm/types.js';
import { dataForLoss, lossByName } from '../glm/losses/by-name.js';
import { linearModel } from '../models/model.js';
import { outputPerturbationLipschitz, planGaussianRelease, releaseWithGaussianNoise, type GaussianRelease, type OutputPerturbationCommonOptions } from './output-perturbation.js';
import { noiseTarget, requireOwnMethod, type NoiseTarget, type TrainingDiagnostics } from '../training.js';
import type { DpEvent } from '../../accounting/events/types.js';

export interface OutputPerturbationSgdOptions extends OutputPerturbationCommonOptions {
  /** `train()`'s name of this learner: only 'outputSgd' (so that train()'s options for it pass here unchanged). */
  readonly method?: 'outputSgd';
  /** k: number of passes (epochs). */
  readonly epochs: number;
  /** b: batch size (records per step); m = floor(n / b) steps per epoch. Default 1. */
  readonly batchSize?: number;
  /** gamma: constant step size, at most 2 / (beta' + mu) with beta' = beta + mu (checked; default 1 / beta'). */
  readonly learningRate?: number;
  /** A PUBLIC row-norm bound R for the smoothness beta (required with clipNorm too: beta depends on R). */
  readonly rowNormBound?: number;
  readonly onStep?: (step: number, steps: number) => void;
}

/** The contraction bound's sensitivity (2 gamma L / b)(1 - rho^{k m}) / (1 - rho^m), rounded up. */
export function sgdOutputSensitivity(params: { lipschitz: number; learningRate: number; batchSize: number; rho: number; stepsPerEpoch: number; epochs: number }): number {
  const { lipschitz, learningRate, batchSize, rho, stepsPerEpoch, epochs } = params;
  const rhoM = rho ** stepsPerEpoch;
  // (1 - rho^{km}) / (1 - rho^m) = sum_{j<k} rho^{jm}, summed directly when rho^m is close to 1.
  const geometric = rhoM > 0.5 ? sumPowers(rhoM, epochs) : (1 - rhoM ** epochs) / (1 - rhoM);
  return mulUp(mulUp(2 * learningRate, lipschitz) / batchSize, geometric) * (1 + 16 * Number.EPSILON);
}

function sumPowers(r: number, k: number): number {
  let total = 0;
  let p = 1;
  for (let j = 0; j < k; j++) {
    total += p;
    p *= r;
  }
  return total;
}

/**
 * A public bound on how far floating-point evaluation can move the iterate difference beyond the
 * contraction bound: two runs each make an error of at most E per step (the batch sum's,
 * `clippedSumRoundingBound`, scaled by gamma / b, plus <= 4 roundings per coordinate of
 * theta - gamma (g / b + mu theta), with ||theta|| <= L / mu since theta_{t+1} = (1 - gamma mu)
 * theta_t - gamma g / b starts at 0), and an error added at step t is contracted by rho at every
 * later step: the difference grows by at most 2 E sum_t rho^t <= 2 E min(T, 1 / (1 - rho)).
 */
export function sgdOutputRoundingSlack(params: { lipschitz: number; learningRate: number; batchSize: number; rho: number; steps: number; regularization: number; d: number }): number {
  const { lipschitz, learningRate, batchSize, rho, steps, regularization, d } = params;
  const u = Number.EPSILON / 2;
  const thetaBound = lipschitz / regularization;
  const perStep =
    (learningRate * clippedSumRoundingBound(batchSize, lipschitz, d)) / batchSize +
    4 * u * (thetaBound * (1 + learningRate * regularization) + learningRate * lipschitz);
  const horizon = rho < 1 ? Math.min(steps, 1 / (1 - rho)) : steps;
  return 2 * perStep * horizon * (1 + 1e-9);
}

export const OUTPUT_PERTURBATION_SGD_OPTIONS = optionNames<OutputPerturbationSgdOptions>({ method: true, epochs: true, batchSize: true, learningRate: true, rowNormBound: true, onStep: true, loss: true, lossParameters: true, regularization: true, clipNorm: true, featureNames: true, epsilon: true, delta: true, noiseMultiplier: true, rng: true, continuousNoise: true });

/** What output perturbation of SGD decides before it reads a row (`setUpOutputPerturbationSgd`). */
export interface OutputPerturbationSgdRun {
  readonly loss: GlmLoss;
  readonly mu: number;
  readonly epochs: number;
  readonly batchSize: number;
  readonly lipschitz: number;
  readonly clipNorm: number;
  readonly learningRate: number;
  /** The contraction factor rho, rounded up. */
  readonly rho: number;
  readonly stepsPerEpoch: number;
  /** The contraction bound's sensitivity plus the rounding slack. */
  readonly sensitivity: number;
  readonly target: NoiseTarget;
  readonly delta: number;
  readonly release: GaussianRelease;
}

/**
 * The options checked, the sensitivity (`004` Fig. 3's contraction bound) and the noise, from the
 * public n (replace-one), d and R (checked against the rows by the caller that has them).
 */
export function setUpOutputPerturbationSgd(shape: { readonly n: number; readonly d: number }, options: OutputPerturbationSgdOptions, rowNormBound: number): OutputPerturbationSgdRun {
  const { n, d } = shape;
  const loss = lossByName(options.loss ?? 'logistic', options.lossParameters);
  const mu = requirePositive('regularization', options.regularization);
  if (mu === Infinity) throw new InvalidParameterError('regularization', mu, 'finite');
  const epochs = requireInteger('epochs', options.epochs, 1);
  const batchSize = requireInteger('batchSize', options.batchSize ?? 1, 1);
  if (batchSize > n) throw new InvalidParameterError('batchSize', batchSize, `<= the number of rows (${n})`);
  const target = noiseTarget(options);
  const { lipschitz, clipNorm } = outputPerturbationLipschitz(loss, options.clipNorm, rowNormBound);
  const beta = glmConstants(loss, { rowNormBound }).smoothness + mu; // beta' = beta + mu (beta is rounded up)
  const maxRate = 2 / (beta + mu);
  const learningRate = options.learningRate ?? 1 / beta;
  requirePositive('learningRate', learningRate);
  if (!(learningRate <= maxRate * (1 - 1e-12))) {
    throw new InvalidParameterError('learningRate', learningRate, `<= 2 / (beta + 2 mu) = ${maxRate} (the contraction of Hardt et al. 2016, Lemma 3.7, needs it)`);
  }
  // rho rounded up (a larger rho is a weaker contraction: a larger, still valid, sensitivity).
  const rho = Math.min(1, 1 - (learningRate * beta * mu) / (beta + mu) + 4 * Number.EPSILON);
  const stepsPerEpoch = Math.floor(n / batchSize);
  const sensitivity =
    sgdOutputSensitivity({ lipschitz, learningRate, batchSize, rho, stepsPerEpoch, epochs }) +
    sgdOutputRoundingSlack({ lipschitz, learningRate, batchSize, rho, steps: epochs * stepsPerEpoch, regularization: mu, d });
  const delta = target.kind === 'target' ? target.delta : options.delta;
  const release = planGaussianRelease(sensitivity, target, delta, d, options.continuousNoise);
  return { loss, mu, epochs, batchSize, lipschitz, clipNorm, learningRate, rho, stepsPerEpoch, sensitivity, target, delta, release };
}

/** The rowNormBound option, which the smoothness needs even with a clipping norm. */
function requireRowNormBoundOption(rowNormBound: number | undefined): number {
  if (rowNormBound === undefined) {
    throw new InvalidParameterError('rowNormBound', undefined, 'a public bound on the row norms (the smoothness beta, hence the contraction, depends on it)');
  }
  return rowNormBound;
}

/** The release of output perturbation of SGD from public values alone (`Learner.plan`): the declared R, no row read. */
export function planOutputPerturbationSgd(shape: { readonly n: number; readonly d: number }, options: OutputPerturbationSgdOptions): DpEvent {
  rejectUnknownOptions(options, OUTPUT_PERTURBATION_SGD_OPTIONS, 'trainOutputPerturbationSgd');
  requireOwnMethod(options.method, 'outputSgd', 'trainOutputPerturbationSgd');
  return setUpOutputPerturbationSgd(shape, options, requirePositive('rowNormBound', requireRowNormBoundOption(options.rowNormBound))).release.event;
}

export function trainOutputPerturbationSgd(data: GlmData, options: OutputPerturbationSgdOptions): TrainResult {
  rejectUnknownOptions(options, OUTPUT_PERTURBATION_SGD_OPTIONS, 'trainOutputPerturbationSgd');
  requireOwnMethod(options.method, 'outputSgd', 'trainOutputPerturbationSgd');
  const lossData = dataForLoss(lossByName(options.loss ?? 'logistic', options.lossParameters), data);
  const { n, d } = lossData;
  const rng = options.rng ?? defaultRng();
  const rowNormBound = requireRowNormBoundOption(options.rowNormBound);
  const glmData = rowsWithinBound(lossData, rowNormBound);
  const run = setUpOutputPerturbationSgd({ n, d }, options, rowNormBound);
  const { loss, mu, epochs, batchSize, clipNorm, learningRate, rho, stepsPerEpoch, sensitivity, lipschitz, target, delta } = run;

  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  const steps = epochs * stepsPerEpoch;
  let clipped = 0;
  for (let e = 0; e < epochs; e++) {
    const order = randomPermutation(rng, n);
    for (let s = 0; s < stepsPerEpoch; s++) {
      const batch = order.subarray(s * batchSize, (s + 1) * batchSize);
      const { clippedCount } = sumClippedGradients(loss, glmData, theta, { clipNorm, indices: batch, out: gradient });
      clipped += clippedCount;
      for (let j = 0; j < d; j++) theta[j] -= learningRate * (gradient[j] / batchSize + mu * theta[j]);
      options.onStep?.(e * stepsPerEpoch + s + 1, steps);
    }
  }
  const release = releaseWithGaussianNoise(theta, sensitivity, target, delta, rng, options.continuousNoise);
  const model = linearModel(loss, release.theta, options.featureNames);
  const diagnostics: TrainingDiagnostics = {
    method: 'outputSgd',
    steps,
    noiseMultiplier: release.noiseMultiplier,
    noiseStd: release.noiseStd,
    clippedFraction: clipped / (steps * batchSize),
    clipNorm,
    learningRate,
    sensitivity,
    lipschitz,
    contraction: rho,
    regularization: mu,
  };
  return { model: { ...model, privacy: release.privacy }, privacy: release.privacy, diagnostics };
}
