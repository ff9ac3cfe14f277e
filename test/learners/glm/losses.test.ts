import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidParameterError } from '../../../src/errors.js';
import {
  checkLabels,
  clippedGradientLoss,
  glmConstants,
  huberLoss,
  logisticLoss,
  mulUp,
  smoothedHingeLoss,
  squaredLoss,
  toSignedLabels,
} from '../../../src/learners/glm/index.js';
import type { GlmLoss } from '../../../src/learners/glm/index.js';
import { assertClose } from '../../helpers/assert-close.js';

const LOSSES: GlmLoss[] = [
  logisticLoss,
  squaredLoss,
  huberLoss(),
  huberLoss(0.3),
  smoothedHingeLoss(),
  smoothedHingeLoss(0.25),
  smoothedHingeLoss(3),
  // The clipped-gradient transformation (003 App. F.2) for fixed thresholds t = C / ||x||.
  clippedGradientLoss(logisticLoss, 0.3),
  clippedGradientLoss(squaredLoss, 1.5),
  clippedGradientLoss(huberLoss(2), 1),
  clippedGradientLoss(smoothedHingeLoss(0.5), 0.6),
];

const describe = (loss: GlmLoss): string => `${loss.name} ${JSON.stringify(loss.parameters)}`;

/** A margin and a label suited to the loss. */
function zy(loss: GlmLoss): fc.Arbitrary<[number, number]> {
  // fc.double is uniform over bit patterns (mostly tiny values): mix in margins uniform on [-30, 30].
  const z = fc.oneof(
    { arbitrary: fc.noBias(fc.integer({ min: -3_000_000, max: 3_000_000 })).map((k) => k / 1e5), weight: 3 },
    { arbitrary: fc.double({ min: -30, max: 30, noNaN: true }), weight: 1 },
  );
  const y = loss.labels === 'signed' ? fc.constantFrom(-1, 1) : fc.double({ min: -5, max: 5, noNaN: true });
  return fc.tuple(z, y);
}

test('GLM losses: f\' matches central differences of f (fast-check)', () => {
  for (const loss of LOSSES) {
    fc.assert(
      fc.property(zy(loss), ([z, y]) => {
        const h = 1e-6 * Math.max(1, Math.abs(z));
        const fd = (loss.value(z + h, y) - loss.value(z - h, y)) / (2 * h);
        // Truncation error <= h * (jump of f'') at a kink (<= 4e-6 here) plus rounding eps |f| / h.
        const tol = 1e-5 * Math.max(1, Math.abs(fd), Math.abs(loss.value(z, y)) * 1e-3);
        const d = loss.derivative(z, y);
        if (!(Math.abs(d - fd) <= tol)) throw new Error(`${describe(loss)}: f'(${z}; ${y}) = ${d}, finite difference ${fd}`);
      }),
      { seed: 11, numRuns: 400 },
    );
  }
});

test('GLM losses: f\'\' matches central differences of f\' away from kinks (fast-check)', () => {
  for (const loss of LOSSES) {
    let checked = 0;
    fc.assert(
      fc.property(zy(loss), ([z, y]) => {
        const h = 1e-6 * Math.max(1, Math.abs(z));
        // A kink (jump of f'') within 10 h makes the difference quotient meaningless: skip.
        if (Math.abs(loss.secondDerivative(z - 10 * h, y) - loss.secondDerivative(z + 10 * h, y)) > 1e-3) return;
        checked++;
        const fd = (loss.derivative(z + h, y) - loss.derivative(z - h, y)) / (2 * h);
        const d2 = loss.secondDerivative(z, y);
        if (!(Math.abs(d2 - fd) <= 1e-6 * Math.max(1, Math.abs(fd)))) throw new Error(`${describe(loss)}: f''(${z}; ${y}) = ${d2}, finite difference ${fd}`);
      }),
      { seed: 12, numRuns: 400 },
    );
    assert.ok(checked > 200, `${describe(loss)}: only ${checked} points away from kinks`);
  }
});

test('GLM losses: batch methods give the same numbers as the scalar ones', () => {
  for (const loss of LOSSES) {
    const z = Float64Array.from({ length: 101 }, (_, k) => (k - 50) * 0.37);
    const y = Float64Array.from(z, (_, k) => (loss.labels === 'signed' ? (k % 3 === 0 ? -1 : 1) : Math.sin(k) * 3));
    const v = new Float64Array(z.length);
    const d = new Float64Array(z.length);
    loss.values(z, y, v, z.length);
    loss.derivatives(z, y, d, z.length);
    for (let k = 0; k < z.length; k++) {
      assert.equal(v[k], loss.value(z[k], y[k]), describe(loss));
      assert.equal(d[k], loss.derivative(z[k], y[k]), describe(loss));
    }
  }
});

test('GLM losses: marginForDerivative inverts f\' where f\' is strictly increasing (fast-check)', () => {
  for (const loss of LOSSES) {
    fc.assert(
      fc.property(zy(loss), ([z, y]) => {
        if (!(loss.secondDerivative(z, y) > 1e-6)) return; // flat pieces of f' have no unique inverse
        const g = loss.derivative(z, y);
        // Where f' has rounded to the end of its range (e.g. the smoothed hinge at m = 1 - h + tiny), no inverse exists.
        if (Math.abs(g) === loss.derivativeBound()) return;
        const u = loss.marginForDerivative(g, y);
        if (!(Math.abs(u - z) <= 1e-7 * Math.max(1, Math.abs(z)))) throw new Error(`${describe(loss)}: z = ${z}, y = ${y}, inverse ${u}`);
      }),
      { seed: 13, numRuns: 300 },
    );
    // Outside the range of f' there is no margin.
    if (loss.derivativeBound() < Infinity) assert.ok(Number.isNaN(loss.marginForDerivative(loss.derivativeBound({ marginBound: 1, labelBound: 1 }) * 2 + 1, 1)), describe(loss));
  }
});

test('GLM losses: sup|f\'| and sup f\'\' on a grid agree with the declared bounds', () => {
  // Grid: z in [-60, 60] step 1e-3 (includes 0, where the logistic f'' peaks at exactly 1/4).
  const cases: [GlmLoss, number, number, boolean?][] = [
    // [loss, declared sup|f'|, declared sup f'', is the curvature bound attained (default true)]
    [logisticLoss, 1, 0.25],
    [huberLoss(0.3), 0.3, 1],
    [smoothedHingeLoss(0.25), 1, 4],
    [smoothedHingeLoss(3), 1, 1 / 3],
    // Clipping removes the curvature where |f'| > t, so 1/4 (at z = 0) is only an upper bound here.
    [clippedGradientLoss(logisticLoss, 0.3), 0.3, 0.25, false],
  ];
  for (const [loss, dBound, cBound, attained = true] of cases) {
    assert.equal(loss.derivativeBound(), dBound, describe(loss));
    assert.equal(loss.curvatureBound, cBound, describe(loss));
    let supD = 0;
    let supC = 0;
    const labels = loss.labels === 'signed' ? [-1, 1] : [-2, 0, 2];
    for (const y of labels) {
      for (let k = -60000; k <= 60000; k++) {
        const z = k * 1e-3;
        supD = Math.max(supD, Math.abs(loss.derivative(z, y)));
        supC = Math.max(supC, loss.secondDerivative(z, y));
      }
    }
    assert.ok(supD <= dBound && supD >= dBound * (1 - 1e-12), `${describe(loss)}: sup|f'| on grid ${supD}, declared ${dBound}`);
    assert.ok(supC <= cBound && (!attained || supC >= cBound * (1 - 1e-12)), `${describe(loss)}: sup f'' on grid ${supC}, declared ${cBound}`);
  }
  // Squared loss: f' = z - y is unbounded; on |z| <= M, |y| <= B the sup is M + B, attained.
  assert.equal(squaredLoss.derivativeBound(), Infinity);
  assert.equal(squaredLoss.derivativeBound({ marginBound: 3, labelBound: 2 }), 5);
  assert.equal(Math.abs(squaredLoss.derivative(3, -2)), 5);
});

test('glmConstants: L = sup|f\'| R and beta = sup f\'\' R^2 (003 Thm. 3.1/3.2)', () => {
  assert.deepEqual(glmConstants(logisticLoss, { rowNormBound: 1 }), { lipschitz: 1, smoothness: 0.25 });
  assert.deepEqual(glmConstants(logisticLoss, { rowNormBound: 2 }), { lipschitz: 2, smoothness: 1 });
  assert.deepEqual(glmConstants(huberLoss(0.5), { rowNormBound: 2 }), { lipschitz: 1, smoothness: 4 });
  assert.deepEqual(glmConstants(smoothedHingeLoss(0.5), { rowNormBound: 1 }), { lipschitz: 1, smoothness: 2 });
  // Squared loss: not Lipschitz without bounds; with |y| <= 2 and ||theta|| <= 3, L = R (R P + B).
  assert.deepEqual(glmConstants(squaredLoss, { rowNormBound: 1 }), { lipschitz: Infinity, smoothness: 1 });
  assert.deepEqual(glmConstants(squaredLoss, { rowNormBound: 1, labelBound: 2 }), { lipschitz: Infinity, smoothness: 1 });
  assert.deepEqual(glmConstants(squaredLoss, { rowNormBound: 1, labelBound: 2, parameterNormBound: 3 }), { lipschitz: 5, smoothness: 1 });
  assert.deepEqual(glmConstants(squaredLoss, { rowNormBound: 2, labelBound: 1, parameterNormBound: 0 }), { lipschitz: 2, smoothness: 4 });
  // Rounded up, never down: 0.1^2 / 4 is inexact in binary.
  const c = glmConstants(logisticLoss, { rowNormBound: 0.1 });
  assert.equal(c.lipschitz, 0.1);
  assert.ok(c.smoothness >= 0.0025 && c.smoothness <= 0.0025 * (1 + 4 * Number.EPSILON), `${c.smoothness}`);
  assert.ok(exactCompare(c.smoothness, 0.25, mulUp(0.1, 0.1)) >= 0);
  assert.throws(() => glmConstants(logisticLoss, { rowNormBound: 0 }), InvalidParameterError);
  assert.throws(() => glmConstants(logisticLoss, { rowNormBound: NaN }), InvalidParameterError);
  assert.throws(() => glmConstants(squaredLoss, { rowNormBound: 1, labelBound: -1 }), InvalidParameterError);
});

test('GLM constants bound every per-example gradient norm and Hessian eigenvalue (fast-check)', () => {
  const row = fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 3, maxLength: 3 });
  for (const [loss, R] of [[logisticLoss, 1], [huberLoss(0.4), 2], [smoothedHingeLoss(0.5), 0.7]] as [GlmLoss, number][]) {
    const { lipschitz, smoothness } = glmConstants(loss, { rowNormBound: R });
    fc.assert(
      fc.property(row, row, fc.constantFrom(-1, 1), (xs, ts, y) => {
        const norm = Math.hypot(...xs);
        if (norm < 1e-150) return;
        const x = xs.map((v) => (v / norm) * R); // ||x|| = R, the worst case
        const z = x.reduce((s, v, j) => s + v * ts[j] * 40, 0);
        const gradNorm = Math.abs(loss.derivative(z, y)) * Math.hypot(...x);
        const eig = loss.secondDerivative(z, y) * Math.hypot(...x) ** 2; // x x^T has eigenvalue ||x||^2
        if (!(gradNorm <= lipschitz * (1 + 1e-12))) throw new Error(`${loss.name}: ||grad|| = ${gradNorm} > L = ${lipschitz}`);
        if (!(eig <= smoothness * (1 + 1e-12))) throw new Error(`${loss.name}: eigenvalue ${eig} > beta = ${smoothness}`);
      }),
      { seed: 14, numRuns: 300 },
    );
  }
});

/** Exact sign of p - a * b for doubles a, b, p >= 0 (BigInt arithmetic on the binary expansions). */
function exactCompare(p: number, a: number, b: number): number {
  const parts = (v: number): [bigint, number] => {
    // v = m * 2^e with integer m.
    let e = 0;
    while (!Number.isInteger(v)) {
      v *= 2;
      e--;
    }
    return [BigInt(v), e];
  };
  const [mp, ep] = parts(p);
  const [ma, ea] = parts(a);
  const [mb, eb] = parts(b);
  const eab = ea + eb;
  const e = Math.min(ep, eab);
  const lhs = mp << BigInt(ep - e);
  const rhs = (ma * mb) << BigInt(eab - e);
  return lhs > rhs ? 1 : lhs < rhs ? -1 : 0;
}

test('mulUp: the product rounded towards +Infinity (exact BigInt check, fast-check)', () => {
  fc.assert(
    fc.property(fc.double({ min: 1e-100, max: 1e100, noNaN: true }), fc.double({ min: 1e-100, max: 1e100, noNaN: true }), (a, b) => {
      const p = mulUp(a, b);
      const cmp = exactCompare(p, a, b);
      if (cmp < 0) throw new Error(`mulUp(${a}, ${b}) = ${p} is below the exact product`);
      if (p !== a * b) {
        // Only when rounding to nearest went down, and then by one ulp.
        if (exactCompare(a * b, a, b) >= 0) throw new Error(`mulUp(${a}, ${b}) moved an upward-rounded product`);
        if (!(p > a * b && p - a * b <= Math.abs(a * b) * Number.EPSILON)) throw new Error(`mulUp(${a}, ${b}) = ${p} is more than one ulp up`);
      }
    }),
    { seed: 15, numRuns: 500 },
  );
  assert.equal(mulUp(0.5, 0.25), 0.125);
  assert.equal(mulUp(3, 7), 21);
  assert.equal(mulUp(Infinity, 2), Infinity);
  assert.equal(mulUp(0, 5), 0);
});

test('labels: {-1, +1} for the classification losses, any finite number for regression', () => {
  assert.deepEqual([...toSignedLabels(Float64Array.of(0, 1, -1, 1))], [-1, 1, -1, 1]);
  assert.throws(() => toSignedLabels(Float64Array.of(0, 2)), InvalidParameterError);
  assert.throws(() => toSignedLabels(Float64Array.of(NaN)), InvalidParameterError);
  checkLabels(logisticLoss, Float64Array.of(-1, 1));
  checkLabels(squaredLoss, Float64Array.of(-3.5, 1e10));
  assert.throws(() => checkLabels(logisticLoss, Float64Array.of(1, 0)), /y\[1\] must be -1 or \+1/);
  assert.throws(() => checkLabels(smoothedHingeLoss(), Float64Array.of(0.5)), InvalidParameterError);
  assert.throws(() => checkLabels(huberLoss(), Float64Array.of(Infinity)), InvalidParameterError);
  assert.throws(() => huberLoss(0), InvalidParameterError);
  assert.throws(() => smoothedHingeLoss(-1), InvalidParameterError);
  assert.throws(() => clippedGradientLoss(logisticLoss, 0), InvalidParameterError);
});

test('logistic loss: stable far in the tails, symmetric in the label', () => {
  assertClose(logisticLoss.value(0, 1), Math.LN2, 1e-15);
  assertClose(logisticLoss.value(-800, 1), 800, 1e-15); // log(1 + e^800) = 800 + log1p(e^-800)
  assertClose(logisticLoss.value(800, 1), 0, 0, 1e-300);
  assert.equal(logisticLoss.derivative(-800, 1), -1);
  assert.equal(logisticLoss.derivative(0, -1), 0.5);
  assert.equal(logisticLoss.secondDerivative(0, 1), 0.25);
  // sigma(40) sigma(-40) = e^-40 / (1 + e^-40)^2 without cancellation.
  assertClose(logisticLoss.secondDerivative(40, 1), Math.exp(-40), 1e-14);
  for (const z of [-3, 0.5, 7]) assertClose(logisticLoss.value(z, -1), logisticLoss.value(-z, 1), 1e-15);
});

test('clipped-gradient loss (003 App. F.2): |f_C\'| <= t, f_C = f where |f\'| <= t, continuous and convex', () => {
  for (const [loss, t, y] of [[logisticLoss, 0.3, 1], [logisticLoss, 0.3, -1], [squaredLoss, 1.5, 0.7], [huberLoss(2), 1, -1], [smoothedHingeLoss(0.5), 0.6, 1]] as [GlmLoss, number, number][]) {
    const c = clippedGradientLoss(loss, t);
    let prevD = -Infinity;
    let prevV = c.value(-40, y);
    for (let k = -40000; k <= 40000; k++) {
      const z = k * 1e-3;
      const d = c.derivative(z, y);
      const v = c.value(z, y);
      assert.ok(Math.abs(d) <= t, `|f_C'| = ${Math.abs(d)} > t`);
      assert.ok(d >= prevD, `f_C' decreases at z = ${z}: not convex`);
      if (Math.abs(loss.derivative(z, y)) <= t) assert.equal(v, loss.value(z, y));
      // Continuity: |f_C(z) - f_C(z - dz)| <= t dz (+ rounding).
      if (k > -40000) assert.ok(Math.abs(v - prevV) <= t * 1e-3 * (1 + 1e-6) + 1e-12, `jump at z = ${z}: ${prevV} -> ${v}`);
      prevD = d;
      prevV = v;
    }
  }
  // With t >= sup|f'| nothing changes.
  const same = clippedGradientLoss(logisticLoss, 1);
  for (const z of [-50, -1, 0, 2, 30]) {
    assert.equal(same.value(z, 1), logisticLoss.value(z, 1));
    assert.equal(same.derivative(z, 1), logisticLoss.derivative(z, 1));
  }
});
