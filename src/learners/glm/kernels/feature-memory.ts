/**
 * Feature matrices in a shared WebAssembly memory, where the SIMD kernels (`wasm-kernels.ts`) and
 * every worker thread (`parallel-clipped-sum.ts`) read them without a copy. The memory starts
 * with SLOTS scratch slots (theta splatted, a block's margins and coefficients, a partial sum);
 * a thread claims a free slot atomically for one range of rows and releases it after, so any
 * number of threads can share the memory (a thread that finds no free slot uses the JavaScript
 * kernels: the same numbers). The features follow, row-major, float64 or float32.
 *
 * `allocateFeatures` returns a plain typed array (on a SharedArrayBuffer, or an ArrayBuffer where
 * shared WebAssembly memory is unavailable, e.g. a page that is not cross-origin isolated): fill it
 * in place (a loader can parse straight into it) and pass it as `GlmData.x`.
 */
import { InvalidParameterError } from '../../../errors.js';
import type { FeatureArray } from '../types.js';
import { wasmApi, type WasmMemory } from './wasm-binary.js';
import { instantiateKernels, kernelModule, type Precision, type WasmKernelExports } from './wasm-kernels.js';
import { FUSED_MAX_BLOCK_ROWS, FUSED_MAX_D } from './wasm-logistic-step.js';

/**
 * Rows per block of the SIMD path: 1024 rows x 20 features x 8 bytes = 160 KiB, in L2 for the
 * update (a multiple of 4, so that the four-row groups are those of the scalar kernels' 256-row
 * blocks: the same numbers; fewer calls than 256; and of the fused pass's 8 or 16-row blocks, so
 * that only a range's last block has rows left over).
 */
export const WASM_BLOCK = 1024;

/** Scratch slots per memory (threads summing at once with the SIMD kernels). */
export const SLOTS = 64;

/** The largest memory wasm32 addresses (65536 pages of 64 KiB). */
const MAX_BYTES = 65536 * 65536;

/** @internal Where a feature array lives in its memory. */
export interface FeatureMemory {
  readonly memory: WasmMemory;
  readonly d: number;
  readonly precision: Precision;
  /** Byte offset of x[0]. */
  readonly xOffset: number;
  /**
   * Bytes per slot; slot s starts at s * slotBytes: theta (d f64, 2d reserved), z (or y), c, t
   * (WASM_BLOCK each), part (d), the fused pass's scratch (FUSED_MAX_BLOCK_ROWS (d + 1) f64, when
   * d <= FUSED_MAX_D).
   */
  readonly slotBytes: number;
  /** Byte offset of the slot locks (SLOTS int32), after the slots. */
  readonly locksOffset: number;
  /**
   * Byte offset of the side region after x: n labels, then n clip thresholds (float64), where
   * the fused kernel reads them in place instead of copying them block by block; -1 when absent.
   */
  readonly sideOffset: number;
  /** Rows (the side region's length). */
  readonly n: number;
}

const registry = new WeakMap<ArrayBufferLike, FeatureMemory>();

function slotBytesFor(d: number): number {
  // The fused pass's scratch only for the rows it is built for (d <= FUSED_MAX_D).
  const fused = d <= FUSED_MAX_D ? 8 * FUSED_MAX_BLOCK_ROWS * (d + 1) : 0;
  return Math.ceil((16 * d + 24 * WASM_BLOCK + 8 * d + fused) / 64) * 64;
}

/** The side region's offset: after x's bytes, 8-byte aligned. */
function sideOffsetFor(xOffset: number, xBytes: number): number {
  return Math.ceil((xOffset + xBytes) / 8) * 8;
}

/**
 * Memories whose side-region labels / thresholds are taken. Each is written once, by its first
 * taker, and never again: other label vectors for the same features (one-vs-rest, a user's own)
 * must not change the labels an earlier data set holds.
 */
const labelsTaken = new WeakSet<WasmMemory>();
const thresholdsTaken = new WeakSet<WasmMemory>();

/**
 * @internal The labels `y` of the features `x`, moved into their memory's side region
 * (`FeatureMemory.sideOffset`, where the fused kernel reads them in place) the first time labels
 * are stored for x; `y` itself when the region is taken or absent.
 */
export function storeLabels(x: FeatureArray, d: number, y: Float64Array): Float64Array {
  const info = featureMemoryOf(x, d);
  if (info === undefined || info.sideOffset < 0 || y.length !== info.n || labelsTaken.has(info.memory)) return y;
  labelsTaken.add(info.memory);
  const labels = new Float64Array(info.memory.buffer, info.sideOffset, info.n);
  labels.set(y);
  return labels;
}

/**
 * @internal The side region's n thresholds of x's memory, the first time they are asked for
 * (later thresholds, e.g. for another clip norm, live elsewhere); undefined when taken or absent.
 */
export function sideThresholds(x: FeatureArray, d: number): Float64Array | undefined {
  const info = featureMemoryOf(x, d);
  if (info === undefined || info.sideOffset < 0 || thresholdsTaken.has(info.memory)) return undefined;
  thresholdsTaken.add(info.memory);
  return new Float64Array(info.memory.buffer, info.sideOffset + 8 * info.n, info.n);
}

/**
 * A zero-filled n x d feature array (row-major) for `precision`, in a shared WebAssembly memory
 * when possible (then the SIMD kernels and the worker pool use it in place), else a plain array.
 */
export function allocateFeatures(n: number, d: number, precision: Precision = 'float64'): FeatureArray {
  if (!Number.isSafeInteger(n) || n < 0) throw new InvalidParameterError('n', n, 'an integer >= 0');
  if (!Number.isSafeInteger(d) || d < 1) throw new InvalidParameterError('d', d, 'an integer >= 1');
  if (precision !== 'float64' && precision !== 'float32') throw new InvalidParameterError('precision', precision, '"float64" or "float32"');
  const bytes = precision === 'float64' ? 8 : 4;
  const slotBytes = slotBytesFor(d);
  const locksOffset = SLOTS * slotBytes;
  const xOffset = Math.ceil((locksOffset + 4 * SLOTS) / 64) * 64;
  // The side region when it fits in the 4 GiB a wasm32 memory addresses (else the labels and
  // thresholds are copied block by block, as for arrays from elsewhere).
  const side = sideOffsetFor(xOffset, n * d * bytes);
  const sideOffset = side + 16 * n <= MAX_BYTES ? side : -1;
  const total = sideOffset >= 0 ? side + 16 * n : xOffset + n * d * bytes;
  if (kernelModule() !== null && total <= MAX_BYTES) {
    const pages = Math.max(1, Math.ceil(total / 65536));
    try {
      const memory = new (wasmApi as NonNullable<typeof wasmApi>).Memory({ initial: pages, maximum: pages, shared: true });
      const x = precision === 'float64' ? new Float64Array(memory.buffer, xOffset, n * d) : new Float32Array(memory.buffer, xOffset, n * d);
      registry.set(x.buffer, { memory, d, precision, xOffset, slotBytes, locksOffset, sideOffset, n });
      return x;
    } catch {
      // Out of address space for a shared memory: a plain array below.
    }
  }
  return precision === 'float64' ? new Float64Array(n * d) : new Float32Array(n * d);
}

/**
 * `x` (n x d, float64) stored for `precision` in a feature memory (`allocateFeatures`): a copy,
 * rounded to nearest for float32. Kept as is when it already is such an array of that precision.
 */
export function storeFeatures(x: FeatureArray, n: number, d: number, precision: Precision): FeatureArray {
  if (featureMemoryOf(x, d) !== undefined && (x instanceof Float64Array) === (precision === 'float64')) return x;
  const out = allocateFeatures(n, d, precision);
  out.set(x);
  return out;
}

/** @internal The memory of an array from `allocateFeatures` that starts at its x[0] and has row length d. */
export function featureMemoryOf(x: FeatureArray, d: number): FeatureMemory | undefined {
  const found = registry.get(x.buffer);
  if (found === undefined || found.xOffset !== x.byteOffset || found.d !== d) return undefined;
  if ((x instanceof Float64Array ? 'float64' : 'float32') !== found.precision) return undefined;
  return found;
}

/** @internal Registers a memory received from another thread (the worker pool's config). */
export function registerFeatureMemory(x: FeatureArray, info: FeatureMemory): void {
  registry.set(x.buffer, info);
}

const instances = new WeakMap<WasmMemory, WasmKernelExports | null>();

/** @internal The kernels bound to this thread's instance for `memory` (null when unavailable). */
export function kernelsFor(memory: WasmMemory): WasmKernelExports | null {
  let k = instances.get(memory);
  if (k === undefined) {
    k = instantiateKernels(memory);
    instances.set(memory, k);
  }
  return k;
}

/** @internal Claims a free slot (its index), or -1 when all SLOTS are in use. */
export function claimSlot(info: FeatureMemory): number {
  const locks = new Int32Array(info.memory.buffer, info.locksOffset, SLOTS);
  for (let s = 0; s < SLOTS; s++) if (Atomics.compareExchange(locks, s, 0, 1) === 0) return s;
  return -1;
}

/** @internal The byte offsets of a slot's scratch (the layout of `FeatureMemory.slotBytes`). */
export function slotPointers(info: FeatureMemory, slot: number, d: number): { theta: number; z: number; c: number; t: number; part: number; fused: number } {
  const theta = slot * info.slotBytes;
  const z = theta + 16 * d;
  const c = z + 8 * WASM_BLOCK;
  const t = c + 8 * WASM_BLOCK;
  const part = t + 8 * WASM_BLOCK;
  return { theta, z, c, t, part, fused: part + 8 * d };
}

/** @internal Releases a slot claimed by `claimSlot`. */
export function releaseSlot(info: FeatureMemory, slot: number): void {
  Atomics.store(new Int32Array(info.memory.buffer, info.locksOffset, SLOTS), slot, 0);
}

/** A shared WebAssembly memory that can grow to 4 GiB in place, or undefined where there is none. */
function growableMemory(pages: number): WasmMemory | undefined {
  if (kernelModule() === null) return undefined;
  try {
    return new (wasmApi as NonNullable<typeof wasmApi>).Memory({ initial: pages, maximum: 65536, shared: true });
  } catch {
    return undefined;
  }
}

/**
 * Grows `memory` to at least `bytes` (by half of what it holds at least: pages are committed only
 * when touched, so the headroom costs no memory); false when it cannot.
 */
function ensureBytes(memory: WasmMemory, bytes: number): boolean {
  const have = memory.buffer.byteLength;
  if (bytes <= have) return true;
  const grow = (to: number): boolean => {
    try {
      (memory as unknown as { grow(pages: number): number }).grow(Math.ceil((to - have) / 65536));
      return true;
    } catch {
      return false;
    }
  };
  return bytes <= MAX_BYTES && (grow(Math.min(MAX_BYTES, Math.max(bytes, have * 1.5))) || grow(bytes));
}

/** The rows a `growingFeatures` store holds, as `loadDataset` expects (`data/feature-store.ts`). */
export interface GrowingFeatures {
  append(x: Float64Array, y: Float64Array, n: number): void;
  /** Room for `rows` more rows in place (in the shared memory when it has room), kept by `commit`. */
  reserve(rows: number): { x: Float64Array; y: Float64Array };
  commit(rows: number): void;
  reset(): void;
  finish(): { x: Float64Array; y: Float64Array; n: number };
}

/**
 * A row store for `loadDataset(path, schema, {features: growingFeatures})`: the encoded rows are
 * copied chunk by chunk into a shared WebAssembly memory that grows in place (a shared memory
 * reserves its maximum address range once and never moves), so the finished x is the only copy of
 * the features, ready for the SIMD kernels and the worker pool (`shareGlmData` keeps it as is).
 * Beyond the 4 GiB a wasm32 memory addresses, or without shared WebAssembly memory, the rows go to
 * plain arrays (concatenated at the end).
 */
export function growingFeatures(d: number): GrowingFeatures {
  if (!Number.isSafeInteger(d) || d < 1) throw new InvalidParameterError('d', d, 'an integer >= 1');
  const slotBytes = slotBytesFor(d);
  const locksOffset = SLOTS * slotBytes;
  const xOffset = Math.ceil((locksOffset + 4 * SLOTS) / 64) * 64;
  let memory = growableMemory(Math.ceil(xOffset / 65536) + 1);
  // The labels in a growing memory of their own (shared, so no copy for the worker pool either).
  let yMemory = growableMemory(1);
  let chunks: Float64Array[] = [];
  let n = 0;
  let y = new Float64Array(1024);
  /** Makes room for `rows` more rows where they go (the memories, or the plain arrays once those are out of room). */
  const room = (rows: number): void => {
    if (yMemory !== undefined && !ensureBytes(yMemory, (n + rows) * 8)) {
      y = new Float64Array(yMemory.buffer, 0, n).slice();
      yMemory = undefined;
    }
    if (yMemory === undefined && n + rows > y.length) {
      const bigger = new Float64Array(Math.max(2 * y.length, n + rows));
      bigger.set(y.subarray(0, n));
      y = bigger;
    }
    if (memory !== undefined && !ensureBytes(memory, xOffset + (n + rows) * d * 8)) {
      // Out of wasm32 address space: the rows so far and the rest go to plain arrays.
      chunks = [new Float64Array(memory.buffer, xOffset, n * d).slice()];
      memory = undefined;
    }
  };
  const yView = (rows: number): Float64Array => (yMemory !== undefined ? new Float64Array(yMemory.buffer, n * 8, rows) : y.subarray(n, n + rows));
  let scratch = new Float64Array(0);
  return {
    append(xChunk, yChunk, rows) {
      room(rows);
      yView(rows).set(yChunk.subarray(0, rows));
      if (memory !== undefined) new Float64Array(memory.buffer, xOffset + n * d * 8, rows * d).set(xChunk.subarray(0, rows * d));
      else chunks.push(xChunk.slice(0, rows * d));
      n += rows;
    },
    reserve(rows) {
      room(rows);
      if (memory !== undefined) return { x: new Float64Array(memory.buffer, xOffset + n * d * 8, rows * d), y: yView(rows) };
      if (scratch.length < rows * d) scratch = new Float64Array(rows * d);
      return { x: scratch.subarray(0, rows * d), y: yView(rows) };
    },
    commit(rows) {
      if (memory === undefined) chunks.push(scratch.slice(0, rows * d));
      n += rows;
    },
    reset() {
      chunks = [];
      n = 0;
    },

    finish() {
      let yOut = yMemory !== undefined ? new Float64Array(yMemory.buffer, 0, n) : y.slice(0, n);
      if (memory !== undefined) {
        // The labels move into the side region after x (with room for the thresholds) when it fits.
        const side = sideOffsetFor(xOffset, n * d * 8);
        const sideOffset = ensureBytes(memory, side + 16 * n) ? side : -1;
        if (sideOffset >= 0) {
          labelsTaken.add(memory);
          const labels = new Float64Array(memory.buffer, sideOffset, n);
          labels.set(yOut);
          yOut = labels;
          yMemory = undefined;
        }
        const x = new Float64Array(memory.buffer, xOffset, n * d);
        registry.set(x.buffer, { memory, d, precision: 'float64', xOffset, slotBytes, locksOffset, sideOffset, n });
        return { x, y: yOut, n };
      }
      const x = new Float64Array(n * d);
      let at = 0;
      for (const c of chunks) {
        x.set(c, at);
        at += c.length;
      }
      chunks = [];
      return { x, y: yOut, n };
    },
  };
}
