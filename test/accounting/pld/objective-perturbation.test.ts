/**
 * Objective perturbation through its dominating pair (`003` App. D.3, Lemma D.6 / eq. D.11): the
 * single-release curve against Thm. 3.1's closed form, k-fold compositions between the Gaussian
 * lower bound (Lemma 3.4) and the RDP bound (Thm. 3.2, Fig. 4's message), and AMP.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as E from '../../../src/accounting/events/constructors.js';
import { gaussianDelta } from '../../../src/accounting/gaussian/gaussian-profile.js';
import { pldDelta, pldEpsilon } from '../../../src/accounting/pld/accountant.js';
import { objectivePerturbationDelta } from '../../../src/accounting/pld/models/objective-perturbation.js';
import { rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { integrate } from '../../../src/math/quadrature.js';
import { brentRoot } from '../../../src/math/root-finding.js';
import { assertClose } from '../../helpers/assert-close.js';

// 003 Fig. 1 (left: sigma = 5, beta = 1, lambda = 20; right: sigma = 10, beta = 1, lambda = 5) and
// Fig. 4 (sigma = 8, beta = 1, lambda = 10); the paper's L is 1 (it normalises the gradient bound).
const SETTINGS = [
  { noiseStd: 5, lipschitz: 1, smoothness: 1, regularization: 20 },
  { noiseStd: 10, lipschitz: 1, smoothness: 1, regularization: 5 },
  { noiseStd: 8, lipschitz: 1, smoothness: 1, regularization: 10 },
];

test('Thm. 3.1 closed form = E[(1 - e^{eps - omega})_+] for omega = |log(1 - beta/lambda)| + L^2/(2 sigma^2) + |N(0, L^2/sigma^2)| (numerical integration)', () => {
  // The integral is 003 (D.4)'s right-hand side; it checks our reading of eq. (3.1) (the theorem
  // prints H_{e^eps} where its proof has H_{e^{eps~}}).
  for (const p of SETTINGS) {
    const a = -Math.log1p(-p.smoothness / p.regularization);
    const sd = p.lipschitz / p.noiseStd;
    const c = a + (sd * sd) / 2;
    for (const epsilon of [0, 0.05, 0.2, 0.5, 1]) {
      const start = Math.max(0, epsilon - c);
      const density = (y: number) => (2 * Math.exp((-0.5 * y * y) / (sd * sd))) / (sd * Math.sqrt(2 * Math.PI));
      const { value } = integrate((y) => density(y) * -Math.expm1(epsilon - c - y), start, Infinity, { relTol: 1e-12 });
      assertClose(objectivePerturbationDelta(epsilon, p), value, 1e-9, 1e-300, `sigma=${p.noiseStd} eps=${epsilon}`);
    }
  }
});

test('single release: PLD delta(epsilon) equals Thm. 3.1 to 1e-6 relative (Fig. 1 and Fig. 4 settings)', () => {
  for (const p of SETTINGS) {
    const event = E.objectivePerturbationEvent(p);
    for (const epsilon of [0, 0.1, 0.3, 0.6, 0.9, 1.2]) {
      const exact = objectivePerturbationDelta(epsilon, p);
      if (exact < 1e-30) continue;
      const r = pldDelta(event, epsilon);
      assertClose(r.delta, exact, 1e-6, 0, `sigma=${p.noiseStd} lambda=${p.regularization} eps=${epsilon}`);
      assert.ok(r.delta >= exact, 'pessimistic side');
      assert.ok(r.deltaLower! <= exact);
      assert.equal(r.neighboringRelation, 'addOrRemoveOne');
    }
  }
});

test('k-fold composition lies between the Gaussian lower bound (Lemma 3.4) and the RDP bound (Thm. 3.2; Fig. 4)', () => {
  const exactGaussianEpsilon = (z: number, delta: number) => {
    let hi = 1;
    while (gaussianDelta(hi, z) > delta) hi *= 2;
    return brentRoot((e) => Math.log(gaussianDelta(e, z)) - Math.log(delta), 0, hi, { xRelTol: 1e-13 }).root;
  };
  for (const p of SETTINGS) {
    for (const k of [1, 10, 100, 1000]) {
      const event = E.selfComposeEvent(E.objectivePerturbationEvent(p), k);
      const delta = 1e-5;
      const pld = pldEpsilon(event, delta);
      const rdp = rdpEpsilon(event, delta).epsilon;
      const gaussian = exactGaussianEpsilon(p.noiseStd / p.lipschitz / Math.sqrt(k), delta);
      const context = `sigma=${p.noiseStd} lambda=${p.regularization} k=${k}: gaussian ${gaussian}, pld [${pld.epsilonLower}, ${pld.epsilon}], rdp ${rdp}`;
      assert.ok(pld.epsilon < rdp, context);
      assert.ok(pld.epsilonLower! > gaussian, context);
      assert.ok(pld.epsilonLower! <= pld.epsilon && pld.epsilon - pld.epsilonLower! <= 1e-4 * pld.epsilon, context);
    }
  }
});

test('AMP: objective perturbation composed with a Gaussian release (003 Sec. 4) is accounted, tighter than RDP', () => {
  const objective = E.objectivePerturbationEvent(SETTINGS[0]);
  const amp = E.composeEvent([objective, E.gaussianEvent(10)]);
  const both = pldEpsilon(amp, 1e-5);
  const alone = pldEpsilon(objective, 1e-5);
  assert.ok(both.epsilon > alone.epsilon);
  assert.ok(both.epsilon < rdpEpsilon(amp, 1e-5).epsilon);
  // composing in two calls is the same composition
  const twice = pldEpsilon(E.composeEvent([E.gaussianEvent(10), objective]), 1e-5);
  assertClose(twice.epsilon, both.epsilon, 1e-12);
});
