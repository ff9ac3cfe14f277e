/**
 * `dpfit train --tune --validation V`: V is asserted PUBLIC; the overlap check
 * (`cli/validation-overlap.ts`) gives guarantee none when V is a copy of the training data, however
 * reformatted (a copy with its columns reordered, with a constant column added, or with
 * one feature moved by 1e-4 used to be `proven`), and leaves `proven` a public sample that shares a
 * few records with the training data by chance, as adult.test shares 0.9 % of its rows with
 * adult.data. The neighbour test: the check's verdict reads the private data, so it may only lower
 * the guarantee (and say so); it never changes what is trained or released.
 *
 * The reordered, extended, moved, respelled and header-less copies were `proven` when the check
 * hashed raw rows in file order (run this file against that `validation-overlap.ts` to see them
 * fail), and rows read from --db were not compared at all; the relabelled, subset, shuffled and
 * mixed copies were caught; the public sample was `none`.
 *
 * A red-team review found two more, `proven` until the check counted its share over the rows that
 * score and compared categories up to their spelling (run this file against the
 * `validation-overlap.ts`, `schema-records.ts` and `near-duplicates.ts` of commit 224145c to see
 * them fail): a copy padded with rows the schema drops for a missing value (the share was over
 * every row read, 300 of 6,300 = 4.8 %, while the scores ran on the 300 copied rows alone), and
 * a copy whose categories changed case or spacing (`PRIVATE`, ` private `: the "other" slot, so no
 * row was shared), as CSV and as Parquet.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { seededRng } from '../../src/random/rng.js';
import { observableDifferences, observedText } from '../helpers/neighbour-diff.js';
import { runCli } from '../helpers/people.js';

const WORK = ['Private', 'State-gov', 'Self-emp'];

/** A census-like public schema: three numeric columns (declared ranges 73, 1e6 and 98) and one categorical. */
const SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 17, upper: 90 },
    { name: 'work', type: 'categorical', categories: WORK, missing: 'other' },
    { name: 'weight', type: 'numeric', lower: 1, upper: 1_000_001 },
    { name: 'hours', type: 'numeric', lower: 1, upper: 99 },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
};

/** The documented resolution, in each column's units: 1/1000 of the declared range. */
const RESOLUTION = { age: 0.073, weight: 1000, hours: 0.098 };

interface Person {
  age: number;
  work: string;
  weight: number;
  hours: number;
  label: string;
}

/** n seeded people: whole ages and hours, a weight spread over half a million, some work the schema does not list ('?' missing, 'Never-worked'). */
function people(seed: number, n: number): Person[] {
  const rng = seededRng(seed);
  const pick = (k: number) => Math.floor(rng.nextDouble() * k);
  const work = () => {
    const u = rng.nextDouble();
    return u < 0.1 ? '?' : u < 0.15 ? 'Never-worked' : WORK[pick(3)];
  };
  return Array.from({ length: n }, () => ({
    age: 18 + pick(60),
    work: work(),
    weight: 10_000 + pick(490_000),
    hours: 20 + pick(60),
    label: rng.nextDouble() < 0.3 ? 'yes' : 'no',
  }));
}

type Column = keyof Person | { name: string; value: (p: Person, i: number) => string };

/** CSV text of the rows with these columns, in this order (default: the schema's). */
function csv(rows: readonly Person[], options: { columns?: readonly Column[]; header?: boolean } = {}): string {
  const columns = options.columns ?? (['age', 'work', 'weight', 'hours', 'label'] as const);
  const name = (c: Column) => (typeof c === 'string' ? c : c.name);
  const cell = (c: Column, p: Person, i: number) => (typeof c === 'string' ? String(p[c]) : c.value(p, i));
  const lines = rows.map((p, i) => columns.map((c) => cell(c, p, i)).join(','));
  return `${[...(options.header === false ? [] : [columns.map(name).join(',')]), ...lines].join('\n')}\n`;
}

/** A seeded shuffle (Fisher-Yates). */
function shuffled<T>(items: readonly T[], seed: number): T[] {
  const rng = seededRng(seed);
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rng.nextDouble() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/** A fresh temp dir, removed after the suite, and a writer of files in it. */
function workspace(): { dir: string; write: (name: string, text: string) => string } {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-tune-overlap-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return { dir, write: (name, text) => (writeFileSync(join(dir, name), text), join(dir, name)) };
}

/** A tuned DP-GD run (secure randomness, so that the guarantee can be proven), --json, the model written to `out`. */
function tune(data: string, schema: string, validation: string, out: string, mean = 3) {
  return runCli('train', '--data', data, '--schema', schema, '--method', 'dpgd', '--steps', '3', '--epsilon', '1', '--tune', String(mean),
    '--tune-learning-rates', '0.5,1', '--validation', validation, '--out', out, '--json');
}

const training = people(1, 300);
const publicRows = people(2, 200);
const alternate = (i: number) => (i % 2 === 0 ? 1 : -1);
/** A work value in another case or spacing (`PRIVATE`, `  private  `, `self-Emp`). */
const respelled = (p: Person, i: number): string =>
  [p.work.toUpperCase(), `  ${p.work.toLowerCase()}  `, p.work.replace(/-(.)/, (_m, c: string) => `-${c.toUpperCase()}`).replace(/^./, (c) => c.toLowerCase())][i % 3];
/** `count` rows that the schema with a "dropRow" column drops: missing that column, the rest of them public. */
const dropped = (column: 'label' | 'hours', count: number): Person[] =>
  Array.from({ length: count }, (_, i) => ({ ...publicRows[i % publicRows.length], [column]: '' } as unknown as Person));

/** Copies of the training data, each written as the validation file (header files, the schema of SCHEMA). */
const COPIES: Record<string, string> = {
  'columns reordered': csv(training, { columns: ['hours', 'label', 'weight', 'work', 'age'] }),
  'one constant column added': csv(training, { columns: ['age', 'work', { name: 'source', value: () => 'census' }, 'weight', 'hours', 'label'] }),
  'another column added': csv(training, { columns: [{ name: 'id', value: (_p, i) => String(1000 + i) }, 'age', 'work', 'weight', 'hours', 'label'] }),
  'one feature moved by 1e-4': csv(training, { columns: ['age', 'work', 'weight', { name: 'hours', value: (p) => String(p.hours + 1e-4) }, 'label'] }),
  'every feature moved by 0.9 resolution': csv(training, {
    columns: [
      { name: 'age', value: (p, i) => String(p.age + 0.9 * RESOLUTION.age * alternate(i)) },
      'work',
      { name: 'weight', value: (p, i) => String(p.weight - 0.9 * RESOLUTION.weight * alternate(i)) },
      { name: 'hours', value: (p, i) => String(p.hours + 0.9 * RESOLUTION.hours * alternate(i + 1)) },
      'label',
    ],
  }),
  // The schema puts every value it does not list, and a missing one, in the "other" slot: these rows are those of the training data.
  'the rows of unlisted categories, spelled otherwise': csv(training.filter((p) => !WORK.includes(p.work)), {
    columns: ['age', { name: 'work', value: (p) => (p.work === '?' ? 'unknown' : '') }, 'weight', 'hours', 'label'],
  }),
  // The rows of listed categories, each in another case or spacing: the schema puts them all in the other slot (training never folds case).
  'categories in another case and spacing': csv(training.filter((p) => WORK.includes(p.work)), { columns: ['age', { name: 'work', value: respelled }, 'weight', 'hours', 'label'] }),
  'labels changed': csv(training.map((p) => ({ ...p, label: p.label === 'yes' ? 'no' : 'yes' }))),
  'a tenth of the rows, shuffled': csv(shuffled(training, 3).slice(0, 30)),
  'one row': csv([training[123]]),
  'every row, shuffled': csv(shuffled(training, 4)),
  'a quarter of the rows among public ones': csv(shuffled([...training.slice(0, 50), ...publicRows.slice(0, 150)], 5)),
};

describe('dpfit train --tune: validation files that copy the training data give guarantee none', () => {
  const { dir, write } = workspace();
  const data = write('train.csv', csv(training));
  const schema = write('schema.json', JSON.stringify(SCHEMA));

  for (const [name, text] of Object.entries(COPIES)) {
    it(name, async () => {
      const validation = write(`${name.replace(/\W+/g, '-')}.csv`, text);
      const out = join(dir, `${name.replace(/\W+/g, '-')}.json`);
      const trained = await tune(data, schema, validation, out);
      assert.equal(trained.code, 0, trained.stderr);
      const result = JSON.parse(trained.stdout);
      assert.equal(result.privacy.guarantee, 'none', name);
      assert.ok(result.privacy.warnings.some((w: string) => /not disjoint/.test(w)), name);
      assert.doesNotMatch(trained.stdout, /overlappingRows|validationOverlap/, 'no overlap count in the release');
      if (result.model !== null) assert.equal(JSON.parse(readFileSync(out, 'utf8')).privacy.guarantee, 'none');
    });
  }

  it('a header-less copy whose columns were reordered (read by position, the schema names the columns wrongly)', async () => {
    const headerless = write('headerless.schema.json', JSON.stringify({ ...SCHEMA, csv: { header: false } }));
    const rows = write('train-headerless.csv', csv(training, { header: false }));
    // age and weight swapped: both numeric, so the file still loads, each value under the other's name.
    const validation = write('swapped.csv', csv(training, { header: false, columns: ['weight', 'work', 'age', 'hours', 'label'] }));
    const trained = await tune(rows, headerless, validation, join(dir, 'swapped.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'none');
  });

  it('the same, its categories in another case or spacing (the rows of listed categories)', async () => {
    const headerless = write('headerless.schema.json', JSON.stringify({ ...SCHEMA, csv: { header: false } }));
    const rows = write('train-headerless.csv', csv(training, { header: false }));
    const listed = training.filter((p) => WORK.includes(p.work));
    const respelledSwap = write('swapped-respelled.csv', csv(listed, { header: false, columns: ['weight', { name: 'work', value: respelled }, 'age', 'hours', 'label'] }));
    const again = await tune(rows, headerless, respelledSwap, join(dir, 'swapped-respelled.json'));
    assert.equal(again.code, 0, again.stderr);
    assert.equal(JSON.parse(again.stdout).privacy.guarantee, 'none');
  });

  for (const column of ['label', 'hours'] as const) {
    it(`a copy padded with rows the schema drops for a missing ${column} (300 of 6,300 rows read are copies; all 300 scoring rows are)`, async () => {
      const columns = SCHEMA.columns.map((c) => (c.name === column ? { ...c, missing: 'dropRow' } : c));
      const dropping = write(`drop-${column}.schema.json`, JSON.stringify({ ...SCHEMA, columns }));
      const validation = write(`padded-${column}.csv`, csv(shuffled([...training, ...dropped(column, 6000)], 9)));
      const out = join(dir, `padded-${column}.json`);
      const trained = await tune(data, dropping, validation, out);
      assert.equal(trained.code, 0, trained.stderr);
      const result = JSON.parse(trained.stdout);
      assert.equal(result.privacy.guarantee, 'none');
      assert.ok(result.privacy.warnings.some((w: string) => /not disjoint/.test(w)));
      if (result.model !== null) assert.equal(JSON.parse(readFileSync(out, 'utf8')).privacy.guarantee, 'none');
    });
  }

  it('a copy whose categories changed case or spacing, as Parquet', async () => {
    const respelledCsv = write('respelled.csv', COPIES['categories in another case and spacing']);
    const parquet = join(dir, 'respelled.parquet');
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`COPY (SELECT * FROM read_csv('${respelledCsv}', header = true, columns = {'age': 'DOUBLE', 'work': 'VARCHAR', 'weight': 'DOUBLE', 'hours': 'DOUBLE', 'label': 'VARCHAR'})) TO '${parquet}' (FORMAT parquet)`);
    connection.closeSync();
    instance.closeSync();
    const trained = await tune(data, schema, parquet, join(dir, 'respelled-parquet.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'none');
  });

  it('training rows read from --db (DuckDB, --method dpsgd), the validation file a copy of them', async () => {
    const database = join(dir, 'people.duckdb');
    const instance = await DuckDBInstance.create(database);
    const connection = await instance.connect();
    await connection.run(`CREATE TABLE people AS SELECT * FROM read_csv('${data}', header = true, columns = {'age': 'DOUBLE', 'work': 'VARCHAR', 'weight': 'DOUBLE', 'hours': 'DOUBLE', 'label': 'VARCHAR'})`);
    connection.closeSync();
    instance.closeSync();
    const trained = await runCli('train', '--db', `duckdb:${database}`, '--query', 'SELECT * FROM people', '--schema', schema, '--method', 'dpsgd', '--epochs', '1',
      '--batch-size', '50', '--epsilon', '1', '--tune', '3', '--tune-learning-rates', '0.5,1', '--validation', write('db-copy.csv', csv(shuffled(training, 8))), '--json');
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'none');
  });
});

describe('dpfit train --tune: what the check does not flag (documented in --help and the README)', () => {
  const { dir, write } = workspace();
  const data = write('train.csv', csv(training));
  const schema = write('schema.json', JSON.stringify(SCHEMA));

  it('a public sample that shares 3 of its 203 records with the training data (1.5 %, distinct people share records): proven', async () => {
    const validation = write('public.csv', csv(shuffled([...publicRows, training[7], training[70], training[270]], 6)));
    const trained = await tune(data, schema, validation, join(dir, 'public.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'proven');
  });

  it('a copy whose every numeric value moved by 2.5 resolutions: proven (beyond what is detected)', async () => {
    const far = csv(training, {
      columns: [
        { name: 'age', value: (p) => String(p.age + 2.5 * RESOLUTION.age) },
        'work',
        { name: 'weight', value: (p) => String(p.weight + 2.5 * RESOLUTION.weight) },
        { name: 'hours', value: (p) => String(p.hours + 2.5 * RESOLUTION.hours) },
        'label',
      ],
    });
    const trained = await tune(data, schema, write('far.csv', far), join(dir, 'far.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'proven');
  });

  it('copies of training rows that the schema drops (a missing label) score nothing: with a public sample, proven', async () => {
    const columns = SCHEMA.columns.map((c) => (c.name === 'label' ? { ...c, missing: 'dropRow' } : c));
    const dropping = write('drop-label.schema.json', JSON.stringify({ ...SCHEMA, columns }));
    const unlabelled = training.map((p) => ({ ...p, label: '' }));
    const validation = write('public-and-dropped.csv', csv(shuffled([...publicRows, ...unlabelled], 10)));
    const trained = await tune(data, dropping, validation, join(dir, 'public-and-dropped.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'proven');
  });

  it('a copy diluted by 6,000 copies of one public row (300 of 6,300 scoring rows shared, 4.8 %): proven (dilution is not detected)', async () => {
    // The share weighs rows as the scores do: each copy of the public row is a row of the mean.
    const filler = { age: 88.5, work: 'State-gov', weight: 999_999, hours: 2.5, label: 'no' };
    const validation = write('diluted.csv', csv([...training, ...Array.from({ length: 6000 }, () => filler)]));
    const trained = await tune(data, schema, validation, join(dir, 'diluted.json'));
    assert.equal(trained.code, 0, trained.stderr);
    assert.equal(JSON.parse(trained.stdout).privacy.guarantee, 'proven');
  });
});

/**
 * The neighbour test of tuning (test/helpers/neighbour-diff.ts): D and D' differ in one record
 * (replace-one). With a validation file disjoint from both, an adversary sees the same thing on
 * both but the tuned theta (the accounted release, compared by shape). With a validation file
 * that holds the replaced record (the user's mistake: it is a private record), the check's verdict
 * differs and it may only lower the guarantee: the two runs differ in the guarantee and its
 * warning, nowhere else.
 */
describe('dpfit train --tune: neighbour test', () => {
  const { dir, write } = workspace();
  const base = people(31, 120);
  // Ages of the replaced and the public records are not whole: none of them is within the resolution of a row of D.
  const replaced: Person = { age: 33.5, work: 'State-gov', weight: 123_457, hours: 61, label: 'yes' };
  const neighbour = base.map((p, i) => (i === 17 ? replaced : p));
  const fresh = people(32, 9).map((p, i) => ({ ...p, age: 20.25 + 3 * i }));
  const D = write('D.csv', csv(base));
  const Dprime = write('D-prime.csv', csv(neighbour));
  const schema = write('schema.json', JSON.stringify(SCHEMA));
  const disjoint = write('V-disjoint.csv', csv(fresh));
  const holdsReplaced = write('V-holds-replaced.csv', csv([...fresh, replaced]));
  const badLabel = write('V-bad-label.csv', csv([...fresh, { ...fresh[0], label: 'maybe' }]));

  /** Everything an adversary observes of a run: status, stdout, stderr (the --json run's), the model file. */
  async function observe(data: string, validation: string): Promise<Record<string, unknown>> {
    // One path for every run (it is printed): removed first, so that a failed run shows no file.
    const out = join(dir, 'model.json');
    rmSync(out, { force: true });
    // Mean 20: K = 0 runs (no model) has probability e^-20, so both runs release a model.
    const run = await tune(data, schema, validation, out, 20);
    return { code: run.code, stdout: observedText(run.stdout), stderr: observedText(run.stderr), file: existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : null };
  }
  const released = { released: ['stdout.model.theta', 'file.theta'] };

  it('V disjoint from D and D\': every observable matches (theta by shape), guarantee proven on both', async () => {
    const a = await observe(D, disjoint);
    const b = await observe(Dprime, disjoint);
    assert.deepEqual(observableDifferences(a, b, released), []);
    assert.equal((a.stdout as { privacy: { guarantee: string } }).privacy.guarantee, 'proven');
  });

  it('an error found after the training data are read (an unknown label in V): the same status and text on D and D\'', async () => {
    const a = await observe(D, badLabel);
    const b = await observe(Dprime, badLabel);
    assert.equal(a.code, 3);
    assert.deepEqual(observableDifferences(a, b, released), []);
  });

  it('V holds the replaced record: the verdict only lowers the guarantee on D\' and says so; nothing else differs', async () => {
    const a = await observe(D, holdsReplaced);
    const b = await observe(Dprime, holdsReplaced);
    const differing = observableDifferences(a, b, released).map((d) => d.split(':')[0]).sort();
    assert.deepEqual(differing, [
      'file.privacy.guarantee',
      'file.privacy.warnings',
      'stdout.model.privacy.guarantee',
      'stdout.model.privacy.warnings',
      'stdout.privacy.guarantee',
      'stdout.privacy.warnings',
    ]);
    const [pa, pb] = [a, b].map((o) => (o.stdout as { privacy: { guarantee: string; warnings: string[] } }).privacy);
    assert.equal(pa.guarantee, 'proven');
    assert.equal(pb.guarantee, 'none');
    // D''s warnings are D's plus the overlap's, which names no count.
    assert.deepEqual(pb.warnings.filter((w) => !/not disjoint/.test(w)), pa.warnings);
    assert.equal(pb.warnings.length, pa.warnings.length + 1);
    assert.doesNotMatch(pb.warnings.join('\n'), /\d+ (of|rows)/);
  });
});
