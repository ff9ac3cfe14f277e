import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ceilSignificant, floorSignificant } from '../../src/math/decimal-rounding.js';

test('ceilSignificant / floorSignificant: on the right side, at most `digits` digits, within one unit of the last digit', () => {
  fc.assert(
    fc.property(fc.double({ min: -1e300, max: 1e300, noNaN: true }), fc.integer({ min: 1, max: 10 }), (x, digits) => {
      if (Math.abs(x) < 1e-290) return ceilSignificant(x, digits) === x && floorSignificant(x, digits) === x;
      const up = ceilSignificant(x, digits);
      const down = floorSignificant(x, digits);
      const unit = 10 ** (Math.floor(Math.log10(Math.abs(x))) - digits + 1);
      return (
        up >= x &&
        down <= x &&
        Number(up.toPrecision(digits)) === up &&
        Number(down.toPrecision(digits)) === down &&
        up - x <= unit * (1 + 1e-9) &&
        x - down <= unit * (1 + 1e-9)
      );
    }),
    { seed: 27, numRuns: 5000 },
  );
});

test('the numbers of the RGM floor refusal (issue 27) and exact decimals', () => {
  assert.equal(ceilSignificant(41.775996748046225), 41.78);
  assert.equal(floorSignificant(41.775996748046225), 41.77);
  assert.equal(ceilSignificant(0.30000000000000004), 0.3001, '0.1 + 0.2 is above 0.3');
  assert.equal(ceilSignificant(0.25), 0.25);
  assert.equal(ceilSignificant(-1.23456), -1.234);
  assert.equal(ceilSignificant(Infinity), Infinity);
});
