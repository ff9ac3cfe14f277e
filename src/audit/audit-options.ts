/**
 * What every audit takes and returns (`canary-audit.ts`, the last-model threat model;
 * `accountant-audit.ts`, the accountant's), and the checks of its options, made before any run.
 */
import { InvalidParameterError } from '../errors.js';
import type { Rng } from '../random/rng.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireOpenUnit, requirePositive } from '../validate.js';

export type AuditMethod = 'dpgd' | 'dpsgd';

/**
 * What the adversary sees. 'lastModel': the released model only (what users publish), the canary a
 * record. 'accountant': every step's released noisy gradient sum, the canary a gradient the
 * adversary inserts at every step (what the accountant's composition assumes).
 */
export type ThreatModel = 'lastModel' | 'accountant';

/** The statistic whose bound is the audit's verdict (fixed by the method and threat model, before any run). */
export type AuditStatistic = 'fixedThresholds' | 'splitThreshold' | 'gaussianShift' | 'perStepComposed' | 'subsampledGaussian';

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
  /**
   * The confidence of the refutation verdict (`violated`), default 1 - 0.05 / 100: a family of 100
   * audits of true claims then refutes one with probability <= 5 % (Bonferroni), where a 95 % bound
   * alone would refute ~5 % of them. `epsilonLower` stays at `confidence`.
   */
  readonly refuteConfidence?: number;
  /** Default 'lastModel'. */
  readonly threatModel?: ThreatModel;
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
  /** The lower bound on epsilon at `delta`, holding with probability >= confidence: the bound of `statistic`. */
  readonly epsilonLower: number;
  readonly epsilonClaimed: number;
  /** The tightest epsilon dpfit proves for the runs (`accounted-epsilon.ts`: the smaller of the learner's report and the PLD's): the upper bound audited by default. */
  readonly epsilonAccounted: number;
  readonly delta: number;
  readonly runs: number;
  readonly confidence: number;
  /** The verdict statistic's bound at `refuteConfidence`, and its confidence. */
  readonly refuteLower: number;
  readonly refuteConfidence: number;
  /** refuteLower > epsilonClaimed: the claim is refuted (with probability >= refuteConfidence). */
  readonly violated: boolean;
  /** The threshold test on the run statistic: its threshold, false positive and false negative counts out of `evaluated` runs each. */
  readonly test: { readonly threshold: number; readonly falsePositives: number; readonly falseNegatives: number; readonly evaluated: number };
  readonly threatModel: ThreatModel;
  readonly statistic: AuditStatistic;
  /** Every bound computed, each holding with probability >= confidence by itself (only `statistic`'s decides). */
  readonly bounds: Readonly<Partial<Record<AuditStatistic, number>>>;
  /** The subsampled Gaussian's region and most private corner (DP-SGD, accountant threat model: `subsampled-gaussian-bound.ts`). */
  readonly subsampled?: { readonly std: number; readonly stdUpper: number; readonly mean: number; readonly meanLower: number; readonly meanUpper: number; readonly excess: number; readonly excessLower: number; readonly corner?: { readonly shift: number; readonly rate: number; readonly std: number }; readonly nominal: { readonly shift: number; readonly rate: number; readonly std: number } };
  /** The Gaussian shift's mu (DP-GD, accountant threat model): its estimate, lower bound, and the released noise's nominal value. */
  readonly gaussian?: { readonly muEstimate: number; readonly muLower: number; readonly muNominal: number };
}

export interface ResolvedAudit {
  readonly method: AuditMethod;
  readonly threatModel: ThreatModel;
  readonly epsilon: number;
  readonly delta: number;
  readonly runs: number;
  readonly confidence: number;
  readonly refuteConfidence: number;
  readonly steps: number;
  readonly clipNorm: number;
  readonly learningRate: number;
  readonly rows: number;
  readonly features: number;
  readonly batchSize: number;
}

/** The accountant's threat model keeps runs x steps released values of each world in memory: at most this many (400 MB for both). */
export const MAX_RELEASED_VALUES = 2.5e7;

/** The default confidence of the refutation verdict: a family-wise 5 % over 100 audits (Bonferroni). */
export const DEFAULT_REFUTE_CONFIDENCE = 1 - 0.05 / 100;

export const AUDIT_OPTIONS = optionNames<AuditOptions>({ method: true, epsilon: true, delta: true, claimedEpsilon: true, runs: true, confidence: true, refuteConfidence: true, threatModel: true, steps: true, clipNorm: true, learningRate: true, batchSize: true, rows: true, features: true, rng: true, onRun: true });

/** Validates the options of `where` (every check before any run). */
export function resolveAudit(options: AuditOptions, where: string): ResolvedAudit {
  rejectUnknownOptions(options, AUDIT_OPTIONS, where);
  const method = options.method;
  if (method !== 'dpgd' && method !== 'dpsgd') throw new InvalidParameterError('method', method, "'dpgd' or 'dpsgd'");
  const threatModel = options.threatModel ?? 'lastModel';
  if (threatModel !== 'lastModel' && threatModel !== 'accountant') throw new InvalidParameterError('threatModel', threatModel, "'lastModel' or 'accountant'");
  const rows = requireInteger('rows', options.rows ?? 100, 10);
  const runs = requireInteger('runs', options.runs, 20);
  const steps = requireInteger('steps', options.steps ?? 20, 1);
  if (threatModel === 'accountant' && runs * steps > MAX_RELEASED_VALUES) {
    throw new InvalidParameterError('runs', runs, `at most ${Math.floor(MAX_RELEASED_VALUES / steps)} with ${steps} steps (runs x steps <= ${MAX_RELEASED_VALUES}: the released values the accountant model's statistics hold in memory)`);
  }
  return {
    method,
    threatModel,
    epsilon: requirePositive('epsilon', options.epsilon),
    delta: requireOpenUnit('delta', options.delta),
    runs,
    confidence: requireOpenUnit('confidence', options.confidence ?? 0.95),
    refuteConfidence: requireOpenUnit('refuteConfidence', options.refuteConfidence ?? DEFAULT_REFUTE_CONFIDENCE),
    steps,
    clipNorm: requirePositive('clipNorm', options.clipNorm ?? 1),
    learningRate: requirePositive('learningRate', options.learningRate ?? 0.5),
    rows,
    features: requireInteger('features', options.features ?? 5, 1),
    batchSize: requireInteger('batchSize', options.batchSize ?? Math.max(1, Math.floor(rows / 10)), 1, rows + 1),
  };
}
