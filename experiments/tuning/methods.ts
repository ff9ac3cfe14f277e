/**
 * `003` Sec. 5's methods (Table 5) as dpfit runs them, shared by `adult-tuning.ts` (Table 2) and
 * `objpert-fig2.ts` (Fig. 2). Every choice below was fixed before any result was seen.
 *
 * DP-SGD: logistic loss, Poisson sampling with expected batch 256 (q = 256/n), T = ceil(epochs/q)
 * steps (60 "epochs": 7,632 on Adult), C = sqrt(2) (the logistic loss's Lipschitz bound for rows of
 * norm <= sqrt(2): no per-example gradient is ever clipped), Adam (beta1 0.9, beta2 0.999), constant
 * learning rate, no regularisation, add/remove-one neighbours, RDP accounting. Only the learning
 * rate is tuned, on a public grid of 10 log-spaced values: [1e-4, 1] ("adam", Adam's usual range) or
 * `003`'s [1e-8, 1e-1] ("paper", where Adam barely moves below 1e-4 in 7,632 steps).
 *
 * - "dishonest DP-SGD" (NOT PRIVATE): `gridSearchNotPrivate` trains all 10 candidates, each
 *   calibrated to the full (epsilon, delta) by RDP, and keeps the best on validation; the cost of
 *   the 10 runs and of the selection is not paid.
 * - "honest DP-SGD": `tuneGradientMethodHonestly` (Papernot & Steinke 2022, Thm. 6): K ~ Poisson(mu),
 *   mu the smallest value (1e-3 grid) with P[K > 10] >= 0.9 (15.407; `003`: "mu ~ 15.4"), each run
 *   draws a candidate uniformly, the best on validation is released; the per-run noise is
 *   calibrated for the WHOLE repeatAndSelect event, re-accounted here independently.
 * - "AMP (003 Alg. 1)": `trainAmp` with `003` Sec. 5's data-independent parameters (tau = 0.01,
 *   sigma_out = 0.15, C = sqrt(2), lambda the smallest with sigma <= 1.3 sigma_G, RDP). Its
 *   optimiser is free (Thm. 4.1 covers any point passing the gradient test): nothing to tune.
 * - "non-private L-BFGS": logistic regression with regularisation 1e-4 n, no noise.
 *
 * Seeds drive Poisson sampling, noise, K and the candidate draws (seededRng: an EXPERIMENT, not a
 * release): method k of seed s uses seededRng(1000 s + k), the same at every epsilon.
 */
import { calibrateDpsgd, dpsgdEvent } from '../../src/accounting/calibration/calibrate.js';
import type { DpEvent } from '../../src/accounting/events/types.js';
import { repeatAndSelectEvent } from '../../src/accounting/events/constructors.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import type { Dataset } from '../../src/data/dataset.js';
import { trainDpSgd } from '../../src/learners/gradient/dp-sgd.js';
import { glmConstants, toSignedLabels } from '../../src/learners/glm/constants.js';
import { logisticLoss } from '../../src/learners/glm/losses/logistic.js';
import { glmObjective } from '../../src/learners/glm/objective.js';
import { evaluate, linearModel, type LinearModel } from '../../src/learners/models/model.js';
import { trainAmp } from '../../src/learners/perturbation/approximate-minima-perturbation.js';
import { calibrateCompositeNoise } from '../../src/learners/composite/gradient-methods.js';
import { poissonMeanForGrid, poissonTailAbove, tuneGradientMethodHonestly } from '../../src/learners/composite/tune-gradient-method.js';
import { gridSearchNotPrivate } from '../../src/learners/composite/tuning.js';
import { lbfgs } from '../../src/math/lbfgs.js';
import { seededRng } from '../../src/random/rng.js';
import type { ExperimentData } from './data-sets.js';

export const DELTA = 1e-5;
export const EXPECTED_BATCH = 256;
export const GRID_SIZE = 10;
export type GridName = 'adam' | 'paper';

function logSpaced(lo: number, hi: number, count: number): number[] {
  return Array.from({ length: count }, (_, k) => 10 ** (Math.log10(lo) + ((Math.log10(hi) - Math.log10(lo)) * k) / (count - 1)));
}

/** mu with P[K > 10] >= 0.9 (`003` Sec. 5: "mu ~ 15.4"; scipy: 15.406641171976522). */
export const MU = poissonMeanForGrid(GRID_SIZE, 0.9);
if (!(poissonTailAbove(GRID_SIZE, MU) >= 0.9)) throw new Error(`P[K > ${GRID_SIZE}] < 0.9 at mu = ${MU}`);

/** What a run needs besides the data: public quantities only. */
export interface Protocol {
  readonly epochs: number;
  readonly grid: GridName;
  readonly learningRates: readonly number[];
  readonly clipNorm: number;
  readonly samplingProbability: number;
  readonly steps: number;
}

export function protocolFor(data: ExperimentData, epochs: number, grid: GridName): Protocol {
  if (grid !== 'adam' && grid !== 'paper') throw new Error(`--grid must be "adam" or "paper", got ${String(grid)}`);
  const samplingProbability = EXPECTED_BATCH / data.train.n;
  return {
    epochs,
    grid,
    learningRates: grid === 'paper' ? logSpaced(1e-8, 1e-1, GRID_SIZE) : logSpaced(1e-4, 1, GRID_SIZE),
    /** C = sqrt(2) (times 1 + 4 ulp): the logistic loss's Lipschitz bound for rows of norm <= sqrt(2). */
    clipNorm: glmConstants(logisticLoss, { rowNormBound: data.rowNormBound, labelBound: 1 }).lipschitz,
    samplingProbability,
    steps: Math.ceil(epochs / samplingProbability),
  };
}

export interface RunContext {
  readonly data: ExperimentData;
  readonly protocol: Protocol;
  readonly epsilon: number;
  readonly seed: number;
}

export interface MethodOutcome {
  /** Test accuracy (%) of the released model. */
  readonly accuracy: number;
  /** The accounted epsilon of the whole release (undefined: no guarantee). */
  readonly epsilon?: number;
}

export interface MethodColumn {
  /** Name for --only and in JSON. */
  readonly key: MethodKey;
  readonly label: string;
  /** Whether the column's releases carry an (epsilon, delta) guarantee. */
  readonly private: boolean;
  readonly run: (context: RunContext) => MethodOutcome;
}

export const METHOD_KEYS = ['dishonest', 'honest', 'amp', 'nonprivate'] as const;
export type MethodKey = (typeof METHOD_KEYS)[number];

const accuracyOn = (model: LinearModel | undefined, data: Dataset): number => 100 * (evaluate(model ?? linearModel(logisticLoss, new Float64Array(data.d)), data).accuracy ?? NaN);

const dishonestDpSgd: MethodColumn = {
  key: 'dishonest',
  label: 'dishonest DP-SGD (NOT private)',
  private: false,
  run: ({ data, protocol, epsilon, seed }) => {
    const base = { clipNorm: protocol.clipNorm, samplingProbability: protocol.samplingProbability, steps: protocol.steps, optimizer: 'adam' as const, delta: DELTA };
    // Each candidate alone is (epsilon, delta)-DP; the grid search is not. The multiplier is
    // trainDpSgd's own calibration for this target (calibrateDpsgd by RDP), computed once for the
    // 10 candidates instead of once per candidate: the same runs, the same reports.
    const { noiseMultiplier } = calibrateDpsgd({ samplingProbability: protocol.samplingProbability, steps: protocol.steps, targetEpsilon: epsilon, delta: DELTA });
    const result = gridSearchNotPrivate(data.train, protocol.learningRates, {
      train: (train, learningRate, rng) => {
        const run = trainDpSgd(train, { ...base, noiseMultiplier, learningRate, rng });
        if (!(run.privacy.epsilon <= epsilon)) throw new Error(`a candidate's report says epsilon ${run.privacy.epsilon} > ${epsilon}`);
        return run;
      },
      publicValidation: data.validation,
      rng: seededRng(1_000 * seed + 1),
    });
    if (result.privacy.private !== false) throw new Error('a grid search must be labelled not private');
    return { accuracy: accuracyOn(result.model, data.test) };
  },
};

/** DP-SGD as the library's gradient-method options (learning rate set per candidate). */
const dpSgdMethod = (protocol: Protocol) => ({ method: 'dpsgd' as const, clipNorm: protocol.clipNorm, samplingProbability: protocol.samplingProbability, steps: protocol.steps, optimizer: 'adam' as const, learningRate: 1 });

/** The per-run noise of honest tuning, calibrated for the whole repeatAndSelect event, re-accounted here independently. */
export function honestCalibration(data: ExperimentData, protocol: Protocol, epsilon: number) {
  const tuned = (run: DpEvent) => repeatAndSelectEvent(run, MU, Infinity);
  const { noiseMultiplier, event } = calibrateCompositeNoise(dpSgdMethod(protocol), data.train, tuned, { epsilon, delta: DELTA });
  const again = rdpEpsilon(event, DELTA);
  if (!(again.epsilon <= epsilon)) throw new Error(`honest tuning at z = ${noiseMultiplier} re-accounts to epsilon ${again.epsilon} > ${epsilon}`);
  const perRun = rdpEpsilon(dpsgdEvent(protocol.samplingProbability, noiseMultiplier, protocol.steps), DELTA).epsilon;
  return { noiseMultiplier, epsilon: again.epsilon, perRunEpsilon: perRun };
}

const honestDpSgd: MethodColumn = {
  key: 'honest',
  label: 'honest DP-SGD',
  private: true,
  run: ({ data, protocol, epsilon, seed }) => {
    const result = tuneGradientMethodHonestly(data.train, {
      base: dpSgdMethod(protocol),
      learningRates: [...protocol.learningRates],
      distribution: { kind: 'poisson', mean: MU },
      epsilon,
      delta: DELTA,
      publicValidation: data.validation,
      rng: seededRng(1_000 * seed + 2),
    });
    if (!(result.privacy.epsilon <= epsilon)) throw new Error(`the tuning's report says epsilon ${result.privacy.epsilon} > target ${epsilon}`);
    // K = 0 (probability e^-mu ~ 2e-7) releases nothing: scored as the all-zero model.
    return { accuracy: accuracyOn(result.model, data.test), epsilon: result.privacy.epsilon };
  },
};

const amp: MethodColumn = {
  key: 'amp',
  label: 'AMP (003 Alg. 1)',
  private: true,
  run: ({ data, protocol, epsilon, seed }) => {
    const result = trainAmp(data.train, { epsilon, delta: DELTA, rowNormBound: data.rowNormBound, clipNorm: protocol.clipNorm, rng: seededRng(1_000 * seed + 3) });
    if (!(result.privacy.epsilon <= epsilon)) throw new Error(`AMP's report says epsilon ${result.privacy.epsilon} > target ${epsilon}`);
    return { accuracy: accuracyOn(result.model, data.test), epsilon: result.privacy.epsilon };
  },
};

const baselines = new WeakMap<ExperimentData, number>();
const nonPrivateLbfgs: MethodColumn = {
  key: 'nonprivate',
  label: 'non-private L-BFGS',
  private: false,
  run: ({ data }) => {
    let accuracy = baselines.get(data);
    if (accuracy === undefined) {
      const { train } = data;
      const objective = glmObjective(logisticLoss, { ...train, y: toSignedLabels(train.y) }, { regularization: 1e-4 * train.n });
      const optimum = lbfgs(objective, new Float64Array(train.d), { gradTolerance: 1e-6, maxIterations: 5000 });
      accuracy = accuracyOn(linearModel(logisticLoss, optimum.x), data.test);
      baselines.set(data, accuracy);
    }
    return { accuracy };
  },
};

/** The columns, in order. Another method is one more entry here (and in METHOD_KEYS). */
export const ALL_METHODS: readonly MethodColumn[] = [dishonestDpSgd, honestDpSgd, amp, nonPrivateLbfgs];

export function methodByKey(key: string): MethodColumn {
  const method = ALL_METHODS.find((m) => m.key === key);
  if (method === undefined) throw new Error(`unknown method ${key}: one of ${METHOD_KEYS.join(', ')}`);
  return method;
}

/** One run of one method: what the worker pool hands out (`pool.ts`). */
export interface Task {
  readonly method: MethodKey;
  readonly epsilon: number;
  readonly seed: number;
}

export interface TaskResult extends Task {
  /** Test accuracy (%). */
  readonly accuracy: number;
  /** The release's accounted epsilon (private methods). */
  readonly accountedEpsilon?: number;
  /** Time the run took on its thread. */
  readonly seconds: number;
}

export function runTask(data: ExperimentData, protocol: Protocol, task: Task): TaskResult {
  const started = performance.now();
  const outcome = methodByKey(task.method).run({ data, protocol, epsilon: task.epsilon, seed: task.seed });
  return {
    method: task.method,
    epsilon: task.epsilon,
    seed: task.seed,
    accuracy: outcome.accuracy,
    ...(outcome.epsilon === undefined ? {} : { accountedEpsilon: outcome.epsilon }),
    seconds: (performance.now() - started) / 1000,
  };
}
