import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertClose } from '../helpers/assert-close.js';
import { runCli } from '../helpers/people.js';

const run = runCli;

test('dpfit calibrate gaussian --json prints exactly one object with the documented fields', async () => {
  const { code, stdout, stderr } = await run('calibrate', 'gaussian', '--epsilon', '1', '--delta', '1e-5', '--json');
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  for (const field of ['noiseStd', 'noiseMultiplier', 'epsilon', 'delta', 'method']) assert.ok(field in result, field);
  assertClose(result.noiseStd, 3.7306316348, 1e-8);
  assert.equal(result.method, 'analytic');
  const classical = JSON.parse((await run('calibrate', 'gaussian', '--epsilon', '0.5', '--delta', '1e-5', '--method', 'classical', '--json')).stdout);
  assertClose(classical.noiseMultiplier, 2 * 4.8448052626053894213, 1e-12);
});

test('dpfit rgm --json on the paper example', async () => {
  const { code, stdout } = await run('rgm', '--eta', '1e-3', '--gamma', '1e-4', '--dimension', '10', '--delta', '1e-8', '--json');
  assert.equal(code, 0);
  const result = JSON.parse(stdout);
  assertClose(result.epsilonCorollary1, 0.870146735723185, 1e-9);
  assert.ok(result.epsilon < result.epsilonCorollary1);
  assert.ok(result.order > 1);
  const notApplicable = JSON.parse((await run('rgm', '--eta', '0.1', '--gamma', '0.1', '--dimension', '1', '--delta', '1e-5', '--json')).stdout);
  assert.equal(notApplicable.epsilonCorollary1, null);
});

test('dpfit calibrate rgm --json', async () => {
  const { code, stdout } = await run('calibrate', 'rgm', '--eta', '1e-3', '--dimension', '10', '--epsilon', '0.5', '--delta', '1e-8', '--json');
  assert.equal(code, 0);
  const result = JSON.parse(stdout);
  for (const field of ['gamma', 'order', 'epsilon']) assert.ok(field in result, field);
  assert.ok(result.epsilon <= 0.5);
});

test('user errors: one line on stderr, exit 2, nothing on stdout', async () => {
  const cases: string[][] = [
    ['calibrate', 'gaussian', '--epsilon', '-1', '--delta', '1e-5', '--json'],
    ['calibrate', 'gaussian', '--epsilon', '1', '--delta', '2', '--json'],
    ['calibrate', 'gaussian', '--epsilon', 'abc', '--delta', '1e-5'],
    ['calibrate', 'gaussian', '--epsilon', 'NaN', '--delta', '1e-5'],
    ['calibrate', 'gaussian', '--epsilon', '2', '--delta', '1e-5', '--method', 'classical'],
    ['calibrate', 'gaussian', '--delta', '1e-5'],
    ['rgm', '--eta', '0', '--gamma', '1', '--dimension', '3', '--delta', '1e-5'],
    ['rgm', '--eta', '0.1', '--gamma', '1', '--dimension', '2.5', '--delta', '1e-5'],
    ['no-such-command'],
    ['calibrate', 'gaussian', '--unknown-flag'],
  ];
  for (const argv of cases) {
    const { code, stdout, stderr } = await run(...argv);
    assert.equal(code, 2, `${argv.join(' ')} -> ${stderr}`);
    assert.equal(stdout, '', argv.join(' '));
    assert.equal(stderr.trim().split('\n').length, 1, `one line: ${stderr}`);
    assert.match(stderr, /^dpfit: /);
    assert.doesNotMatch(stderr, /\bat .*\.ts:\d+/, 'no stack trace');
  }
  // A privacy target no noise can reach is a calibration refusal: exit 4, one line, the floor rounded up.
  const unreachable = await run('calibrate', 'rgm', '--eta', '1e-3', '--dimension', '10', '--epsilon', '0.01', '--delta', '1e-8');
  assert.equal(unreachable.code, 4, unreachable.stderr);
  assert.equal(unreachable.stdout, '');
  assert.match(unreachable.stderr, /^dpfit: targetEpsilon 0\.01 cannot be reached: .* above 0\.05411 whatever gamma\n$/);
  const named = await run('calibrate', 'gaussian', '--epsilon', '1', '--delta', '2');
  assert.match(named.stderr, /--delta must be in \(0, 0\.1\], got 2/);
});

test('--help teaches and exits 0; the demo prints a privacy report', async () => {
  const help = await run('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /calibrate/);
  assert.match(help.stdout, /demo/);
  const sub = await run('rgm', '--help');
  assert.equal(sub.code, 0);
  assert.match(sub.stdout, /Example/);
  const demo = await run('demo', '--json');
  assert.equal(demo.code, 0, demo.stderr);
  const report = JSON.parse(demo.stdout);
  assert.ok(report.privacy.epsilon <= 1 && report.privacy.epsilon > 0.9);
  assert.equal(report.privacy.event.kind, 'selfCompose');
  assert.equal(report.privacy.neighboringRelation, 'addOrRemoveOne');
  assert.equal(report.privacy.guarantee, 'proven');
  // The demo checks its own model as `dpfit verify` would: the claim holds, proven.
  assert.equal(report.verification.holds, true, report.verification.problems.join(' | '));
  assert.equal(report.verification.verified.guarantee, 'proven');
  assert.ok(report.verification.verified.epsilon <= report.privacy.epsilon);
  // The embedded task is easy: the private model is within a few points of the non-private one.
  assert.ok(report.metrics.accuracy > report.baselineMetrics.accuracy - 0.05, `${report.metrics.accuracy} vs ${report.baselineMetrics.accuracy}`);
  // ...and it has learnt something: the majority class (printed beside the accuracy) is far below.
  assert.ok(report.majorityBaseline >= 0.5 && report.majorityBaseline < 1, `${report.majorityBaseline}`);
  assert.ok(report.metrics.accuracy > report.majorityBaseline + 0.1, `${report.metrics.accuracy} vs majority ${report.majorityBaseline}`);
  const text = await run('demo');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /^ {2}test accuracy +[\d.]+ private +vs [\d.]+ non-private \(L-BFGS\), [\d.]+ majority class$/m);
});

test('dpfit epsilon / delta / rdp / epsilon dpsgd / calibrate dpsgd --json', async () => {
  const dpsgd = JSON.parse((await run('epsilon', 'dpsgd', '--sampling-probability', '0.04', '--noise-multiplier', '1.5', '--steps', '2250', '--delta', '1e-5', '--json')).stdout);
  for (const field of ['epsilon', 'delta', 'accountant', 'order', 'guarantee', 'warnings']) assert.ok(field in dpsgd, field);
  assert.ok(dpsgd.epsilon <= 7.32911117 && dpsgd.epsilon > 7.3);
  assert.equal(dpsgd.neighboringRelation, 'addOrRemoveOne');
  const event = JSON.stringify(dpsgd.event);
  const viaEvent = JSON.parse((await run('epsilon', '--event', event, '--delta', '1e-5', '--json')).stdout);
  assert.equal(viaEvent.epsilon, dpsgd.epsilon);
  const delta = JSON.parse((await run('delta', '--event', event, '--epsilon', String(dpsgd.epsilon), '--json')).stdout);
  assert.ok(delta.delta <= 1e-5 * (1 + 1e-6));
  const rdp = JSON.parse((await run('rdp', '--event', '{"kind":"gaussian","noiseMultiplier":2}', '--orders', '2,4.5,32', '--json')).stdout);
  assert.deepEqual(rdp.orders, [2, 4.5, 32]);
  assertClose(rdp.rdp[1], 4.5 / 8, 1e-12);
  const calibrated = JSON.parse((await run('calibrate', 'dpsgd', '--sampling-probability', '0.01', '--steps', '1000', '--epsilon', '1', '--delta', '1e-5', '--json')).stdout);
  assert.ok(calibrated.epsilon <= 1 && calibrated.noiseMultiplier > 1);
  const help = await run('account', '--help');
  assert.match(help.stdout, /addOrRemoveOne/);
  assert.match(help.stdout, /replaceOne/);
});

test('accounting CLI errors: bad q, negative counts, unknown kinds, malformed JSON -> one line, exit 2, no NaN', async () => {
  const cases: string[][] = [
    ['epsilon', 'dpsgd', '--sampling-probability', '1.5', '--noise-multiplier', '1', '--steps', '10', '--delta', '1e-5'],
    ['epsilon', 'dpsgd', '--sampling-probability', '0.1', '--noise-multiplier', '1', '--steps', '-1', '--delta', '1e-5'],
    ['epsilon', '--delta', '1e-5', '--event', '{"kind":"gaussan","noiseMultiplier":1}'],
    ['epsilon', '--delta', '1e-5', '--event', '{"kind":"selfCompose","count":-2,"event":{"kind":"noOp"}}'],
    ['epsilon', '--delta', '1e-5', '--event', '{"kind":"gaussian",'],
    ['epsilon', '--delta', '1e-5', '--event', '@/nonexistent/event.json'],
    ['epsilon', '--delta', '0', '--event', '{"kind":"noOp"}'],
    ['epsilon', '--delta', '1e-5', '--event', '{"kind":"noOp"}', '--accountant', 'magic'],
    ['epsilon', '--delta', '1e-5', '--event', '{"kind":"shuffledSgdConjecture","datasetSize":100,"noiseMultiplier":3,"epochs":1,"fraction":0.5}'],
    ['rdp', '--event', '{"kind":"noOp"}', '--orders', '0.5,2'],
  ];
  for (const argv of cases) {
    const { code, stdout, stderr } = await run(...argv);
    assert.equal(code, 2, `${argv.join(' ')} -> ${stderr}`);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.doesNotMatch(stderr, /NaN/);
  }
  const conjecture = JSON.parse(
    (await run('epsilon', '--delta', '1e-5', '--allow-conjecture', '--json', '--event', '{"kind":"shuffledSgdConjecture","datasetSize":100,"noiseMultiplier":3,"epochs":1,"fraction":0.5}')).stdout,
  );
  assert.equal(conjecture.guarantee, 'conjecture');
});

test('--accountant pld: tighter than RDP with epsilonLower <= epsilon; RDP-only events fall back with a warning', async () => {
  const args = ['epsilon', 'dpsgd', '--sampling-probability', '0.2', '--noise-multiplier', '0.8', '--steps', '20', '--delta', '1e-5', '--json'];
  const rdp = JSON.parse((await run(...args)).stdout);
  const pld = JSON.parse((await run(...args, '--accountant', 'pld')).stdout);
  assert.equal(pld.accountant, 'pld');
  assert.ok(pld.epsilon < rdp.epsilon, `${pld.epsilon} vs ${rdp.epsilon}`);
  assert.ok(pld.epsilonLower <= pld.epsilon);
  const rgm = JSON.parse((await run('epsilon', '--accountant', 'pld', '--delta', '1e-8', '--json', '--event', '{"kind":"relativeGaussian","eta":0.001,"gamma":0.0001,"dimension":10}')).stdout);
  assert.equal(rgm.accountant, 'rdp');
  assert.ok(rgm.warnings.some((w: string) => /PLD/.test(w)));
  const bad = await run('epsilon', '--accountant', 'magic', '--delta', '1e-5', '--event', '{"kind":"noOp"}');
  assert.equal(bad.code, 2);
});

test('dpfit curve writes an SVG (vega-lite) with the RDP curve above the PLD curve, titled with the event', async () => {
  const { mkdtempSync, readFileSync } = await import('node:fs');
  const { join } = await import('node:path');
  const { tmpdir } = await import('node:os');
  const out = join(mkdtempSync(join(tmpdir(), 'dpfit-curve-')), 'curve.svg');
  const { code, stdout, stderr } = await run('curve', '--event', '{"kind":"selfCompose","count":10,"event":{"kind":"gaussian","noiseMultiplier":3}}', '--out', out, '--points', '6', '--json');
  assert.equal(code, 0, stderr);
  const result = JSON.parse(stdout);
  const [rdp, pld] = result.curves;
  for (let i = 1; i < rdp.points.length; i++) assert.ok(rdp.points[i].delta >= pld.points[i].delta * (1 - 1e-9), 'RDP is never tighter than PLD');
  const svg = readFileSync(out, 'utf8');
  assert.match(svg, /^<svg/);
  // One line per accountant (vega draws each series as its own line mark), both named in the legend, the event in the title.
  assert.equal((svg.match(/class="mark-line role-mark/g) ?? []).length, 2);
  for (const text of ['RDP (upper bound)', 'PLD (upper bound)', 'delta(epsilon) of 10 x Gaussian (z = 3)']) assert.ok(svg.includes(`>${text}<`), text);
});

test('dpfit epsilon --event nonUniformSampled (004 Thm. 4.2): the README example, uniform weights as sampling without replacement, refusals in one line', async () => {
  const nonUniform = (c: number) => `{"kind":"selfCompose","count":1000,"event":{"kind":"nonUniformSampled","maxWeight":${c},"event":{"kind":"gaussian","noiseMultiplier":1}}}`;
  // The README's example: 1000 steps, one record each with weights <= 0.002, z = 1.
  const result = JSON.parse((await run('epsilon', '--delta', '1e-5', '--json', '--event', nonUniform(0.002))).stdout);
  assertClose(result.epsilon, 0.8304744418046465, 1e-9);
  assert.equal(result.neighboringRelation, 'replaceOne');
  assert.equal(result.guarantee, 'proven');
  // c = 1/n: the same number as one record of n = 1000 sampled uniformly without replacement.
  const uniform = JSON.parse((await run('epsilon', '--delta', '1e-5', '--json', '--event', nonUniform(0.001))).stdout);
  const withoutReplacement = '{"kind":"selfCompose","count":1000,"event":{"kind":"sampledWithoutReplacement","sourceDatasetSize":1000,"sampleSize":1,"event":{"kind":"gaussian","noiseMultiplier":1}}}';
  assert.equal(uniform.epsilon, JSON.parse((await run('epsilon', '--delta', '1e-5', '--json', '--event', withoutReplacement)).stdout).epsilon);
  assert.ok(uniform.epsilon < result.epsilon);
  // PLD has no dominating pair for it: RDP answers, with the PLD accountant's reason.
  const pld = JSON.parse((await run('epsilon', '--delta', '1e-5', '--json', '--accountant', 'pld', '--event', nonUniform(0.002))).stdout);
  assert.equal(pld.epsilon, result.epsilon);
  assert.match(pld.warnings.join(' '), /004 Thm\. 4\.2.*accounted by RDP instead/);
  for (const event of [
    '{"kind":"nonUniformSampled","maxWeight":1,"event":{"kind":"gaussian","noiseMultiplier":1}}',
    '{"kind":"nonUniformSampled","maxWeight":0,"event":{"kind":"gaussian","noiseMultiplier":1}}',
    '{"kind":"nonUniformSampled","maxWeight":0.01,"event":{"kind":"poissonSampled","samplingProbability":0.5,"event":{"kind":"gaussian","noiseMultiplier":1}}}',
  ]) {
    const { code, stdout, stderr } = await run('epsilon', '--delta', '1e-5', '--event', event);
    assert.equal(code, 2, stderr);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.match(stderr, /non-uniform sampling/);
    assert.doesNotMatch(stderr, /\b00\d\b/, 'plain words, no paper tag (issue 27)');
  }
  assert.match((await run('account', '--help')).stdout, /nonUniformSampled/);
});
