import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { composeEvent, selfComposeEvent } from '../../../src/accounting/events/constructors.js';
import { eventToJson, parseEvent } from '../../../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { seededRng } from '../../../src/random/rng.js';
import { calibrateCompositeNoise, gradientRunEvent, trainGradientMethod, type GradientMethodOptions } from '../../../src/learners/composite/gradient-methods.js';
import { poissonMeanForGrid, tuneGradientMethodHonestly } from '../../../src/learners/composite/tune-gradient-method.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';

const METHODS: GradientMethodOptions[] = [
  { method: 'dpgd', clipNorm: 1, steps: 20, learningRate: 1 },
  { method: 'dpsgd', clipNorm: 1, batchSize: 20, epochs: 2, learningRate: 1 },
  { method: 'shuffled', clipNorm: 1, epochs: 2, fraction: 0.5, learningRate: 0.1 },
];

describe('gradient methods behind one dispatcher', () => {
  it('the event announced before training is the event each learner reports', () => {
    const data = makeLogisticData(100, 3, 1);
    for (const options of METHODS) {
      const announced = eventToJson(gradientRunEvent(options, data, 1.7));
      const result = trainGradientMethod(data, options, { noiseMultiplier: 1.7, delta: 1e-5, rng: seededRng(2) });
      assert.deepEqual(result.privacy.event, announced, options.method);
    }
  });

  it('calibrates a composite release: exact for Gaussian compositions, RDP otherwise, always <= target', () => {
    const n = 1000;
    for (const options of METHODS) {
      for (const epsilon of [0.3, 2]) {
        const wrap = (run: ReturnType<typeof gradientRunEvent>) => selfComposeEvent(run, 3);
        const { event } = calibrateCompositeNoise(options, { n, d: 3 }, wrap, { epsilon, delta: 1e-5 });
        const exact = gaussianCompositionEpsilon(event, 1e-5);
        const accounted = exact?.epsilon ?? rdpEpsilon(event, 1e-5).epsilon;
        assert.ok(accounted <= epsilon, `${options.method} ${epsilon}: ${accounted}`);
        assert.ok(accounted >= epsilon * 0.999, `${options.method} ${epsilon}: ${accounted} wastes budget`);
        assert.equal(exact === undefined, options.method === 'dpsgd');
      }
    }
  });
});

describe('honest learning-rate tuning of a gradient learner', () => {
  it("poissonMeanForGrid reproduces 003 Sec. 5's mu ~ 15.4 for P[K > 10] = 0.9 (scipy: 15.406641171976522)", () => {
    assert.ok(Math.abs(poissonMeanForGrid(10, 0.9) - 15.406641171976522) < 1e-9);
    assert.ok(poissonMeanForGrid(3, 0.5) < poissonMeanForGrid(3, 0.9));
  });

  it('pays for the tuning: the released event is repeatAndSelect and re-accounts to <= target, with more noise than one run needs', () => {
    const data = makeLogisticData(400, 3, 5);
    const validation = makeLogisticData(200, 3, 6);
    const base: GradientMethodOptions = { method: 'dpsgd', clipNorm: 1, batchSize: 40, epochs: 3, learningRate: 1 };
    const result = tuneGradientMethodHonestly(data, {
      base,
      learningRates: [0.01, 0.1, 1, 10],
      distribution: { kind: 'poisson', mean: 5 },
      epsilon: 1,
      delta: 1e-5,
      publicValidation: validation,
      rng: seededRng(9),
    });
    const event = parseEvent(result.privacy.event);
    assert.equal(event.kind, 'repeatAndSelect');
    assert.ok(rdpEpsilon(event, 1e-5).epsilon <= 1);
    assert.ok(result.privacy.epsilon <= 1);
    const single = calibrateCompositeNoise(base, data, (run) => run, { epsilon: 1, delta: 1e-5 });
    assert.ok(result.noiseMultiplier > single.noiseMultiplier, 'tuning must cost noise');
    if (result.model !== undefined) {
      assert.ok([0.01, 0.1, 1, 10].includes(result.candidate as number));
      assert.equal(result.model.privacy?.event, result.privacy.event);
    }
  });

  it('refuses an empty grid and a non-positive learning rate', () => {
    const data = makeLogisticData(50, 2, 1);
    const base: GradientMethodOptions = { method: 'dpgd', clipNorm: 1, steps: 5, learningRate: 1 };
    const common = { base, epsilon: 1, delta: 1e-5, publicValidation: data };
    assert.throws(() => tuneGradientMethodHonestly(data, { ...common, learningRates: [] }), InvalidParameterError);
    assert.throws(() => tuneGradientMethodHonestly(data, { ...common, learningRates: [0.1, -1] }), /learningRates\[1\]/);
    // An unknown composite is still accounted by RDP (compose of two runs).
    const { event } = calibrateCompositeNoise(base, { n: 50, d: 2 }, (run) => composeEvent([run, run]), { epsilon: 1, delta: 1e-5 });
    assert.ok((gaussianCompositionEpsilon(event, 1e-5)?.epsilon ?? Infinity) <= 1);
  });
});
