import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { logBeta, logBinomial, logFactorial, logGamma } from '../../src/math/gamma.js';
import { assertClose } from '../helpers/assert-close.js';

test('logGamma at reference points', () => {
  // mpmath 1.3, mp.dps=50: loggamma(x)
  assertClose(logGamma(0.5), 0.5723649429247001, 1e-15);
  assertClose(logGamma(1e-10), 23.025850929882736, 1e-15);
  assertClose(logGamma(1e6), 12815504.569147611, 1e-15);
  assertClose(logGamma(2.5), 0.2846828704729192, 1e-15);
  assertClose(logGamma(1e300), 6.897755278982137e302, 1e-15);
  // x = 1.2 and 0.19 are where @stdlib's gammaln alone is off by 2e-14 and 3e-15 relative.
  assertClose(logGamma(1.2), -0.08537409000331583, 1e-15);
  assertClose(logGamma(0.19), 1.57831113234453, 1e-15);
  assert.equal(logGamma(1), 0);
  assert.equal(logGamma(2), 0);
  assert.equal(logGamma(Infinity), Infinity);
  assert.throws(() => logGamma(0), InvalidParameterError);
  assert.throws(() => logGamma(-1.5), InvalidParameterError);
  assert.throws(() => logGamma(NaN), InvalidParameterError);
});

test('logFactorial', () => {
  assert.equal(logFactorial(0), 0);
  assertClose(logFactorial(5), Math.log(120), 1e-15);
  // mpmath 1.3, mp.dps=50: loggamma(171), loggamma(1 + 1e-20), loggamma(1.25)
  assertClose(logFactorial(170), 706.5730622457874, 1e-15);
  assertClose(logFactorial(1e-20), -5.772156649015328e-21, 1e-15);
  assertClose(logFactorial(0.25), -0.09827183642181316, 1e-15);
  assert.throws(() => logFactorial(-1), InvalidParameterError);
});

test('logBinomial: large n with small k, fractional n, symmetric cases', () => {
  // mpmath 1.3, mp.dps=50: log(binomial(n, k))
  assertClose(logBinomial(1e6, 3), 39.654769204662266, 1e-15);
  assertClose(logBinomial(10.5, 2.5), 4.486423971474917, 1e-15);
  assertClose(logBinomial(1e6, 5e5), 693140.0470130637, 1e-15);
  assertClose(logBinomial(60, 58), 7.478734825567875, 1e-15);
  assertClose(logBinomial(1e15, 2), 68.38440560926142, 1e-15);
  assertClose(logBinomial(1000.5, 400.25), 669.7086484003183, 1e-15);
  assert.equal(logBinomial(5, 0), 0);
  assert.equal(logBinomial(7.5, 7.5), 0);
  assertClose(logBinomial(10, 3), Math.log(120), 1e-15);
  assert.throws(() => logBinomial(3, 4), InvalidParameterError);
  assert.throws(() => logBinomial(3, -1), InvalidParameterError);
  assert.throws(() => logBinomial(NaN, 1), InvalidParameterError);
});

test('logBeta: one huge argument, both large, both small', () => {
  // mpmath 1.3, mp.dps=50: log(beta(a, b))
  assertClose(logBeta(3, 1e6), -40.75338749333038, 1e-15);
  assertClose(logBeta(1e6, 3), -40.75338749333038, 1e-15);
  assertClose(logBeta(0.5, 0.5), 1.1447298858494002, 1e-15);
  assertClose(logBeta(20.5, 30.25), -34.56218363211685, 1e-14);
  assertClose(logBeta(0.19221654695874982, 1535.7433632634509), 0.15584883396175678, 1e-14);
  assert.equal(logBeta(2, Infinity), -Infinity);
  assert.throws(() => logBeta(0, 1), InvalidParameterError);
});
