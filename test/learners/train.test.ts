import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseEvent } from '../../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../src/accounting/rdp/accountant.js';
import { InvalidParameterError } from '../../src/errors.js';
import { evaluate } from '../../src/learners/models/model.js';
import { train, TRAIN_METHODS, type TrainOptions } from '../../src/learners/train.js';
import { seededRng } from '../../src/random/rng.js';
import { makeLogisticData } from '../helpers/logistic-data.js';

test('train(dataset, options): every classification method through one entry point, each event re-accounted <= target', () => {
  const data = makeLogisticData(2000, 3, 7);
  const common = { epsilon: 2, delta: 1e-5 };
  const cases: TrainOptions[] = [
    { method: 'dpgd', ...common, clipNorm: 1, steps: 50, learningRate: 2, rng: seededRng(1) },
    { method: 'dpsgd', ...common, clipNorm: 1, batchSize: 100, epochs: 3, learningRate: 1, rng: seededRng(2) },
    { method: 'shuffled', ...common, clipNorm: 1, epochs: 1, learningRate: 0.05, rng: seededRng(3) },
    { method: 'output', ...common, regularization: 0.01, rowNormBound: 1, rng: seededRng(4) },
    { method: 'outputSgd', ...common, regularization: 0.05, rowNormBound: 1, epochs: 2, batchSize: 100, rng: seededRng(5) },
    // Objective perturbation alone is refused by default (its minimiser identifies the dataset); research opt-in.
    { method: 'objpert', ...common, rng: seededRng(6), acceptNoGuarantee: true },
    { method: 'amp', ...common, clipNorm: 1, rng: seededRng(7) },
  ];
  assert.deepEqual(new Set([...cases.map((c) => c.method), 'rgm']), new Set(TRAIN_METHODS));
  for (const options of cases) {
    const { model, privacy } = train(data, options);
    assert.ok(model !== undefined, options.method);
    // Re-accounted independently: exactly for Gaussian-only events, by RDP otherwise (what those methods calibrate with).
    const event = parseEvent(privacy.event);
    const accounted = gaussianCompositionEpsilon(event, 1e-5)?.epsilon ?? rdpEpsilon(event, 1e-5).epsilon;
    assert.ok(accounted <= 2, `${options.method}: re-accounted ${accounted}`);
    assert.ok(privacy.epsilon <= 2, `${options.method}: ${privacy.epsilon}`);
    assert.ok((evaluate(model, data).accuracy ?? 0) > 0.6, `${options.method} accuracy`);
  }
  assert.throws(() => train(data, { method: 'magic' } as unknown as TrainOptions), InvalidParameterError);
});
