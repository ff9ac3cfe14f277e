import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADULT_DOCUMENTED, ADULT_SCHEMA_JSON, type RemoteFile } from '../../../src/data/adult.js';
import { parseCsv } from '../../../src/data/csv.js';
import { maxRowNorm } from '../../../src/data/dataset.js';
import { convertCsvToParquet, readCsvWithDuckDb, readParquetFile } from '../../../src/data/node/duckdb.js';
import { FetchFailedError, downloadVerified, fetchAdult, installFiles, sha256Hex, verifyBytes, type FetchFunction } from '../../../src/data/node/fetch.js';
import { detectFormat, loadDataset, readCsvFile, readLibsvmFile, readSchemaFile, readTable } from '../../../src/data/node/read.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import type { RawTable } from '../../../src/data/table.js';
import { DataFormatError } from '../../../src/errors.js';
import { runCli } from '../../helpers/people.js';
import { sameBits } from '../../helpers/same-bits.js';

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'dpfit-data-test-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function file(name: string, content: string | Uint8Array): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

async function rejectsData(run: () => Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(run, (error: unknown) => {
    assert.ok(error instanceof DataFormatError, `expected a DataFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

function plain(table: RawTable): Record<string, (number | string | null)[]> {
  const out: Record<string, (number | string | null)[]> = {};
  for (const c of table.columns) {
    if (c.kind === 'numeric') out[c.name] = Array.from(c.values, (v) => (Number.isNaN(v) ? null : v));
    else out[c.name] = Array.from(c.codes, (k) => (k < 0 ? null : c.levels[k]));
  }
  return out;
}

const SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 18, upper: 90 },
    { name: 'income_k', type: 'numeric', lower: 0, upper: 500, missing: 'fill', fillValue: 0 },
    { name: 'city', type: 'categorical', categories: ['Paris', 'Rome', 'Oslo'] },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
};

/** A CSV with awkward numbers (17 digits, exponents, big integers), missing values and text. */
function peopleCsv(rows: number): string {
  const lines = ['age,income_k,city,label'];
  for (let i = 0; i < rows; i++) {
    const income = i % 7 === 3 ? '' : String((i * 0.1234567890123456789) % 600);
    const age = [String(17 + (i % 80)), '1.0000000000000002e1', '123456789012345678', '3.5E1'][i % 4 === 1 ? i % 3 : 0];
    lines.push(`${age},${income},${['Paris', 'Rome', 'Oslo', 'Lima'][i % 4]},${i % 3 === 0 ? 'yes' : 'no'}`);
  }
  return `${lines.join('\n')}\n`;
}

test('readCsvFile streams in chunks and returns what parseCsv returns on the whole file', async () => {
  const text = 'a,b,c\r\n1,"x\r\ny",3.5\r\n\r\n2,"plain",?\r\n3," ""q"", r",-1e3\r\n';
  const path = await file('chunks.csv', text);
  const whole = parseCsv(new TextEncoder().encode(text), { source: path });
  for (const chunkBytes of [2, 3, 7, 16, 1 << 20]) {
    const table = await readCsvFile(path, { chunkBytes });
    assert.deepEqual(plain(table), plain(whole), `chunkBytes ${chunkBytes}`);
    assert.deepEqual(Array.from(table.rowLines ?? []), [2, 5, 6]);
  }
  const big = await file('big.csv', peopleCsv(3000));
  assert.deepEqual(plain(await readCsvFile(big, { chunkBytes: 1000 })), plain(await readCsvFile(big)));
  // Beyond the 1 MiB type sample: a late text value turns the guessed-numeric column into text.
  const late = await file('late.csv', `id,v\n${Array.from({ length: 150_000 }, (_, i) => `${i},1`).join('\n')}\nlater-text,2\n`);
  const lateTable = await readCsvFile(late, { chunkBytes: 1 << 18 });
  assert.equal(lateTable.rowCount, 150_001);
  assert.deepEqual(lateTable.columns.map((c) => c.kind), ['categorical', 'numeric']);
  await rejectsData(() => readCsvFile(join(dir, 'nope.csv')), /nope\.csv: no such file$/);
  await rejectsData(() => readCsvFile(dir), /is a directory, not a data file$/);
});

test('the Parquet path, the DuckDB CSV path and the built-in CSV path give identical datasets (DuckDB threads = 1)', async () => {
  const csv = await file('people.csv', peopleCsv(500));
  const parquet = join(dir, 'people.parquet');
  await convertCsvToParquet(csv, parquet, { threads: 1 }); // DuckDB's own CSV reader and type detection
  const schema = parseSchema(SCHEMA, 'people.schema.json');
  const fromCsv = await loadDataset(csv, schema);
  const fromParquet = await loadDataset(parquet, schema, { threads: 1 });
  const fromDuckDbCsv = await loadDataset(csv, schema, { engine: 'duckdb', threads: 1 });
  assert.equal(fromCsv.dataset.n, 500);
  sameBits(fromParquet.dataset, fromCsv.dataset);
  sameBits(fromDuckDbCsv.dataset, fromCsv.dataset);
  assert.deepEqual(fromParquet.privateDiagnostics, fromCsv.privateDiagnostics);
  // Without a schema the raw tables agree too (types inferred on both sides).
  assert.deepEqual(plain(await readParquetFile(parquet, { threads: 1 })), plain(await readCsvFile(csv)));
  assert.deepEqual(plain(await readCsvWithDuckDb(csv, { threads: 1 })), plain(await readCsvFile(csv)));
  assert.equal(await detectFormat(parquet), 'parquet');
  const renamed = await file('people-data.bin', await readFile(parquet));
  assert.equal(await detectFormat(renamed), 'parquet', 'by its magic bytes');
});

test('DuckDB CSV engine: header-less files with comment lines, and errors with the line or row', async () => {
  const text = '|1x3 Cross validator\n25, Private, >50K.\n38, ?, <=50K.\n\n';
  const path = await file('adult-like.test', text);
  const options = { header: false, comment: '|', columnNames: ['age', 'workclass', 'income'] };
  assert.deepEqual(plain(await readCsvWithDuckDb(path, { ...options, threads: 1 })), plain(await readCsvFile(path, options)));
  const ragged = await file('ragged.csv', 'a,b\n1,2\n3\n');
  await rejectsData(() => readTable(ragged, { engine: 'duckdb', threads: 1 }), /ragged\.csv, line 3: expected 2 fields, found 1 \(DuckDB\)/);
  await rejectsData(() => readTable(ragged), /ragged\.csv, line 3: expected 2 fields as in the header, found 1$/);
  const letters = await file('letters.csv', 'a,b\n1,2\n3,x\n');
  await rejectsData(() => readTable(letters, { engine: 'duckdb', threads: 1, columnTypes: 'numeric' }), /letters\.csv, column 'b': row 2: a value is not a number$/);
  await rejectsData(() => readParquetFile(letters), /letters\.csv: .*\(DuckDB\)$/);
});

test('LIBSVM files, and schema files with clear errors', async () => {
  const svm = await file('a.svm', '+1 1:0.5 3:1\n-1 2:2\n');
  assert.equal(await detectFormat(svm), 'libsvm');
  const data = await readLibsvmFile(svm, { positiveLabel: 1 });
  assert.deepEqual(Array.from(data.x), [0.5, 0, 1, 0, 2, 0]);
  assert.deepEqual(Array.from(data.y), [1, 0]);
  const schemaPath = await file('s.json', JSON.stringify(SCHEMA));
  assert.equal((await readSchemaFile(schemaPath)).columns.length, 4);
  await rejectsData(async () => readSchemaFile(await file('bad.json', '{"version": 1,')), /bad\.json: is not valid JSON/);
  await rejectsData(() => readSchemaFile(join(dir, 'missing.json')), /missing\.json: no such file/);
});

/** Small stand-ins for the Adult files, in the original form, and their manifest. */
function adultStandIns(): { files: Record<string, string>; manifest: RemoteFile[] } {
  const row = (age: number, label: string): string =>
    `${age}, Private, 77516, Bachelors, 13, Never-married, Adm-clerical, Not-in-family, White, Male, 2174, 0, 40, United-States, ${label}`;
  const files = {
    'adult.data': `${row(39, '<=50K')}\n${row(50, '>50K')}\n${row(38, '<=50K')}\n\n`,
    'adult.test': `|1x3 Cross validator\n${row(25, '<=50K.')}\n${row(44, '>50K.')}\n\n`,
  };
  const manifest = Object.entries(files).map(([name, content]) => ({
    name,
    url: `https://example.invalid/${name}`,
    size: Buffer.byteLength(content),
    sha256: createHash('sha256').update(content).digest('hex'),
  }));
  return { files, manifest: [...manifest, { name: 'adult.names', url: 'https://example.invalid/adult.names', size: 3, sha256: sha256Hex(Buffer.from('doc')), optional: true }] };
}

test('fetch --from: a copy with added header lines is restored, verified, installed with the schema; mismatches write nothing', async () => {
  const { files, manifest } = adultStandIns();
  const from = join(dir, 'shared-copy');
  await mkdir(from);
  // The shared copy's form: a header on top of each file, replacing adult.test's first line.
  await writeFile(join(from, 'adult.data'), `age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,capital,capital-loss,hours-per-week,native-country,salary\n${files['adult.data']}`);
  await writeFile(join(from, 'adult.test'), `age, workclass, fnlwgt\n${files['adult.test'].slice(files['adult.test'].indexOf('\n') + 1)}`);
  const target = join(dir, 'installed');
  const report = await fetchAdult({ dir: target, from, files: manifest });
  assert.deepEqual(
    report.files.map((f) => [f.name, f.status]),
    [
      ['adult.data', 'copied'],
      ['adult.test', 'copied'],
      ['adult.names', 'absent (optional)'],
    ],
  );
  assert.equal(await readFile(join(target, 'adult.data'), 'utf8'), files['adult.data']);
  assert.equal(await readFile(join(target, 'adult.test'), 'utf8'), files['adult.test']);
  assert.ok(report.schemaWritten);
  // The shipped schema reads both files: labels with and without the trailing dot, unit rows.
  const schema = await readSchemaFile(report.schema);
  const train = await loadDataset(report.parts.train, schema);
  const testPart = await loadDataset(report.parts.test, schema);
  assert.deepEqual(Array.from(train.dataset.y), [0, 1, 0]);
  assert.deepEqual(Array.from(testPart.dataset.y), [0, 1]);
  assert.equal(train.dataset.d, ADULT_DOCUMENTED.featureCount);
  // Unit rows plus a bias column of 1 (003 Sec. 5): norm at most sqrt(2), the public bound.
  assert.ok(train.rowNormBound >= Math.SQRT2 && train.rowNormBound < Math.SQRT2 * (1 + 1e-14));
  assert.ok(maxRowNorm(train.dataset) <= train.rowNormBound && maxRowNorm(testPart.dataset) <= testPart.rowNormBound);
  // Again: everything already present, the schema is kept.
  const again = await fetchAdult({ dir: target, from, files: manifest });
  assert.deepEqual(again.files.slice(0, 2).map((f) => f.status), ['already present', 'already present']);
  assert.equal(again.schemaWritten, false);
  assert.equal(again.schemaDiffersFromShipped, undefined, 'the kept schema is the shipped one');
  // A kept schema from an older version (or edited) is kept, and the report says it differs.
  await writeFile(join(target, 'adult.schema.json'), JSON.stringify({ ...ADULT_SCHEMA_JSON, intercept: false }));
  const stale = await fetchAdult({ dir: target, from, files: manifest });
  assert.equal(stale.schemaWritten, false);
  assert.equal(stale.schemaDiffersFromShipped, true);
  // A damaged copy: nothing is written.
  await writeFile(join(from, 'adult.test'), files['adult.test'].replace('25', '26'));
  const fresh = join(dir, 'fresh');
  await rejectsData(() => fetchAdult({ dir: fresh, from, files: manifest }), /adult\.test: SHA-256 [0-9a-f]{64} does not match the official adult\.test/);
  await assert.rejects(readdir(fresh), { code: 'ENOENT' });
  await rejectsData(() => installFiles(manifest, { dir: fresh, from: join(dir, 'no-such-dir') }), /no-such-dir\/adult\.data: no such file/);
});

test('downloads are verified (size, SHA-256); HTTP and network failures are one clear error (fake fetch, no network)', async () => {
  const content = Buffer.from('hello, adult\n');
  const spec: RemoteFile = { name: 'x.data', url: 'https://example.invalid/x.data', size: content.length, sha256: sha256Hex(content) };
  const serve =
    (status: number, body: Uint8Array): FetchFunction =>
    async (url) => {
      assert.equal(url, spec.url);
      return { ok: status === 200, status, statusText: status === 200 ? 'OK' : 'Not Found', arrayBuffer: async () => body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer };
    };
  assert.deepEqual(Buffer.from(await downloadVerified(spec, { fetchImpl: serve(200, content) })), content);
  await assert.rejects(downloadVerified(spec, { fetchImpl: serve(404, content) }), (e: unknown) => e instanceof FetchFailedError && /x\.data: download failed \(HTTP 404 Not Found\); with a local copy use --from DIR/.test(e.message));
  const offline: FetchFunction = async () => {
    throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
  };
  await assert.rejects(downloadVerified(spec, { fetchImpl: offline }), /download failed \(ENOTFOUND\)/);
  await rejectsData(() => downloadVerified(spec, { fetchImpl: serve(200, Buffer.from('hello, adulT\n')) }), /^https:\/\/example\.invalid\/x\.data: SHA-256 .* does not match the official x\.data/);
  await rejectsData(() => downloadVerified(spec, { fetchImpl: serve(200, Buffer.from('short')) }), /is 5 bytes, expected 13 for x\.data/);
  assert.equal(verifyBytes(content, spec, 'here'), spec.sha256);
  // installFiles downloads when there is no --from.
  const target = join(dir, 'downloaded');
  const report = await installFiles([spec], { dir: target, fetchImpl: serve(200, content) });
  assert.equal(report[0].status, 'downloaded');
  assert.deepEqual(await readFile(join(target, 'x.data')), content);
});

const run = runCli;

test('dpfit data inspect --json: one object, marked as reading private data; with a schema it reports the encoding', async () => {
  const csv = await file('inspect.csv', peopleCsv(30));
  const schemaPath = await file('inspect.schema.json', JSON.stringify(SCHEMA));
  const plainRun = await run('data', 'inspect', csv, '--json');
  assert.equal(plainRun.code, 0, plainRun.stderr);
  const summary = JSON.parse(plainRun.stdout);
  assert.equal(summary.readsPrivateData, true);
  assert.match(summary.warning, /reads the private data/);
  assert.equal(summary.rows, 30);
  assert.deepEqual(
    summary.columns.map((c: { name: string; type: string; missing: number }) => [c.name, c.type, c.missing]),
    [
      ['age', 'numeric', 0],
      ['income_k', 'numeric', 4],
      ['city', 'categorical', 0],
      ['label', 'categorical', 0],
    ],
  );
  const withSchema = JSON.parse((await run('data', 'inspect', csv, '--schema', schemaPath, '--json')).stdout);
  assert.equal(withSchema.schema.featureCount, 6);
  assert.equal(withSchema.schema.rowNormBound, 1);
  assert.equal(withSchema.schema.positives, 10);
  assert.equal(withSchema.schema.other.city, 7);
  const human = await run('data', 'inspect', csv, '--schema', schemaPath);
  assert.match(human.stdout, /READS PRIVATE DATA/);
  assert.match(human.stdout, /with the schema: 6 features/);
});

test('dpfit data schema prints a suggestion on stdout and the warning on stderr; using it warns again', async () => {
  const csv = await file('suggest.csv', peopleCsv(30));
  const { code, stdout, stderr } = await run('data', 'schema', csv, '--label', 'label', '--positive', 'yes');
  assert.equal(code, 0, stderr);
  const schema = JSON.parse(stdout);
  assert.equal(schema.provenance, 'suggested-from-private-data');
  assert.deepEqual(schema.columns.at(-1).positive, ['yes']);
  assert.match(stderr, /^dpfit: WARNING: this schema was suggested by READING THE PRIVATE DATA/);
  const schemaPath = await file('suggested.json', stdout);
  const inspect = await run('data', 'inspect', csv, '--schema', schemaPath, '--json');
  assert.equal(inspect.code, 0);
  assert.match(inspect.stderr, /suggested\.json: WARNING: this schema was suggested/);
  assert.match(JSON.parse(inspect.stdout).schema.provenance, /NOT PRIVATE/);
});

test('malformed files: one clear line each and exit 3 (ragged, non-numeric, unknown label, empty, missing, bad checksum)', async () => {
  const schemaPath = await file('m.schema.json', JSON.stringify(SCHEMA));
  const cases: [string[], RegExp][] = [
    [['data', 'inspect', await file('ragged.csv', 'a,b\n1,2\n3\n')], /^dpfit: .*ragged\.csv, line 3: expected 2 fields as in the header, found 1$/],
    [['data', 'inspect', await file('nonnum.csv', 'age,income_k,city,label\n30,1,Paris,yes\nabc,1,Rome,no\n'), '--schema', schemaPath], /nonnum\.csv, line 3, column 'age': a value is not a number$/],
    [['data', 'inspect', await file('label.csv', 'age,income_k,city,label\n30,1,Paris,yes\n31,1,Rome,maybe\n'), '--schema', schemaPath], /^(?!.*maybe).*label\.csv, line 3, column 'label': a label value that the schema does not declare/],
    [['data', 'inspect', await file('empty.csv', '')], /empty\.csv: the file is empty/],
    [['data', 'inspect', join(dir, 'absent.csv')], /absent\.csv: no such file$/],
    [['data', 'schema', await file('empty2.csv', '\n')], /empty2\.csv: the file is empty/],
    [['data', 'inspect', await file('noschema.csv', 'a\n1\n'), '--schema', join(dir, 'absent.json')], /absent\.json: no such file$/],
  ];
  const badCopy = join(dir, 'bad-copy');
  await mkdir(badCopy);
  await writeFile(join(badCopy, 'adult.data'), '39, State-gov\n');
  await writeFile(join(badCopy, 'adult.test'), '|1x3 Cross validator\n');
  cases.push([['data', 'fetch', 'adult', '--from', badCopy, '--dir', join(dir, 'adult-out'), '--json'], /adult\.data: is 14 bytes, expected 3974305 for adult\.data/]);
  for (const [argv, pattern] of cases) {
    const { code, stdout, stderr } = await run(...argv);
    assert.equal(code, 3, `${argv.join(' ')} -> ${stderr}`);
    assert.equal(stdout, '', argv.join(' '));
    assert.equal(stderr.trim().split('\n').length, 1, `one line: ${stderr}`);
    assert.match(stderr.trim(), pattern);
  }
  // Bad parameters are exit 2.
  for (const argv of [
    ['data', 'fetch', 'mnist'],
    ['data', 'inspect', await file('ok.csv', 'a\n1\n'), '--format', 'xlsx'],
  ]) {
    const { code, stderr } = await run(...argv);
    assert.equal(code, 2, stderr);
  }
});
