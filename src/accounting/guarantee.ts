/**
 * What an accountant reports: a privacy guarantee that is an upper bound (DESIGN.md), with the
 * neighbouring relation it holds under, whether it rests on a theorem or a conjecture, and
 * warnings a careful user should read.
 */
import type { NeighboringRelation } from './neighboring.js';

export type GuaranteeKind = 'proven' | 'conjecture';

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
  readonly warnings: readonly string[];
}
