/**
 * The PLD accountant's interface and laws: support checks, validation before state changes,
 * trivial compositions, selfCompose(e, k) == compose([e] * k) for every supported kind (the
 * ACCOUNTING-NOTES lesson: dp_accounting's PLD ignores the count of a self-composed randomized
 * response), epsilonLower <= epsilon, epsilon/delta consistency and honest failures.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as E from '../../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { PldAccountant, pldDelta, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { gaussianCompositionEpsilon } from '../../../src/accounting/gaussian/gaussian-composition.js';
import { InvalidParameterError, UnsupportedEventError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';

const dpsgd = (q: number, z: number, steps: number) => E.selfComposeEvent(E.poissonSampledEvent(q, E.gaussianEvent(z)), steps);

const SUPPORTED: DpEvent[] = [
  E.gaussianEvent(1.3),
  E.laplaceEvent(2),
  E.randomizedResponseEvent(0.5, 2),
  E.randomizedResponseEvent(0.3, 5),
  E.objectivePerturbationEvent({ noiseStd: 5, lipschitz: 1, smoothness: 0.25, regularization: 1 }),
  E.poissonSampledEvent(0.05, E.gaussianEvent(1.1)),
  E.poissonSampledEvent(0.05, E.laplaceEvent(1)),
  E.poissonSampledEvent(0.5, E.poissonSampledEvent(0.1, E.gaussianEvent(0.9))),
  E.sampledWithoutReplacementEvent(1000, 20, E.gaussianEvent(1)),
  E.NO_OP_EVENT,
];

test('supports: continuous mechanisms, subsampling and compositions yes; RDP-only or unknown pairs no', () => {
  const accountant = new PldAccountant();
  for (const e of SUPPORTED) assert.ok(accountant.supports(e), JSON.stringify(e));
  assert.ok(accountant.supports(E.composeEvent([dpsgd(0.01, 1, 10), E.gaussianEvent(2)])));
  // Discrete noise: a gridded discrete Gaussian (smoothing coupling) and the discrete Laplace (pure-DP
  // pair) are supported; a discrete Gaussian whose grid std is not recorded is not (test/accounting/discrete.test.ts).
  assert.ok(accountant.supports(E.poissonSampledEvent(0.01, E.gaussianEvent(1, { discrete: true, gridNoiseStd: 1024 }))));
  assert.ok(accountant.supports(E.laplaceEvent(1, { discrete: true })));
  for (const e of [
    E.gaussianEvent(1, { discrete: true }),
    E.relativeGaussianEvent({ eta: 0.01, gamma: 0.01, dimension: 5 }),
    E.sampledWithoutReplacementEvent(1000, 20, E.randomizedResponseEvent(0.5, 2)),
    E.repeatAndSelectEvent(dpsgd(0.01, 1.1, 10), 5, 1),
    E.shuffledSgdConjectureEvent({ datasetSize: 1000, noiseMultiplier: 3, epochs: 2, fraction: 0.5 }),
    E.poissonSampledEvent(0.1, E.randomizedResponseEvent(0.5, 2)),
    E.composeEvent([E.randomizedResponseEvent(0.5, 2), E.poissonSampledEvent(0.1, E.gaussianEvent(1))]),
  ]) {
    assert.equal(accountant.supports(e), false, JSON.stringify(e));
  }
});

test('unsupported events raise UnsupportedEventError naming the sub-event and the reason; state is unchanged', () => {
  const accountant = new PldAccountant().compose(E.gaussianEvent(2));
  const before = accountant.getEpsilon(1e-5).epsilon;
  const rgm = E.relativeGaussianEvent({ eta: 0.01, gamma: 0.01, dimension: 5 });
  assert.throws(
    () => accountant.compose(E.composeEvent([E.gaussianEvent(1), rgm])),
    (error: unknown) => error instanceof UnsupportedEventError && error.subevent === rgm && /RDP/.test(error.reason),
  );
  assert.throws(() => accountant.compose(E.gaussianEvent(1, { discrete: true })), (e: unknown) => e instanceof UnsupportedEventError && /discrete Gaussian/.test(e.message));
  assert.throws(() => accountant.compose(E.sampledWithoutReplacementEvent(100, 10, E.randomizedResponseEvent(0.5, 2))), /without replacement/);
  assert.throws(() => accountant.compose(E.repeatAndSelectEvent(E.gaussianEvent(1), 5, 1)), UnsupportedEventError);
  assert.throws(() => new PldAccountant().compose(E.poissonSampledEvent(0.1, E.gaussianEvent(1))).compose(E.randomizedResponseEvent(0.5, 2)), /neighbouring relations/);
  assert.throws(() => accountant.compose(E.gaussianEvent(1), -1), InvalidParameterError);
  assert.throws(() => accountant.compose(E.gaussianEvent(1), 1.5), InvalidParameterError);
  assert.equal(accountant.getEpsilon(1e-5).epsilon, before);
  assert.throws(() => accountant.getEpsilon(0), InvalidParameterError);
  assert.throws(() => accountant.getEpsilon(1), InvalidParameterError);
  assert.throws(() => accountant.getDelta(-1), InvalidParameterError);
  assert.throws(() => new PldAccountant({ relativeAccuracy: 0 }), InvalidParameterError);
  assert.throws(() => new PldAccountant({ valueDiscretization: -1 }), InvalidParameterError);
});

test('trivial compositions: nothing gives 0, a non-private release Infinity and delta 1, noOp nothing', () => {
  assert.equal(new PldAccountant().getEpsilon(1e-5).epsilon, 0);
  assert.equal(new PldAccountant().getDelta(0.5).delta, 0);
  assert.equal(pldEpsilon(E.NO_OP_EVENT, 1e-5).epsilon, 0);
  assert.equal(pldEpsilon(E.selfComposeEvent(E.gaussianEvent(1), 0), 1e-5).epsilon, 0);
  const nonPrivate = pldEpsilon(E.composeEvent([E.gaussianEvent(1), E.NON_PRIVATE_EVENT]), 1e-5);
  assert.equal(nonPrivate.epsilon, Infinity);
  assert.equal(pldDelta(E.NON_PRIVATE_EVENT, 3).delta, 1);
  // randomized response that always answers truthfully has no privacy at all
  assert.equal(pldEpsilon(E.randomizedResponseEvent(0, 2), 1e-5).epsilon, Infinity);
  // Poisson subsampling of a non-private release: delta(epsilon) = q for epsilon >= -log(1 - q)
  assertClose(pldDelta(E.poissonSampledEvent(0.01, E.NON_PRIVATE_EVENT), 1).delta, 0.01, 1e-6);
});

test('selfCompose(e, k) == compose([e] * k) == compose(e, k) for every supported kind; randomized response counts', () => {
  for (const event of SUPPORTED) {
    for (const k of [2, 7]) {
      const self = pldEpsilon(E.selfComposeEvent(event, k), 1e-5);
      const list = pldEpsilon(E.composeEvent(Array.from({ length: k }, () => event)), 1e-5);
      const counted = new PldAccountant().compose(event, k).getEpsilon(1e-5);
      assertClose(self.epsilon, list.epsilon, 1e-12, 1e-15, `${JSON.stringify(event)} x ${k}`);
      assertClose(self.epsilon, counted.epsilon, 1e-12, 1e-15);
    }
  }
  // ACCOUNTING-NOTES: 10 releases of randomized response (p = 0.5, k = 2) cost 10.99, not 1.10.
  // Exact: the loss is (2B - 10) log 3 with B ~ Bin(10, 3/4), so epsilon = 10 log 3 + log(1 - delta / 0.75^10).
  const rr = pldEpsilon(E.selfComposeEvent(E.randomizedResponseEvent(0.5, 2), 10), 1e-5);
  const exact = 10 * Math.log(3) + Math.log1p(-1e-5 / 0.75 ** 10);
  assertClose(rr.epsilon, exact, 1e-9);
  assert.equal(rr.neighboringRelation, 'replaceOne');
});

test('epsilonLower <= epsilon and delta(epsilon(delta)) <= delta (property over events and deltas)', () => {
  const events = [dpsgd(0.02, 1.1, 500), E.selfComposeEvent(E.laplaceEvent(3), 20), E.composeEvent([E.objectivePerturbationEvent({ noiseStd: 8, lipschitz: 1, smoothness: 1, regularization: 10 }), E.gaussianEvent(4)])];
  for (const event of events) {
    const accountant = new PldAccountant().compose(event);
    for (const delta of [1e-3, 1e-6, 1e-9]) {
      const r = accountant.getEpsilon(delta);
      assert.ok(r.epsilonLower! <= r.epsilon, `${r.epsilonLower} <= ${r.epsilon}`);
      assert.ok(Number.isFinite(r.epsilon) && r.epsilon >= 0);
      assert.ok(r.epsilon - r.epsilonLower! <= 1e-4 * r.epsilon + 1e-12, 'requested accuracy met');
      // getDelta may use another grid (aligned and tilted at epsilon): its upper bound is within the
      // accuracy target of delta, and its lower bound below the true delta(epsilon) <= delta.
      const back = accountant.getDelta(r.epsilon);
      assert.ok(back.deltaLower! <= delta, `deltaLower(${r.epsilon}) = ${back.deltaLower} > ${delta}`);
      assert.ok(back.delta <= delta * 1.01, `delta(${r.epsilon}) = ${back.delta} >> ${delta}`);
      assert.ok(back.deltaLower! <= back.delta);
      assert.equal(r.warnings.length, 0);
    }
  }
});

test('options: a given valueDiscretization is used and reported; the add and remove directions are both composed', () => {
  const r = pldEpsilon(dpsgd(0.05, 1, 100), 1e-5, { valueDiscretization: 1e-3 });
  assert.equal(r.discretization.valueDiscretization, 1e-3);
  assert.equal(r.discretization.automatic, false);
  assert.ok(r.discretization.gridSize >= 16 && (r.discretization.gridSize & (r.discretization.gridSize - 1)) === 0);
  const auto = pldEpsilon(dpsgd(0.05, 1, 100), 1e-5);
  assert.equal(auto.discretization.automatic, true);
  assert.ok(auto.discretization.lossRange[0] < auto.epsilon && auto.epsilon < auto.discretization.lossRange[1]);
  assertClose(r.epsilon, auto.epsilon, 1e-3);
  // The add direction (N(0) vs the mixture) alone is never worse here, but both are computed: the
  // result is at least the remove direction's, which is the mixture-vs-N(0) pair.
  assert.ok(auto.epsilon > 0);
});

test('a composition beyond maxGridSize is answered, not refused: by the exact Gaussian composition, which says it bound the answer (issue 29)', () => {
  // 1e9 Gaussian releases need tens of millions of grid points at relative accuracy 1e-4: the PLD
  // cannot compose them in 2^18 points, and the answer is the exact composition (one Gaussian with
  // z = 100 / sqrt(1e9), Dong, Roth & Su 2022, Cor. 3.3), pessimistic and within 1e-9 of it.
  const event = E.selfComposeEvent(E.gaussianEvent(100), 1e9);
  const r = pldEpsilon(event, 1e-5, { maxGridSize: 1 << 18 });
  const exact = gaussianCompositionEpsilon(event, 1e-5)!.epsilon;
  assert.equal(r.boundBy, 'exactGaussian');
  assert.ok(r.epsilon >= exact * (1 - 1e-11) && r.epsilon <= exact * (1 + 1e-9), `${r.epsilon} vs exact ${exact}`);
  // with a coarser accuracy target the PLD composes it too
  const coarse = pldEpsilon(E.selfComposeEvent(E.gaussianEvent(1000), 1e6), 1e-5, { relativeAccuracy: 1e-2, maxGridSize: 1 << 18 });
  assert.ok(coarse.epsilon > 0 && coarse.epsilonLower! <= coarse.epsilon);
});

test('checkedEpsilon false (a calibration\'s steps): the epsilon query on its own grid, unchecked, a valid bound within the accuracy of the checked one; a non-boolean is refused', () => {
  for (const [event, delta] of [
    [dpsgd(0.01, 1.1, 1000), 1e-5],
    [dpsgd(0.2, 3, 50), 1e-8],
    [E.selfComposeEvent(E.laplaceEvent(2), 30), 1e-6],
  ] as const) {
    const checked = pldEpsilon(event, delta);
    const unchecked = pldEpsilon(event, delta, { checkedEpsilon: false });
    // Both are upper bounds on the exact epsilon, which checked.epsilonLower bounds from below.
    assert.ok(unchecked.epsilon >= checked.epsilonLower! && unchecked.epsilon >= unchecked.epsilonLower!, `${unchecked.epsilon} vs lower ${checked.epsilonLower}`);
    assertClose(unchecked.epsilon, checked.epsilon, 2e-4);
    assert.equal(unchecked.guarantee, 'proven');
  }
  assert.throws(() => new PldAccountant({ checkedEpsilon: 'no' as unknown as boolean }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'checkedEpsilon');
});
