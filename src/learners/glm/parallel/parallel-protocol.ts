/**
 * @internal The shared-memory protocol between `parallel-clipped-sum.ts` and its workers
 * (browser-safe: no Node imports; only the two Node-only files use it).
 *
 * Control words (Int32Array on a SharedArrayBuffer):
 * - GEN: the job generation; the main thread bumps it (and notifies) to start a job.
 * - DONE: chunks finished in the current job (workers add 1 and notify).
 * - VERSION: the config (data, loss, buffers) the job uses; configs are posted on a dedicated
 *   MessagePort before VERSION changes, and workers read them synchronously.
 * - STOP: 1 asks the workers to exit; ERROR: a worker failed (the pool then stops being used).
 *
 * Claims: one 64-bit word = gen * 2^32 + next chunk. A thread claims chunk `next` by
 * compare-exchange only if the word still carries its job's gen, so a thread that woke late for a
 * finished job can never take a chunk of the next one, and a job cannot finish while a claimed
 * chunk is unfinished — hence the job's theta and config are stable while any thread reads them.
 */

import type { StoredRowsFile } from '../../../data/row-source.js';
import type { FeatureMemory } from '../kernels/feature-memory.js';

export const CTRL_GEN = 0;
export const CTRL_DONE = 1;
export const CTRL_VERSION = 2;
export const CTRL_STOP = 3;
export const CTRL_ERROR = 4;
export const CTRL_WORDS = 5;

/** The slot of clipNorm in the params buffer (theta takes slots 0 .. d-1). */
export const PARAM_CLIP_NORM = (d: number): number => d;
/**
 * The slots of the job's rows: chunks are cut from row `start` in CHUNK_ROWS steps up to row
 * `end` (a whole pass: 0 and n), and `chunks` of them are claimed. Params hold d + 5 doubles.
 */
export const PARAM_START_ROW = (d: number): number => d + 1;
export const PARAM_END_ROW = (d: number): number => d + 2;
export const PARAM_CHUNKS = (d: number): number => d + 3;
/** Streamed jobs: 1 when the area's cache holds every row's label and threshold (`StreamedPass.cached`). */
export const PARAM_CACHED = (d: number): number => d + 4;
export const PARAM_WORDS = (d: number): number => d + 5;

/** Generations wrap well inside 31 bits. */
export const GEN_MASK = 0x3fffffff;

/** Posted to every worker when the data, loss or buffers change. */
export interface PoolConfig {
  version: number;
  x: SharedArrayBuffer;
  /** Byte offset of the features in `x`. */
  xOffset: number;
  y: SharedArrayBuffer;
  yOffset: number;
  n: number;
  d: number;
  /** ceil(n / CHUNK_ROWS): the most chunks a job has (the partials' room). */
  chunks: number;
  /** theta (d), clipNorm and the job's rows (`PARAM_START_ROW` ...), Float64. */
  params: SharedArrayBuffer;
  /** Per chunk: its gradient sum (d) and its clipped count, Float64. */
  partials: SharedArrayBuffer;
  lossName: string;
  lossParameters: Record<string, number>;
  /** How x is stored. */
  precision: 'float64' | 'float32';
  /** The feature memory x lives in (`feature-memory.ts`): workers then run the SIMD kernels on it. */
  memory?: FeatureMemory;
  /** Cached clip thresholds (n doubles at `thresholdsOffset`), when the sum was given them. */
  thresholds?: SharedArrayBuffer;
  thresholdsOffset: number;
  /** y / the thresholds live in `memory` (its side region): workers view them on that memory, where the fused kernel reads them in place. */
  yInMemory: boolean;
  thresholdsInMemory: boolean;
  /**
   * Streamed jobs (`streamed-chunk.ts`): chunks are read from this file block by block into the
   * thread's ring of x (worker w: ring w + 1; y and thresholds above are the rings' labels and
   * thresholds), the cache at these byte offsets of x's buffer; `n` above is x's rows, `passRows` the pass's.
   */
  streamed?: { file: StoredRowsFile; passRows: number; blockRows: number; rings: number; cacheY?: number; cacheT?: number };
}

/** The claim word that opens job `gen` at chunk 0. */
export function openClaims(gen: number): bigint {
  return BigInt(gen) << 32n;
}

/** Claims the next chunk of job `gen`, or returns -1 when the job has none left (or is over). */
export function claimChunk(claimWord: BigInt64Array, gen: number, chunks: number): number {
  const genBits = BigInt(gen);
  for (;;) {
    const word = Atomics.load(claimWord, 0);
    if (word >> 32n !== genBits) return -1;
    const next = Number(word & 0xffffffffn);
    if (next >= chunks) return -1;
    if (Atomics.compareExchange(claimWord, 0, word, word + 1n) === word) return next;
  }
}
