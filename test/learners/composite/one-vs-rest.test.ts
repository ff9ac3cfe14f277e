import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseEvent } from '../../../src/accounting/events/json.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { sampleGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';
import { calibrateCompositeNoise } from '../../../src/learners/composite/gradient-methods.js';
import { evaluateOneVsRest, predictClasses, trainOneVsRest } from '../../../src/learners/composite/one-vs-rest.js';

/** Three well separated Gaussian blobs in the plane plus an intercept column, rows scaled to norm <= 1. */
function blobs(n: number, seed: number) {
  const rng = seededRng(seed);
  const centres = [[0.6, 0], [-0.3, 0.5], [-0.3, -0.5]];
  const d = 3;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const c = i % 3;
    y[i] = c;
    const row = [centres[c][0] + 0.1 * sampleGaussian(rng), centres[c][1] + 0.1 * sampleGaussian(rng), 0.5];
    const norm = Math.max(1, Math.hypot(...row));
    for (let j = 0; j < d; j++) x[i * d + j] = row[j] / norm;
  }
  return { x, y, n, d };
}

describe('one-vs-rest multi-class classification', () => {
  const classes = ['a', 'b', 'c'];

  it('without noise, separates three blobs', () => {
    const data = blobs(300, 1);
    const result = trainOneVsRest(data, { classes, base: { method: 'dpgd', clipNorm: 1, steps: 300, learningRate: 5 }, noiseMultiplier: 0, delta: 1e-5 });
    assert.equal(result.model.models.length, 3);
    assert.ok(evaluateOneVsRest(result.model, blobs(300, 2)).accuracy > 0.97);
    assert.equal(result.privacy.epsilon, Infinity);
  });

  it('splits the budget by composing the K runs: the whole release re-accounts to <= target', () => {
    const data = blobs(600, 3);
    for (const base of [
      { method: 'dpgd' as const, clipNorm: 1, steps: 50, learningRate: 2 },
      { method: 'dpsgd' as const, clipNorm: 1, batchSize: 60, epochs: 5, learningRate: 2 },
    ]) {
      const result = trainOneVsRest(data, { classes, base, epsilon: 2, delta: 1e-5, rng: seededRng(4) });
      const event = parseEvent(result.privacy.event);
      assert.equal(event.kind, 'selfCompose');
      assert.equal(event.kind === 'selfCompose' && event.count, 3);
      const accounted = gaussianCompositionEpsilon(event, 1e-5)?.epsilon ?? rdpEpsilon(event, 1e-5).epsilon;
      assert.ok(accounted <= 2 && accounted > 1.99, `${base.method}: ${accounted}`);
      // Each class got the same noise, larger than a single binary run at epsilon 2 would need.
      const single = calibrateCompositeNoise(base, data, (run) => run, { epsilon: 2, delta: 1e-5 });
      assert.ok(result.diagnostics.noiseMultiplier > single.noiseMultiplier);
      assert.ok(evaluateOneVsRest(result.model, blobs(300, 5)).accuracy > 0.8, base.method);
    }
  });

  it('predicts the class with the largest margin, and refuses bad labels', () => {
    const model = {
      format: 'dpfit-one-vs-rest-model/1' as const,
      classes,
      models: [[1, 0], [0, 1], [-1, -1]].map((theta) => ({ format: 'dpfit-linear-model/1' as const, loss: { name: 'logistic', parameters: {} }, task: 'classification' as const, theta })),
    };
    const x = Float64Array.from([2, 1, 0, 3, -1, -1]);
    assert.deepEqual(Array.from(predictClasses(model, { x, n: 3, d: 2 })), [0, 1, 2]);
    const data = blobs(30, 1);
    const base = { method: 'dpgd' as const, clipNorm: 1, steps: 5, learningRate: 1 };
    assert.throws(() => trainOneVsRest({ ...data, y: data.y.map((v) => (v === 2 ? 3 : v)) }, { classes, base, epsilon: 1, delta: 1e-5 }), /class index/);
    // Data holding one class only train (a refusal would be a status that one record decides, leaking it), with the event of data holding every class.
    const oneClass = trainOneVsRest({ ...data, y: new Float64Array(30) }, { classes, base, epsilon: 1, delta: 1e-5 });
    assert.deepEqual(oneClass.privacy.event, trainOneVsRest(data, { classes, base, epsilon: 1, delta: 1e-5 }).privacy.event);
    assert.equal(oneClass.model?.models.length, 3);
    assert.throws(() => trainOneVsRest(data, { classes: ['only'], base, epsilon: 1, delta: 1e-5 }), /at least two/);
  });
});
