import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { calibrateDpsgd, calibrateNoiseMultiplier, dpsgdEvent, maxSteps, PLD_CALIBRATION } from '../../../src/accounting/calibration/calibrate.js';
import * as E from '../../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { pldDelta, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { advancedComposition, pureEpsilon } from '../../../src/accounting/pure-dp.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { totalVariation } from '../../../src/accounting/total-variation.js';
import { CalibrationError, InvalidParameterError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';

test('calibrate dpsgd: never overshoots, and is minimal to 1e-6 (property)', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-3, max: 0.3, noNaN: true }),
      fc.integer({ min: 10, max: 5000 }),
      fc.double({ min: 0.2, max: 10, noNaN: true }),
      (q, steps, targetEpsilon) => {
        const result = calibrateDpsgd({ samplingProbability: q, steps, targetEpsilon, delta: 1e-5 });
        assert.ok(result.epsilon <= targetEpsilon, `${result.epsilon} > ${targetEpsilon}`);
        const recheck = rdpEpsilon(dpsgdEvent(q, result.noiseMultiplier, steps), 1e-5).epsilon;
        assert.ok(recheck <= targetEpsilon);
        const slightlyLess = rdpEpsilon(dpsgdEvent(q, result.noiseMultiplier * (1 - 1e-6), steps), 1e-5).epsilon;
        assert.ok(slightlyLess > targetEpsilon * (1 - 1e-6), 'a slightly smaller noise would not do');
      },
    ),
    { seed: 9, numRuns: 12 },
  );
});

test('max steps for a budget: the largest T that fits', () => {
  const { steps, epsilon } = maxSteps((t) => dpsgdEvent(0.01, 1.1, t), { targetEpsilon: 2, delta: 1e-5 });
  assert.ok(steps > 0 && epsilon <= 2);
  assert.ok(rdpEpsilon(dpsgdEvent(0.01, 1.1, steps + 1), 1e-5).epsilon > 2);
  assert.deepEqual(maxSteps((t) => dpsgdEvent(1, 0.5, t), { targetEpsilon: 0.1, delta: 1e-5 }), { steps: 0, epsilon: 0 });
});

test('calibration refuses bad input and impossible targets', () => {
  assert.throws(() => calibrateDpsgd({ samplingProbability: 0, steps: 10, targetEpsilon: 1, delta: 1e-5 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'samplingProbability');
  assert.throws(() => calibrateDpsgd({ samplingProbability: 0.1, steps: -1, targetEpsilon: 1, delta: 1e-5 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'steps');
  assert.throws(() => calibrateDpsgd({ samplingProbability: 0.1, steps: 10, targetEpsilon: 1, delta: 1.5 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'delta');
  // 1e9 full-batch steps at epsilon 1e-3 would need a noise multiplier above 1e6.
  assert.throws(() => calibrateDpsgd({ samplingProbability: 1, steps: 1e9, targetEpsilon: 1e-3, delta: 1e-10 }), CalibrationError);
});

test('pure DP: basic composition, subsampling amplification, advanced composition (004 Thm. 2.1)', () => {
  assertClose(pureEpsilon(E.selfComposeEvent(E.laplaceEvent(2), 10)), 5, 1e-14);
  assertClose(pureEpsilon(E.randomizedResponseEvent(0.5, 4)), Math.log(5), 1e-14);
  // Poisson subsampling of an eps-DP mechanism: log(1 + q (e^eps - 1)).
  assertClose(pureEpsilon(E.poissonSampledEvent(0.1, E.laplaceEvent(1))), Math.log1p(0.1 * Math.expm1(1)), 1e-14);
  assert.equal(pureEpsilon(E.gaussianEvent(1)), Infinity);
  // Advanced composition: eps' = sqrt(2k log(1/delta')) eps + k eps (e^eps - 1); k = 100, eps = 0.1, delta' = 1e-5:
  // sqrt(200 * 11.512925) * 0.1 + 10 * 0.10517092 = 4.79853 + 1.05171 = 5.85024 (hand computation).
  const advanced = advancedComposition(0.1, 0, 100, 1e-5);
  assertClose(advanced.epsilon, Math.sqrt(200 * Math.log(1e5)) * 0.1 + 100 * 0.1 * Math.expm1(0.1), 1e-14);
  assertClose(advanced.epsilon, 5.85024, 1e-5);
  assert.equal(advanced.delta, 1e-5);
});

test('total-variation privacy (004 Sec. 2.4): exact Gaussian, composition, subsampling', () => {
  // TV(N(0,z^2), N(1,z^2)) = 2 Phi(1/(2z)) - 1; z = 1: 2 Phi(0.5) - 1 = 0.38292492254802624 (mpmath erf(0.5/sqrt 2)).
  assertClose(totalVariation(E.gaussianEvent(1)), 0.38292492254802624, 1e-12);
  // k Gaussians compose exactly like one with z / sqrt(k): at least as good as the thesis' Pinsker sqrt(sum d_i^2).
  assertClose(totalVariation(E.selfComposeEvent(E.gaussianEvent(2), 4)), totalVariation(E.gaussianEvent(1)), 1e-12);
  assert.ok(totalVariation(E.selfComposeEvent(E.gaussianEvent(10), 4)) <= Math.sqrt(4 * (1 / 20) ** 2));
  assertClose(totalVariation(E.poissonSampledEvent(0.1, E.gaussianEvent(1))), 0.038292492254802624, 1e-12);
  assertClose(totalVariation(E.randomizedResponseEvent(0.3, 5)), 0.7, 1e-14);
  assert.ok(totalVariation(E.laplaceEvent(5)) <= 0.1 + 1e-15);
  assert.equal(totalVariation(E.NON_PRIVATE_EVENT), 1);
});

test('PLD calibration (PLD_CALIBRATION: RDP-guided, unchecked steps): the answer is the checked PLD epsilon, meets the target, agrees with a delta query elsewhere, and is minimal to 1e-4, in at most 8 PLD queries', () => {
  for (const [q, steps, target] of [[0.01, 1000, 1], [0.05, 300, 2], [0.002, 5000, 0.5]] as const) {
    let queries = 0;
    const counted = {
      ...PLD_CALIBRATION,
      accountant: (event: DpEvent, d: number) => (queries++, PLD_CALIBRATION.accountant!(event, d)),
      probe: (event: DpEvent, d: number) => (queries++, PLD_CALIBRATION.probe!(event, d)),
    };
    const result = calibrateDpsgd({ samplingProbability: q, steps, targetEpsilon: target, delta: 1e-5, ...counted });
    const label = `q ${q}, T ${steps}, target ${target}: z ${result.noiseMultiplier}, epsilon ${result.epsilon}, ${queries} PLD queries`;
    // The checked epsilon of a fresh accountant (another process), and its delta query agrees.
    const fresh = pldEpsilon(dpsgdEvent(q, result.noiseMultiplier, steps), 1e-5);
    assert.equal(result.epsilon, fresh.epsilon, label);
    assert.ok(result.epsilon <= target, label);
    assert.ok(pldDelta(dpsgdEvent(q, result.noiseMultiplier, steps), result.epsilon).delta <= 1e-5, label);
    assert.ok(pldEpsilon(dpsgdEvent(q, result.noiseMultiplier * (1 - 1e-4), steps), 1e-5).epsilon > target, `a 1e-4 smaller z would not do: ${label}`);
    assert.ok(queries <= 8, label);
  }
});

test('a guide is only a speed-up: one that fails or points far off gives the answer of the search without it', () => {
  const make = (z: number) => dpsgdEvent(0.02, z, 200);
  const base = { targetEpsilon: 1.5, delta: 1e-6, tolerance: 1e-9 };
  const plain = calibrateNoiseMultiplier(make, base);
  const failing = calibrateNoiseMultiplier(make, {
    ...base,
    guide: () => {
      throw new CalibrationError('no guidance');
    },
  });
  assert.equal(failing.noiseMultiplier, plain.noiseMultiplier);
  // A guide 8 times too optimistic: its root is far below; the secant steps still bracket the root.
  const far = calibrateNoiseMultiplier(make, { ...base, guide: (event, d) => ({ ...rdpEpsilon(event, d), epsilon: rdpEpsilon(event, d).epsilon / 8 }) });
  assertClose(far.noiseMultiplier, plain.noiseMultiplier, 1e-8);
  assert.ok(far.epsilon <= base.targetEpsilon);
});
