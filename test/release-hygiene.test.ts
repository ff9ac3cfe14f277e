/**
 * Every released bit accounted: a release says nothing its event does not pay for. Each test
 * re-tries one of the attacks or leaks found on the old main and shows it fails now:
 *   - the floating-point support attack (Mironov 2012) works on a continuous sampler and finds
 *     nothing on the default (gridded discrete) path;
 *   - model files carry nothing computed from the data or the noise: two runs on the same data and
 *     one on a replace-one neighbour give files identical once the released parameters are removed
 *     (objective perturbation's old ||b|| warning identified the dataset);
 *   - "proven" means proven: seeded noise, zero noise, floating-point noise and objective
 *     perturbation without output noise (its research opt-in: its minimiser identifies the dataset,
 *     test/learners/perturbation/grid-inversion.test.ts)
 *     are labelled so;
 *   - optimiser caps no longer make output perturbation, objective perturbation or AMP release
 *     nothing (a data-dependent failure);
 *   - the discrete noise costs less than 0.1 % of epsilon against the continuous mechanism.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeEvent, laplaceEvent, relativeGaussianEvent, selfComposeEvent } from '../src/accounting/events/constructors.js';
import { parseEvent } from '../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../src/accounting/rdp/accountant.js';
import { laplaceMechanism } from '../src/mechanisms/laplace.js';
import { gaussianMechanism } from '../src/mechanisms/gaussian.js';
import { glmValueAndGradient } from '../src/learners/glm/objective.js';
import { dataForLoss, lossByName } from '../src/learners/glm/losses/by-name.js';
import type { LinearModel } from '../src/learners/models/model.js';
import { gaussianFeatureRho } from '../src/learners/rgm/propose-test-release.js';
import { rgmRidgeSensitivity, type RgmGdPrivacyReport } from '../src/learners/rgm/rgm-gd.js';
import { train, type TrainOptions } from '../src/learners/train.js';
import { defaultRng, seededRng } from '../src/random/rng.js';
import { ZIG_X } from '../src/random/ziggurat.js';
import { syntheticDataset } from '../src/data/synthetic.js';
import { makeLogisticData } from './helpers/logistic-data.js';

const TWO_POW_MINUS_53 = 2 ** -53;

/**
 * Smallest k in [lo, hi] with pred(k) true, for a predicate that is false then true along k
 * (binary search on integers below 2^53).
 */
function firstTrue(lo: number, hi: number, pred: (k: number) => boolean): number {
  while (lo < hi) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (pred(mid)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/**
 * Whether `y` is a possible output of center + sampleLaplace(rng, scale) computed as dpfit's
 * continuous Laplace does: u = k 2^-53 (k < 2^53 from 53 random bits), e = -scale log1p(-u),
 * y = fl(center +- e). For each sign, fl(center + s e(k)) is monotone in k up to the last-ulp
 * wobble of log1p, so the k giving y form a range found by binary search; a window of 64 values
 * around its start absorbs any wobble. Returns false only when no k can give y.
 */
function continuousLaplaceCanProduce(y: number, center: number, scale: number): boolean {
  const e = (k: number) => -scale * Math.log1p(-k * TWO_POW_MINUS_53);
  for (const sign of [1, -1]) {
    const out = (k: number) => center + sign * e(k);
    const reached = (k: number) => (sign === 1 ? out(k) >= y : out(k) <= y);
    const start = firstTrue(0, 2 ** 53 - 1, reached);
    for (let k = Math.max(0, start - 64); k <= Math.min(2 ** 53 - 1, start + 64); k++) if (out(k) === y) return true;
  }
  return false;
}

/**
 * The same for center + std * (standard normal from the Ziggurat of `continuous.ts`), restricted
 * to |y - center| < 3 std (no tail value, all >= 3.44 std, can land there): every value of layer
 * i is fl(fl(m 2^-53) X[i]) for a 53-bit m (inner rectangle and wedge alike), then fl(+-std x),
 * then fl(center + noise) — monotone in m per layer and sign.
 */
function continuousGaussianCanProduce(y: number, center: number, std: number): boolean {
  for (let i = 0; i < 256; i++) {
    for (const sign of [1, -1]) {
      const out = (m: number) => center + sign * std * (m * TWO_POW_MINUS_53 * ZIG_X[i]);
      const reached = (m: number) => (sign === 1 ? out(m) >= y : out(m) <= y);
      if (!reached(2 ** 53 - 1)) continue;
      const start = firstTrue(0, 2 ** 53 - 1, reached);
      for (let m = Math.max(0, start - 4); m <= Math.min(2 ** 53 - 1, start + 4); m++) if (out(m) === y) return true;
    }
  }
  return false;
}

describe('floating-point support attack (Mironov 2012)', () => {
  it('succeeds on the continuous Laplace mechanism: many outputs for x = 0 are impossible for the neighbour x = 1', () => {
    const rng = seededRng(11);
    let impossible = 0;
    const trials = 400;
    for (let t = 0; t < trials; t++) {
      const y = laplaceMechanism(0, { sensitivity: 1, epsilon: 0.5, continuous: true, rng }).value;
      assert.ok(continuousLaplaceCanProduce(y, 0, 2 * (1 + 4 * Number.EPSILON)), 'the checker must accept what the true input produced');
      if (!continuousLaplaceCanProduce(y, 1, 2 * (1 + 4 * Number.EPSILON))) impossible++;
    }
    // The issue measured 60-67 % on the old main; any sizeable fraction is a total privacy failure.
    assert.ok(impossible / trials > 0.2, `only ${impossible} of ${trials}`);
  });

  it('succeeds on the continuous Gaussian mechanism too', () => {
    const rng = seededRng(12);
    let impossible = 0;
    let tried = 0;
    for (let t = 0; t < 300; t++) {
      const result = gaussianMechanism(0.3, { sensitivity: 1, noiseMultiplier: 1, continuous: true, rng });
      if (Math.abs(result.value - 0.3) >= 2.5 * result.noiseStd || Math.abs(result.value - 1.3) >= 2.5 * result.noiseStd) continue;
      tried++;
      assert.ok(continuousGaussianCanProduce(result.value, 0.3, result.noiseStd), 'the checker must accept what the true input produced');
      if (!continuousGaussianCanProduce(result.value, 1.3, result.noiseStd)) impossible++;
    }
    assert.ok(tried > 100 && impossible / tried > 0.02, `${impossible} of ${tried}`);
  });

  it('finds nothing on the default path: every release is a grid point, and every grid point is in both neighbours\' support', () => {
    const rng = seededRng(13);
    for (let t = 0; t < 300; t++) {
      const laplace = laplaceMechanism(0, { sensitivity: 1, epsilon: 0.5, rng });
      const gaussian = gaussianMechanism([0.3, -2], { sensitivity: 1, noiseMultiplier: 1, rng });
      for (const [value, g] of [[laplace.value, laplace.granularity], ...Array.from(gaussian.value, (v) => [v, gaussian.granularity])] as [number, number][]) {
        // On the grid: value = g k exactly, k an integer below 2^53. The discrete Laplace and the
        // discrete Gaussian give every integer positive probability (CKS 2020, Alg. 2-3), so k is
        // reachable from the neighbour's grid point as well: no release rules either input out.
        assert.ok(Number.isInteger(value / g) && Math.abs(value / g) < 2 ** 53, `${value} on grid ${g}`);
        assert.ok(Number.isInteger(Math.log2(g)), `granularity ${g} is a power of two`);
      }
    }
  });
});

/** Every learner at small size, with a target, through the one entry point. */
function learnerCases(rng: () => ReturnType<typeof defaultRng>): TrainOptions[] {
  const common = { epsilon: 1, delta: 1e-5 };
  return [
    { method: 'dpgd', ...common, clipNorm: 1, steps: 10, learningRate: 1, rng: rng() },
    { method: 'dpsgd', ...common, clipNorm: 1, batchSize: 40, epochs: 2, learningRate: 1, rng: rng() },
    { method: 'shuffled', ...common, clipNorm: 1, epochs: 1, learningRate: 0.05, rng: rng() },
    { method: 'output', ...common, regularization: 0.05, rowNormBound: 1, rng: rng() },
    { method: 'outputSgd', ...common, regularization: 0.05, rowNormBound: 1, epochs: 1, batchSize: 20, rng: rng() },
    { method: 'objpert', ...common, rng: rng(), acceptNoGuarantee: true },
    { method: 'amp', ...common, clipNorm: 1, rng: rng() },
  ];
}

/** The model file without its released parameters. */
function withoutParameters(model: LinearModel | undefined): string {
  const { theta: _theta, ...rest } = model as LinearModel;
  return JSON.stringify(rest);
}

describe('model files hold only public or accounted values', () => {
  it('two runs on the same data and one on a replace-one neighbour give identical files once theta is removed', () => {
    const data = makeLogisticData(400, 3, 21);
    const neighbour = { ...data, x: Float64Array.from(data.x), y: Float64Array.from(data.y) };
    neighbour.x.set([0.5, -0.5, 0.5], 0); // row 0 replaced (norm < 1)
    neighbour.y[0] = 1 - data.y[0];
    const first = learnerCases(() => defaultRng());
    const second = learnerCases(() => defaultRng());
    const third = learnerCases(() => defaultRng());
    for (let c = 0; c < first.length; c++) {
      const a = withoutParameters(train(data, first[c]).model);
      const b = withoutParameters(train(data, second[c]).model);
      const n = withoutParameters(train(neighbour, third[c]).model);
      assert.equal(a, b, `${first[c].method}: two runs on the same data`);
      assert.equal(a, n, `${first[c].method}: a neighbouring dataset`);
      assert.ok(JSON.parse(a).privacy.granularity > 0, `${first[c].method}: the grid is in the report`);
    }
  });

  it('RGM gradient descent too (when its Propose-Test-Release check passes, as it does on this data)', () => {
    const d = 4;
    const data = syntheticDataset({ n: 30000, d, labels: 'linear', noiseStd: 0.5, rng: seededRng(21) });
    const neighbour = { ...data, x: Float64Array.from(data.x), y: Float64Array.from(data.y) };
    neighbour.x.set([1, -1, 1, -1], 0);
    neighbour.y[0] = -3;
    const rc = Math.sqrt(3 * d);
    const options = { method: 'rgm', epsilon: 1, delta: 1e-6, steps: 60, regularization: 0.05, featureClip: rc, bClip: 4 * rc, bNormBound: 1.5, learningRate: 0.5 } as const;
    const files = [data, data, neighbour].map((x) => train(x, options).model);
    assert.ok(files.every((m) => m !== undefined), 'PTR passed');
    const [a, b, n] = files.map(withoutParameters);
    assert.equal(a, b);
    assert.equal(a, n);
    assert.deepEqual(Object.keys(JSON.parse(a).privacy.granularities).sort(), ['gradient', 'ptr']);
    assert.doesNotMatch(a, /noisyStatistic/);
  });

  it('objective perturbation no longer publishes ||b|| (the old warning identified the dataset in 200/200 trials)', () => {
    const data = makeLogisticData(300, 3, 22);
    const { model, privacy } = train(data, { method: 'objpert', epsilon: 1, delta: 1e-5, acceptNoGuarantee: true });
    const text = JSON.stringify(model);
    assert.doesNotMatch(text, /\|\|grad\|\|/);
    assert.doesNotMatch(text, /\|\|b\|\|/);
    // The attack: for each candidate dataset D (the data, or the data without its first row:
    // add/remove-one), the released theta implies b_D = -grad J_D(theta); the old report printed a
    // tolerance proportional to ||b||, which matched only the true D. Now no number of the file is
    // near either candidate's ||b_D|| (nor 1e-10 times it plus the old formula's other terms).
    const event = parseEvent(privacy.event);
    const lambda = event.kind === 'objectivePerturbation' ? event.regularization : NaN;
    const theta = Float64Array.from((model as LinearModel).theta);
    const without = { x: data.x.subarray(3), y: data.y.subarray(1), n: data.n - 1, d: 3 };
    const numbers = (text.match(/-?\d+(\.\d+)?(e-?\d+)?/g) ?? []).map(Number).filter((v) => v !== 0);
    for (const candidate of [data, without]) {
      const loss = lossByName('logistic');
      const g = new Float64Array(3);
      glmValueAndGradient(loss, dataForLoss(loss, candidate), theta, g, { regularization: lambda });
      const bNorm = Math.hypot(...g);
      const oldTolerance = 1e-10 * (candidate.n + bNorm + 1);
      for (const v of numbers) {
        assert.ok(Math.abs(v - bNorm) > 1e-6 * bNorm && Math.abs(v - oldTolerance) > 1e-6 * oldTolerance, `${v} matches a candidate's noise norm`);
      }
    }
  });
});

describe('"proven" means proven', () => {
  const data = makeLogisticData(300, 3, 23);
  it('the secure generator and gridded noise: proven (objective perturbation alone: none, its minimiser identifies the dataset)', () => {
    for (const options of learnerCases(() => defaultRng())) {
      const { privacy } = train(data, options);
      assert.equal(privacy.guarantee, options.method === 'objpert' ? 'none' : 'proven', options.method);
      assert.equal(privacy.randomness, 'secure (crypto.getRandomValues)');
    }
  });

  it('a seeded generator: none, and the report carries no seed', () => {
    for (const options of learnerCases(() => seededRng(424242))) {
      const { model, privacy } = train(data, options);
      assert.equal(privacy.guarantee, 'none', options.method);
      assert.doesNotMatch(JSON.stringify(model), /424242/);
      assert.ok(privacy.warnings.some((w) => /seeded/.test(w)), options.method);
    }
  });

  it('zero noise: a privacy block with epsilon Infinity and no guarantee', () => {
    const dpgd = train(data, { method: 'dpgd', noiseMultiplier: 0, delta: 1e-5, clipNorm: 1, steps: 5, learningRate: 1 });
    const dpsgd = train(data, { method: 'dpsgd', noiseMultiplier: 0, delta: 1e-5, clipNorm: 1, batchSize: 30, steps: 5, learningRate: 1 });
    for (const { model, privacy } of [dpgd, dpsgd]) {
      assert.equal(model?.privacy?.epsilon, Infinity);
      assert.equal(privacy.guarantee, 'none');
    }
  });

  it('floating-point noise (opted into): none', () => {
    const { privacy } = train(data, { method: 'dpgd', epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 5, learningRate: 1, continuousNoise: true });
    assert.equal(privacy.guarantee, 'none');
    assert.equal(privacy.granularity, undefined);
  });
});

describe('no data-dependent failure paths', () => {
  it('an optimiser cap of one iteration still releases a model whose tolerance is certified (output, objpert, AMP)', () => {
    const data = makeLogisticData(300, 3, 24);
    const cases: TrainOptions[] = [
      { method: 'output', epsilon: 1, delta: 1e-5, regularization: 0.05, rowNormBound: 1, maxIterations: 1 },
      { method: 'objpert', epsilon: 1, delta: 1e-5, maxIterations: 1, acceptNoGuarantee: true },
      { method: 'amp', epsilon: 1, delta: 1e-5, clipNorm: 1, maxIterations: 1 },
    ];
    for (const options of cases) {
      const { model, diagnostics } = train(data, options);
      assert.ok(model !== undefined, options.method);
      assert.ok(['checked', 'theorem'].includes(String((diagnostics as Record<string, unknown>).certificate)), options.method);
    }
  });
});

describe('the cost of floating-point safety', () => {
  it('RGM gradient descent: its gridded event accounts within 0.1 % of the same release with continuous noise', () => {
    const d = 4;
    const data = syntheticDataset({ n: 30000, d, labels: 'linear', noiseStd: 0.5, rng: seededRng(21) });
    const rc = Math.sqrt(3 * d);
    const result = train(data, { method: 'rgm', epsilon: 1, delta: 1e-6, steps: 60, regularization: 0.05, featureClip: rc, bClip: 4 * rc, bNormBound: 1.5, learningRate: 0.5, rng: seededRng(1) });
    const privacy = result.privacy as RgmGdPrivacyReport;
    const event = parseEvent(privacy.event);
    assert.ok(event.kind === 'compose' && event.events[0].kind === 'laplace' && event.events[1].kind === 'selfCompose');
    if (event.kind !== 'compose' || event.events[0].kind !== 'laplace' || event.events[1].kind !== 'selfCompose' || event.events[1].event.kind !== 'relativeGaussian') return;
    // The continuous mechanism: the unrounded query's (eta, R_rel), the same gamma and baseline, continuous Laplace for the test.
    const exact = rgmRidgeSensitivity({ n: data.n, featureClip: rc, rho: gaussianFeatureRho(d, rc), bClip: 4 * rc, bNormBound: 1.5 });
    const rgm = event.events[1].event;
    const continuous = composeEvent([
      laplaceEvent(event.events[0].noiseMultiplier),
      selfComposeEvent(relativeGaussianEvent({ eta: exact.eta, gamma: rgm.gamma, dimension: d, baselineStd: rgm.baselineStd, rRel: exact.rRel }), 60),
    ]);
    const a = rdpEpsilon(event, privacy.deltaComponents.rdp).epsilon;
    const b = rdpEpsilon(continuous, privacy.deltaComponents.rdp).epsilon;
    assert.ok(a <= 1 && a <= b * 1.001 && a >= b, `gridded ${a} vs continuous ${b}`);
  });

  it('explicit noise: the gridded event accounts within 0.1 % of the continuous one, for every gradient learner and the output methods', () => {
    const data = makeLogisticData(500, 4, 25);
    const base: TrainOptions[] = [
      { method: 'dpgd', noiseMultiplier: 20, delta: 1e-5, clipNorm: 1, steps: 30, learningRate: 1 },
      { method: 'dpsgd', noiseMultiplier: 1.1, delta: 1e-5, clipNorm: 1, batchSize: 50, epochs: 3, learningRate: 1 },
      { method: 'shuffled', noiseMultiplier: 30, delta: 1e-5, clipNorm: 1, epochs: 1, learningRate: 0.05 },
      { method: 'output', noiseMultiplier: 3, delta: 1e-5, regularization: 0.05, rowNormBound: 1 },
      { method: 'outputSgd', noiseMultiplier: 3, delta: 1e-5, regularization: 0.05, rowNormBound: 1, epochs: 1, batchSize: 20 },
    ];
    for (const options of base) {
      const discrete = train(data, options).privacy;
      const continuous = train(data, { ...options, continuousNoise: true } as TrainOptions).privacy;
      const account = (e: unknown) => {
        const event = parseEvent(e);
        return gaussianCompositionEpsilon(event, 1e-5)?.epsilon ?? rdpEpsilon(event, 1e-5).epsilon;
      };
      const a = account(discrete.event);
      const b = account(continuous.event);
      assert.ok(a <= b * 1.001 && a >= b * 0.99, `${options.method}: gridded ${a} vs continuous ${b}`);
    }
  });
});
