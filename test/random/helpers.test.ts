import assert from 'node:assert/strict';
import { test } from 'node:test';
import erfc from '@stdlib/math-base-special-erfc';
import { chiSquareSurvival, gammaQ, kolmogorovSurvival, ksTest } from '../helpers/stats.js';

// The statistical helpers are themselves tested against closed forms and textbook quantiles.

test('gammaQ matches closed forms in both the series and the continued-fraction regions', () => {
  for (const x of [0.01, 0.5, 1, 3, 10, 50]) {
    assert.ok(Math.abs(gammaQ(1, x) / Math.exp(-x) - 1) < 1e-12, `Q(1, ${x})`); // Q(1, x) = e^-x
    assert.ok(Math.abs(gammaQ(0.5, x) / erfc(Math.sqrt(x)) - 1) < 1e-12, `Q(1/2, ${x})`); // = erfc(sqrt x)
    assert.ok(Math.abs(chiSquareSurvival(x, 2) / Math.exp(-x / 2) - 1) < 1e-12, `chi2_2 at ${x}`);
  }
});

test('chi-square and Kolmogorov tails at textbook critical values', () => {
  // chi^2_1 upper 5% point 3.841458820694124 (= 1.959963984540054^2); chi^2_100 upper 5% point
  // 124.342113404 (Abramowitz & Stegun Table 26.8 gives 124.342).
  assert.ok(Math.abs(chiSquareSurvival(3.841458820694124, 1) - 0.05) < 1e-12);
  assert.ok(Math.abs(chiSquareSurvival(124.342113404, 100) - 0.05) < 1e-7);
  // Kolmogorov distribution: upper 5% point 1.3580986393225505, median 0.8275735551899077.
  assert.ok(Math.abs(kolmogorovSurvival(1.3580986393225505) - 0.05) < 1e-10);
  assert.ok(Math.abs(kolmogorovSurvival(0.8275735551899077) - 0.5) < 1e-10);
  // Both series agree where they meet.
  assert.ok(Math.abs(kolmogorovSurvival(1 - 1e-12) - kolmogorovSurvival(1)) < 1e-10);
});

test('KS test rejects a visibly wrong distribution', () => {
  const xs = Float64Array.from({ length: 10_000 }, (_, i) => ((i + 0.5) / 10_000) ** 1.1);
  assert.ok(ksTest(xs, (x) => x).pValue < 1e-6);
  assert.ok(ksTest(xs, (x) => x ** (1 / 1.1)).pValue > 0.99);
});
