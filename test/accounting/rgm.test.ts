import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import {
  calibrateRelativeGaussian,
  relativeGaussianCorollary1,
  relativeGaussianEpsilon,
  relativeGaussianEpsilonFloor,
  relativeGaussianMaxOrder,
  relativeGaussianRdp,
  relativeGaussianRdpOrInfinity,
} from '../../src/accounting/rdp/relative-gaussian.js';
import { rdpToEpsilonImproved, rdpToEpsilonMironov } from '../../src/accounting/rdp/conversion.js';
import { CalibrationError, InvalidParameterError } from '../../src/errors.js';
import { assertClose } from '../helpers/assert-close.js';

// The paper's example (000 Sec. 4.1, after Cor. 1): eta = 1e-3, d = 10, delta = 1e-8, gamma = 100 eta^2.
const PAPER = { eta: 1e-3, gamma: 100 * 1e-3 * 1e-3, dimension: 10 };

test('Thm. 1, eq. (5) against an independent evaluation', () => {
  // mpmath 1.3, mp.dps = 40: a eta^2/(2g) (1 + g d (2+eta)^2 (1+eta)^2) / (1 - eta (a-1)(2+eta)) at
  // a = 2, eta = 0.01, g = 0.01, d = 5 -> 0.012308044703541177671
  assertClose(relativeGaussianRdp({ eta: 0.01, gamma: 0.01, dimension: 5 }, 2), 0.012308044703541177671, 1e-13);
});

test('Cor. 1 on the paper example gives 0.8701 (the paper rounds to "about 0.86")', () => {
  // chi = eta^2/gamma + eta^2 (2+eta)^2 (1+eta)^2 d; epsilon = chi + 2 sqrt(chi log(1/delta)); mpmath: 0.870146735723185
  const corollary = relativeGaussianCorollary1(PAPER, 1e-8);
  assert.ok(corollary !== null);
  assertClose(corollary.epsilon, 0.870146735723185, 1e-12);
});

test('the numerically optimised epsilon is below Cor. 1 and equals an independent optimum', () => {
  const best = relativeGaussianEpsilon(PAPER, 1e-8);
  // Independent: mpmath (dps 40) grid of 4000 points in log(alpha - 1) + 200 golden-section steps,
  // minimum over alpha of the improved conversion (Balle et al. 2020 Thm. 21): 0.554146718483943 at
  // alpha = 49.51; with Mironov's Prop. 3 only: 0.650675249883418 at alpha = 54.98.
  assertClose(best.epsilon, 0.554146718483943, 1e-7);
  assert.ok(best.epsilon >= 0.554146718483943 * (1 - 1e-12), 'an optimiser cannot beat the true minimum');
  assert.ok(best.epsilon < 0.870146735723185);
  // It is a valid bound: it is the conversion of Thm. 1 at an order inside the domain.
  assert.ok(best.order > 1 && best.order < relativeGaussianMaxOrder(PAPER.eta));
  const rdp = relativeGaussianRdp(PAPER, best.order);
  assert.ok(Math.min(rdpToEpsilonImproved(best.order, rdp, 1e-8), rdpToEpsilonMironov(best.order, rdp, 1e-8)) <= best.epsilon);
  // Another setting: eta = 0.01, gamma = 0.01, d = 5, delta = 1e-5 -> mpmath 0.584017818748956 (alpha 22.21)
  assertClose(relativeGaussianEpsilon({ eta: 0.01, gamma: 0.01, dimension: 5 }, 1e-5).epsilon, 0.584017818748956, 1e-7);
});

test("Thm. 1's domain is enforced: orders and baseline sigma", () => {
  const maxOrder = relativeGaussianMaxOrder(0.1); // 1 + 1/(0.1 * 2.1) = 5.7619...
  assertClose(maxOrder, 1 + 1 / 0.21, 1e-15);
  const params = { eta: 0.1, gamma: 0.5, dimension: 3 };
  assert.throws(() => relativeGaussianRdp(params, maxOrder), (e: unknown) => e instanceof InvalidParameterError && e.param === 'order' && /the Renyi bound needs 1 <= alpha </.test(e.message));
  assert.throws(() => relativeGaussianRdp(params, 0.5), (e: unknown) => e instanceof InvalidParameterError && e.param === 'order');
  assert.throws(() => relativeGaussianRdp(params, NaN), (e: unknown) => e instanceof InvalidParameterError && e.param === 'order');
  assert.equal(relativeGaussianRdpOrInfinity(params, maxOrder + 1), Infinity);
  // sigma^2 >= gamma eta^-2 [1 - eta (alpha - 1)] R^2: with gamma = 0.5, eta = 0.1, R = 1, alpha = 2:
  // sigma^2 >= 0.5 * 100 * 0.9 = 45.
  const withSigma = { ...params, baselineStd: Math.sqrt(44), rRel: 1 };
  assert.throws(() => relativeGaussianRdp(withSigma, 2), (e: unknown) => e instanceof InvalidParameterError && e.param === 'baselineStd');
  assert.equal(relativeGaussianRdpOrInfinity(withSigma, 2), Infinity);
  assert.ok(Number.isFinite(relativeGaussianRdp({ ...params, baselineStd: Math.sqrt(45.0001), rRel: 1 }, 2)));
  assert.throws(() => relativeGaussianRdp({ eta: -1, gamma: 1, dimension: 1 }, 2), (e: unknown) => e instanceof InvalidParameterError && e.param === 'eta');
});

test('Cor. 1 says "not applicable" when its condition fails', () => {
  // 1/gamma = 10 < 4 (2.1)^2 log(1e5) = 203 and d = 1 < 4 log(1e5)/1.21 = 38: neither condition holds.
  assert.equal(relativeGaussianCorollary1({ eta: 0.1, gamma: 0.1, dimension: 1 }, 1e-5), null);
  // d = 40 >= 38.06: applicable.
  assert.notEqual(relativeGaussianCorollary1({ eta: 0.1, gamma: 0.1, dimension: 40 }, 1e-5), null);
});

test('epsilon falls as gamma grows, down to a floor no gamma can beat (property)', () => {
  fc.assert(
    fc.property(fc.double({ min: 1e-4, max: 0.05, noNaN: true }), fc.double({ min: 1e-8, max: 1, noNaN: true }), fc.integer({ min: 1, max: 50 }), (eta, gamma, d) => {
      const a = relativeGaussianEpsilon({ eta, gamma, dimension: d }, 1e-6).epsilon;
      const b = relativeGaussianEpsilon({ eta, gamma: gamma * 2, dimension: d }, 1e-6).epsilon;
      assert.ok(b <= a * (1 + 1e-9));
      assert.ok(relativeGaussianEpsilonFloor(eta, d, 1e-6) <= b * (1 + 1e-9));
    }),
    { seed: 5, numRuns: 60 },
  );
});

test('the calibrator meets its target on the safe side and nearly exactly', () => {
  for (const targetEpsilon of [0.3, 0.8, 2, 8]) {
    const result = calibrateRelativeGaussian({ eta: 1e-3, dimension: 10, targetEpsilon, delta: 1e-8 });
    assert.ok(result.epsilon <= targetEpsilon);
    assert.ok(result.epsilon >= targetEpsilon * (1 - 1e-6), `${result.epsilon} vs ${targetEpsilon}`);
    const check = relativeGaussianEpsilon({ eta: 1e-3, gamma: result.gamma, dimension: 10 }, 1e-8);
    assert.ok(check.epsilon <= targetEpsilon);
  }
  // With R_rel, the returned sigma keeps the chosen order valid.
  const withR = calibrateRelativeGaussian({ eta: 1e-3, dimension: 10, targetEpsilon: 1, delta: 1e-8, rRel: 0.5 });
  assert.ok(withR.baselineStd !== undefined && withR.baselineStd > 0);
  const recheck = relativeGaussianEpsilon({ eta: 1e-3, gamma: withR.gamma, dimension: 10, baselineStd: withR.baselineStd, rRel: 0.5 }, 1e-8);
  assert.ok(recheck.epsilon <= 1);
});

test('an unreachable target is a calibration refusal (exit 4 in the CLI), naming targetEpsilon and the floor rounded up', () => {
  // floor for eta = 1e-3, d = 10, delta = 1e-8 (gamma -> infinity): mpmath 0.054104531624311
  assertClose(relativeGaussianEpsilonFloor(1e-3, 10, 1e-8), 0.054104531624311, 1e-6);
  assert.throws(
    () => calibrateRelativeGaussian({ eta: 1e-3, dimension: 10, targetEpsilon: 0.05, delta: 1e-8 }),
    // 0.054104531624311 rounded UP to four digits: a floor printed lower than it is would invite a target that still fails.
    (e: unknown) => e instanceof CalibrationError && /^targetEpsilon 0\.05 cannot be reached/.test(e.message) && /above 0\.05411 /.test(e.message),
  );
});
