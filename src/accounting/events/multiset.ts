/**
 * A composition as a multiset: `compose` and `selfCompose` are flattened (counts multiplied) into
 * the distinct releases they contain, each with its total count, so that k identical sub-events
 * cost what `selfCompose(e, k)` costs: one RDP curve (one PLD) times k. Releases are identified by
 * `eventKey` (every field the accountants read, in a fixed order). The walk is iterative.
 */
import type { DpEvent } from './types.js';
import { requireEventDepth } from './depth.js';
import { eventKey } from './tree.js';
import { nextUp } from '../float-steps.js';

/** One distinct release of a composition and how many times it occurs. */
export interface CompositionAtom {
  readonly key: string;
  /** The first occurrence (every occurrence has the same key, so any would do). */
  readonly event: DpEvent;
  /** Total count, > 0; a product of nested counts above 2^53 is rounded up. */
  count: number;
}

/** count a * b, rounded up when the product is not exact. */
function multiply(a: number, b: number): number {
  const product = a * b;
  return Number.isSafeInteger(product) ? product : nextUp(product);
}

/**
 * Adds the releases of `event` (count times) to `into` (a map from key to atom, in order of first
 * appearance) and returns it. `noOp` and zero counts contribute nothing. Checks the depth first
 * (`requireEventDepth`; the keys recurse into sub-events that are not compositions).
 */
export function addCompositionAtoms(event: DpEvent, count = 1, into: Map<string, CompositionAtom> = new Map()): Map<string, CompositionAtom> {
  requireEventDepth(event);
  const stack: { event: DpEvent; count: number }[] = [{ event, count }];
  while (stack.length > 0) {
    const { event: e, count: k } = stack.pop()!;
    if (k === 0) continue;
    switch (e.kind) {
      case 'compose':
        for (let i = e.events.length - 1; i >= 0; i--) stack.push({ event: e.events[i], count: k });
        break;
      case 'selfCompose':
        if (e.count > 0) stack.push({ event: e.event, count: multiply(k, e.count) });
        break;
      case 'noOp':
        break;
      default: {
        const key = eventKey(e);
        const atom = into.get(key);
        if (atom === undefined) into.set(key, { key, event: e, count: k });
        else atom.count = Number.isSafeInteger(atom.count + k) ? atom.count + k : nextUp(atom.count + k);
      }
    }
  }
  return into;
}
