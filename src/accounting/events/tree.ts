/**
 * Events as trees: the sub-events of an event, a search through them, nested Poisson sampling as
 * one, and canonical keys (equal keys, the same release).
 */
import { requireEventDepth } from './depth.js';
import { EVENT_FIELDS, type DpEvent, type PoissonSampledEvent } from './types.js';

/**
 * Nested Poisson sampling as one: a record kept with probability q1, then with q2, is kept with
 * probability q1 q2 independently of the others, so poissonSampled(q1, poissonSampled(q2, e)) is
 * poissonSampled(q1 q2, e). The product is rounded up (a larger rate is less private: Poisson
 * sampling at q is sampling at q / q' followed by sampling at q', and sampling never hurts), so
 * accounting at the returned rate is an upper bound. Returns the rate and the first event below
 * the chain that is not Poisson sampling.
 */
export function flattenPoissonSampling(event: PoissonSampledEvent): { samplingProbability: number; event: DpEvent } {
  let q = event.samplingProbability;
  let inner = event.event;
  while (inner.kind === 'poissonSampled') {
    const product = q * inner.samplingProbability;
    q = Math.min(1, product + Math.max(product * Number.EPSILON, Number.MIN_VALUE)); // >= the exact product (rounding <= half an ulp, or half the least subnormal)
    inner = inner.event;
  }
  return { samplingProbability: q, event: inner };
}

/** The events directly inside `event` (none for a mechanism). */
export function childEvents(event: DpEvent): readonly DpEvent[] {
  switch (event.kind) {
    case 'compose':
      return event.events;
    case 'poissonSampled':
    case 'sampledWithoutReplacement':
    case 'nonUniformSampled':
    case 'selfCompose':
    case 'repeatAndSelect':
      return [event.event];
    default:
      return [];
  }
}

/**
 * true when `test` holds for the event or any event inside it (pre-order, an explicit stack: no
 * recursion, so any depth is safe; `requireEventDepth` still bounds it, which also stops cycles).
 */
export function someEvent(event: DpEvent, test: (e: DpEvent) => boolean): boolean {
  requireEventDepth(event);
  const stack: DpEvent[] = [event];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (test(e)) return true;
    const children = childEvents(e);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
  return false;
}

/** The numeric and flag fields of each kind (its JSON fields without the sub-events): what a canonical key covers. */
const KEY_FIELDS: Readonly<Record<string, readonly string[]>> = Object.fromEntries(Object.entries(EVENT_FIELDS).map(([kind, fields]) => [kind, fields.filter((f) => f !== 'event' && f !== 'events')]));

/**
 * A canonical string for an event: equal keys <=> the same release (the same kind, the same
 * numbers — every field the accountants read, in a fixed order, `discrete: false` the same as
 * absent — and equal sub-events in the same order). Used to group identical sub-events of a
 * composition so that each is accounted once and its count multiplied. Call on events that passed
 * `requireEventDepth` (it recurses through sub-events).
 *
 * @example eventKey(gaussianEvent(1.1)) // 'gaussian(noiseMultiplier=1.1)'
 */
export function eventKey(event: DpEvent): string {
  const record = event as unknown as Record<string, unknown>;
  const parts: string[] = [];
  for (const field of KEY_FIELDS[event.kind]) {
    const value = record[field];
    if (value === undefined || (field === 'discrete' && value === false)) continue;
    parts.push(`${field}=${String(value)}`);
  }
  if (event.kind === 'compose') return `compose[${event.events.map(eventKey).join(',')}]`;
  const children = childEvents(event);
  if (children.length === 1) parts.push(`event=${eventKey(children[0])}`);
  return `${event.kind}(${parts.join(',')})`;
}
