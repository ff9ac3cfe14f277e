/**
 * The numbers of the audit's trade-off figure (`src/audit/trade-off-curves.ts`):
 *   - the (epsilon, delta) region's edge (DRS Prop. 2.5) is its own inverse (a symmetric trade-off
 *     curve) and has its corners where the closed form puts them;
 *   - the accountant's mu against scipy (brentq on DRS Cor. 2.13's delta_mu(epsilon) = delta, with
 *     scipy.stats.norm, run once: the values below), rounded up;
 *   - the curves drawn for a real audit are gaussianTradeOff / the closed form at every alpha, and
 *     the test's upper-bound point is at the level its bound used: the Kairouz bound of the drawn
 *     point IS the audit's reported bound (last model: fixedThresholds; accountant: splitThreshold),
 *     and the lower-bound curve passes through that point when it is the verdict.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { auditLearner } from '../../src/audit/canary-audit.js';
import { epsilonLowerBound } from '../../src/audit/bounds/error-rate-bound.js';
import { gaussianDpLogDelta, gaussianTradeOff } from '../../src/audit/bounds/gaussian-dp-bound.js';
import { auditTradeOffCurves, epsilonDeltaTradeOff, gaussianMuOfEpsilon } from '../../src/audit/trade-off-curves.js';
import { seededRng } from '../../src/random/rng.js';

test('the (epsilon, delta) edge is its own inverse, with corners at (1 - delta) / (1 + e^epsilon) and 1 - delta', () => {
  fc.assert(
    fc.property(fc.double({ min: 0, max: 10, noNaN: true }), fc.double({ min: 0, max: 0.1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }), (epsilon, delta, u) => {
      const alpha = u * (1 - delta);
      const beta = epsilonDeltaTradeOff(epsilon, delta, alpha);
      assert.ok(Math.abs(epsilonDeltaTradeOff(epsilon, delta, beta) - alpha) <= 1e-12, `${epsilon}, ${delta}, ${alpha}`);
    }),
  );
  const [epsilon, delta] = [2, 1e-3];
  const corner = (1 - delta) / (1 + Math.exp(2));
  assert.ok(Math.abs(epsilonDeltaTradeOff(epsilon, delta, corner) - corner) < 1e-15); // the symmetric point
  assert.equal(epsilonDeltaTradeOff(epsilon, delta, 0), 1 - delta);
  assert.equal(epsilonDeltaTradeOff(epsilon, delta, 1 - delta), 0);
  assert.equal(epsilonDeltaTradeOff(Infinity, delta, 0.1), 0);
  assert.throws(() => epsilonDeltaTradeOff(-1, delta, 0.1), /epsilon/);
});

test("the accountant's mu matches scipy and is rounded up", () => {
  // scipy: brentq(lambda m: norm.cdf(-e/m + m/2) - exp(e) norm.cdf(-e/m - m/2) - delta, 1e-3, 50, xtol=rtol=1e-15).
  for (const [epsilon, delta, mu] of [[4, 1e-5, 0.924930897666936], [1, 1e-5, 0.2680511232112939], [0.5, 1e-6, 0.12410614903052816], [8, 1e-5, 1.6660305978457186]]) {
    const found = gaussianMuOfEpsilon(epsilon, delta);
    assert.ok(found >= mu * (1 - 1e-10) && found <= mu * (1 + 1e-9), `${epsilon}: ${found} vs ${mu}`);
    assert.ok(gaussianDpLogDelta(found, epsilon) >= Math.log(delta), 'at least the root: its delta at epsilon is >= delta');
  }
  // scipy: norm.cdf(norm.ppf(1 - a) - mu).
  for (const [mu, alpha, beta] of [[0.9, 0.01, 0.9231160239950456], [0.9, 0.3, 0.3536073359928638], [2.5, 1e-4, 0.8885810322441383]]) {
    assert.ok(Math.abs(gaussianTradeOff(mu, alpha) - beta) < 1e-12);
  }
});

test('the curves of a DP-GD audit in the accountant model: the Gaussian trade-offs, and the split test at its own level', () => {
  const result = auditLearner({ method: 'dpgd', epsilon: 4, delta: 1e-5, runs: 400, threatModel: 'accountant', rng: seededRng(7) });
  const figure = auditTradeOffCurves(result, { points: 50 });
  assert.deepEqual(figure.curves.map((c) => c.role), ['accountant', 'accountant', 'lowerBound']);
  const [region, accountant, lower] = figure.curves;
  assert.ok(figure.muAccounted !== undefined && Math.abs(figure.muAccounted - 0.9249) < 1e-3, `${figure.muAccounted}`);
  for (const p of region.points) assert.equal(p.beta, epsilonDeltaTradeOff(result.epsilonAccounted, result.delta, p.alpha));
  for (const p of accountant.points) assert.equal(p.beta, gaussianTradeOff(figure.muAccounted as number, p.alpha));
  assert.ok(result.gaussian !== undefined && result.statistic === 'gaussianShift');
  for (const p of lower.points) assert.equal(p.beta, gaussianTradeOff(result.gaussian.muLower, p.alpha));
  // The accountant's curve is below the lower bound's (an upper bound on privacy loss is a lower curve).
  for (let i = 0; i < accountant.points.length; i++) assert.ok(accountant.points[i].beta <= lower.points[i].beta + 1e-15);
  const [point] = figure.tests;
  assert.ok(Math.abs(point.level - 0.025) < 1e-15);
  const kairouz = (p: typeof point) => Math.max(0, Math.log((1 - result.delta - p.betaUpper) / p.alphaUpper), Math.log((1 - result.delta - p.alphaUpper) / p.betaUpper));
  assert.ok(Math.abs(kairouz(point) - (result.bounds.splitThreshold as number)) < 1e-12, `${kairouz(point)} vs ${result.bounds.splitThreshold}`);
  assert.equal(epsilonLowerBound(result.test.falsePositives, result.test.falseNegatives, result.test.evaluated, result.delta, result.confidence), result.bounds.splitThreshold);
  assert.throws(() => auditTradeOffCurves(result, { point: 3 } as never), /unknown option point/);
});

test('the curves of a last-model audit: the fixed-threshold test at its union-bound level, the lower-bound edge through its point', () => {
  const result = auditLearner({ method: 'dpgd', epsilon: 8, delta: 1e-5, runs: 200, steps: 5, claimedEpsilon: 0.05, rng: seededRng(11) });
  assert.equal(result.statistic, 'fixedThresholds');
  const figure = auditTradeOffCurves(result);
  assert.deepEqual(figure.curves.map((c) => c.role), ['accountant', 'accountant', 'lowerBound']);
  for (const p of figure.curves[2].points) assert.equal(p.beta, epsilonDeltaTradeOff(result.epsilonLower, result.delta, p.alpha));
  const [point] = figure.tests;
  assert.ok(Math.abs(point.level - 0.05 / 82) < 1e-18);
  assert.ok(result.epsilonLower > 0, JSON.stringify(result));
  const bound = Math.max(Math.log((1 - result.delta - point.betaUpper) / point.alphaUpper), Math.log((1 - result.delta - point.alphaUpper) / point.betaUpper));
  assert.ok(Math.abs(bound - result.epsilonLower) < 1e-12, `${bound} vs ${result.epsilonLower}`);
  // f_{epsilonLower, delta} passes through the upper-bound point: no (epsilon, delta)-DP mechanism with a smaller epsilon reaches it.
  assert.ok(Math.abs(epsilonDeltaTradeOff(result.epsilonLower, result.delta, point.alphaUpper) - point.betaUpper) < 1e-9);
  assert.ok(point.alpha <= point.alphaUpper && point.beta <= point.betaUpper);
  // DP-SGD's releases are not Gaussian: its accountant's curve is the (epsilon, delta) edge alone.
  assert.deepEqual(auditTradeOffCurves({ ...result, method: 'dpsgd' }).curves.map((c) => c.role), ['accountant', 'lowerBound']);
});
