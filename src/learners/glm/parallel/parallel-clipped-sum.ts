/**
 * Node-only: the sum of clipped per-example gradients (`sumClippedGradients`, the DP-GD step of
 * `002` Sec. 2.2) over several threads. The data must live in shared memory (`shareGlmData`).
 *
 * Determinism: the rows are cut into the fixed chunks of `CHUNK_ROWS` that `sumClippedGradients`
 * uses; threads claim chunks dynamically (a busy CPU slows nobody down), each chunk's sum is
 * computed by the same code as in `sumClippedGradients`, and the calling thread adds the chunk
 * sums in chunk order. The result is therefore bit-for-bit `sumClippedGradients`'s, for any
 * thread count and any timing. Privacy is unchanged: every term is clipped by the same code
 * (norm <= C in floating point, `CLIP_SAFETY`), and the sum is the one the accountant assumes.
 *
 * The call is synchronous (the calling thread works on chunks too, then blocks in `Atomics.wait`
 * until the other threads finish), so it drops into a synchronous training loop. Batches given by
 * `indices` (DP-SGD) are small and are summed on the calling thread.
 *
 * Not browser-safe (node:worker_threads): it is not exported from the core's index.
 *
 * @example
 * const shared = shareGlmData(data);
 * const pool = await createClippedGradientPool({ threads: 2 });
 * try { const {sum} = pool.sumClippedGradients(logisticLoss, shared, theta, {clipNorm: 1}); } finally { await pool.close(); }
 */
import { availableParallelism } from 'node:os';
import { MessageChannel, Worker, type MessagePort } from 'node:worker_threads';
import { InvalidParameterError, NumericalError } from '../../../errors.js';
import { requireInteger } from '../../../validate.js';
import { startModuleWorker } from '../../../worker-threads.js';
import { lossByName } from '../losses/by-name.js';
import { allocateFeatures, featureMemoryOf, storeLabels } from '../kernels/feature-memory.js';
import {
  accumulateClippedRange, accumulateClippedRangeCached, checkClippedSumArguments, CHUNK_ROWS, newClipScratch, sumStoredClippedGradients,
  type ClippedGradientSum, type ClippedGradientSumOptions,
} from '../per-example.js';
import {
  claimChunk, CTRL_DONE, CTRL_ERROR, CTRL_GEN, CTRL_STOP, CTRL_VERSION, CTRL_WORDS, GEN_MASK, openClaims,
  PARAM_CACHED, PARAM_CHUNKS, PARAM_CLIP_NORM, PARAM_END_ROW, PARAM_START_ROW, PARAM_WORDS, type PoolConfig,
} from './parallel-protocol.js';
import { sumStreamedPass, sumStreamedRange, type StreamedPass } from '../streamed-chunk.js';
import type { GradientSummer } from '../gradient-summer.js';
import type { FeatureArray, GlmLoss, StoredGlmData } from '../types.js';

export interface ClippedGradientPoolOptions {
  /** Threads including the calling one (>= 1); default `os.availableParallelism()`. */
  threads?: number;
  /** Milliseconds without progress after which a sum fails (default 60000). */
  stallTimeoutMs?: number;
}

export interface ClippedGradientPool {
  /** Threads including the calling one. */
  readonly threads: number;
  /**
   * `sumClippedGradients` (same arguments and result, bit-for-bit), over the pool's threads; also
   * float32 features (`sumStoredClippedGradients`) and cached thresholds (`options.thresholds`).
   */
  sumClippedGradients(loss: GlmLoss, data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions): ClippedGradientSum;
  /**
   * out += the chunk sums of rows start .. end - 1 of `data` (chunks of CHUNK_ROWS cut from row
   * `start`, each summed from zero, added to `out` in chunk order; out is not zeroed), over the
   * pool's threads; returns the clipped count. Full passes only, with cached thresholds
   * (`options.thresholds`, required) or without: a pass added piece by piece this way gives the
   * same numbers as one in-memory sum.
   */
  addChunkSums(loss: GlmLoss, data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions & { out: Float64Array }, start: number, end: number): number;
  /**
   * out += the chunk sums of a pass over stored rows (`streamed-chunk.ts`, `sumStreamedPass`'s
   * numbers, added in chunk order; out is not zeroed): every thread reads its chunks from the
   * file block by block into its own ring of `pass.area` (which needs `threads` rings) and sums
   * each block at once. Returns the clipped count.
   */
  addStreamedChunkSums(loss: GlmLoss, pass: StreamedPass, theta: Float64Array, clipNorm: number, out: Float64Array): number;
  /** Stops the workers; later sums run on the calling thread only. */
  close(): Promise<void>;
}

function isShared(a: FeatureArray): boolean {
  return a.buffer instanceof SharedArrayBuffer;
}

/** out += the chunks' sums in chunk order (each chunk's d sums then its clipped count, in `partials`); returns the clipped count. */
function addPartials(partials: Float64Array, chunks: number, d: number, out: Float64Array): number {
  let clippedCount = 0;
  for (let c = 0; c < chunks; c++) {
    const off = c * (d + 1);
    for (let j = 0; j < d; j++) out[j] += partials[off + j];
    clippedCount += partials[off + d];
  }
  return clippedCount;
}

/**
 * The data with x in a shared feature memory (`allocateFeatures`: worker threads and the SIMD
 * kernels read it in place) and y in a SharedArrayBuffer; arrays already shared are kept, not
 * copied. One copy at most: do it once per data set (or load the data into `allocateFeatures`).
 */
export function shareGlmData<T extends StoredGlmData>(data: T): T {
  let x = data.x;
  if (!isShared(x)) {
    x = allocateFeatures(data.n, data.d, x instanceof Float64Array ? 'float64' : 'float32');
    x.set(data.x);
  }
  let y = data.y;
  if (!isShared(y)) {
    // Into the features' side region when they have one (read in place by the fused kernel), else a SharedArrayBuffer.
    y = storeLabels(x, data.d, data.y);
    if (!isShared(y)) {
      y = new Float64Array(new SharedArrayBuffer(y.length * Float64Array.BYTES_PER_ELEMENT));
      y.set(data.y);
    }
  }
  return { ...data, x, y };
}

/**
 * The built-in loss a worker rebuilds from `name` and `parameters`, or undefined when `loss` is
 * not one (a custom loss cannot be sent to a worker: functions do not cross threads).
 */
function rebuildable(loss: GlmLoss): { name: string; parameters: Record<string, number> } | undefined {
  let rebuilt: GlmLoss;
  try {
    rebuilt = lossByName(loss.name, { ...loss.parameters });
  } catch {
    return undefined;
  }
  if (rebuilt === loss) return { name: loss.name, parameters: { ...loss.parameters } };
  // Parametrised losses are new objects per call: the same name, parameters and code compute the same numbers.
  const same = rebuilt.name === loss.name
    && JSON.stringify(rebuilt.parameters) === JSON.stringify(loss.parameters)
    && rebuilt.derivatives.toString() === loss.derivatives.toString();
  return same ? { name: loss.name, parameters: { ...loss.parameters } } : undefined;
}

/** The pool as DP-GD's `gradientSummer`: shared data, cached clip thresholds and float32 storage. */
export function poolGradientSummer(pool: ClippedGradientPool): GradientSummer {
  const sum = pool.sumClippedGradients.bind(pool);
  return { prepare: shareGlmData, sum, sumStored: sum, addChunkSums: pool.addChunkSums.bind(pool), addStreamedChunkSums: pool.addStreamedChunkSums.bind(pool), threads: pool.threads };
}

/** The worker beside this module (compiled or from the sources: `startModuleWorker`). */
function startWorker(options: ConstructorParameters<typeof Worker>[1]): Worker {
  return startModuleWorker(new URL('./parallel-clipped-sum-worker', import.meta.url), options);
}

/**
 * Starts `threads - 1` worker threads (resolves when they are ready). Close the pool when done;
 * the workers do not keep the process alive.
 */
export async function createClippedGradientPool(options: ClippedGradientPoolOptions = {}): Promise<ClippedGradientPool> {
  const threads = requireInteger('threads', options.threads ?? availableParallelism(), 1, 256);
  const stallTimeoutMs = requireInteger('stallTimeoutMs', options.stallTimeoutMs ?? 60_000, 1);
  const ctrlBuffer = new SharedArrayBuffer(CTRL_WORDS * Int32Array.BYTES_PER_ELEMENT);
  const claimBuffer = new SharedArrayBuffer(BigInt64Array.BYTES_PER_ELEMENT);
  const control = new Int32Array(ctrlBuffer);
  const claimWord = new BigInt64Array(claimBuffer);
  const workers: { worker: Worker; port: MessagePort; exited: Promise<void> }[] = [];
  const ready: Promise<void>[] = [];
  for (let w = 0; w < threads - 1; w++) {
    const channel = new MessageChannel();
    const worker = startWorker({
      workerData: { ctrl: ctrlBuffer, claims: claimBuffer, configPort: channel.port2, index: w + 1 },
      transferList: [channel.port2],
    });
    const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
    workers.push({ worker, port: channel.port1, exited });
    ready.push(new Promise((resolve, reject) => {
      worker.once('message', () => resolve());
      worker.once('error', reject);
    }));
  }
  try {
    await Promise.all(ready);
  } catch (error) {
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
    throw error;
  }
  for (const { worker, port } of workers) {
    worker.unref();
    port.unref();
  }

  let closed = workers.length === 0;
  let gen = 0;
  let version = 0;
  let config: PoolConfig | undefined;
  let theta: Float64Array = new Float64Array(0);
  let partials: Float64Array = new Float64Array(0);
  let sharedY: Float64Array | undefined;
  let sharedThresholds: Float64Array | undefined;
  let lossKey = '';
  const scratch = newClipScratch();

  /** The array itself when shared, else a copy into `cache` (n doubles per call: cheap next to the pass over n x d features). */
  function sharedCopy(a: Float64Array, cache: Float64Array | undefined): Float64Array {
    const copy = cache !== undefined && cache.length === a.length ? cache : new Float64Array(new SharedArrayBuffer(a.length * 8));
    copy.set(a);
    return copy;
  }

  function configure(loss: { name: string; parameters: Record<string, number> }, data: StoredGlmData, thresholdsIn: Float64Array | undefined, streamed?: PoolConfig['streamed']) {
    const { x, n, d } = data;
    const y = isShared(data.y) ? data.y : (sharedY = sharedCopy(data.y, sharedY));
    const thresholds = thresholdsIn === undefined || isShared(thresholdsIn) ? thresholdsIn : (sharedThresholds = sharedCopy(thresholdsIn, sharedThresholds));
    const key = JSON.stringify([loss.name, loss.parameters]);
    // The partials' room: a streamed pass's chunks (its rows are read, not x's).
    const chunks = Math.ceil((streamed?.passRows ?? n) / CHUNK_ROWS);
    const precision = x instanceof Float64Array ? 'float64' as const : 'float32' as const;
    const same = config !== undefined && config.x === x.buffer && config.xOffset === x.byteOffset && config.y === y.buffer
      && config.yOffset === y.byteOffset && config.n === n && config.d === d && lossKey === key && config.precision === precision
      && config.thresholds === thresholds?.buffer && config.thresholdsOffset === (thresholds?.byteOffset ?? 0)
      && JSON.stringify(config.streamed) === JSON.stringify(streamed);
    if (!same) {
      version = (version + 1) & GEN_MASK;
      const params = new SharedArrayBuffer(PARAM_WORDS(d) * 8);
      const partialBuffer = new SharedArrayBuffer(chunks * (d + 1) * 8);
      const memory = featureMemoryOf(x, d);
      config = {
        version, x: x.buffer as SharedArrayBuffer, xOffset: x.byteOffset, y: y.buffer as SharedArrayBuffer, yOffset: y.byteOffset,
        n, d, chunks, params, partials: partialBuffer, lossName: loss.name, lossParameters: loss.parameters, precision,
        ...(memory === undefined ? {} : { memory }),
        ...(thresholds === undefined ? {} : { thresholds: thresholds.buffer as SharedArrayBuffer }),
        thresholdsOffset: thresholds?.byteOffset ?? 0,
        yInMemory: memory !== undefined && y.buffer === memory.memory.buffer,
        thresholdsInMemory: memory !== undefined && thresholds?.buffer === memory.memory.buffer,
        ...(streamed === undefined ? {} : { streamed }),
      };
      lossKey = key;
      theta = new Float64Array(params);
      partials = new Float64Array(partialBuffer);
      for (const { port } of workers) port.postMessage(config);
      Atomics.store(control, CTRL_VERSION, version);
    }
    return { y, thresholds };
  }

  /** Chunk sums of rows start .. end - 1 into the partials, on every thread; false when a worker failed (the pool is then closed). */
  function runChunks(
    loss: GlmLoss, portable: { name: string; parameters: Record<string, number> }, data: StoredGlmData, thetaIn: Float64Array, clipNorm: number, thresholdsIn: Float64Array | undefined,
    start: number, end: number, streamed?: { pass: StreamedPass; config: NonNullable<PoolConfig['streamed']> },
  ): boolean {
    const { d, x } = data;
    const { y, thresholds } = configure(portable, data, thresholdsIn, streamed?.config);
    const chunks = Math.ceil((end - start) / CHUNK_ROWS);
    theta.set(thetaIn);
    theta[PARAM_CLIP_NORM(d)] = clipNorm;
    theta[PARAM_START_ROW(d)] = start;
    theta[PARAM_END_ROW(d)] = end;
    theta[PARAM_CHUNKS(d)] = chunks;
    theta[PARAM_CACHED(d)] = streamed?.pass.cached === true ? 1 : 0;
    gen = (gen + 1) & GEN_MASK;
    Atomics.store(control, CTRL_DONE, 0);
    Atomics.store(claimWord, 0, openClaims(gen));
    Atomics.store(control, CTRL_GEN, gen);
    Atomics.notify(control, CTRL_GEN);
    // The calling thread claims chunks like any worker.
    const part = new Float64Array(d);
    const thetaView = theta.subarray(0, d);
    // A chunk that fails here (a streamed read, a label) stops this thread's work; the job's
    // other chunks are still claimed and counted (the workers must be idle before the error
    // leaves: they read the job's theta and write its partials), then the error is thrown.
    let failure: { error: unknown } | undefined;
    for (;;) {
      const chunk = claimChunk(claimWord, gen, chunks);
      if (chunk < 0) break;
      if (failure === undefined) {
        part.fill(0);
        const from = start + chunk * CHUNK_ROWS;
        const to = Math.min(end, from + CHUNK_ROWS);
        try {
          const clipped = streamed !== undefined
            ? sumStreamedRange(loss, streamed.pass.read, streamed.pass.area, 0, thetaView, clipNorm, streamed.pass.cached, from, to, scratch, part)
            : thresholds === undefined
              ? accumulateClippedRange(loss, x as Float64Array, y, d, thetaView, clipNorm, undefined, from, to, scratch, part)
              : accumulateClippedRangeCached(loss, x, y, d, thetaView, thresholds, clipNorm, from, to, scratch, part);
          partials.set(part, chunk * (d + 1));
          partials[chunk * (d + 1) + d] = clipped;
        } catch (error) {
          failure = { error };
        }
      }
      Atomics.add(control, CTRL_DONE, 1);
    }
    let lastDone = -1;
    let lastProgress = Date.now();
    for (;;) {
      const done = Atomics.load(control, CTRL_DONE);
      if (done >= chunks || Atomics.load(control, CTRL_ERROR) !== 0) break;
      if (done !== lastDone) {
        lastDone = done;
        lastProgress = Date.now();
      } else if (Date.now() - lastProgress > stallTimeoutMs) {
        closed = true;
        throw new NumericalError(`parallel clipped-gradient sum: no progress for ${stallTimeoutMs} ms (${done} of ${chunks} chunks done); the pool is closed`);
      }
      Atomics.wait(control, CTRL_DONE, done, 100);
    }
    if (failure !== undefined) throw failure.error;
    if (Atomics.load(control, CTRL_ERROR) !== 0) {
      // A worker failed: stop using the pool (the caller computes the sum here: the same numbers).
      closed = true;
      return false;
    }
    return true;
  }

  /** The loss as a worker rebuilds it, or the error for a custom loss. */
  function portableLoss(loss: GlmLoss): { name: string; parameters: Record<string, number> } {
    const portable = rebuildable(loss);
    if (portable === undefined) {
      throw new InvalidParameterError('loss', loss.name, 'a built-in loss (lossByName)', 'a custom loss cannot be sent to worker threads; use sumClippedGradients');
    }
    return portable;
  }

  function requireShared(data: StoredGlmData): void {
    if (!isShared(data.x)) {
      throw new InvalidParameterError('data.x', 'an array on an ArrayBuffer', 'an array on a SharedArrayBuffer', 'call shareGlmData(data) once before training');
    }
  }

  function sum(loss: GlmLoss, data: StoredGlmData, thetaIn: Float64Array, options: ClippedGradientSumOptions): ClippedGradientSum {
    if (closed || options.indices !== undefined || data.n <= CHUNK_ROWS) return sumStoredClippedGradients(loss, data, thetaIn, options);
    const { clipNorm, out, thresholds: thresholdsIn } = checkClippedSumArguments(data, thetaIn, options);
    const portable = portableLoss(loss);
    requireShared(data);
    const { n, d } = data;
    if (!runChunks(loss, portable, data, thetaIn, clipNorm, thresholdsIn, 0, n)) return sumStoredClippedGradients(loss, data, thetaIn, options);
    out.fill(0);
    let clippedCount = 0;
    // Chunk order, as in sumClippedGradients (n > CHUNK_ROWS here, so it also sums chunk by chunk).
    for (let c = 0; c < (config as PoolConfig).chunks; c++) {
      const off = c * (d + 1);
      for (let j = 0; j < d; j++) out[j] += partials[off + j];
      clippedCount += partials[off + d];
    }
    return { sum: out, clippedCount, count: n };
  }

  function addChunkSums(loss: GlmLoss, data: StoredGlmData, thetaIn: Float64Array, options: ClippedGradientSumOptions & { out: Float64Array }, start: number, end: number): number {
    if (options.indices !== undefined) throw new InvalidParameterError('indices', 'given', 'absent (full passes only)');
    const { clipNorm, out, thresholds: thresholdsIn } = checkClippedSumArguments(data, thetaIn, options);
    const { n, d, x, y } = data;
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end > n || start >= end) throw new InvalidParameterError('end', end, `an integer in (start, n] = (${start}, ${n}]`);
    const chunks = Math.ceil((end - start) / CHUNK_ROWS);
    const inPool = !closed && chunks > 1;
    if (inPool) {
      requireShared(data);
      if (runChunks(loss, portableLoss(loss), data, thetaIn, clipNorm, thresholdsIn, start, end)) {
        return addPartials(partials, chunks, d, out);
      }
    }
    // Here: each chunk from zero, added in order (the same numbers).
    const part = new Float64Array(d);
    let clippedCount = 0;
    for (let from = start; from < end; from += CHUNK_ROWS) {
      part.fill(0);
      const to = Math.min(end, from + CHUNK_ROWS);
      clippedCount += thresholdsIn === undefined
        ? accumulateClippedRange(loss, x as Float64Array, y, d, thetaIn, clipNorm, undefined, from, to, scratch, part)
        : accumulateClippedRangeCached(loss, x, y, d, thetaIn, thresholdsIn, clipNorm, from, to, scratch, part);
      for (let j = 0; j < d; j++) out[j] += part[j];
    }
    return clippedCount;
  }

  function addStreamedChunkSums(loss: GlmLoss, pass: StreamedPass, thetaIn: Float64Array, clipNorm: number, out: Float64Array): number {
    const { area, n } = pass;
    const { x, d } = area;
    if (thetaIn.length !== d || out.length !== d) throw new InvalidParameterError('theta.length', thetaIn.length, `the rows' d = ${d} (and out.length too)`);
    const chunks = Math.ceil(n / CHUNK_ROWS);
    // The workers read shared memory only and each needs its ring; else all on this thread (the same numbers).
    const inPool = !closed && chunks > 1 && area.rings >= threads && isShared(x) && isShared(area.ringY) && isShared(area.ringT);
    if (inPool) {
      const rows = area.ringY.length;
      const config: NonNullable<PoolConfig['streamed']> = {
        file: pass.file, passRows: n, blockRows: area.blockRows, rings: area.rings,
        ...(area.cacheY === undefined ? {} : { cacheY: area.cacheY, cacheT: area.cacheT }),
      };
      if (runChunks(loss, portableLoss(loss), { x, y: area.ringY, n: rows, d }, thetaIn, clipNorm, area.ringT, 0, n, { pass, config })) {
        return addPartials(partials, chunks, d, out);
      }
    }
    return sumStreamedPass(loss, pass, thetaIn, clipNorm, out, scratch);
  }

  return {
    threads,
    sumClippedGradients: sum,
    addChunkSums,
    addStreamedChunkSums,
    async close(): Promise<void> {
      if (workers.length === 0) return;
      closed = true;
      Atomics.store(control, CTRL_STOP, 1);
      Atomics.add(control, CTRL_GEN, 1);
      Atomics.notify(control, CTRL_GEN);
      // The workers leave their loop on STOP; terminate() also ends what tsx's hooks keep alive.
      await Promise.all(workers.map(async ({ worker, exited }) => {
        await worker.terminate();
        await exited;
      }));
      workers.length = 0;
    },
  };
}
