import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidParameterError } from '../../../src/errors.js';
import {
  CLIP_SAFETY,
  clippedExampleGradient,
  clippedGradientCoefficients,
  glmConstants,
  glmHessian,
  glmHessianCallback,
  glmObjective,
  glmValueAndGradient,
  huberLoss,
  logisticLoss,
  maxRowNorm,
  rowNorms,
  smoothedHingeLoss,
  squaredLoss,
  sumClippedGradients,
  validateGlmData,
} from '../../../src/learners/glm/index.js';
import type { GlmData, GlmLoss, GlmObjectiveOptions } from '../../../src/learners/glm/index.js';
import { featureMemoryOf, storeFeatures } from '../../../src/learners/glm/kernels/feature-memory.js';
import { KERNEL_FEATURES_MIN_ELEMENTS, withKernelFeatures } from '../../../src/learners/glm/objective.js';
import { lbfgs } from '../../../src/math/lbfgs.js';
import { norm2 } from '../../../src/math/linear-algebra.js';
import { newton } from '../../../src/math/newton.js';
import { fillGaussian, seededRng } from '../../../src/random/index.js';
import { assertClose } from '../../helpers/assert-close.js';

const LOSSES: GlmLoss[] = [logisticLoss, squaredLoss, huberLoss(0.8), smoothedHingeLoss(0.5)];

/** Gaussian rows times `scale`, labels suited to the loss (signed from a noisy linear rule). */
function makeData(loss: GlmLoss, n: number, d: number, seed: number, scale = 1): GlmData {
  const rng = seededRng(seed);
  const x = fillGaussian(rng, new Float64Array(n * d), scale);
  const noise = fillGaussian(rng, new Float64Array(n));
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += (x[i * d + j] * (j % 3 - 1)) / scale;
    y[i] = loss.labels === 'signed' ? (s + noise[i] > 0 ? 1 : -1) : s + 0.5 * noise[i];
  }
  return { x, y, n, d };
}

/** Straightforward per-row reference: sum_i f(x_i . theta) + lambda/2 ||theta||^2 + b . theta. */
function naiveValue(loss: GlmLoss, data: GlmData, theta: Float64Array, lambda: number, b?: Float64Array): number {
  let v = 0;
  for (let i = 0; i < data.n; i++) {
    let z = 0;
    for (let j = 0; j < data.d; j++) z += data.x[i * data.d + j] * theta[j];
    v += loss.value(z, data.y[i]);
  }
  for (let j = 0; j < data.d; j++) v += 0.5 * lambda * theta[j] * theta[j] + (b ? b[j] * theta[j] : 0);
  return v;
}

function centralGradient(f: (t: Float64Array) => number, theta: Float64Array, h: number): Float64Array {
  const g = new Float64Array(theta.length);
  const t = Float64Array.from(theta);
  for (let j = 0; j < theta.length; j++) {
    t[j] = theta[j] + h;
    const up = f(t);
    t[j] = theta[j] - h;
    const down = f(t);
    t[j] = theta[j];
    g[j] = (up - down) / (2 * h);
  }
  return g;
}

/**
 * Row i's margin in the kernels' documented order (src/learners/glm/kernels/kernels.ts): the even-j and
 * the odd-j halves summed separately, then added, so that the coefficients below compare bit for bit.
 */
function kernelMargin(data: GlmData, theta: Float64Array, i: number): number {
  let even = 0;
  let odd = 0;
  for (let j = 0; j < data.d; j++) {
    const term = data.x[i * data.d + j] * theta[j];
    if (j % 2 === 0) even += term;
    else odd += term;
  }
  return even + odd;
}

function maxRelDiff(a: Float64Array, b: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]) / Math.max(1, Math.abs(b[i])));
  return m;
}

test('glmObjective: value equals the per-row sum, gradient matches finite differences (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 1, max: 1e6 }),
      fc.double({ min: 0, max: 5, noNaN: true }),
      fc.boolean(),
      fc.constantFrom(Infinity, 0.5, 2),
      (which, seed, lambda, perturb, clipNorm) => {
        const loss = LOSSES[which];
        const data = makeData(loss, 40, 5, seed);
        const rng = seededRng(seed + 1);
        const theta = fillGaussian(rng, new Float64Array(5));
        const b = perturb ? fillGaussian(rng, new Float64Array(5), 3) : undefined;
        const options: GlmObjectiveOptions = { regularization: lambda, linear: b, clipNorm };
        const f = glmObjective(loss, data, options);
        const grad = new Float64Array(5);
        const value = f(theta, grad);
        if (clipNorm === Infinity) assertClose(value, naiveValue(loss, data, theta, lambda, b), 1e-12, 1e-12);
        const scratch = new Float64Array(5);
        const fd = centralGradient((t) => f(t, scratch), theta, 1e-6);
        // Central differences: O(h^2) error plus O(h) at the few rows whose margin crosses a kink.
        const err = maxRelDiff(grad, fd);
        if (!(err < 2e-5)) throw new Error(`${loss.name} lambda=${lambda} C=${clipNorm}: gradient vs finite differences ${err}`);
      },
    ),
    { seed: 21, numRuns: 120 },
  );
});

test('glmHessian matches finite differences of the gradient; glmValueAndGradient equals the Objective', () => {
  for (const [loss, clipNorm] of [[logisticLoss, Infinity], [squaredLoss, Infinity], [logisticLoss, 0.3], [huberLoss(5), Infinity]] as [GlmLoss, number][]) {
    const data = makeData(loss, 60, 4, 5);
    const theta = fillGaussian(seededRng(6), new Float64Array(4), 0.5);
    const options = { regularization: 0.7, clipNorm };
    const h = glmHessian(loss, data, theta, options);
    const f = glmObjective(loss, data, options);
    const g = new Float64Array(4);
    const eps = 1e-6;
    for (let k = 0; k < 4; k++) {
      const t = Float64Array.from(theta);
      t[k] += eps;
      f(t, g);
      const up = Float64Array.from(g);
      t[k] -= 2 * eps;
      f(t, g);
      for (let j = 0; j < 4; j++) {
        const fd = (up[j] - g[j]) / (2 * eps);
        assertClose(h[j * 4 + k], fd, 1e-5, 1e-6, `${loss.name} C=${clipNorm} H[${j}][${k}]`);
        assert.equal(h[j * 4 + k], h[k * 4 + j]);
      }
    }
    const g1 = new Float64Array(4);
    const g2 = new Float64Array(4);
    assert.equal(glmValueAndGradient(loss, data, theta, g1, options), f(theta, g2));
    assert.deepEqual([...g1], [...g2]);
  }
});

test('clipping: every per-example gradient has norm <= C, and unclipped ones are unchanged (fast-check)', () => {
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 3 }),
      fc.integer({ min: 1, max: 1e6 }),
      fc.double({ min: 1e-3, max: 100, noNaN: true }),
      fc.double({ min: 1e-2, max: 1e3, noNaN: true }),
      (which, seed, clipNorm, scale) => {
        const loss = LOSSES[which];
        const data = makeData(loss, 30, 6, seed, scale);
        const theta = fillGaussian(seededRng(seed + 7), new Float64Array(6));
        const c = clippedGradientCoefficients(loss, data, theta, clipNorm);
        const norms = rowNorms(data);
        for (let i = 0; i < data.n; i++) {
          const gi = clippedExampleGradient(loss, data, theta, i, clipNorm);
          const gn = norm2(gi);
          if (!(gn <= clipNorm)) throw new Error(`row ${i}: clipped gradient norm ${gn} > C = ${clipNorm}`);
          const raw = loss.derivative(kernelMargin(data, theta, i), data.y[i]);
          if (Math.abs(raw) * norms[i] <= clipNorm * CLIP_SAFETY * (1 - 1e-12)) {
            if (c[i] !== raw) throw new Error(`row ${i}: unclipped coefficient changed ${raw} -> ${c[i]}`);
          } else if (!(Math.sign(c[i]) === Math.sign(raw) && Math.abs(Math.abs(c[i]) * norms[i] - clipNorm) <= 1e-12 * clipNorm)) {
            throw new Error(`row ${i}: clipped coefficient ${c[i]} (raw ${raw}) is not scaled to norm C`);
          }
        }
      },
    ),
    { seed: 22, numRuns: 150 },
  );
});

test('sumClippedGradients: equals the sum of clipped per-example gradients and the clipped-gradient objective\'s gradient (003 App. F.2)', () => {
  // n = 2 * 256 + 5 and odd d exercise the blocked kernels' remainders.
  for (const [loss, d] of [[logisticLoss, 7], [squaredLoss, 3], [huberLoss(0.5), 1], [smoothedHingeLoss(0.2), 20]] as [GlmLoss, number][]) {
    const data = makeData(loss, 517, d, 8, 3);
    const theta = fillGaussian(seededRng(9), new Float64Array(d));
    const clipNorm = 1.3;
    const { sum, clippedCount, count } = sumClippedGradients(loss, data, theta, { clipNorm });
    assert.equal(count, 517);
    const expected = new Float64Array(d);
    let expectedClipped = 0;
    const coefficients = clippedGradientCoefficients(loss, data, theta, clipNorm);
    for (let i = 0; i < data.n; i++) {
      const gi = clippedExampleGradient(loss, data, theta, i, clipNorm);
      for (let j = 0; j < d; j++) expected[j] += gi[j];
      if (coefficients[i] !== loss.derivative(kernelMargin(data, theta, i), data.y[i])) expectedClipped++;
    }
    assert.ok(maxRelDiff(sum, expected) < 1e-12, `${loss.name}: ${maxRelDiff(sum, expected)}`);
    assert.equal(clippedCount, expectedClipped);
    assert.ok(clippedCount > 0 && clippedCount < 517, `${loss.name}: clippedCount ${clippedCount}`);
    // The same vector is the gradient of the clipped-gradient objective with lambda = 0.
    const g = new Float64Array(d);
    glmObjective(loss, data, { clipNorm })(theta, g);
    assert.ok(maxRelDiff(g, sum) < 1e-12);
    // No clipping (C = Infinity) gives the plain gradient.
    const plain = new Float64Array(d);
    glmObjective(loss, data)(theta, plain);
    assert.ok(maxRelDiff(sumClippedGradients(loss, data, theta, { clipNorm: Infinity }).sum, plain) < 1e-12);
  }
});

test('sumClippedGradients: a batch of indices (repeats count repeatedly) and an output buffer', () => {
  const data = makeData(logisticLoss, 300, 4, 10, 2);
  const theta = fillGaussian(seededRng(11), new Float64Array(4));
  const indices = Int32Array.of(5, 299, 0, 5, 17);
  const out = new Float64Array(4).fill(99);
  const r = sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.5, indices, out });
  assert.equal(r.sum, out);
  assert.equal(r.count, 5);
  const expected = new Float64Array(4);
  for (const i of indices) {
    const gi = clippedExampleGradient(logisticLoss, data, theta, i, 0.5);
    for (let j = 0; j < 4; j++) expected[j] += gi[j];
  }
  assert.ok(maxRelDiff(out, expected) < 1e-14);
  const empty = sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.5, indices: [] });
  assert.deepEqual([...empty.sum], [0, 0, 0, 0]);
  assert.equal(empty.count, 0);
  assert.throws(() => sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.5, indices: [300] }), InvalidParameterError);
  assert.throws(() => sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.5, indices: [1.5] }), InvalidParameterError);
  assert.throws(() => sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0 }), InvalidParameterError);
  assert.throws(() => sumClippedGradients(logisticLoss, data, new Float64Array(3), { clipNorm: 1 }), InvalidParameterError);
});

test('clipped-gradient objective with C >= L R is the plain objective (003 Sec. 4: C = L recovers AMP)', () => {
  const raw = makeData(logisticLoss, 200, 5, 12);
  // Rows normalised to ||x|| = 1 as in 003 Sec. 5, so L = 1 for the logistic loss.
  const norms = rowNorms(raw);
  const x = Float64Array.from(raw.x, (v, k) => v / norms[Math.floor(k / 5)]);
  const data = { ...raw, x };
  assertClose(maxRowNorm(data), 1, 1e-15);
  const { lipschitz } = glmConstants(logisticLoss, { rowNormBound: 1 });
  const theta = fillGaussian(seededRng(13), new Float64Array(5), 3);
  const g1 = new Float64Array(5);
  const g2 = new Float64Array(5);
  // C slightly above L: the safety factor of the clipping threshold must not bite.
  const v1 = glmObjective(logisticLoss, data, { regularization: 1, clipNorm: lipschitz * 1.001 })(theta, g1);
  const v2 = glmObjective(logisticLoss, data, { regularization: 1 })(theta, g2);
  assert.equal(v1, v2);
  assert.deepEqual([...g1], [...g2]);
});

test('ridge regression through glmObjective: L-BFGS and Newton give (X^T X + lambda I)^{-1} X^T y', () => {
  const data = makeData(squaredLoss, 250, 6, 14);
  const lambda = 3;
  // Closed form by Newton's single step from 0 is not independent; compare instead with the
  // normal equations solved by Gauss-Jordan elimination.
  const a: number[][] = Array.from({ length: 6 }, () => new Array(7).fill(0));
  for (let i = 0; i < data.n; i++) {
    for (let j = 0; j < 6; j++) {
      a[j][6] += data.x[i * 6 + j] * data.y[i];
      for (let k = 0; k < 6; k++) a[j][k] += data.x[i * 6 + j] * data.x[i * 6 + k];
    }
  }
  for (let j = 0; j < 6; j++) a[j][j] += lambda;
  for (let col = 0; col < 6; col++) {
    for (let r = 0; r < 6; r++) {
      if (r === col) continue;
      const factor = a[r][col] / a[col][col];
      for (let k = col; k < 7; k++) a[r][k] -= factor * a[col][k];
    }
  }
  const expected = Float64Array.from(a, (row, j) => row[6] / row[j]);
  const f = glmObjective(squaredLoss, data, { regularization: lambda });
  const viaLbfgs = lbfgs(f, new Float64Array(6), { gradTolerance: 1e-9 });
  const viaNewton = newton(f, glmHessianCallback(squaredLoss, data, { regularization: lambda }), new Float64Array(6), { gradTolerance: 1e-9 });
  assert.equal(viaLbfgs.converged, true);
  assert.equal(viaNewton.converged, true);
  assert.ok(viaNewton.iterations <= 2);
  assert.ok(maxRelDiff(viaLbfgs.x, expected) < 1e-9 / lambda * 10);
  assert.ok(maxRelDiff(viaNewton.x, expected) < 1e-11);
});

test('objective perturbation on ridge: the minimiser is (X^T X + lambda I)^{-1} (X^T y - b) (the normal equations, checked directly)', () => {
  const data = makeData(squaredLoss, 100, 3, 15);
  const lambda = 2;
  const b = Float64Array.of(5, -3, 0.5);
  const f = glmObjective(squaredLoss, data, { regularization: lambda, linear: b });
  const r = newton(f, glmHessianCallback(squaredLoss, data, { regularization: lambda }), new Float64Array(3), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true);
  // Check the normal equations (X^T X + lambda I) theta = X^T y - b directly.
  const h = glmHessian(squaredLoss, data, r.x, { regularization: lambda });
  for (let j = 0; j < 3; j++) {
    let lhs = 0;
    for (let k = 0; k < 3; k++) lhs += h[j * 3 + k] * r.x[k];
    let rhs = -b[j];
    for (let i = 0; i < data.n; i++) rhs += data.x[i * 3 + j] * data.y[i];
    assertClose(lhs, rhs, 1e-10, 1e-10);
  }
});

test('L2-regularised logistic regression through glmObjective: L-BFGS and Newton agree to 1e-8, also clipped', () => {
  for (const clipNorm of [Infinity, 0.4]) {
    const data = makeData(logisticLoss, 500, 8, 16);
    const options = { regularization: 1, clipNorm };
    const f = glmObjective(logisticLoss, data, options);
    const a = lbfgs(f, new Float64Array(8), { gradTolerance: 1e-9 });
    const b = newton(f, glmHessianCallback(logisticLoss, data, options), new Float64Array(8), { gradTolerance: 1e-10 });
    assert.equal(a.converged, true, a.reason);
    assert.equal(b.converged, true, b.reason);
    // 1-strong convexity: ||theta - theta*|| <= ||grad||.
    let diff = 0;
    for (let j = 0; j < 8; j++) diff = Math.max(diff, Math.abs(a.x[j] - b.x[j]));
    assert.ok(diff < 1e-8, `C = ${clipNorm}: ${diff}`);
  }
});

test('GLM data and options are validated', () => {
  const data = makeData(logisticLoss, 10, 2, 17);
  assert.throws(() => glmObjective(logisticLoss, { ...data, n: 11 }), InvalidParameterError);
  assert.throws(() => glmObjective(logisticLoss, { ...data, y: new Float64Array(9) }), InvalidParameterError);
  assert.throws(() => glmObjective(logisticLoss, { ...data, y: new Float64Array(10) }), /y\[0\] must be -1 or \+1/);
  const bad = Float64Array.from(data.x);
  bad[5] = NaN;
  assert.throws(() => validateGlmData(logisticLoss, { ...data, x: bad }), /data\.x\[2\]\[1\] must be a finite number/);
  assert.throws(() => glmObjective(logisticLoss, data, { regularization: -1 }), InvalidParameterError);
  assert.throws(() => glmObjective(logisticLoss, data, { clipNorm: 0 }), InvalidParameterError);
  assert.throws(() => glmObjective(logisticLoss, data, { linear: new Float64Array(3) }), InvalidParameterError);
  assert.throws(() => glmHessian(logisticLoss, data, new Float64Array(3)), InvalidParameterError);
  assert.throws(() => glmValueAndGradient(logisticLoss, data, new Float64Array(2), new Float64Array(1)), InvalidParameterError);
  assert.throws(() => clippedExampleGradient(logisticLoss, data, new Float64Array(2), 10, 1), InvalidParameterError);
  // An empty data set is a valid (regulariser-only) objective.
  const empty = { x: new Float64Array(0), y: new Float64Array(0), n: 0, d: 2 };
  const g = new Float64Array(2);
  assert.equal(glmObjective(logisticLoss, empty, { regularization: 2 })(Float64Array.of(1, 1), g), 2);
  assert.deepEqual([...g], [2, 2]);
});

/** The bits of a float64 array (Object.is per entry tells -0 from 0). */
function assertSameBits(a: Float64Array, b: Float64Array, what: string): void {
  assert.equal(a.length, b.length, what);
  for (let j = 0; j < a.length; j++) assert.ok(Object.is(a[j], b[j]), `${what} [${j}]: ${a[j]} vs ${b[j]}`);
}

test('glmObjective on features in a feature memory (SIMD margins and gradient sums) gives the JavaScript path\'s value and gradient bit for bit (fast-check)', () => {
  // The identity is the test: both paths are documented to perform the same operations in the same
  // order (objective.ts, `valueAndGradient`), and the JavaScript path is the one checked above
  // against per-row references and finite differences.
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 900 }), fc.integer({ min: 1, max: 13 }), fc.integer({ min: 1, max: 1e6 }),
      fc.constantFrom(...LOSSES), fc.constantFrom(0, 0.7), fc.boolean(), fc.constantFrom(Infinity, 0.5, 2), fc.constantFrom(0.1, 40),
      (n, d, seed, loss, lambda, perturbed, clipNorm, thetaScale) => {
        const data = makeData(loss, n, d, seed);
        const stored = { ...data, x: storeFeatures(data.x, n, d, 'float64') as Float64Array };
        assert.ok(featureMemoryOf(stored.x, d) !== undefined);
        const rng = seededRng(seed + 1);
        const options: GlmObjectiveOptions = { regularization: lambda, clipNorm, ...(perturbed ? { linear: fillGaussian(rng, new Float64Array(d), 3) } : {}) };
        const theta = fillGaussian(rng, new Float64Array(d), thetaScale);
        const gJs = new Float64Array(d);
        const gWasm = new Float64Array(d);
        const vJs = glmObjective(loss, data, options)(theta, gJs);
        const vWasm = glmObjective(loss, stored, options)(theta, gWasm);
        assert.ok(Object.is(vJs, vWasm), `value ${vJs} vs ${vWasm}`);
        assertSameBits(gWasm, gJs, 'gradient');
        // glmValueAndGradient takes the same path as the Objective.
        const gOnce = new Float64Array(d);
        assert.ok(Object.is(glmValueAndGradient(loss, stored, theta, gOnce, options), vJs));
        assertSameBits(gOnce, gJs, 'glmValueAndGradient');
      },
    ),
    { numRuns: 60 },
  );
});

test('withKernelFeatures: large features move into a feature memory once (a bit-for-bit copy); a refilled array is copied again, small ones stay', () => {
  const loss = logisticLoss;
  const d = 16;
  const n = Math.ceil(KERNEL_FEATURES_MIN_ELEMENTS / d);
  const data = makeData(loss, n, d, 5);
  const moved = withKernelFeatures(data);
  assert.notEqual(moved.x, data.x);
  assert.ok(featureMemoryOf(moved.x, d) !== undefined);
  assert.ok(Buffer.from(moved.x.buffer, moved.x.byteOffset, moved.x.byteLength).equals(Buffer.from(data.x.buffer, data.x.byteOffset, data.x.byteLength)));
  assert.equal(moved.y, data.y);
  // The same features again: the same copy; features already in a memory: kept.
  assert.equal(withKernelFeatures(data).x, moved.x);
  assert.equal(withKernelFeatures(moved).x, moved.x);
  // The caller refills x in place (one value, and a sign of zero): the objective must see the new rows.
  data.x[7] = 12.5;
  const refilled = withKernelFeatures(data);
  assert.notEqual(refilled.x, moved.x);
  assert.equal(refilled.x[7], 12.5);
  data.x[9] = 0;
  const zero = withKernelFeatures(data);
  data.x[9] = -0;
  assert.ok(Object.is(withKernelFeatures(data).x[9], -0));
  assert.notEqual(withKernelFeatures(data).x, zero.x);
  const theta = fillGaussian(seededRng(6), new Float64Array(d), 0.3);
  const g1 = new Float64Array(d);
  const g2 = new Float64Array(d);
  assert.ok(Object.is(glmObjective(loss, withKernelFeatures(data))(theta, g1), glmObjective(loss, data)(theta, g2)));
  assertSameBits(g1, g2, 'refilled');
  // Below the threshold: the data as given (the JavaScript kernels).
  const small = makeData(loss, 100, d, 7);
  assert.equal(withKernelFeatures(small), small);
});
