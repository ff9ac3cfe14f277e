/**
 * Approximate Minima Perturbation with gradient clipping (`003` Alg. 1, Thm. 4.1) and the
 * parameter selection of `003` Sec. 5.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ampEvent, ampOutputNoiseMultiplier } from '../../../src/accounting/events/approximate-minima-perturbation.js';
import { calibrateObjectivePerturbation } from '../../../src/accounting/calibration/calibrate-objective-perturbation.js';
import { calibrateNoiseMultiplier } from '../../../src/accounting/calibration/calibrate.js';
import { gaussianEvent, objectivePerturbationEvent } from '../../../src/accounting/events/constructors.js';
import { pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { objectivePerturbationRdp } from '../../../src/accounting/rdp/base-mechanisms.js';
import { rdpOfEvent } from '../../../src/accounting/rdp/event-rdp.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { gaussianReferenceNoiseStd, selectAmpParameters } from '../../../src/accounting/calibration/approximate-minima-perturbation-parameters.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { DEFAULT_AMP_MEMORY, trainAmp } from '../../../src/learners/perturbation/approximate-minima-perturbation.js';
import { objectiveSmoothness } from '../../../src/learners/glm/certified-minimum.js';
import { glmValueAndGradient } from '../../../src/learners/glm/objective.js';
import { dataForLoss, lossByName } from '../../../src/learners/glm/losses/by-name.js';
import { griddedObjectivePerturbationEvent, objectiveNoiseGrid } from '../../../src/learners/perturbation/objective-perturbation.js';
import { planGaussianGrid } from '../../../src/mechanisms/grid-noise.js';
import { sampleGaussian } from '../../../src/random/continuous.js';
import { fillDiscreteGaussian } from '../../../src/random/exact.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertClose } from '../../helpers/assert-close.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';

/**
 * b and theta~ rounded to the output grid, reproduced from the seed: the learner draws b first (d
 * exact discrete Gaussians on the objective grid of `objectiveNoiseGrid(sigma, d, tau)`), then
 * rounds theta~ to the output grid g and adds g K (d exact discrete Gaussians), so
 * theta / g - K = round(theta~ / g) exactly.
 */
function reproduce(seed: number, theta: readonly number[], sigma: number, lambda: number, tau = 0.01, sigmaOut = 0.15) {
  const rng = seededRng(seed);
  const d = theta.length;
  const grid = objectiveNoiseGrid(sigma, d, tau);
  const b = grid.draw(rng);
  const plan = planGaussianGrid({ sensitivity: (2 * tau) / lambda, noiseMultiplier: ampOutputNoiseMultiplier({ regularization: lambda, gradTolerance: tau, outputNoiseStd: sigmaOut }), dimension: d });
  const k = fillDiscreteGaussian(rng, new Float64Array(d), plan.gridNoiseStd);
  const thetaTilde = Float64Array.from(theta, (v, j) => (v / plan.granularity - k[j]) * plan.granularity);
  return { b, thetaTilde, grid, plan };
}

/**
 * The gradient bound the released theta~ must meet, seen through its rounding to the output grid:
 * the optimiser's target tau - g_b 320 sqrt(d) (the coupling's gap), plus smoothness times the
 * rounding g sqrt(d) / 2.
 */
function roundedBound(data: { x: Float64Array; y: Float64Array; n: number; d: number }, lambda: number, tau: number, r: ReturnType<typeof reproduce>, loss = 'logistic'): number {
  const smoothness = objectiveSmoothness(lossByName(loss), dataForLoss(lossByName(loss), data), lambda);
  return tau - r.grid.toleranceCost + (smoothness * r.plan.granularity * Math.sqrt(data.d)) / 2;
}

function gradNorm(loss: string, data: { x: Float64Array; y: Float64Array; n: number; d: number }, theta: Float64Array, b: Float64Array, lambda: number, clipNorm: number): number {
  const l = lossByName(loss);
  const g = new Float64Array(data.d);
  glmValueAndGradient(l, dataForLoss(l, data), theta, g, { regularization: lambda, linear: b, clipNorm });
  return Math.hypot(...g);
}

describe('ampEvent', () => {
  it("is objective perturbation composed with the Gaussian of sensitivity 2 tau / lambda: its RDP is 003 Thm. 4.1's sum, order by order", () => {
    const p = { noiseStd: 4, lipschitz: Math.SQRT2, smoothness: 0.5, regularization: 12, gradTolerance: 0.01, outputNoiseStd: 0.15 };
    const event = ampEvent(p);
    const z = ampOutputNoiseMultiplier(p);
    assertClose(z, (0.15 * 12) / 0.02, 1e-14);
    assert.ok(z < (0.15 * 12) / 0.02); // rounded down: less noise is the pessimistic side
    // (objectivePerturbationEvent takes objective perturbation's parameters only: AMP's tau and sigma_out are unknown to it.)
    const { gradTolerance: _tau, outputNoiseStd: _sigmaOut, ...objective } = p;
    assert.deepEqual(event, { kind: 'compose', events: [objectivePerturbationEvent(objective), gaussianEvent(z)] });
    const orders = [1.5, 2, 8, 32];
    const rdp = rdpOfEvent(event, orders);
    orders.forEach((alpha, k) => {
      // Thm. 4.1: Thm. 3.2's bound + 2 tau^2 alpha / (sigma_out^2 lambda^2).
      const theorem = objectivePerturbationRdp(p, alpha) + (2 * 0.01 ** 2 * alpha) / (0.15 ** 2 * 12 ** 2);
      assertClose(rdp[k], theorem, 1e-12, 0, `order ${alpha}`);
    });
    assert.throws(() => ampEvent({ ...p, regularization: 0.5 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization');
  });
});

describe('selectAmpParameters (003 Sec. 5)', () => {
  it('picks the smallest lambda with sigma <= 1.3 sigma_G: sigma meets the cap, and 1e-5 less lambda does not', () => {
    const cases = [
      { targetEpsilon: 0.1, accountant: 'rdp' as const },
      { targetEpsilon: 1, accountant: 'rdp' as const },
      { targetEpsilon: 8, accountant: 'rdp' as const },
      { targetEpsilon: 1, accountant: 'pld' as const },
    ];
    for (const { targetEpsilon, accountant } of cases) {
      const common = { targetEpsilon, delta: 1e-5, lipschitz: Math.SQRT2, smoothness: 0.5, accountant };
      const s = selectAmpParameters(common);
      assert.equal(s.gradTolerance, 0.01);
      assert.equal(s.outputNoiseStd, 0.15);
      assert.equal(s.gaussianNoiseStd, gaussianReferenceNoiseStd(targetEpsilon, 1e-5, Math.SQRT2, accountant));
      assert.ok(s.noiseStd <= 1.3 * s.gaussianNoiseStd, `${targetEpsilon}/${accountant}: sigma ${s.noiseStd} <= 1.3 sigma_G`);
      assert.ok(s.epsilon <= targetEpsilon);
      const output = { gradTolerance: 0.01, outputNoiseStd: 0.15 };
      const smaller = calibrateObjectivePerturbation({ ...common, regularization: s.regularization * (1 - 1e-5), output });
      assert.ok(smaller.noiseStd > 1.3 * s.gaussianNoiseStd, `${targetEpsilon}/${accountant}: smaller lambda gives sigma ${smaller.noiseStd}`);
    }
  });

  it('sigma_G is the Gaussian mechanism at sensitivity L: z_G L with z_G calibrated by the same accountant', () => {
    const zRdp = calibrateNoiseMultiplier((z) => gaussianEvent(z), { targetEpsilon: 1, delta: 1e-5 }).noiseMultiplier;
    assert.equal(gaussianReferenceNoiseStd(1, 1e-5, 2, 'rdp'), zRdp * 2);
    // Balle & Wang's analytic Gaussian at (1, 1e-5): scipy brentq root of Phi(1/(2z) - z) - e Phi(-1/(2z) - z) = 1e-5.
    assertClose(gaussianReferenceNoiseStd(1, 1e-5, 1, 'pld'), 3.7306316348159445, 1e-8);
  });

  it('refuses a noise factor too small for any lambda', () => {
    assert.throws(() => selectAmpParameters({ targetEpsilon: 1, delta: 1e-5, lipschitz: 1, smoothness: 0.25, noiseFactor: 0.9 }), /raise noiseFactor/);
  });
});

describe('trainAmp', () => {
  const data = makeLogisticData(300, 5, 8);

  it('releases theta~ + discrete output noise where theta~ has ||grad L^P|| <= tau (recomputed from the reproduced b)', () => {
    for (const seed of [1, 2, 3]) {
      const r = trainAmp(data, { epsilon: 1, delta: 1e-5, rng: seededRng(seed) });
      const lambda = r.diagnostics.regularization as number;
      const rep = reproduce(seed, r.model.theta, r.diagnostics.noiseStd, lambda);
      const norm = gradNorm('logistic', data, rep.thetaTilde, rep.b, lambda, Math.SQRT2);
      assert.ok(norm <= roundedBound(data, lambda, 0.01, rep), `seed ${seed}: ||grad|| = ${norm}`);
      // The released point is NOT theta~: the output noise is there, on its grid.
      assert.ok(gradNorm('logistic', data, Float64Array.from(r.model.theta), rep.b, lambda, Math.SQRT2) > 0.01);
      for (const v of r.model.theta) assert.ok(Number.isInteger(v / rep.plan.granularity));
      assert.deepEqual(r.privacy.granularities, { objective: rep.grid.granularity, output: rep.plan.granularity });
    }
  });

  it('clips: the squared loss with large labels, C = 0.5, meets the gradient test on the clipped objective', () => {
    const rng = seededRng(77);
    const n = 200;
    const d = 3;
    const x = new Float64Array(n * d);
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) {
      for (let j = 0; j < d; j++) x[i * d + j] = sampleGaussian(rng) / 2;
      const s = Math.hypot(x[i * d], x[i * d + 1], x[i * d + 2]);
      if (s > 1) for (let j = 0; j < d; j++) x[i * d + j] /= s;
      y[i] = 20 * sampleGaussian(rng);
    }
    const reg = { x, y, n, d };
    const r = trainAmp(reg, { loss: 'squared', clipNorm: 0.5, epsilon: 2, delta: 1e-5, rng: seededRng(5) });
    assert.equal(r.diagnostics.lipschitz, 0.5); // L = C: the squared loss is not Lipschitz, the clipped one is
    const lambda = r.diagnostics.regularization as number;
    const rep = reproduce(5, r.model.theta, r.diagnostics.noiseStd, lambda);
    assert.ok(gradNorm('squared', reg, rep.thetaTilde, rep.b, lambda, 0.5) <= roundedBound(reg, lambda, 0.01, rep, 'squared'));
  });

  it('its events re-account to <= target with RDP and PLD for several targets', () => {
    for (const epsilon of [0.5, 2, 8]) {
      const r = trainAmp(data, { epsilon, delta: 1e-5, rng: seededRng(1) });
      const event = r.privacy.event as ReturnType<typeof ampEvent>;
      assert.equal(event.kind, 'compose');
      assert.equal(r.privacy.neighboringRelation, 'addOrRemoveOne');
      const constants = { lipschitz: r.diagnostics.lipschitz as number, smoothness: r.diagnostics.smoothness as number };
      const lambda = r.diagnostics.regularization as number;
      const continuous = ampEvent({ noiseStd: r.diagnostics.noiseStd, ...constants, regularization: lambda, gradTolerance: 0.01, outputNoiseStd: 0.15 });
      // The released event: the same mechanism with b and the output noise on their grids.
      const rebuilt = {
        kind: 'compose',
        events: [
          griddedObjectivePerturbationEvent(objectiveNoiseGrid(r.diagnostics.noiseStd, data.d, 0.01), constants, lambda),
          planGaussianGrid({ sensitivity: 0.02 / lambda, noiseMultiplier: ampOutputNoiseMultiplier({ regularization: lambda, gradTolerance: 0.01, outputNoiseStd: 0.15 }), dimension: data.d }).event,
        ],
      };
      assert.deepEqual(event, rebuilt);
      for (const [name, accountant] of [['rdp', rdpEpsilon], ['pld', pldEpsilon]] as const) {
        const gridded = accountant(event, 1e-5).epsilon;
        assert.ok(gridded <= epsilon, `${name} at ${epsilon}: ${gridded}`);
        // Floating-point safety costs less than 0.1 % against the continuous event.
        assert.ok(gridded >= accountant(continuous, 1e-5).epsilon * 0.999, `${name} at ${epsilon}`);
      }
    }
    const pld = trainAmp(data, { epsilon: 1, delta: 1e-5, accountant: 'pld', rng: seededRng(1) });
    assert.ok(pld.privacy.pld!.epsilon <= 1);
  });

  it('optimiser settings are free: different memory and starting points give the same event, and each passes the test', () => {
    const a = trainAmp(data, { epsilon: 1, delta: 1e-5, rng: seededRng(4), memory: 3 });
    const start = Float64Array.from({ length: 5 }, (_, j) => j - 2);
    const b = trainAmp(data, { epsilon: 1, delta: 1e-5, rng: seededRng(4), memory: 20, initialTheta: start });
    assert.deepEqual(a.privacy.event, b.privacy.event);
    for (const r of [a, b]) {
      const lambda = r.diagnostics.regularization as number;
      const rep = reproduce(4, r.model.theta, r.diagnostics.noiseStd, lambda);
      assert.ok(gradNorm('logistic', data, rep.thetaTilde, rep.b, lambda, Math.SQRT2) <= roundedBound(data, lambda, 0.01, rep));
    }
  });

  it(`the default memory is DEFAULT_AMP_MEMORY (${DEFAULT_AMP_MEMORY}): a seed fixes the model, bit for bit; memory changes the path, not the event or the stopping test`, () => {
    // (Fewer steps with more pairs is measured on Adult, `bench/amp.ts`; on data this small both take a few steps.)
    const wide = makeLogisticData(400, 60, 11);
    const run = (memory?: number) => trainAmp(wide, { epsilon: 1, delta: 1e-5, rng: seededRng(9), ...(memory === undefined ? {} : { memory }) });
    const first = run();
    const again = run();
    const given = run(DEFAULT_AMP_MEMORY);
    const ten = run(10);
    for (const other of [again, given]) {
      assert.deepEqual(other.model.theta, first.model.theta);
      assert.deepEqual(other.privacy, first.privacy);
      assert.equal(other.diagnostics.iterations, first.diagnostics.iterations);
    }
    assert.deepEqual(ten.privacy.event, first.privacy.event);
    for (const r of [first, ten]) {
      const lambda = r.diagnostics.regularization as number;
      const rep = reproduce(9, r.model.theta, r.diagnostics.noiseStd, lambda);
      assert.ok(gradNorm('logistic', wide, rep.thetaTilde, rep.b, lambda, Math.SQRT2) <= roundedBound(wide, lambda, 0.01, rep));
    }
  });

  it('an optimiser cap no longer releases nothing: the certified fallback reaches tau (no data-dependent failure)', () => {
    for (const options of [{ maxIterations: 1 }, { maxEvaluations: 2 }]) {
      const r = trainAmp(data, { epsilon: 1, delta: 1e-5, rng: seededRng(1), ...options });
      const lambda = r.diagnostics.regularization as number;
      const rep = reproduce(1, r.model.theta, r.diagnostics.noiseStd, lambda);
      assert.ok(gradNorm('logistic', data, rep.thetaTilde, rep.b, lambda, Math.SQRT2) <= roundedBound(data, lambda, 0.01, rep), JSON.stringify(options));
      assert.ok(['checked', 'theorem'].includes(String(r.diagnostics.certificate)));
      assert.ok(Number(r.diagnostics.iterations) > 2, 'the fallback ran');
    }
  });

  it('refuses rows above R, lambda <= beta, an optimiser tolerance above tau', () => {
    const refused = (options: Parameters<typeof trainAmp>[1], param: string, d = data): void => {
      assert.throws(() => trainAmp(d, options), (e: unknown) => e instanceof InvalidParameterError && e.param === param, param);
    };
    const wide = { ...data, x: data.x.map((v) => 1.5 * v) };
    refused({ epsilon: 1, delta: 1e-5, rng: seededRng(1) }, 'rowNormBound', wide);
    refused({ epsilon: 1, delta: 1e-5, regularization: 0.25, rng: seededRng(1) }, 'regularization');
    refused({ epsilon: 1, delta: 1e-5, optimizerTolerance: 0.02, rng: seededRng(1) }, 'optimizerTolerance');
    refused({ epsilon: 1, delta: 1e-5, clipNorm: Infinity, rng: seededRng(1) }, 'clipNorm');
    // With R = 1.5 the constants grow: L = min(C, 1.5) = sqrt(2), beta = 1.5^2 / 4.
    const r = trainAmp(wide, { epsilon: 1, delta: 1e-5, rowNormBound: 1.5, rng: seededRng(1) });
    assert.equal(r.diagnostics.lipschitz, Math.SQRT2);
    assertClose(r.diagnostics.smoothness as number, 0.5625, 1e-15);
  });
});
