import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { checkRowNormBound, concatRows, createDataset, maxRowNorm, rowNorm, rowView, selectRows, trainTestSplit, type Dataset } from '../../src/data/dataset.js';
import { gaussianFeatures, syntheticDataset, twoPartySplit } from '../../src/data/synthetic.js';
import { addIntercept, clipRows, clipRowsMahalanobis, normalizeRows, scaleRows } from '../../src/data/transforms.js';
import { DataFormatError, InvalidParameterError } from '../../src/errors.js';
import { seededRng } from '../../src/random/rng.js';
import { ALPHA, normalCdf } from '../helpers/stats.js';
import { referenceClip, referenceNormalize } from '../helpers/reference-row-rescale.js';

function small(): Dataset {
  return createDataset({ x: Float64Array.of(3, 4, 0, 0, 1, 1), y: Float64Array.of(1, 0, 1), d: 2, featureNames: ['a', 'b'] });
}

test('createDataset checks shapes and finiteness; row views share memory', () => {
  const data = small();
  assert.equal(data.n, 3);
  assert.deepEqual(Array.from(rowView(data, 0)), [3, 4]);
  rowView(data, 2)[0] = 2;
  assert.equal(data.x[4], 2, 'a view writes through');
  assert.equal(rowNorm(data, 0), 5);
  assert.equal(maxRowNorm(data), 5);
  assert.throws(() => createDataset({ x: new Float64Array(5), y: new Float64Array(3), d: 2 }), InvalidParameterError);
  assert.throws(() => createDataset({ x: Float64Array.of(1, NaN), y: Float64Array.of(0), d: 2, featureNames: ['a', 'b'] }), /^(?!.*NaN).*x\[0, b\] must be a finite number; the value is not shown/);
  assert.throws(() => createDataset({ x: Float64Array.of(1), y: Float64Array.of(Infinity), d: 1 }), /y\[0\] must be a finite number/);
  assert.throws(() => rowView(data, 3), InvalidParameterError);
  assert.deepEqual(createDataset({ x: new Float64Array(2), y: new Float64Array(1), d: 2 }).featureNames, ['x0', 'x1']);
});

test('checkRowNormBound names the first row above the bound', () => {
  const data = small();
  assert.equal(checkRowNormBound(data, 5), data, 'passes at the bound and returns the dataset');
  assert.throws(
    () => checkRowNormBound(small(), 1, 'train.csv'),
    (error: unknown) => error instanceof DataFormatError && /^(?!.*\b5\b)train\.csv: row 0 has an L2 norm above rowNormBound 1 /.test(error.message),
  );
  assert.throws(() => checkRowNormBound(small(), -1), InvalidParameterError);
});

test('trainTestSplit is a reproducible partition drawn from the given Rng', () => {
  const n = 101;
  const data = createDataset({ x: Float64Array.from({ length: n }, (_, i) => i), y: Float64Array.from({ length: n }, (_, i) => i % 2), d: 1 });
  const a = trainTestSplit(data, { testFraction: 0.2, rng: seededRng(5) });
  const b = trainTestSplit(data, { testFraction: 0.2, rng: seededRng(5) });
  assert.equal(a.test.n, 20);
  assert.equal(a.train.n, 81);
  assert.deepEqual(Array.from(a.test.x), Array.from(b.test.x));
  const all = [...a.train.x, ...a.test.x].sort((u, v) => u - v);
  assert.deepEqual(all, Array.from({ length: n }, (_, i) => i));
  for (let i = 0; i < a.test.n; i++) assert.equal(a.test.y[i], a.test.x[i] % 2, 'labels travel with their rows');
  const c = trainTestSplit(data, { testFraction: 0.2, rng: seededRng(6) });
  assert.notDeepEqual(Array.from(c.test.x), Array.from(a.test.x));
  assert.throws(() => trainTestSplit(data, { testFraction: 1.5, rng: seededRng(1) }), /testFraction must be in \[0, 1\]/);
  assert.throws(() => trainTestSplit(data, { testFraction: 0.5 } as never), /rng must be an Rng/);
  assert.deepEqual(Array.from(concatRows(selectRows(data, [3]), selectRows(data, [1])).x), [3, 1]);
});

test('per-row transforms: unit rows, clipped rows, intercept bound sqrt(B^2 + c^2), Mahalanobis clipping (000 Prop. 3)', () => {
  const finite = fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 });
  fc.assert(
    fc.property(fc.array(fc.array(finite, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 20 }), fc.double({ min: 1e-3, max: 1e3, noNaN: true }), (rows, clipNorm) => {
      const data = createDataset({ x: Float64Array.from(rows.flat()), y: new Float64Array(rows.length), d: 3 });
      const unit = normalizeRows(data);
      const clipped = clipRows(data, clipNorm);
      for (let i = 0; i < data.n; i++) {
        const norm = Math.max(...rowView(data, i).map(Math.abs)) > 0 ? 1 : 0; // is the row non-zero?
        assert.ok(rowNorm(unit, i) <= 1, 'never above 1 in floating point');
        if (norm > 0) assert.ok(rowNorm(unit, i) > 1 - 1e-12);
        else assert.equal(rowNorm(unit, i), 0);
        assert.ok(rowNorm(clipped, i) <= clipNorm);
        if (rowNorm(data, i) <= clipNorm) assert.deepEqual(Array.from(rowView(clipped, i)), Array.from(rowView(data, i)), 'short rows are untouched');
        // The direction is kept (no sign flips; entries tiny next to the others may underflow to 0).
        for (let k = 0; k < 3; k++) assert.ok(unit.x[i * 3 + k] * data.x[i * 3 + k] >= 0 && clipped.x[i * 3 + k] * data.x[i * 3 + k] >= 0);
      }
      checkRowNormBound(unit, 1);
    }),
    { seed: 3, numRuns: 300 },
  );
  const data = small();
  const unitRows = normalizeRows(data).x;
  [0.6, 0.8, 0, 0, Math.SQRT1_2, Math.SQRT1_2].forEach((v, k) => assert.ok(Math.abs(unitRows[k] - v) <= 2e-15, `${k}: ${unitRows[k]}`));
  assert.deepEqual(Array.from(data.x), [3, 4, 0, 0, 1, 1], 'the input is not modified');
  const { dataset, rowNormBound } = addIntercept(normalizeRows(data), { rowNormBound: 1 });
  assert.equal(dataset.d, 3);
  assert.deepEqual(dataset.featureNames, ['a', 'b', '(intercept)']);
  assert.deepEqual(Array.from(rowView(dataset, 1)), [0, 0, 1]);
  assert.ok(rowNormBound !== undefined && rowNormBound >= Math.SQRT2 && rowNormBound < 1.4142136);
  assert.ok(maxRowNorm(dataset) <= rowNormBound);
  assert.deepEqual(Array.from(scaleRows(data, 0.5).x), [1.5, 2, 0, 0, 0.5, 0.5]);
  // Mahalanobis clipping with C = diag(4, 1): x^T C^-1 x for (3, 4) is 9/4 + 16 = 18.25 > R_c^2 = 1.
  const m = clipRowsMahalanobis(data, { matrix: Float64Array.of(4, 0, 0, 1), radius: 1 });
  const q = (i: number): number => m.x[2 * i] ** 2 / 4 + m.x[2 * i + 1] ** 2;
  assert.ok(q(0) <= 1 && q(0) > 1 - 1e-12);
  assert.deepEqual(Array.from(rowView(m, 2)), [1, 1].map((v) => v * Math.min(1, 1 / Math.sqrt(1.25)) * (1 - 2 * Number.EPSILON)));
  assert.throws(() => clipRowsMahalanobis(data, { matrix: Float64Array.of(1, 2, 2, 1), radius: 1 }), /positive definite/);
  assert.throws(() => clipRows(data, 0), /clipNorm must be > 0/);
});

test('gaussianFeatures draws N(mean, Sigma) rows (000 Prop. 3): sample covariance within sampling error (fixed seed)', () => {
  const n = 20000;
  const sigma = Float64Array.of(2, 0.8, 0.8, 1);
  const mean = [1, -2];
  const x = gaussianFeatures({ n, d: 2, covariance: sigma, mean, rng: seededRng(99) });
  const m = [0, 0];
  for (let i = 0; i < n; i++) for (let k = 0; k < 2; k++) m[k] += x[2 * i + k] / n;
  const c = [0, 0, 0, 0];
  for (let i = 0; i < n; i++) for (let r = 0; r < 2; r++) for (let s = 0; s < 2; s++) c[2 * r + s] += ((x[2 * i + r] - m[r]) * (x[2 * i + s] - m[s])) / (n - 1);
  // Two-sided z-tests at ALPHA = 1e-6: mean_k ~ N(mu_k, Sigma_kk / n); Var of a sample covariance
  // entry is (Sigma_rr Sigma_ss + Sigma_rs^2) / n (Wishart).
  const z = 4.8916; // Phi^-1(1 - ALPHA / 2)
  assert.ok(Math.abs(2 * normalCdf(-z) - ALPHA) < 1e-8);
  for (let k = 0; k < 2; k++) assert.ok(Math.abs(m[k] - mean[k]) < z * Math.sqrt(sigma[3 * k] / n), `mean ${k}`);
  for (let r = 0; r < 2; r++) {
    for (let s = 0; s < 2; s++) {
      const sd = Math.sqrt((sigma[3 * r] * sigma[3 * s] + sigma[2 * r + s] ** 2) / n);
      assert.ok(Math.abs(c[2 * r + s] - sigma[2 * r + s]) < z * sd, `cov ${r}${s}: ${c[2 * r + s]}`);
    }
  }
  // Reproducible.
  assert.deepEqual(Array.from(gaussianFeatures({ n: 3, d: 2, covariance: sigma, rng: seededRng(1) })), Array.from(gaussianFeatures({ n: 3, d: 2, covariance: sigma, rng: seededRng(1) })));
  assert.throws(() => gaussianFeatures({ n: 3, d: 2, covariance: Float64Array.of(1, 0.5, 0.4, 1), rng: seededRng(1) }), /symmetric/);
});

test('syntheticDataset: linear labels follow x.theta + noise, logistic labels follow sigmoid(x.theta)', () => {
  const theta = [2, -1];
  const linear = syntheticDataset({ n: 500, d: 2, labels: 'linear', theta, rng: seededRng(4) });
  for (let i = 0; i < linear.n; i++) assert.ok(Math.abs(linear.y[i] - (2 * linear.x[2 * i] - linear.x[2 * i + 1])) < 1e-12);
  const noisy = syntheticDataset({ n: 20000, d: 2, labels: 'linear', theta, noiseStd: 0.5, rng: seededRng(4) });
  let residual = 0;
  for (let i = 0; i < noisy.n; i++) residual += (noisy.y[i] - (2 * noisy.x[2 * i] - noisy.x[2 * i + 1])) ** 2 / noisy.n;
  assert.ok(Math.abs(residual - 0.25) < 4.9 * 0.25 * Math.sqrt(2 / noisy.n), `residual variance ${residual}`);
  // Logistic with theta = 0: labels are fair coins; with a large theta they follow sign(x.theta).
  const coins = syntheticDataset({ n: 20000, d: 3, labels: 'logistic', theta: [0, 0, 0], rng: seededRng(8) });
  const positives = coins.y.reduce((s, v) => s + v, 0);
  assert.ok(Math.abs(positives - 10000) < 4.9 * Math.sqrt(20000 * 0.25), `${positives} positives`);
  const sharp = syntheticDataset({ n: 2000, d: 2, labels: 'logistic', theta: [1e6, 0], encoding: 'plusMinusOne', rng: seededRng(8) });
  for (let i = 0; i < sharp.n; i++) if (Math.abs(sharp.x[2 * i]) > 1e-4) assert.equal(sharp.y[i], Math.sign(sharp.x[2 * i]));
  assert.deepEqual(sharp.featureNames, ['x1', 'x2']);
});

test('two-party splits as in 000 Sec. 6: random, label (50 random points each, then by label), bias (optimum shifted by B)', () => {
  const data = syntheticDataset({ n: 1000, d: 3, labels: 'logistic', rng: seededRng(12) });
  const random = twoPartySplit(data, { kind: 'random', rng: seededRng(1) });
  assert.equal(random.parties[0].n + random.parties[1].n, 1000);
  assert.equal(random.parties[0].n, 500);
  const label = twoPartySplit(data, { kind: 'label', rng: seededRng(1) });
  const [a, b] = label.parties;
  assert.equal(a.n + b.n, 1000);
  // After the 50 seed points, party 1 holds only positives and party 2 only negatives.
  for (let i = 50; i < a.n; i++) assert.equal(a.y[i], 1);
  for (let i = 50; i < b.n; i++) assert.equal(b.y[i], 0);
  const positives = data.y.reduce((s, v) => s + v, 0);
  const seedPositivesA = a.y.slice(0, 50).reduce((s, v) => s + v, 0);
  const seedPositivesB = b.y.slice(0, 50).reduce((s, v) => s + v, 0);
  assert.equal(a.n - 50, positives - seedPositivesA - seedPositivesB);
  // bias: party 2's labels shift by x.B, the least-squares optimum of party 2 moves by exactly B.
  const bias = [0.5, -1, 2];
  const split = twoPartySplit(data, { kind: 'bias', bias, rng: seededRng(1) });
  const [, second] = split.parties;
  const plain = twoPartySplit(data, { kind: 'random', rng: seededRng(1) }).parties[1];
  for (let i = 0; i < second.n; i++) {
    const shift = bias[0] * second.x[3 * i] + bias[1] * second.x[3 * i + 1] + bias[2] * second.x[3 * i + 2];
    assert.ok(Math.abs(second.y[i] - plain.y[i] - shift) < 1e-12);
  }
  assert.throws(() => twoPartySplit(data, { kind: 'bias', rng: seededRng(1) }), /bias must be a vector of length d = 3/);
  assert.throws(() => twoPartySplit(data, { kind: 'label', seedPoints: 600, rng: seededRng(1) }), /seedPoints must be at most n \/ 2/);
  assert.throws(() => twoPartySplit(data, { kind: 'other' as never, rng: seededRng(1) }), /kind must be/);
});

test('normalizeRows and clipRows give the rows of the unfused rescaling bit for bit (property: random rows, tiny, huge, zero, non-finite entries)', () => {
  const entry = fc.oneof(
    fc.double({ min: -10, max: 10, noNaN: true }),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -0, 5e-324, -2.2250738585072014e-308, 1e-160, 1e154, -1e200, 1.7976931348623157e308, 1, -1, 0.1),
  );
  const special = fc.constantFrom(NaN, Infinity, -Infinity);
  const rows = fc.integer({ min: 1, max: 25 }).chain((d) =>
    fc.tuple(fc.constant(d), fc.array(fc.array(fc.oneof({ weight: 30, arbitrary: entry }, { weight: 1, arbitrary: special }), { minLength: d, maxLength: d }), { minLength: 1, maxLength: 8 })),
  );
  const bits = (x: Float64Array): string => Buffer.from(x.buffer, x.byteOffset, x.byteLength).toString('hex');
  fc.assert(
    fc.property(rows, fc.double({ min: 1e-3, max: 1e3, noNaN: true }), ([d, table], clipNorm) => {
      const x = Float64Array.from(table.flat());
      const data = { x, y: new Float64Array(table.length), n: table.length, d, featureNames: Array.from({ length: d }, (_, j) => `f${j}`) };
      const normalized = x.slice();
      referenceNormalize(normalized, d);
      assert.equal(bits(normalizeRows(data).x), bits(normalized));
      const clipped = x.slice();
      referenceClip(clipped, d, clipNorm);
      assert.equal(bits(clipRows(data, clipNorm).x), bits(clipped));
    }),
    { seed: 281, numRuns: 3000 },
  );
});
