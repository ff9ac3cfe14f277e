/**
 * @internal Node-only worker of `parallel-clipped-sum.ts`: waits for a job generation, claims
 * chunks (fixed ranges of CHUNK_ROWS rows) and writes each chunk's clipped-gradient sum and
 * clipped count into shared memory. It computes exactly what `sumClippedGradients` computes for
 * the chunk (same function, `accumulateClippedRange`), so the result does not depend on which
 * thread summed which chunk. The protocol (slots, claims) is described in `parallel-clipped-sum.ts`.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { lossByName } from '../losses/by-name.js';
import { registerFeatureMemory } from '../kernels/feature-memory.js';
import { accumulateClippedRange, accumulateClippedRangeCached, CHUNK_ROWS, newClipScratch } from '../per-example.js';
import {
  claimChunk, CTRL_DONE, CTRL_ERROR, CTRL_GEN, CTRL_STOP, CTRL_VERSION, PARAM_CACHED, PARAM_CHUNKS, PARAM_CLIP_NORM, PARAM_END_ROW, PARAM_START_ROW, type PoolConfig,
} from './parallel-protocol.js';
import { readStoredRowsSync } from '../../../data/node/stored-read.js';
import { sumStreamedRange, type BlockReader, type StreamedArea } from '../streamed-chunk.js';
import type { FeatureArray, GlmLoss } from '../types.js';

const { ctrl, claims, configPort, index } = workerData as { ctrl: SharedArrayBuffer; claims: SharedArrayBuffer; configPort: MessagePort; index: number };
const control = new Int32Array(ctrl);
const claimWord = new BigInt64Array(claims);
const scratch = newClipScratch();

let config: PoolConfig | undefined;
let x: FeatureArray = new Float64Array(0);
let thresholds: Float64Array | undefined;
let y: Float64Array = new Float64Array(0);
let params: Float64Array = new Float64Array(0);
let partials: Float64Array = new Float64Array(0);
let loss: GlmLoss | undefined;
/** Streamed jobs: the run's area (this worker sums in ring `index`) and the reader of its file. */
let area: StreamedArea | undefined;
let reader: BlockReader | undefined;

/** Reads config messages until the one with `version` (they arrive in order). */
function syncConfig(version: number): void {
  while (config === undefined || config.version !== version) {
    const message = receiveMessageOnPort(configPort);
    if (message === undefined) throw new Error(`parallel clipped sum: config ${version} was not posted`);
    config = message.message as PoolConfig;
    const length = config.n * config.d;
    // With a feature memory, x is viewed on that memory's buffer and registered, so the SIMD kernels run on it.
    const xBuffer = config.memory === undefined ? config.x : config.memory.memory.buffer;
    x = config.precision === 'float64' ? new Float64Array(xBuffer, config.xOffset, length) : new Float32Array(xBuffer, config.xOffset, length);
    if (config.memory !== undefined) registerFeatureMemory(x, config.memory);
    thresholds = config.thresholds === undefined ? undefined : new Float64Array(config.thresholdsInMemory ? xBuffer : config.thresholds, config.thresholdsOffset, config.n);
    y = new Float64Array(config.yInMemory ? xBuffer : config.y, config.yOffset, config.n);
    params = new Float64Array(config.params);
    partials = new Float64Array(config.partials);
    loss = lossByName(config.lossName, config.lossParameters);
    const streamed = config.streamed;
    if (streamed === undefined) {
      area = undefined;
      reader = undefined;
    } else {
      const { file } = streamed;
      area = {
        x, d: config.d, blockRows: streamed.blockRows, rings: streamed.rings, ringY: y, ringT: thresholds as Float64Array,
        ...(streamed.cacheY === undefined ? {} : { cacheY: streamed.cacheY, cacheT: streamed.cacheT }),
      };
      reader = (part, row, rows, into) => readStoredRowsSync(file, part, row, rows, into);
    }
  }
}

function runJob(gen: number): void {
  syncConfig(Atomics.load(control, CTRL_VERSION));
  const { d } = config as PoolConfig;
  const theta = params.subarray(0, d);
  const clipNorm = params[PARAM_CLIP_NORM(d)];
  const first = params[PARAM_START_ROW(d)];
  const last = params[PARAM_END_ROW(d)];
  const chunks = params[PARAM_CHUNKS(d)];
  const part = new Float64Array(d);
  for (;;) {
    const chunk = claimChunk(claimWord, gen, chunks);
    if (chunk < 0) return;
    part.fill(0);
    const start = first + chunk * CHUNK_ROWS;
    const end = Math.min(last, start + CHUNK_ROWS);
    const clipped = area !== undefined
      ? sumStreamedRange(loss as GlmLoss, reader as BlockReader, area, index, theta, clipNorm, params[PARAM_CACHED(d)] === 1, start, end, scratch, part)
      : thresholds === undefined
      ? accumulateClippedRange(loss as GlmLoss, x as Float64Array, y, d, theta, clipNorm, undefined, start, end, scratch, part)
      : accumulateClippedRangeCached(loss as GlmLoss, x, y, d, theta, thresholds, clipNorm, start, end, scratch, part);
    partials.set(part, chunk * (d + 1));
    partials[chunk * (d + 1) + d] = clipped;
    Atomics.add(control, CTRL_DONE, 1);
    Atomics.notify(control, CTRL_DONE);
  }
}

let seen = Atomics.load(control, CTRL_GEN);
parentPort?.postMessage('ready');
for (;;) {
  Atomics.wait(control, CTRL_GEN, seen);
  if (Atomics.load(control, CTRL_STOP) !== 0) break;
  seen = Atomics.load(control, CTRL_GEN);
  try {
    runJob(seen);
  } catch (error) {
    // The main thread sees the flag after the job and recomputes the sum on its own thread.
    Atomics.store(control, CTRL_ERROR, 1);
    Atomics.notify(control, CTRL_DONE);
    parentPort?.postMessage(`error: ${error instanceof Error ? error.message : String(error)}`);
  }
}
configPort.close();
