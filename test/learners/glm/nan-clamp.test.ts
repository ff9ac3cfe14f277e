/**
 * A NaN derivative never reaches a clipped-gradient sum (`per-example.ts`, module comment "A NaN
 * derivative"). A finite but huge theta overflows some margins to +-Infinity and, where a row's
 * terms overflow with both signs, Infinity - Infinity = NaN, so f'(z) = NaN; the clamp must map it
 * into [-t, t] (to +0, counted as clipped) on every path of the sum, identically, or the released
 * sum would be NaN or not depending on one row.
 *
 * What is checked, on rows built so that their margins are NaN (float64 rows with theta ~1e307,
 * float32 rows with theta ~1e37 and ~1e307; logistic, squared and Huber losses):
 * - the identity: the sum is bit for bit the sum of the same loss with its NaN derivatives replaced
 *   by 0 before the clamp (an independent statement of the rule), and the clipped count is that
 *   sum's plus the number of NaN margins, counted here from the margins' definition (float64: the
 *   even and odd halves of `kernels.ts`; float32: the four float32 lanes of `float32-logistic.ts`);
 * - every path (per-step norms, cached thresholds in JavaScript, the SIMD kernels, the fused
 *   logistic pass with labels and thresholds copied or in place, the worker pool, DP-SGD's batches
 *   dense and sparse) gives the same bits and the same count;
 * - the sum is finite and ||sum|| <= count C (1 + (d + 8) u) + `clippedSumRoundingBound`;
 * - the SIMD clamp itself, on NaN, signed zeros, infinities and t in {0, 1, Infinity}: the scalar
 *   rule c > t ? t : c < -t ? -t : c != c ? +0 : c, bit for bit (so numbers are clamped as before).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { clippedDerivative, clippedValue } from '../../../src/learners/glm/clipped-gradient.js';
import { allocateFeatures, featureMemoryOf, kernelsFor, storeLabels } from '../../../src/learners/glm/kernels/feature-memory.js';
import { huberLoss } from '../../../src/learners/glm/losses/huber.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { squaredLoss } from '../../../src/learners/glm/losses/squared.js';
import { createClippedGradientPool, shareGlmData } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import {
  CHUNK_ROWS, clippedGradientCoefficients, clippedSumRoundingBound, sumBatchClippedGradients, sumClippedGradients, sumStoredClippedGradients,
  type ClippedGradientSum,
} from '../../../src/learners/glm/per-example.js';
import { glmValueAndGradient } from '../../../src/learners/glm/objective.js';
import type { FeatureArray, GlmData, GlmLoss } from '../../../src/learners/glm/types.js';
import { fillGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { compressRows, float32Coefficients } from '../../helpers/glm-references.js';
import { referenceFixedSum } from './fixed-point-reference.js';

/** Entries of this size times theta's scale S overflow: 100 S > 1.8e308 for S = 1e307, > 3.4e38 (float32) for S = 1e37. */
const BIG = 100;

/**
 * theta_j = +-(1 + u_j) S, and rows of six kinds by i mod 6: (0) a NaN margin, x_0 theta_0 = +Inf
 * and x_1 theta_1 (or, every other such row with d >= 3, x_2 theta_2) = -Inf; (1) one overflowing
 * term, z = +-Inf; (2) entries ~1/S, a margin of order 1; (3) a zero row (t = Infinity); (4), (5)
 * Gaussian entries of scale BIG / 2 and 1 (overflows of any pattern). `keep`: the share of entries
 * kept in kinds 2, 4, 5 (the others zeroed, for mostly-zero features).
 */
function overflowData(n: number, d: number, seed: number, scale: number, keep = 1): { data: GlmData; theta: Float64Array } {
  const rng = seededRng(seed);
  const sign = () => (rng.nextDouble() < 0.5 ? -1 : 1);
  const theta = Float64Array.from({ length: d }, () => sign() * (1 + rng.nextDouble()) * scale);
  const x = new Float64Array(n * d);
  const g = fillGaussian(rng, new Float64Array(n * d));
  for (let i = 0; i < n; i++) {
    const o = i * d;
    const kind = i % 6;
    if (kind === 0) {
      x[o] = BIG * Math.sign(theta[0]);
      const other = d >= 3 && (i / 6) % 2 === 1 ? 2 : 1;
      x[o + other] = -BIG * Math.sign(theta[other]);
    } else if (kind === 1) {
      x[o] = BIG * sign() * Math.sign(theta[0]);
    } else if (kind !== 3) {
      const s = kind === 2 ? 1 / scale : kind === 4 ? BIG / 2 : 1;
      for (let j = 0; j < d; j++) if (rng.nextDouble() < keep) x[o + j] = g[o + j] * s;
    }
  }
  const y = Float64Array.from({ length: n }, () => sign());
  return { data: { x, y, n, d }, theta };
}

/** Whether row i's float64 margin is NaN, summed as `kernels.ts` defines it (E over even j, O over odd j, z = E + O). */
function nanMargin64(data: GlmData, theta: Float64Array, i: number): boolean {
  let e = 0;
  let o = 0;
  for (let j = 0; j < data.d; j++) {
    if (j % 2 === 0) e += data.x[i * data.d + j] * theta[j];
    else o += data.x[i * data.d + j] * theta[j];
  }
  return Number.isNaN(e + o);
}


/** The loss with every NaN derivative replaced by 0 before the clamp (the rule, stated independently of the clamps). */
function nanToZero(loss: GlmLoss): GlmLoss {
  return {
    ...loss,
    derivatives: (z: Float64Array, y: Float64Array, out: Float64Array, count: number) => {
      loss.derivatives(z, y, out, count);
      for (let k = 0; k < count; k++) if (Number.isNaN(out[k])) out[k] = 0;
    },
  };
}

function inMemory(x: FeatureArray, n: number, d: number): FeatureArray {
  const out = allocateFeatures(n, d, x instanceof Float64Array ? 'float64' : 'float32');
  out.set(x);
  return out;
}


function sameSum(a: ClippedGradientSum, b: ClippedGradientSum, what: string): void {
  assert.equal(a.clippedCount, b.clippedCount, `${what}: clipped count`);
  for (let j = 0; j < a.sum.length; j++) assert.ok(Object.is(a.sum[j], b.sum[j]), `${what}: coordinate ${j}: ${a.sum[j]} vs ${b.sum[j]}`);
}

/** Finite, and ||sum|| <= count C (1 + (d + 8) u) + the rounding bound (each computed term has norm <= C (1 + (d + 8) u)). */
function bounded(r: ClippedGradientSum, clipNorm: number, d: number, what: string): void {
  for (let j = 0; j < d; j++) assert.ok(Number.isFinite(r.sum[j]), `${what}: coordinate ${j} = ${r.sum[j]}`);
  const u = Number.EPSILON / 2;
  const limit = r.count * clipNorm * (1 + (d + 8) * u) + clippedSumRoundingBound(r.count, clipNorm, d);
  const norm = Math.hypot(...r.sum);
  assert.ok(norm <= limit, `${what}: ||sum|| = ${norm} > ${limit}`);
}

/**
 * The identity against the NaN-free loss (sum bit for bit, count plus `nans`), then every path
 * named in `paths` against the reference, each finite and within the norm bound.
 */
function checkPaths(reference: ClippedGradientSum, zeroed: ClippedGradientSum, nans: number, paths: [string, ClippedGradientSum][], clipNorm: number, d: number): void {
  assert.equal(reference.clippedCount, zeroed.clippedCount + nans, 'a NaN counts as clipped');
  sameSum({ ...reference, clippedCount: zeroed.clippedCount }, zeroed, 'NaN as 0 before the clamp');
  bounded(reference, clipNorm, d, 'reference');
  for (const [what, r] of paths) {
    sameSum(r, reference, what);
    bounded(r, clipNorm, d, what);
  }
}

test('float64 rows with NaN margins (theta ~1e307): every full-pass path sums NaN as +0, the same bits, finite and within count C (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }), fc.integer({ min: 2, max: 13 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom<GlmLoss>(logisticLoss, squaredLoss, huberLoss(1)), fc.constantFrom(0.5, 1, 3),
      (n, d, seed, loss, clipNorm) => {
        const { data, theta } = overflowData(n, d, seed, 1e307);
        let nans = 0;
        for (let i = 0; i < n; i++) if (nanMargin64(data, theta, i)) nans++;
        assert.ok(nans >= 1, 'row 0 has a NaN margin');
        const reference = sumClippedGradients(loss, data, theta, { clipNorm });
        const zeroed = sumClippedGradients(nanToZero(loss), data, theta, { clipNorm });
        const wasm = { ...data, x: inMemory(data.x, n, d) };
        assert.ok(featureMemoryOf(wasm.x, d) !== undefined);
        const placed = inMemory(data.x, n, d);
        const inPlace = { ...data, x: placed, y: storeLabels(placed, d, data.y) };
        const placedThresholds = clipThresholds(inPlace, clipNorm);
        assert.ok(inPlace.y.buffer === placed.buffer && placedThresholds.values.buffer === placed.buffer, 'y and t in the side region');
        checkPaths(reference, zeroed, nans, [
          ['cached thresholds, JavaScript kernels', sumStoredClippedGradients(loss, data, theta, { clipNorm, thresholds: clipThresholds(data, clipNorm) })],
          ['SIMD kernels (fused pass for the logistic loss)', sumStoredClippedGradients(loss, wasm, theta, { clipNorm, thresholds: clipThresholds(wasm, clipNorm) })],
          ['SIMD kernels, y and t in place', sumStoredClippedGradients(loss, inPlace, theta, { clipNorm, thresholds: placedThresholds })],
        ], clipNorm, d);
        // The coefficients: NaN rows get +0, every row |c_i| ||x_i|| <= C.
        const c = clippedGradientCoefficients(loss, data, theta, clipNorm);
        for (let i = 0; i < n; i++) {
          const norm = Math.hypot(...data.x.subarray(i * d, (i + 1) * d));
          assert.ok(Math.abs(c[i]) * norm <= clipNorm, `row ${i}: c = ${c[i]}`);
          if (nanMargin64(data, theta, i)) assert.ok(Object.is(c[i], 0), `row ${i}: NaN margin, c = ${c[i]}`);
        }
      },
    ),
    { numRuns: 40 },
  );
});

test('DP-SGD batches over rows with NaN margins, dense or from the nonzero entries, sum NaN as +0: the per-step-norm sums bit for bit (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 200 }), fc.integer({ min: 2, max: 13 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom<GlmLoss>(logisticLoss, squaredLoss, huberLoss(1)), fc.constantFrom(0.5, 1, 3), fc.constantFrom(0.2, 1),
      fc.integer({ min: 1, max: 400 }),
      (n, d, seed, loss, clipNorm, keep, batchSize) => {
        const { data, theta } = overflowData(n, d, seed, 1e307, keep);
        const rng = seededRng(seed + 1);
        // Row 0 (a NaN margin) first, then a batch with repeats in no particular order.
        const indices = [0, ...Array.from({ length: batchSize - 1 }, () => Math.floor(rng.nextDouble() * n))];
        let nans = 0;
        for (const i of indices) if (nanMargin64(data, theta, i)) nans++;
        const reference = sumClippedGradients(loss, data, theta, { clipNorm, indices });
        const zeroed = sumClippedGradients(nanToZero(loss), data, theta, { clipNorm, indices });
        const thresholds = clipThresholds(data, clipNorm);
        checkPaths(reference, zeroed, nans, [
          ['batch, cached thresholds, dense rows', sumBatchClippedGradients(loss, data, theta, { clipNorm, indices, thresholds })],
          ['batch, cached thresholds, nonzero entries', sumBatchClippedGradients(loss, data, theta, { clipNorm, indices, thresholds, sparse: compressRows(data) })],
        ], clipNorm, d);
      },
    ),
    { numRuns: 40 },
  );
});

test('float32 rows with NaN margins (theta ~1e37 and ~1e307): the JavaScript and SIMD paths (fused float32 pass) sum NaN as +0, the same bits (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 300 }), fc.integer({ min: 2, max: 13 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(1e37, 1e307), fc.constantFrom<GlmLoss>(logisticLoss, squaredLoss), fc.constantFrom(0.5, 1, 3),
      (n, d, seed, scale, loss, clipNorm) => {
        const { data, theta } = overflowData(n, d, seed, scale);
        const x32 = Float32Array.from(data.x);
        const widened = { ...data, x: Float64Array.from(x32) };
        let reference: ClippedGradientSum;
        let zeroed: ClippedGradientSum;
        let nans = 0;
        if (loss === logisticLoss) {
          // Float32 margins and derivative (`float32-logistic.ts`), computed here; the fixed-point sum
          // (`fixed-point.ts`) written out independently (`fixed-point-reference.ts`).
          const c = float32Coefficients(x32, data.y, n, d, theta);
          for (let i = 0; i < n; i++) if (Number.isNaN(c[i])) nans++;
          assert.ok(nans >= 1, 'row 0 has a NaN float32 margin');
          const t = clipThresholds(widened, clipNorm).values;
          reference = referenceFixedSum(x32, n, d, c, t, clipNorm);
          zeroed = referenceFixedSum(x32, n, d, c.map((v) => (Number.isNaN(v) ? 0 : v)), t, clipNorm);
        } else {
          // Float64 margins of the widened rows: NaN only where theta's scale overflows float64.
          for (let i = 0; i < n; i++) if (nanMargin64(widened, theta, i)) nans++;
          assert.equal(nans >= 1, scale === 1e307);
          reference = sumClippedGradients(loss, widened, theta, { clipNorm });
          zeroed = sumClippedGradients(nanToZero(loss), widened, theta, { clipNorm });
        }
        const wasm32 = { ...data, x: inMemory(x32, n, d) };
        const placed = inMemory(x32, n, d);
        const inPlace = { ...data, x: placed, y: storeLabels(placed, d, data.y) };
        checkPaths(reference, zeroed, nans, [
          ['float32, JavaScript kernels', sumStoredClippedGradients(loss, { ...data, x: x32 }, theta, { clipNorm })],
          ['float32, SIMD kernels', sumStoredClippedGradients(loss, wasm32, theta, { clipNorm, thresholds: clipThresholds(wasm32, clipNorm) })],
          ['float32, SIMD kernels, y and t in place', sumStoredClippedGradients(loss, inPlace, theta, { clipNorm, thresholds: clipThresholds(inPlace, clipNorm) })],
        ], clipNorm, d);
      },
    ),
    { numRuns: 40 },
  );
});

test('the worker pool sums rows with NaN margins as the serial paths do, bit for bit (float64 and float32, logistic and squared)', async () => {
  const n = 2 * CHUNK_ROWS + 1237;
  const d = 5;
  const pool = await createClippedGradientPool({ threads: 2 });
  try {
    for (const [precision, scale, loss] of [['float64', 1e307, logisticLoss], ['float64', 1e307, squaredLoss], ['float32', 1e37, logisticLoss]] as const) {
      const { data, theta } = overflowData(n, d, 77, scale);
      const x = precision === 'float64' ? data.x : Float32Array.from(data.x);
      const serial = sumStoredClippedGradients(loss, { ...data, x }, theta, { clipNorm: 1 });
      const shared = shareGlmData({ ...data, x });
      const thresholds = clipThresholds(shared, 1);
      const what = `${precision}, ${loss.name}`;
      sameSum(pool.sumClippedGradients(loss, shared, theta, { clipNorm: 1, thresholds }), serial, `pool, ${what}`);
      sameSum(sumStoredClippedGradients(loss, shared, theta, { clipNorm: 1, thresholds }), serial, `serial SIMD, ${what}`);
      bounded(serial, 1, d, what);
      if (precision === 'float64') {
        let nans = 0;
        for (let i = 0; i < n; i++) if (nanMargin64(data, theta, i)) nans++;
        assert.ok(nans >= n / 6, `${what}: ${nans} NaN margins`);
        assert.equal(serial.clippedCount, sumClippedGradients(nanToZero(loss), data, theta, { clipNorm: 1 }).clippedCount + nans, what);
      }
    }
  } finally {
    await pool.close();
  }
});

test('without clipping (C = Infinity) a NaN derivative is +0 too: the logistic sum stays finite on every path (-t would have made it NaN)', () => {
  const n = 203;
  const d = 6;
  const { data, theta } = overflowData(n, d, 5, 1e307);
  const reference = sumClippedGradients(logisticLoss, data, theta, { clipNorm: Infinity });
  const wasm = { ...data, x: inMemory(data.x, n, d) };
  for (let j = 0; j < d; j++) assert.ok(Number.isFinite(reference.sum[j]), `coordinate ${j}`);
  let nans = 0;
  for (let i = 0; i < n; i++) if (nanMargin64(data, theta, i)) nans++;
  assert.ok(nans >= n / 6);
  assert.equal(reference.clippedCount, nans, 'no row is clipped but the NaN ones');
  sameSum({ ...reference, clippedCount: 0 }, sumClippedGradients(nanToZero(logisticLoss), data, theta, { clipNorm: Infinity }), 'NaN as 0');
  sameSum(sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: Infinity, thresholds: clipThresholds(data, Infinity) }), reference, 'cached thresholds');
  sameSum(sumStoredClippedGradients(logisticLoss, wasm, theta, { clipNorm: Infinity, thresholds: clipThresholds(wasm, Infinity) }), reference, 'SIMD kernels');
});

test('the clipped-gradient objective (AMP, objective perturbation) maps a NaN derivative to +0 too: its gradient (what the minimiser follows; the value at theta ~1e307 is not finite anyway) is that of the NaN-free loss bit for bit and finite, in JavaScript and with the SIMD kernels', () => {
  assert.equal(clippedDerivative(logisticLoss, Number.NaN, 1, 0.5), 0);
  assert.ok(Object.is(clippedDerivative(logisticLoss, Number.NaN, -1, 0.5), 0), '+0, not -0');
  assert.equal(clippedValue(logisticLoss, Number.NaN, 1, 0.5), 0);
  assert.equal(clippedDerivative(logisticLoss, 3, 1, 0.01), -0.01, 'numbers are clamped as before');
  const n = 203;
  const d = 6;
  const clipNorm = 0.7;
  for (const loss of [logisticLoss, squaredLoss, huberLoss(1)]) {
    const { data, theta } = overflowData(n, d, 11, 1e307);
    let nans = 0;
    for (let i = 0; i < n; i++) if (nanMargin64(data, theta, i)) nans++;
    assert.ok(nans >= n / 6, 'the data have NaN margins');
    for (const [what, x] of [['JavaScript', data.x], ['SIMD', inMemory(data.x, n, d) as Float64Array]] as const) {
      const rows = { ...data, x };
      const grad = new Float64Array(d);
      glmValueAndGradient(loss, rows, theta, grad, { clipNorm });
      const zeroed = new Float64Array(d);
      glmValueAndGradient(nanToZero(loss), rows, theta, zeroed, { clipNorm });
      for (let j = 0; j < d; j++) {
        assert.ok(Number.isFinite(grad[j]), `${loss.name} ${what}: coordinate ${j} = ${grad[j]}`);
        assert.ok(Object.is(grad[j], zeroed[j]), `${loss.name} ${what}: coordinate ${j}: ${grad[j]} vs NaN-free ${zeroed[j]}`);
      }
    }
  }
});

test('the SIMD clamp is the scalar rule bit for bit: c > t ? t : c < -t ? -t : c != c ? +0 : c, on NaN, signed zeros and infinities', () => {
  const specials = [NaN, -NaN, 0, -0, 0.5, -0.5, 1, -1, 2, -2, 1e308, -1e308, Infinity, -Infinity, 5e-324, -5e-324];
  // A NaN with another payload (sign bit set, low bits set), as a kernel might produce.
  const payload = new Float64Array(new BigUint64Array([0xfff8_0000_0000_1234n]).buffer)[0];
  specials.push(payload);
  const cases: [number, number][] = [];
  for (const t of [0, 5e-324, 1, Infinity]) for (const c of specials) cases.push([c, t]);
  for (const count of [cases.length, cases.length - 1]) {
    const m = allocateFeatures(2 * count, 1);
    const info = featureMemoryOf(m, 1);
    assert.ok(info !== undefined);
    const kernels = kernelsFor(info.memory);
    assert.ok(kernels !== null);
    for (let k = 0; k < count; k++) {
      m[k] = cases[k][0];
      m[count + k] = cases[k][1];
    }
    const clipped = kernels.clamp(info.xOffset, info.xOffset + 8 * count, count);
    const show = (v: number) => (Object.is(v, -0) ? '-0' : String(v));
    for (let k = 0; k < count; k++) {
      const [c, t] = cases[k];
      const want = c > t ? t : c < -t ? -t : c !== c ? 0 : c;
      assert.ok(Object.is(m[k], want), `count ${count}, c = ${show(c)}, t = ${t}: ${show(m[k])} vs ${show(want)}`);
    }
    // Clipped: beyond +-t, or NaN (a value equal to +-t is not counted).
    assert.equal(clipped, cases.slice(0, count).filter(([c, t]) => c > t || c < -t || c !== c).length);
  }
});
