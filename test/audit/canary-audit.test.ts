/**
 * `dpfit audit` (`src/audit`: an empirical lower bound on the epsilon a learner spends):
 * Clopper-Pearson bounds against independent values (scipy.stats.beta.ppf: upper = beta.ppf(1 - a,
 * k + 1, n - k), lower = beta.ppf(a, k, n - k + 1)), the epsilon lower bound's formula, and the
 * audit's power: a deliberately false claim on DP-GD and DP-SGD is refuted, the accountant's true
 * claim is not (seeded training runs: deterministic).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditLearner, epsilonLowerBound } from '../../src/audit/canary-audit.js';
import { clopperPearsonLower, clopperPearsonUpper } from '../../src/audit/bounds/clopper-pearson.js';
import { seededRng } from '../../src/random/rng.js';
import { runCli } from '../helpers/people.js';

test('Clopper-Pearson bounds match scipy (beta quantiles) and are conservative', () => {
  const cases: [number, number, number, number, number][] = [
    [0, 100, 0.05, 0.029513049607039925, 0],
    [5, 100, 0.05, 0.1022533776432745, 0.019905563662171832],
    [50, 100, 0.025, 0.601678870496699, 0.39832112950330095],
    [99, 100, 0.05, 0.9994871985837377, 0.9534401885464611],
    [3, 1000, 0.01, 0.010009791991707746, 0.0004363865640761268],
  ];
  for (const [k, n, a, upper, lower] of cases) {
    const u = clopperPearsonUpper(k, n, a);
    const l = clopperPearsonLower(k, n, a);
    assert.ok(u >= upper && u - upper < 1e-12, `upper(${k}, ${n}, ${a}) = ${u}, scipy ${upper}`);
    assert.ok(l <= lower && lower - l < 1e-12, `lower(${k}, ${n}, ${a}) = ${l}, scipy ${lower}`);
  }
  assert.equal(clopperPearsonUpper(7, 7, 0.05), 1);
});

test('the epsilon lower bound: log((1 - delta - FNR_up) / FPR_up), both directions, never below 0', () => {
  // 0 false positives and 0 false negatives of 500: FPR_up = FNR_up = 1 - 0.025^(1/500).
  const up = 1 - 0.025 ** (1 / 500);
  const expected = Math.log((1 - 1e-5 - up) / up);
  assert.ok(Math.abs(epsilonLowerBound(0, 0, 500, 1e-5, 0.95) - expected) < 1e-9);
  assert.equal(epsilonLowerBound(250, 250, 500, 1e-5, 0.95), 0); // a coin flip proves nothing
  assert.ok(epsilonLowerBound(5, 400, 500, 1e-5, 0.95) > 0.5); // a rare false positive with a useful true positive rate
});

test('audit power: a false claim is refuted on DP-GD and DP-SGD, the accountant\'s claim is not', { timeout: 120_000 }, () => {
  const gd = auditLearner({ method: 'dpgd', epsilon: 4, delta: 1e-5, runs: 400, rng: seededRng(11) });
  assert.ok(gd.epsilonLower > 0.3 && gd.epsilonLower <= gd.epsilonAccounted, JSON.stringify(gd));
  assert.equal(gd.violated, false);
  const falseGd = auditLearner({ method: 'dpgd', epsilon: 4, delta: 1e-5, runs: 400, rng: seededRng(11), claimedEpsilon: 0.1 });
  assert.equal(falseGd.violated, true);
  const sgd = auditLearner({ method: 'dpsgd', epsilon: 8, delta: 1e-5, runs: 200, rng: seededRng(12) });
  assert.ok(sgd.epsilonLower > 0.1 && sgd.epsilonLower <= sgd.epsilonAccounted, JSON.stringify(sgd));
  assert.equal(sgd.violated, false);
  // The same runs refute a claim of 0.05 (violated is epsilonLower > claimed, as the DP-GD case checks through the option).
  assert.ok(sgd.epsilonLower > 0.05);
});

test('dpfit audit: exit 4 and one stderr line when refuted, 0 otherwise; bad flags exit 2', { timeout: 60_000 }, async () => {
  const refuted = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '300', '--claimed-epsilon', '0.02', '--json');
  assert.equal(refuted.code, 4, refuted.stderr);
  assert.equal(refuted.stderr.trim().split('\n').length, 1);
  const json = JSON.parse(refuted.stdout);
  assert.equal(json.violated, true);
  assert.ok(json.epsilonLower > 0.02);
  const held = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '200');
  assert.equal(held.code, 0, held.stderr);
  assert.match(held.stdout, /not refuted/);
  for (const argv of [['--method', 'magic'], ['--method', 'dpgd', '--runs', '5'], ['--method', 'dpgd', '--batch-size', '10']]) {
    const bad = await runCli('audit', '--epsilon', '1', '--delta', '1e-5', ...argv);
    assert.equal(bad.code, 2, `${argv.join(' ')}: ${bad.stderr}`);
  }
});

test('the parallel audit spreads the runs over worker threads and gives a valid verdict (every run counted)', { timeout: 60_000 }, async () => {
  const { auditLearnerParallel } = await import('../../src/audit/canary-audit.js');
  let last = 0;
  const result = await auditLearnerParallel({ method: 'dpgd', epsilon: 4, delta: 1e-5, runs: 101, onRun: (done) => (last = Math.max(last, done)) }, 2);
  assert.equal(result.runs, 101);
  assert.equal(last, 101);
  assert.ok(result.epsilonLower >= 0 && result.epsilonLower <= result.epsilonAccounted);
  await assert.rejects(auditLearnerParallel({ method: 'dpgd', epsilon: 4, delta: 1e-5, runs: 40, rng: seededRng(1) }, 2), /rng/);
});
