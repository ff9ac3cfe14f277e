/**
 * Empirical privacy audit of dpfit's gradient learners (Jagielski, Ullman & Oprea 2020; Nasr et
 * al. 2021): train many times, through the real training code (`trainDpGd`, `trainDpSgd`), on two
 * neighbouring datasets that differ in one worst-case record, and turn the success of a
 * membership test into a lower bound on epsilon that holds with a stated confidence. An upper
 * bound (the accountant's) below this lower bound is a privacy bug.
 *
 * The canary (a "gradient canary" realised as a record): every auditor row has one extra feature
 * that is 0, and the canary is x = R e_extra with a squared-loss label Y far outside any bound, so
 * that its per-example gradient R (R theta_extra - Y) e_extra has norm far above the clipping norm
 * C at every step the runs reach: its clipped gradient is exactly -C e_extra, the worst case the
 * clipping analysis allows, orthogonal to every other row's gradient. The score is theta_extra of
 * the released model, which then moves only with the canary and the noise.
 *   - DP-GD (replace-one): D holds the canary, D' the "anti-canary" (label -Y: clipped gradient
 *     +C e_extra), a difference of 2C, the sensitivity DP-GD pays.
 *   - DP-SGD (add/remove-one): D' is D without the canary.
 *
 * The test: "the canary is in" when the score exceeds a threshold t. The thresholds are fixed
 * before any run (0, s0/4, ..., 10 s0 with s0 = T lr C / n, the canary's noiseless effect on the
 * score); for each, Clopper-Pearson upper bounds on the false positive and false negative rates
 * over all runs, each at confidence 1 - (1 - confidence) / (2 x 41) (a union bound over the two
 * rates and the 41 thresholds), and the best threshold's bound is reported. For any (epsilon, delta)-DP
 * mechanism, FPR + e^epsilon FNR >= 1 - delta and FNR + e^epsilon FPR >= 1 - delta (Kairouz, Oh &
 * Viswanath 2015), so
 *
 *   epsilon >= max(log((1 - delta - FNR_up) / FPR_up), log((1 - delta - FPR_up) / FNR_up))
 *
 * with probability >= `confidence` over the runs: the union bound covers the choice of threshold.
 */
import type { Dataset } from '../data/dataset.js';
import { InvalidParameterError } from '../errors.js';
import { trainDpGd } from '../learners/dp-gd.js';
import { trainDpSgd } from '../learners/dp-sgd.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng, seededRng, type Rng } from '../random/rng.js';
import { requireInteger, requireOpenUnit, requirePositive } from '../validate.js';
import { clopperPearsonUpper } from './clopper-pearson.js';

export type AuditMethod = 'dpgd' | 'dpsgd';

export interface AuditOptions {
  readonly method: AuditMethod;
  /** The training target (the learner calibrates its noise for it). */
  readonly epsilon: number;
  readonly delta: number;
  /** The claim audited (default: the epsilon the training report gives). */
  readonly claimedEpsilon?: number;
  /** Training runs on EACH of the two datasets. */
  readonly runs: number;
  readonly confidence?: number;
  readonly steps?: number;
  readonly clipNorm?: number;
  readonly learningRate?: number;
  /** DP-SGD: expected batch size (default n / 10). */
  readonly batchSize?: number;
  /** Auditor's rows besides the canary (default 100) and features (default 5). */
  readonly rows?: number;
  readonly features?: number;
  /** Randomness of the TRAINING runs (default secure). The auditor's data use a fixed seed. */
  readonly rng?: Rng;
  readonly onRun?: (done: number, total: number) => void;
}

export interface AuditResult {
  readonly method: AuditMethod;
  /** The lower bound on epsilon at `delta`, holding with probability >= confidence. */
  readonly epsilonLower: number;
  readonly epsilonClaimed: number;
  /** What dpfit's accountant reports for the runs (the upper bound audited by default). */
  readonly epsilonAccounted: number;
  readonly delta: number;
  readonly runs: number;
  readonly confidence: number;
  /** epsilonLower > epsilonClaimed: the claim is refuted (with probability >= confidence). */
  readonly violated: boolean;
  /** The chosen threshold, its false positive and false negative counts out of `evaluated` runs each. */
  readonly test: { readonly threshold: number; readonly falsePositives: number; readonly falseNegatives: number; readonly evaluated: number };
}

const LABEL = 1e9;
/** Thresholds of the test: 0, s0/4, ..., 10 s0. */
const THRESHOLDS = 41;
const RADIUS = 1e3;

/** The auditor's rows (fixed seed: public) plus the canary (label +Y), the anti-canary (-Y) or nothing. */
function auditData(rows: number, features: number, canary: 'plus' | 'minus' | 'none'): Dataset {
  const d = features + 1;
  const n = rows + (canary === 'none' ? 0 : 1);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const rng = seededRng(20261124);
  const row = new Float64Array(features);
  for (let i = 0; i < rows; i++) {
    fillGaussian(rng, row, 1 / Math.sqrt(features));
    let s = 0;
    for (let k = 0; k < features; k++) {
      x[i * d + k] = row[k];
      s += row[k];
    }
    y[i] = s + 0.1 * (rng.nextDouble() - 0.5);
  }
  if (canary !== 'none') {
    x[rows * d + features] = RADIUS;
    y[rows] = canary === 'plus' ? LABEL : -LABEL;
  }
  return { x, y, n, d, featureNames: [...Array.from({ length: features }, (_, k) => `x${k + 1}`), 'canary'] };
}

/** The (confidence) lower bound on epsilon from a test's error counts (file comment). */
export function epsilonLowerBound(falsePositives: number, falseNegatives: number, trials: number, delta: number, confidence: number): number {
  const alpha = (1 - confidence) / 2;
  const fpr = clopperPearsonUpper(falsePositives, trials, alpha);
  const fnr = clopperPearsonUpper(falseNegatives, trials, alpha);
  const bound = (a: number, b: number) => (1 - delta - a > 0 && b > 0 ? Math.log((1 - delta - a) / b) : 0);
  return Math.max(0, bound(fnr, fpr), bound(fpr, fnr));
}

/** Runs the audit (file comment). */
export function auditLearner(options: AuditOptions): AuditResult {
  const method = options.method;
  if (method !== 'dpgd' && method !== 'dpsgd') throw new InvalidParameterError('method', method, "'dpgd' or 'dpsgd'");
  const epsilon = requirePositive('epsilon', options.epsilon);
  const delta = requireOpenUnit('delta', options.delta);
  const runs = requireInteger('runs', options.runs, 20);
  const confidence = requireOpenUnit('confidence', options.confidence ?? 0.95);
  const steps = requireInteger('steps', options.steps ?? 20, 1);
  const clipNorm = requirePositive('clipNorm', options.clipNorm ?? 1);
  const learningRate = requirePositive('learningRate', options.learningRate ?? 0.5);
  const rows = requireInteger('rows', options.rows ?? 100, 10);
  const features = requireInteger('features', options.features ?? 5, 1);
  const rng = options.rng ?? defaultRng();
  const batchSize = options.batchSize ?? Math.max(1, Math.floor(rows / 10));
  const canaryIn = auditData(rows, features, 'plus');
  const canaryOut = auditData(rows, features, method === 'dpgd' ? 'minus' : 'none');
  const d = features + 1;

  let accounted = 0;
  const train = (data: Dataset): number => {
    const common = { loss: 'squared', clipNorm, learningRate, epsilon, delta, rng };
    const result =
      method === 'dpgd'
        ? trainDpGd(data, { ...common, steps })
        : trainDpSgd(data, { ...common, steps, samplingProbability: Math.min(1, batchSize / (rows + 1)), optimizer: 'sgd' });
    accounted = result.privacy.epsilon;
    return result.model.theta[d - 1];
  };
  const inside: number[] = [];
  const outside: number[] = [];
  for (let r = 0; r < runs; r++) {
    inside.push(train(canaryIn));
    outside.push(train(canaryOut));
    options.onRun?.(r + 1, runs);
  }
  // Thresholds fixed before any run: multiples of the canary's noiseless effect on the score,
  // s0 = T lr C / n (DP-SGD divides by the expected batch, so its mean effect is the same). Every run
  // is evaluated; the bound holds for all GRID thresholds at once by a union bound (Bonferroni).
  const s0 = (steps * learningRate * clipNorm) / (rows + 1);
  const grid = Array.from({ length: THRESHOLDS }, (_, j) => (s0 * j) / 4);
  const perThreshold = 1 - (1 - confidence) / grid.length;
  let best = { threshold: grid[0], falsePositives: 0, falseNegatives: 0, bound: -1 };
  for (const threshold of grid) {
    const falsePositives = outside.filter((v) => v > threshold).length;
    const falseNegatives = inside.filter((v) => v <= threshold).length;
    const bound = epsilonLowerBound(falsePositives, falseNegatives, runs, delta, perThreshold);
    if (bound > best.bound) best = { threshold, falsePositives, falseNegatives, bound };
  }
  const { threshold, falsePositives, falseNegatives } = best;
  const epsilonLower = best.bound;
  const epsilonClaimed = options.claimedEpsilon ?? accounted;
  return {
    method,
    epsilonLower,
    epsilonClaimed,
    epsilonAccounted: accounted,
    delta,
    runs,
    confidence,
    violated: epsilonLower > epsilonClaimed,
    test: { threshold, falsePositives, falseNegatives, evaluated: runs },
  };
}
