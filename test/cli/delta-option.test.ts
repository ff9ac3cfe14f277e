/**
 * `--delta` (src/cli/delta-option.ts): above 0.1 refused by every command that takes it (exit 2,
 * one line naming --delta, the value and the range), above 1/n warned about by `dpfit train` when
 * n is public (the report's datasetSize), silent when no released value depends on n.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deltaAboveOneOverN, MAX_DELTA, parseDeltaFlag } from '../../src/cli/delta-option.js';
import { peopleFixture, runCli } from '../helpers/people.js';

test('parseDeltaFlag: decimals in (0, 0.1]; 0, negatives, 0.5, 1, hex and text are refused naming --delta and the range', () => {
  const parse = parseDeltaFlag('--delta');
  assert.equal(parse('0.1'), MAX_DELTA);
  assert.equal(parse('1e-5'), 1e-5);
  assert.equal(parse(' 5e-324 '), 5e-324);
  for (const raw of ['0', '-1e-5', '0.1000001', '0.5', '1', '2', '0x1', '1e-5x', 'NaN', '', 'Infinity']) {
    assert.throws(() => parse(raw), (e: Error) => /^--delta must be /.test(e.message) && (/in \(0, 0\.1\]/.test(e.message) || /a finite decimal number/.test(e.message)), raw);
  }
});

test('deltaAboveOneOverN: warns exactly when delta > 1/n and n is public (records read or declared), never for an unused n', () => {
  assert.equal(deltaAboveOneOverN(1e-5, { value: 1000, source: 'records', note: '' }), undefined);
  assert.equal(deltaAboveOneOverN(1 / 1000, { value: 1000, source: 'records', note: '' }), undefined, 'delta = 1/n is not above it');
  assert.match(deltaAboveOneOverN(0.002, { value: 1000, source: 'records', note: '' }) ?? '', /^warning: --delta 0\.002 is above 1\/n = 0\.001 \(n = 1000, the number of records/);
  assert.match(deltaAboveOneOverN(0.002, { value: 1000, source: 'declared', note: '' }) ?? '', /the declared --dataset-size/);
  assert.equal(deltaAboveOneOverN(0.05, { source: 'unused', note: '' }), undefined);
  assert.equal(deltaAboveOneOverN(0.05, undefined), undefined);
});

test('every command with --delta refuses 0.5 with exit 2 and one line naming --delta, 0.5 and (0, 0.1]', async () => {
  const { data, schema } = peopleFixture('dpfit-delta-', 60, 3);
  const commands = [
    ['train', '--data', data, '--schema', schema, '--epsilon', '1'],
    ['calibrate', 'gaussian', '--epsilon', '1'],
    ['epsilon', '--event', '{"kind":"gaussian","noiseMultiplier":1}'],
    ['rgm', '--epsilon', '1', '--eta', '0.001', '--gamma', '0.01', '--dimension', '10'],
    ['demo', '--epsilon', '1'],
    ['federate', '--node', 'http://127.0.0.1:1', '--epsilon', '1'],
  ];
  for (const argv of commands) {
    const result = await runCli(...argv, '--delta', '0.5');
    assert.equal(result.code, 2, `${argv[0]}: ${result.stderr}`);
    assert.equal(result.stdout, '', argv[0]);
    assert.equal(result.stderr.trim().split('\n').length, 1, `${argv[0]}: one line: ${result.stderr}`);
    assert.match(result.stderr, /^dpfit: --delta must be in \(0, 0\.1\], got 0\.5 /, argv[0]);
  }
});

test('dpfit train warns when --delta is above 1/n for a public n, and not otherwise', async () => {
  const { data, schema } = peopleFixture('dpfit-delta-', 60, 3);
  const train = (...argv: string[]) => runCli('train', '--data', data, '--schema', schema, '--epsilon', '1', '--json', ...argv);
  const above = await train('--steps', '5', '--delta', '0.05'); // 1/60 = 0.0167
  assert.equal(above.code, 0, above.stderr);
  assert.match(above.stderr, /^dpfit: warning: --delta 0\.05 is above 1\/n = 0\.0167 \(n = 60, the number of records, public for this method\)/m);
  assert.equal(JSON.parse(above.stdout).privacy.delta >= 0.05, true, 'the run itself is not changed');
  const below = await train('--steps', '5', '--delta', '0.01');
  assert.equal(below.code, 0, below.stderr);
  assert.doesNotMatch(below.stderr, /--delta/);
  const declared = await train('--method', 'dpsgd', '--dataset-size', '1000', '--delta', '0.005', '--epochs', '1', '--batch-size', '10');
  assert.equal(declared.code, 0, declared.stderr);
  assert.match(declared.stderr, /warning: --delta 0\.005 is above 1\/n = 0\.001 \(n = 1000, the declared --dataset-size\)/);
  // AMP releases nothing that depends on n: no n is public, no warning.
  const amp = await runCli('train', '--data', data, '--schema', schema, '--epsilon', '1', '--method', 'amp', '--delta', '0.05', '--json');
  assert.equal(amp.code, 0, amp.stderr);
  assert.doesNotMatch(amp.stderr, /--delta/);
});
