/** The regularised incomplete beta function against scipy.special.betainc(a, b, x) (python3, run once). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { regularizedIncompleteBeta } from '../../src/math/incomplete-beta.js';
import { assertClose } from '../helpers/assert-close.js';

test('I_x(a, b) matches scipy.special.betainc on both sides of the switch', () => {
  const cases: [number, number, number, number][] = [
    [0.3, 2, 5, 0.5798250000000003],
    [0.9, 0.5, 0.5, 0.7951672353008665],
    [0.5, 500, 501, 0.5126125090891802],
    [0.97, 950, 51, 0.9997633626221821],
  ];
  for (const [x, a, b, expected] of cases) assertClose(regularizedIncompleteBeta(x, a, b), expected, 1e-12);
  assert.ok(regularizedIncompleteBeta(0.01, 1000, 20) < 1e-300);
  assert.equal(regularizedIncompleteBeta(0.2, 3, 1e5), 1);
  assert.throws(() => regularizedIncompleteBeta(1.5, 1, 1), /in \[0, 1\]/);
});
