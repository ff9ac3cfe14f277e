/**
 * Empirical privacy audit of dpfit's gradient learners (Jagielski, Ullman & Oprea 2020; Nasr et
 * al. 2021), and the entry of both threat models (`auditLearner`, `auditLearnerParallel`): the
 * accountant's (`threatModel: 'accountant'`) is `accountant-audit.ts`; this file is the last-model
 * one (the default), which trains many times, through the real training code (`trainDpGd`, `trainDpSgd`), on two
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
import { requireInteger } from '../validate.js';
import type { PrivacyReport } from '../learners/models/privacy-report.js';
import { accountantVerdict } from './accountant-audit.js';
import { accountedEpsilon } from './accounted-epsilon.js';
import { resolveAudit, type AuditOptions, type AuditResult } from './audit-options.js';
import { epsilonLowerBound } from './bounds/error-rate-bound.js';
import { concatReleases, gradientCanaryReleases, type GradientCanaryReleases } from './gradient-canary.js';
import { splitThresholdBound } from './bounds/split-threshold.js';

export { epsilonLowerBound };
export type { AuditMethod, AuditOptions, AuditResult, ThreatModel } from './audit-options.js';

const LABEL = 1e9;
/** Thresholds of the test: 0, s0/4, ..., 10 s0 (the union bound covers all of them: `trade-off-curves.ts` reads the count). */
export const FIXED_THRESHOLDS = 41;
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

/** Scores of `runs` training runs on each neighbour (the canary's coordinate of the released model), and the accountant's epsilon. */
export function canaryScores(options: AuditOptions, runs: number, rng: Rng = options.rng ?? defaultRng(), onRun?: (done: number) => void): { inside: number[]; outside: number[]; accounted: number } {
  const a = resolveAudit(options, 'canaryScores');
  if (a.threatModel !== 'lastModel') throw new InvalidParameterError('threatModel', a.threatModel, "'lastModel' for canaryScores (the accountant's threat model simulates its releases: gradientCanaryReleases)");
  const canaryIn = auditData(a.rows, a.features, 'plus');
  const canaryOut = auditData(a.rows, a.features, a.method === 'dpgd' ? 'minus' : 'none');
  const d = a.features + 1;
  let report: PrivacyReport | undefined;
  const train = (data: Dataset): number => {
    const common = { loss: 'squared', clipNorm: a.clipNorm, learningRate: a.learningRate, epsilon: a.epsilon, delta: a.delta, rng };
    const result =
      a.method === 'dpgd'
        ? trainDpGd(data, { ...common, steps: a.steps })
        : trainDpSgd(data, { ...common, steps: a.steps, samplingProbability: Math.min(1, a.batchSize / (a.rows + 1)), optimizer: 'sgd' });
    report = result.privacy;
    return result.model.theta[d - 1];
  };
  const inside: number[] = [];
  const outside: number[] = [];
  for (let r = 0; r < runs; r++) {
    inside.push(train(canaryIn));
    outside.push(train(canaryOut));
    onRun?.(r + 1);
  }
  // The epsilon the runs are held to: the tightest dpfit proves for their (identical) event.
  return { inside, outside, accounted: report === undefined ? 0 : accountedEpsilon(report).epsilon };
}

/** The last-model audit's verdict from the scores (file comment): the best of the fixed thresholds, Clopper-Pearson with a union bound. */
function lastModelVerdict(options: AuditOptions, scores: { inside: readonly number[]; outside: readonly number[]; accounted: number }): AuditResult {
  const a = resolveAudit(options, 'verdict');
  const { inside, outside, accounted } = scores;
  // Thresholds fixed before any run: multiples of the canary's noiseless effect on the score,
  // s0 = T lr C / n (DP-SGD divides by the expected batch, so its mean effect is the same). Every run
  // is evaluated; the bound holds for all GRID thresholds at once by a union bound (Bonferroni).
  const s0 = (a.steps * a.learningRate * a.clipNorm) / (a.rows + 1);
  const grid = Array.from({ length: FIXED_THRESHOLDS }, (_, j) => (s0 * j) / 4);
  const bestAt = (confidence: number) => {
    const perThreshold = 1 - (1 - confidence) / grid.length;
    let best = { threshold: grid[0], falsePositives: 0, falseNegatives: 0, bound: -1 };
    for (const threshold of grid) {
      const falsePositives = outside.filter((v) => v > threshold).length;
      const falseNegatives = inside.filter((v) => v <= threshold).length;
      const bound = epsilonLowerBound(falsePositives, falseNegatives, inside.length, a.delta, perThreshold);
      if (bound > best.bound) best = { threshold, falsePositives, falseNegatives, bound };
    }
    return best;
  };
  const best = bestAt(a.confidence);
  // The verdict at the stricter refutation confidence (audit-options.ts: refuteConfidence).
  const refute = bestAt(a.refuteConfidence).bound;
  const epsilonClaimed = options.claimedEpsilon ?? accounted;
  return {
    method: a.method,
    epsilonLower: best.bound,
    epsilonClaimed,
    epsilonAccounted: accounted,
    delta: a.delta,
    runs: inside.length,
    confidence: a.confidence,
    refuteLower: refute,
    refuteConfidence: a.refuteConfidence,
    violated: refute > epsilonClaimed,
    test: { threshold: best.threshold, falsePositives: best.falsePositives, falseNegatives: best.falseNegatives, evaluated: inside.length },
    threatModel: 'lastModel',
    statistic: 'fixedThresholds',
    // The split-sample bound on the same scores, reported beside (it holds by itself; the fixed thresholds decide).
    bounds: { fixedThresholds: best.bound, splitThreshold: splitThresholdBound(inside, outside, a.delta, a.confidence).epsilonLower },
  };
}

/** One share of an audit's runs: the last model's scores or the accountant model's releases. */
export type AuditRuns = { readonly scores: { inside: number[]; outside: number[]; accounted: number } } | { readonly releases: GradientCanaryReleases };

/** Runs `runs` of the audit's runs in each world on this thread (what a worker does with its share). */
export function auditRuns(options: AuditOptions, runs: number, rng?: Rng, onRun?: (done: number) => void): AuditRuns {
  const a = resolveAudit(options, 'auditRuns');
  return a.threatModel === 'accountant' ? { releases: gradientCanaryReleases(options, runs, rng, onRun) } : { scores: canaryScores(options, runs, rng, onRun) };
}

function verdictOf(options: AuditOptions, parts: readonly AuditRuns[]): AuditResult {
  if ('releases' in parts[0]) return accountantVerdict(options, concatReleases(parts.map((p) => (p as { releases: GradientCanaryReleases }).releases)));
  const scores = parts.map((p) => (p as { scores: { inside: number[]; outside: number[]; accounted: number } }).scores);
  return lastModelVerdict(options, { inside: scores.flatMap((p) => p.inside), outside: scores.flatMap((p) => p.outside), accounted: scores[0].accounted });
}

/** Runs the audit on the calling thread (file comment). */
export function auditLearner(options: AuditOptions): AuditResult {
  const a = resolveAudit(options, 'auditLearner');
  return verdictOf(options, [auditRuns(options, a.runs, options.rng ?? defaultRng(), (done) => options.onRun?.(done, a.runs))]);
}

/**
 * The audit with its runs spread over `threads` worker threads (secure randomness in each; not
 * for seeded runs). Node-only. `onRun` reports the runs done over all threads.
 */
export async function auditLearnerParallel(options: AuditOptions, threads: number): Promise<AuditResult> {
  const a = resolveAudit(options, 'auditLearnerParallel');
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
        new Promise<AuditRuns>((resolveRun, reject) => {
          const worker = startModuleWorker(new URL('./audit-worker', import.meta.url), { workerData: { options: plain, runs } });
          worker.on('message', (message: { done?: number; result?: AuditRuns; error?: string }) => {
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
  return verdictOf(options, parts);
}
