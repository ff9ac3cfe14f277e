/**
 * The numbers of an audit's trade-off figure (`dpfit audit --plot`): the accountant's trade-off
 * curve, the audit's threshold test as a point with its confidence bounds, and the curve of the
 * lower bound the audit found, all as (alpha, beta) = (false positive rate, false negative rate)
 * of a test "the canary is in" (Dong, Roth & Su 2022, "Gaussian differential privacy", DRS below,
 * Def. 2.1: f(alpha) is the smallest false negative rate at false positive rate alpha).
 *
 * - The (epsilon, delta) region's boundary: a mechanism is (epsilon, delta)-DP exactly when its
 *   trade-off curve lies above f_{epsilon,delta}(alpha) = max(0, 1 - delta - e^epsilon alpha,
 *   e^-epsilon (1 - delta - alpha)) (DRS Prop. 2.5; Kairouz, Oh & Viswanath 2015, Thm. 2.1), a
 *   polyline with corners at alpha = (1 - delta) / (1 + e^epsilon) and alpha = 1 - delta.
 * - DP-GD's releases are Gaussian, so its curve is a Gaussian trade-off G_mu
 *   (`gaussian-dp-bound.ts`, DRS Def. 2.7). The accountant's mu is the one whose epsilon at delta
 *   is the accountant's epsilon (DRS Cor. 2.13), rounded UP (a lower curve: what the accountant
 *   claims, never more). T Gaussian releases are mu-GDP exactly for the mu of their composition
 *   (DRS Cor. 3.3), and any accountant's epsilon is at least that mu's epsilon, so this mu is at
 *   least the run's: the true curve lies above the drawn one.
 * - The audit's test (`AuditResult.test`): its observed rates and their Clopper-Pearson upper
 *   bounds at the level each rate had in the bound (last model: (1 - confidence) / (2 x 41), the
 *   union over both rates and `canary-audit.ts`' 41 fixed thresholds; accountant model: the split
 *   threshold's (1 - confidence) / 2, `split-threshold.ts`). With probability >= confidence the
 *   mechanism's curve passes below the upper-bound point (f is non-increasing).
 * - The lower bound found: G_{mu_lower} when the verdict is the Gaussian shift's bound on mu, else
 *   f_{epsilonLower,delta}, which passes through the test's upper-bound point when the test's
 *   bound is the verdict.
 * Pure numbers: what a chart draws (`report/trade-off-chart.ts`) or a user tabulates.
 */
import { InvalidParameterError } from '../errors.js';
import { largestWhere } from '../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireInteger } from '../validate.js';
import type { AuditResult } from './audit-options.js';
import { FIXED_THRESHOLDS } from './canary-audit.js';
import { clopperPearsonUpper } from './bounds/clopper-pearson.js';
import { gaussianDpLogDelta, gaussianTradeOff } from './bounds/gaussian-dp-bound.js';

export interface TradeOffCurve {
  readonly label: string;
  /** What the curve is: the accountant's upper bound on privacy loss, or the audit's lower bound. */
  readonly role: 'accountant' | 'lowerBound';
  readonly points: readonly { readonly alpha: number; readonly beta: number }[];
}

export interface TradeOffTestPoint {
  readonly label: string;
  /** Observed false positive and false negative rates of the threshold test. */
  readonly alpha: number;
  readonly beta: number;
  /** Their Clopper-Pearson upper bounds, each at error probability `level`. */
  readonly alphaUpper: number;
  readonly betaUpper: number;
  readonly level: number;
}

export interface AuditTradeOffCurves {
  readonly title: string;
  readonly subtitle: string;
  readonly curves: readonly TradeOffCurve[];
  readonly tests: readonly TradeOffTestPoint[];
  /** The accountant's mu (DP-GD only): the Gaussian trade-off drawn for it. */
  readonly muAccounted?: number;
}

export interface TradeOffCurveOptions {
  /** Points of each smooth curve (default 200). */
  readonly points?: number;
}

const TRADE_OFF_CURVE_OPTIONS = optionNames<TradeOffCurveOptions>({ points: true });

/** f_{epsilon,delta}(alpha) (file comment): the lower edge of the (epsilon, delta) region. */
export function epsilonDeltaTradeOff(epsilon: number, delta: number, alpha: number): number {
  if (!(epsilon >= 0)) throw new InvalidParameterError('epsilon', epsilon, '>= 0');
  if (!(delta >= 0 && delta <= 1)) throw new InvalidParameterError('delta', delta, 'in [0, 1]');
  if (!(alpha >= 0 && alpha <= 1)) throw new InvalidParameterError('alpha', alpha, 'in [0, 1]');
  if (alpha === 0) return 1 - delta;
  if (epsilon === Infinity) return 0;
  return Math.max(0, 1 - delta - Math.exp(epsilon) * alpha, Math.exp(-epsilon) * (1 - delta - alpha));
}

/**
 * The mu whose Gaussian trade-off has epsilon `epsilon` at `delta` (DRS Cor. 2.13), rounded up:
 * the largest mu with delta_mu(epsilon) <= delta (found to 1e-12 relative), times 1 + 1e-11.
 */
export function gaussianMuOfEpsilon(epsilon: number, delta: number): number {
  if (!(epsilon >= 0)) throw new InvalidParameterError('epsilon', epsilon, '>= 0');
  if (!(delta > 0 && delta < 1)) throw new InvalidParameterError('delta', delta, 'in (0, 1)');
  if (epsilon === Infinity) return Infinity;
  const logDelta = Math.log(delta);
  const found = largestWhere((mu) => gaussianDpLogDelta(mu, epsilon) <= logDelta, { relativeTolerance: 1e-12, cap: 1e6 });
  return found.capped ? Infinity : found.value * (1 + 1e-11);
}

/** alpha in [0, 1]: `count` evenly spaced, 1e-6 .. 1e-2 on a log scale (the curves bend there), and `extra`. */
function alphaGrid(count: number, extra: readonly number[]): number[] {
  const grid = new Set<number>([0, 1, ...extra.filter((a) => a > 0 && a < 1)]);
  for (let i = 1; i < count; i++) grid.add(i / count);
  for (let k = 0; k <= 24; k++) grid.add(10 ** (-6 + k / 6));
  return [...grid].sort((a, b) => a - b);
}

function regionCurve(label: string, role: TradeOffCurve['role'], epsilon: number, delta: number, count: number): TradeOffCurve {
  const corner = epsilon === Infinity ? 0 : (1 - delta) / (1 + Math.exp(epsilon));
  return { label, role, points: alphaGrid(count, [corner, 1 - delta]).map((alpha) => ({ alpha, beta: epsilonDeltaTradeOff(epsilon, delta, alpha) })) };
}

function gaussianCurve(label: string, role: TradeOffCurve['role'], mu: number, count: number): TradeOffCurve {
  return { label, role, points: alphaGrid(count, []).map((alpha) => ({ alpha, beta: gaussianTradeOff(mu, alpha) })) };
}

/** The error probability each rate of the result's test had in its bound (file comment). */
export function testRateLevel(result: Pick<AuditResult, 'threatModel' | 'confidence'>): number {
  return result.threatModel === 'lastModel' ? (1 - result.confidence) / (2 * FIXED_THRESHOLDS) : (1 - result.confidence) / 2;
}

const fmt = (value: number) => Number(value.toPrecision(4)).toString();

/** The curves and points of an audit's trade-off figure (file comment). */
export function auditTradeOffCurves(result: AuditResult, options: TradeOffCurveOptions = {}): AuditTradeOffCurves {
  rejectUnknownOptions(options, TRADE_OFF_CURVE_OPTIONS, 'auditTradeOffCurves');
  const count = requireInteger('points', options.points ?? 200, 10, 100_000);
  const { delta } = result;
  const curves: TradeOffCurve[] = [regionCurve(`accountant: (epsilon, delta) = (${fmt(result.epsilonAccounted)}, ${fmt(delta)})`, 'accountant', result.epsilonAccounted, delta, count)];
  let muAccounted: number | undefined;
  if (result.method === 'dpgd') {
    muAccounted = gaussianMuOfEpsilon(result.epsilonAccounted, delta);
    curves.push(gaussianCurve(`accountant: Gaussian, mu = ${fmt(muAccounted)}`, 'accountant', muAccounted, count));
  }
  if (result.statistic === 'gaussianShift' && result.gaussian !== undefined) {
    curves.push(gaussianCurve(`lower bound: Gaussian, mu >= ${fmt(result.gaussian.muLower)} (epsilon >= ${fmt(result.epsilonLower)})`, 'lowerBound', result.gaussian.muLower, count));
  } else {
    curves.push(regionCurve(`lower bound: epsilon >= ${fmt(result.epsilonLower)}`, 'lowerBound', result.epsilonLower, delta, count));
  }
  const { falsePositives, falseNegatives, evaluated } = result.test;
  const level = testRateLevel(result);
  const tests: TradeOffTestPoint[] = [
    {
      label: `test: ${evaluated} runs per world, bounds at ${fmt(1 - level)}`,
      alpha: falsePositives / evaluated,
      beta: falseNegatives / evaluated,
      alphaUpper: clopperPearsonUpper(falsePositives, evaluated, level),
      betaUpper: clopperPearsonUpper(falseNegatives, evaluated, level),
      level,
    },
  ];
  const model = result.threatModel === 'accountant' ? 'accountant threat model' : 'last-model threat model';
  return {
    title: `${result.method === 'dpgd' ? 'DP-GD' : 'DP-SGD'} audit: trade-off curves (${model})`,
    subtitle: `epsilon >= ${fmt(result.epsilonLower)} with probability >= ${result.confidence}; accountant ${fmt(result.epsilonAccounted)} at delta = ${fmt(delta)}`,
    curves,
    tests,
    ...(muAccounted === undefined ? {} : { muAccounted }),
  };
}
