/**
 * The privacy report every learner returns (issue 6: `{model, privacy, diagnostics}`): the
 * DpEvent the run released, accounted by the RDP accountant (and the PLD accountant when given),
 * the neighbouring relation, whether the guarantee is proven or a conjecture, and the randomness
 * used. The headline (epsilon, delta) is the tightest valid one among the accountants.
 */
import { eventToJson, type DpEvent } from '../accounting/events.js';
import type { GuaranteeKind, PrivacyGuarantee } from '../accounting/guarantee.js';
import { neighboringRelationOf, type NeighboringRelation } from '../accounting/neighboring.js';
import { rdpEpsilon, type RdpAccountantOptions } from '../accounting/rdp/accountant.js';
import type { Rng } from '../random/rng.js';

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
  readonly randomness: string;
  readonly warnings: readonly string[];
}

/** An accountant returning a guarantee for an event at delta (e.g. the PLD accountant). */
export type ExtraAccountant = (event: DpEvent, delta: number) => (PrivacyGuarantee & { epsilonLower?: number }) | undefined;

export interface PrivacyReportOptions {
  /** The relation the learner's sensitivity was computed under (used when the event is relation-free). */
  readonly relation: Exclude<NeighboringRelation, 'relativeToSensitivity'>;
  readonly rng: Rng;
  readonly rdpOptions?: RdpAccountantOptions;
  readonly pld?: ExtraAccountant;
  readonly comparisons?: Record<string, { epsilon: number; delta: number; noiseMultiplier?: number }>;
  readonly warnings?: readonly string[];
}

export function privacyReport(event: DpEvent, delta: number, options: PrivacyReportOptions): PrivacyReport {
  const rdp = rdpEpsilon(event, delta, options.rdpOptions);
  const eventRelation = neighboringRelationOf(event);
  const relation = eventRelation === 'relativeToSensitivity' ? options.relation : eventRelation;
  const warnings = [...rdp.warnings, ...(options.warnings ?? [])];
  if (!options.rng.secure) warnings.push(`the noise came from a seeded generator (${options.rng.description}): fine for experiments, not for a real release`);
  const pld = options.pld?.(event, delta);
  const best = pld !== undefined && pld.epsilon < rdp.epsilon ? pld : rdp;
  if (pld !== undefined) warnings.push(...pld.warnings);
  return Object.freeze({
    epsilon: best.epsilon,
    delta,
    accountant: best.accountant,
    event: eventToJson(event),
    neighboringRelation: relation,
    guarantee: rdp.guarantee,
    rdp: { epsilon: rdp.epsilon, order: rdp.order },
    ...(pld === undefined ? {} : { pld: { epsilon: pld.epsilon, ...(pld.epsilonLower === undefined ? {} : { epsilonLower: pld.epsilonLower }) } }),
    ...(options.comparisons === undefined ? {} : { comparisons: options.comparisons }),
    randomness: options.rng.description,
    warnings: Object.freeze([...new Set(warnings)]),
  });
}
