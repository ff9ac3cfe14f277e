/**
 * Neighbouring relations (docs/design.md, "Conventions"). Every guarantee states the relation it holds
 * under. Conventions, as in dp_accounting: Poisson subsampling (and so the DP-SGD shorthand) and
 * objective perturbation (`003`, Sec. 2) are add/remove-one; sampling without replacement,
 * non-uniform sampling of one record (`004` Thm. 4.2), randomized response and the shuffled-SGD
 * conjecture are replace-one. Gaussian, Laplace and RGM
 * events are relation-free: their guarantee holds for whichever relation their sensitivity was
 * computed under ("relativeToSensitivity"). Composing events of different relations is refused:
 * the user must convert explicitly (e.g. a replace-one sensitivity is at most twice an
 * add/remove-one one), never silently.
 */
import { UnsupportedEventError } from '../errors.js';
import type { DpEvent } from './events/types.js';
import { requireEventDepth } from './events/depth.js';
import { someEvent } from './events/tree.js';

export type NeighboringRelation = 'addOrRemoveOne' | 'replaceOne' | 'relativeToSensitivity';

function combine(root: DpEvent, parent: DpEvent, relations: NeighboringRelation[]): NeighboringRelation {
  let result: NeighboringRelation = 'relativeToSensitivity';
  for (const relation of relations) {
    if (relation === 'relativeToSensitivity') continue;
    if (result !== 'relativeToSensitivity' && result !== relation) {
      throw new UnsupportedEventError(
        root,
        parent,
        `it composes events under different neighbouring relations (${result} and ${relation}); convert one explicitly (e.g. recompute its sensitivity or sampling under the other relation)`,
      );
    }
    result = relation;
  }
  return result;
}

/** Requires `inner` to be relation-free or of `relation`; returns `relation`. */
function within(root: DpEvent, parent: DpEvent, relation: NeighboringRelation, inner: NeighboringRelation, why = ''): NeighboringRelation {
  if (inner !== 'relativeToSensitivity' && inner !== relation) {
    throw new UnsupportedEventError(root, parent, `a ${parent.kind} event is ${relation}, but its sub-event is ${inner}${why}`);
  }
  return relation;
}

/** The neighbouring relation under which an event's guarantee holds; throws on a mix. */
export function neighboringRelationOf(event: DpEvent, root: DpEvent = event): NeighboringRelation {
  requireEventDepth(event);
  return relationOf(event, root);
}

/** `neighboringRelationOf` after the depth check (recursion <= MAX_EVENT_DEPTH levels). */
function relationOf(event: DpEvent, root: DpEvent): NeighboringRelation {
  switch (event.kind) {
    case 'gaussian':
    case 'laplace':
    case 'relativeGaussian':
    case 'noOp':
    case 'nonPrivate':
      return 'relativeToSensitivity';
    case 'objectivePerturbation':
    case 'poissonSampled':
      return event.kind === 'poissonSampled'
        ? within(root, event, 'addOrRemoveOne', relationOf(event.event, root))
        : 'addOrRemoveOne';
    case 'randomizedResponse':
    case 'shuffledSgdConjecture':
    case 'shuffledLastIterate':
      return 'replaceOne';
    case 'sampledWithoutReplacement':
      return within(root, event, 'replaceOne', relationOf(event.event, root));
    case 'nonUniformSampled':
      // 004 Thm. 4.2 (as WBK 2019 Thm. 9) needs the same n and the same public weights on both
      // datasets: replace-one only.
      return within(root, event, 'replaceOne', relationOf(event.event, root), ' (non-uniform sampling is proven for replace-one neighbours only: the weights must be the same on both datasets)');
    case 'compose':
      return combine(root, event, event.events.map((e) => relationOf(e, root)));
    case 'selfCompose':
    case 'repeatAndSelect':
      return relationOf(event.event, root);
  }
}

/**
 * The relation of an accountant's composition after adding `event` to what it holds (`current`):
 * relation-free events keep it; a mix of add/remove and replace-one is refused.
 */
export function composedRelation(current: NeighboringRelation, event: DpEvent): NeighboringRelation {
  const relation = neighboringRelationOf(event);
  if (relation === 'relativeToSensitivity') return current;
  if (current !== 'relativeToSensitivity' && current !== relation) {
    throw new UnsupportedEventError(
      event,
      event,
      `it composes events under different neighbouring relations (${current} and ${relation}); convert one explicitly (e.g. recompute its sensitivity or sampling under the other relation)`,
    );
  }
  return relation;
}

/** true when the event (anywhere inside) relies on a conjecture rather than a theorem. */
export function containsConjecture(event: DpEvent): boolean {
  return someEvent(event, (e) => e.kind === 'shuffledSgdConjecture');
}
