/**
 * `dpfit plot`: a small hand-made runs file (`dpfit-runs/1`) drawn as SVG and PNG; the summary
 * and the error bars checked against values computed by hand; output paths checked before
 * anything is read, and written all or nothing.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lossBands, summariseAccuracy, type RunRecord } from '../../src/report/runs.js';
import { errorBarChart } from '../../src/report/vega-chart.js';
import { assertFailure, assertUnchanged, snapshot } from '../helpers/files.js';
import { runCli } from '../helpers/people.js';

// Hand-made: DP-SGD at epsilon 0.5 has accuracies 0.80, 0.84, 0.86 -> mean 0.8333..., std (divisor n)
// sqrt(((0.80-0.8333)^2 + (0.84-0.8333)^2 + (0.86-0.8333)^2) / 3) = sqrt(0.0018667 / 3) = 0.024944.
const RUNS: RunRecord[] = [
  { method: 'DP-SGD', epsilon: 0.5, seed: 1, accuracy: 0.8, trainingLoss: [{ step: 1, loss: 0.69 }, { step: 10, loss: 0.5 }] },
  { method: 'DP-SGD', epsilon: 0.5, seed: 2, accuracy: 0.84, trainingLoss: [{ step: 1, loss: 0.69 }, { step: 10, loss: 0.4 }] },
  { method: 'DP-SGD', epsilon: 0.5, seed: 3, accuracy: 0.86, trainingLoss: [{ step: 1, loss: 0.69 }, { step: 10, loss: 0.45 }] },
  { method: 'DP-SGD', epsilon: 2, seed: 1, accuracy: 0.85, trainingLoss: [{ step: 1, loss: 0.69 }, { step: 10, loss: 0.35 }] },
  { method: 'DP-GD', epsilon: 2, seed: 1, accuracy: 0.75 },
  { method: 'DP-GD', epsilon: 0.5, seed: 1, accuracy: 0.7 },
];

function sandbox(): { dir: string; input: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-plot-'));
  const input = join(dir, 'runs.json');
  writeFileSync(input, JSON.stringify({ format: 'dpfit-runs/1', experiment: 'hand-made', delta: 1e-5, runs: RUNS, baseline: { method: 'non-private', accuracy: 0.86 } }));
  return { dir, input };
}

test('summaries: mean +- std (divisor n) per method and epsilon, loss median and min/max per step; error bars at mean +- std', () => {
  const summary = summariseAccuracy(RUNS);
  assert.deepEqual(summary.map((s) => [s.method, s.epsilon, s.n]), [['DP-SGD', 0.5, 3], ['DP-SGD', 2, 1], ['DP-GD', 0.5, 1], ['DP-GD', 2, 1]]);
  assert.ok(Math.abs(summary[0].mean - 2.5 / 3) < 1e-15);
  assert.ok(Math.abs(summary[0].std - Math.sqrt(0.0056 / 9)) < 1e-15, `${summary[0].std}`); // sum of squares = 0.0056/3
  assert.equal(summary[1].std, 0);
  const bands = lossBands(RUNS);
  assert.deepEqual(bands.find((b) => b.panel === 'epsilon = 0.5' && b.step === 10), { panel: 'epsilon = 0.5', method: 'DP-SGD', step: 10, median: 0.45, min: 0.4, max: 0.5 });
  assert.equal(bands.length, 4, 'DP-GD runs have no loss: no rows for them');
  const spec = errorBarChart([{ series: 'a', x: 1, mean: 80, std: 2 }], { title: 't', xTitle: 'x', yTitle: 'y', reference: { label: 'ref', value: 90 } }) as { data: { values: { low: number; high: number }[] }; layer: { mark: { type: string } }[] };
  assert.deepEqual([spec.data.values[0].low, spec.data.values[0].high], [78, 82]);
  assert.deepEqual(spec.layer.map((l) => l.mark.type), ['line', 'errorbar', 'rule']);
});

test('dpfit plot: accuracy as SVG, loss as PNG, in one run; the summary without outputs', async () => {
  const { dir, input } = sandbox();
  const accuracy = join(dir, 'accuracy.svg');
  const loss = join(dir, 'loss.png');
  const result = await runCli('plot', input, '--accuracy-out', accuracy, '--loss-out', loss, '--json');
  assert.equal(result.code, 0, result.stderr);
  const printed = JSON.parse(result.stdout);
  assert.equal(printed.accuracyOut, accuracy);
  assert.equal(printed.accuracy[0].n, 3);
  const svg = readFileSync(accuracy, 'utf8');
  assert.match(svg, /^<svg/);
  for (const text of ['Test accuracy against epsilon', 'test accuracy (%)', 'DP-SGD', 'DP-GD', 'non-private', 'delta = 1e-5']) assert.ok(svg.includes(text), text);
  assert.deepEqual([...readFileSync(loss).subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG signature');
  const table = await runCli('plot', input);
  assert.equal(table.code, 0);
  assert.match(table.stdout, /^DP-SGD\s+0\.5\s+3\s+83\.33 \+- 2\.49 %$/m);
});

test('dpfit plot refuses before reading or writing anything: output = input, missing directory, bad runs, --loss-out without losses', async () => {
  const { dir, input } = sandbox();
  const cases: [string[], number, RegExp][] = [
    [['plot', input, '--accuracy-out', input], 2, /^dpfit: --accuracy-out/],
    [['plot', input, '--accuracy-out', join(dir, 'no', 'such', 'a.svg')], 3, /^dpfit: --accuracy-out .*the directory .* does not exist/],
    [['plot', join(dir, 'absent.json'), '--accuracy-out', join(dir, 'a.svg')], 3, /absent\.json: no such file/],
  ];
  const bad = join(dir, 'bad.json');
  writeFileSync(bad, JSON.stringify({ runs: [{ method: 'x', epsilon: 1, accuracy: 1.5 }] }));
  cases.push([['plot', bad, '--accuracy-out', join(dir, 'a.svg')], 3, /runs\[0\]\.accuracy must be a number in \[0, 1\]/]);
  const noLoss = join(dir, 'noloss.json');
  writeFileSync(noLoss, JSON.stringify({ runs: [{ method: 'x', epsilon: 1, accuracy: 0.5 }] }));
  // All or nothing: the accuracy chart could be drawn, but the loss chart cannot: neither is written.
  cases.push([['plot', noLoss, '--accuracy-out', join(dir, 'a.svg'), '--loss-out', join(dir, 'l.svg')], 2, /^dpfit: --loss-out must be given only for runs with a trainingLoss/]);
  for (const [argv, code, pattern] of cases) {
    const before = snapshot(dir);
    assertFailure(await runCli(...argv), code, pattern, argv.join(' '));
    assertUnchanged(before, snapshot(dir), argv.join(' '));
  }
});
