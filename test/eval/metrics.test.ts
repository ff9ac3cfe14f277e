import assert from 'node:assert/strict';
import { test } from 'node:test';
import { accuracy, logLoss, majorityBaseline, meanSquaredError, rocAuc, rSquared } from '../../src/eval/metrics.js';
import { InvalidParameterError } from '../../src/errors.js';
import { assertClose } from '../helpers/assert-close.js';

test('classification metrics on hand-computed examples', () => {
  const p = [0.9, 0.2, 0.6, 0.4];
  const y = [1, 0, 0, 1];
  assert.equal(accuracy(p, y), 0.5);
  // -(log 0.9 + log 0.8 + log 0.4 + log 0.4) / 4
  assertClose(logLoss(p, y), -(Math.log(0.9) + Math.log(0.8) + 2 * Math.log(0.4)) / 4, 1e-14);
  // Pairs (pos, neg): (0.9,0.2) win, (0.9,0.6) win, (0.4,0.2) win, (0.4,0.6) loss -> 3/4.
  assertClose(rocAuc(p, y), 0.75, 1e-15);
  // Ties count one half: all scores equal -> 0.5.
  assertClose(rocAuc([1, 1, 1, 1], y), 0.5, 1e-15);
  assert.throws(() => rocAuc([0.1, 0.2], [1, 1]), InvalidParameterError);
  assert.ok(Number.isFinite(logLoss([0], [1])), 'a confident mistake is finite');
});

test('the majority baseline is the accuracy of always answering the most frequent label', () => {
  assert.equal(majorityBaseline([0, 1, 1, 1]), 0.75);
  assert.equal(majorityBaseline([1, 0, 0, 1]), 0.5);
  // Class indices (one-vs-rest): 2 is the most frequent of three classes, 3 of 5.
  assert.equal(majorityBaseline([2, 2, 0, 1, 2]), 0.6);
  assert.equal(majorityBaseline([]), 0);
  // It is the accuracy of the constant prediction of that label.
  const y = [1, 0, 0, 1, 0, 0, 0];
  assert.equal(majorityBaseline(y), accuracy(y.map(() => 0), y));
});

test('regression metrics', () => {
  assertClose(meanSquaredError([1, 2, 3], [1, 2, 5]), 4 / 3, 1e-15);
  // targets mean 8/3; SST = (1-8/3)^2 + (2-8/3)^2 + (5-8/3)^2 = 78/9; SSE = 4.
  assertClose(rSquared([1, 2, 3], [1, 2, 5]), 1 - 4 / (78 / 9), 1e-14);
  assert.equal(rSquared([2, 2], [2, 2]), 1);
  assert.throws(() => meanSquaredError([1], [1, 2]), InvalidParameterError);
});
