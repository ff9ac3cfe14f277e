/**
 * `003` Thm. 2.8 (Kifer et al. 2012) for objective perturbation: reference values, its conditions,
 * and that it is never reported tighter than `003` Thm. 3.1.
 *
 * Reference values: an independent python3 + scipy computation that does not use the closed form.
 * epsilon(delta) is max(2 beta/lambda, r) with r found by scipy.optimize.brentq (xtol = rtol = 1e-15)
 * on the printed condition itself, sigma - L sqrt(8 log(2/delta) + 4 eps) / eps = 0, over
 * [1e-9, 1e6]; delta(epsilon) is 2 exp(-(sigma^2 eps^2 / L^2 - 4 eps) / 8) in numpy float64:
 *
 *   def eps_k(delta, s, b, l, L):
 *       g = lambda e: s - L * np.sqrt(8 * np.log(2 / delta) + 4 * e) / e
 *       return max(2 * b / l, brentq(g, 1e-9, 1e6, xtol=1e-15, rtol=1e-15))
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { kiferObjectivePerturbationDelta, kiferObjectivePerturbationEpsilon } from '../../../src/accounting/calibration/kifer-objective-perturbation.js';
import { objectivePerturbationDelta } from '../../../src/accounting/pld/models/objective-perturbation.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';

const p = (noiseStd: number, smoothness: number, regularization: number, lipschitz = 1) => ({ noiseStd, lipschitz, smoothness, regularization });

/** epsilon of Thm. 3.1 at delta: bisection on its closed-form delta(epsilon), which decreases in epsilon. */
function thm31Epsilon(delta: number, params: ReturnType<typeof p>): number {
  let lo = 0;
  let hi = 1;
  while (objectivePerturbationDelta(hi, params) > delta) hi *= 2;
  for (let i = 0; i < 200 && hi - lo > 1e-13 * hi; i++) {
    const mid = (lo + hi) / 2;
    if (objectivePerturbationDelta(mid, params) > delta) lo = mid;
    else hi = mid;
  }
  return hi;
}

test('Thm. 2.8 epsilon(delta) matches the scipy reference (root of the printed condition)', () => {
  const cases: [number, ReturnType<typeof p>, number][] = [
    [1e-5, p(5, 1, 20), 2.0579644199453275], // Fig. 1 left
    [1e-5, p(10, 1, 5), 1.0083753394548114], // Fig. 1 right
    [1e-3, p(2, 0.25, 10), 4.430878390269045],
    [1e-8, p(8, 1, 10, 2), 3.218951997406579],
  ];
  for (const [delta, params, expected] of cases) assertClose(kiferObjectivePerturbationEpsilon(delta, params), expected, 1e-12);
});

test('Thm. 2.8 delta(epsilon) matches the numpy reference', () => {
  assertClose(kiferObjectivePerturbationDelta(2, p(5, 1, 20)), 2.026018719726142e-5, 1e-12);
  assertClose(kiferObjectivePerturbationDelta(1, p(10, 1, 5)), 1.228842470665642e-5, 1e-12);
  assertClose(kiferObjectivePerturbationDelta(3, p(10, 1, 10, 2)), 5.469396583183749e-12, 1e-12);
});

test('Thm. 2.8: epsilon(delta) and delta(epsilon) are inverse where condition (ii) binds', () => {
  for (const delta of [1e-3, 1e-6, 1e-10]) {
    const params = p(10, 1, 50);
    const epsilon = kiferObjectivePerturbationEpsilon(delta, params);
    assertClose(kiferObjectivePerturbationDelta(epsilon, params), delta, 1e-9);
  }
});

test('Thm. 2.8 is never reported tighter than Thm. 3.1: over a grid, either refused or epsilon >= Thm. 3.1 epsilon (property)', () => {
  let reported = 0;
  let refused = 0;
  for (const noiseStd of [0.5, 1, 2, 5, 8, 10, 20, 50, 200]) {
    for (const smoothness of [0.25, 1]) {
      for (const ratio of [1.01, 1.1, 1.5, 2, 2.5, 3, 5, 10, 20, 100, 1000]) {
        for (const delta of [1e-1, 1e-3, 1e-5, 1e-8, 1e-12]) {
          for (const lipschitz of [1, Math.SQRT2]) {
            const params = p(noiseStd, smoothness, ratio * smoothness, lipschitz);
            let kifer: number;
            try {
              kifer = kiferObjectivePerturbationEpsilon(delta, params);
            } catch (error) {
              assert.ok(error instanceof InvalidParameterError && error.param === 'regularization', String(error));
              assert.ok(ratio <= 3.2, `refused at lambda = ${ratio} beta: ${String(error)}`);
              refused++;
              continue;
            }
            const exact = thm31Epsilon(delta, params);
            assert.ok(kifer >= exact * (1 - 1e-9), `sigma ${noiseStd} beta ${smoothness} lambda ${ratio * smoothness} delta ${delta} L ${lipschitz}: Thm. 2.8 ${kifer} < Thm. 3.1 ${exact}`);
            reported++;
          }
        }
      }
    }
  }
  assert.ok(reported > 800 && refused > 0, `${reported} reported, ${refused} refused`);
});

test('Thm. 2.8 delta(epsilon) >= Thm. 3.1 delta(epsilon) on the Fig. 1 settings', () => {
  for (const params of [p(5, 1, 20), p(10, 1, 5)]) {
    for (let epsilon = 0.4; epsilon <= 4; epsilon += 0.1) {
      assert.ok(kiferObjectivePerturbationDelta(epsilon, params) >= objectivePerturbationDelta(epsilon, params));
    }
  }
});

test('Thm. 2.8 refuses what it does not cover, naming the condition', () => {
  // (i) lambda >= 2 beta / epsilon: at lambda = 20, beta = 1, epsilon must be >= 0.1.
  assert.throws(() => kiferObjectivePerturbationDelta(0.05, p(5, 1, 20)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization' && /2 beta \/ epsilon/.test(e.message));
  // lambda close to beta: the printed Jacobian term 2 beta/lambda is below Thm. 3.1's -log(1 - beta/lambda).
  assert.throws(() => kiferObjectivePerturbationEpsilon(0.01, p(5, 1, 1.5)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization' && /the exact bound of the dominating pair/.test(e.message));
  assert.throws(() => kiferObjectivePerturbationEpsilon(1e-5, p(5, 1, 1)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'regularization');
  assert.throws(() => kiferObjectivePerturbationEpsilon(0, p(5, 1, 20)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'delta');
  assert.throws(() => kiferObjectivePerturbationDelta(0, p(5, 1, 20)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'epsilon');
  assert.throws(() => kiferObjectivePerturbationEpsilon(1e-5, p(0, 1, 20)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'noiseStd');
});
