/**
 * Out-of-core and SQL training, measured (not a timed test):
 *
 *   node --import tsx bench/out-of-core-sql.ts [--rows N] [--cap SIZE] [--sql-rows N] [--steps T] [--sql-rounds R] [--sql-only]
 *
 * 1. Out of core: a Parquet file of N x 20 random doubles (written by DuckDB) at least 3x larger
 *    than the cap; `dpfit train --method dpgd --max-memory CAP` runs as a child under
 *    /usr/bin/time, which reports its peak RSS. Equality with the in-memory run is the
 *    job of test/learners/gradient/out-of-core.test.ts (same model bit for bit on files that fit).
 * 2. SQL: one DP-GD step's aggregate query in one PostgreSQL server and in two servers joined by a
 *    postgres_fdw partition (throw-away clusters, as the tests start them), and in DuckDB. Two
 *    servers twice: the fenced query (the remote half's rows travel to the coordinator, which
 *    sums them) and the aggregate push-down (`--partition-key`: each step UPDATEs every server's
 *    theta table, then each server sums its half from its fenced view's z and ss, asynchronously;
 *    only the sums cross), beside the same form on one server (its view of all rows, one group,
 *    reached through a loopback postgres_fdw server as every partition must be, so that dpfit's
 *    view check can read its catalog) to separate the form's cost from the split's gain. Each
 *    push-down run first locks and checks the servers' views
 *    (`learners/sql/sql-partition-check.ts`): that one-off cost is printed apart. `--sql-only`
 *    skips part 1.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parseSchema } from '../src/data/schema/parse.js';
import { parseMemorySize } from '../src/data/node/stream-rows.js';
import { openSqlEngine } from '../src/data/node/sql-engine.js';
import { partitionedGradientSumSql, partitionSetupSql, trainDpGdInSql } from '../src/learners/sql/sql-gradient.js';
import { seededRng } from '../src/random/rng.js';
import { startPostgres } from '../test/helpers/postgres-cluster.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const k = args.indexOf(name);
  return k >= 0 ? args[k + 1] : fallback;
};
const rows = Number(flag('--rows', '5000000'));
const cap = flag('--cap', '256MB');
const sqlRows = Number(flag('--sql-rows', '200000'));
const steps = Number(flag('--steps', '2'));
const sqlRounds = Number(flag('--sql-rounds', '7'));
const sqlOnly = args.includes('--sql-only');
const D = 20;
const dir = mkdtempSync(join(tmpdir(), 'dpfit-bench-ooc-'));
const columns = Array.from({ length: D }, (_, j) => `x${j}`);
const schema = {
  version: 1,
  provenance: 'declared',
  columns: [...columns.map((name) => ({ name, type: 'numeric', lower: -1, upper: 1, scale: 'none' })), { name: 'y', type: 'label', positive: [1], negative: [0] }],
  rowTransform: 'normalize',
};
const schemaPath = join(dir, 'schema.json');
writeFileSync(schemaPath, JSON.stringify(schema));
const select = (n: number) => `SELECT ${columns.map((c) => `random() * 2 - 1 AS ${c}`).join(', ')}, CAST(random() < 0.5 AS INTEGER) AS y FROM range(${n})`;

try {
  // 1. Out of core.
  if (!sqlOnly) {
  const parquet = join(dir, 'big.parquet');
  {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    await connection.run(`COPY (${select(rows)}) TO '${parquet}' (FORMAT parquet, COMPRESSION uncompressed)`);
    connection.closeSync();
    instance.closeSync();
  }
  const size = statSync(parquet).size;
  const capBytes = parseMemorySize('--cap', cap);
  const started = performance.now();
  const run = spawnSync('/usr/bin/time', ['-f', '%M', process.execPath, '--import', 'tsx', 'test/helpers/dpfit-process.ts', 'train', '--data', parquet, '--schema', schemaPath, '--method', 'dpgd',
    '--steps', String(steps), '--learning-rate', '1', '--noise-multiplier', '1', '--max-memory', cap, '--json'], { encoding: 'utf8', maxBuffer: 1 << 26 });
  const seconds = (performance.now() - started) / 1000;
  const peakKb = Number(run.stderr.trim().split('\n').pop());
  console.log(`out of core: ${rows} x ${D} Parquet, ${(size / 2 ** 20).toFixed(0)} MiB (numeric data ${(rows * (D + 1) * 8 / 2 ** 20).toFixed(0)} MiB) = ${(size / capBytes).toFixed(2)}x the cap ${cap}`);
  console.log(`  dpfit train --method dpgd --steps ${steps} --max-memory ${cap}: exit ${run.status}, ${seconds.toFixed(1)} s (${steps + 1} passes), peak RSS ${(peakKb / 1024).toFixed(0)} MiB = ${((peakKb * 1024) / capBytes).toFixed(2)}x the cap`);
  if (run.status !== 0) console.log(run.stderr.split('\n').slice(-3).join('\n'));
  rmSync(parquet);
  }

  // 2. SQL step time: DuckDB file, one PostgreSQL server, two through postgres_fdw.
  const [a, b] = await Promise.all([startPostgres(), startPostgres()]);
  const csv = join(dir, 'rows.csv');
  {
    const instance = await DuckDBInstance.create(join(dir, 'rows.duckdb'));
    const connection = await instance.connect();
    await connection.run(`CREATE TABLE t AS ${select(sqlRows)}`);
    await connection.run(`COPY (SELECT *, CAST(rowid % 2 AS INTEGER) AS part FROM t) TO '${csv}' (FORMAT csv, HEADER true)`);
    connection.closeSync();
    instance.closeSync();
  }
  const parsed = parseSchema(schema);
  const options = { loss: 'logistic', clipNorm: 1, steps: 3, learningRate: 1, noiseMultiplier: 1, delta: 1e-6 };
  const medians: Record<string, number> = {};
  const time = async (url: string, query: string, partitionKey?: string, thetaTable?: string): Promise<string> => {
    const engine = await openSqlEngine(url);
    const ms: number[] = [];
    await trainDpGdInSql(engine, parsed, query, { ...options, rng: seededRng(1), onQuery: (t) => ms.push(t), ...(partitionKey === undefined ? {} : { partitionKey, thetaTable }) });
    await engine.close();
    ms.sort((p, q) => p - q);
    medians[`${url} ${query} ${partitionKey}`] = ms[Math.floor(ms.length / 2)];
    return `median step ${ms[Math.floor(ms.length / 2)].toFixed(0)} ms`;
  };
  console.log(`SQL push-down, ${sqlRows} x ${D}, one aggregate query per step (node-postgres, one connection per run, for PostgreSQL):`);
  console.log(`  DuckDB file:                     ${await time(`duckdb:${join(dir, 'rows.duckdb')}`, 'SELECT * FROM t')}`);
  if (typeof a === 'string' || typeof b === 'string') console.log(`  PostgreSQL skipped: ${typeof a === 'string' ? a : b}`);
  else {
    const table = `${columns.map((c) => `${c} DOUBLE PRECISION`).join(', ')}, y INTEGER, part INTEGER NOT NULL`;
    a.psql(`CREATE TABLE t (${table})`);
    execFileSync('psql', ['-X', '-q', '-c', `\\copy t FROM '${csv}' WITH (FORMAT csv, HEADER true)`, a.url]);
    b.psql(`CREATE TABLE t_odd (${table})`);
    execFileSync('psql', ['-X', '-q', '-c', `\\copy (SELECT * FROM t WHERE part = 1) TO '${csv}.odd' WITH (FORMAT csv)`, a.url]);
    execFileSync('psql', ['-X', '-q', '-c', `\\copy t_odd FROM '${csv}.odd' WITH (FORMAT csv)`, b.url]);
    a.psql(`ANALYZE t; CREATE EXTENSION postgres_fdw;
      CREATE SERVER shard FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${b.port}', dbname 'postgres', fetch_size '10000');
      CREATE USER MAPPING FOR CURRENT_USER SERVER shard OPTIONS (user 'postgres');
      CREATE TABLE parted (${table}) PARTITION BY LIST (part);
      CREATE TABLE parted_even PARTITION OF parted FOR VALUES IN (0);
      CREATE FOREIGN TABLE parted_odd PARTITION OF parted FOR VALUES IN (1) SERVER shard OPTIONS (table_name 't_odd');
      INSERT INTO parted_even SELECT * FROM t WHERE part = 0; ANALYZE parted_even;`);
    b.psql('ANALYZE t_odd');
    // The push-down setup (`partitionSetupSql`, what --encoding-sql --partition-key prints): each
    // server's half behind its theta table and fenced view (z, ss once per row), the coordinator's
    // partitions foreign tables on those views (its own through a loopback server). `tall`: the
    // same form over all rows on one server (a partitioned table with one partition, through the loopback server).
    const half = partitionSetupSql(parsed, 'SELECT * FROM t WHERE part = 0', 'part', 'tp');
    const odd = partitionSetupSql(parsed, 'SELECT * FROM t_odd', 'part', 'tp');
    const all = partitionSetupSql(parsed, 'SELECT * FROM t', 'part', 'tall');
    a.psql(`${half.server('0')} ${all.server('0')}`);
    b.psql(odd.server('1'));
    a.psql(`CREATE SERVER self FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host '127.0.0.1', port '${a.port}', dbname 'postgres', async_capable 'true', fdw_tuple_cost '0.2', options '-c jit=off');
      ALTER SERVER shard OPTIONS (ADD async_capable 'true', ADD fdw_tuple_cost '0.2', ADD options '-c jit=off');
      CREATE USER MAPPING FOR CURRENT_USER SERVER self OPTIONS (user 'postgres');
      ${half.coordinator} ${half.coordinatorPartition('self', '0')} ${half.coordinatorPartition('shard', '1')}
      ${all.coordinator} ${all.coordinatorPartition('self', '0')}`);
    // The four PostgreSQL set-ups interleaved, one step each per round (the machine's load drifts):
    // medians over the rounds.
    const setups: [string, string, string?, string?][] = [
      ['PostgreSQL, one server:          ', 'SELECT * FROM t'],
      ['PostgreSQL, two (postgres_fdw):  ', 'SELECT * FROM parted', undefined, ' (fenced: the odd rows travel to the coordinator)'],
      ['one server, push-down form:      ', all.query, 'tall', " (its view of all rows, one group through the loopback: the form's cost)"],
      ['two servers, aggregate push-down:', half.query, 'tp', ' (--partition-key part: each server sums its half)'],
    ];
    const stepMs: number[][] = setups.map(() => []);
    const runMs: number[][] = setups.map(() => []);
    for (let round = 0; round < sqlRounds; round++) {
      for (const [k, [, query, thetaTable]] of setups.entries()) {
        const engine = await openSqlEngine(a.url);
        const started = performance.now();
        await trainDpGdInSql(engine, parsed, query, { ...options, steps: 1, rng: seededRng(1), onQuery: (t) => stepMs[k].push(t), ...(thetaTable === undefined ? {} : { partitionKey: 'part', thetaTable }) });
        runMs[k].push(performance.now() - started - stepMs[k][stepMs[k].length - 1]);
        await engine.close();
      }
    }
    const median = (v: number[]) => [...v].sort((p, q) => p - q)[Math.floor(v.length / 2)];
    setups.forEach(([label, , , note], k) => {
      medians[label] = median(stepMs[k]);
      console.log(`  ${label} median step ${medians[label].toFixed(0)} ms (${stepMs[k].map((v) => v.toFixed(0)).join(' ')})${note ?? ''}; the rest of the run ${median(runMs[k]).toFixed(0)} ms (connecting, checks, the row check query${setups[k][2] === undefined ? '' : ', the view check'})`);
    });
    const plan = a.psql(partitionedGradientSumSql(D, half.query, 'part', 1, 0).replace('; SELECT ', '; EXPLAIN VERBOSE SELECT '));
    console.log(`  (its plan: ${plan.split('\n').filter((line) => /Remote SQL: SELECT sum\(/.test(line)).length} partitions' aggregates shipped whole)`);
    const m = Object.values(medians);
    console.log(`  two-server push-down / one server: ${(m[4] / m[1]).toFixed(2)}x; / one server with the same form: ${(m[4] / m[3]).toFixed(2)}x (the servers share this machine's ${(await import('node:os')).availableParallelism()} CPUs)`);
    a.stop();
    b.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
