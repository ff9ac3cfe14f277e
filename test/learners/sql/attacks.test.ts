/**
 * Attacks on the SQL surface (docs/threat-model.md): `dpfit train --db ... --query ...`.
 *
 * - The database clients: a --query must run as ONE read-only SQL statement, never as anything a
 *   client program reads (psql meta-commands), never as a second statement after a ')' that closes
 *   dpfit's parenthesis, never reaching files through DuckDB.
 * - Lying views (--partition-key): a server's view that passes every per-row check while its sums
 *   exceed the clip bound (a function declared IMMUTABLE that counts its calls), or whose rows
 *   depend on other rows, or that hides behind another view, a SECURITY DEFINER function, a rule
 *   or a trigger, is refused before anything is released; a view cannot be replaced during a run.
 *
 * Every test here fails on the earlier code (--query run through psql, no view check): the attack ran.
 * PostgreSQL servers are throw-away clusters (skipped with the reason when they cannot start).
 */
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseSchema } from '../../../src/data/schema/parse.js';
import { openSqlEngine } from '../../../src/data/node/sql-engine.js';
import { partitionSetupSql, trainDpGdInSql } from '../../../src/learners/sql/sql-gradient.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertFailure } from '../../helpers/files.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../../helpers/people.js';
import { startPostgres, type PostgresCluster } from '../../helpers/postgres-cluster.js';

const SCHEMA = { ...PEOPLE_SCHEMA, intercept: 1 };
const schema = parseSchema(SCHEMA);
const THETA = 'lie';
const setup = partitionSetupSql(schema, 'SELECT * FROM people_local', 'part', THETA);
const d = setup.d;
/** dpfit's view on the shard (key value 1): the honest definition, restored after each lie. */
const honestView = setup.server('1').split('\n').filter((l) => l.startsWith(`CREATE VIEW ${THETA}_rows AS `))[0].replace('CREATE VIEW', 'CREATE OR REPLACE VIEW').replace(/;$/, '');
const viewColumns = [...Array.from({ length: d }, (_, j) => `f${j}`), 'y', 'part', 'k', 'loss', 'nonce', 'z', 'ss', 't', 'g', 'c', 'clipped'];

let dir: string;
let data: string;
let schemaFile: string;
let lines: string[];
let duckFile: string;
let pg: PostgresCluster | string;
let shard: PostgresCluster | string;

before(async () => {
  ({ dir, data, lines } = peopleFixture('dpfit-sql-attacks-', 1200, 23));
  chmodSync(dir, 0o777); // the PostgreSQL server (user postgres) may try to write here: it must not succeed for dpfit's sake, not for want of permission
  schemaFile = join(dir, 'schema.json');
  writeFileSync(schemaFile, JSON.stringify(SCHEMA));
  duckFile = join(dir, 'people.duckdb');
  const instance = await DuckDBInstance.create(duckFile);
  const connection = await instance.connect();
  await connection.run(`CREATE TABLE people AS SELECT * FROM read_csv('${data}', header = true, columns = {'age': 'DOUBLE', 'hours': 'DOUBLE', 'label': 'VARCHAR'})`);
  connection.closeSync();
  instance.closeSync();
  [pg, shard] = await Promise.all([startPostgres(), startPostgres()]);
  if (typeof pg === 'string' || typeof shard === 'string') return;
  const rows = lines.slice(1).map((line) => line.split(','));
  const values = (parity: number) => rows.filter((_, i) => i % 2 === parity).map(([age, hours, label]) => `(${age}, ${hours}, '${label}')`).join(', ');
  const table = 'age DOUBLE PRECISION, hours DOUBLE PRECISION, label TEXT';
  pg.psql(`CREATE TABLE people (${table}); INSERT INTO people VALUES ${values(0)}, ${values(1)}`);
  // The push-down: even rows on the coordinator (reached through a loopback server), odd ones on the shard.
  pg.psql(`CREATE TABLE people_local (${table}); INSERT INTO people_local VALUES ${values(0)}`);
  shard.psql(`CREATE TABLE people_local (${table}); INSERT INTO people_local VALUES ${values(1)}`);
  pg.psql(setup.server('0'));
  shard.psql(setup.server('1'));
  pg.psql(`CREATE EXTENSION postgres_fdw;
    CREATE SERVER self FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${pg.port}', dbname 'postgres', fdw_tuple_cost '0.2');
    CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${shard.port}', dbname 'postgres', fdw_tuple_cost '0.2');
    CREATE USER MAPPING FOR CURRENT_USER SERVER self OPTIONS (user 'postgres');
    CREATE USER MAPPING FOR CURRENT_USER SERVER shard OPTIONS (user 'postgres');
    ${setup.coordinator}
    ${setup.coordinatorPartition('self', '0')}
    ${setup.coordinatorPartition('shard', '1')}`);
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  if (typeof shard !== 'string') shard.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** `dpfit train --method dpgd` on --db URL with --query, one step, writing model.json (removed first). */
async function train(db: string, query: string, ...extra: string[]): Promise<{ code: number; stdout: string; stderr: string; model: string }> {
  const model = join(dir, 'model.json');
  rmSync(model, { force: true });
  const result = await runCli('train', '--db', db, '--query', query, '--schema', schemaFile, '--method', 'dpgd', '--steps', '1', '--noise-multiplier', '1', '--out', model, '--json', ...extra);
  return { ...result, model };
}

/** A fresh path in the test's directory, which must stay absent. */
function marker(name: string): string {
  const path = join(dir, name);
  rmSync(path, { force: true });
  return path;
}

describe('the database clients run one SQL statement and nothing else', () => {
  it('psql\'s meta-commands: a \\! that the old guard missed (é$a$ is an identifier, not a dollar quote) is SQL, refused', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    const pwned = marker('pwned.txt');
    const result = await train(pg.url, `SELECT * FROM people AS é$a$ \\! touch ${pwned}\n`);
    assert.equal(existsSync(pwned), false, 'the shell command ran');
    assertFailure(result, 2, /--query/, 'psql meta-command');
    assert.equal(existsSync(result.model), false);
  });

  it('a --query that closes its parenthesis to run a second statement is refused, nothing written (PostgreSQL)', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    for (const method of ['dpgd', 'dpsgd']) {
      const pwned = marker(`pwned-pg-${method}.csv`);
      const result = await train(pg.url, `SELECT * FROM people) AS q; COPY (SELECT 1) TO '${pwned}'; SELECT 1 FROM (SELECT 1`, '--method', method);
      assert.equal(existsSync(pwned), false, `${method}: the second statement wrote a file`);
      assertFailure(result, 2, /--query.*one SELECT statement/, `${method}: second statement`);
    }
    // A single statement that tries to write is refused by the read-only transaction.
    pg.psql('CREATE TABLE IF NOT EXISTS written (v INT)');
    const result = await train(pg.url, 'WITH w AS (INSERT INTO written VALUES (1) RETURNING v) SELECT people.* FROM people, w');
    assert.notEqual(result.code, 0);
    assert.equal(pg.psql('SELECT count(*) FROM written').trim(), '0');
  });

  it('DuckDB: a second statement after a closing parenthesis, COPY ... TO and read_csv are refused, no file written or read', async () => {
    for (const method of ['dpgd', 'dpsgd']) {
      const pwned = marker(`pwned-duck-${method}.csv`);
      const result = await train(`duckdb:${duckFile}`, `SELECT * FROM people) AS q; COPY (SELECT 42) TO '${pwned}'; SELECT 1 FROM (SELECT 1`, '--method', method);
      assert.equal(existsSync(pwned), false, `${method}: the second statement wrote a file`);
      assertFailure(result, 2, /--query.*one SELECT statement/, `${method}: second statement`);
    }
    const copied = marker('copied.csv');
    assert.notEqual((await train(`duckdb:${duckFile}`, `COPY people TO '${copied}'`)).code, 0);
    assert.equal(existsSync(copied), false);
    // The data must come from the database file, not from a file the query names.
    const external = await train(`duckdb:${duckFile}`, `SELECT * FROM read_csv('${data}')`);
    assertFailure(external, 2, /--query.*(file system operations are disabled|external access)/i, 'read_csv');
    assert.equal(existsSync(external.model), false);
    // The configuration is locked: a query cannot switch external access back on.
    const engine = await openSqlEngine(`duckdb:${duckFile}`);
    try {
      await assert.rejects(engine.query('SET enable_external_access = true'), /locked/);
    } finally {
      await engine.close();
    }
  });

  it('PostgreSQL float8 text reads back bit for bit (the driver\'s text path is exact)', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    const rng = seededRng(99);
    const bits = new DataView(new ArrayBuffer(8));
    const values: number[] = [0, -0, Number.MIN_VALUE, -Number.MIN_VALUE, Number.MAX_VALUE, 2.2250738585072014e-308, 0.1, 1 / 3, Infinity, -Infinity];
    while (values.length < 3000) {
      bits.setUint32(0, Math.floor(rng.nextDouble() * 2 ** 32));
      bits.setUint32(4, Math.floor(rng.nextDouble() * 2 ** 32));
      const v = bits.getFloat64(0);
      if (!Number.isNaN(v)) values.push(v);
    }
    const engine = await openSqlEngine(pg.url);
    try {
      // In: 17 significant digits (exact); out: what dpfit reads.
      const literal = values.map((v) => (Number.isFinite(v) ? v.toPrecision(17) : v > 0 ? 'Infinity' : '-Infinity')).map((v, i) => (Object.is(values[i], -0) ? '-0' : v));
      const rows = await engine.query(`SELECT v::float8 FROM unnest('{${literal.join(',')}}'::text[]) WITH ORDINALITY AS u(v, i) ORDER BY i`);
      assert.equal(rows.length, values.length);
      rows.forEach(([got], i) => assert.ok(Object.is(got, values[i]), `${values[i]} read as ${String(got)}`));
      // A query that changes extra_float_digits (its floats would be rounded) is refused.
      await assert.rejects(engine.query("SELECT 0.1::float8, set_config('extra_float_digits', '-10', true)"), /extra_float_digits/);
    } finally {
      await engine.close();
    }
  });
});

describe('lying views (--partition-key) are refused before anything is released', () => {
  const run = (p: PostgresCluster) => train(p.url, setup.query, '--partition-key', 'part', '--theta-table', THETA, '--seed', '1');
  /** Applies `sql` on the shard, runs the training, restores the honest view and drops what `sql` created. */
  async function lie(p: PostgresCluster, s: PostgresCluster, sql: string, cleanup: string): Promise<Awaited<ReturnType<typeof run>>> {
    s.psql(sql);
    try {
      return await run(p);
    } finally {
      s.psql(`${honestView}; ${cleanup}`);
    }
  }
  /** The honest view's body around `c` (the liar's column), as an inner fenced relation h. */
  const around = (c: string) => `SELECT ${viewColumns.map((col) => (col === 'c' ? `${c} AS c` : `h.${col}`)).join(', ')} FROM (${honestView.replace(/^CREATE OR REPLACE VIEW \S+ AS /, '')}) AS h`;
  // The lying function: IMMUTABLE (PostgreSQL believes it), it counts its calls in the statement:
  // in each row the d sums call it first (1000 c), the clip check last (c).
  const liar = (name: string, security = '') => `CREATE FUNCTION ${name}(c DOUBLE PRECISION) RETURNS DOUBLE PRECISION LANGUAGE plpgsql IMMUTABLE ${security} AS $$
    DECLARE n INTEGER := coalesce(nullif(current_setting('liar.calls', true), ''), '0')::INTEGER + 1;
    BEGIN PERFORM set_config('liar.calls', n::TEXT, false); IF n % ${d + 1} = 0 THEN RETURN c; END IF; RETURN 1000 * c; END $$`;

  it('the honest views train (the setup is right, so the refusals below are the lies\')', async (t) => {
    if (typeof pg === 'string' || typeof shard === 'string') return t.skip(typeof pg === 'string' ? pg : (shard as string));
    const result = await run(pg);
    assert.equal(result.code, 0, result.stderr);
    assert.ok(existsSync(result.model));
  });

  for (const [what, sql, cleanup, pattern] of [
    ["the issue's IMMUTABLE function counting its calls (1000 c in the sums, c in the check)", `${liar('liar')}; CREATE OR REPLACE VIEW ${THETA}_rows AS ${around('liar(h.c)')}`, 'DROP FUNCTION liar', /definition is not the view dpfit creates|calls public\.liar/],
    ['a view over a view with that function', `${liar('liar')}; CREATE VIEW inner_rows AS ${around('liar(h.c)')}; CREATE OR REPLACE VIEW ${THETA}_rows AS SELECT * FROM inner_rows`, 'DROP VIEW inner_rows; DROP FUNCTION liar', /reads public\.inner_rows|definition is not/],
    ['a SECURITY DEFINER function', `${liar('definer', 'SECURITY DEFINER')}; CREATE OR REPLACE VIEW ${THETA}_rows AS ${around('definer(h.c)')}`, 'DROP FUNCTION definer', /calls public\.definer|definition is not/],
    // Built-in functions only, every row within its clip bound: but each row's sign is decided by
    // OTHER rows (whether anyone over 70 is in the table), so one row moves every term.
    ['a different text whose rows depend on other rows (passes every row check)', `CREATE OR REPLACE VIEW ${THETA}_rows AS ${around(`CASE WHEN (SELECT count(*) FROM ${THETA}_input WHERE age > 70) > 0 THEN h.t ELSE -h.t END`)}`, '', /definition is not the view dpfit creates/],
    ['the same, reading the table behind the server\'s rows', `CREATE OR REPLACE VIEW ${THETA}_rows AS ${around(`CASE WHEN (SELECT count(*) FROM people_local WHERE age > 70) > 0 THEN h.t ELSE -h.t END`)}`, '', /the view reads public\.people_local/],
    ['a rule on the theta table (code run by dpfit\'s UPDATE)', `CREATE TABLE ruled (v INT); CREATE RULE sneak AS ON UPDATE TO ${THETA} DO ALSO INSERT INTO ruled VALUES (1)`, `DROP RULE sneak ON ${THETA}; DROP TABLE ruled`, /has a rule \(sneak\)/],
    ['a trigger on the theta table', `CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$; CREATE TRIGGER sneak BEFORE UPDATE ON ${THETA} FOR EACH ROW EXECUTE FUNCTION noop()`, `DROP TRIGGER sneak ON ${THETA}; DROP FUNCTION noop`, /has a trigger \(sneak\)/],
  ] as const) {
    it(what, async (t) => {
      if (typeof pg === 'string' || typeof shard === 'string') return t.skip(typeof pg === 'string' ? pg : (shard as string));
      const result = await lie(pg, shard, sql, cleanup);
      assertFailure(result, 3, pattern, what);
      assert.match(result.stderr, /server shard/, 'names the server');
      assert.equal(existsSync(result.model), false, 'a model was written');
    });
  }

  it('a view cannot be replaced, nor a trigger added to a theta table, while a run reads them (the second connection holds their locks)', async (t) => {
    if (typeof pg === 'string' || typeof shard === 'string') return t.skip(typeof pg === 'string' ? pg : (shard as string));
    const s = shard;
    const attempts = [
      honestView,
      `CREATE FUNCTION noop() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RETURN NEW; END $$; CREATE TRIGGER sneak BEFORE UPDATE ON ${THETA} FOR EACH ROW EXECUTE FUNCTION noop()`,
    ];
    const outcomes: string[] = [];
    const engine = await openSqlEngine(pg.url);
    try {
      await trainDpGdInSql(engine, schema, setup.query, {
        loss: 'logistic', clipNorm: 1, steps: attempts.length + 1, learningRate: 1, noiseMultiplier: 1, delta: 1e-6, rng: seededRng(3), partitionKey: 'part', thetaTable: THETA,
        onQuery: () => {
          const sql = attempts[outcomes.length];
          if (sql === undefined) return;
          try {
            s.psql(`SET lock_timeout = '300ms'; BEGIN; ${sql}; COMMIT`);
            outcomes.push('went through');
          } catch (error) {
            outcomes.push(String((error as { stderr?: string }).stderr ?? error));
          }
        },
      });
    } finally {
      await engine.close();
    }
    assert.equal(outcomes.length, attempts.length);
    outcomes.forEach((outcome, k) => assert.match(outcome, /lock timeout/, `${attempts[k].slice(0, 60)}... went through during the run`));
  });

  it('a lie in the server\'s own rows (T_input) is harmless: each row is read once, the release stays within the clip bound', async (t) => {
    if (typeof pg === 'string' || typeof shard === 'string') return t.skip(typeof pg === 'string' ? pg : (shard as string));
    // The same counting function on a raw column: whatever it returns per use, dpfit's first fenced
    // layer reads the column into one row and every later value is computed from that row.
    shard.psql(`${liar('liar').replace('RETURN 1000 * c', 'RETURN 1000 * c + 7')}; CREATE OR REPLACE VIEW ${THETA}_input AS SELECT liar(age) AS age, hours, label FROM people_local`);
    try {
      const result = await train(pg.url, setup.query, '--partition-key', 'part', '--theta-table', THETA, '--seed', '1', '--noise-multiplier', '1e-6', '--learning-rate', '1', '--clip-norm', '1');
      assert.equal(result.code, 0, result.stderr);
      // One step from theta = 0 with step 1: theta = -(sum + noise) / n; ||sum|| <= n C (1 + tiny).
      const theta = JSON.parse(readFileSync(result.model, 'utf8')).theta as number[];
      assert.ok(Math.hypot(...theta) <= 1 + 1e-6, `||theta|| = ${Math.hypot(...theta)}`);
    } finally {
      shard.psql(`CREATE OR REPLACE VIEW ${THETA}_input AS SELECT * FROM people_local; DROP FUNCTION liar`);
    }
  });
});
