import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, NumericalError } from '../../src/errors.js';
import { lbfgs } from '../../src/math/lbfgs.js';
import { newton } from '../../src/math/newton.js';
import { solveSpd } from '../../src/math/linear-algebra.js';
import { assertClose } from '../helpers/assert-close.js';
import type { Objective } from '../../src/math/lbfgs.js';

// ---- Test problems with known minima, and an independent dense solver for closed forms. ----
import { fillGaussian, seededRng } from '../../src/random/index.js';

/** Solves A x = b (A row-major n x n) by Gauss-Jordan elimination with partial pivoting. */
function gaussSolve(a: Float64Array, n: number, b: Float64Array): Float64Array {
  const m = Array.from({ length: n }, (_, i) => [...a.subarray(i * n, (i + 1) * n), b[i]]);
  for (let col = 0; col < n; col++) {
    let piv = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r][col]) > Math.abs(m[piv][col])) piv = r;
    [m[col], m[piv]] = [m[piv], m[col]];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const factor = m[r][col] / m[col][col];
      for (let k = col; k <= n; k++) m[r][k] -= factor * m[col][k];
    }
  }
  return Float64Array.from(m, (row, i) => row[n] / row[i]);
}

/** f(x) = 1/2 x^T A x - b^T x with gradient A x - b and minimiser A^{-1} b. */
function quadratic(a: Float64Array, b: Float64Array): Objective {
  const n = b.length;
  return (x, g) => {
    let v = 0;
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += a[i * n + j] * x[j];
      g[i] = s - b[i];
      v += 0.5 * x[i] * s - b[i] * x[i];
    }
    return v;
  };
}

/** Chained Rosenbrock sum_i 100 (x_{i+1} - x_i^2)^2 + (1 - x_i)^2, minimum 0 at (1, ..., 1). */
const rosenbrock: Objective = (x, g) => {
  const n = x.length;
  g.fill(0);
  let v = 0;
  for (let i = 0; i + 1 < n; i++) {
    const a = x[i + 1] - x[i] * x[i];
    const b = 1 - x[i];
    v += 100 * a * a + b * b;
    g[i] += -400 * a * x[i] - 2 * b;
    g[i + 1] += 200 * a;
  }
  return v;
};

/** Hessian of the chained Rosenbrock function (row-major, full). */
function rosenbrockHessian(x: Float64Array, h: Float64Array): void {
  const n = x.length;
  h.fill(0);
  for (let i = 0; i + 1 < n; i++) {
    h[i * n + i] += 1200 * x[i] * x[i] - 400 * x[i + 1] + 2;
    h[(i + 1) * n + i + 1] += 200;
    h[i * n + i + 1] += -400 * x[i];
    h[(i + 1) * n + i] += -400 * x[i];
  }
}

/** A Gaussian design matrix and labels, reproducible from the seed. */
function gaussianData(n: number, d: number, seed: number): { x: Float64Array; y: Float64Array; n: number; d: number } {
  const rng = seededRng(seed);
  const x = fillGaussian(rng, new Float64Array(n * d));
  const noise = fillGaussian(rng, new Float64Array(n));
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) s += x[i * d + j] * (j + 1) / d;
    y[i] = s + 0.5 * noise[i];
  }
  return { x, y, n, d };
}

/** X^T X + lambda I and X^T y. */
function normalEquations(data: { x: Float64Array; y: Float64Array; n: number; d: number }, lambda: number): { a: Float64Array; b: Float64Array } {
  const { x, y, n, d } = data;
  const a = new Float64Array(d * d);
  const b = new Float64Array(d);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) {
      b[j] += x[i * d + j] * y[i];
      for (let k = 0; k < d; k++) a[j * d + k] += x[i * d + j] * x[i * d + k];
    }
  }
  for (let j = 0; j < d; j++) a[j * d + j] += lambda;
  return { a, b };
}

/** sum_i log(1 + exp(-y_i x_i . theta)) + lambda/2 ||theta||^2 for labels +-1, written independently of src/learners. */
function logisticObjective(data: { x: Float64Array; y: Float64Array; n: number; d: number }, lambda: number): {
  f: Objective;
  hessian: (theta: Float64Array, h: Float64Array) => void;
} {
  const { x, y, n, d } = data;
  const margin = (theta: Float64Array, i: number): number => {
    let z = 0;
    for (let j = 0; j < d; j++) z += x[i * d + j] * theta[j];
    return z;
  };
  const f: Objective = (theta, g) => {
    let v = 0;
    for (let j = 0; j < d; j++) {
      g[j] = lambda * theta[j];
      v += 0.5 * lambda * theta[j] * theta[j];
    }
    for (let i = 0; i < n; i++) {
      const m = y[i] * margin(theta, i);
      v += m > 0 ? Math.log1p(Math.exp(-m)) : -m + Math.log1p(Math.exp(m));
      const c = -y[i] / (1 + Math.exp(m));
      for (let j = 0; j < d; j++) g[j] += c * x[i * d + j];
    }
    return v;
  };
  const hessian = (theta: Float64Array, h: Float64Array): void => {
    h.fill(0);
    for (let j = 0; j < d; j++) h[j * d + j] = lambda;
    for (let i = 0; i < n; i++) {
      const p = 1 / (1 + Math.exp(-margin(theta, i)));
      const w = p * (1 - p);
      for (let j = 0; j < d; j++) for (let k = 0; k < d; k++) h[j * d + k] += w * x[i * d + j] * x[i * d + k];
    }
  };
  return { f, hessian };
}

/** Labels +-1 from a noisy linear rule, for logistic problems. */
function signLabels(data: { x: Float64Array; y: Float64Array; n: number; d: number }, seed: number): Float64Array {
  const rng = seededRng(seed);
  return Float64Array.from(data.y, (v) => (v + rng.nextDouble() - 0.5 > 0 ? 1 : -1));
}

function maxAbsDiff(a: Float64Array, b: Float64Array): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** A well-conditioned random SPD matrix M^T M + I (n x n). */
function randomSpd(n: number, seed: number): Float64Array {
  const m = fillGaussian(seededRng(seed), new Float64Array(n * n));
  const a = new Float64Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    let s = i === j ? 1 : 0;
    for (let k = 0; k < n; k++) s += m[k * n + i] * m[k * n + j];
    a[i * n + j] = s;
  }
  return a;
}

// ---- L-BFGS ----

test('lbfgs: quadratic minimum equals the closed form A^{-1} b', () => {
  const n = 12;
  const a = randomSpd(n, 1);
  const b = fillGaussian(seededRng(2), new Float64Array(n));
  const expected = gaussSolve(a, n, b);
  const r = lbfgs(quadratic(a, b), new Float64Array(n), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true);
  assert.equal(r.reason, 'gradTolerance');
  assert.ok(r.gradNorm <= 1e-10);
  // ||x - x*|| <= ||grad|| / lambda_min(A) and lambda_min >= 1 here.
  assert.ok(maxAbsDiff(r.x, expected) <= 1e-10, `error ${maxAbsDiff(r.x, expected)}`);
  // Minimum value -b^T A^{-1} b / 2.
  let v = 0;
  for (let i = 0; i < n; i++) v -= 0.5 * b[i] * expected[i];
  assertClose(r.value, v, 1e-12);
  assert.ok(r.evaluations >= r.iterations + 1);
  // With exact Wolfe tests (valueNoise 0) the same run stalls near ||g|| ~ 1e-8, where the
  // decrease ||g||^2 / curvature falls below eps |f|: the reason the approximate tests exist.
  const exact = lbfgs(quadratic(a, b), new Float64Array(n), { gradTolerance: 1e-10, valueNoise: 0 });
  assert.equal(exact.converged, false);
  assert.equal(exact.reason, 'lineSearchFailed');
});

test('lbfgs: a large constant in f does not stop the search short (approximate Wolfe)', () => {
  // f = 1e8 + quadratic: at ||g|| ~ 1e-6 the decrease per step (~1e-12) is below eps * |f| ~ 1e-8,
  // so only the slope-based tests of the line search can certify progress.
  const n = 12;
  const a = randomSpd(n, 1);
  const b = fillGaussian(seededRng(2), new Float64Array(n));
  const q = quadratic(a, b);
  const r = lbfgs((x, g) => 1e8 + q(x, g), new Float64Array(n), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true, r.reason);
  assert.ok(maxAbsDiff(r.x, gaussSolve(a, n, b)) <= 1e-10);
  const viaNewton = newton((x, g) => 1e8 + q(x, g), (_x, h) => h.set(a), new Float64Array(n), { gradTolerance: 1e-11 });
  assert.equal(viaNewton.converged, true, viaNewton.reason);
});

test('lbfgs: Rosenbrock in 2 dimensions from (-1.2, 1) reaches (1, 1)', () => {
  const r = lbfgs(rosenbrock, Float64Array.of(-1.2, 1), { gradTolerance: 1e-9 });
  assert.equal(r.converged, true, JSON.stringify({ ...r, x: [...r.x] }));
  assert.ok(maxAbsDiff(r.x, Float64Array.of(1, 1)) < 1e-8, `x = ${r.x}`);
  assert.ok(r.value < 1e-18);
  assert.ok(r.iterations < 100, `iterations ${r.iterations}`);
});

test('lbfgs: Rosenbrock in 10 dimensions reaches (1, ..., 1)', () => {
  const x0 = Float64Array.from({ length: 10 }, (_, i) => (i % 2 === 0 ? -1.2 : 1));
  const r = lbfgs(rosenbrock, x0, { gradTolerance: 1e-9 });
  assert.equal(r.converged, true, JSON.stringify({ ...r, x: [...r.x] }));
  assert.ok(maxAbsDiff(r.x, new Float64Array(10).fill(1)) < 1e-8, `x = ${r.x}`);
  assert.deepEqual([...x0.subarray(0, 2)], [-1.2, 1], 'x0 is not modified');
});

test('lbfgs: ridge regression equals (X^T X + lambda I)^{-1} X^T y', () => {
  const data = gaussianData(300, 8, 11);
  const lambda = 2.5;
  const { a, b } = normalEquations(data, lambda);
  const expected = gaussSolve(a, data.d, b);
  // f = 1/2 ||X theta - y||^2 + lambda/2 ||theta||^2 = 1/2 theta^T A theta - b^T theta + const.
  const r = lbfgs(quadratic(a, b), new Float64Array(data.d), { gradTolerance: 1e-9 });
  assert.equal(r.converged, true);
  assert.ok(maxAbsDiff(r.x, expected) <= 1e-9 / lambda, `error ${maxAbsDiff(r.x, expected)}`);
});

test('lbfgs: maxIterations reached reports converged: false', () => {
  const r = lbfgs(rosenbrock, Float64Array.of(-1.2, 1), { gradTolerance: 1e-9, maxIterations: 5 });
  assert.equal(r.converged, false);
  assert.equal(r.reason, 'maxIterations');
  assert.equal(r.iterations, 5);
  assert.ok(r.gradNorm > 1e-9);
  const zero = lbfgs(rosenbrock, Float64Array.of(-1.2, 1), { maxIterations: 0 });
  assert.equal(zero.converged, false);
  assert.equal(zero.evaluations, 1);
  const evals = lbfgs(rosenbrock, Float64Array.of(-1.2, 1), { gradTolerance: 1e-9, maxEvaluations: 7 });
  assert.equal(evals.converged, false);
  assert.equal(evals.reason, 'maxEvaluations');
  assert.ok(evals.evaluations <= 7);
});

test('lbfgs: a start that already satisfies the tolerance takes no step', () => {
  const r = lbfgs(rosenbrock, Float64Array.of(1, 1));
  assert.equal(r.converged, true);
  assert.equal(r.iterations, 0);
  assert.equal(r.evaluations, 1);
  assert.equal(r.gradNorm, 0);
});

test('lbfgs: steps into a region where f is not finite are shrunk', () => {
  // f(x) = sum x_i - log x_i (minimum at 1, value n), Infinity/NaN for x_i <= 0; from 0.01 the
  // first trial steps overshoot into x < 0.
  const f = (x: Float64Array, g: Float64Array): number => {
    let v = 0;
    for (let i = 0; i < x.length; i++) {
      v += x[i] - Math.log(x[i]);
      g[i] = 1 - 1 / x[i];
    }
    return v;
  };
  const r = lbfgs(f, Float64Array.of(0.01, 5, 0.2), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true);
  assert.ok(maxAbsDiff(r.x, Float64Array.of(1, 1, 1)) < 1e-9, `x = ${r.x}`);
  assertClose(r.value, 3, 1e-14);
});

test('lbfgs: an objective unbounded below stops without claiming convergence', () => {
  const r = lbfgs((x, g) => { g[0] = -1; return -x[0]; }, Float64Array.of(0), { maxIterations: 50 });
  assert.equal(r.converged, false);
  assert.notEqual(r.reason, 'gradTolerance');
});

test('lbfgs: a tolerance below what rounding allows ends without claiming convergence', () => {
  // Near x = 1e8 the spacing of doubles is 1.5e-8, so the gradient 2 (x - 1e8) cannot reach 0
  // unless x hits 1e8 exactly; the run must then stop with a failure reason, not 'gradTolerance'.
  const r = lbfgs((x, g) => { g[0] = 2 * (x[0] - 1e8); return (x[0] - 1e8) ** 2; }, Float64Array.of(0), { gradTolerance: 0, maxIterations: 200 });
  if (r.converged) assert.equal(r.gradNorm, 0);
  else assert.ok(['lineSearchFailed', 'maxIterations', 'maxEvaluations'].includes(r.reason), r.reason);
});

test('lbfgs: progress callback and options validation', () => {
  const seen: number[] = [];
  const r = lbfgs(rosenbrock, Float64Array.of(-1.2, 1), { onIteration: (p) => seen.push(p.iteration) });
  assert.equal(seen.length, r.iterations + 1);
  assert.deepEqual(seen.slice(0, 3), [0, 1, 2]);
  assert.throws(() => lbfgs(rosenbrock, Float64Array.of(0, 0), { memory: 0 }), InvalidParameterError);
  assert.throws(() => lbfgs(rosenbrock, Float64Array.of(0, 0), { c1: 0.9, c2: 0.5 }), InvalidParameterError);
  assert.throws(() => lbfgs(rosenbrock, Float64Array.of(0, 0), { gradTolerance: -1 }), InvalidParameterError);
  assert.throws(() => lbfgs(rosenbrock, Float64Array.of(0, 0), { maxIterations: 1.5 }), InvalidParameterError);
  assert.throws(() => lbfgs(rosenbrock, Float64Array.of(NaN, 0)), InvalidParameterError);
  assert.throws(() => lbfgs(rosenbrock, new Float64Array(0)), InvalidParameterError);
  assert.throws(() => lbfgs((x, g) => { g[0] = 0; return NaN; }, Float64Array.of(0)), NumericalError);
});

// ---- Newton ----

test('newton: a quadratic is solved in one step', () => {
  const n = 6;
  const a = randomSpd(n, 3);
  const b = fillGaussian(seededRng(4), new Float64Array(n));
  const r = newton(quadratic(a, b), (_x, h) => h.set(a), new Float64Array(n), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true);
  assert.equal(r.iterations, 1);
  assert.ok(maxAbsDiff(r.x, gaussSolve(a, n, b)) < 1e-12);
});

test('newton: Rosenbrock in 2 and 10 dimensions, including starts where the Hessian is indefinite', () => {
  // At (0, 1) the Hessian is diag(-398, 200): the damping fallback must produce a descent step.
  // The chained Rosenbrock function has a second local minimum near (-0.99, 1, ..., 1) for
  // 4 <= n <= 30 (Kok & Sandrock 2009); Newton from (-1.2, 1, -1.2, ...) lands there, so the
  // 10-dimensional run starts from 0 (L-BFGS above reaches (1, ..., 1) from the classic start).
  for (const x0 of [Float64Array.of(-1.2, 1), Float64Array.of(0, 1), new Float64Array(10)]) {
    const r = newton(rosenbrock, rosenbrockHessian, x0, { gradTolerance: 1e-10 });
    assert.equal(r.converged, true, `${x0}: ${r.reason}`);
    assert.ok(maxAbsDiff(r.x, new Float64Array(x0.length).fill(1)) < 1e-9, `x = ${r.x}`);
  }
});

test('newton: ridge regression equals the closed form', () => {
  const data = gaussianData(200, 5, 21);
  const lambda = 0.7;
  const { a, b } = normalEquations(data, lambda);
  const r = newton(quadratic(a, b), (_x, h) => h.set(a), new Float64Array(data.d), { gradTolerance: 1e-10 });
  assert.equal(r.converged, true);
  assert.ok(maxAbsDiff(r.x, gaussSolve(a, data.d, b)) < 1e-12);
  assert.ok(maxAbsDiff(r.x, solveSpd(a, data.d, b)) < 1e-12);
});

test('L2-regularised logistic regression: L-BFGS and Newton agree to 1e-8', () => {
  const data = gaussianData(400, 6, 31);
  data.y = signLabels(data, 32);
  const lambda = 1;
  const { f, hessian } = logisticObjective(data, lambda);
  const viaLbfgs = lbfgs(f, new Float64Array(data.d), { gradTolerance: 1e-9 });
  const viaNewton = newton(f, hessian, new Float64Array(data.d), { gradTolerance: 1e-11 });
  assert.equal(viaLbfgs.converged, true);
  assert.equal(viaNewton.converged, true);
  // lambda-strong convexity: ||theta - theta*|| <= ||grad|| / lambda <= 1e-9.
  assert.ok(maxAbsDiff(viaLbfgs.x, viaNewton.x) < 1e-8, `diff ${maxAbsDiff(viaLbfgs.x, viaNewton.x)}`);
  assertClose(viaLbfgs.value, viaNewton.value, 1e-14);
  assert.ok(viaNewton.iterations < 15, `Newton iterations ${viaNewton.iterations}`);
});

test('newton: maxIterations reached reports converged: false; options validation', () => {
  const r = newton(rosenbrock, rosenbrockHessian, Float64Array.of(-1.2, 1), { maxIterations: 3 });
  assert.equal(r.converged, false);
  assert.equal(r.reason, 'maxIterations');
  assert.equal(r.iterations, 3);
  assert.throws(() => newton(rosenbrock, rosenbrockHessian, Float64Array.of(0, 0), { c1: 0.7 }), InvalidParameterError);
  assert.throws(() => newton(rosenbrock, rosenbrockHessian, Float64Array.of(0, 0), { backtrack: 1 }), InvalidParameterError);
});

test('newton: backtracking shrinks past non-finite values and non-finite Hessians fall back to the gradient', () => {
  const f = (x: Float64Array, g: Float64Array): number => {
    g[0] = 1 - 1 / x[0];
    return x[0] - Math.log(x[0]);
  };
  // At x = 5 the Newton step (H = 1/x^2) jumps to 5 - 4 * 25 < 0: backtracking must recover.
  const r = newton(f, (x, h) => { h[0] = 1 / (x[0] * x[0]); }, Float64Array.of(5), { gradTolerance: 1e-12 });
  assert.equal(r.converged, true);
  assertClose(r.x[0], 1, 1e-12);
  const s = newton(f, (_x, h) => { h[0] = NaN; }, Float64Array.of(5), { gradTolerance: 1e-6, maxIterations: 500 });
  assert.equal(s.converged, true);
  assertClose(s.x[0], 1, 1e-5);
});
