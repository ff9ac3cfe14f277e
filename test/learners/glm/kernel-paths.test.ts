/**
 * The paths of the clipped-gradient sum (the faster ones exist for training speed): per-step norms
 * (the original kernel), cached thresholds with the JavaScript kernels, the WebAssembly SIMD
 * kernels on a feature memory, the worker pool, float32 storage, and DP-SGD's batches with cached
 * thresholds, on the dense rows or on their nonzero entries (`kernels/sparse-rows.ts`). They must give the same sums
 * bit for bit — the identity is the test: the reference is the original, independently tested path
 * (`test/learners/glm/per-example.test.ts` checks it against a compensated row-by-row sum) — and
 * float32 storage must clip on the values it actually uses, so that the privacy analysis of the
 * float64 path applies unchanged.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidParameterError } from '../../../src/errors.js';
import { trainDpGd } from '../../../src/learners/gradient/dp-gd.js';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { allocateFeatures, featureMemoryOf, kernelsFor, storeLabels } from '../../../src/learners/glm/kernels/feature-memory.js';
import { huberLoss } from '../../../src/learners/glm/losses/huber.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { createClippedGradientPool, poolGradientSummer, shareGlmData } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { CHUNK_ROWS, clippedGradientCoefficients, clippedSumRoundingBound, sumBatchClippedGradients, sumClippedGradients, sumStoredClippedGradients } from '../../../src/learners/glm/per-example.js';
import { sparseRowsOf, type SparseRows } from '../../../src/learners/glm/kernels/sparse-rows.js';
import { dataForLoss } from '../../../src/learners/glm/losses/by-name.js';
import { dpSgdUpdate, finishDpSgd, setUpDpSgd, trainDpSgd } from '../../../src/learners/gradient/dp-sgd.js';
import { poissonSubsampleIndices } from '../../../src/random/discrete.js';
import type { FeatureArray, GlmData, GlmLoss } from '../../../src/learners/glm/types.js';
import { kernelModule } from '../../../src/learners/glm/kernels/wasm-kernels.js';
import { fillGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { compressRows, float32Coefficients } from '../../helpers/glm-references.js';
import { referenceFixedSum } from './fixed-point-reference.js';

function makeData(n: number, d: number, seed: number): GlmData {
  const rng = seededRng(seed);
  const x = fillGaussian(rng, new Float64Array(n * d), 1.5);
  // Some zero rows (threshold Infinity) and some long ones (clipped).
  for (let i = 0; i < n; i += 7) x.fill(0, i * d, (i + 1) * d);
  for (let i = 3; i < n; i += 11) for (let j = 0; j < d; j++) x[i * d + j] *= 40;
  const y = new Float64Array(n).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  return { x, y, n, d };
}

function inMemory(x: FeatureArray, n: number, d: number): FeatureArray {
  const out = allocateFeatures(n, d, x instanceof Float64Array ? 'float64' : 'float32');
  out.set(x);
  return out;
}


function sameSum(a: { sum: Float64Array; clippedCount: number }, b: { sum: Float64Array; clippedCount: number }, what: string): void {
  assert.equal(a.clippedCount, b.clippedCount, what);
  // Bit for bit (Object.is also tells -0 from +0).
  for (let j = 0; j < a.sum.length; j++) assert.ok(Object.is(a.sum[j], b.sum[j]), `${what}: coordinate ${j}: ${a.sum[j]} vs ${b.sum[j]}`);
}

test('the SIMD kernel module is built and validated here (Node 20 has WebAssembly SIMD)', () => {
  assert.notEqual(kernelModule(), null);
  const x = allocateFeatures(4, 3);
  assert.ok(x.buffer instanceof SharedArrayBuffer);
  const info = featureMemoryOf(x, 3);
  assert.ok(info !== undefined);
  // The stream-sum probe of bench/train.ts adds what it reads: 64 ones (a multiple of 16) at x.
  const ones = allocateFeatures(8, 8);
  ones.fill(1);
  const memory = featureMemoryOf(ones, 8);
  assert.ok(memory !== undefined);
  assert.equal(kernelsFor(memory.memory)?.streamSum64(memory.xOffset, 64), 64);
  const ones32 = allocateFeatures(8, 8, 'float32');
  ones32.fill(1);
  const memory32 = featureMemoryOf(ones32, 8);
  assert.ok(memory32 !== undefined);
  assert.equal(kernelsFor(memory32.memory)?.streamSum32(memory32.xOffset, 64), 64);
});

test('cached thresholds, the SIMD kernels and float32 storage give the per-step-norm sums bit for bit (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 700 }), fc.integer({ min: 1, max: 23 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom<GlmLoss>(logisticLoss, huberLoss(1)), fc.constantFrom(0.5, 1, 3),
      // Theta's scale 300 puts many margins beyond the exp's range ends (|y z| > 709).
      fc.constantFrom(0.3, 300),
      (n, d, seed, loss, clipNorm, thetaScale) => {
        const data = makeData(n, d, seed);
        const theta = fillGaussian(seededRng(seed + 1), new Float64Array(d), thetaScale);
        const reference = sumClippedGradients(loss, data, theta, { clipNorm });
        const cachedJs = sumStoredClippedGradients(loss, data, theta, { clipNorm, thresholds: clipThresholds(data, clipNorm) });
        sameSum(cachedJs, reference, 'cached thresholds, JavaScript kernels');
        const wasmData = { ...data, x: inMemory(data.x, n, d) };
        assert.ok(featureMemoryOf(wasmData.x, d) !== undefined);
        sameSum(sumStoredClippedGradients(loss, wasmData, theta, { clipNorm, thresholds: clipThresholds(wasmData, clipNorm) }), reference, 'SIMD kernels');
        // Labels and thresholds in the memory's side region, read in place by the fused kernel.
        const placed = inMemory(data.x, n, d);
        const inPlace = { ...data, x: placed, y: storeLabels(placed, d, data.y) };
        const placedThresholds = clipThresholds(inPlace, clipNorm);
        if (n > 0) assert.ok(inPlace.y.buffer === placed.buffer && placedThresholds.values.buffer === placed.buffer, 'y and t in the side region');
        sameSum(sumStoredClippedGradients(loss, inPlace, theta, { clipNorm, thresholds: placedThresholds }), reference, 'SIMD kernels, y and t in place');
        // Float32 storage computes exactly what float64 computes on the widened (exactly) values,
        // except with the logistic loss: coefficients from float32 margins (`float32-logistic.ts`),
        // clamped and summed in fixed point (`fixed-point.ts`); there the reference is written out
        // independently (`fixed-point-reference.ts`, from coefficients computed independently).
        const x32 = Float32Array.from(data.x);
        const widened = { ...data, x: Float64Array.from(x32) };
        const reference32 = loss === logisticLoss
          ? referenceFixedSum(x32, n, d, float32Coefficients(x32, data.y, n, d, theta), clipThresholds(widened, clipNorm).values, clipNorm)
          : sumClippedGradients(loss, widened, theta, { clipNorm });
        sameSum(sumStoredClippedGradients(loss, { ...data, x: x32 }, theta, { clipNorm }), reference32, 'float32, JavaScript kernels (widened blocks)');
        const wasm32 = { ...data, x: inMemory(x32, n, d) };
        sameSum(sumStoredClippedGradients(loss, wasm32, theta, { clipNorm, thresholds: clipThresholds(wasm32, clipNorm) }), reference32, 'float32, SIMD kernels');
      },
    ),
    { numRuns: 60 },
  );
});

test('float32 storage clips on the stored values: every term has norm <= C, and one replaced row moves the sum by <= 2C plus the float-error bound', () => {
  const n = 300;
  const d = 9;
  const clipNorm = 1;
  const data = makeData(n, d, 5);
  const theta = fillGaussian(seededRng(6), new Float64Array(d), 2);
  const x32 = inMemory(Float32Array.from(data.x), n, d);
  const stored = { ...data, x: x32 };
  // The coefficients of the rows the sum uses (widened exactly): |c_i| ||x_i|| <= C in floating point.
  const widened = { ...data, x: Float64Array.from(x32) };
  const c = clippedGradientCoefficients(logisticLoss, widened, theta, clipNorm);
  for (let i = 0; i < n; i++) {
    let ss = 0;
    for (let j = 0; j < d; j++) ss += widened.x[i * d + j] ** 2;
    assert.ok(Math.abs(c[i]) * Math.sqrt(ss) <= clipNorm, `row ${i}`);
  }
  // Replace-one neighbour: row 0 becomes a long row (stored as float32 too).
  const neighbour = new Float32Array(x32);
  for (let j = 0; j < d; j++) neighbour[j] = 1e3 * (j % 2 === 0 ? 1 : -1);
  const a = sumStoredClippedGradients(logisticLoss, stored, theta, { clipNorm }).sum;
  const b = sumStoredClippedGradients(logisticLoss, { ...data, x: inMemory(neighbour, n, d) }, theta, { clipNorm }).sum;
  const moved = Math.hypot(...a.map((v, j) => v - b[j]));
  assert.ok(moved <= 2 * clipNorm + 2 * clippedSumRoundingBound(n, clipNorm, d), `moved ${moved}`);
});

test('thresholds are refused for other features, another clip norm, or batches given by indices', () => {
  const data = makeData(20, 3, 1);
  const other = makeData(20, 3, 2);
  const theta = new Float64Array(3);
  const t = clipThresholds(data, 1);
  const refused = (param: string) => (e: unknown) => e instanceof InvalidParameterError && e.param === param;
  assert.throws(() => sumStoredClippedGradients(logisticLoss, other, theta, { clipNorm: 1, thresholds: t }), refused('thresholds'));
  assert.throws(() => sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 2, thresholds: t }), refused('thresholds.clipNorm'));
  assert.throws(() => sumStoredClippedGradients(logisticLoss, data, theta, { clipNorm: 1, thresholds: t, indices: [0, 1] }), refused('thresholds'));
  assert.throws(() => sumStoredClippedGradients(logisticLoss, { ...data, x: Float32Array.from(data.x) }, theta, { clipNorm: 1, indices: [0] }), refused('data.x'));
});

test('the worker pool gives the serial sums bit for bit with cached thresholds, on float64 and float32 feature memories', async () => {
  const n = 2 * CHUNK_ROWS + 1234;
  const d = 5;
  const data = makeData(n, d, 9);
  const theta = fillGaussian(seededRng(10), new Float64Array(d), 0.5);
  const pool = await createClippedGradientPool({ threads: 2 });
  try {
    for (const x of [data.x, Float32Array.from(data.x)]) {
      const shared = shareGlmData({ ...data, x });
      assert.ok(featureMemoryOf(shared.x, d) !== undefined, 'shareGlmData puts x in a feature memory');
      const thresholds = clipThresholds(shared, 1);
      assert.ok(shared.y.buffer === shared.x.buffer && thresholds.values.buffer === shared.x.buffer, 'y and t in the side region: the workers read them in place');
      const serial = sumStoredClippedGradients(logisticLoss, { ...data, x }, theta, { clipNorm: 1 });
      sameSum(pool.sumClippedGradients(logisticLoss, shared, theta, { clipNorm: 1, thresholds }), serial, `pool, ${x.constructor.name}`);
      sameSum(sumStoredClippedGradients(logisticLoss, shared, theta, { clipNorm: 1, thresholds }), serial, `serial SIMD, ${x.constructor.name}`);
    }
  } finally {
    await pool.close();
  }
});

test('the side region is written once: labels stored for the same features later (one-vs-rest) and thresholds for another clip norm live elsewhere', () => {
  const n = 50;
  const d = 3;
  const data = makeData(n, d, 4);
  const x = inMemory(data.x, n, d);
  const first = storeLabels(x, d, data.y);
  assert.ok(first.buffer === x.buffer);
  const other = data.y.map((v) => -v);
  const second = storeLabels(x, d, other);
  assert.equal(second, other, 'a second label vector is not moved into the region');
  assert.deepEqual([...first], [...data.y], 'the first labels are unchanged');
  const t1 = clipThresholds({ ...data, x, y: first }, 1);
  const before = [...t1.values];
  const t2 = clipThresholds({ ...data, x, y: first }, 2);
  assert.ok(t1.values.buffer === x.buffer && t2.values.buffer !== x.buffer);
  assert.deepEqual([...t1.values], before);
  assert.deepEqual([...t2.values], [...clipThresholds({ ...data, x: Float64Array.from(data.x) }, 2).values]);
});

test('DP-GD with precision float32 releases the same event as float64 DP-GD on the rounded rows and a model within float32 rounding of its model (same seed), the same bits serial or on the pool', async () => {
  const n = 2 * CHUNK_ROWS + 77;
  const d = 4;
  const data = makeData(n, d, 12);
  const rounded = { ...data, x: Float64Array.from(Float32Array.from(data.x)) };
  const options = { clipNorm: 1, steps: 3, learningRate: 0.5, epsilon: 1, delta: 1e-5 };
  const reference = trainDpGd(rounded, { ...options, rng: seededRng(3) });
  const float32 = trainDpGd(data, { ...options, precision: 'float32', rng: seededRng(3) });
  // The logistic coefficients come from float32 margins (`float32-logistic.ts`): the same noise, a gradient within float32 rounding.
  for (let j = 0; j < d; j++) assert.ok(Math.abs(float32.model.theta[j] - reference.model.theta[j]) <= 1e-5 * (1 + Math.abs(reference.model.theta[j])), `theta[${j}]`);
  assert.deepEqual(float32.privacy.event, reference.privacy.event);
  assert.equal(float32.privacy.epsilon, reference.privacy.epsilon);
  assert.deepEqual(trainDpGd(data, { ...options, precision: 'float32', rng: seededRng(3) }).model.theta, float32.model.theta, 'deterministic');
  const pool = await createClippedGradientPool({ threads: 2 });
  try {
    const pooled = trainDpGd(data, { ...options, precision: 'float32', rng: seededRng(3), gradientSummer: poolGradientSummer(pool) });
    assert.deepEqual(pooled.model.theta, float32.model.theta);
  } finally {
    await pool.close();
  }
  assert.throws(
    () => trainDpGd(data, { ...options, precision: 'float32', gradientSummer: { prepare: (x) => x, sum: sumClippedGradients } }),
    (e: unknown) => e instanceof InvalidParameterError && e.param === 'precision',
  );
});

test('dpfit train --method dpgd --precision float32 trains on the float32-rounded rows: the report of float64 training on those rows, its model within float32 rounding', async () => {
  const { mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { runCli } = await import('../../helpers/people.js');
  const dir = await mkdtemp(join(tmpdir(), 'dpfit-precision-'));
  try {
    const rng = seededRng(21);
    const rows = Array.from({ length: 400 }, () => Array.from({ length: 3 }, () => rng.nextDouble() * 2 - 1));
    const csv = (values: number[][]) => `a,b,c,y\n${values.map((r, i) => `${r.map((v) => String(v)).join(',')},${i % 3 === 0 ? 'yes' : 'no'}`).join('\n')}\n`;
    // rowTransform "none" keeps the stored values as parsed, so rounding them in the file is what float32 storage does.
    const schema = JSON.stringify({
      version: 1, rowTransform: 'none',
      columns: [...['a', 'b', 'c'].map((name) => ({ name, type: 'numeric', lower: -1, upper: 1 })), { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] }],
    });
    await writeFile(join(dir, 's.json'), schema);
    await writeFile(join(dir, 'd.csv'), csv(rows));
    await writeFile(join(dir, 'r.csv'), csv(rows.map((r) => r.map((v) => Math.fround(v)))));
    const args = ['--schema', join(dir, 's.json'), '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--seed', '4', '--json'];
    const float32 = await runCli('train', '--data', join(dir, 'd.csv'), ...args, '--precision', 'float32');
    const rounded = await runCli('train', '--data', join(dir, 'r.csv'), ...args);
    assert.equal(float32.code, 0, float32.stderr);
    assert.equal(rounded.code, 0, rounded.stderr);
    // The logistic coefficients come from float32 margins (`float32-logistic.ts`): only theta moves, within float32 rounding.
    const a = JSON.parse(float32.stdout);
    const b = JSON.parse(rounded.stdout);
    const thetaA: number[] = a.model.theta;
    const thetaB: number[] = b.model.theta;
    assert.equal(thetaA.length, thetaB.length);
    thetaA.forEach((v, j) => assert.ok(Math.abs(v - thetaB[j]) <= 1e-5 * (1 + Math.abs(thetaB[j])), `theta[${j}]: ${v} vs ${thetaB[j]}`));
    assert.deepEqual({ ...a, model: { ...a.model, theta: null } }, { ...b, model: { ...b.model, theta: null } });
    const again = await runCli('train', '--data', join(dir, 'd.csv'), ...args, '--precision', 'float32');
    assert.equal(again.stdout, float32.stdout, 'deterministic');
    const bad = await runCli('train', '--data', join(dir, 'd.csv'), ...args, '--precision', 'float16');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--precision/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

/** makeData with most entries zeroed (one-hot-like rows), some of them -0. */
function makeSparseData(n: number, d: number, seed: number, keep: number): GlmData {
  const data = makeData(n, d, seed);
  const rng = seededRng(seed + 100);
  for (let k = 0; k < data.x.length; k++) {
    const u = rng.nextDouble();
    if (u >= keep) data.x[k] = u < keep + (1 - keep) / 10 ? -0 : 0;
  }
  return data;
}


test('a batch with cached thresholds, dense or from the nonzero entries, gives the per-step-norm sums bit for bit (property)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 400 }), fc.integer({ min: 1, max: 23 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom<GlmLoss>(logisticLoss, huberLoss(1)), fc.constantFrom(0.5, 1, 3), fc.constantFrom(0.3, 300),
      fc.constantFrom(0.05, 0.2, 0.6), fc.integer({ min: 0, max: 600 }),
      (n, d, seed, loss, clipNorm, thetaScale, keep, batchSize) => {
        const data = makeSparseData(n, d, seed, keep);
        const theta = fillGaussian(seededRng(seed + 1), new Float64Array(d), thetaScale);
        // A batch with repeats, in no particular order.
        const rng = seededRng(seed + 2);
        const indices = Array.from({ length: batchSize }, () => Math.floor(rng.nextDouble() * n));
        const reference = sumClippedGradients(loss, data, theta, { clipNorm, indices });
        const thresholds = clipThresholds(data, clipNorm);
        sameSum(sumBatchClippedGradients(loss, data, theta, { clipNorm, indices, thresholds }), reference, 'cached thresholds, dense rows');
        const sparse = sparseRowsOf(data.x, n, d);
        const nonzeros = data.x.filter((v) => v !== 0).length;
        assert.equal(sparse !== undefined, nonzeros <= 0.25 * n * d, 'compressed exactly when at most a quarter of the entries are nonzero');
        // Built regardless of the density here, to test the kernels on every draw.
        const rows = sparse ?? compressRows(data);
        sameSum(sumBatchClippedGradients(loss, data, theta, { clipNorm, indices, thresholds, sparse: rows }), reference, 'cached thresholds, nonzero entries');
      },
    ),
    { numRuns: 80 },
  );
});

test('a batch of more than CHUNK_ROWS rows is summed chunk by chunk on the nonzero entries as on the dense rows', () => {
  const n = 3000;
  const d = 7;
  const data = makeSparseData(n, d, 21, 0.1);
  const theta = fillGaussian(seededRng(22), new Float64Array(d), 2);
  const rng = seededRng(23);
  const indices = Uint32Array.from({ length: CHUNK_ROWS + 1001 }, () => Math.floor(rng.nextDouble() * n));
  const reference = sumClippedGradients(logisticLoss, data, theta, { clipNorm: 1, indices });
  const sparse = sparseRowsOf(data.x, n, d);
  assert.ok(sparse !== undefined);
  sameSum(sumBatchClippedGradients(logisticLoss, data, theta, { clipNorm: 1, indices, thresholds: clipThresholds(data, 1), sparse }), reference, 'two chunks');
});

test('the compressed rows hold exactly the nonzero entries, only for mostly-zero features; a batch sum refuses those of other features', () => {
  const dense = makeData(50, 4, 31);
  assert.equal(sparseRowsOf(dense.x, 50, 4), undefined, 'dense features keep the dense kernels');
  const data = makeSparseData(50, 4, 32, 0.2);
  const sparse = sparseRowsOf(data.x, 50, 4);
  assert.ok(sparse !== undefined);
  const rebuilt = new Float64Array(50 * 4);
  for (let i = 0; i < 50; i++) {
    for (let p = sparse.rowStart[i]; p < sparse.rowStart[i + 1]; p++) {
      assert.ok(p === sparse.rowStart[i] || sparse.columns[p] > sparse.columns[p - 1], 'columns increase within a row');
      rebuilt[i * 4 + sparse.columns[p]] = sparse.values[p];
    }
  }
  for (let k = 0; k < rebuilt.length; k++) assert.ok(rebuilt[k] === data.x[k], `entry ${k}`);
  const other = makeSparseData(50, 4, 33, 0.2);
  const refused = (param: string) => (e: unknown) => e instanceof InvalidParameterError && e.param === param;
  const theta = new Float64Array(4);
  assert.throws(() => sumBatchClippedGradients(logisticLoss, other, theta, { clipNorm: 1, indices: [0], thresholds: clipThresholds(other, 1), sparse }), refused('sparse'));
  assert.throws(() => sumBatchClippedGradients(logisticLoss, data, theta, { clipNorm: 1, indices: [0], thresholds: clipThresholds(other, 1) }), refused('thresholds'));
  assert.throws(() => sumBatchClippedGradients(logisticLoss, data, theta, { clipNorm: 1, indices: [50], thresholds: clipThresholds(data, 1) }), refused('indices[0]'));
});

test('DP-SGD releases the model of the per-step-norm sums bit for bit (cached thresholds, nonzero entries), with the same event', () => {
  const n = 600;
  const d = 12;
  for (const keep of [0.1, 1]) {
    const data = { ...makeSparseData(n, d, 41, keep), y: makeData(n, d, 41).y.map((v) => (v < 0 ? 0 : 1)) };
    const options = { clipNorm: 1, batchSize: 32, epochs: 3, learningRate: 0.05, optimizer: 'adam' as const, epsilon: 1, delta: 1e-5 };
    const released = trainDpSgd(data, { ...options, rng: seededRng(5) });
    // The reference: DP-SGD's own set-up, update and report around the original per-step-norm sum.
    const glm = dataForLoss(logisticLoss, data);
    const run = setUpDpSgd(glm, { ...options, rng: seededRng(5) });
    const theta = new Float64Array(d);
    const gradient = new Float64Array(d);
    const counts = { clipped: 0, used: 0, emptyBatches: 0 };
    for (let t = 0; t < run.steps; t++) {
      const batch = poissonSubsampleIndices(run.rng, n, run.samplingProbability);
      if (batch.length === 0) gradient.fill(0);
      else sumClippedGradients(logisticLoss, glm, theta, { clipNorm: 1, indices: batch, out: gradient });
      dpSgdUpdate(run, options, t, gradient, theta);
    }
    const reference = finishDpSgd(run, options, theta, counts);
    assert.ok(run.steps * run.samplingProbability >= 1, 'the run takes the cached path');
    assert.deepEqual(released.model.theta, reference.model.theta, `keep ${keep}`);
    assert.deepEqual(released.privacy.event, reference.privacy.event);
  }
});
