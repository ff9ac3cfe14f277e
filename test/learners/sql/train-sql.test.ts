/**
 * Training inside SQL engines (`learners/sql/sql-gradient.ts`, `data/node/sql-engine.ts`): DP-GD
 * whose clipped gradient sum is one aggregate query per step in DuckDB, in one PostgreSQL server,
 * and in two PostgreSQL servers joined by postgres_fdw partitions, gives the model of the
 * in-memory run (`loadDataset` + `trainDpGd`, an independent path: dpfit's encoding and kernel)
 * for the same seed, with a privacy event that pays the engine's summation order
 * (`sqlSumRoundingSlack`). The PostgreSQL servers are throw-away clusters started here (skipped
 * with the reason when PostgreSQL is not installed or cannot start).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { applySchema } from '../../../src/data/schema/apply.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../../src/data/schema/read-options.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { loadDataset } from '../../../src/data/node/read.js';
import { openSqlEngine, redactUrl, type SqlEngine } from '../../../src/data/node/sql-engine.js';
import { DataFormatError, InvalidParameterError } from '../../../src/errors.js';
import { trainDpGd } from '../../../src/learners/gradient/dp-gd.js';
import { CLIP_SAFETY } from '../../../src/learners/glm/clipped-gradient.js';
import { clippedSumRoundingBound } from '../../../src/learners/glm/per-example.js';
import { CLAMP_SQL, partitionedGradientSumSql, partitionSetupSql, schemaEncodingSql, sqlSumRoundingSlack, thetaUpdateSql, trainDpGdInSql } from '../../../src/learners/sql/sql-gradient.js';
import { seededRng } from '../../../src/random/rng.js';
import { startPostgres, type PostgresCluster } from '../../helpers/postgres-cluster.js';
import { encodingSqlText } from '../../../src/cli/commands/train-external.js';

const schema: Schema = parseSchema({
  version: 1,
  provenance: 'declared',
  columns: [
    { name: 'age', type: 'numeric', lower: 17, upper: 90, bins: [30, 50, 70], encode: 'valueAndBins' },
    { name: 'income', type: 'numeric', lower: 0, upper: 1e6, transform: 'log1p', missing: 'fill', fillValue: 0 },
    { name: 'hours', type: 'numeric', lower: 0, upper: 100, missing: 'dropRow', scale: 'symmetric' },
    { name: 'city', type: 'categorical', categories: ['Paris', 'Lyon', 'Nice'], missing: 'other' },
    { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
  intercept: 1,
});

const ROWS = 4000;

function writeCsv(path: string): void {
  const rng = seededRng(21);
  const cities = ['Paris', 'Lyon', 'Nice', 'Lille', ''];
  const lines = ['age,income,hours,city,y'];
  for (let i = 0; i < ROWS; i++) {
    const age = Math.floor(10 + rng.nextDouble() * 90);
    const income = rng.nextDouble() < 0.05 ? '' : (rng.nextDouble() * 2e5).toFixed(2);
    const hours = rng.nextDouble() < 0.01 ? '' : (rng.nextDouble() * 110).toFixed(1);
    const city = cities[Math.floor(rng.nextDouble() * cities.length)];
    const y = rng.nextDouble() < 0.2 + age / 150 + (city === 'Nice' ? 0.2 : 0) ? 'yes' : 'no';
    lines.push(`${age},${income},${hours},${city},${y}`);
  }
  writeFileSync(path, `${lines.join('\n')}\n`);
}

const TABLE = 'age DOUBLE PRECISION, income DOUBLE PRECISION, hours DOUBLE PRECISION, city TEXT, y TEXT';
const options = { loss: 'logistic', clipNorm: 1, steps: 4, learningRate: 2, regularization: 1e-4, noiseMultiplier: 0.9, delta: 1e-6 };

let dir: string;
let csv: string;
let duckdbFile: string;
let reference: ReturnType<typeof trainDpGd>;
let pg: PostgresCluster | string;
let shard: PostgresCluster | string;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-sql-'));
  csv = join(dir, 'data.csv');
  writeCsv(csv);
  const memory = await loadDataset(csv, schema, { droppedRows: 'zeroRows' }); // the training set: dropped records are zero rows
  reference = trainDpGd(memory.dataset, { ...options, rng: seededRng(5) });
  duckdbFile = join(dir, 'data.duckdb');
  const instance = await DuckDBInstance.create(duckdbFile);
  const connection = await instance.connect();
  await connection.run(`CREATE TABLE people AS SELECT * FROM read_csv('${csv}', header = true, columns = {'age': 'DOUBLE', 'income': 'DOUBLE', 'hours': 'DOUBLE', 'city': 'VARCHAR', 'y': 'VARCHAR'})`);
  connection.closeSync();
  instance.closeSync();
  [pg, shard] = await Promise.all([startPostgres(), startPostgres()]);
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof shard !== 'string') shard.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The trained model equals the in-memory one; the event differs only by the engine's larger slack. */
function assertSameRelease(got: Awaited<ReturnType<typeof trainDpGdInSql>>): void {
  assert.deepEqual(got.model.theta, reference.model.theta);
  assert.equal(got.privacy.granularity, reference.privacy.granularity);
  const event = got.privacy.event as { event: { gridNoiseStd: number; noiseMultiplier: number } };
  const expected = reference.privacy.event as { event: { gridNoiseStd: number; noiseMultiplier: number } };
  assert.equal(event.event.gridNoiseStd, expected.event.gridNoiseStd);
  // The larger sensitivity (the any-order slack) gives a (very slightly) smaller accounted multiplier: never a smaller epsilon.
  assert.ok(event.event.noiseMultiplier <= expected.event.noiseMultiplier);
  assert.ok(got.privacy.epsilon >= reference.privacy.epsilon);
  assert.ok(got.privacy.epsilon <= reference.privacy.epsilon * (1 + 1e-6));
}

describe('the SQL rounding slack', () => {
  it('is the any-order bound 2 gamma_n n B + 2 (B - C): above dpfit\'s own fixed-order bound, ~n^2 u C', () => {
    const u = 2 ** -53;
    for (const n of [1, 1000, 1e6]) {
      const slack = sqlSumRoundingSlack(n, 1, 20);
      assert.ok(slack >= 2 * clippedSumRoundingBound(n, 1, 20));
      // Independent evaluation of 2 n u / (1 - n u) n (1 + 28 u) + 2 * 28 u.
      const expected = 2 * ((n * u) / (1 - n * u)) * n * (1 + 28 * u) + 2 * 28 * u;
      assert.ok(Math.abs(slack - expected) <= 1e-12 * expected);
    }
    assert.throws(() => sqlSumRoundingSlack(2 ** 52, 1, 2), InvalidParameterError);
  });
});

describe('DP-GD pushed into DuckDB', () => {
  it('gives the in-memory model for the same seed (one aggregate query per step)', async () => {
    const engine = await openSqlEngine(`duckdb:${duckdbFile}`);
    try {
      let queries = 0;
      const got = await trainDpGdInSql(engine, schema, 'SELECT * FROM people', { ...options, rng: seededRng(5), onQuery: () => queries++ });
      assert.equal(queries, options.steps);
      assert.equal(got.check.n, (await loadDataset(csv, schema, { droppedRows: 'zeroRows' })).dataset.n);
      assertSameRelease(got);
    } finally {
      await engine.close();
    }
  });

  it('reads the rows through the engine as the file reader does', async () => {
    const engine = await openSqlEngine(duckdbFile);
    try {
      const table = await engine.readTable('SELECT * FROM people', schemaCsvOptions(schema, 'db'));
      const fromDb = applySchema(table, schema).dataset;
      const fromFile = (await loadDataset(csv, schema)).dataset;
      assert.deepEqual(Array.from(fromDb.x), Array.from(fromFile.x));
      assert.deepEqual(Array.from(fromDb.y), Array.from(fromFile.y));
    } finally {
      await engine.close();
    }
  });

  it('refuses what loading the rows refuses (an unknown label), naming it', async () => {
    const engine = await openSqlEngine(duckdbFile);
    try {
      await assert.rejects(trainDpGdInSql(engine, schema, "SELECT age, income, hours, city, CASE WHEN age = 40 THEN 'maybe' ELSE y END AS y FROM people", { ...options, rng: seededRng(5) }), (e: unknown) => e instanceof DataFormatError && /neither positive nor negative/.test(e.message));
    } finally {
      await engine.close();
    }
  });
});

describe('DP-GD pushed into PostgreSQL', () => {
  it('one server: the in-memory model for the same seed; rows read through the engine equal the file\'s', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    pg.psql(`CREATE TABLE people (${TABLE})`);
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy people FROM '${csv}' WITH (FORMAT csv, HEADER true, NULL '')`, pg.url]);
    const engine = await openSqlEngine(pg.url);
    const got = await trainDpGdInSql(engine, schema, 'SELECT * FROM people', { ...options, rng: seededRng(5) });
    assertSameRelease(got);
    const table = await engine.readTable('SELECT * FROM people', schemaCsvOptions(schema, 'db'));
    assert.deepEqual(Array.from(applySchema(table, schema).dataset.x), Array.from((await loadDataset(csv, schema)).dataset.x));
  });

  it('two servers as one dataset (postgres_fdw partition): the same model', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    if (typeof shard === 'string') return t.skip(shard);
    // Rows with an even row number on the coordinator, odd ones on the second server.
    shard.psql(`CREATE TABLE people_odd (${TABLE}, part INT NOT NULL)`);
    pg.psql(`CREATE TABLE staged AS SELECT *, (row_number() OVER ()) % 2 AS part FROM people`);
    execFileSync('sh', ['-c', `psql -X -q -v ON_ERROR_STOP=1 -c "\\copy (SELECT * FROM staged WHERE part = 1) TO STDOUT WITH (FORMAT csv)" '${pg.url}' | psql -X -q -v ON_ERROR_STOP=1 -c "\\copy people_odd FROM STDIN WITH (FORMAT csv)" '${shard.url}'`]);
    pg.psql(`CREATE EXTENSION postgres_fdw;
      CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${shard.port}', dbname 'postgres');
      CREATE USER MAPPING FOR CURRENT_USER SERVER shard OPTIONS (user 'postgres');
      CREATE TABLE people_parted (${TABLE}, part INT NOT NULL) PARTITION BY LIST (part);
      CREATE TABLE people_even PARTITION OF people_parted FOR VALUES IN (0);
      CREATE FOREIGN TABLE people_odd PARTITION OF people_parted FOR VALUES IN (1) SERVER shard;
      INSERT INTO people_even SELECT * FROM staged WHERE part = 0;`);
    const engine = await openSqlEngine(pg.url);
    const got = await trainDpGdInSql(engine, schema, 'SELECT * FROM people_parted', { ...options, rng: seededRng(5) });
    assertSameRelease(got);
  });

  it('two servers with aggregate push-down (--partition-key): postgres_fdw ships each partition\'s sums, the same model', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    if (typeof shard === 'string') return t.skip(shard);
    const d = schemaEncodingSql(schema, 'SELECT 1').d;
    // Each server holds its rows (even row numbers here, odd ones on the shard).
    pg.psql(`CREATE TABLE pd_all (${TABLE}, id SERIAL)`);
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-c', `\\copy pd_all (age, income, hours, city, y) FROM '${csv}' WITH (FORMAT csv, HEADER true, NULL '')`, pg.url]);
    pg.psql('CREATE TABLE pd_local AS SELECT age, income, hours, city, y FROM pd_all WHERE id % 2 = 0');
    shard.psql(`CREATE TABLE pd_local (${TABLE})`);
    execFileSync('sh', ['-c', `psql -X -q -v ON_ERROR_STOP=1 -c "\\copy (SELECT age, income, hours, city, y FROM pd_all WHERE id % 2 = 1) TO STDOUT WITH (FORMAT csv)" '${pg.url}' | psql -X -q -v ON_ERROR_STOP=1 -c "\\copy pd_local FROM STDIN WITH (FORMAT csv)" '${shard.url}'`]);
    // Each server runs dpfit's per-server SQL (`--encoding-sql --partition-key part`): its theta
    // table pd and the fenced view pd_rows (f, y, part, z = f . theta, ss = ||f||^2).
    const setup = partitionSetupSql(schema, 'SELECT * FROM pd_local', 'part', 'pd');
    assert.equal(setup.d, d);
    for (const [server, part] of [[pg, 0], [shard, 1]] as const) server.psql(setup.server(String(part)));
    // The coordinator (here the first server, which reaches its own view through a loopback
    // server): pd_servers over the servers' theta tables, pd_parted partitioned by part over their views.
    pg.psql(`CREATE EXTENSION IF NOT EXISTS postgres_fdw;
      CREATE SERVER pd_self FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${pg.port}', dbname 'postgres', async_capable 'true', fdw_tuple_cost '0.2', options '-c jit=off');
      CREATE SERVER pd_shard FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${shard.port}', dbname 'postgres', async_capable 'true', fdw_tuple_cost '0.2', options '-c jit=off');
      CREATE USER MAPPING FOR CURRENT_USER SERVER pd_self OPTIONS (user 'postgres');
      CREATE USER MAPPING FOR CURRENT_USER SERVER pd_shard OPTIONS (user 'postgres');
      ${setup.coordinator}
      ${setup.coordinatorPartition('pd_self', '0')}
      ${setup.coordinatorPartition('pd_shard', '1')}`);
    const engine = await openSqlEngine(pg.url);
    let queries = 0;
    const train = (query: string) => trainDpGdInSql(engine, schema, query, { ...options, rng: seededRng(5), partitionKey: 'part', thetaTable: 'pd', onQuery: () => queries++ });
    const got = await train(setup.query);
    assert.equal(queries, options.steps);
    assert.equal(got.check.n, (await loadDataset(csv, schema, { droppedRows: 'zeroRows' })).dataset.n);
    assertSameRelease(got);
    // Each server's theta table holds the last step's theta (the UPDATE reached both).
    assert.equal(shard.psql('SELECT count(*) FROM pd WHERE t0 <> 0').trim(), '1');
    // The plan: one aggregate per partition, each shipped whole (its Remote SQL sums and groups);
    // no Remote SQL fetches rows, so no row crosses servers. The theta UPDATE is one direct
    // UPDATE per server.
    const theta = Float64Array.from({ length: d }, (_, j) => (j % 3) - 1);
    const plan = pg.psql(partitionedGradientSumSql(d, setup.query, 'part', 1, 7).replace('; SELECT ', '; EXPLAIN VERBOSE SELECT '));
    const remote = plan.split('\n').filter((line) => line.includes('Remote SQL:'));
    assert.equal(remote.length, 2, plan.slice(0, 2000));
    for (const line of remote) {
      assert.match(line, /Remote SQL: SELECT sum\(/);
      assert.match(line, /FROM public\.pd_rows GROUP BY/);
    }
    assert.equal(plan.split('\n').filter((line) => /Relations: Aggregate on \(public\.pd_rows_[01] /.test(line)).length, 2);
    const update = pg.psql(`EXPLAIN VERBOSE ${thetaUpdateSql('pd', theta, 'logistic', 1, 7)}`);
    assert.equal(update.split('\n').filter((line) => /Remote SQL: UPDATE public\.pd SET t0 = /.test(line)).length, 2, update);
    // An encoded row the schema refuses (here a missing label) is refused before any step.
    const viewColumns = [...Array.from({ length: d }, (_, j) => `f${j}`), 'y', 'part', 'k', 'loss', 'nonce', 'z', 'ss', 't', 'g', 'c', 'clipped'];
    const altered = (changes: Record<string, string | undefined>) => `SELECT ${viewColumns.map((c) => (changes[c] === undefined ? c : `${changes[c]} AS ${c}`)).join(', ')} FROM pd_parted`;
    await assert.rejects(train(altered({ y: 'CASE WHEN f0 > 0.5 THEN NULL ELSE y END' })), (e: unknown) => e instanceof DataFormatError && /missing or non-finite/.test(e.message));
    // A view whose ss is below ||f||^2 or not a number, or whose c exceeds K / sqrt(ss) (the
    // privacy bound would fail), is refused at its first step, naming the condition.
    const large = 'CASE WHEN f0 > 0.5 THEN';
    for (const change of [{ ss: `${large} ss * 0.5 ELSE ss END` }, { ss: `${large} CAST('NaN' AS DOUBLE PRECISION) ELSE ss END` }, { ss: `${large} CAST('Infinity' AS DOUBLE PRECISION) ELSE ss END` }, { ss: `${large} NULL ELSE ss END` }, { c: 'c * 1.5' }, { c: `${large} CAST('NaN' AS DOUBLE PRECISION) ELSE c END` }]) {
      queries = 0;
      await assert.rejects(train(altered(change)), (e: unknown) => e instanceof DataFormatError && /fails the clip check/.test(e.message), JSON.stringify(change));
      assert.equal(queries, 1);
    }
    // Smaller gradients are no privacy risk: accepted. A view that read another step's theta (here
    // a nonce other than the step's) is refused.
    await train(altered({ c: 'c * 0.5' }));
    await assert.rejects(train(altered({ nonce: 'nonce + 1' })), (e: unknown) => e instanceof DataFormatError && /a theta other than this step's/.test(e.message));
    // Rows that change between the check query and a step: refused, the slack was planned for the
    // check's n. A sequence in --query (the check query would see all rows, the first step fewer)
    // is refused before any query reads the rows (a volatile function may differ at each use);
    // rows added on a server after the first step are refused at the second.
    pg.psql('CREATE SEQUENCE pd_seq');
    await assert.rejects(train(`SELECT * FROM pd_parted WHERE nextval('pd_seq') <= ${ROWS + 1000}`), (e: unknown) => e instanceof DataFormatError && /nextval.*volatile/.test(e.message));
    const shardServer = shard;
    await assert.rejects(
      trainDpGdInSql(engine, schema, setup.query, { ...options, rng: seededRng(5), partitionKey: 'part', thetaTable: 'pd', onQuery: () => void shardServer.psql("INSERT INTO pd_local VALUES (40, 123456.789, 40, 'Paris', 'yes')") }),
      (e: unknown) => e instanceof DataFormatError && /a step read a different number of rows than the check query.s \d+/.test(e.message),
    );
    shard.psql('DELETE FROM pd_local WHERE income = 123456.789');
  });

  it('the push-down refuses every row whose gradient could exceed the clip norm, whatever ss and c a view returns', (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    // One group per row (the key is the row's id), so each returned sum is one a_i. Random f; the
    // view's ss is r = ||f||^2 (in the view's order) times ssMul, its c is K / sqrt(r) times cMul:
    // NaN, infinities and NULL included.
    const d = 6;
    const rng = seededRng(77);
    const ssMuls = ['1', '0.5', '2', "'NaN'", "'Infinity'", 'NULL', '0'];
    const cMuls = ['1', '-1', '0.5', '0', String(1 + 2 ** -52), '2', '-2', "'NaN'", "'Infinity'", 'NULL', '1e300'];
    const values: string[] = [];
    let id = 0;
    for (const ssMul of ssMuls) {
      for (const cMul of cMuls) {
        const f = Array.from({ length: d }, () => (rng.nextDouble() * 2 - 1) * 10 ** Math.floor(rng.nextDouble() * 6 - 3));
        values.push(`(${f.map((v) => String(v)).join(', ')}, ${id++}, CAST(${ssMul} AS DOUBLE PRECISION), CAST(${cMul} AS DOUBLE PRECISION))`);
      }
    }
    const cols = Array.from({ length: d }, (_, j) => `f${j} DOUBLE PRECISION`).join(', ');
    const r = Array.from({ length: d }, (_, j) => `f${j} * f${j}`).join(' + ');
    pg.psql(`CREATE TABLE adv_raw (${cols}, id INT, ss_mul DOUBLE PRECISION, c_mul DOUBLE PRECISION); INSERT INTO adv_raw VALUES ${values.join(', ')}`);
    const u = 2 ** -53;
    for (const clipNorm of [1, 0.01]) {
      const k = `CAST(${clipNorm * CLIP_SAFETY} AS DOUBLE PRECISION)`;
      pg.psql(`CREATE OR REPLACE VIEW adv AS SELECT *, (${r}) * ss_mul AS ss, ${k} / sqrt(${r}) * c_mul AS c, 0 AS clipped, 7 AS nonce FROM adv_raw`);
      const out: string[] = pg.psql(partitionedGradientSumSql(d, 'SELECT * FROM adv', 'id', clipNorm, 7)).trim().split('\n');
      assert.equal(out.length, values.length);
      let passed = 0;
      for (const line of out) {
        const cells = line.split('|');
        const [ssMul, cMul] = [ssMuls[Math.floor(Number(cells[d + 4]) / cMuls.length)], cMuls[Number(cells[d + 4]) % cMuls.length]];
        const bad = cells[d + 2];
        // The honest views (ss = r, |c| <= K / sqrt(r)) pass; every row that passes has ||a_i|| <= C (1 + (d + 8) u).
        if (ssMul === '1' && ['1', '-1', '0.5', '0'].includes(cMul)) assert.equal(bad, '0', line);
        if (['0.5', "'NaN'", "'Infinity'", 'NULL'].includes(ssMul) || ['2', '-2', "'NaN'", "'Infinity'", 'NULL', '1e300', String(1 + 2 ** -52)].includes(cMul)) assert.equal(bad, '1', `${ssMul} ${cMul}`);
        if (bad === '0') {
          passed++;
          const a = cells.slice(0, d).map((c: string) => Number(c));
          assert.ok(Math.hypot(...a) <= clipNorm * (1 + (d + 8) * u), line);
        }
      }
      assert.ok(passed >= 4);
    }
  });

  it('--encoding-sql --partition-key prints each server\'s SQL, which psql runs with the key as a variable', async (t) => {
    if (typeof shard === 'string') return t.skip(shard);
    shard.psql(`CREATE TABLE cli_local (${TABLE}); INSERT INTO cli_local VALUES (30, 1000, 40, 'Paris', 'yes'), (60, NULL, 20, 'Lille', 'no')`);
    const flags = { query: 'SELECT * FROM cli_local', partitionKey: 'part', thetaTable: 'cli_run' } as unknown as Parameters<typeof encodingSqlText>[1];
    const text = await encodingSqlText(schema, flags);
    const section = text.split('-- 2. On the coordinator')[0];
    const file = join(dir, 'server.sql');
    writeFileSync(file, section);
    execFileSync('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-v', 'part=5', '-f', file, shard.url]);
    // The view holds the shard's rows with key 5, and (theta 0, k 0) c = 0.
    assert.equal(shard.psql('SELECT count(*), min(part), max(part), max(abs(c)) FROM cli_run_rows').trim(), '2|5|5|0');
    assert.match(text, /--query "SELECT \* FROM cli_run_parted" --partition-key part --theta-table cli_run/);
    await assert.rejects(encodingSqlText(schema, { ...flags, thetaTable: 'Bad-Name' }), InvalidParameterError);
  });

  it('a server that is not there is one line naming the URL without its password', async () => {
    const engine = await openSqlEngine('postgresql://me:secret@127.0.0.1:1/db');
    await assert.rejects(engine.query('SELECT 1'), (e: unknown) => e instanceof DataFormatError && !e.message.includes('secret') && e.message.includes('me:***@'));
    assert.equal(redactUrl('postgres://a:b@h/d'), 'postgres://a:***@h/d');
  });
});

describe('the SQL clamp', () => {
  it('DuckDB orders NaN above every number: a NaN derivative becomes c = t, counted as clipped (within the bound), and numbers clamp as in memory', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    const cases: [string, number, number, number][] = [
      ["'NaN'::DOUBLE", 0.5, 0.5, 1], ["'Infinity'::DOUBLE", 0.5, 0.5, 1], ["'-Infinity'::DOUBLE", 0.5, -0.5, 1],
      ['0.75::DOUBLE', 0.5, 0.5, 1], ['-0.75::DOUBLE', 0.5, -0.5, 1], ['0.25::DOUBLE', 0.5, 0.25, 0], ["'NaN'::DOUBLE", 0, 0, 1],
    ];
    for (const [g, t, c, clipped] of cases) {
      const rows = (await connection.runAndReadAll(`SELECT ${CLAMP_SQL} FROM (SELECT ${g} AS g, ${t}::DOUBLE AS t)`)).getRows();
      assert.deepEqual(rows[0].map(Number), [c, clipped], `g = ${g}, t = ${t}`);
    }
    connection.closeSync();
  });
});
