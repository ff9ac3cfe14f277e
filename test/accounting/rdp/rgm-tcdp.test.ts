import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { relativeGaussianMaxOrder, relativeGaussianRdp, relativeGaussianTcdp } from '../../../src/accounting/rdp/relative-gaussian.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';

test('000 Sec. 4.1 tCDP form against an independent evaluation', () => {
  // python3: eta = 0.01, gamma = 0.01, d = 5: rho = eta^2 (1/gamma + d (2+eta)^2 (1+eta)^2) = 0.012060653005,
  // omega = 1 + 1/(2 eta (2 + eta)) = 25.875621890547265.
  const { rho, omega } = relativeGaussianTcdp({ eta: 0.01, gamma: 0.01, dimension: 5 });
  assertClose(rho, 0.012060653005, 1e-12);
  assertClose(omega, 25.875621890547265, 1e-12);
  assert.ok(omega < relativeGaussianMaxOrder(0.01), 'omega lies inside Thm. 1 order domain');
});

test('the tCDP form is implied by Thm. 1: eq. (5) <= rho alpha at every order in (1, omega)', () => {
  fc.assert(
    fc.property(
      fc.double({ min: 1e-4, max: 2, noNaN: true }),
      fc.double({ min: 1e-6, max: 10, noNaN: true }),
      fc.integer({ min: 1, max: 500 }),
      fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
      (eta, gamma, dimension, fraction) => {
        const params = { eta, gamma, dimension };
        const { rho, omega } = relativeGaussianTcdp(params);
        const order = 1 + (omega - 1) * fraction;
        return relativeGaussianRdp(params, order) <= rho * order;
      },
    ),
    { seed: 25, numRuns: 2000 },
  );
});

test("App. A.6's printed alternative (eta^2/gamma + eta^2 d (2+eta)^2 / 2) is not implied by Thm. 1, so dpfit does not use it", () => {
  const params = { eta: 0.01, gamma: 1, dimension: 20 };
  const { omega } = relativeGaussianTcdp(params);
  const printedRho = (params.eta ** 2 / params.gamma) + (params.eta ** 2 * params.dimension * (2 + params.eta) ** 2) / 2;
  const order = 1 + 0.99 * (omega - 1);
  // Thm. 1 near omega is about twice the printed form: the printed rho is not an upper bound Thm. 1 proves.
  assert.ok(relativeGaussianRdp(params, order) > 1.5 * printedRho * order);
});

test('tCDP needs Thm. 1 down to alpha = 1: a baseline sigma that only covers larger orders is refused', () => {
  // sigma^2 >= gamma R_rel^2 / eta^2 is the condition at alpha = 1: sqrt(0.01) * 1 / 0.1 = 1.
  const ok = relativeGaussianTcdp({ eta: 0.1, gamma: 0.01, dimension: 3, baselineStd: 1.0001, rRel: 1 });
  assert.ok(ok.rho > 0);
  assert.throws(
    () => relativeGaussianTcdp({ eta: 0.1, gamma: 0.01, dimension: 3, baselineStd: 0.9, rRel: 1 }),
    (error: unknown) => error instanceof InvalidParameterError && /baselineStd/.test(error.message) && /alpha = 1/.test(error.message),
  );
});
