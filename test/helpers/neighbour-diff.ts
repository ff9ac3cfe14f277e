/**
 * The neighbour test of every surface (docs/threat-model.md): run a surface on two neighbouring
 * datasets D and D' (under the surface's neighbouring relation) and compare EVERYTHING its
 * adversary observes — statuses, bodies, error texts, events, model files, printed lines — except
 * the accounted noisy values. A difference is a leak: a value the data decide and the accountant
 * did not pay for, whatever its size (one HTTP status is one exact bit).
 *
 * An observation is any JSON-like value (objects, arrays, strings, numbers, booleans, null,
 * undefined, typed arrays). Two kinds of paths are compared by SHAPE only:
 *   - `released`: the accounted noisy values (a model's theta, a node's gradient, a PTR outcome);
 *     their shape (types, array lengths, keys) and their finiteness must still agree;
 *   - `volatile`: values that differ between any two runs whatever the data (a session id, a temp
 *     file name); they must still have the same type.
 * Everything else must be equal, bit for bit for numbers (0 and -0 differ, NaN equals NaN).
 *
 * Patterns are dotted paths (`model.theta`, `body.gradient`, `plans.*.session`); `*` matches one
 * segment of any name or index, and a pattern covers the whole subtree under the path it matches.
 */
import assert from 'node:assert/strict';

export type Segment = string | number;

export interface ObservationOptions {
  /** Paths of accounted noisy values: compared by shape (types, lengths, keys, finiteness). */
  readonly released?: readonly string[];
  /** Paths of values that differ between any two runs whatever the data: compared by type. */
  readonly volatile?: readonly string[];
}

function matches(pattern: string, path: readonly Segment[]): boolean {
  const parts = pattern.split('.');
  if (parts.length > path.length) return false;
  return parts.every((part, i) => part === '*' || part === String(path[i]));
}

const show = (path: readonly Segment[]): string => (path.length === 0 ? '(root)' : path.join('.'));

function kind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}

function brief(value: unknown): string {
  const text = typeof value === 'string' ? JSON.stringify(value) : Object.is(value, -0) ? '-0' : typeof value === 'object' && value !== null ? JSON.stringify(value, (_k, v) => (ArrayBuffer.isView(v) ? Array.from(v as unknown as ArrayLike<number>) : v)) : String(value);
  return text === undefined ? 'undefined' : text.length > 160 ? `${text.slice(0, 157)}...` : text;
}

function entries(value: unknown): Map<Segment, unknown> {
  if (Array.isArray(value) || ArrayBuffer.isView(value)) return new Map(Array.from(value as ArrayLike<unknown>, (v, i) => [i, v] as const));
  return new Map(Object.entries(value as Record<string, unknown>));
}

/** Where a and b differ in what an adversary observes (empty: indistinguishable up to the released values). */
export function observableDifferences(a: unknown, b: unknown, options: ObservationOptions = {}): string[] {
  const out: string[] = [];
  const released = options.released ?? [];
  const volatile = options.volatile ?? [];
  const walk = (x: unknown, y: unknown, path: Segment[], shapeOnly: boolean): void => {
    if (!shapeOnly && released.some((p) => matches(p, path))) shapeOnly = true;
    if (volatile.some((p) => matches(p, path))) {
      if (kind(x) !== kind(y)) out.push(`${show(path)}: ${kind(x)} vs ${kind(y)}`);
      return;
    }
    if (kind(x) !== kind(y)) {
      out.push(`${show(path)}: ${brief(x)} vs ${brief(y)}`);
      return;
    }
    if (x !== null && typeof x === 'object') {
      const ex = entries(x);
      const ey = entries(y);
      if (ex.size !== ey.size || [...ex.keys()].some((k) => !ey.has(k))) {
        out.push(`${show(path)}: keys or length ${[...ex.keys()].join(',')} vs ${[...ey.keys()].join(',')}`);
        return;
      }
      for (const [k, v] of ex) walk(v, ey.get(k), [...path, k], shapeOnly);
      return;
    }
    if (shapeOnly) {
      if (typeof x === 'number' && Number.isFinite(x) !== Number.isFinite(y as number)) out.push(`${show(path)}: finite ${brief(x)} vs ${brief(y)}`);
      return;
    }
    if (!Object.is(x, y)) out.push(`${show(path)}: ${brief(x)} vs ${brief(y)}`);
  };
  walk(a, b, [], false);
  return out;
}

/** Asserts that D's and D''s observations differ only in released (noisy) and volatile values. */
export function assertIndistinguishable(a: unknown, b: unknown, options: ObservationOptions, what: string): void {
  const diff = observableDifferences(a, b, options);
  assert.deepEqual(diff, [], `${what}: an adversary tells the neighbours apart:\n  ${diff.slice(0, 20).join('\n  ')}`);
}

/**
 * The lines of a text an adversary reads, for comparison: JSON text is parsed (so that its
 * released fields can be compared by shape), other text is split into lines.
 */
export function observedText(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed.startsWith('{') || trimmed.startsWith('[')) {
    try {
      return JSON.parse(trimmed);
    } catch {
      // not JSON after all: compared as lines
    }
  }
  return text.split('\n');
}
