/**
 * The fixed-point update of float32 logistic rows (`src/learners/glm/kernels/fixed-point.ts`):
 * every path (JavaScript, fused WebAssembly pass with labels and thresholds copied or in place,
 * the worker pool) gives the independent reference of `../fixed-point-reference.ts` bit for bit,
 * across the 1024-row blocks and the chunks; every row's integer contribution has norm < 2^21 (so
 * its dequantized gradient has norm < C) on adversarial rows; the 1.5 2^23 rounding is round to
 * nearest, ties to even; C = Infinity or C out of range keeps the float64 update.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clipThresholds } from '../../../../src/learners/glm/clip-thresholds.js';
import { CLIP_SAFETY } from '../../../../src/learners/glm/clipped-gradient.js';
import { allocateFeatures, featureMemoryOf, storeLabels } from '../../../../src/learners/glm/kernels/feature-memory.js';
import {
  FIXED_MAGIC, FIXED_MAX_CLIP_NORM, FIXED_MIN_CLIP_NORM, fixedPointAccumulate, fixedPointClamp, fixedPointScale,
} from '../../../../src/learners/glm/kernels/fixed-point.js';
import { logisticStepFor } from '../../../../src/learners/glm/kernels/wasm-logistic-step.js';
import { logisticLoss } from '../../../../src/learners/glm/losses/logistic.js';
import { createClippedGradientPool, shareGlmData } from '../../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { CHUNK_ROWS, sumClippedGradients, sumStoredClippedGradients, type ClippedGradientSum } from '../../../../src/learners/glm/per-example.js';
import type { GlmLoss } from '../../../../src/learners/glm/types.js';
import { fillGaussian } from '../../../../src/random/continuous.js';
import { seededRng } from '../../../../src/random/rng.js';
import { float32Coefficients } from '../../../helpers/glm-references.js';
import { nearestEven, r32, referenceFixedSum, referencePower, referenceRow } from '../fixed-point-reference.js';

function makeRows(n: number, d: number, seed: number): { x: Float32Array; y: Float64Array; theta: Float64Array } {
  const rng = seededRng(seed);
  const x = Float32Array.from(fillGaussian(rng, new Float64Array(n * d), 1.5));
  for (let i = 0; i < n; i += 7) x.fill(0, i * d, (i + 1) * d); // zero rows
  for (let i = 3; i < n; i += 11) for (let j = 0; j < d; j++) x[i * d + j] *= 40; // long rows, clipped
  const y = new Float64Array(n).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  return { x, y, theta: fillGaussian(rng, new Float64Array(d), 0.7) };
}

function inMemory(x: Float32Array, n: number, d: number): Float32Array {
  const out = allocateFeatures(n, d, 'float32') as Float32Array;
  out.set(x);
  return out;
}

function sameSum(a: ClippedGradientSum, b: { sum: Float64Array; clippedCount: number }, what: string): void {
  assert.equal(a.clippedCount, b.clippedCount, `${what}: clipped count`);
  for (let j = 0; j < a.sum.length; j++) assert.ok(Object.is(a.sum[j], b.sum[j]), `${what}: coordinate ${j}: ${a.sum[j]} vs ${b.sum[j]}`);
}

test('the fused pass is built with the fixed-point update for every row length up to 512 (Node 20 has WebAssembly SIMD)', () => {
  for (const d of [1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 511, 512]) {
    const x = allocateFeatures(16, d, 'float32');
    const info = featureMemoryOf(x, d);
    assert.ok(info !== undefined);
    assert.notEqual(logisticStepFor(info.memory, d, 'float32', 'exact', 'fixed'), null, `d = ${d}`);
  }
});

test('every path gives the independent reference bit for bit, across 1024-row blocks and chunks (property)', () => {
  fc.assert(
    fc.property(
      fc.constantFrom(0, 1, 15, 16, 17, 1023, 1024, 1025, 3000, CHUNK_ROWS + 1041), fc.integer({ min: 1, max: 23 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(0.5, 1, 3, 1e-20, 1e20),
      (n, d, seed, clipNorm) => {
        const { x, y, theta } = makeRows(n, d, seed);
        const t = clipThresholds({ x: Float64Array.from(x), y, n, d }, clipNorm).values;
        const reference = referenceFixedSum(x, n, d, float32Coefficients(x, y, n, d, theta), t, clipNorm);
        sameSum(sumStoredClippedGradients(logisticLoss, { x, y, n, d }, theta, { clipNorm }), reference, 'JavaScript');
        const memory = { x: inMemory(x, n, d), y, n, d };
        sameSum(sumStoredClippedGradients(logisticLoss, memory, theta, { clipNorm, thresholds: clipThresholds(memory, clipNorm) }), reference, 'fused pass, labels copied');
        const placed = inMemory(x, n, d);
        const inPlace = { x: placed, y: storeLabels(placed, d, y), n, d };
        const thresholds = clipThresholds(inPlace, clipNorm);
        if (n > 0) assert.ok(inPlace.y.buffer === placed.buffer && thresholds.values.buffer === placed.buffer);
        const first = sumStoredClippedGradients(logisticLoss, inPlace, theta, { clipNorm, thresholds });
        sameSum(first, reference, 'fused pass, labels and thresholds in place');
        sameSum(sumStoredClippedGradients(logisticLoss, inPlace, theta, { clipNorm, thresholds }), first, 'deterministic');
      },
    ),
    { numRuns: 40 },
  );
});

test('the worker pool gives the reference bit for bit (the integer sums do not depend on the thread count)', async () => {
  const n = 3 * CHUNK_ROWS + 999;
  const d = 7;
  const { x, y, theta } = makeRows(n, d, 21);
  const t = clipThresholds({ x: Float64Array.from(x), y, n, d }, 1).values;
  const reference = referenceFixedSum(x, n, d, float32Coefficients(x, y, n, d, theta), t, 1);
  for (const threads of [1, 2]) {
    const pool = await createClippedGradientPool({ threads });
    try {
      const shared = shareGlmData({ x, y, n, d });
      sameSum(pool.sumClippedGradients(logisticLoss, shared, theta, { clipNorm: 1, thresholds: clipThresholds(shared, 1) }), reference, `pool, ${threads} threads`);
    } finally {
      await pool.close();
    }
  }
});

test('fl32(v + 1.5 2^23) - 1.5 2^23 is v rounded to the nearest integer, ties to even, for |v| < 2^22', () => {
  const rng = seededRng(8);
  const values = [0, -0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 2 ** 21, -(2 ** 21), 2 ** 21 + 0.5, 2 ** 22 - 1, -(2 ** 22) + 1, 2 ** 22 - 0.5, 1e-40, -1e-40];
  for (let k = 0; k < 100000; k++) values.push(r32((rng.nextDouble() - 0.5) * 2 ** (23 * rng.nextDouble())));
  for (let k = 0; k < 1000; k++) values.push(Math.floor((rng.nextDouble() - 0.5) * 2 ** 22) + 0.5);
  for (const v of values) {
    const v32 = r32(v);
    assert.equal(Math.fround(v32 + FIXED_MAGIC) - FIXED_MAGIC, nearestEven(v32) + 0, `v = ${v32}`);
  }
});

test('every row\'s integer contribution has norm < 2^21 (its gradient < C), on adversarial rows: huge and tiny entries, clipped coefficients at +-t, C at its range ends, long rows (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 600 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(FIXED_MIN_CLIP_NORM / 1.5, 1e-3, 2 / 3, 1, 7.5, FIXED_MAX_CLIP_NORM / 3),
      fc.constantFrom(1e-44, 1e-30, 1, 1e20, 3e38),
      fc.constantFrom('clipped', 'random', 'nan'),
      (d, seed, clipNorm, scale, kind) => {
        const rng = seededRng(seed);
        const x = new Float32Array(d);
        for (let j = 0; j < d; j++) x[j] = r32((rng.nextDouble() < 0.1 ? 0 : rng.nextDouble() - 0.5) * scale * (j === 0 ? 1 : rng.nextDouble()));
        const ss = Array.from(x).reduce((a, v) => a + v * v, 0);
        const t = clipThresholds({ x: Float64Array.from(x), y: new Float64Array(1), n: 1, d }, clipNorm).values[0];
        const c = new Float64Array(1);
        // Coefficients past the clamp both ways (the largest float32s), float32 values in (-1, 1), or NaN.
        c[0] = kind === 'clipped' ? (rng.nextDouble() < 0.5 ? 1 : -1) * 3.4028234663852886e38 : kind === 'nan' ? NaN : r32(rng.nextDouble() * 2 - 1);
        const power = referencePower(1.5 * clipNorm);
        const expected = referenceRow(x, 0, d, c[0], t, power);
        const clipped = fixedPointClamp(c, Float64Array.of(t), 0, 1);
        assert.equal(clipped === 1, expected.clipped);
        const scale2 = fixedPointScale(clipNorm, d);
        assert.ok(scale2 !== undefined);
        const q = new Float64Array(d);
        fixedPointAccumulate(x, d, 0, 1, c, scale2.sigma, q);
        let norm2 = 0n;
        for (let j = 0; j < d; j++) {
          assert.equal(BigInt(q[j]), expected.q[j], `q[${j}]`);
          norm2 += expected.q[j] * expected.q[j];
        }
        // ||w|| = ||q|| P 2^-21 < C.
        const limit = (clipNorm * 2 ** 21) / power;
        assert.ok(Number(norm2) < limit * limit, `||q||^2 = ${norm2} >= ${limit}^2, ss = ${ss}, t = ${t}`);
        // Near the bound where the row is clipped, t a normal float32 and s below FLT_MAX (||x|| >= 2^-100;
        // rows of smaller norm may be shrunk further, fixed-point.ts): the test is not vacuous.
        const norm = Math.sqrt(ss);
        if (kind === 'clipped' && norm >= 2 ** -100 && Number.isFinite(ss) && t * norm >= clipNorm * CLIP_SAFETY * (1 - 1e-12) && t >= 2 ** -126 && t < 3e38) {
          const reach = ((2 ** 21 - 2 - 2 * Math.ceil(Math.sqrt(d))) * clipNorm) / power - Math.sqrt(d) - 2;
          assert.ok(Number(norm2) > reach * reach, `a clipped row reaches near N C / P: ${Math.sqrt(Number(norm2))} <= ${reach}`);
        }
      },
    ),
    { numRuns: 400 },
  );
});

test('C = Infinity, or C whose power of two P >= 1.5 C is outside [2^-100, 2^100], keeps the float64 update (the float32 coefficients replayed into the float64 sum)', () => {
  const n = 2000;
  const d = 6;
  const { x, y, theta } = makeRows(n, d, 4);
  const c = float32Coefficients(x, y, n, d, theta);
  for (const clipNorm of [Infinity, FIXED_MIN_CLIP_NORM / 4, FIXED_MAX_CLIP_NORM]) {
    assert.equal(fixedPointScale(clipNorm, d), undefined);
    let next = 0;
    const replay: GlmLoss = { ...logisticLoss, derivatives: (_z, _y, out, count) => {
      for (let k = 0; k < count; k++) out[k] = c[next++];
    } };
    const reference = sumClippedGradients(replay, { x: Float64Array.from(x), y, n, d }, theta, { clipNorm });
    sameSum(sumStoredClippedGradients(logisticLoss, { x, y, n, d }, theta, { clipNorm }), reference, `C = ${clipNorm}, JavaScript`);
    const memory = { x: inMemory(x, n, d), y, n, d };
    sameSum(sumStoredClippedGradients(logisticLoss, memory, theta, { clipNorm, thresholds: clipThresholds(memory, clipNorm) }), reference, `C = ${clipNorm}, SIMD`);
  }
});

test('the fixed-point sum is within its documented accuracy of the float64 update: |error| <= rows 1.5 C 2^-21 + the shrink (2 + 2 ceil(sqrt d)) 2^-21 and float32 rounding of sum |c_i x_ij|', () => {
  const n = 20000;
  const d = 20;
  const { x, y, theta } = makeRows(n, d, 31);
  const c = float32Coefficients(x, y, n, d, theta);
  let next = 0;
  const replay: GlmLoss = { ...logisticLoss, derivatives: (_z, _y, out, count) => {
    for (let k = 0; k < count; k++) out[k] = c[next++];
  } };
  const exact = sumClippedGradients(replay, { x: Float64Array.from(x), y, n, d }, theta, { clipNorm: 1 }).sum;
  const fixed = sumStoredClippedGradients(logisticLoss, { x, y, n, d }, theta, { clipNorm: 1 }).sum;
  // sum_i |c_i x_ij| with the clamped coefficients.
  const t = clipThresholds({ x: Float64Array.from(x), y, n, d }, 1).values;
  const abs = new Float64Array(d);
  for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) abs[j] += Math.min(Math.abs(c[i]), t[i]) * Math.abs(x[i * d + j]);
  for (let j = 0; j < d; j++) {
    // Per term: rounding to the nearest unit (unit / 2 < 1.5 C 2^-21); relative: the shrink (2 + 2 ceil(sqrt 20)) 2^-21, the float32 roundings of s, x s and t32 (3 2^-24).
    const limit = n * 1.5 * 2 ** -21 + (12 * 2 ** -21 + 4 * 2 ** -24) * abs[j] + 1e-9;
    assert.ok(Math.abs(fixed[j] - exact[j]) <= limit, `coordinate ${j}: ${fixed[j]} vs ${exact[j]} (limit ${limit})`);
  }
});
