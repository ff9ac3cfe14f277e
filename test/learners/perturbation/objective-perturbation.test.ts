/**
 * Objective perturbation (`003` Sec. 2.2, Thm. 3.1/3.2): the learner releases exactly the
 * perturbed minimiser for the b it drew, its noise has the calibrated law, its events meet their
 * targets under both accountants, and every condition of the theorems is enforced.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  calibrateObjectivePerturbation,
  objectivePerturbationEpsilonFloor,
} from '../../../src/accounting/calibration/calibrate-objective-perturbation.js';
import { objectivePerturbationEvent } from '../../../src/accounting/events/constructors.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { glmValueAndGradient } from '../../../src/learners/glm/objective.js';
import { dataForLoss, lossByName } from '../../../src/learners/glm/losses/by-name.js';
import { objectiveNoiseGrid, trainObjectivePerturbation } from '../../../src/learners/perturbation/objective-perturbation.js';
import { sampleGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertClose } from '../../helpers/assert-close.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';
import { ALPHA, chiSquareSurvival, ksTest, normalCdf } from '../../helpers/stats.js';

/** n x d regression data, rows of norm <= 1 (scaled into [0.2, 1]), labels in [-1, 1] (seeded). */
function regressionData(n: number, d: number, seed: number): { x: Float64Array; y: Float64Array; n: number; d: number } {
  const rng = seededRng(seed);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < d; j++) {
      x[i * d + j] = sampleGaussian(rng);
      s += x[i * d + j] ** 2;
    }
    const target = 0.2 + 0.8 * rng.nextDouble();
    let z = 0;
    for (let j = 0; j < d; j++) {
      x[i * d + j] *= target / Math.sqrt(s);
      z += x[i * d + j] * (j % 2 === 0 ? 1 : -0.5);
    }
    y[i] = Math.max(-1, Math.min(1, z + 0.1 * sampleGaussian(rng)));
  }
  return { x, y, n, d };
}

/** Solves A x = r by Gaussian elimination with partial pivoting (independent of src/math). */
function solve(a: number[][], r: number[]): number[] {
  const n = r.length;
  const m = a.map((row, i) => [...row, r[i]]);
  for (let c = 0; c < n; c++) {
    let p = c;
    for (let i = c + 1; i < n; i++) if (Math.abs(m[i][c]) > Math.abs(m[p][c])) p = i;
    [m[c], m[p]] = [m[p], m[c]];
    for (let i = c + 1; i < n; i++) {
      const f = m[i][c] / m[c][c];
      for (let k = c; k <= n; k++) m[i][k] -= f * m[c][k];
    }
  }
  const out = new Array<number>(n).fill(0);
  for (let i = n - 1; i >= 0; i--) {
    let s = m[i][n];
    for (let k = i + 1; k < n; k++) s -= m[i][k] * out[k];
    out[i] = s / m[i][i];
  }
  return out;
}

/** (X^T X + lambda I)^{-1} (X^T y - b): the ridge form of the perturbed minimiser (`003` eq. in Sec. 2.2 with f = (z - y)^2 / 2). */
function perturbedRidge(data: { x: Float64Array; y: Float64Array; n: number; d: number }, lambda: number, b: Float64Array): number[] {
  const { x, y, n, d } = data;
  const a = Array.from({ length: d }, (_, j) => Array.from({ length: d }, (_, k) => (j === k ? lambda : 0)));
  const r = Array.from({ length: d }, (_, j) => -b[j]);
  for (let i = 0; i < n; i++) {
    for (let j = 0; j < d; j++) {
      r[j] += x[i * d + j] * y[i];
      for (let k = 0; k < d; k++) a[j][k] += x[i * d + j] * x[i * d + k];
    }
  }
  return solve(a, r);
}

describe('trainObjectivePerturbation: ridge regression', () => {
  it('returns the perturbed ridge minimiser (X^T X + lambda I)^{-1} (X^T y - b) for the b it drew (b reproduced from the seed: its first d draws)', () => {
    const data = regressionData(60, 5, 11);
    const lambda = 4;
    const result = trainObjectivePerturbation(data, {
      acceptNoGuarantee: true, loss: 'squared', labelBound: 1, parameterNormBound: 50, regularization: lambda, epsilon: 1, delta: 1e-5, rng: seededRng(2024),
    });
    const sigma = result.diagnostics.noiseStd;
    // b is d exact discrete Gaussians on the grid of objectiveNoiseGrid (std parameter >= sigma after the coupling).
    const grid = objectiveNoiseGrid(sigma, data.d);
    const b = grid.draw(seededRng(2024));
    const expected = perturbedRidge(data, lambda, b);
    // Precondition of the identity: every residual within the Huber threshold h = R P + B = 51.
    assert.equal(result.diagnostics.huberThreshold, 51);
    for (let i = 0; i < data.n; i++) {
      let z = 0;
      for (let j = 0; j < data.d; j++) z += data.x[i * data.d + j] * expected[j];
      assert.ok(Math.abs(z - data.y[i]) < 51);
    }
    const scale = Math.max(...expected.map(Math.abs));
    for (let j = 0; j < data.d; j++) assertClose(result.model.theta[j], expected[j], 0, 1e-10 * scale, `theta[${j}]`);
    // What was minimised, and what it costs: Huber(h) is h R-Lipschitz and R^2-smooth.
    assert.deepEqual(result.model.loss, { name: 'huber', parameters: { delta: 51 } });
    assert.equal(result.diagnostics.lipschitz, 51);
    assert.equal(result.diagnostics.smoothness, 1);
    assert.deepEqual(result.privacy.event, {
      kind: 'objectivePerturbation', noiseStd: grid.noiseStd, lipschitz: 51, smoothness: 1, regularization: lambda, discrete: true, gridNoiseStd: grid.gridNoiseStd,
    });
    assert.ok(grid.noiseStd >= sigma && grid.noiseStd < sigma * (1 + 1e-9));
    assert.equal(result.privacy.granularity, grid.granularity);
    assert.equal(result.privacy.neighboringRelation, 'addOrRemoveOne');
    assert.ok(result.privacy.epsilon <= 1);
    assert.ok(result.privacy.rdp.epsilon <= 1);
    assert.ok(result.privacy.pld !== undefined && result.privacy.pld.epsilon <= 1);
  });

  it('draws b with the calibrated law: b recovered from the released minimiser passes KS and chi-square tests against N(0, sigma^2) (alpha 1e-6)', () => {
    // With theta^P = (X^T X + lambda I)^{-1} (X^T y - b), b = X^T y - (X^T X + lambda I) theta^P.
    const data = regressionData(20, 150, 5);
    const lambda = 2;
    const recovered: number[] = [];
    let sigma = 0;
    for (const seed of [1, 2]) {
      const result = trainObjectivePerturbation(data, {
        acceptNoGuarantee: true, loss: 'squared', huberThreshold: 100, regularization: lambda, noiseStd: 3, delta: 1e-5, rng: seededRng(seed),
      });
      sigma = result.diagnostics.noiseStd;
      const theta = result.model.theta;
      const { x, y, n, d } = data;
      const xtheta = new Float64Array(n);
      for (let i = 0; i < n; i++) for (let j = 0; j < d; j++) xtheta[i] += x[i * d + j] * theta[j];
      // Every residual within h = 100, so the minimiser is the ridge one.
      for (let i = 0; i < n; i++) assert.ok(Math.abs(xtheta[i] - y[i]) < 100);
      for (let j = 0; j < d; j++) {
        let v = -lambda * theta[j];
        for (let i = 0; i < n; i++) v += x[i * d + j] * (y[i] - xtheta[i]);
        recovered.push(v / sigma);
      }
    }
    assert.equal(sigma, 3);
    const ks = ksTest(recovered, normalCdf);
    assert.ok(ks.pValue > ALPHA, `KS p = ${ks.pValue}`);
    const chi2 = recovered.reduce((s, v) => s + v * v, 0);
    const p = chiSquareSurvival(chi2, recovered.length);
    assert.ok(p > ALPHA / 2 && p < 1 - ALPHA / 2, `chi-square p = ${p}`);
  });
});

describe('calibrateObjectivePerturbation', () => {
  it('RDP-calibrated events meet the target under RDP and PLD; PLD calibration needs less noise and meets it under PLD', () => {
    for (const [eps, lambda] of [[0.3, 10], [1, 5], [4, 1]] as const) {
      const params = { targetEpsilon: eps, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: lambda };
      const rdp = calibrateObjectivePerturbation(params);
      assert.ok(rdpEpsilon(rdp.event, 1e-5).epsilon <= eps, `rdp at ${eps}`);
      assert.ok(pldEpsilon(rdp.event, 1e-5).epsilon <= eps, `pld of the rdp-calibrated event at ${eps}`);
      // The smallest: 1e-6 less noise misses the target.
      const less = objectivePerturbationEvent({ noiseStd: rdp.noiseStd * (1 - 1e-6), lipschitz: 1, smoothness: 0.25, regularization: lambda });
      assert.ok(rdpEpsilon(less, 1e-5).epsilon > eps);
      const pld = calibrateObjectivePerturbation({ ...params, accountant: 'pld' });
      assert.ok(pldEpsilon(pld.event, 1e-5).epsilon <= eps);
      assert.ok(pld.noiseStd < rdp.noiseStd, `pld ${pld.noiseStd} < rdp ${rdp.noiseStd}`);
    }
  });

  it('PLD calibration agrees with an independent mpmath solution of Thm. 3.1 delta(epsilon) = delta', () => {
    // python3/mpmath, 40 digits: sigma* solving E[(1 - e^{eps - omega})_+] = 1e-5 for the privacy loss
    // omega = -log(1 - beta/lambda) + L^2/(2 sigma^2) + |N(0, L^2/sigma^2)| of 003 Lemma D.6 (quadrature + findroot).
    const cases = [
      { targetEpsilon: 1, lipschitz: 1, smoothness: 0.25, regularization: 10, sigma: 3.97653130005263 },
      { targetEpsilon: 0.5, lipschitz: Math.SQRT2, smoothness: 0.5, regularization: 20, sigma: 10.9069830133645 },
      { targetEpsilon: 4, lipschitz: 1, smoothness: 0.25, regularization: 1, sigma: 1.19140949469773 },
    ];
    for (const { sigma, ...params } of cases) {
      const c = calibrateObjectivePerturbation({ ...params, delta: 1e-5, accountant: 'pld' });
      // The PLD epsilon is an upper bound accurate to 1e-4 relative: sigma is at or just above sigma*.
      assert.ok(c.noiseStd >= sigma * (1 - 1e-9) && c.noiseStd <= sigma * (1 + 2e-3), `${c.noiseStd} vs ${sigma}`);
    }
  });

  it('refuses lambda <= beta and targets at or below the floor -log(1 - beta/lambda)', () => {
    assert.throws(() => calibrateObjectivePerturbation({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: 0.25 }),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization');
    assert.equal(objectivePerturbationEpsilonFloor(0.25, 0.5), Math.log(2));
    assert.throws(() => calibrateObjectivePerturbation({ targetEpsilon: 0.69, delta: 1e-5, lipschitz: 1, smoothness: 0.25, regularization: 0.5 }),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization' && /beta \/ \(1 - e\^-epsilon\)/.test(e.message));
  });
});

describe('trainObjectivePerturbation: logistic regression and refusals', () => {
  const data = makeLogisticData(200, 4, 3);

  it('trains logistic regression with lambda selected by 003 Sec. 5 (sigma <= 1.3 sigma_G) and re-accounts to <= target', () => {
    for (const accountant of ['rdp', 'pld'] as const) {
      const r = trainObjectivePerturbation(data, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, accountant, rng: seededRng(9) });
      const g = r.diagnostics.gaussianNoiseStd as number;
      assert.ok(r.diagnostics.noiseStd <= 1.3 * g);
      assert.ok(r.privacy.epsilon <= 1);
      assert.ok((accountant === 'rdp' ? r.privacy.rdp.epsilon : r.privacy.pld!.epsilon) <= 1);
      assert.equal(r.model.task, 'classification');
      // R = 1: L = 1, beta = 1/4 (003 Sec. 5), so lambda > 1/4. (The rows were normalised to 1 with
      // rounding; the constants use the largest row norm, 1 + 2e-16.)
      assertClose(r.diagnostics.lipschitz as number, 1, 1e-15);
      assertClose(r.diagnostics.smoothness as number, 0.25, 1e-15);
      assert.ok((r.diagnostics.regularization as number) > 0.25);
    }
  });

  it('constants follow the declared row-norm bound R: L = R, beta = R^2 / 4 for the logistic loss', () => {
    const scaled = { ...data, x: data.x.map((v) => 2 * v) };
    assert.throws(() => trainObjectivePerturbation(scaled, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, regularization: 10, rng: seededRng(1) }),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'rowNormBound');
    const r = trainObjectivePerturbation(scaled, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, regularization: 10, rowNormBound: 2, rng: seededRng(1) });
    assertClose(r.diagnostics.lipschitz as number, 2, 1e-15);
    assertClose(r.diagnostics.smoothness as number, 1, 1e-15);
    assert.throws(() => trainObjectivePerturbation(scaled, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, regularization: 1, rowNormBound: 2, rng: seededRng(1) }),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization' && /lambda > beta/.test(e.message));
  });

  it('refuses: lambda <= beta, the squared loss without bounds (L infinite), neither or both of epsilon and noiseStd, noiseStd without lambda', () => {
    const base = { delta: 1e-5, rng: seededRng(1) };
    const refused = (options: Parameters<typeof trainObjectivePerturbation>[1], param: string, d = data): void => {
      assert.throws(() => trainObjectivePerturbation(d, { ...options, acceptNoGuarantee: true }), (e: unknown) => e instanceof InvalidParameterError && e.param === param, param);
    };
    refused({ ...base, epsilon: 1, regularization: 0.25 }, 'regularization');
    const reg = regressionData(30, 3, 1);
    refused({ ...base, loss: 'squared', epsilon: 1, regularization: 5 }, 'parameterNormBound', reg);
    refused({ ...base, loss: 'squared', epsilon: 1, regularization: 5, labelBound: 1 }, 'parameterNormBound', reg);
    refused({ ...base, regularization: 5 }, 'epsilon');
    refused({ ...base, epsilon: 1, noiseStd: 2, regularization: 5 }, 'epsilon');
    refused({ ...base, noiseStd: 2 }, 'regularization');
  });

  it('an optimiser cap no longer releases nothing: the certified fallback reaches the tolerance, and the guarantee stays none (it used to say conjecture)', () => {
    for (const optimizer of ['newton', 'lbfgs'] as const) {
      const r = trainObjectivePerturbation(data, { acceptNoGuarantee: true, epsilon: 1, delta: 1e-5, regularization: 5, maxIterations: 1, optimizer, rng: seededRng(1) });
      const b = objectiveNoiseGrid(r.diagnostics.noiseStd, data.d).draw(seededRng(1));
      const g = new Float64Array(data.d);
      const loss = lossByName('logistic');
      glmValueAndGradient(loss, dataForLoss(loss, data), Float64Array.from(r.model.theta), g, { regularization: 5, linear: b });
      assert.ok(Math.hypot(...g) <= Number(r.diagnostics.gradTolerance), `${optimizer}: ${Math.hypot(...g)}`);
      assert.ok(['checked', 'theorem'].includes(String(r.diagnostics.certificate)));
      assert.ok(r.privacy.warnings.some((w) => /exact minimiser/.test(w)));
    }
  });

  it('explicit noise is reported at delta with both accountants and a warning about the numerical minimiser', () => {
    const r = trainObjectivePerturbation(data, { acceptNoGuarantee: true, noiseStd: 5, regularization: 10, delta: 1e-6, rng: seededRng(4) });
    const lipschitz = r.diagnostics.lipschitz as number;
    const smoothness = r.diagnostics.smoothness as number;
    assertClose(lipschitz, 1, 1e-15);
    assertClose(smoothness, 0.25, 1e-15);
    const grid = objectiveNoiseGrid(5, data.d);
    assert.deepEqual(r.privacy.event, { kind: 'objectivePerturbation', noiseStd: grid.noiseStd, lipschitz, smoothness, regularization: 10, discrete: true, gridNoiseStd: grid.gridNoiseStd });
    const event = parseEvent(r.privacy.event);
    assert.equal(r.privacy.rdp.epsilon, rdpEpsilon(event, 1e-6).epsilon);
    // The grid costs nothing visible: within 1e-9 of the continuous event's epsilon.
    const continuous = objectivePerturbationEvent({ noiseStd: 5, lipschitz, smoothness, regularization: 10 });
    assertClose(r.privacy.rdp.epsilon, rdpEpsilon(continuous, 1e-6).epsilon, 1e-9);
    assert.equal(r.privacy.epsilon, Math.min(r.privacy.rdp.epsilon, r.privacy.pld!.epsilon));
    assert.ok(r.privacy.warnings.some((w) => /exact minimiser/.test(w)));
    assert.ok(r.privacy.warnings.some((w) => /seeded/.test(w)));
    assert.equal(r.privacy.guarantee, 'none', 'seeded noise proves nothing (and the minimiser is not paid for)');
  });

  it('an unreachable target for the given lambda is refused before training', () => {
    assert.throws(() => trainObjectivePerturbation(data, { acceptNoGuarantee: true, epsilon: 0.05, delta: 1e-5, regularization: 2, rng: seededRng(1) }),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization' && /floor/.test(e.message));
  });
});
