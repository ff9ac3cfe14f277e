/**
 * Another implementation of the clipped gradient sums of `per-example.ts`, giving the same sums
 * bit for bit (the Node worker pool of `parallel-clipped-sum.ts`), which DP-GD takes as its
 * `gradientSummer`.
 */
import type { ClippedGradientSumOptions, sumClippedGradients } from './per-example.js';
import type { StreamedPass } from './streamed-chunk.js';
import type { GlmData, GlmLoss, StoredGlmData } from './types.js';

export interface GradientSummer {
  prepare<T extends GlmData>(data: T): T;
  sum: typeof sumClippedGradients;
  /**
   * Optional: the same sums on stored features (float64 or float32) with the per-row clip
   * thresholds DP-GD computes once per run (`options.thresholds`). Without it DP-GD calls `sum`
   * without thresholds, and refuses `precision: 'float32'`.
   */
  sumStored?: (loss: GlmLoss, data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions) => ReturnType<typeof sumClippedGradients>;
  /**
   * Optional: out += the chunk sums of rows start .. end - 1 of `data` (chunks of `CHUNK_ROWS`
   * cut from row `start`, each summed from zero, added in chunk order; out is not zeroed); returns
   * the clipped count (a pass summed in pieces, the same numbers as one in-memory sum).
   */
  addChunkSums?: (loss: GlmLoss, data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions & { out: Float64Array }, start: number, end: number) => number;
  /**
   * Optional: out += the chunk sums of a pass over stored rows read from their file block by block
   * (`streamed-chunk.ts`: the same chunk sums as `sumStreamedPass`, added in chunk order; out is not
   * zeroed), each thread reading and summing its own chunks in its own ring of `pass.area` (which
   * needs `threads` rings); returns the clipped count. Out-of-core DP-GD's step.
   */
  addStreamedChunkSums?: (loss: GlmLoss, pass: StreamedPass, theta: Float64Array, clipNorm: number, out: Float64Array) => number;
  /** Threads that sum at once (rings a streamed pass needs), 1 when absent. */
  threads?: number;
}
