/**
 * Per-example gradients clipped to a norm C, the core of DP-GD (`002` Sec. 2.2: clip each
 * example's gradient, sum, add Gaussian noise) and DP-SGD. For a GLM the per-example gradient is
 * f'(x_i . theta; y_i) x_i, so clipping is a scalar: the clipped gradient is c_i x_i with
 * c_i = clamp(f'(z_i), -t_i, t_i), t_i = C / ||x_i||_2 (times `CLIP_SAFETY`, so that the norm
 * computed in floating point stays <= C). This is exactly the gradient of the clipped-gradient
 * loss of `003` App. F.2, so the sum here equals the unregularised gradient of
 * `glmObjective(loss, data, {clipNorm: C})` (wherever every f'(z_i) is a number, see below).
 *
 * A NaN derivative. A finite but huge theta can overflow a margin: a float64 margin past ~1.8e308,
 * a float32 one (`kernels/float32-logistic.ts`) past ~3.4e38, and then Infinity - Infinity is NaN,
 * so f'(z_i) is NaN. A clamp by comparisons lets NaN through (NaN > t and NaN < -t are false, and
 * WebAssembly's pmax / pmin with the value first return it), and the released sum would be NaN or
 * not depending on that one row: a release outside the guarantee. So every clamp of the sum
 * (`clampBlock`, `clampCached`, `clampGathered` here, the SIMD `clamp` of `kernels/wasm-kernels.ts`,
 * the fused pass's of `kernels/wasm-logistic-step.ts`, float64 or float32 lanes, and `fixedPointClamp`
 * of `kernels/fixed-point.ts`) sets a NaN c_i to +0 and counts it as
 * clipped, identically on every path; numbers are clamped exactly as before (same bits). Any c_i in
 * [-t_i, t_i] chosen from row i and theta alone is a valid clipped gradient: its term has norm
 * <= C, all that the sensitivity of `002` Sec. 2.2 uses (the clipped gradient of `003` App. F.2,
 * Thm. F.2 item 2, is one such choice; +0 for a NaN is another), so the guarantee and
 * `clippedSumRoundingBound` hold as they are. +0 rather than -t_i because it adds nothing (0 x_ij
 * is a signed zero) and stays finite where t_i = Infinity (C = Infinity: -t_i x_ij would be
 * infinite or NaN).
 */
import { InvalidParameterError } from '../../errors.js';
import { requirePositiveOrInfinity } from '../../validate.js';
import { clipThreshold } from './clipped-gradient.js';
import { checkThresholds, clipThresholds, type ClipThresholds } from './clip-thresholds.js';
import { checkGlmShape, checkStoredGlmShape, checkTheta } from './data.js';
import { claimSlot, featureMemoryOf, kernelsFor, releaseSlot, slotPointers, WASM_BLOCK, type FeatureMemory } from './kernels/feature-memory.js';
import { accumulateBlock, BLOCK, marginsBlock, marginsContiguous } from './kernels/kernels.js';
import { newSparseScratch, sparseAccumulateGathered, sparseMarginsGathered, type SparseRows, type SparseScratch } from './kernels/sparse-rows.js';
import { logisticLoss } from './losses/logistic.js';
import { fusedBlockRows, logisticStepFor } from './kernels/wasm-logistic-step.js';
import { float32LogisticDerivatives, float32Margins, float32Theta } from './kernels/float32-logistic.js';
import { FIXED_FLUSH_ROWS, fixedPointAccumulate, fixedPointClamp, fixedPointFlush, fixedPointScale, type FixedPointScale } from './kernels/fixed-point.js';
import { fixedScratchOffsets } from './kernels/wasm-logistic-step.js';
import type { FeatureArray, GlmData, GlmLoss, StoredGlmData } from './types.js';
import type { WasmKernelExports } from './kernels/wasm-kernels.js';

export interface ClippedGradientSumOptions {
  /** C > 0, or Infinity for no clipping. */
  clipNorm: number;
  /** Rows to use, e.g. a Poisson batch (repeats count repeatedly); default all n rows. */
  indices?: ArrayLike<number>;
  /** Where to write the sum (length d; overwritten). Default a new array. */
  out?: Float64Array;
  /**
   * The rows' clip thresholds, `clipThresholds(data, clipNorm)` of the same features: computed
   * once per data set, they save the per-step squared row norms (the same numbers either way).
   * Full passes only (not with `indices`). Float32 features without them get them per call.
   */
  thresholds?: ClipThresholds;
}

export interface ClippedGradientSum {
  /** sum_i clip_C(grad l(theta; x_i, y_i)). */
  sum: Float64Array;
  /** Number of rows whose gradient norm exceeded C and was scaled down, or whose derivative was NaN (set to 0, see the module comment). */
  clippedCount: number;
  /** Number of rows summed. */
  count: number;
}

/** c[k] <- clamp(c[k], -t_k, t_k) with t_k = clipThreshold(C, sqrt(ss[k])), a NaN c[k] to +0; returns how many were clipped. */
function clampBlock(c: Float64Array, ss: Float64Array, clipNorm: number, m: number): number {
  let clipped = 0;
  for (let k = 0; k < m; k++) {
    const ck = c[k];
    const t = clipThreshold(clipNorm, Math.sqrt(ss[k]));
    if (ck > t) {
      c[k] = t;
      clipped++;
    } else if (ck < -t) {
      c[k] = -t;
      clipped++;
    } else if (ck !== ck) {
      c[k] = 0; // NaN: see the module comment
      clipped++;
    }
  }
  return clipped;
}

/** c[k] <- clamp(c[k], -t, t) with the cached t = thresholds[start + k], a NaN c[k] to +0; returns how many were clipped. */
function clampCached(c: Float64Array, thresholds: Float64Array, start: number, m: number): number {
  let clipped = 0;
  for (let k = 0; k < m; k++) {
    const ck = c[k];
    const t = thresholds[start + k];
    if (ck > t) {
      c[k] = t;
      clipped++;
    } else if (ck < -t) {
      c[k] = -t;
      clipped++;
    } else if (ck !== ck) {
      c[k] = 0; // NaN: see the module comment
      clipped++;
    }
  }
  return clipped;
}

/**
 * Rows per chunk of a sum: the rows are cut into fixed chunks of CHUNK_ROWS (by position in the
 * pass, whatever the thread count), each chunk is summed on its own, and the chunk sums are added
 * to the result in chunk order. The parallel sum (`parallel-clipped-sum.ts`) computes the same
 * chunk sums on several threads and adds them in the same order, so its result is bit-for-bit
 * that of this function, independent of timing and of the number of threads. With at most
 * CHUNK_ROWS rows the sum is the plain blocked pass.
 */
export const CHUNK_ROWS = 32768;

/**
 * A public bound on how far the computed sum of at most `rows` clipped gradients (clip norm C,
 * d coordinates) can be from the exact sum of the same clipped gradients, in L2 norm. The
 * sensitivity of the COMPUTED sum is the exact one plus twice this (one error per dataset).
 *
 * Proof note (Higham, "Accuracy and Stability of Numerical Algorithms", 2nd ed., Sec. 4.2: a sum
 * whose every term passes through at most D roundings has error <= gamma_D sum |a_i|,
 * gamma_D = D u / (1 - D u), u = 2^-53). The kernels (`kernels.ts`) form c_i x_ij (one rounding),
 * add four rows as ((t0 + t1) + t2) + t3 (<= 3), add that to the chunk's partial sum once per
 * group of four (<= ceil(CHUNK_ROWS / 4) + 3 for the remainder rows), and add the chunk sums in
 * order (<= ceil(rows / CHUNK_ROWS)): D <= 8 + ceil(min(rows, CHUNK_ROWS) / 4) + ceil(rows / CHUNK_ROWS).
 * Per coordinate the error is <= gamma_D sum_i |a_ij|, so in L2 it is <= gamma_D sum_i ||a_i|| <=
 * gamma_D rows B, where B bounds each computed clipped gradient's norm: C (1 + (d + 8) u) covers
 * the rounding of the squared row norm (gamma_d), of its square root, of the threshold and of the
 * products (`CLIP_SAFETY` already aims below C). CHANGE THIS BOUND if the summation order changes.
 *
 * The bound covers every path of the sum (scalar, SIMD, fused, worker pool), because each performs exactly the operations
 * above in that order: cached thresholds (`clip-thresholds.ts`: the same squared norm, summed over
 * j in order, the same t); the fused blocks with margins only (`marginsContiguous`); the
 * WebAssembly SIMD kernels (`wasm-kernels.ts`: lanes are the even and odd halves of a margin and
 * coordinates for the update, each lane doing the scalar kernel's operations in its order, IEEE
 * mul and add, no fused multiply-add; the clamp by pmax/pmin, the scalar comparisons); the fused
 * logistic pass (`wasm-logistic-step.ts`: the same margins, `deterministicExp` as the JavaScript
 * derivative, the same clamp, and the update's four-row groups added to out one after the
 * other, float32 rows widened once into a scratch); the worker pool (chunk sums added in chunk order); DP-SGD's batches with cached
 * thresholds (`sumBatchClippedGradients`), on the dense rows or on their nonzero entries
 * (`kernels/sparse-rows.ts`, which proves that skipping the zero terms changes no bit). Float32 storage: a stored
 * value widens to float64 exactly, so the sum is the float64 pass's on the widened rows; t and the
 * clamp use those rows, so B still bounds every computed term and the same D applies. With the
 * logistic loss, float32 rows take their coefficients from float32 margins and a float32 derivative
 * (`kernels/float32-logistic.ts`) and, for a finite clip norm C (about [2^-101, 2^99]), clamp and sum
 * them in fixed point (`kernels/fixed-point.ts`): each row's contribution w_i is an integer vector
 * times P 2^-21 (P the power of two in [1.5 C, 3 C)) fixed by that row alone, with ||w_i|| < C (proved
 * there: the float32 clamp's and the scale's roundings and the rounding of each element to an
 * integer are paid by shrinking the scale by (2 + 2 ceil(sqrt d)) 2^-21), the integer sums are
 * exact, and the only roundings are the dequantization of each 1024-row block's sums and the
 * additions of those into the chunk's sum and of the chunk sums: at most 2 + ceil(min(rows,
 * CHUNK_ROWS) / 1024) + ceil(rows / CHUNK_ROWS) per term, fewer than D above, with terms of norm
 * < C <= B. So this bound, with the w_i as the clipped gradients, and the sensitivity hold unchanged
 * (`test/learners/glm/kernels/fixed-point.test.ts` checks ||w_i|| < C on adversarial rows and every
 * path bit for bit against an independent reference; with C = Infinity float32 rows keep the
 * float64 clamp and update, `kernel-paths.test.ts` checks all paths against the per-step-norm sum;
 * `relaxed-kernel.test.ts` checks the float32 pass against an exact rational sum within this bound).
 *
 * The relaxed-SIMD variant of the fused pass (`logisticStepFor(..., 'fused')`: f64x2.relaxed_madd,
 * fused or not as the engine chooses) is not used by these sums (measured 6 to 16 % faster on
 * 1e6 x 20, `bench/kernel.ts`: not worth losing the identity between paths). Were it used, the same
 * D would hold: it forms each group as madd(c3, x3, madd(c2, x2, madd(c1, x1, c0 x0))) and adds it
 * to out, so a term passes through at most the roundings counted above (a multiply-add rounds once
 * where a multiply and an add round twice); `test/learners/glm/relaxed-kernel.test.ts` checks it
 * against an exact sum, and that it is deterministic.
 */
export function clippedSumRoundingBound(rows: number, clipNorm: number, d: number): number {
  const u = Number.EPSILON / 2;
  const depth = 8 + Math.ceil(Math.min(rows, CHUNK_ROWS) / 4) + Math.ceil(rows / CHUNK_ROWS);
  const gamma = (depth * u) / (1 - depth * u);
  const termBound = clipNorm * (1 + (d + 8) * u);
  return gamma * rows * termBound * (1 + 8 * u);
}

/** @internal The per-block buffers of a pass. */
export interface ClipScratch {
  z: Float64Array;
  y: Float64Array;
  ss: Float64Array;
  c: Float64Array;
  /** A block of float32 rows widened to float64 (allocated when first needed). */
  wide?: Float64Array;
  /** theta rounded for float32 rows (`float32Theta`, allocated when first needed). */
  theta32?: Float32Array;
  /** The integer sums of the fixed-point update (`kernels/fixed-point.ts`, allocated when first needed). */
  q?: Float64Array;
}

/** The scratch's theta32 for this theta (float32 rows with the logistic loss, `float32-logistic.ts`). */
function theta32Of(s: ClipScratch, theta: Float64Array, d: number): Float32Array {
  const length = 4 * Math.ceil(d / 4);
  if (s.theta32 === undefined || s.theta32.length !== length) s.theta32 = new Float32Array(length);
  return float32Theta(theta, d, s.theta32);
}

/** @internal */
export function newClipScratch(): ClipScratch {
  return { z: new Float64Array(BLOCK), y: new Float64Array(BLOCK), ss: new Float64Array(BLOCK), c: new Float64Array(BLOCK) };
}

/**
 * @internal `accumulateClippedRange` for a full pass with cached thresholds (rows start .. end - 1):
 * the same numbers, in fused blocks (margins, f', clamp, update while the block is in cache) by
 * the SIMD kernels when the features live in a feature memory (`feature-memory.ts`) and a scratch
 * slot is free, else by the JavaScript kernels (float32 rows widened block by block).
 *
 * Float32 rows with the logistic loss and a clip norm C whose scales exist (`fixedPointScale`:
 * C finite, its power of two P in [2^-100, 2^100]) are clamped and summed in fixed point
 * (`kernels/fixed-point.ts`), their integer sums flushed every FIXED_FLUSH_ROWS (1024) rows counted
 * from `start`; other float32 rows (C = Infinity) with the float64 update. So a range split into
 * pieces gives the same bits only where every piece starts a multiple of 1024 rows after the
 * range's start, as chunks and the streamed pieces do. `clipNorm` is the C `thresholds` were
 * computed with (`clipThresholds`, `clipThreshold`): the fixed-point proof needs it.
 */
export function accumulateClippedRangeCached(
  loss: GlmLoss, x: FeatureArray, y: Float64Array, d: number, theta: Float64Array, thresholds: Float64Array, clipNorm: number,
  start: number, end: number, s: ClipScratch, out: Float64Array,
): number {
  const fixed = x instanceof Float32Array && loss === logisticLoss ? fixedPointScale(clipNorm, d) : undefined;
  return cachedRange(loss, x, y, d, theta, thresholds, start, end, s, out, fixed);
}

/** `accumulateClippedRangeCached`'s work on rows start .. end - 1; `fixed`: float32 logistic rows in fixed point with these scales. */
function cachedRange(
  loss: GlmLoss, x: FeatureArray, y: Float64Array, d: number, theta: Float64Array, thresholds: Float64Array,
  start: number, end: number, s: ClipScratch, out: Float64Array, fixed: FixedPointScale | undefined,
): number {
  const info = featureMemoryOf(x, d);
  if (info !== undefined) {
    const kernels = kernelsFor(info.memory);
    if (kernels !== null) {
      const slot = claimSlot(info);
      if (slot >= 0) {
        try {
          if (fixed !== undefined) return fixedWasmRange(info, slot, x as Float32Array, y, d, theta, thresholds, start, end, s, out, fixed);
          return wasmRange(kernels, info, slot, loss, x, y, d, theta, thresholds, start, end, s, out);
        } finally {
          releaseSlot(info, slot);
        }
      }
    }
  }
  let clipped = 0;
  if (x instanceof Float64Array) {
    for (let b = start; b < end; b += BLOCK) {
      const m = Math.min(BLOCK, end - b);
      marginsBlock(x, y, d, theta, b, m, undefined, s.z, s.y, null);
      loss.derivatives(s.z, s.y, s.c, m);
      clipped += clampCached(s.c, thresholds, b, m);
      accumulateBlock(x, d, b, m, undefined, s.c, out);
    }
    return clipped;
  }
  if (fixed !== undefined) {
    // The fixed-point update (`kernels/fixed-point.ts`): BLOCK divides FIXED_FLUSH_ROWS.
    const theta32 = theta32Of(s, theta, d);
    const q = qOf(s, d);
    for (let b = start; b < end; b += BLOCK) {
      const m = Math.min(BLOCK, end - b);
      for (let k = 0; k < m; k++) s.y[k] = y[b + k];
      float32Margins(x, d, theta32, b, m, s.z);
      float32LogisticDerivatives(s.z, s.y, s.c, m);
      clipped += fixedPointClamp(s.c, thresholds, b, m);
      fixedPointAccumulate(x, d, b, m, s.c, fixed.sigma, q);
      if ((b + m - start) % FIXED_FLUSH_ROWS === 0 || b + m === end) fixedPointFlush(q, fixed.unit, out, d);
    }
    return clipped;
  }
  const wide = s.wide !== undefined && s.wide.length === BLOCK * d ? s.wide : (s.wide = new Float64Array(BLOCK * d));
  const theta32 = loss === logisticLoss ? theta32Of(s, theta, d) : undefined;
  for (let b = start; b < end; b += BLOCK) {
    const m = Math.min(BLOCK, end - b);
    for (let k = 0, base = b * d; k < m * d; k++) wide[k] = x[base + k];
    for (let k = 0; k < m; k++) s.y[k] = y[b + k];
    if (theta32 !== undefined) {
      float32Margins(x, d, theta32, b, m, s.z);
      float32LogisticDerivatives(s.z, s.y, s.c, m);
    } else {
      marginsContiguous(wide, d, theta, 0, m, s.z);
      loss.derivatives(s.z, s.y, s.c, m);
    }
    clipped += clampCached(s.c, thresholds, b, m);
    accumulateBlock(wide, d, 0, m, undefined, s.c, out);
  }
  return clipped;
}

/** The slot's scratch (`feature-memory.ts`) as views, with theta written into it and its partial sum started at `out`. */
function openSlot(info: FeatureMemory, slot: number, d: number, theta: Float64Array, out: Float64Array) {
  const buffer = info.memory.buffer;
  const pointers = slotPointers(info, slot, d);
  new Float64Array(buffer, pointers.theta, d).set(theta);
  const part = new Float64Array(buffer, pointers.part, d);
  part.set(out);
  return {
    pointers,
    t: new Float64Array(buffer, pointers.t, WASM_BLOCK),
    z: new Float64Array(buffer, pointers.z, WASM_BLOCK),
    c: new Float64Array(buffer, pointers.c, WASM_BLOCK),
    part,
  };
}

function wasmRange(
  kernels: WasmKernelExports, info: FeatureMemory, slot: number, loss: GlmLoss, x: FeatureArray, y: Float64Array, d: number, theta: Float64Array,
  thresholds: Float64Array, start: number, end: number, s: ClipScratch, out: Float64Array,
): number {
  const buffer = info.memory.buffer;
  const { t, z, c, part, pointers: { theta: thetaPtr, z: zPtr, c: cPtr, t: tPtr, part: partPtr, fused: fusedPtr } } = openSlot(info, slot, d, theta, out);
  const f64 = info.precision === 'float64';
  const rowBytes = d * (f64 ? 8 : 4);
  let clipped = 0;
  // The logistic loss has a fused SIMD pass (its deterministic exp is in the kernel) over whole
  // blocks of `group` rows; the rows past the last block take the blocked kernels below.
  const fused = loss === logisticLoss ? logisticStepFor(info.memory, d, info.precision) : null;
  const group = fusedBlockRows(info.precision);
  // Labels and thresholds in the features' memory (its side region, `feature-memory.ts`) are read
  // in place; others are copied into the slot block by block.
  const yInPlace = y.buffer === buffer;
  const tInPlace = thresholds.buffer === buffer;
  // Float32 rows with the logistic loss: the remaining rows' margins and derivatives as the fused pass computes them.
  const theta32 = !f64 && loss === logisticLoss ? theta32Of(s, theta, d) : undefined;
  let first = start;
  if (fused !== null && yInPlace && tInPlace) {
    // Labels and thresholds in place: one call for the range's whole blocks (the kernel takes them
    // one after the other, as the calls below would: the same sums), the rest below.
    const groups = (end - start) - ((end - start) % group);
    clipped += fused(info.xOffset + start * rowBytes, thetaPtr, y.byteOffset + 8 * start, thresholds.byteOffset + 8 * start, groups, partPtr, fusedPtr);
    first = start + groups;
  }
  for (let block = first; block < end; block += WASM_BLOCK) {
    let b = block;
    let m = Math.min(WASM_BLOCK, end - b);
    if (fused !== null) {
      const groups = m - (m % group);
      if (!yInPlace) z.set(y.subarray(b, b + groups));
      if (!tInPlace) t.set(thresholds.subarray(b, b + groups));
      clipped += fused(info.xOffset + b * rowBytes, thetaPtr, yInPlace ? y.byteOffset + 8 * b : zPtr, tInPlace ? thresholds.byteOffset + 8 * b : tPtr, groups, partPtr, fusedPtr);
      if (groups === m) continue;
      b += groups; // the last block's 1 to group - 1 remaining rows (WASM_BLOCK is a multiple of group)
      m -= groups;
    }
    const ptr = info.xOffset + b * rowBytes;
    if (theta32 !== undefined) {
      float32Margins(x as Float32Array, d, theta32, b, m, z);
      float32LogisticDerivatives(z, y.subarray(b, b + m), c, m);
    } else {
      if (f64) kernels.margins64(ptr, d, thetaPtr, m, zPtr);
      else kernels.margins32(ptr, d, thetaPtr, m, zPtr);
      loss.derivatives(z, y.subarray(b, b + m), c, m);
    }
    t.set(thresholds.subarray(b, b + m));
    clipped += kernels.clamp(cPtr, tPtr, m);
    if (f64) kernels.accumulate64(ptr, d, m, cPtr, partPtr);
    else kernels.accumulate32(ptr, d, m, cPtr, partPtr);
  }
  out.set(part);
  return clipped;
}

/** The scratch's integer sums (zero: every flush leaves them zero). */
function qOf(s: ClipScratch, d: number): Float64Array {
  if (s.q === undefined || s.q.length !== d) s.q = new Float64Array(d);
  return s.q;
}

/**
 * `wasmRange` with the fixed-point update (float32 rows, logistic loss): whole 16-row blocks by the
 * fused pass's 'fixed' variant (which flushes every FIXED_FLUSH_ROWS rows from its first row), the
 * rest of a 1024-row block by the JavaScript of `kernels/fixed-point.ts` into the same integer sums
 * Q (in the slot's fused scratch), flushed at the block's end: the same integers, the same bits.
 */
function fixedWasmRange(
  info: FeatureMemory, slot: number, x: Float32Array, y: Float64Array, d: number, theta: Float64Array,
  thresholds: Float64Array, start: number, end: number, s: ClipScratch, out: Float64Array, scale: FixedPointScale,
): number {
  const buffer = info.memory.buffer;
  const { t, z, c, part, pointers: { theta: thetaPtr, z: zPtr, c: cPtr, t: tPtr, part: partPtr, fused: fusedPtr } } = openSlot(info, slot, d, theta, out);
  const step = logisticStepFor(info.memory, d, 'float32', 'exact', 'fixed');
  // Q: in the fused scratch when the fused pass runs (it zeroes them on entry), else the JavaScript scratch's.
  const q = step !== null ? new Float64Array(buffer, fusedPtr + fixedScratchOffsets(d).q, d) : qOf(s, d);
  q.fill(0);
  const group = fusedBlockRows('float32');
  const theta32 = theta32Of(s, theta, d);
  const yInPlace = y.buffer === buffer;
  const tInPlace = thresholds.buffer === buffer;
  const rowBytes = 4 * d;
  let clipped = 0;
  /** Rows b .. b + m - 1 by the JavaScript (margins, derivatives, the float32 clamp, the integer sums). */
  const rest = (b: number, m: number): void => {
    float32Margins(x, d, theta32, b, m, z);
    float32LogisticDerivatives(z, y.subarray(b, b + m), c, m);
    clipped += fixedPointClamp(c, thresholds, b, m);
    fixedPointAccumulate(x, d, b, m, c, scale.sigma, q);
  };
  if (step !== null && yInPlace && tInPlace) {
    // One call for the range's whole 16-row groups (the pass flushes every 1024 rows from start), the rest below.
    const groups = (end - start) - ((end - start) % group);
    clipped += step(info.xOffset + start * rowBytes, thetaPtr, y.byteOffset + 8 * start, thresholds.byteOffset + 8 * start, groups, partPtr, fusedPtr, scale.sigma, scale.unit);
    if (groups < end - start) rest(start + groups, end - start - groups);
    if ((end - start) % FIXED_FLUSH_ROWS !== 0) fixedPointFlush(q, scale.unit, part, d);
  } else {
    // One 1024-row block (WASM_BLOCK = FIXED_FLUSH_ROWS) at a time.
    for (let b = start; b < end; b += FIXED_FLUSH_ROWS) {
      const m = Math.min(FIXED_FLUSH_ROWS, end - b);
      let groups = 0;
      if (step !== null) {
        groups = m - (m % group);
        if (!yInPlace) z.set(y.subarray(b, b + groups));
        if (!tInPlace) t.set(thresholds.subarray(b, b + groups));
        clipped += step(info.xOffset + b * rowBytes, thetaPtr, yInPlace ? y.byteOffset + 8 * b : zPtr, tInPlace ? thresholds.byteOffset + 8 * b : tPtr, groups, partPtr, fusedPtr, scale.sigma, scale.unit);
      }
      if (groups < m) rest(b + groups, m - groups);
      if (m % FIXED_FLUSH_ROWS !== 0 || step === null) fixedPointFlush(q, scale.unit, part, d);
    }
  }
  out.set(part);
  return clipped;
}

const scratch = newClipScratch();
let scratchInUse = false;

/**
 * @internal out += the clipped gradients of pass positions start .. end - 1 (rows
 * `indices[k]`, or k when indices are absent), block by block; returns how many were clipped.
 * No checks: the callers validated shapes, indices and clipNorm.
 */
export function accumulateClippedRange(
  loss: GlmLoss, x: Float64Array, y: Float64Array, d: number, theta: Float64Array, clipNorm: number,
  indices: ArrayLike<number> | undefined, start: number, end: number, s: ClipScratch, out: Float64Array,
): number {
  let clipped = 0;
  for (let b = start; b < end; b += BLOCK) {
    const m = Math.min(BLOCK, end - b);
    marginsBlock(x, y, d, theta, b, m, indices, s.z, s.y, s.ss);
    loss.derivatives(s.z, s.y, s.c, m);
    clipped += clampBlock(s.c, s.ss, clipNorm, m);
    accumulateBlock(x, d, b, m, indices, s.c, out);
  }
  return clipped;
}

function checkIndices(indices: ArrayLike<number>, n: number): void {
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k];
    if (!Number.isInteger(i) || i < 0 || i >= n) throw new InvalidParameterError(`indices[${k}]`, i, `an integer in [0, ${n - 1}]`);
  }
}

/**
 * @internal The checks of `sumClippedGradients` (shapes, theta, clipNorm, indices, out, thresholds);
 * returns clipNorm, out and the cached thresholds (computed here for float32 features without them).
 */
export function checkClippedSumArguments(
  data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions,
): { clipNorm: number; out: Float64Array; thresholds: Float64Array | undefined } {
  checkStoredGlmShape(data);
  checkTheta(theta, data.d);
  const clipNorm = requirePositiveOrInfinity('clipNorm', options.clipNorm);
  if (options.indices !== undefined) {
    if (options.thresholds !== undefined) throw new InvalidParameterError('thresholds', 'given with indices', 'full passes only (no indices)');
    if (data.x instanceof Float32Array) throw new InvalidParameterError('data.x', 'a Float32Array', 'a Float64Array for batches given by indices');
    checkIndices(options.indices, data.n);
  }
  const out = options.out ?? new Float64Array(data.d);
  if (out.length !== data.d) throw new InvalidParameterError('out.length', out.length, `d = ${data.d}`);
  let thresholds: Float64Array | undefined;
  if (options.thresholds !== undefined) thresholds = checkThresholds(options.thresholds, data, clipNorm);
  else if (data.x instanceof Float32Array) thresholds = clipThresholds(data, clipNorm).values;
  return { clipNorm, out, thresholds };
}

/**
 * Sum of the per-example gradients clipped to norm C, in one pass over the rows (blocked, see
 * `kernels.ts`: each row is read from memory once, then again from cache for the update; chunked,
 * see `CHUNK_ROWS`). Checks shapes and indices, not values (validate the data once with
 * `validateGlmData`).
 *
 * @example
 * const {sum, clippedCount} = sumClippedGradients(logisticLoss, data, theta, {clipNorm: 1});
 */
export function sumClippedGradients(loss: GlmLoss, data: GlmData, theta: Float64Array, options: ClippedGradientSumOptions): ClippedGradientSum {
  return sumStoredClippedGradients(loss, data, theta, options);
}

/** `sumClippedGradients` for features stored as float64 or float32 (`StoredGlmData`; float32 only for full passes). */
export function sumStoredClippedGradients(loss: GlmLoss, data: StoredGlmData, theta: Float64Array, options: ClippedGradientSumOptions): ClippedGradientSum {
  const { clipNorm, out, thresholds } = checkClippedSumArguments(data, theta, options);
  const { x, y, n, d } = data;
  const indices = options.indices;
  const count = indices === undefined ? n : indices.length;
  out.fill(0);
  // Reuse the module's block buffers (DP-SGD calls this once per small batch); a re-entrant call
  // (a custom loss that calls back into this function) gets its own.
  const s = scratchInUse ? newClipScratch() : scratch;
  scratchInUse = true;
  let clippedCount = 0;
  // The range of pass positions start .. end - 1 into `into`: with cached thresholds, or recomputing the norms.
  const range = (start: number, end: number, into: Float64Array): number => (thresholds === undefined
    ? accumulateClippedRange(loss, x as Float64Array, y, d, theta, clipNorm, indices, start, end, s, into)
    : accumulateClippedRangeCached(loss, x, y, d, theta, thresholds, clipNorm, start, end, s, into));
  try {
    if (count <= CHUNK_ROWS) {
      clippedCount = range(0, count, out);
    } else {
      const part = new Float64Array(d);
      for (let start = 0; start < count; start += CHUNK_ROWS) {
        part.fill(0);
        clippedCount += range(start, Math.min(count, start + CHUNK_ROWS), part);
        for (let j = 0; j < d; j++) out[j] += part[j];
      }
    }
  } finally {
    if (s === scratch) scratchInUse = false;
  }
  return { sum: out, clippedCount, count };
}

/** c[k] <- clamp(c[k], -t, t) with the cached t = thresholds[indices[start + k]], a NaN c[k] to +0; returns how many were clipped. */
function clampGathered(c: Float64Array, thresholds: Float64Array, indices: ArrayLike<number>, start: number, m: number): number {
  let clipped = 0;
  for (let k = 0; k < m; k++) {
    const ck = c[k];
    const t = thresholds[indices[start + k]];
    if (ck > t) {
      c[k] = t;
      clipped++;
    } else if (ck < -t) {
      c[k] = -t;
      clipped++;
    } else if (ck !== ck) {
      c[k] = 0; // NaN: see the module comment
      clipped++;
    }
  }
  return clipped;
}

/**
 * `accumulateClippedRange` over the batch positions start .. end - 1 (rows `indices[k]`) with the
 * rows' cached thresholds: the same margins (`marginsBlock` without norms computes each margin in
 * the same order), the same t (`clip-thresholds.ts` sums each squared norm over j in order, as
 * `marginAndNorm` does), the same clamp and update, so the same numbers without a squared norm per
 * row and step.
 */
function accumulateClippedBatchCached(
  loss: GlmLoss, x: Float64Array, y: Float64Array, d: number, theta: Float64Array, thresholds: Float64Array,
  indices: ArrayLike<number>, start: number, end: number, s: ClipScratch, out: Float64Array,
  sparse: { rows: SparseRows; scratch: SparseScratch } | undefined,
): number {
  let clipped = 0;
  for (let b = start; b < end; b += BLOCK) {
    const m = Math.min(BLOCK, end - b);
    if (sparse === undefined) marginsBlock(x, y, d, theta, b, m, indices, s.z, s.y, null);
    else sparseMarginsGathered(sparse.rows, y, theta, b, m, indices, s.z, s.y);
    loss.derivatives(s.z, s.y, s.c, m);
    clipped += clampGathered(s.c, thresholds, indices, b, m);
    if (sparse === undefined) accumulateBlock(x, d, b, m, indices, s.c, out);
    else sparseAccumulateGathered(sparse.rows, b, m, indices, s.c, out, sparse.scratch);
  }
  return clipped;
}

export interface BatchClippedSumOptions {
  /** C > 0, or Infinity for no clipping. */
  clipNorm: number;
  /** The batch's rows, e.g. a Poisson batch (repeats count repeatedly). */
  indices: ArrayLike<number>;
  /** `clipThresholds(data, clipNorm)` of these features, computed once for many batches. */
  thresholds: ClipThresholds;
  /** Where to write the sum (length d; overwritten). Default a new array. */
  out?: Float64Array;
  /**
   * `sparseRowsOf(data.x, n, d)` when the features are mostly zero: the same sums from the
   * nonzero entries (`kernels/sparse-rows.ts`). Built from these features, checked to belong to
   * them, not re-read.
   */
  sparse?: SparseRows;
}

let sparseScratch: SparseScratch | undefined;

/**
 * The sum of the clipped gradients of a batch of rows (DP-SGD's step) with the rows' clip
 * thresholds computed once per data set: bit for bit `sumClippedGradients(loss, data, theta,
 * {clipNorm, indices})` (same blocks, chunks and order of additions, so `clippedSumRoundingBound`
 * covers it), without recomputing a squared row norm per row and step. Float64 features only.
 */
export function sumBatchClippedGradients(loss: GlmLoss, data: GlmData, theta: Float64Array, options: BatchClippedSumOptions): ClippedGradientSum {
  checkGlmShape(data);
  checkTheta(theta, data.d);
  const clipNorm = requirePositiveOrInfinity('clipNorm', options.clipNorm);
  const thresholds = checkThresholds(options.thresholds, data, clipNorm);
  const { indices } = options;
  checkIndices(indices, data.n);
  const { x, y, d } = data;
  const out = options.out ?? new Float64Array(d);
  if (out.length !== d) throw new InvalidParameterError('out.length', out.length, `d = ${d}`);
  let sparse: { rows: SparseRows; scratch: SparseScratch } | undefined;
  if (options.sparse !== undefined) {
    const rows = options.sparse;
    if (rows.x !== x || rows.n !== data.n || rows.d !== d) throw new InvalidParameterError('sparse', 'built from other features', 'sparseRowsOf(data.x, n, d) of the data being summed');
    // Each call owns its scratch (its column flags are all 0 again when the call returns).
    const own = sparseScratch !== undefined && sparseScratch.touched.length === d ? sparseScratch : newSparseScratch(d);
    sparseScratch = undefined;
    sparse = { rows, scratch: own };
  }
  const count = indices.length;
  out.fill(0);
  const s = scratchInUse ? newClipScratch() : scratch;
  scratchInUse = true;
  let clippedCount = 0;
  try {
    if (count <= CHUNK_ROWS) {
      clippedCount = accumulateClippedBatchCached(loss, x, y, d, theta, thresholds, indices, 0, count, s, out, sparse);
    } else {
      const part = new Float64Array(d);
      for (let start = 0; start < count; start += CHUNK_ROWS) {
        part.fill(0);
        clippedCount += accumulateClippedBatchCached(loss, x, y, d, theta, thresholds, indices, start, Math.min(count, start + CHUNK_ROWS), s, part, sparse);
        for (let j = 0; j < d; j++) out[j] += part[j];
      }
    }
  } finally {
    if (s === scratch) scratchInUse = false;
  }
  // Only after a complete call are its column flags known to be all 0 again.
  if (sparse !== undefined) sparseScratch = sparse.scratch;
  return { sum: out, clippedCount, count };
}

/**
 * The clipped per-example coefficients c_i (length n): the clipped gradient of row i is c_i x_i,
 * with |c_i| ||x_i||_2 <= C. For learners that post-process per-example gradients, and tests.
 */
export function clippedGradientCoefficients(
  loss: GlmLoss, data: GlmData, theta: Float64Array, clipNorm: number, out: Float64Array = new Float64Array(data.n),
): Float64Array {
  checkGlmShape(data);
  const { x, y, n, d } = data;
  checkTheta(theta, d);
  requirePositiveOrInfinity('clipNorm', clipNorm);
  if (out.length !== n) throw new InvalidParameterError('out.length', out.length, `n = ${n}`);
  const z = new Float64Array(BLOCK);
  const yb = new Float64Array(BLOCK);
  const ss = new Float64Array(BLOCK);
  const c = new Float64Array(BLOCK);
  for (let start = 0; start < n; start += BLOCK) {
    const m = Math.min(BLOCK, n - start);
    marginsBlock(x, y, d, theta, start, m, undefined, z, yb, ss);
    loss.derivatives(z, yb, c, m);
    clampBlock(c, ss, clipNorm, m);
    out.set(c.subarray(0, m), start);
  }
  return out;
}

/** The clipped gradient of row i, c_i x_i (a new array, or `out`). */
export function clippedExampleGradient(
  loss: GlmLoss, data: GlmData, theta: Float64Array, i: number, clipNorm: number, out: Float64Array = new Float64Array(data.d),
): Float64Array {
  checkGlmShape(data);
  checkIndices([i], data.n);
  const c = clippedGradientCoefficients(loss, { x: data.x.subarray(i * data.d, (i + 1) * data.d), y: data.y.subarray(i, i + 1), n: 1, d: data.d }, theta, clipNorm)[0];
  for (let j = 0; j < data.d; j++) out[j] = c * data.x[i * data.d + j];
  return out;
}
