/**
 * The privacy report every learner returns and every model file embeds (docs/design.md, "What a release
 * may contain"): the DpEvent the run released, accounted by the RDP accountant (and a tighter one
 * when given), the neighbouring relation, the grid of the noise, the randomness used, and what
 * holds: `guarantee` is `proven` only when every assumption of the theorem used holds for what was
 * actually run; otherwise `conjecture` or `none`, with the reasons in `warnings`.
 *
 * A report holds only public or accounted values: the event, constants fixed before the data
 * were read, and the accountants' answers. Nothing computed from the private data or from the
 * noise (norms, residuals, iteration counts, clipped fractions, metrics) belongs here; those are
 * the data owner's diagnostics.
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { eventToJson } from '../../accounting/events/json.js';
import type { GuaranteeKind, PrivacyGuarantee } from '../../accounting/guarantee.js';
import { neighboringRelationOf, type NeighboringRelation } from '../../accounting/neighboring.js';
import { rdpEpsilon, type RdpAccountantOptions } from '../../accounting/rdp/accountant.js';
import type { Rng } from '../../random/rng.js';

export interface PrivacyReport {
  readonly epsilon: number;
  readonly delta: number;
  readonly accountant: string;
  readonly event: unknown;
  readonly neighboringRelation: NeighboringRelation;
  readonly guarantee: GuaranteeKind;
  readonly rdp: { readonly epsilon: number; readonly order?: number };
  readonly pld?: { readonly epsilon: number; readonly epsilonLower?: number };
  /** Other bounds computed for comparison (e.g. basic composition as in `002` Claim 2.3). */
  readonly comparisons?: Readonly<Record<string, { readonly epsilon: number; readonly delta: number; readonly noiseMultiplier?: number }>>;
  /**
   * The public power-of-two grid the released noise lives on (exact discrete noise, Canonne,
   * Kamath & Steinke 2020). Absent for floating-point noise (then `guarantee` is `none`).
   */
  readonly granularity?: number;
  /** For releases with several noisy parts (e.g. AMP's objective and output noise): each part's grid. */
  readonly granularities?: Readonly<Record<string, number>>;
  readonly randomness: string;
  readonly warnings: readonly string[];
  /** Which number of records n the released values depend on, and why it may be public (`dataset-size.ts`). */
  readonly datasetSize?: DatasetSizeReport;
  /**
   * RGM for a GLM (`rgm/rgm-glm.ts`): the public values its relative sensitivity is derived from
   * for every dataset (no Propose-Test-Release), so that `verify` can re-derive eta and R_rel.
   */
  readonly relativeSensitivity?: RelativeSensitivityReport;
}

/** The public inputs of RGM's relative sensitivity for a GLM (`000` App. B.2); n is `datasetSize.value`. */
export interface RelativeSensitivityReport {
  readonly source: 'glm';
  readonly featureClip: number;
  readonly regularization: number;
}

/** Which n is public (`dataset-size.ts`). */
export interface DatasetSizeReport {
  /** The n released values depend on (absent when none does). */
  readonly value?: number;
  /** 'records': the count of records read; 'declared': `datasetSize`; 'unused': no released value depends on n. */
  readonly source: 'records' | 'declared' | 'unused';
  /** Why that n may be public, in words. */
  readonly note: string;
}

/** An accountant returning a guarantee for an event at delta (e.g. the PLD accountant). */
export type ExtraAccountant = (event: DpEvent, delta: number) => (PrivacyGuarantee & { epsilonLower?: number }) | undefined;

/** An assumption of the guarantee that the run does not meet: the guarantee is lowered to `level`. */
export interface GuaranteeCondition {
  readonly level: 'conjecture' | 'none';
  readonly reason: string;
}

export interface PrivacyReportOptions {
  /** The relation the learner's sensitivity was computed under (used when the event is relation-free). */
  readonly relation: Exclude<NeighboringRelation, 'relativeToSensitivity'>;
  readonly rng: Rng;
  readonly rdpOptions?: RdpAccountantOptions;
  readonly pld?: ExtraAccountant;
  readonly comparisons?: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }>;
  readonly warnings?: readonly string[];
  /** The grid of the released noise (undefined: floating-point noise, which proves nothing). */
  readonly granularity?: number;
  readonly granularities?: Readonly<Record<string, number>>;
  /** Assumptions the run does not meet (each lowers the guarantee and adds its reason). */
  readonly conditions?: readonly GuaranteeCondition[];
}

const LEVELS: readonly GuaranteeKind[] = ['proven', 'conjecture', 'none'];

/** The weaker of two guarantee levels (`none` < `conjecture` < `proven`). */
export function weakerGuarantee(a: GuaranteeKind, b: GuaranteeKind): GuaranteeKind {
  return LEVELS.indexOf(a) >= LEVELS.indexOf(b) ? a : b;
}

/**
 * The randomness as a report may state it: the generator's kind, never a seed (a published seed
 * lets anyone regenerate the noise).
 */
export function publicRandomness(rng: Rng): string {
  return rng.secure ? rng.description : 'seeded pseudo-random generator (not secure) — NOT for privacy';
}

/** The conditions every learner checks itself: secure randomness and noise on a grid. */
export function randomnessConditions(rng: Rng, gridded: boolean): GuaranteeCondition[] {
  const conditions: GuaranteeCondition[] = [];
  if (!rng.secure) {
    conditions.push({ level: 'none', reason: 'the noise came from a seeded generator: whoever knows or guesses the seed can regenerate it, so this release is NOT private (seeds are for experiments)' });
  }
  if (!gridded) {
    conditions.push({ level: 'none', reason: 'the noise is continuous floating-point noise, which floating-point attacks can tell apart (Mironov 2012): no guarantee is proven for it' });
  }
  return conditions;
}

/**
 * A report with extra unmet assumptions: the guarantee is lowered and the reasons added. Used by
 * callers that know more than the learner, e.g. the CLI about a schema read from the private data.
 */
export function withConditions<R extends PrivacyReport>(report: R, conditions: readonly GuaranteeCondition[]): R {
  if (conditions.length === 0) return report;
  let guarantee = report.guarantee;
  for (const c of conditions) guarantee = weakerGuarantee(guarantee, c.level);
  const warnings = [...new Set([...conditions.map((c) => c.reason), ...report.warnings])];
  return Object.freeze({ ...report, guarantee, warnings: Object.freeze(warnings) });
}

export function privacyReport(event: DpEvent, delta: number, options: PrivacyReportOptions): PrivacyReport {
  const rdp = rdpEpsilon(event, delta, options.rdpOptions);
  const eventRelation = neighboringRelationOf(event);
  const relation = eventRelation === 'relativeToSensitivity' ? options.relation : eventRelation;
  const warnings = [...rdp.warnings, ...(options.warnings ?? [])];
  const pld = options.pld?.(event, delta);
  const best = pld !== undefined && pld.epsilon < rdp.epsilon ? pld : rdp;
  if (pld !== undefined) warnings.push(...pld.warnings);
  const gridded = options.granularity !== undefined;
  const report: PrivacyReport = Object.freeze({
    epsilon: best.epsilon,
    delta,
    accountant: best.accountant,
    event: eventToJson(event),
    neighboringRelation: relation,
    guarantee: rdp.guarantee,
    rdp: { epsilon: rdp.epsilon, order: rdp.order },
    ...(pld === undefined ? {} : { pld: { epsilon: pld.epsilon, ...(pld.epsilonLower === undefined ? {} : { epsilonLower: pld.epsilonLower }) } }),
    ...(options.comparisons === undefined ? {} : { comparisons: options.comparisons }),
    ...(gridded ? { granularity: options.granularity } : {}),
    ...(options.granularities === undefined ? {} : { granularities: options.granularities }),
    randomness: publicRandomness(options.rng),
    warnings: Object.freeze([...new Set(warnings)]),
  });
  return withConditions(report, [...randomnessConditions(options.rng, gridded), ...(options.conditions ?? [])]);
}

/**
 * The report of a run with no noise: epsilon Infinity and no guarantee, said plainly. Every
 * model file carries a privacy block, this one included.
 */
export function nonPrivateReport(rng: Rng, relation: Exclude<NeighboringRelation, 'relativeToSensitivity'> = 'replaceOne'): PrivacyReport {
  return Object.freeze({
    epsilon: Infinity,
    delta: 0,
    accountant: 'none',
    event: { kind: 'nonPrivate' },
    neighboringRelation: relation,
    guarantee: 'none',
    rdp: { epsilon: Infinity },
    randomness: publicRandomness(rng),
    warnings: Object.freeze(['no noise was added: this model is NOT private (epsilon is infinite)']),
  });
}
