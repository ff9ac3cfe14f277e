/**
 * The accountant's threat model (`src/audit/gradient-canary.ts`, `accountant-audit.ts`): the
 * simulated canary coordinates have the distribution of the ones a real DP-GD run releases (read
 * back from its iterates), the audit's verdict is tight for DP-GD (Gaussian shift bound, >= 0.8 of
 * the accountant's epsilon at 2000 runs) and refutes a claim ten times too small for DP-GD and
 * DP-SGD, without ever exceeding the accountant's epsilon (seeded runs: deterministic).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditLearner, auditLearnerParallel } from '../../src/audit/canary-audit.js';
import { gradientCanaryReleases } from '../../src/audit/gradient-canary.js';
import { trainDpGd } from '../../src/learners/gradient/dp-gd.js';
import { seededRng } from '../../src/random/rng.js';

function meanStd(values: ArrayLike<number>): { mean: number; std: number } {
  let m = 0;
  for (let i = 0; i < values.length; i++) m += values[i];
  m /= values.length;
  let v = 0;
  for (let i = 0; i < values.length; i++) v += (values[i] - m) ** 2;
  return { mean: m, std: Math.sqrt(v / (values.length - 1)) };
}

test('the simulated canary coordinates match those a real DP-GD run releases (read back from its iterates)', () => {
  const options = { method: 'dpgd' as const, epsilon: 4, delta: 1e-5, runs: 100, steps: 20 };
  const sim = gradientCanaryReleases(options, 100, seededRng(1));
  // A real run on 100 rows of 5 features plus a record whose squared-loss gradient on its own
  // feature (all others 0) is always clipped to -C: the released sum's canary coordinate is
  // G_t = (theta_{t-1} - theta_t) n / lr, with the same calibration as the simulation.
  const n = 101;
  const d = 6;
  const x = new Float64Array(n * d);
  const y = new Float64Array(n);
  const rng = seededRng(3);
  for (let i = 0; i < n - 1; i++) for (let k = 0; k < 5; k++) x[i * d + k] = rng.nextDouble() - 0.5;
  x[(n - 1) * d + 5] = 1e3;
  y[n - 1] = 1e9;
  const real: number[] = [];
  for (let r = 0; r < 100; r++) {
    let previous = 0;
    trainDpGd({ x, y, n, d }, { loss: 'squared', clipNorm: 1, learningRate: 0.5, epsilon: 4, delta: 1e-5, steps: 20, rng, onStep: (_t, _T, theta) => {
      real.push(((previous - theta[5]) * n) / 0.5);
      previous = theta[5];
    } });
  }
  const simulated = meanStd(sim.inside);
  const measured = meanStd(real);
  // 2000 draws each, std ~9.7: the means differ by < 5 standard errors (0.3 each) and the stds by < 5 %.
  assert.ok(Math.abs(simulated.mean - 1) < 1.5 && Math.abs(measured.mean + 1) < 1.5, `${simulated.mean} vs ${measured.mean}`);
  assert.ok(Math.abs(simulated.std / measured.std - 1) < 0.05 && Math.abs(simulated.std / sim.noiseStd - 1) < 0.05, `${simulated.std} vs ${measured.std}, noise ${sim.noiseStd}`);
  assert.equal(meanStd(sim.outside).mean < 0, true); // replaced by the anti-canary: -C
});

test('DP-SGD releases: the canary is in a batch with probability q (the learner\'s Poisson sampler), absent from the neighbour', () => {
  const sim = gradientCanaryReleases({ method: 'dpsgd', epsilon: 4, delta: 1e-5, runs: 400 }, 400, seededRng(2));
  assert.ok(Math.abs(sim.samplingProbability - 10 / 101) < 1e-12);
  // Mean q C = 0.099 with standard error sigma / sqrt(8000) (sigma = zC, z ~ 1).
  const se = sim.noiseStd / Math.sqrt(8000);
  assert.ok(Math.abs(meanStd(sim.inside).mean - sim.samplingProbability) < 5 * se);
  assert.ok(Math.abs(meanStd(sim.outside).mean) < 5 * se);
});

test('accountant threat model, 2000 runs: DP-GD within 0.8 of the accountant, a claim ten times too small refuted for DP-GD and DP-SGD', { timeout: 120_000 }, () => {
  for (const epsilon of [2, 4]) {
    const gd = auditLearner({ method: 'dpgd', epsilon, delta: 1e-5, runs: 2000, threatModel: 'accountant', rng: seededRng(epsilon) });
    assert.equal(gd.statistic, 'gaussianShift');
    assert.ok(gd.epsilonLower >= 0.8 * gd.epsilonAccounted && gd.epsilonLower <= gd.epsilonAccounted, JSON.stringify(gd));
    assert.equal(gd.violated, false);
    const sgd = auditLearner({ method: 'dpsgd', epsilon, delta: 1e-5, runs: 2000, threatModel: 'accountant', rng: seededRng(10 + epsilon), claimedEpsilon: epsilon / 10 });
    assert.equal(sgd.statistic, 'subsampledGaussian');
    assert.ok(sgd.violated && sgd.epsilonLower <= sgd.epsilonAccounted, JSON.stringify(sgd));
    // The verdict's bound is the same statistic at the stricter refutation confidence.
    assert.ok(sgd.refuteConfidence === 1 - 0.05 / 100 && sgd.refuteLower <= sgd.epsilonLower && sgd.bounds.perStepComposed !== undefined, JSON.stringify(sgd));
    assert.ok(gd.refuteLower <= gd.epsilonLower);
    for (const bound of Object.values(sgd.bounds)) assert.ok((bound as number) <= sgd.epsilonAccounted);
  }
});

test('the accountant-model audit runs on worker threads too', { timeout: 60_000 }, async () => {
  let last = 0;
  const result = await auditLearnerParallel({ method: 'dpsgd', epsilon: 4, delta: 1e-5, runs: 101, threatModel: 'accountant', onRun: (done) => (last = Math.max(last, done)) }, 2);
  assert.equal(result.runs, 101);
  assert.equal(last, 101);
  assert.equal(result.threatModel, 'accountant');
  assert.ok(result.epsilonLower >= 0 && result.epsilonLower <= result.epsilonAccounted);
});

test('dpfit audit --threat-model accountant: the JSON fields, exit 4 on a refuted claim, exit 2 on a bad threat model', { timeout: 60_000 }, async () => {
  const { runCli } = await import('../helpers/people.js');
  const refuted = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '500', '--threat-model', 'accountant', '--claimed-epsilon', '0.4', '--threads', '1', '--json');
  assert.equal(refuted.code, 4, refuted.stderr);
  assert.equal(refuted.stderr.trim().split('\n').length, 1);
  const json = JSON.parse(refuted.stdout);
  assert.equal(json.threatModel, 'accountant');
  assert.equal(json.statistic, 'gaussianShift');
  assert.ok(json.refuteConfidence === 0.9995 && json.refuteLower > 0.4 && json.refuteLower <= json.epsilonLower);
  assert.ok(json.bounds.gaussianShift === json.epsilonLower && json.bounds.splitThreshold >= 0 && json.gaussian.muLower > 0);
  const text = await runCli('audit', '--method', 'dpsgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '200', '--threat-model', 'accountant', '--threads', '1');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /threat model accountant/);
  assert.match(text.stdout, /subsampled Gaussian/);
  assert.match(text.stdout, /region {5}s <= /);
  const strict = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--runs', '500', '--threat-model', 'accountant', '--claimed-epsilon', '0.4', '--refute-confidence', '0.99', '--threads', '1', '--json');
  assert.equal(JSON.parse(strict.stdout).refuteConfidence, 0.99);
  const badRefute = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--threat-model', 'accountant', '--refute-confidence', '1.5');
  assert.equal(badRefute.code, 2);
  assert.match(badRefute.stderr, /--refute-confidence/);
  const bad = await runCli('audit', '--method', 'dpgd', '--epsilon', '4', '--delta', '1e-5', '--threat-model', 'everything');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--threat-model must be last-model or accountant/);
  const help = await runCli('audit', '--help');
  assert.match(help.stdout, /accountant {2}The adversary sees every step/);
});
