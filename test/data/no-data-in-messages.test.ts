/**
 * No message of the data layer carries a value of the data (docs/threat-model.md, "Messages").
 * Bad files whose every private value is a unique marker (`../helpers/marked-data.ts`: wrong and
 * missing headers, bad numbers, NaN/Infinity text, unknown categories, out-of-range values under
 * every missing-value policy and row transform, wrong labels, empty files, ragged rows, invalid
 * UTF-8, junk after quotes, extra columns) are read by `loadDataset` (built-in reader, DuckDB's
 * CSV reader, the chunk-encoding path), by `readTable` + `applySchema`, from Parquet (DuckDB), and
 * LIBSVM files by `parseLibsvm`; no error's message, `String(error)` or inspected fields, and no
 * feature name of what loads, holds a marker. Seeded; a few seconds.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { inspect } from 'node:util';
import { arrayFeatureStore } from '../../src/data/feature-store.js';
import { parseLibsvm } from '../../src/data/libsvm.js';
import { withDuckDb } from '../../src/data/node/duckdb.js';
import { loadDataset, readTable } from '../../src/data/node/read.js';
import { applySchema } from '../../src/data/schema/apply.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../src/data/schema/read-options.js';
import { DEFECTS, leaks, markedCase, writeCase, type MarkedCase } from '../helpers/marked-data.js';

/** Everything a caller could print of an outcome: the error's message, its string and its fields; or the feature names. */
/** The defects DuckDB's own CSV parser meets (the others are dpfit's checks, the same code for every reader). */
const DUCKDB_DEFECTS: readonly string[] = ['headerless', 'badNumber', 'nonFiniteText', 'raggedLong', 'raggedShort', 'badEncoding', 'quoteJunk', 'empty'];

async function observe(run: () => Promise<{ dataset: { featureNames: readonly string[] } }>): Promise<{ failed: boolean; text: string }> {
  try {
    const prepared = await run();
    return { failed: false, text: prepared.dataset.featureNames.join('\n') };
  } catch (error) {
    return { failed: true, text: `${(error as Error).message}\n${String(error)}\n${inspect(error, { depth: 4 })}` };
  }
}

function assertClean(text: string, c: Pick<MarkedCase, 'markers' | 'literals'>, what: string): void {
  const found = leaks(text, c);
  assert.deepEqual(found, [], `${what} shows values of the data ${JSON.stringify(found)}:\n${text.slice(0, 600)}`);
}

test('loadDataset and applySchema: no error or feature name holds a value of the data, for every kind of bad file (seeded)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-no-data-'));
  try {
    let failures = 0;
    let runs = 0;
    for (let seed = 1; seed <= 3; seed++) {
      for (const defect of DEFECTS) {
        const c = markedCase(1000 * seed + DEFECTS.indexOf(defect), defect);
        const name = `${defect}-${seed}`;
        const files = writeCase(dir, name, c);
        const schema = parseSchema(c.schema, files.schema);
        const outcomes = {
          builtin: await observe(() => loadDataset(files.data, schema)),
          chunked: await observe(() => loadDataset(files.data, schema, { features: arrayFeatureStore, encodeChunkBytes: 64 })),
          applySchema: await observe(async () => applySchema(await readTable(files.data, schemaCsvOptions(schema, files.data)), schema)),
          // DuckDB's CSV reader (its own errors included) on the first seed, for the defects its parser meets: each read starts a DuckDB.
          ...(seed === 1 && DUCKDB_DEFECTS.includes(defect) ? { duckdb: await observe(() => loadDataset(files.data, schema, { engine: 'duckdb', threads: 1 })) } : {}),
        };
        for (const [reader, outcome] of Object.entries(outcomes)) {
          runs++;
          if (outcome.failed) failures++;
          assertClean(outcome.text, c, `${name} (${reader}, ${c.policy.numeric}/${c.policy.categorical}/${c.policy.label}, ${c.rowTransform})`);
        }
      }
    }
    // The bad files do fail (the test reads errors, not only successes).
    assert.ok(failures >= runs / 2, `${failures} of ${runs} reads failed`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the headerless Adult record of issue 27 is not printed: the error names the schema\'s columns and asks whether the file is headerless', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-no-data-'));
  try {
    const data = join(dir, 'adult.data');
    writeFileSync(data, '39, State-gov, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, <=50K\n');
    const schema = parseSchema({
      version: 1,
      columns: [
        { name: 'age', type: 'numeric', lower: 17, upper: 90 },
        { name: 'workclass', type: 'categorical', categories: ['Private', 'State-gov'] },
        { name: 'income', type: 'label', positive: ['>50K'], negative: ['<=50K'] },
      ],
    }, 'adult.schema.json');
    await assert.rejects(loadDataset(data, schema), (error: Error) => {
      assert.match(error.message, /adult\.data: the file's first line does not contain the schema's columns 'age', 'workclass', 'income' \(is the file headerless\? then set "header": false/);
      for (const value of ['39', 'State-gov', '77516', 'Bachelors', 'United-States']) assert.ok(!error.message.includes(value), value);
      return true;
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('Parquet (DuckDB): text in a numeric column, non-finite doubles, unknown labels and categories are not quoted', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-no-data-'));
  try {
    const parquets: { c: MarkedCase; schema: ReturnType<typeof parseSchema>; typed: boolean; csv: string; parquet: string }[] = [];
    for (const defect of ['badNumber', 'nonFiniteText', 'badLabel', 'unknownCategory', 'outOfRange', 'wrongHeader'] as const) {
      const c = markedCase(77 + DEFECTS.indexOf(defect), defect);
      const files = writeCase(dir, defect, c);
      const schema = parseSchema(c.schema, files.schema);
      for (const typed of defect === 'wrongHeader' ? [false] : [false, true]) parquets.push({ c, schema, typed, csv: files.data, parquet: join(dir, `${defect}-${typed}.parquet`) });
    }
    // One DuckDB writes every file: all columns as text, or age as DOUBLE (non-finite text becomes inf/nan, other text NULL).
    await withDuckDb({ threads: 1 }, async (connection) => {
      for (const p of parquets) {
        const select = p.typed ? 'SELECT TRY_CAST(age AS DOUBLE) AS age, * EXCLUDE (age)' : 'SELECT *';
        await connection.run(`COPY (${select} FROM read_csv('${p.csv}', all_varchar = true, header = true, auto_detect = true)) TO '${p.parquet}' (FORMAT parquet)`);
      }
    }, { source: dir, purpose: 'test' });
    for (const p of parquets) {
      const outcome = await observe(() => loadDataset(p.parquet, p.schema));
      assertClean(outcome.text, p.c, `${p.c.defect} (Parquet${p.typed ? ', typed' : ''})`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('LIBSVM: bad labels, values, indices and pairs are not quoted', () => {
  const cases: [string, string[]][] = [
    ['SECRET7000001 1:0.5\n', ['SECRET7000001']],
    ['1 1:0.5 2:SECRET7000002\n', ['SECRET7000002']],
    ['1 7000003:1\n', ['7000003']],
    ['1 3:1 2:1 SECRET7000004\n', ['SECRET7000004']],
    ['1 0.7000005:1\n', ['0.7000005', '7000005']],
    ['1 3:0.25 1:0.7000006\n', ['0.7000006']],
    ['1 1=7000007\n', ['7000007']],
  ];
  for (const [text, markers] of cases) {
    let message = '';
    try {
      parseLibsvm(new TextEncoder().encode(text), { source: 'a.svm', numFeatures: 5 });
    } catch (error) {
      message = `${String(error)}\n${inspect(error)}`;
    }
    assert.notEqual(message, '', `${JSON.stringify(text)} is refused`);
    assertClean(message, { markers, literals: [] }, JSON.stringify(text));
  }
});
