/**
 * RGM for GLMs (`000` App. B.2, `src/learners/rgm/rgm-glm.ts`).
 *
 * Reference values: an independent numpy computation (python3, numpy 1.x/2.x; the script is in
 * the file comment of the first test) of eta = sqrt(6 L L_rel / mu) / n with L = R^2/4, mu = lambda,
 * L_rel = L/mu, and R_rel = sqrt(3) 2 R / n; over 20000 random neighbouring pairs and parameters
 * (|theta| up to 100 |N(0, I)|) it found max ||g - g'||^2 / (eta^2 ||g||^2 + R_rel^2) = 0.0995,
 * 0.0630, 0.1066 for the three configurations below, and max ||g - g'|| / (2R/n) = 0.970, 0.965,
 * 0.936 (the absolute sensitivity 2R/n, which is below R_rel: the finding of the module comment).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { CalibrationError, InvalidParameterError } from '../../../src/errors.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { featureMemoryOf } from '../../../src/learners/glm/kernels/feature-memory.js';
import { withKernelFeatures } from '../../../src/learners/glm/objective.js';
import { glmComputationError, glmGradient, rgmGlmLoss, rgmGlmSensitivity, trainRgmGlm } from '../../../src/learners/rgm/rgm-glm.js';
import { train } from '../../../src/learners/train.js';
import { loadDataset } from '../../../src/data/node/read.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import { seededRng } from '../../../src/random/rng.js';
import { verifyModel } from '../../../src/learners/verification/verify-model.js';
import { runCli } from '../../helpers/people.js';

/** Deterministic pseudo-random numbers for the property tests (seeded, no Math.random). */
function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}
const gaussian = (u: () => number) => Math.sqrt(-2 * Math.log(1 - u())) * Math.cos(2 * Math.PI * u());

function grad(x: Float64Array, y: Float64Array, n: number, d: number, lambda: number, theta: Float64Array): Float64Array {
  return glmGradient(logisticLoss, { x, y, n, d }, lambda, theta, new Float64Array(d));
}
const sq = (v: Float64Array) => v.reduce((s, a) => s + a * a, 0);
const diffSq = (a: Float64Array, b: Float64Array) => a.reduce((s, v, k) => s + (v - b[k]) ** 2, 0);

test('000 App. B.2 constants match an independent numpy computation', () => {
  // numpy: eta = sqrt(6 L (L/lam) / lam) / n, L = R^2/4; rRel = sqrt(3) 2 R / n.
  const reference = [
    { n: 5, R: 1, lambda: 0.1, eta: 1.224744871391589, rRel: 0.6928203230275509 },
    { n: 20, R: 2, lambda: 0.01, eta: 12.24744871391589, rRel: 0.34641016151377546 },
    { n: 100, R: 1, lambda: 1, eta: 0.006123724356957945, rRel: 0.034641016151377546 },
  ];
  for (const r of reference) {
    const s = rgmGlmSensitivity({ loss: 'logistic', n: r.n, featureClip: r.R, regularization: r.lambda });
    // Rounded up by a few ulp, never down.
    assert.ok(s.eta >= r.eta && s.eta <= r.eta * (1 + 1e-13), `eta ${s.eta} vs ${r.eta}`);
    assert.ok(s.rRel >= r.rRel && s.rRel <= r.rRel * (1 + 1e-13), `rRel ${s.rRel} vs ${r.rRel}`);
    assert.equal(s.absoluteSensitivity > 0 && s.absoluteSensitivity < s.rRel, true);
  }
});

test('property: ||g(D) - g(D\')||^2 <= eta^2 ||g(D)||^2 + R_rel^2 on random and adversarial neighbours (and <= (2R/n)^2)', () => {
  const u = lcg(7);
  let worst = 0;
  for (const [n, d, R, lambda] of [[5, 2, 1, 0.1], [20, 3, 2, 0.01], [50, 4, 1, 1]] as const) {
    const { eta, rRel } = rgmGlmSensitivity({ loss: 'logistic', n, featureClip: R, regularization: lambda });
    for (let trial = 0; trial < 3000; trial++) {
      const adversarial = trial % 2 === 1;
      const x = new Float64Array(n * d);
      const y = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        let norm = 0;
        for (let k = 0; k < d; k++) norm += (x[i * d + k] = gaussian(u)) ** 2;
        const scale = (adversarial ? R : R * u()) / Math.sqrt(norm);
        for (let k = 0; k < d; k++) x[i * d + k] *= scale;
        y[i] = u() < 0.5 ? -1 : 1;
      }
      const x2 = Float64Array.from(x);
      const y2 = Float64Array.from(y);
      // Adversarial: the replaced record points the opposite way with the opposite label, and theta
      // saturates both margins (|l'| -> 1 for both), where the gap approaches 2R/n.
      const theta = new Float64Array(d);
      const size = [0.01, 1, 10, 100][trial % 4];
      for (let k = 0; k < d; k++) {
        x2[k] = -x[k];
        theta[k] = adversarial ? -size * y[0] * x[k] : size * gaussian(u);
      }
      y2[0] = adversarial ? y[0] : -y[0];
      const g = grad(x, y, n, d, lambda, theta);
      const g2 = grad(x2, y2, n, d, lambda, theta);
      const lhs = diffSq(g, g2);
      const ratio = lhs / (eta * eta * sq(g) + rRel * rRel);
      worst = Math.max(worst, ratio);
      assert.ok(ratio <= 1, `n=${n} trial ${trial}: ${lhs} > ${eta * eta * sq(g) + rRel * rRel}`);
      assert.ok(Math.sqrt(lhs) <= (2 * R) / n * (1 + 1e-12), 'the absolute sensitivity 2R/n');
    }
  }
  // R_rel alone is sqrt(3) times the absolute sensitivity: the bound is never tight to more than 1/3.
  assert.ok(worst <= 1 / 3 + 1e-9, `worst ${worst}`);
});

/** a + b as an unevaluated pair (hi, lo), exactly (Knuth's TwoSum). */
function twoSum(a: number, b: number): [number, number] {
  const s = a + b;
  const bb = s - a;
  return [s, a - (s - bb) + (b - bb)];
}

/** Exact product of doubles as (hi, lo) by Dekker's split (no fused multiply-add in JavaScript). */
function twoProduct(a: number, b: number): [number, number] {
  const p = a * b;
  const split = (v: number) => {
    const c = 134217729 * v;
    const h = c - (c - v);
    return [h, v - h];
  };
  const [ah, al] = split(a);
  const [bh, bl] = split(b);
  return [p, ((ah * bh - p) + ah * bl + al * bh) + al * bl];
}

/** sum_i v_i in double-double (error ~ n 2^-106 sum |v_i|, far below what is checked). */
function accurateSum(terms: Iterable<[number, number]>): number {
  let hi = 0;
  let lo = 0;
  for (const [a, b] of terms) {
    const [s, e] = twoSum(hi, a);
    hi = s;
    lo += e + b;
  }
  return hi + lo;
}

test('the gradient through the SIMD kernels stays within glmComputationError of an accurate (double-double) gradient, at the projection radius', () => {
  // The computed gradient is what RGM releases on its grid: its error must stay below the public
  // bound E the grid assumes. Reference: margins and the row sum in double-double, l' = -y / (1 + e^{yz})
  // with Math.exp (within ~2 ulp), so the reference's own error is ~1e-15 relative, far below E.
  const rng = lcg(17);
  const n = 40000;
  const d = 4;
  const R = 1.5;
  const lambda = 0.05;
  const thetaRadius = (2 * R) / lambda;
  const x = new Float64Array(n * d);
  for (let i = 0; i < n; i++) {
    let ss = 0;
    for (let k = 0; k < d; k++) { x[i * d + k] = gaussian(rng); ss += x[i * d + k] ** 2; }
    const f = (R * (0.2 + 0.8 * rng())) / Math.sqrt(ss);
    for (let k = 0; k < d; k++) x[i * d + k] *= f;
  }
  const y = Float64Array.from({ length: n }, () => (rng() < 0.5 ? -1 : 1));
  const data = withKernelFeatures({ x, y, n, d });
  assert.ok(featureMemoryOf(data.x, d) !== undefined, 'the kernel path is taken');
  const bound = glmComputationError(logisticLoss, n, d, R, lambda, thetaRadius);
  for (const scale of [0.01, 1, thetaRadius]) {
    const theta = Float64Array.from({ length: d }, () => gaussian(rng));
    const norm = Math.sqrt(sq(theta));
    for (let k = 0; k < d; k++) theta[k] *= (scale * 0.999) / norm;
    const computed = glmGradient(logisticLoss, data, lambda, theta, new Float64Array(d));
    const coefficients = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      const z = accurateSum(Array.from({ length: d }, (_, k) => twoProduct(x[i * d + k], theta[k])));
      coefficients[i] = -y[i] / (1 + Math.exp(y[i] * z));
    }
    const exact = Float64Array.from({ length: d }, (_, k) => {
      const sum = accurateSum(Array.from({ length: n }, (_, i) => twoProduct(coefficients[i], x[i * d + k])));
      return sum / n + lambda * theta[k];
    });
    const error = Math.sqrt(diffSq(computed, exact));
    assert.ok(error <= bound, `||theta|| = ${scale}: error ${error} > E = ${bound}`);
  }
});

test('counterexample, feature bound: an unclipped row breaks the bound, so rows are clipped to R', () => {
  // D = {(10 e, +1), (10 e, -1)}: g(D) = 0 at theta = 0. D' replaces the first row by (-10 e, +1).
  const n = 2, d = 1, R = 1, lambda = 0.1;
  const { eta, rRel } = rgmGlmSensitivity({ loss: 'logistic', n, featureClip: R, regularization: lambda });
  const theta = new Float64Array(d);
  const g = grad(Float64Array.of(10, 10), Float64Array.of(1, -1), n, d, lambda, theta);
  const g2 = grad(Float64Array.of(-10, 10), Float64Array.of(1, -1), n, d, lambda, theta);
  assert.ok(diffSq(g, g2) > eta * eta * sq(g) + rRel * rRel, 'the bound fails without the feature bound');
  // trainRgmGlm clips: the unclipped rows train exactly as the rows clipped by hand.
  const opts = { loss: 'logistic', noiseMultiplier: 0, delta: 1e-6, steps: 20, regularization: lambda, featureClip: R } as const;
  const raw = trainRgmGlm({ n, d, x: Float64Array.of(10, 10), y: Float64Array.of(1, 0) }, opts);
  const clipped = trainRgmGlm({ n, d, x: Float64Array.of(1 - 1e-9, 1 - 1e-9), y: Float64Array.of(1, 0) }, opts);
  assert.deepEqual(raw.model.theta, clipped.model.theta);
});

test('counterexample, label bound: a label outside {-1, +1} breaks the bound, so it is refused', () => {
  // With y = 10, l'(0; y) = -5: the gap at theta = 0 is 10 R / n > R_rel = 2 sqrt(3) R / n.
  const n = 2, d = 1, lambda = 0.1;
  const { eta, rRel } = rgmGlmSensitivity({ loss: 'logistic', n, featureClip: 1, regularization: lambda });
  const theta = new Float64Array(d);
  const g = grad(Float64Array.of(1, 1), Float64Array.of(10, -10), n, d, lambda, theta);
  const g2 = grad(Float64Array.of(-1, 1), Float64Array.of(10, -10), n, d, lambda, theta);
  assert.ok(diffSq(g, g2) > eta * eta * sq(g) + rRel * rRel, 'the bound fails without the label bound');
  assert.throws(
    () => trainRgmGlm({ n, d, x: Float64Array.of(1, 1), y: Float64Array.of(10, 0) }, { loss: 'logistic', noiseMultiplier: 0, delta: 1e-6, steps: 5, regularization: lambda, featureClip: 1 }),
    (e: unknown) => e instanceof InvalidParameterError && /data\.y|label/.test(e.message),
  );
});

test('strong convexity: lambda > 0 is refused by name before the data (eta = sqrt(6) L / (lambda n) is infinite at 0)', () => {
  for (const lambda of [0, -1, Number.NaN]) {
    assert.throws(
      () => trainRgmGlm({ n: 2, d: 1, x: Float64Array.of(1, 1), y: Float64Array.of(1, 0) }, { loss: 'logistic', epsilon: 1, delta: 1e-6, steps: 5, regularization: lambda, featureClip: 1 }),
      (e: unknown) => e instanceof InvalidParameterError && e.message.startsWith('regularization must be a finite number > 0') && /strongly convex/.test(e.message),
    );
  }
  // No counterexample exists for the logistic loss: its gradient gap is <= 2R/n < R_rel whatever
  // lambda (the property test), so App. B.2's eta term is never needed for it; lambda > 0 is what
  // App. B.2's formula needs, and is kept (the rgm-glm.ts module comment says what this means).
  const s = rgmGlmSensitivity({ loss: 'logistic', n: 100, featureClip: 1, regularization: 1e-12 });
  assert.ok(s.eta > 1e9);
});

test('smoothness and bounded derivative: losses App. B.2 is not implemented for are refused by name', () => {
  assert.throws(() => rgmGlmLoss('squared'), (e: unknown) => e instanceof InvalidParameterError && /^loss must be one of 'logistic' \(RGM's bound for GLMs; 'squared' trains ridge\), got "squared"$/.test(e.message));
  assert.throws(() => rgmGlmLoss('huber'), InvalidParameterError);
  assert.throws(() => train({ n: 2, d: 1, x: Float64Array.of(1, 1), y: Float64Array.of(1, 0) }, { method: 'rgm', loss: 'logistic', epsilon: 1, delta: 1e-6, featureClip: 1, regularization: 0.1, rho: 0.1 }), (e: unknown) => e instanceof InvalidParameterError && /^rho must be absent with loss 'logistic'/.test(e.message));
});

/** n seeded rows of two Gaussian features (std 0.5, clipped to [-1, 1]) and 0/1 labels drawn from a logistic model with weights (w0, w1). */
function logisticRows(seed: number, n: number, w0: number, w1: number): { n: number; d: number; x: Float64Array; y: Float64Array } {
  const u = lcg(seed);
  const d = 2;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[i * d] = Math.max(-1, Math.min(1, 0.5 * gaussian(u)));
    x[i * d + 1] = Math.max(-1, Math.min(1, 0.5 * gaussian(u)));
    y[i] = u() < 1 / (1 + Math.exp(-(w0 * x[i * d] + w1 * x[i * d + 1]))) ? 1 : 0;
  }
  return { n, d, x, y };
}

test('train(): the private run meets its target, re-accounted from its event; epsilon below the floor is refused by name', () => {
  const { n, d, x, y } = logisticRows(3, 4000, 3, -2);
  const r = train({ n, d, x, y }, { method: 'rgm', loss: 'logistic', epsilon: 2, delta: 1e-6, steps: 30, regularization: 0.05, featureClip: Math.SQRT2, rng: seededRng(1) });
  assert.ok(r.model !== undefined);
  assert.ok(r.privacy.epsilon <= 2);
  assert.ok(rdpEpsilon(parseEvent(r.privacy.event), 1e-6).epsilon <= 2);
  assert.ok(r.privacy.warnings.some((w) => /^RGM's relative sensitivity for the \w+ loss/.test(w) && /DP-GD/.test(w)));
  assert.throws(
    () => train({ n, d, x, y }, { method: 'rgm', loss: 'logistic', epsilon: 0.01, delta: 1e-6, steps: 100, regularization: 1e-4, featureClip: Math.SQRT2 }),
    (e: unknown) => e instanceof CalibrationError && e.message.startsWith('epsilon 0.01 cannot be reached'),
  );
});

test('verify re-derives eta and R_rel from the public values the report states (no PTR for the GLM path), and refuses a file whose noise does not cover them', () => {
  const { n, d, x, y } = logisticRows(5, 3000, 2, -1);
  // The secure generator (a seeded one is reported as not private, whatever the mechanism).
  const r = train({ n, d, x, y }, { method: 'rgm', loss: 'logistic', epsilon: 3, delta: 1e-6, steps: 10, regularization: 0.05, featureClip: Math.SQRT2 });
  const file = JSON.parse(JSON.stringify(r.model));
  assert.deepEqual(file.privacy.relativeSensitivity, { source: 'glm', featureClip: Math.SQRT2, regularization: 0.05 });
  const ok = verifyModel(file);
  assert.equal(ok.holds, true, ok.problems.join('; '));
  assert.equal(ok.verified?.guarantee, 'proven');
  // lambda halved: eta doubles, above the event's: refused.
  const tampered = structuredClone(file);
  tampered.privacy.relativeSensitivity.regularization = 0.025;
  const refused = verifyModel(tampered);
  assert.equal(refused.holds, false);
  assert.ok(refused.problems.some((p) => /below what privacy.relativeSensitivity gives/.test(p)), refused.problems.join('; '));
  // A larger n than the report's would lower eta: the n is datasetSize.value, so changing it is caught the same way.
  const smaller = structuredClone(file);
  smaller.privacy.datasetSize.value = n / 2;
  assert.equal(verifyModel(smaller).holds, false);
  // Without the derivation, a Relative Gaussian release needs its PTR part: guarantee none.
  const bare = structuredClone(file);
  delete bare.privacy.relativeSensitivity;
  const unproven = verifyModel(bare);
  assert.equal(unproven.holds, false);
  assert.equal(unproven.verified?.guarantee, 'none');
});

test('dpfit train --method rgm --loss logistic end to end, and train(loadDataset(...)); compared with --method dpgd at the same epsilon', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-rgmglm-'));
  const u = lcg(11);
  const lines = ['a,b,y'];
  for (let i = 0; i < 6000; i++) {
    const a = Math.max(-1, Math.min(1, 0.5 * gaussian(u)));
    const b = Math.max(-1, Math.min(1, 0.5 * gaussian(u)));
    lines.push(`${a.toFixed(5)},${b.toFixed(5)},${u() < 1 / (1 + Math.exp(-(3 * a - 2 * b))) ? 'yes' : 'no'}`);
  }
  const data = join(dir, 'bin.csv');
  writeFileSync(data, `${lines.join('\n')}\n`);
  const schemaJson = {
    version: 1,
    columns: [
      { name: 'a', type: 'numeric', lower: -1, upper: 1, scale: 'none' },
      { name: 'b', type: 'numeric', lower: -1, upper: 1, scale: 'none' },
      { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
  };
  const schema = join(dir, 'schema.json');
  writeFileSync(schema, JSON.stringify(schemaJson));
  const accuracy: Record<string, number> = {};
  for (const method of ['rgm', 'dpgd']) {
    const diagnostics = join(dir, `${method}.diag.json`);
    const out = await runCli('train', '--data', data, '--schema', schema, '--method', method, '--loss', 'logistic', '--epsilon', '1', '--delta', '1e-6', '--seed', '5', '--diagnostics', diagnostics, '--json');
    assert.equal(out.code, 0, out.stderr);
    const result = JSON.parse(out.stdout);
    assert.ok(result.privacy.epsilon <= 1, String(result.privacy.epsilon));
    // RGM's report is the RDP accountant's (DP-GD's may be the tighter PLD one).
    if (method === 'rgm') assert.ok(rdpEpsilon(parseEvent(result.privacy.event), 1e-6).epsilon <= 1, 're-accounted from the released event');
    const owner = JSON.parse(readFileSync(diagnostics, 'utf8'));
    accuracy[method] = owner.metrics.training.accuracy;
    if (method === 'rgm') assert.equal(owner.diagnostics.method, 'rgmglm');
  }
  t.diagnostic(`training accuracy at epsilon 1, delta 1e-6, n 6000: rgm ${accuracy.rgm}, dpgd ${accuracy.dpgd}`);
  // Both learn the signal (the Bayes accuracy is about 0.75); no winner is asserted.
  assert.ok(accuracy.rgm > 0.65 && accuracy.dpgd > 0.65, JSON.stringify(accuracy));
  // The library on what loadDataset returns: the schema's bounds fill featureClip and the default lambda.
  const prepared = await loadDataset(data, parseSchema(schemaJson));
  const r = train(prepared, { method: 'rgm', loss: 'logistic', epsilon: 1, delta: 1e-6, rng: seededRng(2) });
  assert.ok(r.model !== undefined, JSON.stringify(r.diagnostics));
  assert.ok(r.privacy.epsilon <= 1, String(r.privacy.epsilon));
});
