/**
 * The float32 logistic step (`src/learners/glm/kernels/float32-logistic.ts`): its exp32 is as accurate
 * as documented, its margins carry at most the documented float32 rounding, and the fused
 * WebAssembly pass computes what the JavaScript path computes bit for bit (row lengths with every
 * tail of the four float32 lanes, theta past float32's range, margins past the exp's range ends),
 * deterministically (after V8's tier-up, on another memory). That the sums stay within
 * `clippedSumRoundingBound` of the exact sum of the same clipped gradients is
 * `test/learners/glm/relaxed-kernel.test.ts`; that every path agrees with an independent
 * computation of the coefficients is `test/learners/glm/kernel-paths.test.ts`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clipThresholds } from '../../../../src/learners/glm/clip-thresholds.js';
import { allocateFeatures } from '../../../../src/learners/glm/kernels/feature-memory.js';
import { exp32, float32Margins, float32Theta, FLOAT32_MAX } from '../../../../src/learners/glm/kernels/float32-logistic.js';
import { logisticLoss } from '../../../../src/learners/glm/losses/logistic.js';
import { sumStoredClippedGradients } from '../../../../src/learners/glm/per-example.js';
import { fillGaussian } from '../../../../src/random/continuous.js';
import { seededRng } from '../../../../src/random/rng.js';

test('exp32 is within 1e-6 of e^x relative (Math.exp: fdlibm, < 1 ulp) on [-87, 88], returns float32 values, and its edges are as documented', () => {
  const rng = seededRng(5);
  let worst = 0;
  for (let k = 0; k < 200000; k++) {
    const x = Math.fround(-87 + 175 * rng.nextDouble());
    const e = exp32(x);
    assert.equal(Math.fround(e), e);
    worst = Math.max(worst, Math.abs(e / Math.exp(x) - 1));
  }
  for (const x of [0, -0, 1e-30, 0.34657359, -0.34657359, 1, -1, 87.99, -86.99, 88, -87]) worst = Math.max(worst, Math.abs(exp32(Math.fround(x)) / Math.exp(Math.fround(x)) - 1));
  assert.ok(worst < 1e-6, `worst relative error ${worst}`);
  assert.equal(exp32(88.5), Infinity);
  assert.equal(exp32(Infinity), Infinity);
  // Below -87 the argument is clamped: e^-87 ~ 1.6e-38, and 1 + that is 1 in float32, all the derivative needs.
  assert.equal(exp32(-100), exp32(-87));
  assert.equal(exp32(-Infinity), exp32(-87));
  assert.equal(Math.fround(1 + exp32(-87)), 1);
  assert.ok(Number.isNaN(exp32(NaN)));
  assert.equal(exp32(0), 1);
});

test('float32 margins are within gamma_{ceil(d/4)+4} (u = 2^-24) of the exact x . theta, relative to sum |x_j theta_j|; theta saturates at FLT_MAX (property)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 1e6 }), fc.constantFrom(1e-3, 1, 1e3), (d, seed, scale) => {
      const rng = seededRng(seed);
      const x = Float32Array.from(fillGaussian(rng, new Float64Array(8 * d), 2));
      const theta = fillGaussian(rng, new Float64Array(d), scale);
      const z = new Float64Array(8);
      float32Margins(x, d, float32Theta(theta, d), 0, 8, z);
      const u = 2 ** -24;
      const depth = Math.ceil(d / 4) + 4;
      const gamma = (depth * u) / (1 - depth * u);
      for (let k = 0; k < 8; k++) {
        let exact = 0;
        let size = 0;
        for (let j = 0; j < d; j++) {
          exact += x[k * d + j] * theta[j];
          size += Math.abs(x[k * d + j] * theta[j]);
        }
        // The float64 reference's own error (<= d 2^-53 size) is far inside the slack 2^-40 size.
        assert.ok(Math.abs(z[k] - exact) <= gamma * size + 2 ** -40 * size, `d ${d} row ${k}: ${z[k]} vs ${exact}`);
      }
    }),
    { numRuns: 200 },
  );
  const big = float32Theta(new Float64Array([1e39, -1e300, 3.4e38, -0, 5]), 5);
  assert.deepEqual([...big], [FLOAT32_MAX, -FLOAT32_MAX, Math.fround(3.4e38), -0, 5, 0, 0, 0]);
  assert.ok(Object.is(big[3], -0));
});

function sameBits(a: Float64Array, b: Float64Array, what: string): void {
  for (let j = 0; j < a.length; j++) assert.ok(Object.is(a[j], b[j]), `${what} [${j}]: ${a[j]} vs ${b[j]}`);
}

/** Rows with zero rows, -0 entries, long rows; labels +-1. */
function rows(n: number, d: number, seed: number): { x: Float32Array; y: Float64Array } {
  const rng = seededRng(seed);
  const x = Float32Array.from(fillGaussian(rng, new Float64Array(n * d), 1.5));
  for (let i = 0; i < n; i += 7) x.fill(0, i * d, (i + 1) * d);
  for (let i = 5; i < n; i += 9) x[i * d] = -0;
  for (let i = 3; i < n; i += 11) for (let j = 0; j < d; j++) x[i * d + j] *= 40;
  return { x, y: new Float64Array(n).map(() => (rng.nextDouble() < 0.5 ? -1 : 1)) };
}

test('the fused WebAssembly pass on float32 rows computes the JavaScript float32 path bit for bit: every d mod 4, theta past float32 range, margins past the exp range (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 600 }), fc.integer({ min: 1, max: 23 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(0.3, 30, 300, 1e39), fc.constantFrom(0.5, 1, 3),
      (n, d, seed, thetaScale, clipNorm) => {
        const { x, y } = rows(n, d, seed);
        const theta = fillGaussian(seededRng(seed + 1), new Float64Array(d), thetaScale);
        const js = sumStoredClippedGradients(logisticLoss, { x, y, n, d }, theta, { clipNorm });
        const stored = allocateFeatures(n, d, 'float32');
        stored.set(x);
        const data = { x: stored, y, n, d };
        const simd = sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm, thresholds: clipThresholds(data, clipNorm) });
        assert.equal(simd.clippedCount, js.clippedCount);
        sameBits(simd.sum, js.sum, `${n} x ${d}, theta scale ${thetaScale}`);
      },
    ),
    { numRuns: 80 },
  );
});

test('the float32 pass is deterministic: the same rows give the same bits after tier-up and on another memory', () => {
  for (const [n, d] of [[320, 20], [197, 7], [64, 1], [80, 146]]) {
    const { x, y } = rows(n, d, n + d);
    const theta = fillGaussian(seededRng(d), new Float64Array(d), 0.4);
    const run = () => {
      const stored = allocateFeatures(n, d, 'float32');
      stored.set(x);
      const data = { x: stored, y, n, d };
      return sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 1, thresholds: clipThresholds(data, 1) });
    };
    const first = run();
    const stored = allocateFeatures(n, d, 'float32');
    stored.set(x);
    const data = { x: stored, y, n, d };
    const thresholds = clipThresholds(data, 1);
    for (let r = 0; r < 2000; r++) sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 1, thresholds });
    const later = sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 1, thresholds });
    sameBits(later.sum, first.sum, `${n} x ${d} after tier-up`);
    assert.equal(later.clippedCount, first.clippedCount);
  }
});
