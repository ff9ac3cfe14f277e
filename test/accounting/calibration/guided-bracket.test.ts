import assert from 'node:assert/strict';
import { test } from 'node:test';
import { guidedBracket } from '../../../src/accounting/calibration/guided-bracket.js';

test('guidedBracket: a bracket g(lo) > 0 >= g(hi) around the root from a start on either side, a rough slope and a few evaluations', () => {
  // g(x) = log(e^{-1.7 x} 3) - log(target): log epsilon of a mechanism with epsilon ~ z^-1.7.
  const root = 0.83;
  const g = (x: number) => -1.7 * (x - root) + 0.05 * Math.sin(5 * x);
  for (const start of [-2, 0, root, 1.5, 4]) {
    for (const slope of [-0.3, -1, -5, NaN, 2]) {
      let calls = 0;
      const bracket = guidedBracket((x) => (calls++, g(x)), start, slope);
      assert.ok(bracket !== undefined, `start ${start}, slope ${slope}`);
      assert.ok(bracket.lo < bracket.hi && g(bracket.lo) > 0 && g(bracket.hi) <= 0, `start ${start}, slope ${slope}: [${bracket.lo}, ${bracket.hi}]`);
      assert.ok(bracket.slope < 0 && calls <= 7, `start ${start}, slope ${slope}: ${calls} evaluations`);
    }
  }
});

test('guidedBracket: undefined when g is NaN or never changes sign within its steps (the caller then searches without it)', () => {
  assert.equal(guidedBracket(() => NaN, 0, -1), undefined);
  assert.equal(guidedBracket((x) => (x > 0.1 ? NaN : 1), 0, -1), undefined);
  assert.equal(guidedBracket(() => 1, 0, -1, 4), undefined);
  assert.equal(guidedBracket(() => Infinity, 0, -1), undefined);
});
