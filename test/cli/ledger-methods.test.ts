/**
 * `dpfit train --ledger` for every way `train` releases something (issue 27, a budget across
 * runs): each method of the registry, one-vs-rest over a multi-class label, honest tuning
 * (`--tune`), out of core (`--max-memory`) and from a database (`--db`: DP-GD's sums inside
 * DuckDB, another method's rows read through it). For each, on a small fixture:
 *   - the run reserves before reading (the same command with a --data path that does not exist is
 *     refused by the budget, exit 4, not by the missing file, on a ledger whose budget the
 *     planned release does not fit; --db: a database file that does not exist);
 *   - on a ledger it fits, it trains, and the ledger's one entry carries exactly the model file's
 *     event (the same JSON) and the report's delta outside RDP (RGM's `deltaComponents.ptr`, else
 *     0): what `dpfit verify` re-accounts, and verify holds for the file;
 *   - objpert (no guarantee) is charged as non-private: only an infinite budget holds it.
 * The events do not depend on the data or the seed: the runs use the secure generator.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { sampleGaussian } from '../../src/random/continuous.js';
import { seededRng } from '../../src/random/rng.js';
import { runCli } from '../helpers/people.js';

let dir: string;
const files: Record<string, string> = {};

/** 300 rows of a binary task, the same with a three-class label, 2000 of a regression, a public validation file, and the binary rows in DuckDB. */
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-ledger-methods-'));
  const rng = seededRng(21);
  const binary = ['age,hours,label'];
  const multi = ['age,hours,label'];
  for (let i = 0; i < 300; i++) {
    const age = 20 + Math.floor(50 * rng.nextDouble());
    const hours = 10 + Math.floor(60 * rng.nextDouble());
    const z = (age - 40) / 12 + (hours - 40) / 10 + rng.nextDouble() - 0.5;
    binary.push(`${age},${hours},${z > 0 ? 'yes' : 'no'}`);
    multi.push(`${age},${hours},${z > 1 ? 'high' : z > -1 ? 'mid' : 'low'}`);
  }
  const scores = ['a,b,score'];
  for (let i = 0; i < 2000; i++) {
    const a = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    const b = Math.max(-4, Math.min(4, sampleGaussian(rng)));
    scores.push(`${a.toFixed(4)},${b.toFixed(4)},${(a - 0.5 * b + 0.3 * sampleGaussian(rng)).toFixed(4)}`);
  }
  const write = (name: string, body: string) => {
    writeFileSync(join(dir, name), body);
    files[name] = join(dir, name);
  };
  const numeric = [
    { name: 'age', type: 'numeric', lower: 0, upper: 80 },
    { name: 'hours', type: 'numeric', lower: 0, upper: 80 },
  ];
  write('binary.csv', `${binary.join('\n')}\n`);
  // PUBLIC validation rows for --tune: drawn apart from the training rows (non-integer values: no row is shared).
  const validation = ['age,hours,label'];
  for (let i = 0; i < 60; i++) {
    const age = 20.5 + 50 * rng.nextDouble();
    const hours = 10.5 + 60 * rng.nextDouble();
    validation.push(`${age.toFixed(3)},${hours.toFixed(3)},${(age - 40) / 12 + (hours - 40) / 10 > 0 ? 'yes' : 'no'}`);
  }
  write('validation.csv', `${validation.join('\n')}\n`);
  write('multi.csv', `${multi.join('\n')}\n`);
  write('scores.csv', `${scores.join('\n')}\n`);
  write('binary.schema.json', JSON.stringify({ version: 1, columns: [...numeric, { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] }] }));
  write('multi.schema.json', JSON.stringify({ version: 1, columns: [...numeric, { name: 'label', type: 'label', classes: ['low', 'mid', 'high'] }] }));
  write('scores.schema.json', JSON.stringify({
    version: 1,
    columns: [
      { name: 'a', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
      { name: 'b', type: 'numeric', lower: -4, upper: 4, scale: 'none' },
      { name: 'score', type: 'label', lower: -10, upper: 10 },
    ],
  }));
  files['binary.duckdb'] = join(dir, 'binary.duckdb');
  const instance = await DuckDBInstance.create(files['binary.duckdb']);
  const connection = await instance.connect();
  await connection.run(`CREATE TABLE people (age DOUBLE, hours DOUBLE, label VARCHAR); INSERT INTO people VALUES ${binary.slice(1).map((l) => l.split(',')).map(([a, h, y]) => `(${a}, ${h}, '${y}')`).join(', ')}`);
  connection.closeSync();
  instance.closeSync();
});

interface Case {
  readonly name: string;
  /** The data source and schema flags (the file names of the fixture). */
  readonly source: (absent: boolean) => string[];
  readonly args: readonly string[];
  /** The budget that holds it (objpert: only an infinite one). */
  readonly budget?: string;
}

const file = (data: string, schema: string) => (absent: boolean) => ['--data', absent ? join(dir, 'absent.csv') : files[data], '--schema', files[schema]];
const binary = file('binary.csv', 'binary.schema.json');
const db = (absent: boolean) => ['--db', `duckdb:${absent ? join(dir, 'absent.duckdb') : files['binary.duckdb']}`, '--query', 'SELECT * FROM people', '--schema', files['binary.schema.json']];

const CASES: readonly Case[] = [
  { name: 'dpsgd', source: binary, args: ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '300', '--epochs', '2'] },
  { name: 'dpgd', source: binary, args: ['--method', 'dpgd', '--epsilon', '1', '--dataset-size', '300', '--steps', '10'] },
  { name: 'shuffled', source: binary, args: ['--method', 'shuffled', '--epsilon', '1', '--dataset-size', '300', '--epochs', '2'] },
  { name: 'output', source: binary, args: ['--method', 'output', '--epsilon', '1', '--dataset-size', '300'] },
  { name: 'output-sgd', source: binary, args: ['--method', 'output-sgd', '--epsilon', '1', '--dataset-size', '300', '--epochs', '2'] },
  { name: 'amp', source: binary, args: ['--method', 'amp', '--epsilon', '1'] },
  { name: 'objpert (charged as non-private)', source: binary, args: ['--method', 'objpert', '--accept-no-guarantee', '--epsilon', '1'], budget: 'Infinity' },
  { name: 'rgm, ridge (PTR: the whole mechanism and delta_ptr)', source: file('scores.csv', 'scores.schema.json'), args: ['--method', 'rgm', '--loss', 'squared', '--epsilon', '2', '--dataset-size', '2000', '--steps', '20'] },
  { name: 'rgm, logistic', source: binary, args: ['--method', 'rgm', '--epsilon', '2', '--dataset-size', '300', '--steps', '20'] },
  { name: 'one-vs-rest (dpgd, the schema\'s three classes)', source: file('multi.csv', 'multi.schema.json'), args: ['--method', 'dpgd', '--epsilon', '1', '--dataset-size', '300', '--steps', '10'] },
  { name: 'one-vs-rest (dpsgd)', source: file('multi.csv', 'multi.schema.json'), args: ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '300', '--epochs', '1'] },
  { name: '--tune (dpgd)', source: binary, args: ['--method', 'dpgd', '--epsilon', '1', '--dataset-size', '300', '--steps', '5', '--tune', '2', '--tune-learning-rates', '0.1,1'] },
  { name: '--max-memory (dpgd)', source: binary, args: ['--method', 'dpgd', '--epsilon', '1', '--dataset-size', '300', '--steps', '5', '--max-memory', '64MiB'] },
  { name: '--max-memory (dpsgd)', source: binary, args: ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '300', '--epochs', '1', '--max-memory', '64MiB'] },
  { name: '--db (dpgd: the sums inside DuckDB)', source: db, args: ['--method', 'dpgd', '--epsilon', '1', '--dataset-size', '300', '--steps', '5'] },
  { name: '--db (output: the rows read through DuckDB)', source: db, args: ['--method', 'output', '--epsilon', '1', '--dataset-size', '300'] },
];

describe('train --ledger reserves, before reading, exactly the release each way of training reports', () => {
  for (const [k, c] of CASES.entries()) {
    it(c.name, { timeout: 240_000 }, async () => {
      const extra = c.name.startsWith('--tune') ? ['--validation', files['validation.csv']] : [];
      // Refused before reading: the planned release does not fit a tiny budget, and the data do not exist.
      const tiny = join(dir, `tiny-${k}.ledger`);
      const refused = await runCli('train', ...c.source(true), ...c.args, ...extra, '--delta', '1e-5', '--ledger', tiny, '--budget-epsilon', '0.01', '--budget-delta', '1e-4', '--json');
      assert.equal(refused.code, 4, refused.stderr);
      assert.match(refused.stderr, /this run is refused, nothing was read or released/);
      assert.equal(refused.stderr.trim().split('\n').length, 1);

      const ledger = join(dir, `run-${k}.ledger`);
      const model = join(dir, `model-${k}.json`);
      const run = await runCli('train', ...c.source(false), ...c.args, ...extra, '--delta', '1e-5', '--ledger', ledger, '--budget-epsilon', c.budget ?? '100', '--budget-delta', '1e-4', '--out', model, '--json');
      assert.equal(run.code, 0, run.stderr);
      const privacy = JSON.parse(readFileSync(model, 'utf8')).privacy;
      const shown = await runCli('ledger', 'show', ledger, '--json');
      assert.equal(shown.code, 0, shown.stderr);
      const { entries } = JSON.parse(shown.stdout);
      assert.equal(entries.length, 1);
      if (c.budget === 'Infinity') {
        assert.deepEqual(entries[0].event, { kind: 'nonPrivate' });
        assert.equal(privacy.guarantee, 'none');
      } else {
        assert.deepEqual(entries[0].event, privacy.event);
        assert.equal(entries[0].extraDelta, privacy.deltaComponents?.ptr ?? 0);
        if (c.args.includes('squared')) assert.ok(entries[0].extraDelta > 0);
        assert.equal(privacy.guarantee, 'proven');
      }
      const verified = await runCli('verify', model, '--json');
      // Every method's file verifies (RGM's GLM path by re-deriving eta and R_rel from the public
      // values its report states, privacy.relativeSensitivity; ridge RGM by its PTR part).
      assert.equal(verified.code, 0, verified.stdout);
      assert.equal(JSON.parse(verified.stdout).holds, true);
      assert.ok(JSON.parse(verified.stdout).verified.epsilon <= privacy.epsilon);
    });
  }
});
