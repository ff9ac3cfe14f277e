/**
 * The public rules behind the defaults (`src/learners/defaults.ts`) that are not checked through a
 * learner elsewhere: shuffled SGD's fraction and step, and the work its registry entry declares to
 * `cli/limits.ts` (the steps the run then takes).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextDown } from '../../src/accounting/float-steps.js';
import { DEFAULT_DPGD_STEPS, DEFAULT_SHUFFLED_EPOCHS, defaultShuffledFraction, defaultShuffledLearningRate } from '../../src/learners/defaults.js';
import { shuffled } from '../../src/learners/gradient/shuffled-learner.js';
import { train } from '../../src/learners/train.js';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { seededRng } from '../../src/random/rng.js';
import { PEOPLE_SCHEMA, peopleFixture } from '../helpers/people.js';

test('defaultShuffledFraction(n): the smallest double with floor(fraction x n) = 1, so each partial epoch is one record', () => {
  // e.g. 49: fl(1/49) x 49 rounds below 1, so 1/n alone would leave no step.
  assert.ok(Math.floor((1 / 49) * 49) < 1);
  for (let n = 1; n <= 5000; n++) {
    const f = defaultShuffledFraction(n);
    assert.equal(Math.floor(f * n), 1, `n = ${n}`);
    if (n > 1) assert.ok(Math.floor(nextDown(f) * n) < 1, `n = ${n}: the smallest such double`);
  }
  for (const n of [32561, 1e6 + 3, 2 ** 31 - 1]) assert.equal(Math.floor(defaultShuffledFraction(n) * n), 1, `n = ${n}`);
  assert.equal(defaultShuffledFraction(1), 1);
  assert.throws(() => defaultShuffledFraction(0), /n must be/);
});

test("defaultShuffledLearningRate: DP-GD's default step length (100 steps of 1 / beta) over epochs x n steps, at most 1 / beta", () => {
  // Adult: beta = sup f'' R^2 = 2 / 4 for the logistic loss on rows of norm sqrt(2), n = 32561, 5 epochs.
  assert.equal(DEFAULT_DPGD_STEPS, 100);
  assert.equal(DEFAULT_SHUFFLED_EPOCHS, 5);
  const adult = defaultShuffledLearningRate(0.5, 32561);
  assert.ok(Math.abs(adult - 20 / (0.5 * 32561)) <= 1e-15 * adult, `${adult}`);
  assert.equal(defaultShuffledLearningRate(0.5, 32561, 20), 100 / (0.5 * 32561 * 20));
  // Few rows: capped at 1 / beta (the last-iterate bound needs at most 2 / beta).
  assert.equal(defaultShuffledLearningRate(0.5, 10, 1), 2);
});

test('shuffled by default: one record a step, epochs x n steps, and the work the limits count is the work done', async () => {
  const fixture = peopleFixture('dpfit-defaults-', 400, 3);
  const prepared = await loadDataset(fixture.data, parseSchema(PEOPLE_SCHEMA));
  const n = prepared.dataset.n;
  const { diagnostics, privacy } = train(prepared, { method: 'shuffled', epsilon: 1, delta: 1e-5, epochs: 2, rng: seededRng(1) });
  const d = diagnostics as Record<string, unknown>;
  assert.equal(d.stepsPerEpoch, 1);
  assert.equal(d.steps, 2 * n);
  assert.equal(d.fraction, defaultShuffledFraction(n));
  assert.equal(d.learningRate, defaultShuffledLearningRate(prepared.rowNormBound ** 2 / 4, n, 2));
  // Each step's record drawn without replacement from the n: the plain composition of sampled steps.
  const event = privacy.event as { kind: string; event: { kind: string } };
  assert.deepEqual([event.kind, event.event.kind], ['selfCompose', 'sampledWithoutReplacement']);
  assert.ok(privacy.epsilon <= 1);
  for (const given of [{ epochs: 2 }, { epochs: 2, fraction: 0.5 }, { epochs: 3, fraction: 1 }, {}]) {
    const work = shuffled.work(given, n);
    const fraction = given.fraction ?? defaultShuffledFraction(n);
    const epochs = given.epochs ?? DEFAULT_SHUFFLED_EPOCHS;
    const expected = Math.ceil(epochs / fraction - 1e-12) * Math.floor(fraction * n);
    assert.equal(work.steps?.count, expected, JSON.stringify(given));
    assert.equal(work.gradients?.count, expected, JSON.stringify(given));
  }
  assert.equal(shuffled.work({ epochs: 2 }, n).steps?.count, d.steps, 'the limits count the steps the run takes');
});
