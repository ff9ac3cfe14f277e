import assert from 'node:assert/strict';
import { test } from 'node:test';
import { gaussianDelta } from '../../../src/accounting/gaussian/gaussian-profile.js';
import { gaussianPair, laplacePair } from '../../../src/accounting/pld/models/additive-pair.js';
import { discretize } from '../../../src/accounting/pld/discretize.js';
import { gaussianLossModel } from '../../../src/accounting/pld/models/gaussian-model.js';
import { alignStep, lossQuantiles } from '../../../src/accounting/pld/grid.js';
import { lossTails } from '../../../src/accounting/pld/models/loss-model.js';
import { objectivePerturbationDelta, objectivePerturbationLossModel } from '../../../src/accounting/pld/models/objective-perturbation.js';
import { poissonSubsampledModel } from '../../../src/accounting/pld/models/poisson-model.js';
import { deltaForEpsilon, epsilonForDelta } from '../../../src/accounting/pld/queries.js';
import { randomizedResponseLossModel } from '../../../src/accounting/pld/models/randomized-response-model.js';
import { integrate } from '../../../src/math/quadrature.js';
import { assertClose } from '../../helpers/assert-close.js';

function sum(m: Float64Array): number {
  let s = 0;
  for (const v of m) s += v;
  return s;
}

test('connect-the-dots is exact at grid points and pessimistic between; the contraction is optimistic (Gaussian, 003 eq. B.1)', () => {
  for (const z of [0.7, 1, 3]) {
    const h = 0.01;
    const model = gaussianLossModel(z);
    const { low, high } = lossQuantiles(model, 1e-20);
    const { pessimistic, optimistic } = discretize(model, h, Math.floor(low / h), Math.ceil(high / h));
    // P-mass is conserved by connect-the-dots (the top tail's split keeps it too), up to the 1e-10
    // safety margin on every mass (`discretize.ts`).
    assertClose(sum(pessimistic.masses) + pessimistic.infinityMass, 1, 2e-10);
    assert.ok(sum(pessimistic.masses) + pessimistic.infinityMass >= 1 - 1e-15);
    assert.ok(sum(optimistic.masses) <= 1);
    for (const i of [0, 10, 37, 100, 250]) {
      const epsilon = i * h;
      const exact = gaussianDelta(epsilon, z);
      if (exact < 1e-12) continue;
      // exact at grid points (up to the 1e-10 safety margin)
      assertClose(deltaForEpsilon(pessimistic, epsilon), exact, 3e-10, 0, `z=${z} eps=${epsilon}`);
      assert.ok(deltaForEpsilon(pessimistic, epsilon) >= exact);
      // and on the safe side between them
      const between = epsilon + 0.37 * h;
      const exactBetween = gaussianDelta(between, z);
      assert.ok(deltaForEpsilon(pessimistic, between) >= exactBetween, `pessimistic at ${between}`);
      assert.ok(deltaForEpsilon(optimistic, between) <= exactBetween, `optimistic at ${between}`);
      assert.ok(deltaForEpsilon(optimistic, epsilon) <= exact);
    }
  }
});

test('objective perturbation (003 Lemma D.6): discretised PLD exact at grid points against Thm. 3.1', () => {
  const params = { noiseStd: 5, lipschitz: 1, smoothness: 1, regularization: 20 };
  const model = objectivePerturbationLossModel(params);
  const h = 0.002;
  const { low, high } = lossQuantiles(model, 1e-20);
  const { pessimistic, optimistic } = discretize(model, h, Math.floor(low / h), Math.ceil(high / h));
  for (const i of [0, 25, 50, 150, 300, 450]) {
    const epsilon = i * h;
    const exact = objectivePerturbationDelta(epsilon, params);
    assertClose(deltaForEpsilon(pessimistic, epsilon), exact, 3e-10, 0, `eps=${epsilon}`);
    assert.ok(deltaForEpsilon(pessimistic, epsilon) >= exact);
    assert.ok(deltaForEpsilon(optimistic, epsilon) <= exact);
  }
});

test('randomized response on an aligned grid is represented exactly (both PLDs)', () => {
  const model = randomizedResponseLossModel(0.5, 2); // losses +-log 3 with P-masses 3/4, 1/4
  const h = alignStep(0.01, [Math.log(3)]);
  const m = Math.round(Math.log(3) / h);
  const { pessimistic, optimistic } = discretize(model, h, -m - 2, m + 2);
  for (const pld of [pessimistic, optimistic]) {
    assertClose(pld.masses[2 * m + 2], 0.75, 2e-10);
    assertClose(pld.masses[2], 0.25, 2e-10);
    assertClose(sum(pld.masses), 1, 2e-10);
  }
  // delta(0) = 3/4 (1 - 1/3) = 1/2; epsilon(delta) = log 3 + log(1 - delta / (3/4)) for delta < 1/2
  assertClose(deltaForEpsilon(pessimistic, 0), 0.5, 2e-10);
  assertClose(epsilonForDelta(pessimistic, 1e-6).epsilon, Math.log(3) + Math.log1p(-1e-6 / 0.75), 1e-9);
  assert.ok(epsilonForDelta(optimistic, 1e-6).epsilon <= Math.log(3) + Math.log1p(-1e-6 / 0.75));
});

test('Laplace (P-masses 1/2 and e^{-1/b}/2 at +-1/b) and Poisson subsampling of it: atoms and tails', () => {
  const b = 2;
  const laplace = poissonSubsampledModel(laplacePair(b), 1, 'remove');
  const atoms = new Map(laplace.atoms.map((a) => [a.loss, a.mass]));
  assertClose(atoms.get(1 / b)!, 0.5, 1e-15);
  assertClose(atoms.get(-1 / b)!, 0.5 * Math.exp(-1 / b), 1e-15);
  // P(L <= s) + P(L > s) = 1 at any s
  for (const s of [-0.6, -0.5, -0.1, 0, 0.3, 0.5, 0.7]) {
    const t = lossTails(laplace, s);
    assertClose(t.below + t.above, 1, 1e-14);
  }
  // Laplace delta(eps) = 1 - e^{(eps - 1/b)/2} for 0 <= eps < 1/b
  const h = alignStep(0.01, [1 / b]);
  const { pessimistic } = discretize(laplace, h, Math.floor(-1 / b / h) - 1, Math.ceil(1 / b / h) + 1);
  for (const i of [0, 10, 25]) assertClose(deltaForEpsilon(pessimistic, i * h), -Math.expm1((i * h - 1 / b) / 2), 3e-10);
  // Poisson subsampled Gaussian, add direction: total probability 1 and loss below -log(1-q)
  const q = 0.01;
  const add = poissonSubsampledModel(gaussianPair(1), q, 'add');
  assert.equal(add.lossMax, -Math.log1p(-q));
  const t = lossTails(add, 0);
  assertClose(t.below + t.above, 1, 1e-14);
  assert.equal(lossTails(add, add.lossMax).above, 0);
});

test('Poisson-subsampled Gaussian: both directions against the hockey-stick integral (Zhu, Dong, Wang 2022, Thm. 11)', () => {
  // remove: H_{e^eps}((1-q) N(0, z^2) + q N(1, z^2) || N(0, z^2)); add: H_{e^eps}(N(0, z^2) || mixture),
  // each = integral of (p(x) - e^eps q(x))_+ dx, computed here by adaptive quadrature.
  const q = 0.3;
  const z = 0.8;
  const phi = (x: number, mean: number) => Math.exp(-0.5 * ((x - mean) / z) ** 2) / (z * Math.sqrt(2 * Math.PI));
  const mixture = (x: number) => (1 - q) * phi(x, 0) + q * phi(x, 1);
  const hockey = (p: (x: number) => number, r: (x: number) => number, epsilon: number) => {
    let total = 0; // pieces of width 1/4 so that the kink and the peak are resolved
    for (let a = -12; a < 14; a += 0.25) total += integrate((x) => Math.max(0, p(x) - Math.exp(epsilon) * r(x)), a, a + 0.25, { relTol: 1e-12, absTol: 1e-18 }).value;
    return total;
  };
  const h = 0.001;
  for (const direction of ['remove', 'add'] as const) {
    const model = poissonSubsampledModel(gaussianPair(z), q, direction);
    const { low, high } = lossQuantiles(model, 1e-20);
    const { pessimistic, optimistic } = discretize(model, h, Math.floor(low / h), Math.ceil(high / h));
    for (const i of [100, 500, 1000]) {
      const epsilon = i * h;
      const exact = direction === 'remove' ? hockey(mixture, (x) => phi(x, 0), epsilon) : hockey((x) => phi(x, 0), mixture, epsilon);
      assertClose(deltaForEpsilon(pessimistic, epsilon), exact, 1e-7, 0, `${direction} eps=${epsilon}`);
      assert.ok(deltaForEpsilon(optimistic, epsilon) <= exact * (1 + 1e-9));
    }
  }
});
