/**
 * What an accountant is: the interface that the Rényi-DP accountant (`rdp/accountant.ts`) and the
 * PLD accountant (`pld/accountant.ts`) implement, as dp_accounting's: `supports(event)`,
 * `compose(event, count)`, `getEpsilon(delta)`, `getDelta(epsilon)`.
 *
 * `EventAccountant` is the part they share, written once:
 * - `supports` is the accountant's own support check plus the event's neighbouring relation
 *   (`neighboring.ts`): false on a DpfitError, any other error thrown;
 * - `compose` validates the whole event (count, support, relation, and the accountant's own
 *   `prepare`) before the state changes, then commits, so a refused event leaves it as it was;
 * - the relation of everything composed, which every guarantee states;
 * - gridded discrete noise (`discrete-coupling.ts`): once composed, queries are asked one
 *   ulp inside and their results rounded one ulp outward, which covers the smoothing coupling's
 *   factors (that module's "Why one ulp dominates").
 */
import { DpfitError } from '../errors.js';
import { requireInteger } from '../validate.js';
import { containsGriddedDiscreteNoise } from './discrete-coupling.js';
import type { DpEvent } from './events/types.js';
import { nextDown, nextUp } from './float-steps.js';
import type { PrivacyGuarantee } from './guarantee.js';
import { composedRelation, neighboringRelationOf, type NeighboringRelation } from './neighboring.js';

/** An accountant: composes events and answers (epsilon, delta) queries on their composition. */
export interface Accountant<G extends PrivacyGuarantee = PrivacyGuarantee> {
  /** Whether the accountant can handle the event (and all its sub-events). */
  supports(event: DpEvent): boolean;
  /** Adds `count` adaptive repetitions of `event`; validates everything before changing state. */
  compose(event: DpEvent, count?: number): this;
  /** The smallest epsilon such that the composition is (epsilon, delta)-DP by this accountant. */
  getEpsilon(delta: number): G;
  /** The smallest delta such that the composition is (epsilon, delta)-DP by this accountant. */
  getDelta(epsilon: number): G;
}

/** The shared part of the accountants that compose DpEvents (file comment). */
export abstract class EventAccountant<G extends PrivacyGuarantee = PrivacyGuarantee> implements Accountant<G> {
  /** The neighbouring relation of everything composed so far (`neighboring.ts` rules). */
  protected relation: NeighboringRelation = 'relativeToSensitivity';
  /** true once an event with gridded discrete noise was composed (file comment). */
  protected gridded = false;

  /** Throws UnsupportedEventError for the first sub-event this accountant cannot handle. */
  protected abstract checkSupport(event: DpEvent): void;

  /**
   * Validates `count` repetitions of `event` (supported, of a relation compatible with what was
   * composed) and returns what adds them to the state; may throw, but must change nothing until
   * the commit it returns is called, and that commit must not throw.
   */
  protected abstract prepare(event: DpEvent, count: number): () => void;

  abstract getEpsilon(delta: number): G;
  abstract getDelta(epsilon: number): G;

  supports(event: DpEvent): boolean {
    try {
      this.checkSupport(event);
      neighboringRelationOf(event);
      return true;
    } catch (error) {
      if (error instanceof DpfitError) return false;
      throw error;
    }
  }

  compose(event: DpEvent, count = 1): this {
    requireInteger('count', count, 0);
    // The count multiplies the releases (no selfCompose wrapper: an event at the depth limit stays within it).
    this.checkSupport(event);
    const relation = composedRelation(this.relation, event);
    const gridded = containsGriddedDiscreteNoise(event);
    const commit = this.prepare(event, count);
    // Validated: commit.
    commit();
    this.relation = relation;
    this.gridded ||= gridded;
    return this;
  }

  /** epsilon rounded one ulp up when gridded discrete noise was composed (file comment). */
  protected outwardEpsilon(epsilon: number): number {
    return this.gridded ? nextUp(epsilon) : epsilon;
  }

  /** delta rounded one ulp up (at most 1) when gridded discrete noise was composed. */
  protected outwardDelta(delta: number): number {
    return this.gridded ? Math.min(1, nextUp(delta)) : delta;
  }

  /** The epsilon to query at: one ulp below a positive epsilon when gridded discrete noise was composed. */
  protected inwardEpsilon(epsilon: number): number {
    return this.gridded && epsilon > 0 ? nextDown(epsilon) : epsilon;
  }
}
