/**
 * What an accountant reports: a privacy guarantee that is an upper bound (docs/design.md), with the
 * neighbouring relation it holds under, whether it rests on a theorem or a conjecture, and
 * warnings a careful user should read.
 */
import type { NeighboringRelation } from './neighboring.js';

/**
 * What holds: `proven` (a theorem whose every assumption holds for what was run), `conjecture`
 * (a bound that rests on an unproven statement, or on an assumption the run cannot meet, such
 * as an exact minimiser), `none` (no guarantee: e.g. no noise, seeded noise, floating-point
 * noise, a schema read from the private data). Reports say why in their warnings.
 */
export type GuaranteeKind = 'proven' | 'conjecture' | 'none';

export interface PrivacyGuarantee {
  readonly epsilon: number;
  readonly delta: number;
  readonly accountant: 'rdp' | 'pld' | 'pure' | 'exactGaussian';
  /** The Rényi order that achieved the bound (RDP accountant). */
  readonly order?: number;
  /** Which RDP -> DP conversion achieved it. */
  readonly conversion?: string;
  readonly neighboringRelation: NeighboringRelation;
  readonly guarantee: GuaranteeKind;
  /** What a careful user should read: assumptions, weaker conversions, fallbacks. */
  readonly warnings: readonly string[];
  /** How the bound was obtained, when it is worth saying but nothing to worry about (not a warning). */
  readonly notes?: readonly string[];
}
