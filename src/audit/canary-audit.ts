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
import { trainDpGd } from '../learners/gradient/dp-gd.js';
import { trainDpSgd } from '../learners/gradient/dp-sgd.js';
import { fillGaussian } from '../random/continuous.js';
import { defaultRng, seededRng, type Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../validate.js';
import { epsilonLowerBound } from './error-rate-bound.js';

export { epsilonLowerBound };

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

interface ResolvedAudit {
  readonly method: AuditMethod;
  readonly epsilon: number;
  readonly delta: number;
  readonly runs: number;
  readonly confidence: number;
  readonly steps: number;
  readonly clipNorm: number;
  readonly learningRate: number;
  readonly rows: number;
  readonly features: number;
  readonly batchSize: number;
}

const AUDIT_OPTIONS = optionNames<AuditOptions>({ method: true, epsilon: true, delta: true, claimedEpsilon: true, runs: true, confidence: true, steps: true, clipNorm: true, learningRate: true, batchSize: true, rows: true, features: true, rng: true, onRun: true });

/** Validates the options of `where` (every check before any run). */
function resolve(options: AuditOptions, where: string): ResolvedAudit {
  rejectUnknownOptions(options, AUDIT_OPTIONS, where);
  const method = options.method;
  if (method !== 'dpgd' && method !== 'dpsgd') throw new InvalidParameterError('method', method, "'dpgd' or 'dpsgd'");
  const rows = requireInteger('rows', options.rows ?? 100, 10);
  return {
    method,
    epsilon: requirePositive('epsilon', options.epsilon),
    delta: requireOpenUnit('delta', options.delta),
    runs: requireInteger('runs', options.runs, 20),
    confidence: requireOpenUnit('confidence', options.confidence ?? 0.95),
    steps: requireInteger('steps', options.steps ?? 20, 1),
    clipNorm: requirePositive('clipNorm', options.clipNorm ?? 1),
    learningRate: requirePositive('learningRate', options.learningRate ?? 0.5),
    rows,
    features: requireInteger('features', options.features ?? 5, 1),
    batchSize: options.batchSize ?? Math.max(1, Math.floor(rows / 10)),
  };
}

/** Scores of `runs` training runs on each neighbour (the canary's coordinate of the released model), and the accountant's epsilon. */
export function canaryScores(options: AuditOptions, runs: number, rng: Rng = options.rng ?? defaultRng(), onRun?: (done: number) => void): { inside: number[]; outside: number[]; accounted: number } {
  const a = resolve(options, 'canaryScores');
  const canaryIn = auditData(a.rows, a.features, 'plus');
  const canaryOut = auditData(a.rows, a.features, a.method === 'dpgd' ? 'minus' : 'none');
  const d = a.features + 1;
  let accounted = 0;
  const train = (data: Dataset): number => {
    const common = { loss: 'squared', clipNorm: a.clipNorm, learningRate: a.learningRate, epsilon: a.epsilon, delta: a.delta, rng };
    const result =
      a.method === 'dpgd'
        ? trainDpGd(data, { ...common, steps: a.steps })
        : trainDpSgd(data, { ...common, steps: a.steps, samplingProbability: Math.min(1, a.batchSize / (a.rows + 1)), optimizer: 'sgd' });
    accounted = result.privacy.epsilon;
    return result.model.theta[d - 1];
  };
  const inside: number[] = [];
  const outside: number[] = [];
  for (let r = 0; r < runs; r++) {
    inside.push(train(canaryIn));
    outside.push(train(canaryOut));
    onRun?.(r + 1);
  }
  return { inside, outside, accounted };
}

/** The audit's verdict from the scores (file comment): the best of the fixed thresholds, Clopper-Pearson with a union bound. */
function verdict(options: AuditOptions, scores: { inside: readonly number[]; outside: readonly number[]; accounted: number }): AuditResult {
  const a = resolve(options, 'verdict');
  const { inside, outside, accounted } = scores;
  // Thresholds fixed before any run: multiples of the canary's noiseless effect on the score,
  // s0 = T lr C / n (DP-SGD divides by the expected batch, so its mean effect is the same). Every run
  // is evaluated; the bound holds for all GRID thresholds at once by a union bound (Bonferroni).
  const s0 = (a.steps * a.learningRate * a.clipNorm) / (a.rows + 1);
  const grid = Array.from({ length: THRESHOLDS }, (_, j) => (s0 * j) / 4);
  const perThreshold = 1 - (1 - a.confidence) / grid.length;
  let best = { threshold: grid[0], falsePositives: 0, falseNegatives: 0, bound: -1 };
  for (const threshold of grid) {
    const falsePositives = outside.filter((v) => v > threshold).length;
    const falseNegatives = inside.filter((v) => v <= threshold).length;
    const bound = epsilonLowerBound(falsePositives, falseNegatives, inside.length, a.delta, perThreshold);
    if (bound > best.bound) best = { threshold, falsePositives, falseNegatives, bound };
  }
  const epsilonClaimed = options.claimedEpsilon ?? accounted;
  return {
    method: a.method,
    epsilonLower: best.bound,
    epsilonClaimed,
    epsilonAccounted: accounted,
    delta: a.delta,
    runs: inside.length,
    confidence: a.confidence,
    violated: best.bound > epsilonClaimed,
    test: { threshold: best.threshold, falsePositives: best.falsePositives, falseNegatives: best.falseNegatives, evaluated: inside.length },
  };
}

/** Runs the audit on the calling thread (file comment). */
export function auditLearner(options: AuditOptions): AuditResult {
  const a = resolve(options, 'auditLearner');
  return verdict(options, canaryScores(options, a.runs, options.rng ?? defaultRng(), (done) => options.onRun?.(done, a.runs)));
}

/**
 * The audit with its runs spread over `threads` worker threads (secure randomness in each; not
 * for seeded runs). Node-only. `onRun` reports the runs done over all threads.
 */
export async function auditLearnerParallel(options: AuditOptions, threads: number): Promise<AuditResult> {
  const a = resolve(options, 'auditLearnerParallel');
  if (options.rng !== undefined) throw new InvalidParameterError('rng', 'a generator', 'absent for the parallel audit (each worker draws its own secure randomness)');
  const count = requireInteger('threads', threads, 1, 256);
  if (count === 1) return auditLearner(options);
  const { startModuleWorker } = await import('../worker-threads.js');
  const shares = Array.from({ length: count }, (_, i) => Math.floor(a.runs / count) + (i < a.runs % count ? 1 : 0)).filter((r) => r > 0);
  const progress = shares.map(() => 0);
  const { onRun, rng: _rng, ...plain } = options;
  const parts = await Promise.all(
    shares.map(
      (runs, i) =>
        new Promise<{ inside: number[]; outside: number[]; accounted: number }>((resolveRun, reject) => {
          const worker = startModuleWorker(new URL('./audit-worker', import.meta.url), { workerData: { options: plain, runs } });
          worker.on('message', (message: { done?: number; result?: { inside: number[]; outside: number[]; accounted: number }; error?: string }) => {
            if (message.done !== undefined) {
              progress[i] = message.done;
              onRun?.(progress.reduce((x, y) => x + y, 0), a.runs);
            }
            if (message.result !== undefined) {
              resolveRun(message.result);
              void worker.terminate();
            }
            if (message.error !== undefined) {
              reject(new InvalidParameterError('audit', 'a worker', 'runs that succeed', message.error));
              void worker.terminate();
            }
          });
          worker.on('error', reject);
        }),
    ),
  );
  return verdict(options, { inside: parts.flatMap((p) => p.inside), outside: parts.flatMap((p) => p.outside), accounted: parts[0].accounted });
}
