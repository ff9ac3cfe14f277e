/**
 * Shuffled SGD's last-iterate accounting (amplification by iteration on a lattice,
 * `src/learners/gradient/lattice-sgd.ts`, `004` Sec. 3.3): the map's non-expansiveness up to the stated
 * slack (the property the theorem needs, checked on adversarial inputs), the event's RDP against
 * the thesis' closed form, and the learner's report (re-derivable, better than plain composition
 * where the theory allows, refusals naming the failed condition).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { selfComposeEvent, shuffledLastIterateEvent } from '../../../src/accounting/events/constructors.js';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { lastIteratePositionRdp, shuffledLastIterateEventRdp, shuffledLastIterateRdp } from '../../../src/accounting/rdp/amplification-by-iteration.js';
import { exactGaussianCompositionNoiseMultiplier } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { InvalidParameterError, UnsupportedEventError } from '../../../src/errors.js';
import { lossByName } from '../../../src/learners/glm/losses/by-name.js';
import { clipThresholds } from '../../../src/learners/glm/clip-thresholds.js';
import { latticeMap, latticeScratch, latticeSgdObstacle, planLatticeSgd, type LatticeSgdSettings } from '../../../src/learners/gradient/lattice-sgd.js';
import { trainShuffledSgd } from '../../../src/learners/gradient/shuffled-sgd.js';
import { seededRng } from '../../../src/random/rng.js';

/** n rows in d dims with norms in (0, R], labels +-1; a fixed seed. */
function syntheticData(n: number, d: number, R: number, seed: number) {
  const rng = seededRng(seed);
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const w = Float64Array.from({ length: d }, () => rng.nextDouble() * 2 - 1);
  for (let i = 0; i < n; i++) {
    let ss = 0;
    for (let j = 0; j < d; j++) {
      const v = rng.nextDouble() * 2 - 1;
      x[i * d + j] = v;
      ss += v * v;
    }
    const scale = (R * (0.2 + 0.8 * rng.nextDouble())) / Math.sqrt(ss);
    let m = 0;
    for (let j = 0; j < d; j++) {
      x[i * d + j] *= scale;
      m += x[i * d + j] * w[j];
    }
    y[i] = m + 0.3 * (rng.nextDouble() - 0.5) > 0 ? 1 : -1;
  }
  return { x, y, n, d };
}

const norm = (v: Float64Array) => Math.sqrt(v.reduce((s, a) => s + a * a, 0));

test('the computed lattice map is non-expansive up to the stated slack, and two records move it by at most Delta (the conditions of Thm. 3.6)', () => {
  // Adversarial settings: large learning rate at the non-expansiveness limit, points near and
  // beyond the projection radius, squared loss (curvature 1) and logistic, with clipping binding.
  for (const lossName of ['logistic', 'squared', 'huber'] as const) {
    const loss = lossByName(lossName);
    const d = 5;
    const R = 1.5;
    const data = syntheticData(40, d, R, 7);
    const beta = loss.curvatureBound;
    const settings: LatticeSgdSettings = {
      n: 40, stepsPerEpoch: 40, d, clipNorm: 0.5, learningRate: 1.99 / (beta * R * R + 0.1), regularization: 0.1, projectionRadius: 3,
      rowNormBound: R, curvatureBound: beta,
    };
    assert.equal(latticeSgdObstacle(settings), undefined);
    const plan = planLatticeSgd(settings, 1);
    const thresholds = clipThresholds(data, settings.clipNorm).values;
    const scratch = latticeScratch(d);
    const h = plan.granularity;
    const point = fc.array(fc.double({ min: -4, max: 4, noNaN: true }), { minLength: d, maxLength: d });
    fc.assert(
      fc.property(point, point, fc.integer({ min: 0, max: 39 }), fc.integer({ min: 0, max: 39 }), (pa, pb, i, i2) => {
        const a = Float64Array.from(pa, (v) => Math.round(v / h));
        // b near a half the time: the slack matters most for close points.
        const b = i2 % 2 === 0 ? Float64Array.from(pb, (v) => Math.round(v / h)) : Float64Array.from(a, (v, j) => v + Math.round((pb[j] * 1e-9) / h));
        const ga = new Float64Array(d);
        const gb = new Float64Array(d);
        latticeMap(plan, settings, loss, data, thresholds, i, a, scratch, ga);
        latticeMap(plan, settings, loss, data, thresholds, i, b, scratch, gb);
        const diff = norm(Float64Array.from(ga, (v, j) => v - gb[j]));
        const before = norm(Float64Array.from(a, (v, j) => v - b[j]));
        assert.ok(diff <= before + plan.perStepSlack, `${lossName}: ${diff} > ${before} + ${plan.perStepSlack}`);
        // Same input, two different records: within Delta.
        const gc = new Float64Array(d);
        latticeMap(plan, settings, loss, data, thresholds, i2, a, scratch, gc);
        assert.ok(norm(Float64Array.from(ga, (v, j) => v - gc[j])) <= plan.stepShift);
      }),
      { numRuns: 300, seed: 11 },
    );
  }
});

test('past the non-expansive step size the map expands, and the learner refuses the last-iterate bound naming the condition', () => {
  // Squared loss, one row x = (1), no clipping in reach: G(u) = u - eta (u - y) has slope 1 - eta;
  // at eta = 2.5 it stretches distances by 1.5, beyond any rounding slack.
  const loss = lossByName('squared');
  const data = { x: Float64Array.of(1), y: Float64Array.of(0), n: 1, d: 1 };
  const ok: LatticeSgdSettings = { n: 1, stepsPerEpoch: 1, d: 1, clipNorm: 100, learningRate: 1.9, regularization: 0, projectionRadius: 10, rowNormBound: 1, curvatureBound: 1 };
  const bad = { ...ok, learningRate: 2.5 };
  assert.match(latticeSgdObstacle(bad) ?? '', /not provably non-expansive: learningRate x \(beta_f R\^2 \+ regularization\) = 2\.5/);
  const plan = planLatticeSgd(ok, 1);
  const h = plan.granularity;
  const badPlan = { ...plan };
  const scratch = latticeScratch(1);
  const g = (settings: LatticeSgdSettings, u: number) => {
    const out = new Float64Array(1);
    latticeMap(badPlan, settings, loss, data, clipThresholds(data, settings.clipNorm).values, 0, Float64Array.of(Math.round(u / h)), scratch, out);
    return out[0];
  };
  const stretch = Math.abs(g(bad, 1) - g(bad, 0.5)) / Math.round(0.5 / h);
  assert.ok(Math.abs(stretch - 1.5) < 1e-6, `stretch ${stretch}`);
  assert.ok(Math.abs(g(ok, 1) - g(ok, 0.5)) <= Math.round(0.5 / h) + plan.perStepSlack);

  const train = syntheticData(50, 3, 1, 3);
  assert.throws(
    () => trainShuffledSgd(train, { loss: 'logistic', clipNorm: 1, epochs: 1, learningRate: 20, noiseMultiplier: 2, delta: 1e-5, rowNormBound: 1, lastIterate: true, rng: seededRng(1) }),
    (e: unknown) => e instanceof InvalidParameterError && /lastIterate/.test(e.message) && /non-expansive/.test(e.message),
  );
  assert.throws(
    () => trainShuffledSgd(train, { loss: 'logistic', clipNorm: 1, epochs: 1, learningRate: 0.1, noiseMultiplier: 2, delta: 1e-5, lastIterate: true, rng: seededRng(1) }),
    (e: unknown) => e instanceof InvalidParameterError && /row-norm bound/.test(e.message),
  );
  // 'auto' without the conditions: plain composition, and the report says why.
  const plain = trainShuffledSgd(train, { loss: 'logistic', clipNorm: 1, epochs: 1, learningRate: 20, noiseMultiplier: 2, delta: 1e-5, rowNormBound: 1, rng: seededRng(1) });
  assert.ok(plain.privacy.warnings.some((w) => /last-iterate bound .* was not used: the step is not provably non-expansive/.test(w)));
});

test('the event reproduces 004 Thm. 3.6 with Lemma 3.1 (exact arithmetic: no shift growth), and its buckets only round up', () => {
  for (const [n, z] of [[1000, 1], [30_000, 2], [9000, 0.7]] as const) {
    const event = shuffledLastIterateEvent({ datasetSize: n, stepsPerEpoch: n, noiseMultiplier: z });
    for (const order of [1.5, 2, 4, 16, 64]) {
      // The thesis' closed form summed position by position (no buckets): eps_k = 2 alpha / (z^2 k).
      const direct = shuffledLastIterateRdp(order, { n, epochs: 1, noiseMultiplier: z, lipschitzFactor: 1 });
      const bucketed = shuffledLastIterateEventRdp(order, event);
      assert.ok(bucketed >= direct * (1 - 1e-11), `n ${n} z ${z} alpha ${order}: ${bucketed} < ${direct}`);
      assert.ok(bucketed <= direct * (1 + 2e-4) + 1e-15, `n ${n} z ${z} alpha ${order}: ${bucketed} vs ${direct}`);
    }
  }
  // The per-record bound falls with the number of later steps (k), as 1/k.
  const eps = [1, 2, 4, 8, 16].map((k) => lastIteratePositionRdp(4, 1, 1, k));
  for (let i = 1; i < eps.length; i++) assert.ok(Math.abs(eps[i] / eps[i - 1] - 0.5) < 1e-9);
  // A partial epoch (m < n) is a mixture with "not processed" (divergence 0): smaller than a full one.
  const full = shuffledLastIterateEventRdp(8, shuffledLastIterateEvent({ datasetSize: 1000, stepsPerEpoch: 1000, noiseMultiplier: 1 }));
  const part = shuffledLastIterateEventRdp(8, shuffledLastIterateEvent({ datasetSize: 1000, stepsPerEpoch: 100, noiseMultiplier: 1 }));
  assert.ok(part < full);
  // Shift growth only costs privacy.
  const grown = shuffledLastIterateEventRdp(8, shuffledLastIterateEvent({ datasetSize: 1000, stepsPerEpoch: 1000, noiseMultiplier: 1, shiftGrowth: 1e-3 }));
  assert.ok(grown > full);
});

test('the event parses from JSON, is accounted by RDP, and the PLD accountant refuses it by name', () => {
  const event = parseEvent({ kind: 'selfCompose', count: 3, event: { kind: 'shuffledLastIterate', datasetSize: 5000, stepsPerEpoch: 5000, noiseMultiplier: 2, shiftGrowth: 1e-9 } });
  const epsilon = rdpEpsilon(event, 1e-5).epsilon;
  assert.ok(epsilon > 0 && epsilon < rdpEpsilon(selfComposeEvent(parseEvent({ kind: 'gaussian', noiseMultiplier: 1 }), 3), 1e-5).epsilon);
  assert.throws(() => pldEpsilon(event, 1e-5), (e: unknown) => e instanceof UnsupportedEventError && /amplification by iteration/.test(e.message));
  assert.throws(() => parseEvent({ kind: 'shuffledLastIterate', datasetSize: 10, stepsPerEpoch: 11, noiseMultiplier: 1 }), /stepsPerEpoch/);
  assert.throws(() => parseEvent({ kind: 'shuffledLastIterate', datasetSize: 10, stepsPerEpoch: 5, noiseMultiplier: 1, shiftGrowth: -1 }), /shiftGrowth/);
});

test('shuffled SGD: the last-iterate guarantee beats plain composition, meets the target, and is re-derivable from the event in the report', () => {
  const data = syntheticData(4000, 6, 1, 5);
  const result = trainShuffledSgd(data, {
    loss: 'logistic', clipNorm: 0.25, epochs: 2, learningRate: 0.05, epsilon: 1, delta: 1e-5, rowNormBound: 1, rng: seededRng(2),
  });
  const { privacy } = result;
  assert.ok(privacy.epsilon <= 1);
  const event = parseEvent(privacy.event);
  assert.equal(event.kind, 'selfCompose');
  assert.equal(event.kind === 'selfCompose' && event.event.kind, 'shuffledLastIterate');
  assert.equal(rdpEpsilon(event, 1e-5).epsilon, privacy.epsilon);
  const plain = privacy.comparisons?.plainComposition;
  assert.ok(plain !== undefined && plain.epsilon > 1.5 * privacy.epsilon, `plain ${plain?.epsilon} vs ${privacy.epsilon}`);
  assert.equal(result.diagnostics.accounting, 'lastIterate');
  // Less noise than plain composition needs for the same target (two epochs of gaussian(z/2), exactly).
  const plainNoise = 2 * exactGaussianCompositionNoiseMultiplier(1, 1e-5, 2);
  assert.ok((result.diagnostics.noiseMultiplier as number) < 0.8 * plainNoise, `${result.diagnostics.noiseMultiplier} vs ${plainNoise}`);
  // It learns: better than the majority class on its own training data.
  const theta = result.model!.theta;
  let correct = 0;
  let positives = 0;
  for (let i = 0; i < data.n; i++) {
    let m = 0;
    for (let j = 0; j < data.d; j++) m += theta[j] * data.x[i * data.d + j];
    if ((m > 0 ? 1 : -1) === data.y[i]) correct++;
    if (data.y[i] === 1) positives++;
  }
  assert.ok(correct / data.n > Math.max(positives, data.n - positives) / data.n + 0.05, `accuracy ${correct / data.n}`);
});

test('with few steps per epoch plain composition can win, and then it is the headline with the last-iterate bound as a comparison', () => {
  const data = syntheticData(200, 3, 1, 9);
  // tau n = 2 steps per partial epoch: almost no later steps to amplify by iteration.
  const result = trainShuffledSgd(data, { loss: 'logistic', clipNorm: 1, epochs: 0.02, fraction: 0.01, learningRate: 0.1, noiseMultiplier: 3, delta: 1e-5, rowNormBound: 1, rng: seededRng(4) });
  const epsilons = [result.privacy.epsilon, result.privacy.comparisons?.lastIterate?.epsilon ?? result.privacy.comparisons?.plainComposition?.epsilon];
  assert.ok(epsilons[1] !== undefined && result.privacy.epsilon <= (epsilons[1] as number));
});

test('a NaN derivative in the lattice map becomes c = +0, counted as clipped (as in every clipped sum): the step stays on the lattice, finite', () => {
  const logistic = lossByName('logistic');
  const nanLoss = { ...logistic, derivative: () => Number.NaN };
  const zeroLoss = { ...logistic, derivative: () => 0 };
  const d = 3;
  const R = 1;
  const data = syntheticData(4, d, R, 3);
  const settings: LatticeSgdSettings = {
    n: 4, stepsPerEpoch: 4, d, clipNorm: 0.5, learningRate: 1, regularization: 0.1, projectionRadius: 2, rowNormBound: R, curvatureBound: logistic.curvatureBound,
  };
  const plan = planLatticeSgd(settings, 1);
  const thresholds = clipThresholds(data, settings.clipNorm).values;
  const k = Float64Array.of(5, -7, 11);
  const got = new Float64Array(d);
  const want = new Float64Array(d);
  assert.equal(latticeMap(plan, settings, nanLoss, data, thresholds, 1, k, latticeScratch(d), got), true, 'a NaN counts as clipped');
  latticeMap(plan, settings, zeroLoss, data, thresholds, 1, k, latticeScratch(d), want);
  assert.deepEqual([...got], [...want]);
  for (const v of got) assert.ok(Number.isInteger(v), `${v}`);
});
