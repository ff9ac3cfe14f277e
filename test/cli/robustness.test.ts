/**
 * The CLI against careless or hostile use, besides output files (`test/cli/outputs.test.ts`): work
 * limits refused before any work with the flag and the limit named; exit statuses as the design
 * says (2, 3, 4; 1 only for bugs); messages that name the flag as typed and never say "undefined";
 * flags a method would ignore are refused; predict reads rows without the label column;
 * curve --json without --out; and the progress bar's time left (one bar for several runs).
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { checkFlagLimits, checkWorkLimits, MAX_STEPS } from '../../src/cli/limits.js';
import { formatDuration, progressBar } from '../../src/cli/progress.js';
import { InvalidParameterError } from '../../src/errors.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../helpers/people.js';
import { assertFailure, assertUnchanged, snapshot } from '../helpers/files.js';
import type { TrainFlags } from '../../src/cli/train-flags.js';

const run = runCli;

function box() {
  return peopleFixture('dpfit-robust-', 60, 5);
}

describe('work limits: refused at once, exit 2, the flag and the limit named, nothing written', () => {
  it('--steps 1e12, --epochs 1e9, --tune 1e9, --max-iterations 1e10', async () => {
    const f = box();
    const base = ['train', '--data', f.data, '--schema', f.schema, '--epsilon', '1', '--out', join(f.dir, 'm.json')];
    const validation = join(f.dir, 'validation.csv');
    writeFileSync(validation, readFileSync(f.data, 'utf8').split('\n').slice(0, 21).join('\n') + '\n');
    const cases: [string[], RegExp][] = [
      [['--steps', '1e12'], /^dpfit: --steps must be at most 1e9 \(dpfit's limit on the steps of one run\), got 1000000000000$/],
      [['--method', 'dpgd', '--steps', '1e12'], /--steps must be at most 1e9/],
      [['--epochs', '1e9'], /^dpfit: --epochs must be at most 1e6 \(passes over the data\), got 1000000000$/],
      [['--method', 'shuffled', '--epochs', '1e9'], /--epochs must be at most 1e6/],
      [['--method', 'dpsgd', '--steps', '2000000000'], /--steps must be at most 1e9/],
      [['--tune', '1e9', '--validation', validation], /^dpfit: --tune must be at most 1e6 \(the mean number of full training runs/],
      [['--method', 'amp', '--max-iterations', '1e10'], /--max-iterations must be at most 1e9/],
    ];
    for (const [flags, pattern] of cases) {
      const before = snapshot(f.dir);
      const started = Date.now();
      assertFailure(await run(...base, ...flags), 2, pattern, flags.join(' '));
      assert.ok(Date.now() - started < 3000, `${flags.join(' ')}: refused before any work`);
      assertUnchanged(before, snapshot(f.dir), flags.join(' '));
    }
  });

  it('dpfit audit: the same limits as train (one constant), refused at once (--steps 1e12 used to run forever)', async () => {
    const base = ['audit', '--method', 'dpgd', '--epsilon', '1', '--threads', '1'];
    const cases: [string[], RegExp][] = [
      [['--steps', '1e12'], new RegExp(`^dpfit: --steps must be at most ${MAX_STEPS.toExponential().replace('e+', 'e')} \\(dpfit's limit on the steps of one run\\), got 1000000000000$`)],
      [['--steps', String(MAX_STEPS + 1)], /^dpfit: --steps must be at most 1e9 /],
      [['--method', 'dpsgd', '--epochs', '1e6', '--rows', '100000', '--batch-size', '1'], /^dpfit: --epochs must be small enough for at most 1e9 steps per run \(epochs x \(rows \+ 1\) \/ batch size = 1000000 x 100001 \/ 1 = 1\.000e11\)/],
      [['--steps', '1e8', '--runs', '1000'], /^dpfit: --steps must be small enough for at most 1e12 per-example gradient evaluations \(2 neighbours x runs x steps x \(rows \+ 1\) = 2 x 1000 x 100000000 x 101 = 2\.020e13\)/],
    ];
    for (const [flags, pattern] of cases) {
      const started = Date.now();
      assertFailure(await run(...base, ...flags), 2, pattern, flags.join(' '));
      assert.ok(Date.now() - started < 3000, `${flags.join(' ')}: refused before any work`);
    }
  });

  it('the per-example gradient rule: runs x classes x the --tune mean, the flag to change named', () => {
    const flags = (more: Partial<TrainFlags>): TrainFlags => ({ data: 'd', loss: 'logistic', method: 'dpgd', delta: 1e-5, optimizer: 'sgd', schedule: 'constant', ...more });
    const refuses = (f: TrainFlags, n: number, classes: number, pattern: RegExp) =>
      assert.throws(() => checkWorkLimits(f, n, classes), (e: unknown) => e instanceof InvalidParameterError && pattern.test(e.message), JSON.stringify(f));
    checkWorkLimits(flags({ steps: 1000 }), 1e6); // 1e9 gradients: fine
    refuses(flags({ steps: 1e7 }), 1e6, 1, /^--steps must be small enough for at most 1e12 per-example gradient evaluations \(steps x rows = 10000000 x 1000000 = 1\.000e13\)/);
    refuses(flags({ steps: 1e5 }), 1e6, 20, /x 20 classes = 2\.000e12/);
    refuses(flags({ steps: 1e4, tune: 1000 }), 1e6, 1, /^--tune must be small enough .* x 1000 expected --tune runs = 1\.000e13/);
    refuses(flags({ method: 'dpsgd', epochs: 1e6, batchSize: 256 }), 1e6, 1, /^--epochs must be small enough for at most 1e9 steps per run/);
    refuses(flags({ method: 'output', maxIterations: 1e8 }), 1e5, 1, /^--max-iterations must be small enough .*\(max-iterations x rows = 100000000 x 100000 = 1\.000e13\)/);
    checkWorkLimits(flags({ method: 'objpert' }), 1e9); // optimisers bound themselves without --max-iterations
    // objpert and amp keep n private: no limit may depend on it; --max-iterations has its own, from the flags alone.
    for (const method of ['objpert', 'amp']) {
      checkWorkLimits(flags({ method, maxIterations: 1e6 }), 1e9);
      assert.throws(() => checkFlagLimits(flags({ method, maxIterations: 1e6 + 1 })), (e: unknown) => e instanceof InvalidParameterError && /^--max-iterations must be at most 1e6 with --method/.test(e.message));
    }
  });
});

describe('exit statuses and messages', () => {
  it('output, objpert and amp with --max-iterations 1: a model is released (the certified fallback finishes), exit 0', async () => {
    const f = box();
    for (const method of ['output', 'objpert', 'amp']) {
      const optIn = method === 'objpert' ? ['--accept-no-guarantee'] : []; // objpert alone is refused by default (its minimiser identifies the dataset)
      const result = await run('train', '--data', f.data, '--schema', f.schema, '--method', method, '--regularization', '1', '--epsilon', '1', '--max-iterations', '1', '--json', ...optIn);
      assert.equal(result.code, 0, `${method}: ${result.stderr}`);
      assert.equal(JSON.parse(result.stdout).model.format, 'dpfit-linear-model/1', method);
    }
  });

  it('rgm --baseline-std without --r-rel (and the reverse): exit 2 naming both flags', async () => {
    const rgm = ['rgm', '--eta', '1e-3', '--gamma', '1e-4', '--dimension', '10', '--delta', '1e-8'];
    assertFailure(await run(...rgm, '--baseline-std', '1'), 2, /^dpfit: --r-rel is required with --baseline-std/, 'baseline without r-rel');
    assertFailure(await run(...rgm, '--r-rel', '1'), 2, /^dpfit: --baseline-std is required with --r-rel/, 'r-rel without baseline');
    const both = await run(...rgm, '--baseline-std', '10', '--r-rel', '0.5', '--json');
    assert.equal(both.code, 0, both.stderr);
  });

  it('a model file with an unknown loss or a task its loss does not have: exit 3 for evaluate, predict and verify', async () => {
    const f = box();
    const model = join(f.dir, 'model.json');
    assert.equal((await run('train', '--data', f.data, '--schema', f.schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', model)).code, 0);
    const file = JSON.parse(readFileSync(model, 'utf8'));
    const evil = join(f.dir, 'evil.json');
    writeFileSync(evil, JSON.stringify({ ...file, loss: { name: 'evil', parameters: {} } }));
    const regression = join(f.dir, 'regression.json');
    writeFileSync(regression, JSON.stringify({ ...file, task: 'regression' }));
    for (const [path, pattern] of [
      [evil, /model\.loss\.name must be 'logistic', 'squared' \(alias 'linear'\), 'huber' or 'smoothedHinge', got "evil"/],
      [regression, /model\.task must be 'classification' \(the task of the logistic loss\), got "regression"/],
    ] as const) {
      assertFailure(await run('evaluate', '--model', path, '--data', f.data), 3, pattern, `evaluate ${path}`);
      assertFailure(await run('predict', '--model', path, '--data', f.data), 3, pattern, `predict ${path}`);
      assertFailure(await run('verify', path), 3, pattern, `verify ${path}`);
    }
  });

  it('--accountant pld with a method that does not calibrate by it: exit 2; rdp --help does not offer pld', async () => {
    const f = box();
    assertFailure(
      await run('train', '--data', f.data, '--schema', f.schema, '--method', 'dpsgd', '--epsilon', '1', '--accountant', 'pld'),
      2,
      /^dpfit: --accountant must be given only with --method objpert or amp .*got "pld"$/,
      'dpsgd pld',
    );
    const help = await run('rdp', '--help');
    assert.equal(help.code, 0);
    assert.doesNotMatch(help.stdout, /--accountant[^\n]*pld/i);
    assert.match(help.stdout, /'rdp' only/);
  });

  it('a flag the method would ignore is refused, naming the methods that use it', async () => {
    const f = box();
    const base = ['train', '--data', f.data, '--schema', f.schema, '--epsilon', '1'];
    assertFailure(await run(...base, '--method', 'dpgd', '--batch-size', '10'), 2, /^dpfit: --batch-size must be given only with --method dpsgd, output-sgd \(--method dpgd does not use it\), got 10$/, 'batch-size');
    assertFailure(await run(...base, '--method', 'dpsgd', '--conjecture'), 2, /--conjecture must be given only with --method shuffled/, 'conjecture');
    assertFailure(await run(...base, '--method', 'dpgd', '--optimizer', 'adam'), 2, /--optimizer must be given only with --method dpsgd/, 'optimizer');
    assertFailure(await run(...base, '--validation', f.data), 2, /^dpfit: --validation must be given only with --tune/, 'validation without tune');
  });

  it('flags as typed, never a library name or "undefined"', async () => {
    const cases: [string[], RegExp][] = [
      [['epsilon', 'dpsgd', '--sampling-probability', '2', '--noise-multiplier', '1', '--steps', '10', '--delta', '1e-5'], /^dpfit: --sampling-probability must be in \(0, 1\], got 2$/],
      [['epsilon', 'dpsgd', '--sampling-probability', '0.1', '--noise-multiplier', '-1', '--steps', '10', '--delta', '1e-5'], /^dpfit: --noise-multiplier must be/],
      [['calibrate', 'dpsgd', '--sampling-probability', '0.1', '--steps', '0', '--epsilon', '1', '--delta', '1e-5'], /^dpfit: --steps must be/],
      // --delta has a default (1e-5, test/cli/conventions.test.ts); a bad one is named as typed.
      [['epsilon', '--event', '{"kind":"gaussian","noiseMultiplier":1}', '--delta', '2'], /^dpfit: --delta must be in \(0, 0\.1\], got 2 \(delta is the probability that the guarantee fails outright/],
      [['epsilon', '--delta', '1e-5'], /^dpfit: --event is required/],
      [['calibrate', 'gaussian', '--epsilon', '0', '--delta', '1e-5'], /^dpfit: --epsilon must be/],
    ];
    for (const [argv, pattern] of cases) assertFailure(await run(...argv), 2, pattern, argv.join(' '));
    const f = box();
    const base = ['train', '--data', f.data, '--schema', f.schema];
    assertFailure(await run('train', '--data', f.data, '--epsilon', '1'), 2, /^dpfit: --schema is required: a public schema/, 'no schema');
    assertFailure(await run(...base, '--method', 'dpsgd', '--epsilon', '1', '--batch-size', '1000'), 2, /^dpfit: --batch-size must be in \(0, 60\]/, 'batch larger than n');
    assertFailure(await run(...base, '--method', 'dpgd', '--tune', '3'), 2, /^dpfit: --epsilon is required with --tune/, 'tune without epsilon');
    assertFailure(await run(...base, '--method', 'dpgd', '--epsilon', '1', '--tune', '3'), 2, /^dpfit: --validation is required with --tune/, 'tune without validation');
    assertFailure(await run(...base, '--method', 'output', '--epsilon', '1', '--regularization', '-1'), 2, /^dpfit: --regularization must be > 0 for --method output .*got -1$/, 'output with lambda < 0');
  });

  it('a computation that cannot reach its accuracy is not a bug: never exit 1', async () => {
    const result = await run('epsilon', '--delta', '1e-300', '--event', '{"kind":"gaussian","noiseMultiplier":1}', '--accountant', 'pld', '--json');
    assert.notEqual(result.code, 1, result.stderr);
    if (result.code !== 0) assertFailure(result, result.code, /./, 'pld at delta 1e-300');
  });
});

describe('predict: rows without the label column', () => {
  it('a header without the label, a label with values no schema declares, a header-less file one field short: predictions for every row', async () => {
    const f = box();
    const model = join(f.dir, 'model.json');
    assert.equal((await run('train', '--data', f.data, '--schema', f.schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', model)).code, 0);
    const withLabel = JSON.parse((await run('predict', '--model', model, '--data', f.data, '--json')).stdout).predictions;
    assert.equal(withLabel.length, 60);
    const rows = f.lines.slice(1).map((line) => line.split(','));
    const unlabelled = join(f.dir, 'new.csv');
    writeFileSync(unlabelled, ['age,hours', ...rows.map((r) => `${r[0]},${r[1]}`)].join('\n') + '\n');
    const unknown = join(f.dir, 'unknown-label.csv');
    writeFileSync(unknown, ['age,hours,label', ...rows.map((r) => `${r[0]},${r[1]},?`)].join('\n') + '\n');
    for (const path of [unlabelled, unknown]) {
      const result = await run('predict', '--model', model, '--data', path, '--json');
      assert.equal(result.code, 0, result.stderr);
      assert.deepEqual(JSON.parse(result.stdout).predictions, withLabel, path);
    }
    // A header-less schema (like Adult's): the file without the label has one field fewer.
    const headerless = join(f.dir, 'headerless.schema.json');
    writeFileSync(headerless, JSON.stringify({ ...PEOPLE_SCHEMA, csv: { header: false } }));
    const labelledNoHeader = join(f.dir, 'train-noheader.csv');
    writeFileSync(labelledNoHeader, f.lines.slice(1).join('\n') + '\n');
    const model2 = join(f.dir, 'model2.json');
    assert.equal((await run('train', '--data', labelledNoHeader, '--schema', headerless, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', model2)).code, 0);
    const short = join(f.dir, 'new-noheader.csv');
    writeFileSync(short, rows.map((r) => `${r[0]},${r[1]}`).join('\n') + '\n');
    const a = await run('predict', '--model', model2, '--data', short, '--json');
    const b = await run('predict', '--model', model2, '--data', labelledNoHeader, '--json');
    assert.equal(a.code, 0, a.stderr);
    assert.deepEqual(JSON.parse(a.stdout).predictions, JSON.parse(b.stdout).predictions);
    // evaluate still needs the labels.
    assertFailure(await run('evaluate', '--model', model, '--data', unlabelled), 3, /^(?!.*\b(?:age, hours)\b).*new\.csv: the file's first line does not contain the schema's column 'label' \(is the file headerless\?/, 'evaluate without labels');
  });

  it('a schema that drops rows with missing values: predict refuses (exit 3) rather than print predictions shifted against the rows', async () => {
    const f = box();
    const dropSchema = join(f.dir, 'drop.schema.json');
    writeFileSync(dropSchema, JSON.stringify({ ...PEOPLE_SCHEMA, columns: PEOPLE_SCHEMA.columns.map((c) => (c.name === 'age' ? { ...c, missing: 'dropRow' } : c)) }));
    const model = join(f.dir, 'model.json');
    assert.equal((await run('train', '--data', f.data, '--schema', dropSchema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', model)).code, 0);
    const rows = f.lines.slice(1).map((line) => line.split(','));
    const complete = join(f.dir, 'complete.csv');
    writeFileSync(complete, ['age,hours', ...rows.map((r) => `${r[0]},${r[1]}`)].join('\n') + '\n');
    const ok = await run('predict', '--model', model, '--data', complete);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(ok.stdout.trim().split('\n').length, rows.length);
    const gap = join(f.dir, 'gap.csv');
    writeFileSync(gap, ['age,hours', ...rows.map((r, i) => `${i === 3 ? '' : r[0]},${r[1]}`)].join('\n') + '\n');
    assertFailure(await run('predict', '--model', model, '--data', gap), 3, /gap\.csv: has 1 row\(s\) with missing values that the schema drops/, 'predict with a dropped row');
  });
});

describe('curve without --out', () => {
  it('--json prints the points; without --json a table; nothing written', async () => {
    const f = box();
    const before = snapshot(f.dir);
    const event = '{"kind":"gaussian","noiseMultiplier":1}';
    const json = await run('curve', '--event', event, '--points', '4', '--json');
    assert.equal(json.code, 0, json.stderr);
    const result = JSON.parse(json.stdout);
    assert.equal(result.out, null);
    assert.deepEqual(result.curves.map((c: { label: string }) => c.label), ['RDP (upper bound)', 'PLD (upper bound)']);
    for (const curve of result.curves) {
      assert.equal(curve.points.length, 4);
      assert.ok(curve.points.every((p: { epsilon: number; delta: number }) => p.delta >= 0 && p.delta <= 1));
    }
    const table = await run('curve', '--event', event, '--points', '4');
    assert.equal(table.code, 0);
    assert.equal(table.stdout.trim().split('\n').length, 5);
    assertUnchanged(before, snapshot(f.dir), 'curve without --out');
  });
});

describe('progress bar', () => {
  /** A fake terminal and clock. */
  function terminal() {
    let text = '';
    let t = 0;
    return { stream: { isTTY: true, write: (s: string) => (text += s) }, now: () => t, advance: (ms: number) => (t += ms), text: () => text };
  }
  const lastFrame = (text: string) => text.split('\r').filter((s) => s !== '').at(-1) ?? '';

  it('shows the time left, 100 % and the time taken at the end; nothing when stderr is not a terminal or with --json', () => {
    const tty = terminal();
    const bar = progressBar('training (dpsgd)', { enabled: true, stream: tty.stream, now: tty.now });
    assert.ok(bar !== undefined);
    tty.advance(10_000);
    bar.onStep(25, 100);
    assert.match(lastFrame(tty.text()), /^training \(dpsgd\) \[#{8}\.{22}\]  25%  ETA 30s/);
    tty.advance(10_000);
    bar.onStep(50, 100);
    assert.match(lastFrame(tty.text()), /50%  ETA 20s/);
    tty.advance(20_000);
    bar.onStep(100, 100);
    assert.match(lastFrame(tty.text()), /\[#{30}\] 100%  in 40s\u001b\[K\n$/);
    assert.equal(progressBar('x', { enabled: true, stream: { isTTY: false, write: () => assert.fail('drawn') } }), undefined);
    assert.equal(progressBar('x', { enabled: false, stream: tty.stream }), undefined);
    assert.equal(formatDuration(3 * 3600e3 + 5 * 60e3), '3h05m');
  });

  it('several runs (tuning): ONE bar for the whole command, never going back, below 100 % until the end', () => {
    const tty = terminal();
    const bar = progressBar('training (dpgd, tuned)', { enabled: true, runs: { count: 2, exact: false }, stream: tty.stream, now: tty.now });
    assert.ok(bar !== undefined);
    const seen: number[] = [];
    for (let run = 0; run < 3; run++) {
      for (let step = 1; step <= 4; step++) {
        tty.advance(2000);
        bar.onStep(step, 4);
        seen.push(Number(/(\d+)%/.exec(lastFrame(tty.text()))?.[1]));
      }
    }
    assert.ok(seen.every((p, i) => i === 0 || p >= seen[i - 1]), `monotone: ${seen.join(' ')}`);
    assert.ok(seen.every((p) => p < 100), 'below 100 % while K is unknown');
    assert.match(lastFrame(tty.text()), /ETA ~\S+  run 3 \(~2 expected\)/);
    bar.end(true);
    assert.match(lastFrame(tty.text()), / 100%  in 24s/);
    // A failure ends the line, so the error starts on its own.
    const other = terminal();
    const failing = progressBar('t', { enabled: true, stream: other.stream, now: other.now });
    failing?.onStep(1, 10);
    failing?.end(false);
    assert.ok(other.text().endsWith('\n'));
  });
});

describe('evaluate: the majority-class baseline next to a classifier\'s accuracy', () => {
  it('is the share of the most frequent label, in the JSON and the table', async () => {
    const f = box();
    const model = join(f.dir, 'model.json');
    assert.equal((await run('train', '--data', f.data, '--schema', f.schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--out', model)).code, 0);
    const result = await run('evaluate', '--model', model, '--data', f.data, '--json');
    assert.equal(result.code, 0, result.stderr);
    const labels = f.lines.slice(1).map((line) => line.split(',')[2]);
    const yes = labels.filter((l) => l === 'yes').length / labels.length;
    assert.ok(Math.abs(JSON.parse(result.stdout).majorityBaseline - Math.max(yes, 1 - yes)) < 1e-12);
    assert.match((await run('evaluate', '--model', model, '--data', f.data)).stdout, /^majorityBaseline \d/m);
  });
});

describe('epsilon dpsgd / calibrate dpsgd: the schedule as Opacus counts it', () => {
  it('--dataset-size --batch-size --epochs equals --sampling-probability B/N --steps ceil(E N / B); mixing or missing is exit 2 naming the flags', async () => {
    const opacus = JSON.parse((await run('epsilon', 'dpsgd', '--dataset-size', '60000', '--batch-size', '2400', '--epochs', '90', '--noise-multiplier', '1.5', '--delta', '1e-5', '--json')).stdout);
    const direct = JSON.parse((await run('epsilon', 'dpsgd', '--sampling-probability', '0.04', '--steps', '2250', '--noise-multiplier', '1.5', '--delta', '1e-5', '--json')).stdout);
    assert.equal(opacus.epsilon, direct.epsilon);
    const calibrated = JSON.parse((await run('calibrate', 'dpsgd', '--dataset-size', '1000', '--batch-size', '10', '--epochs', '3', '--epsilon', '2', '--delta', '1e-5', '--json')).stdout);
    assert.equal(calibrated.event.count, 300);
    assert.equal(calibrated.event.event.samplingProbability, 0.01);
    assertFailure(await run('epsilon', 'dpsgd', '--steps', '10', '--dataset-size', '100', '--noise-multiplier', '1', '--delta', '1e-5'), 2, /--sampling-probability must be absent with --dataset-size/, 'mixed');
    assertFailure(await run('epsilon', 'dpsgd', '--dataset-size', '100', '--epochs', '1', '--noise-multiplier', '1', '--delta', '1e-5'), 2, /--batch-size is required/, 'missing batch');
    assertFailure(await run('epsilon', 'dpsgd', '--dataset-size', '100', '--batch-size', '200', '--epochs', '1', '--noise-multiplier', '1', '--delta', '1e-5'), 2, /--batch-size must be an integer in \[1, --dataset-size = 100\]/, 'batch above n');
  });
});
