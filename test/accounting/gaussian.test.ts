import assert from 'node:assert/strict';
import { describe, it, test } from 'node:test';
import fc from 'fast-check';
import { analyticGaussianNoiseMultiplier, calibrateGaussian, classicalGaussianNoiseMultiplier } from '../../src/accounting/gaussian/calibrate-gaussian.js';
import { gaussianDelta, gaussianLogDelta } from '../../src/accounting/gaussian/gaussian-profile.js';
import { InvalidParameterError } from '../../src/errors.js';
import { assertClose } from '../helpers/assert-close.js';

// Reference sigmas (sensitivity 1): bisection to 400 steps on log delta(sigma) = log(delta) with
// delta(sigma) = Phi(-eps sigma + 1/(2 sigma)) - e^eps Phi(-eps sigma - 1/(2 sigma)) (003 eq. B.1),
// evaluated with mpmath 1.3 at mp.dps = 50 (script: ncdf, exp, log; delta taken as the double value).
const ANALYTIC_SIGMAS: [number, number, number][] = [
  [1, 1e-5, 3.7306316348159418139],
  [8, 1e-5, 0.60022907219895155695],
  [0.1, 1e-6, 36.30469042619578316],
  [1, 1e-10, 5.8677777496305263832],
  [3, 1e-3, 1.0372517184874800535],
  [0.01, 1e-5, 243.78543767567802221],
  [50, 1e-12, 0.19071044240637713916],
];

test('analytic Gaussian calibration matches the exact profile to 1e-9 relative, on the safe side', () => {
  for (const [epsilon, delta, expected] of ANALYTIC_SIGMAS) {
    const z = analyticGaussianNoiseMultiplier(epsilon, delta);
    assertClose(z, expected, 1e-9);
    assert.ok(z >= expected * (1 - 1e-12), `sigma(${epsilon}, ${delta}) = ${z} must not undershoot ${expected}`);
    assert.ok(gaussianDelta(epsilon, z) <= delta, `delta at the returned sigma must meet the target`);
  }
});

test('the issue acceptance values: sigma(1, 1e-5) = 3.7306316348, sigma(8, 1e-5) = 0.6002290722', () => {
  assertClose(calibrateGaussian({ targetEpsilon: 1, delta: 1e-5 }).noiseStd, 3.7306316348, 1e-8);
  assertClose(calibrateGaussian({ targetEpsilon: 8, delta: 1e-5 }).noiseStd, 0.6002290722, 1e-8);
  const scaled = calibrateGaussian({ targetEpsilon: 1, delta: 1e-5, sensitivity: 2.5 });
  assertClose(scaled.noiseStd, 2.5 * 3.7306316348159418139, 1e-9);
  assert.equal(scaled.method, 'analytic');
});

test('classical calibration is sqrt(2 log(1.25/delta))/epsilon and refuses epsilon >= 1', () => {
  // mpmath: sqrt(2*log(1.25/1e-5)) = 4.8448052626053894213
  assertClose(classicalGaussianNoiseMultiplier(0.999999, 1e-5), 4.8448052626053894213 / 0.999999, 1e-12);
  assertClose(calibrateGaussian({ targetEpsilon: 0.5, delta: 1e-5, method: 'classical' }).noiseMultiplier, 2 * 4.8448052626053894213, 1e-12);
  assert.throws(() => classicalGaussianNoiseMultiplier(1, 1e-5), (e: unknown) => e instanceof InvalidParameterError && /analytic/.test(e.message));
  // The analytic calibration always needs less noise than the classical one where both apply.
  for (const epsilon of [0.05, 0.3, 0.9]) {
    assert.ok(analyticGaussianNoiseMultiplier(epsilon, 1e-5) < classicalGaussianNoiseMultiplier(epsilon, 1e-5));
  }
});

test('exact profile: delta(epsilon) against mpmath', () => {
  // mpmath 1.3, mp.dps = 50: ncdf(-e*s + 1/(2s)) - exp(e)*ncdf(-e*s - 1/(2s))
  // delta(1, 3.7306316348) = 1.0000000000709510928e-5
  assertClose(gaussianDelta(1, 3.7306316348), 1.0000000000709510928e-5, 1e-10);
  assert.equal(gaussianDelta(0, 1e-3) <= 1, true);
  assert.ok(gaussianLogDelta(50, 10) < -1000, 'log delta stays finite deep in the tail');
  assert.ok(Number.isFinite(gaussianLogDelta(50, 10)));
});

test('delta(epsilon; z) decreases in epsilon and in z (property)', () => {
  fc.assert(
    fc.property(fc.double({ min: 0, max: 20, noNaN: true }), fc.double({ min: 0.05, max: 50, noNaN: true }), fc.double({ min: 1.001, max: 2, noNaN: true }), (epsilon, z, factor) => {
      const base = gaussianLogDelta(epsilon, z);
      assert.ok(gaussianLogDelta(epsilon * factor + 1e-3, z) <= base + 1e-12);
      assert.ok(gaussianLogDelta(epsilon, z * factor) <= base + 1e-12);
    }),
    { seed: 11, numRuns: 300 },
  );
});

test('calibration round trip: the calibrated sigma meets every target it is asked for (property)', () => {
  fc.assert(
    fc.property(fc.double({ min: 0.01, max: 30, noNaN: true }), fc.integer({ min: 1, max: 30 }), (epsilon, exponent) => {
      const delta = 10 ** -exponent;
      const z = analyticGaussianNoiseMultiplier(epsilon, delta);
      assert.ok(gaussianDelta(epsilon, z) <= delta);
      assert.ok(gaussianLogDelta(epsilon, z * (1 - 1e-9)) > Math.log(delta), 'and is minimal to 1e-9');
    }),
    { seed: 3, numRuns: 100 },
  );
});

test('bad calibration input is refused with the parameter named', () => {
  const cases: [Record<string, unknown>, string][] = [
    [{ targetEpsilon: 0, delta: 1e-5 }, 'targetEpsilon'],
    [{ targetEpsilon: -1, delta: 1e-5 }, 'targetEpsilon'],
    [{ targetEpsilon: NaN, delta: 1e-5 }, 'targetEpsilon'],
    [{ targetEpsilon: 1, delta: 0 }, 'delta'],
    [{ targetEpsilon: 1, delta: 1 }, 'delta'],
    [{ targetEpsilon: 1, delta: NaN }, 'delta'],
    [{ targetEpsilon: 1, delta: 1e-5, sensitivity: 0 }, 'sensitivity'],
    [{ targetEpsilon: 1, delta: 1e-5, method: 'magic' }, 'method'],
  ];
  for (const [options, param] of cases) {
    assert.throws(
      () => calibrateGaussian(options as never),
      (e: unknown) => e instanceof InvalidParameterError && e.param === param,
      `${JSON.stringify(options)} should name ${param}`,
    );
  }
});

describe('exactGaussianCompositionNoiseMultiplier', () => {
  it('re-accounted by the (pessimistic) exact composition, never exceeds the target and wastes < 1e-6 of it', async () => {
    const { exactGaussianCompositionNoiseMultiplier, gaussianCompositionEpsilon } = await import('../../src/accounting/gaussian/gaussian-composition.js');
    const { gaussianEvent, selfComposeEvent } = await import('../../src/accounting/events/constructors.js');
    // These targets include ones where sqrt(T) * analytic * (1 + 4 ulp) re-accounted to 1 + 4e-13 times the target.
    for (const epsilon of [0.01, 0.1, 0.5, 1, 3, 8, 20]) {
      for (const count of [1, 7, 1000]) {
        const z = exactGaussianCompositionNoiseMultiplier(epsilon, 1e-5, count);
        const event = count === 1 ? gaussianEvent(z) : selfComposeEvent(gaussianEvent(z), count);
        const accounted = gaussianCompositionEpsilon(event, 1e-5)?.epsilon ?? Infinity;
        assert.ok(accounted <= epsilon, `epsilon ${epsilon}, count ${count}: ${accounted}`);
        assert.ok(accounted >= epsilon * (1 - 1e-6), `epsilon ${epsilon}, count ${count}: ${accounted} wastes budget`);
      }
    }
  });
});
