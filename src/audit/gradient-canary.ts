/**
 * The accountant's threat model (Nasr et al. 2021, "Adversary instantiation", and 2023, "Tight
 * auditing of differentially private machine learning"): the adversary sees every step's
 * released noisy sum of clipped gradients, and its canary is a GRADIENT canary, a per-step
 * contribution c e of norm exactly C in a direction e that no other record's gradient uses.
 *   - DP-GD (replace-one): with the canary, c = +C at every step; in the neighbour the canary is
 *     replaced by its opposite, c = -C (a difference of 2C, the sensitivity DP-GD pays).
 *   - DP-SGD (add/remove-one): with the canary, c = +C at the steps whose Poisson batch holds it
 *     (each independently with probability q, drawn by the learner's own sampler); in the
 *     neighbour there is no canary, c = 0.
 *
 * What is simulated, and why it is exact. The released sums are G_t = S_t(theta_t) + c_t e + N_t,
 * where S_t is the sum of the other records' clipped gradients in step t's batch and N_t the
 * mechanism's noise (exact discrete Gaussian on a public grid, independent across coordinates,
 * the rounding to the grid also per coordinate: `mechanisms/grid-noise.ts`). Write each G_t as
 * (P G_t, e . G_t) with P the projection orthogonal to e. Claim: (P G_1, ..., P G_T) has the same
 * distribution in both worlds and is independent of (e . G_1, ..., e . G_T). Proof by induction
 * on t: a GLM record's gradient is a multiple of its features x_i, and x_i . e = 0 for every
 * record but the canary, so P S_t = S_t depends on theta_t only through the x_i . theta_t =
 * x_i . P theta_t; dpfit's updates (SGD, momentum, Adam, L2 regularisation) act coordinate by
 * coordinate, so P theta_t is a function of P G_1, ..., P G_{t-1}; the batch of the other records
 * is drawn independently of the canary's inclusion (Poisson sampling draws each record
 * independently); and P N_t is independent of e . N_t. So P G_t is a function of the earlier P G
 * and of randomness independent of the canary coordinates, identical in both worlds. Hence the
 * likelihood ratio of the whole view (G_1, ..., G_T) between the worlds equals that of the canary
 * coordinates y_t = e . G_t = grid-rounded c_t + noise: they are a sufficient statistic, and an
 * audit of them is an audit of everything the adversary sees. Simulating only them costs T noise
 * draws per run (no training, no data), which makes thousands of runs cheap.
 *
 * The noise, its grid and the calibration come from the learners' own set-up (`setUpDpGd`,
 * `setUpDpSgd`: the noise a real run on the auditor's n rows and d features would add) and the
 * accounted epsilon from their own report's event, by dpfit's tightest accountant (`accounted-epsilon.ts`); the canary's inclusion from the learner's Poisson
 * sampler. Both worlds use the same public q and noise (DP-SGD's q is public: it does not move
 * with the canary).
 */
import { finishDpGd, setUpDpGd, type DpGdOptions } from '../learners/gradient/dp-gd.js';
import { finishDpSgd, setUpDpSgd, type DpSgdOptions } from '../learners/gradient/dp-sgd.js';
import type { SumNoise } from '../learners/gradient/clipped-sum-noise.js';
import { poissonSubsampleIndices } from '../random/discrete.js';
import { defaultRng, type Rng } from '../random/rng.js';
import { InvalidParameterError } from '../errors.js';
import { accountedEpsilon } from './accounted-epsilon.js';
import { resolveAudit, type AuditMethod, type AuditOptions } from './audit-options.js';

/** The canary coordinates of `runs` runs in each world, run after run: y[r * steps + t]. */
export interface GradientCanaryReleases {
  readonly method: AuditMethod;
  readonly inside: Float64Array;
  readonly outside: Float64Array;
  readonly runs: number;
  readonly steps: number;
  /** The tightest epsilon dpfit proves for one run (`accounted-epsilon.ts`). */
  readonly accounted: number;
  /** The noise std of one released coordinate (sum units), the canary's norm C and the sampling rate q (1 for DP-GD). */
  readonly noiseStd: number;
  /** The noise's std in grid steps (s of the discrete Gaussian; Infinity for continuous noise). */
  readonly gridNoiseStd: number;
  readonly clipNorm: number;
  readonly samplingProbability: number;
}

/** Concatenates the releases of several shares of runs (in the order given: an order fixed before any value is seen). */
export function concatReleases(parts: readonly GradientCanaryReleases[]): GradientCanaryReleases {
  if (parts.length === 0) throw new InvalidParameterError('parts', 0, 'at least one share of runs');
  const join = (pick: (p: GradientCanaryReleases) => Float64Array) => {
    const out = new Float64Array(parts.reduce((s, p) => s + pick(p).length, 0));
    let at = 0;
    for (const p of parts) {
      out.set(pick(p), at);
      at += pick(p).length;
    }
    return out;
  };
  return { ...parts[0], inside: join((p) => p.inside), outside: join((p) => p.outside), runs: parts.reduce((s, p) => s + p.runs, 0) };
}

/** Simulates the canary coordinates of `runs` runs in each world (file comment). */
export function gradientCanaryReleases(options: AuditOptions, runs: number, rng: Rng = options.rng ?? defaultRng(), onRun?: (done: number) => void): GradientCanaryReleases {
  const a = resolveAudit(options, 'gradientCanaryReleases');
  requireRuns(runs);
  const shape = { n: a.rows + 1, d: a.features + 1 };
  const common = { loss: 'squared', clipNorm: a.clipNorm, learningRate: a.learningRate, epsilon: a.epsilon, delta: a.delta, steps: a.steps, rng };
  let noise: SumNoise | undefined;
  let accounted: number;
  let q = 1;
  if (a.method === 'dpgd') {
    const gd: DpGdOptions = common;
    const run = setUpDpGd(shape, gd);
    noise = run.noise;
    accounted = accountedEpsilon(finishDpGd(run, gd, new Float64Array(shape.d), 0).privacy).epsilon;
  } else {
    const sgd: DpSgdOptions = { ...common, samplingProbability: Math.min(1, a.batchSize / shape.n), optimizer: 'sgd' };
    const run = setUpDpSgd(shape, sgd);
    noise = run.noise;
    q = run.samplingProbability;
    accounted = accountedEpsilon(finishDpSgd(run, sgd, new Float64Array(shape.d), { clipped: 0, used: 0, emptyBatches: 0 }).privacy).epsilon;
  }
  if (noise === undefined) throw new InvalidParameterError('epsilon', a.epsilon, 'finite (the audit needs noise)');
  const add = noise.add;
  const C = a.clipNorm;
  const T = a.steps;
  const inside = new Float64Array(runs * T);
  const outside = new Float64Array(runs * T);
  const y = new Float64Array(1);
  const canaryIndex = shape.n - 1;
  const canaryIn = (): boolean => {
    if (a.method === 'dpgd') return true;
    const batch = poissonSubsampleIndices(rng, shape.n, q);
    return batch.length > 0 && batch[batch.length - 1] === canaryIndex; // indices are increasing
  };
  for (let r = 0; r < runs; r++) {
    for (let t = 0; t < T; t++) {
      y[0] = canaryIn() ? C : 0;
      add(y, rng);
      inside[r * T + t] = y[0];
      y[0] = a.method === 'dpgd' ? -C : 0;
      add(y, rng);
      outside[r * T + t] = y[0];
    }
    onRun?.(r + 1);
  }
  return { method: a.method, inside, outside, runs, steps: T, accounted, noiseStd: noise.noiseStd, gridNoiseStd: noise.granularity === undefined ? Infinity : noise.noiseStd / noise.granularity, clipNorm: C, samplingProbability: q };
}

function requireRuns(runs: number): void {
  if (!(Number.isSafeInteger(runs) && runs >= 1)) throw new InvalidParameterError('runs', runs, 'an integer >= 1');
}
