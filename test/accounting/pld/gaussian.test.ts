/**
 * PLD accountant against exact and independent references: the analytic Gaussian (`003` eq. B.1),
 * dp_accounting's published tests, and dp_accounting's PLD accountant run on this machine.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as E from '../../../src/accounting/events/constructors.js';
import { gaussianDelta } from '../../../src/accounting/gaussian/gaussian-profile.js';
import { pldDelta, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { brentRoot } from '../../../src/math/root-finding.js';
import { assertClose } from '../../helpers/assert-close.js';

/** The exact epsilon(delta) of the Gaussian mechanism with noise multiplier z (inverse of eq. B.1). */
function exactGaussianEpsilon(z: number, delta: number): number {
  if (gaussianDelta(0, z) <= delta) return 0;
  let hi = 1;
  while (gaussianDelta(hi, z) > delta) hi *= 2;
  return brentRoot((e) => Math.log(gaussianDelta(e, z)) - Math.log(delta), 0, hi, { xRelTol: 1e-14 }).root;
}

test('k composed Gaussians (z) = one Gaussian with z / sqrt(k), to 1e-4 relative in epsilon, pessimistic side (k = 1, 10, 1000)', () => {
  for (const z of [0.8, 2, 10]) {
    for (const k of [1, 10, 1000]) {
      for (const delta of [1e-5, 1e-9]) {
        const exact = exactGaussianEpsilon(z / Math.sqrt(k), delta);
        const r = pldEpsilon(E.selfComposeEvent(E.gaussianEvent(z), k), delta);
        const context = `z=${z} k=${k} delta=${delta}: pld ${r.epsilon}, lower ${r.epsilonLower}, exact ${exact}`;
        assert.ok(r.epsilon >= exact, `pessimistic side: ${context}`);
        assert.ok(r.epsilon <= exact * (1 + 1e-4), `within 1e-4: ${context}`);
        assert.ok(r.epsilonLower! <= exact && r.epsilonLower! >= exact * (1 - 1e-4), `lower bound: ${context}`);
        assert.equal(r.accountant, 'pld');
        assert.equal(r.guarantee, 'proven');
        assert.equal(r.neighboringRelation, 'relativeToSensitivity');
      }
    }
  }
});

test('delta(epsilon) of composed Gaussians brackets the exact delta', () => {
  for (const [z, k, epsilon] of [
    [1, 1, 1],
    [2, 10, 2],
    [5, 1000, 10],
  ]) {
    const exact = gaussianDelta(epsilon, z / Math.sqrt(k));
    const r = pldDelta(E.selfComposeEvent(E.gaussianEvent(z), k), epsilon);
    assert.ok(r.delta >= exact && r.delta <= exact * 1.001, `z=${z} k=${k}: ${r.delta} vs ${exact}`);
    assert.ok(r.deltaLower! <= exact && r.deltaLower! >= exact * 0.999);
  }
});

test("dp_accounting's published PLD tests: Gaussian(sqrt 3) x3 and PoissonSampled(0.2, Gaussian(0.5)) x3 at epsilon = 1", () => {
  // dp_accounting pld_privacy_accountant_test.py (add/remove adjacency): 0.126936 and 0.15593, +-1e-3.
  const gaussian = pldDelta(E.selfComposeEvent(E.gaussianEvent(Math.sqrt(3)), 3), 1);
  assertClose(gaussian.delta, 0.126936, 0, 1e-3);
  // it is also exactly the Gaussian with z = 1 (003 eq. B.1): 0.12693673750664
  assertClose(gaussian.delta, gaussianDelta(1, 1), 1e-4);
  const sampled = pldDelta(E.selfComposeEvent(E.poissonSampledEvent(0.2, E.gaussianEvent(0.5)), 3), 1);
  assertClose(sampled.delta, 0.15593, 0, 1e-3);
  assert.equal(sampled.neighboringRelation, 'addOrRemoveOne');
  assert.ok(sampled.deltaLower! <= sampled.delta);
});

test('DP-SGD q = 0.001, z = 1, 1e5 steps, delta = 1e-5: epsilon about 1.637 (RDP: 1.785), bracketing dp_accounting', () => {
  // Reference, on this machine (dp_accounting from google/differential-privacy, python/):
  //   PYTHONPATH=<shim for absl>:<...>/python/dp_accounting python3 -c "from dp_accounting.pld import
  //   privacy_loss_distribution as P; print(P.from_gaussian_mechanism(1.0, value_discretization_interval=1e-5,
  //   sampling_prob=0.001).self_compose(100000).get_epsilon_for_delta(1e-5))"
  // prints 1.637184085657953 (pessimistic, connect-the-dots, grid 1e-5; 1.6380285586 at its default 1e-4).
  const reference = 1.637184085657953;
  const event = E.selfComposeEvent(E.poissonSampledEvent(0.001, E.gaussianEvent(1)), 100000);
  const r = pldEpsilon(event, 1e-5);
  assertClose(r.epsilon, reference, 1e-4);
  assert.ok(r.epsilonLower! <= reference, `lower bound ${r.epsilonLower} above a valid upper bound ${reference}`);
  assertClose(r.epsilon, 1.637, 0, 5e-4);
  const rdp = rdpEpsilon(event, 1e-5).epsilon;
  assertClose(rdp, 1.785, 0, 5e-3);
  assert.ok(r.epsilon < rdp);
});
