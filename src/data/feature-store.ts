/**
 * Where a reader encodes rows straight into, chunk by chunk, instead of building the whole raw
 * table and then its encoded copy, which would hold the data in memory twice over:
 * `loadDataset(path, schema, {features})` parses a chunk of CSV rows, encodes it with the schema
 * (every encoded row is a function of its raw row and the public schema alone, so chunks give the
 * whole table's rows), appends it here and drops it. The learners provide a store in shared
 * WebAssembly memory (`growingFeatures`), injected by the CLI so that this layer imports nothing
 * from the learners. `arrayFeatureStore` is the plain fallback.
 */
import type { PrivateDiagnostics } from './schema/apply.js';

export interface FeatureStore {
  /** Appends n encoded rows: x (n * d values, row-major) and y (n labels); the arrays are not kept. */
  append(x: Float64Array, y: Float64Array, n: number): void;
  /** Forgets every row (the reader starts again, e.g. after revising a guessed column type). */
  reset(): void;
  /** The rows appended: x (n * d) and y (n), owned by the caller from now on. */
  finish(): { x: Float64Array; y: Float64Array; n: number };
  /**
   * Optional, with `commit`: room for `rows` more rows (x: rows * d values, y: rows), which an
   * encoder writes in place (they are not zeroed) before `commit(kept)` keeps the first `kept`
   * of them. Saves the copy of `append`.
   */
  reserve?(rows: number): { x: Float64Array; y: Float64Array };
  commit?(rows: number): void;
}

/** A store for rows of d encoded features; `expectedRows`, when given, estimates how many will come (a hint, not a bound). */
export type FeatureStoreFactory = (d: number, expectedRows?: number) => FeatureStore;

/** A store that keeps the chunks and concatenates them at the end (peak: twice the rows). */
export function arrayFeatureStore(d: number): FeatureStore {
  let xs: Float64Array[] = [];
  let ys: Float64Array[] = [];
  let n = 0;
  return {
    append(x, y, rows) {
      xs.push(x.slice(0, rows * d));
      ys.push(y.slice(0, rows));
      n += rows;
    },
    reset() {
      xs = [];
      ys = [];
      n = 0;
    },
    finish() {
      const x = new Float64Array(n * d);
      const y = new Float64Array(n);
      let at = 0;
      for (let k = 0; k < xs.length; k++) {
        x.set(xs[k], at * d);
        y.set(ys[k], at);
        at += ys[k].length;
      }
      xs = [];
      ys = [];
      return { x, y, n };
    },
  };
}

/**
 * A store that grows one array in place (by half of what it holds) and returns views of it: the
 * encoder writes each chunk at its final place (`reserve`), and the finished rows are one array,
 * at most a third of it unused, or copied to size when more is.
 */
export function contiguousFeatureStore(d: number, expectedRows = 0): FeatureStore {
  // Sized once from the estimate when there is one (a few percent over it): growing by copies costs more than the parse.
  const first = Number.isSafeInteger(expectedRows) && expectedRows > 0 ? expectedRows : 0;
  let x = new Float64Array(first * d);
  let y = new Float64Array(first);
  let n = 0;
  const room = (rows: number): void => {
    if (n + rows <= y.length) return;
    const capacity = Math.max(n + rows, Math.ceil(y.length * 1.5), 1024);
    const bigger = new Float64Array(capacity * d);
    bigger.set(x.subarray(0, n * d));
    x = bigger;
    const biggerY = new Float64Array(capacity);
    biggerY.set(y.subarray(0, n));
    y = biggerY;
  };
  return {
    append(xChunk, yChunk, rows) {
      room(rows);
      x.set(xChunk.subarray(0, rows * d), n * d);
      y.set(yChunk.subarray(0, rows), n);
      n += rows;
    },
    reserve(rows) {
      room(rows);
      return { x: x.subarray(n * d, (n + rows) * d), y: y.subarray(n, n + rows) };
    },
    commit(rows) {
      n += rows;
    },
    reset() {
      n = 0;
    },
    finish() {
      const trim = <T extends Float64Array>(a: T, used: number): T => (used >= 0.75 * a.length ? (a.subarray(0, used) as T) : (a.slice(0, used) as T));
      const out = { x: trim(x, n * d), y: trim(y, n), n };
      x = new Float64Array(0);
      y = new Float64Array(0);
      n = 0;
      return out;
    },
  };
}

/** The private diagnostics of two chunks together (counts add up). */
export function addPrivateDiagnostics(total: PrivateDiagnostics | undefined, part: PrivateDiagnostics): PrivateDiagnostics {
  if (total === undefined) return part;
  const add = (a: Readonly<Record<string, number>>, b: Readonly<Record<string, number>>) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v + (b[k] ?? 0)]));
  return {
    rowsRead: total.rowsRead + part.rowsRead,
    droppedRows: total.droppedRows + part.droppedRows,
    clipped: add(total.clipped, part.clipped),
    other: add(total.other, part.other),
    missing: add(total.missing, part.missing),
    ...(total.positives !== undefined ? { positives: total.positives + (part.positives ?? 0) } : {}),
  };
}
