/**
 * The data readers fuzzed through the CLI with generated data files. Each run writes one
 * file — the people CSV mangled by a few random edits: a field dropped
 * or added, a value replaced by garbage (empty, NaN, 1e999, an unknown category, a lone quote, a
 * NUL byte, 10 kB of text, non-UTF-8 bytes), the header changed, CRLF line ends, a BOM, blank
 * lines, the file cut anywhere — and runs `train`, `evaluate`, `predict` or `data inspect` on it,
 * with a fixed seed and a bounded number of runs. Asserts, as the argument fuzz does: exit 0, 2,
 * 3 or 4; on failure one stderr line without a stack trace and no file created or changed.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { runContractProblems, snapshot } from '../helpers/files.js';
import { peopleFixture, runCli } from '../helpers/people.js';

const GARBAGE = ['', 'NaN', '1e999', '-1e999', 'maybe', '"', '"a,b"', '\u0000', 'x'.repeat(10_000), '\uFFFD\uFFFD', ' 42 ', '0x1F', '1,5', 'Infinity', '-0', '1e-320', 'yes', 'no', 'YES'];

type Edit =
  | { kind: 'drop' | 'add' | 'garbage'; row: number; column: number; value: string }
  | { kind: 'header'; value: string }
  | { kind: 'crlf' | 'bom' | 'blank' | 'empty' | 'headerOnly' | 'latin1' }
  | { kind: 'cut'; at: number };

const edit: fc.Arbitrary<Edit> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constantFrom('drop' as const, 'add' as const, 'garbage' as const), row: fc.nat(), column: fc.nat(), value: fc.constantFrom(...GARBAGE) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('header' as const), value: fc.constantFrom('age,hours', 'age,hours,label,label', 'AGE,hours,label', 'age;hours;label', '', 'hours,age,label') }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constantFrom('crlf' as const, 'bom' as const, 'blank' as const, 'empty' as const, 'headerOnly' as const, 'latin1' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }) },
);

/** The CSV's bytes after the edits. */
function mangle(lines: readonly string[], edits: readonly Edit[]): Buffer {
  let rows = lines.map((line) => line.split(','));
  let latin1 = false;
  const suffix: string[] = [];
  for (const e of edits) {
    if (e.kind === 'drop' || e.kind === 'add' || e.kind === 'garbage') {
      const row = rows[1 + (e.row % (rows.length - 1))];
      if (row === undefined) continue;
      const column = e.column % row.length;
      if (e.kind === 'drop') row.splice(column, 1);
      else if (e.kind === 'add') row.splice(column, 0, e.value);
      else row[column] = e.value;
    } else if (e.kind === 'header') rows[0] = e.value.split(',');
    else if (e.kind === 'empty') rows = [];
    else if (e.kind === 'headerOnly') rows = rows.slice(0, 1);
    else if (e.kind === 'blank') rows.splice(1 + Math.floor(rows.length / 2), 0, ['']);
    else if (e.kind === 'latin1') latin1 = true;
    else suffix.push(e.kind === 'cut' ? `cut:${e.at}` : e.kind);
  }
  let text = rows.map((r) => r.join(',')).join('\n') + (rows.length > 0 ? '\n' : '');
  for (const s of suffix) {
    if (s === 'crlf') text = text.replace(/\n/g, '\r\n');
    else if (s === 'bom') text = `\uFEFF${text}`;
    else if (s.startsWith('cut:')) text = text.slice(0, Number(s.slice(4)) % (text.length + 1));
  }
  // Latin-1 bytes of an accented label (not valid UTF-8) where the text has one.
  return latin1 ? Buffer.from(text.replace(/yes/, 'y\u00e9s'), 'latin1') : Buffer.from(text, 'utf8');
}

test('fuzz: mangled data files through train, evaluate, predict and data inspect: exit 0/2/3/4, one clean line, nothing written on failure', async () => {
  const { dir, data, schema, lines } = peopleFixture('dpfit-fuzz-data-', 40, 5);
  const model = join(dir, 'model.json');
  const trained = await runCli('train', '--data', data, '--schema', schema, '--epsilon', '1', '--steps', '5', '--out', model);
  assert.equal(trained.code, 0, trained.stderr);
  const file = join(dir, 'mangled.csv');
  const out = join(dir, 'out.json');
  const commands: ((path: string) => string[])[] = [
    (p) => ['train', '--data', p, '--schema', schema, '--epsilon', '1', '--steps', '5', '--out', out],
    (p) => ['train', '--data', p, '--schema', schema, '--epsilon', '1', '--method', 'output', '--json'],
    (p) => ['evaluate', '--model', model, '--data', p, '--json'],
    (p) => ['predict', '--model', model, '--data', p],
    (p) => ['data', 'inspect', p, '--schema', schema, '--json'],
    (p) => ['data', 'inspect', p],
  ];
  const failures: string[] = [];
  let succeeded = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(edit, { minLength: 0, maxLength: 3 }), fc.nat({ max: commands.length - 1 }), async (edits, which) => {
      writeFileSync(file, mangle(lines, edits));
      const before = snapshot(dir);
      const argv = commands[which](file);
      const { code, stderr } = await runCli(...argv);
      const after = snapshot(dir);
      const problems = runContractProblems(code, stderr, before, after);
      if (code === 0) succeeded++;
      if (problems.length > 0) failures.push(`${argv[0]} ${JSON.stringify(edits).slice(0, 200)}: ${problems.join('; ')} [${stderr.trim().slice(0, 200)}]`);
    }),
    { seed: 20261124, numRuns: Number(process.env.DPFIT_FUZZ_RUNS ?? 400), endOnFailure: false },
  );
  assert.deepEqual(failures, [], `${failures.length} bad runs:\n${failures.slice(0, 30).join('\n')}`);
  assert.ok(succeeded > 50, `only ${succeeded} runs succeeded: the edits should leave many files readable`);
});
