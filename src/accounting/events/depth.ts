/**
 * Depth. Events are trees walked by every accountant, mostly by recursion; an event nested deeper
 * than `MAX_EVENT_DEPTH` (100) is refused with an `InvalidParameterError` naming the path of the
 * first event beyond the limit, by `parseEvent` (before any recursion, also for JSON that is merely
 * deeply nested arrays or objects: `requireJsonDepth`) and by every public entry point that takes
 * an event (`requireEventDepth`, an iterative walk). See `MAX_EVENT_DEPTH` for why 100.
 */
import { InvalidParameterError } from '../../errors.js';
import type { DpEvent } from './types.js';

/**
 * The deepest nesting of events accepted anywhere (an event alone has depth 1; compose([e]) has
 * depth 2). Real events are shallow: the deepest dpfit builds is private selection over
 * one-vs-rest DP-SGD, repeatAndSelect(compose(selfCompose(poissonSampled(gaussian)))), about 5
 * levels, and ledgers compose flat lists; 100 is 20 times that, so no real event is refused. It
 * is also far below what the recursive walks survive: parsing and accounting an event of depth
 * 100 passes with a fifth of V8's default stack (`node --stack-size=200`; the walks cost up to
 * ~1.2 KB of stack per level, and ~1,500 levels overflowed the default stack before this limit),
 * which leaves room for callers with deep stacks of their own and browsers with smaller ones. Every public entry point
 * that takes an event checks it first (`requireEventDepth`, iterative) and `parseEvent` checks raw
 * JSON before building anything.
 */
export const MAX_EVENT_DEPTH = 100;

/**
 * Raw JSON may nest objects and arrays at most this deep: an event of depth d nests at most 2d
 * (an object per event, an array per `events` list), so nothing valid is refused, and every value
 * that reaches the field checks is shallow enough for their error messages (which serialise it).
 */
export const MAX_JSON_DEPTH = 2 * MAX_EVENT_DEPTH + 1;

/** A path of at most ~160 characters for messages: the head, the number of levels, the tail. */
function shortPath(path: string, levels: number): string {
  if (path.length <= 160) return path;
  const head = path.slice(0, 70);
  const tail = path.slice(-70);
  const cutHead = Math.max(head.lastIndexOf('.'), head.lastIndexOf('['));
  const cutTail = Math.min(...['.', '['].map((c) => tail.indexOf(c)).filter((i) => i >= 0));
  return `${cutHead > 0 ? head.slice(0, cutHead) : head} ...(${levels} levels)... ${Number.isFinite(cutTail) ? tail.slice(cutTail) : tail}`;
}

/**
 * An event (or JSON) nested deeper than the limit: an `InvalidParameterError` whose `param` is the
 * full path of the first value beyond the limit (`event.events[0].events[0]...`), whose `value` is
 * the depth reached (never the nested value itself, whose serialisation would recurse), and whose
 * message shows the path shortened.
 */
export class EventDepthError extends InvalidParameterError {
  constructor(path: string, depth: number, limit: number, what: 'events' | 'JSON levels') {
    super(path, depth, `nested at most ${limit} ${what} deep (MAX_EVENT_DEPTH = ${MAX_EVENT_DEPTH})`);
    this.message = `${shortPath(path, depth)} must be nested at most ${limit} ${what} deep (MAX_EVENT_DEPTH = ${MAX_EVENT_DEPTH}), got depth ${depth}`;
  }
}

interface WalkFrame {
  readonly value: unknown;
  readonly depth: number;
  readonly parent: WalkFrame | undefined;
  /** The path segment from the parent: '.field' or '[i]' ('' at the root). */
  readonly segment: string;
}

function framePath(root: string, frame: WalkFrame): string {
  const segments: string[] = [];
  for (let f: WalkFrame | undefined = frame; f !== undefined; f = f.parent) segments.push(f.segment);
  return root + segments.reverse().join('');
}

/**
 * Throws `EventDepthError` when `event` nests more than `MAX_EVENT_DEPTH` events (a cycle, possible
 * in an event built in code, counts as too deep). Iterative (an explicit stack), O(size of the
 * event). Returns the event's depth. Every public function that walks an event calls it first.
 */
export function requireEventDepth(event: DpEvent, param = 'event'): number {
  let deepest = 0;
  const stack: WalkFrame[] = [{ value: event, depth: 1, parent: undefined, segment: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.depth > MAX_EVENT_DEPTH) throw new EventDepthError(framePath(param, frame), frame.depth, MAX_EVENT_DEPTH, 'events');
    if (frame.depth > deepest) deepest = frame.depth;
    const e = frame.value as DpEvent;
    if (e === null || typeof e !== 'object') continue;
    if (e.kind === 'compose') {
      if (!Array.isArray(e.events)) continue;
      for (let i = e.events.length - 1; i >= 0; i--) stack.push({ value: e.events[i], depth: frame.depth + 1, parent: frame, segment: `.events[${i}]` });
    } else if ('event' in e && (e.kind === 'poissonSampled' || e.kind === 'sampledWithoutReplacement' || e.kind === 'nonUniformSampled' || e.kind === 'selfCompose' || e.kind === 'repeatAndSelect')) {
      stack.push({ value: e.event, depth: frame.depth + 1, parent: frame, segment: '.event' });
    }
  }
  return deepest;
}

/**
 * The raw-JSON check of `parseEvent`, before anything recurses: objects (events) nested at most
 * `MAX_EVENT_DEPTH` deep, objects and arrays together at most `MAX_JSON_DEPTH`. Iterative.
 */
export function requireJsonDepth(value: unknown, path: string): void {
  interface JsonFrame extends WalkFrame {
    /** Objects on the path to this value, itself included. */
    readonly objects: number;
  }
  if (value === null || typeof value !== 'object') return;
  const stack: JsonFrame[] = [{ value, depth: 1, objects: Array.isArray(value) ? 0 : 1, parent: undefined, segment: '' }];
  while (stack.length > 0) {
    const frame = stack.pop()!;
    if (frame.objects > MAX_EVENT_DEPTH) throw new EventDepthError(framePath(path, frame), frame.objects, MAX_EVENT_DEPTH, 'events');
    if (frame.depth > MAX_JSON_DEPTH) throw new EventDepthError(framePath(path, frame), frame.depth, MAX_JSON_DEPTH, 'JSON levels');
    const v = frame.value;
    const children: [string, unknown][] = Array.isArray(v) ? v.map((c, i) => [`[${i}]`, c]) : Object.entries(v as object).map(([k, c]) => [`.${k}`, c]);
    for (let i = children.length - 1; i >= 0; i--) {
      const [segment, child] = children[i];
      if (child === null || typeof child !== 'object') continue;
      stack.push({ value: child, depth: frame.depth + 1, objects: frame.objects + (Array.isArray(child) ? 0 : 1), parent: frame, segment });
    }
  }
}
