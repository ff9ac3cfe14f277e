/**
 * `train()` on what `loadDataset` returns (the schema's public bounds filled in as `dpfit train`
 * fills them), its refusal without a clipping norm, and the scikit-learn-like estimators.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { DpfitError, InvalidParameterError } from '../../src/errors.js';
import { PrivateLinearRegression, PrivateLogisticRegression } from '../../src/learners/estimators.js';
import { evaluate } from '../../src/learners/models/model.js';
import { train } from '../../src/learners/train.js';
import { seededRng } from '../../src/random/rng.js';
import { makeLogisticData } from '../helpers/logistic-data.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../helpers/people.js';

async function people(rows = 800, seed = 5) {
  const fixture = peopleFixture('dpfit-estimators-', rows, seed);
  return { ...fixture, prepared: await loadDataset(fixture.data, parseSchema(PEOPLE_SCHEMA)) };
}

test('train(loadDataset(...)): the clipping norm is the schema-derived Lipschitz bound, as dpfit train; same seed, same model as the CLI', async () => {
  const { data, schema, prepared } = await people();
  // Logistic loss: |f'| <= 1, so L = R, the schema's row-norm bound (003 Thm. 3.1's L = sup|f'| R).
  const options = { method: 'dpsgd', epsilon: 2, delta: 1e-5, batchSize: 100, epochs: 2, learningRate: 1 } as const;
  const filled = train(prepared, { ...options, rng: seededRng(9) });
  const explicit = train(prepared.dataset, { ...options, clipNorm: prepared.rowNormBound, featureNames: prepared.dataset.featureNames, rng: seededRng(9) });
  assert.deepEqual(filled.model?.theta, explicit.model?.theta);
  assert.deepEqual(filled.privacy, explicit.privacy);
  assert.equal(filled.diagnostics.clipNorm, prepared.rowNormBound);
  assert.deepEqual(filled.model?.featureNames, prepared.dataset.featureNames);
  // The CLI with the same flags and seed draws the same noise: bit-identical coefficients.
  const cli = await runCli('train', '--data', data, '--schema', schema, '--epsilon', '2', '--batch-size', '100', '--epochs', '2', '--learning-rate', '1', '--seed', '9', '--json');
  assert.equal(cli.code, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout).model.theta, filled.model?.theta);
});

test('train(loadDataset(...)) fills the bounds of amp, output and rgm from the schema; a loss without a Lipschitz bound is refused by name', async () => {
  const { prepared } = await people(600, 6);
  const amp = train(prepared, { method: 'amp', epsilon: 1, delta: 1e-5, rng: seededRng(1) });
  assert.equal(amp.diagnostics.clipNorm, prepared.rowNormBound);
  const output = train(prepared, { method: 'output', epsilon: 1, delta: 1e-5, regularization: 0.05, rng: seededRng(2) });
  assert.ok(output.model !== undefined && output.privacy.epsilon <= 1);
  // RGM: R_c = the row-norm bound, B = R_c times the label bound (as dpfit train --method rgm).
  const rgmOptions = { method: 'rgm', epsilon: 4, delta: 1e-5, steps: 10, regularization: 0.1 } as const;
  const rgm = train(prepared, { ...rgmOptions, rng: seededRng(3) });
  const rgmExplicit = train(prepared.dataset, { ...rgmOptions, featureClip: prepared.rowNormBound, bClip: prepared.rowNormBound * prepared.labelBound, featureNames: prepared.dataset.featureNames, rng: seededRng(3) });
  assert.deepEqual(rgm.privacy, rgmExplicit.privacy);
  assert.deepEqual(rgm.model?.theta, rgmExplicit.model?.theta);
  // Squared loss on a bounded label: |z - y| is unbounded without a parameter bound, so no clipping norm follows from the schema.
  assert.throws(() => train(prepared, { method: 'dpgd', loss: 'squared', epsilon: 1, delta: 1e-5, steps: 5, learningRate: 1 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'clipNorm' && /no finite Lipschitz bound/.test(e.message));
});

test('train(dataset) without clipNorm names clipNorm and says how to get it (never "got undefined")', () => {
  const data = makeLogisticData(200, 2, 1);
  for (const method of ['dpsgd', 'dpgd', 'shuffled'] as const) {
    assert.throws(
      () => train(data, { method, epsilon: 1, delta: 1e-5, batchSize: 10, epochs: 1, steps: method === 'dpgd' ? 5 : undefined, learningRate: 1 } as never),
      (e: unknown) => e instanceof InvalidParameterError && e.param === 'clipNorm' && /loadDataset/.test(e.message) && !/undefined/.test(e.message),
      method,
    );
  }
});

test('PrivateLogisticRegression: fit / predict / score / privacy, dpsgd by default, the report the same as train()', async () => {
  const { prepared } = await people(1500, 7);
  const clf = new PrivateLogisticRegression({ epsilon: 1, delta: 1e-5, rng: seededRng(3) }).fit(prepared);
  assert.equal(clf.privacy.neighboringRelation, 'addOrRemoveOne', 'dpsgd (the CLI default): add/remove-one');
  assert.ok(clf.privacy.epsilon <= 1);
  const labels = clf.predict(prepared);
  assert.ok(labels.every((v) => v === 0 || v === 1));
  // score is the accuracy, computed here independently from predict.
  const correct = labels.reduce((a, v, i) => a + (v === (prepared.dataset.y[i] > 0 ? 1 : 0) ? 1 : 0), 0);
  assert.equal(clf.score(prepared), correct / prepared.dataset.n);
  assert.ok(clf.score(prepared) > 0.7, `accuracy ${clf.score(prepared)}`);
  // The same options through train(): the CLI defaults (batch min(256, n), 10 epochs, learning rate 1 / beta,
  // beta = sup f'' R^2 = R^2 / 4 for the logistic loss on the schema's rows).
  const learningRate = 1 / (prepared.rowNormBound ** 2 / 4);
  const direct = train(prepared, { method: 'dpsgd', epsilon: 1, delta: 1e-5, batchSize: 256, epochs: 10, learningRate, rng: seededRng(3) });
  assert.deepEqual(clf.model.theta, direct.model?.theta);
  assert.deepEqual(clf.privacy, direct.privacy);
  // Another method, and errors before fit.
  const amp = new PrivateLogisticRegression({ epsilon: 1, method: 'amp', rng: seededRng(4) }).fit(prepared);
  assert.equal(amp.privacy.delta <= 1e-5, true, 'delta defaults to 1e-5');
  assert.throws(() => new PrivateLogisticRegression({ epsilon: 1 }).privacy, (e: unknown) => e instanceof DpfitError && /not fitted/.test(e.message));
});

test('PrivateLinearRegression: score is R^2; without a Lipschitz bound the clipping norm must be given', () => {
  // y = 2 x1 - x2 + small noise, rows of norm <= 1.
  const rng = seededRng(11);
  const n = 2000;
  const x = new Float64Array(2 * n);
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    x[2 * i] = rng.nextDouble() - 0.5;
    x[2 * i + 1] = rng.nextDouble() - 0.5;
    y[i] = 2 * x[2 * i] - x[2 * i + 1] + 0.05 * (rng.nextDouble() - 0.5);
  }
  const data = { x, y, n, d: 2 };
  assert.throws(() => new PrivateLinearRegression({ epsilon: 1 }).fit(data), (e: unknown) => e instanceof InvalidParameterError && e.param === 'clipNorm');
  const reg = new PrivateLinearRegression({ epsilon: 4, method: 'dpgd', clipNorm: 2, steps: 200, learningRate: 2, rng: seededRng(12) }).fit(data);
  assert.equal(reg.score(data), evaluate(reg.model, data).r2);
  assert.ok(reg.score(data) > 0.8, `R^2 ${reg.score(data)}`);
  assert.equal(reg.predict(data).length, n);
});
