import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { syntheticDataset } from '../../../src/data/synthetic.js';
import { CalibrationError, InvalidParameterError } from '../../../src/errors.js';
import { gaussianFeatureRho, paperDeltaPlus, proposeTestRelease, ptrStatistic } from '../../../src/learners/rgm/propose-test-release.js';
import { rgmRidgeSensitivity, trainRgmGd, type RgmGdPrivacyReport } from '../../../src/learners/rgm/rgm-gd.js';
import { solveSpd } from '../../../src/math/linear-algebra.js';
import { fillGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';

/** (1/n) X^T X + mu I for row-major X. */
function gramOf(x: Float64Array, n: number, d: number, mu: number): Float64Array {
  const g = new Float64Array(d * d);
  for (let i = 0; i < n; i++) for (let r = 0; r < d; r++) for (let c = 0; c < d; c++) g[r * d + c] += (x[i * d + r] * x[i * d + c]) / n;
  for (let r = 0; r < d; r++) g[r * d + r] += mu;
  return g;
}

const I2 = Float64Array.of(1, 0, 0, 1);

test("000 Prop. 3's rho (eq. 12) against scipy: rho-bar = F_{d+2}(R^2) + R^2/d (1 - F_d(R^2)), rho = rho-bar / 2", () => {
  // scipy.stats.chi2: d=1, R^2=1 -> 0.25802927548085663; d=5, R^2=15 -> 0.4975438044919653; d=3, R^2=2 -> 0.2662297167813218.
  for (const [d, r2, expected] of [
    [1, 1, 0.25802927548085663],
    [5, 15, 0.4975438044919653],
    [3, 2, 0.2662297167813218],
  ]) {
    const rho = gaussianFeatureRho(d, Math.sqrt(r2));
    assert.ok(Math.abs(rho - expected) < 1e-9 * expected, `d=${d}: ${rho} vs ${expected}`);
  }
});

test("eta and R_rel by hand (000 eq. 10-11, Prop. 1 with kappa_C): n=4, R_c=2, rho=1/2, B=3, kappa=4", () => {
  // s = sqrt(4) * 2^2 / 0.5 = 16; eta = sqrt(6) * 16 / 4 = 4 sqrt(6); R_rel = 2 sqrt(3) (16 * 3 + 3) / 4 = 25.5 sqrt(3).
  const sens = rgmRidgeSensitivity({ n: 4, featureClip: 2, rho: 0.5, bClip: 3, conditionNumber: 4 });
  assert.ok(Math.abs(sens.eta / (4 * Math.sqrt(6)) - 1) < 1e-14 && sens.eta >= 4 * Math.sqrt(6));
  assert.ok(Math.abs(sens.rRel / (25.5 * Math.sqrt(3)) - 1) < 1e-14 && sens.rRel >= 25.5 * Math.sqrt(3));
  // kappa = 1 recovers 000 Prop. 1's eta^2 = 6 R_c^4 / (rho^2 n^2) = 6 * 16 / (0.25 * 16) = 24.
  assert.ok(Math.abs(rgmRidgeSensitivity({ n: 4, featureClip: 2, rho: 0.5, bClip: 3 }).eta ** 2 - 24) < 1e-12);
  // A tested bound |b| <= 1 replaces B in the s|b| term: 2 sqrt(3) (16 + 3) / 4.
  assert.ok(Math.abs(rgmRidgeSensitivity({ n: 4, featureClip: 2, rho: 0.5, bClip: 3, conditionNumber: 4, bNormBound: 1 }).rRel - (2 * Math.sqrt(3) * 19) / 4) < 1e-12);
});

test('the relative sensitivity bound holds on random neighbouring pairs with A >= rho C; without kappa_C (000 Prop. 1 as stated) it fails', () => {
  // Tiny datasets (n = 3, d = 2), C = R diag(1, c) R^T, rows clipped to x^T C^-1 x <= 1, y in [-1, 1].
  // The learner's bound: |grad f - grad f'|^2 <= eta^2 |grad f|^2 + R_rel^2 whenever A, A' >= rho C.
  // The paper's eta (kappa = 1) violates even its key step ||x x^T A^-1||^2 <= R_c^4 / rho^2.
  const rng = seededRng(11);
  const z = new Float64Array(8);
  let worstRatio = 0;
  let paperViolation = 0;
  for (let trial = 0; trial < 3000; trial++) {
    fillGaussian(rng, z, 1);
    const angle = z[0];
    const c2 = Math.exp(-4 * rng.nextDouble());
    const [co, si] = [Math.cos(angle), Math.sin(angle)];
    const C = Float64Array.of(co * co + c2 * si * si, co * si * (1 - c2), co * si * (1 - c2), si * si + c2 * co * co);
    const kappa = 1 / c2;
    const n = 3;
    const rows: number[][] = [];
    for (let i = 0; i < n + 1; i++) {
      fillGaussian(rng, z, 1);
      const x = [z[0], z[1]];
      const cinvx = solveSpd(C, 2, Float64Array.from(x));
      const q = Math.sqrt(x[0] * cinvx[0] + x[1] * cinvx[1]);
      const f = q > 1 ? 1 / q : 1;
      rows.push([x[0] * f, x[1] * f, 2 * rng.nextDouble() - 1]);
    }
    const mu = 0.05;
    const a = (set: number[][]) => gramOf(Float64Array.from(set.flatMap((r) => [r[0], r[1]])), n, 2, mu);
    const bOf = (set: number[][]) => Float64Array.of(set.reduce((s, r) => s + r[0] * r[2], 0) / n, set.reduce((s, r) => s + r[1] * r[2], 0) / n);
    const X = rows.slice(0, n);
    const Xp = [rows[n], ...rows.slice(1, n)];
    const A = a(X);
    const Ap = a(Xp);
    // rho: the largest t with A - t C >= 0 and A' - t C >= 0, times 0.9 (so both datasets are "safe").
    const gen = (M: Float64Array) => {
      let lo = 0;
      let hi = 100;
      for (let k = 0; k < 80; k++) {
        const t = (lo + hi) / 2;
        const S = Float64Array.from(M, (v, idx) => v - t * C[idx]);
        const det = S[0] * S[3] - S[1] * S[2];
        if (S[0] > 0 && det > 0) lo = t;
        else hi = t;
      }
      return lo;
    };
    const rho = 0.9 * Math.min(gen(A), gen(Ap));
    const B = Math.max(...rows.map((r) => Math.hypot(r[0], r[1]) * Math.abs(r[2])));
    const sens = rgmRidgeSensitivity({ n, featureClip: 1, rho, bClip: B, conditionNumber: kappa * (1 + 1e-9) });
    const b = bOf(X);
    const bp = bOf(Xp);
    fillGaussian(rng, z, 3);
    const theta = [z[0], z[1]];
    const grad = (M: Float64Array, v: Float64Array) => [M[0] * theta[0] + M[1] * theta[1] - v[0], M[2] * theta[0] + M[3] * theta[1] - v[1]];
    const g = grad(A, b);
    const gp = grad(Ap, bp);
    const lhs = (g[0] - gp[0]) ** 2 + (g[1] - gp[1]) ** 2;
    const rhs = sens.eta ** 2 * (g[0] ** 2 + g[1] ** 2) + sens.rRel ** 2;
    worstRatio = Math.max(worstRatio, lhs / rhs);
    // The paper's step: ||x0 x0^T A^-1||^2 = |x0|^2 |A^-1 x0|^2 <= R_c^4 / rho^2 (R_c = 1).
    const ainvx = solveSpd(A, 2, Float64Array.of(X[0][0], X[0][1]));
    const value = (X[0][0] ** 2 + X[0][1] ** 2) * (ainvx[0] ** 2 + ainvx[1] ** 2) * rho * rho;
    paperViolation = Math.max(paperViolation, value);
  }
  assert.ok(worstRatio <= 1, `the learner's (eta, R_rel) bound is violated: ratio ${worstRatio}`);
  assert.ok(paperViolation > 1.5, `expected the kappa-free bound to fail somewhere, max ratio ${paperViolation}`);
});

test("PTR statistic: the paper's Delta_+ is not 1-Lipschitz (n = 100 -> 2 after one replacement), the learner's statistic is", () => {
  // 000 Prop. 2 with C = I, mu = 0.1, rho = mu - 1e-6: X = 100 rows (1, 0); X' replaces one row by (0, 1).
  const n = 100;
  const mu = 0.1;
  const rho = mu - 1e-6;
  const x = new Float64Array(2 * n);
  for (let i = 0; i < n; i++) x[2 * i] = 1;
  const xp = Float64Array.from(x);
  xp[0] = 0;
  xp[1] = 1;
  const g = gramOf(x, n, 2, mu);
  const gp = gramOf(xp, n, 2, mu);
  assert.equal(paperDeltaPlus(x, g, I2, 2, n, rho), n);
  assert.equal(paperDeltaPlus(xp, gp, I2, 2, n, rho), 2);
  const stat = ptrStatistic({ gram: g, clipMatrix: I2, d: 2, n, rho, regularization: mu, featureClip: 1 });
  const s = stat.value;
  const sp = ptrStatistic({ gram: gp, clipMatrix: I2, d: 2, n, rho, regularization: mu, featureClip: 1 }).value;
  // By hand: m(X) = 0.1 - rho = 1e-6, g = 100 * 1e-6 - 1; m(X') = 0.11 - rho (lambda_min of diag(1.09, 0.11)).
  assert.ok(Math.abs(s - (n * 1e-6 - 1)) < 1e-9, `${s}`);
  assert.ok(Math.abs(sp - (n * (0.01 + 1e-6) - 1)) < 1e-9, `${sp}`);
  // m(X') - m(X) = R_c^2 / n exactly: a change of exactly 1, which rounding turns into 1 + ~3e-15,
  // within the public sensitivity bound that scales the Laplace noise.
  assert.ok(Math.abs(s - sp) <= stat.sensitivity, `${Math.abs(s - sp)} > ${stat.sensitivity}`);
  assert.ok(stat.sensitivity < 1 + 1e-10);
});

test('PTR statistic is 1-Lipschitz on random neighbouring pairs (Weyl), including the optional b-norm part', () => {
  const rng = seededRng(5);
  const d = 3;
  const n = 20;
  const C = Float64Array.of(2, 0.5, 0, 0.5, 1, 0.2, 0, 0.2, 0.5);
  const rc = 1.5;
  const bClip = 2;
  const rows = new Float64Array((n + 1) * d);
  const ys = new Float64Array(n + 1);
  let worst = 0;
  let slack = 1;
  for (let trial = 0; trial < 300; trial++) {
    fillGaussian(rng, rows, 1 + 3 * rng.nextDouble());
    fillGaussian(rng, ys, 2);
    for (let i = 0; i <= n; i++) {
      const xi = rows.subarray(i * d, (i + 1) * d);
      const cinv = solveSpd(C, d, Float64Array.from(xi));
      const q = Math.sqrt(xi[0] * cinv[0] + xi[1] * cinv[1] + xi[2] * cinv[2]);
      if (q > rc) for (let k = 0; k < d; k++) xi[k] *= rc / q;
      const p = Math.hypot(...xi) * Math.abs(ys[i]);
      if (p > bClip) ys[i] *= bClip / p;
    }
    const stat = (x: Float64Array, y: Float64Array) => {
      const b = new Float64Array(d);
      for (let i = 0; i < n; i++) for (let k = 0; k < d; k++) b[k] += (x[i * d + k] * y[i]) / n;
      const st = ptrStatistic({ gram: gramOf(x, n, d, 0.01), clipMatrix: C, d, n, rho: 0.05, regularization: 0.01, featureClip: rc, bNorm: { value: Math.hypot(...b), bound: 0.5, bClip } });
      slack = st.sensitivity;
      return st.value;
    };
    const x = rows.slice(0, n * d);
    const y = ys.slice(0, n);
    const xp = Float64Array.from(x);
    xp.set(rows.subarray(n * d), 0);
    const yp = Float64Array.from(y);
    yp[0] = ys[n];
    worst = Math.max(worst, Math.abs(stat(x, y) - stat(xp, yp)));
  }
  assert.ok(worst <= slack, `sensitivity ${worst} > ${slack}`);
  assert.ok(worst > 0.2, `the check must exercise real changes (max change ${worst})`);
});

test('PTR test: on an unsafe dataset (statistic 0) it passes with probability <= delta/2 = e^-(eps t)/2 (binomial, significance 1e-6)', () => {
  // epsilon = 1, delta = 0.05: threshold log(20); P[Lap(1) > log 20] = 0.025 exactly.
  const rng = seededRng(9);
  const trials = 20000;
  let passes = 0;
  for (let i = 0; i < trials; i++) if (proposeTestRelease(0, { epsilon: 1, delta: 0.05, rng }).passed) passes++;
  const p = 0.025;
  const sd = Math.sqrt(trials * p * (1 - p));
  assert.ok(Math.abs(passes - trials * p) < 5.3 * sd, `${passes} passes of ${trials}`); // two-sided 1e-7
  assert.equal(proposeTestRelease(0, { epsilon: 1, delta: 0.05, rng }).threshold, Math.log(20));
});

test('PTR rejects on a nearly singular A (all rows on one axis): no model; the headline is still the whole mechanism\'s guarantee', () => {
  const n = 5000;
  const x = new Float64Array(2 * n);
  const y = new Float64Array(n);
  const rng = seededRng(3);
  for (let i = 0; i < n; i++) {
    x[2 * i] = rng.nextDouble() < 0.5 ? 1 : -1;
    x[2 * i + 1] = 1e-4 * (rng.nextDouble() - 0.5);
    y[i] = x[2 * i];
  }
  for (const seed of [1, 2, 3]) {
    const result = trainRgmGd({ x, y, n, d: 2 }, { epsilon: 2, delta: 1e-6, steps: 20, regularization: 1e-6, featureClip: 2, bClip: 2, rng: seededRng(seed) });
    assert.equal(result.model, undefined);
    assert.match(result.diagnostics.message, /rejected/);
    const privacy = result.privacy as RgmGdPrivacyReport;
    assert.equal(privacy.ptr.passed, false);
    // Only the Laplace test was released (epsilon_ptr = 0.1 * 2, pure DP, in privacy.ptr), but the
    // headline stays the mechanism's ex-ante guarantee: the test's outcome depends on the data.
    assert.equal(privacy.ptr.epsilon, 0.2);
    assert.ok(privacy.epsilon <= 2 && privacy.epsilon > 1.9, `${privacy.epsilon}`);
    assert.equal(privacy.delta, 1e-6);
    const event = parseEvent(privacy.event);
    assert.equal(event.kind, 'compose');
    // The test's noise: discrete Laplace on a grid with multiplier >= 1/epsilon_ptr = 5 (within the grid's 2^-14 rounding cost).
    const ptrEvent = event.kind === 'compose' ? event.events[0] : undefined;
    assert.ok(ptrEvent?.kind === 'laplace' && ptrEvent.discrete === true && ptrEvent.noiseMultiplier >= 5 && ptrEvent.noiseMultiplier < 5 * (1 + 1e-3), JSON.stringify(ptrEvent));
    assert.ok(Number(result.diagnostics.noisyStatistic) <= privacy.ptr.threshold);
    assert.equal('noisyStatistic' in privacy.ptr, false, 'the noisy statistic is a diagnostic, not part of the published report');
  }
});

test('PTR passes on Gaussian features with n large; the event re-accounts to <= the target; the model is useful', () => {
  const d = 4;
  const data = syntheticDataset({ n: 30000, d, labels: 'linear', noiseStd: 0.5, rng: seededRng(21) });
  const rc = Math.sqrt(3 * d);
  const epsilon = 1;
  const delta = 1e-6;
  const meanErrors: number[] = [];
  for (const seed of [1, 2]) {
    const result = trainRgmGd(data, { epsilon, delta, steps: 60, regularization: 0.05, featureClip: rc, bClip: 4 * rc, bNormBound: 1.5, learningRate: 0.5, rng: seededRng(seed) });
    assert.ok(result.model !== undefined, result.diagnostics.message);
    const privacy = result.privacy as RgmGdPrivacyReport;
    assert.equal(privacy.ptr.passed, true);
    assert.equal(privacy.neighboringRelation, 'replaceOne');
    assert.equal(privacy.delta, delta);
    assert.ok(Math.abs(privacy.deltaComponents.rdp + privacy.deltaComponents.ptr - delta) < 1e-20);
    const event = parseEvent(privacy.event);
    assert.equal(event.kind, 'compose');
    if (event.kind !== 'compose') return;
    // The PTR test: discrete Laplace on a grid, multiplier >= 1/epsilon_ptr (the rounding paid in its scale).
    const ptr = event.events[0];
    assert.ok(ptr.kind === 'laplace' && ptr.discrete === true && ptr.noiseMultiplier >= 10 && ptr.noiseMultiplier < 10 * (1 + 1e-12), JSON.stringify(ptr));
    const rgm = event.events[1];
    assert.ok(rgm.kind === 'selfCompose' && rgm.count === 60 && rgm.event.kind === 'relativeGaussian');
    if (rgm.kind !== 'selfCompose' || rgm.event.kind !== 'relativeGaussian') return;
    // The event's eta is the hand formula with Prop. 3's rho and kappa_C = 1 (C = I).
    const expected = rgmRidgeSensitivity({ n: data.n, featureClip: rc, rho: gaussianFeatureRho(d, rc), bClip: 4 * rc, bNormBound: 1.5, conditionNumber: result.diagnostics.conditionNumber });
    // Rounding the gradient to the grid and its floating-point error raise eta and R_rel a little (mechanisms/relative-gaussian-grid.ts).
    assert.ok(rgm.event.eta >= expected.eta && rgm.event.eta <= expected.eta * (1 + 1e-3), `eta ${rgm.event.eta} vs ${expected.eta}`);
    assert.ok(rgm.event.rRel! >= expected.rRel && rgm.event.rRel! <= expected.rRel * (1 + 1e-3), `R_rel ${rgm.event.rRel} vs ${expected.rRel}`);
    assert.ok(rgm.event.discrete === true && rgm.event.gridBaselineStd! >= 1024);
    assert.deepEqual(Object.keys(privacy.granularities ?? {}).sort(), ['gradient', 'ptr']);
    const reaccounted = rdpEpsilon(event, privacy.deltaComponents.rdp);
    assert.ok(reaccounted.epsilon <= epsilon, `re-accounted ${reaccounted.epsilon}`);
    assert.ok(reaccounted.epsilon > 0.99 * epsilon, 'the calibration should use the budget');
    // Useful: every coordinate closer to the true (1, ..., 1)/sqrt(d) = 0.5 than the zero model (error 0.5).
    const errors = result.model.theta.map((t) => Math.abs(t - 0.5));
    assert.ok(Math.max(...errors) < 0.45, `theta ${result.model.theta}`);
    meanErrors.push(errors.reduce((a, b) => a + b, 0) / d);
  }
  // And the mean coordinate error, averaged over the runs, well below it: over 12 seeds it averages
  // 0.11 with continuous or discrete noise alike (one run's worst coordinate is too noisy to bound tightly).
  assert.ok(meanErrors.reduce((a, b) => a + b, 0) / meanErrors.length < 0.2, `${meanErrors}`);
});

test('with noise off (noiseMultiplier 0, NOT private) RGM-GD converges to the ridge closed form on the clipped data', () => {
  const d = 3;
  const data = syntheticDataset({ n: 400, d, labels: 'linear', noiseStd: 0.3, rng: seededRng(4) });
  const mu = 0.1;
  // Radii so large that nothing is clipped: the closed form is (X^T X / n + mu I)^-1 X^T y / n.
  const result = trainRgmGd(data, { noiseMultiplier: 0, delta: 1e-6, steps: 400, regularization: mu, featureClip: 1e6, bClip: 1e9, learningRate: 0.5 });
  const gram = gramOf(data.x, data.n, d, mu);
  const b = new Float64Array(d);
  for (let i = 0; i < data.n; i++) for (let k = 0; k < d; k++) b[k] += (data.x[i * d + k] * data.y[i]) / data.n;
  const closed = solveSpd(gram, d, b);
  assert.ok(result.model !== undefined);
  for (let k = 0; k < d; k++) assert.ok(Math.abs(result.model.theta[k] - closed[k]) < 1e-10, `${result.model.theta} vs ${closed}`);
  assert.equal(result.privacy.epsilon, Infinity);
  assert.match(result.privacy.warnings.join(' '), /NOT private/);
  assert.equal(result.diagnostics.clippedFeatureFraction, 0);
  // The default step is 1/((1 + d gamma) L) with the public L = lambda_max(C) R_c^2 + mu.
  const small = trainRgmGd(data, { noiseMultiplier: 0, delta: 1e-6, steps: 1, regularization: mu, featureClip: 2, bClip: 1 });
  assert.ok(Math.abs(small.diagnostics.learningRate - 1 / (4 + mu)) < 1e-12);
});

test('refusals name the parameter and the violated condition', () => {
  const data = syntheticDataset({ n: 50, d: 2, labels: 'linear', rng: seededRng(1) });
  const base = { epsilon: 1, delta: 1e-6, steps: 10, regularization: 0.1, featureClip: 2, bClip: 4 };
  const refuses = (options: object, param: RegExp) =>
    assert.throws(
      () => trainRgmGd(data, { ...base, ...options }),
      (e: unknown) => e instanceof InvalidParameterError && param.test(e.param),
    );
  // Thm. 1 floor: with n = 50 eta is so large that no gamma reaches epsilon = 1.
  assert.throws(() => trainRgmGd(data, base), (e: unknown) => e instanceof CalibrationError && /^epsilon 1 cannot be reached: .* is above \d+(\.\d{1,3})? whatever/.test(e.message) && /use more rows/.test(e.message) && !/\b00\d\b/.test(e.message));
  refuses({ noiseMultiplier: 1, epsilon: undefined }, /^noiseMultiplier$/);
  refuses({ noiseMultiplier: 0 }, /^epsilon$/);
  refuses({ clipMatrix: Float64Array.of(1, 2, 2, 1) }, /^clipMatrix$/);
  refuses({ clipMatrix: Float64Array.of(1, 0.1, 0, 1) }, /^clipMatrix\[1, 0\]$/);
  refuses({ featureClip: 0 }, /^featureClip$/);
  refuses({ bClip: -1 }, /^bClip$/);
  refuses({ rho: 0 }, /^rho$/);
  refuses({ steps: 0 }, /^steps$/);
  refuses({ ptrEpsilonFraction: 1 }, /^ptrEpsilonFraction$/);
  refuses({ ptrDeltaFraction: 0 }, /^ptrDeltaFraction$/);
  refuses({ delta: 1 }, /^delta$/);
  refuses({ learningRate: -1 }, /^learningRate$/);
  assert.throws(() => trainRgmGd({ ...data, y: Float64Array.of(NaN, ...data.y.subarray(1)) }, { ...base, noiseMultiplier: 0, epsilon: undefined }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'data.y[0]');
});
