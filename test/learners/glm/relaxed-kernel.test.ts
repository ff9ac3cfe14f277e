/**
 * The relaxed-SIMD variant of the fused logistic pass (`wasm-logistic-step.ts`, 'fused': margins and
 * the update's four-row groups as f64x2.relaxed_madd), measured by `bench/kernel.ts` against the
 * exact variant. Node 20 has relaxed SIMD only behind `--experimental-wasm-relaxed-simd`; this
 * file (its own process under `node --test`) sets the flag before any module is compiled. What
 * must hold: the variant is deterministic (the same rows give the same bits, also after V8 tiers
 * the function up from Liftoff to TurboFan, and on another memory), its sums are within
 * `clippedSumRoundingBound` of the exact sum of the same clipped gradients (checked in exact
 * rational arithmetic), and the sums `per-example.ts` releases still take the exact variant.
 */
import v8 from 'node:v8';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { allocateFeatures, featureMemoryOf, slotPointers, storeLabels } from '../../../src/learners/glm/kernels/feature-memory.js';
import { fusedBlockRows, logisticStepFor, relaxedSimdAvailable } from '../../../src/learners/glm/kernels/wasm-logistic-step.js';
import type { Precision } from '../../../src/learners/glm/kernels/wasm-kernels.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { exp32 } from '../../../src/learners/glm/kernels/float32-logistic.js';
import { clippedSumRoundingBound, sumClippedGradients, sumStoredClippedGradients } from '../../../src/learners/glm/per-example.js';
import { fillGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';

v8.setFlagsFromString('--experimental-wasm-relaxed-simd');

interface Setup {
  x: Float64Array | Float32Array;
  y: Float64Array;
  t: Float64Array;
  n: number;
  d: number;
  precision: Precision;
}

function setUp(n: number, d: number, seed: number, precision: Precision, clipNorm: number): Setup {
  const rng = seededRng(seed);
  const source = fillGaussian(rng, new Float64Array(n * d), 1.5);
  // Some long rows (clipped) and some zero rows (threshold Infinity).
  for (let i = 3; i < n; i += 11) for (let j = 0; j < d; j++) source[i * d + j] *= 40;
  for (let i = 0; i < n; i += 13) source.fill(0, i * d, (i + 1) * d);
  const x = allocateFeatures(n, d, precision);
  x.set(source);
  const y = storeLabels(x, d, new Float64Array(n).map(() => (rng.nextDouble() < 0.5 ? -1 : 1)));
  const t = clipThresholds({ x, y, n, d }, clipNorm).values;
  return { x, y, t, n, d, precision };
}

/** The fused pass ('exact' or 'fused') over the first rows of whole blocks, from out = 0; its sum and clip count. */
function pass(s: Setup, theta: Float64Array, variant: 'exact' | 'fused'): { sum: Float64Array; clipped: number; rows: number } {
  const info = featureMemoryOf(s.x, s.d);
  assert.ok(info !== undefined);
  const step = logisticStepFor(info.memory, s.d, s.precision, variant);
  assert.ok(step !== null, `${variant} step`);
  const ptr = slotPointers(info, 0, s.d);
  const buffer = info.memory.buffer;
  new Float64Array(buffer, ptr.theta, s.d).set(theta);
  const out = new Float64Array(buffer, ptr.part, s.d);
  out.fill(0);
  const clipped = step(info.xOffset, ptr.theta, s.y.byteOffset, s.t.byteOffset, s.n, ptr.part, ptr.fused);
  const rows = s.n - (s.n % fusedBlockRows(s.precision));
  return { sum: out.slice(), clipped, rows };
}

function sameBits(a: Float64Array, b: Float64Array, what: string): void {
  for (let j = 0; j < a.length; j++) assert.ok(Object.is(a[j], b[j]), `${what} [${j}]: ${a[j]} vs ${b[j]}`);
}

/** A double as m 2^e with integers m, e (exact; e >= -1074). */
function split(v: number): { m: bigint; e: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, v);
  const bits = view.getBigUint64(0);
  const sign = bits >> 63n ? -1n : 1n;
  const exponent = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  if (exponent === 0) return { m: sign * fraction, e: -1074 };
  return { m: sign * (fraction | (1n << 52n)), e: exponent - 1075 };
}

/** v 2^2148 as an exact integer (v a product of two doubles or a double). */
const SCALE = 2148;
function scaledProduct(a: number, b: number): bigint {
  const p = split(a);
  const q = split(b);
  return (p.m * q.m) << BigInt(p.e + q.e + SCALE);
}
function scaled(v: number): bigint {
  const p = split(v);
  return p.m << BigInt(p.e + SCALE);
}
/** An exact integer at scale 2^-2148 as a double (a few low bits lost: far below the bounds compared). */
function unscale(v: bigint): number {
  return Number(v >> 1900n) * 2 ** -248;
}

test('relaxed SIMD is detected once the engine has it', () => {
  assert.equal(relaxedSimdAvailable(), true);
});

test('the relaxed variant is deterministic: the same rows give the same bits, after tier-up and on another memory', () => {
  for (const precision of ['float64', 'float32'] as const) {
    for (const [n, d] of [[64, 20], [97, 7], [48, 1], [40, 146]]) {
      const s = setUp(n, d, n + d, precision, 1);
      const theta = fillGaussian(seededRng(d), new Float64Array(d), 0.4);
      const first = pass(s, theta, 'fused');
      for (let r = 0; r < 3000; r++) pass(s, theta, 'fused');
      const later = pass(s, theta, 'fused');
      sameBits(later.sum, first.sum, `${precision} ${n}x${d} after tier-up`);
      assert.equal(later.clipped, first.clipped);
      const other = pass(setUp(n, d, n + d, precision, 1), theta, 'fused');
      sameBits(other.sum, first.sum, `${precision} ${n}x${d} another memory`);
      // It is not the exact variant bit for bit in general (what the bench measures is a real difference).
      const exact = pass(s, theta, 'exact');
      let close = true;
      for (let j = 0; j < d; j++) close &&= Math.abs(exact.sum[j] - first.sum[j]) <= 1e-9 * (1 + Math.abs(exact.sum[j]));
      assert.ok(close, `${precision} ${n}x${d}: fused and exact sums agree to rounding`);
    }
  }
});

test('the relaxed variant sums within clippedSumRoundingBound of the exact sum of the same clipped gradients (exact rational reference)', () => {
  // theta with one nonzero coordinate: every margin is one product x_ij0 theta_j0, rounded once in
  // either variant (a multiply-add into 0 is the product), so both clip the same coefficients c_i
  // and differ only in how they sum c_i x_i, which is what the bound is about.
  for (const precision of ['float64', 'float32'] as const) {
    for (const [n, d, clipNorm] of [[256, 20, 1], [400, 9, 0.3], [160, 33, 5]] as const) {
      const s = setUp(n, d, 3 * n + d, precision, clipNorm);
      const theta = new Float64Array(d);
      theta[d >> 1] = 0.7;
      const fused = pass(s, theta, 'fused');
      const exact = pass(s, theta, 'exact');
      const exactSum = new Array<bigint>(d).fill(0n);
      let clipped = 0;
      for (let i = 0; i < fused.rows; i++) {
        // Float32 rows: the one product in float32 (`float32-logistic.ts`; the other lanes add +0), then the float32 derivative.
        const z = precision === 'float64' ? s.x[i * d + (d >> 1)] * 0.7 : Math.fround(s.x[i * d + (d >> 1)] * Math.fround(0.7));
        const f = Math.fround;
        let c = precision === 'float64' ? logisticLoss.derivative(z, s.y[i]) : f(f(-s.y[i]) / f(1 + exp32(f(s.y[i] * z))));
        if (c > s.t[i]) [c, clipped] = [s.t[i], clipped + 1];
        else if (c < -s.t[i]) [c, clipped] = [-s.t[i], clipped + 1];
        for (let j = 0; j < d; j++) exactSum[j] += scaledProduct(c, s.x[i * d + j]);
      }
      assert.equal(fused.clipped, clipped);
      assert.equal(exact.clipped, clipped);
      const bound = clippedSumRoundingBound(fused.rows, clipNorm, d);
      for (const [name, got] of [['fused', fused.sum], ['exact', exact.sum]] as const) {
        let sq = 0;
        for (let j = 0; j < d; j++) sq += unscale(scaled(got[j]) - exactSum[j]) ** 2;
        assert.ok(Math.sqrt(sq) <= bound, `${name} ${precision} ${n}x${d}: error ${Math.sqrt(sq)} > bound ${bound}`);
      }
    }
  }
});

test('with relaxed SIMD present, the released sums still take the exact variant: the scalar kernels\' numbers bit for bit (float32 rows: the JavaScript float32 path\'s)', () => {
  for (const precision of ['float64', 'float32'] as const) {
    const s = setUp(1100, 13, 21, precision, 1);
    const theta = fillGaussian(seededRng(22), new Float64Array(13), 0.5);
    const stored = sumStoredClippedGradients(logisticLoss, { x: s.x, y: s.y, n: s.n, d: s.d }, theta, { clipNorm: 1, thresholds: clipThresholds({ x: s.x, y: s.y, n: s.n, d: s.d }, 1) });
    // Float32 rows: the JavaScript pass over a plain Float32Array (no feature memory), `float32-logistic.ts`.
    const scalar = precision === 'float64'
      ? sumClippedGradients(logisticLoss, { x: Float64Array.from(s.x), y: Float64Array.from(s.y), n: s.n, d: s.d }, theta, { clipNorm: 1 })
      : sumStoredClippedGradients(logisticLoss, { x: Float32Array.from(s.x), y: Float64Array.from(s.y), n: s.n, d: s.d }, theta, { clipNorm: 1 });
    assert.equal(stored.clippedCount, scalar.clippedCount);
    sameBits(stored.sum, scalar.sum, precision);
  }
});
