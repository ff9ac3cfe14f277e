/**
 * The neighbour test of the SQL surface (test/helpers/neighbour-diff.ts, docs/threat-model.md):
 * `dpfit train --db ... --query ... --method dpgd` on a table D and on D' with one row replaced
 * (replace-one, DP-GD's relation). What an adversary observes — the exit status, stdout's JSON,
 * the model file, and on failure the error line — must be equal except the released theta
 * (compared by shape). A fixed --seed makes both runs draw the same noise (guarantee none, the
 * same for both): any other difference is a value the data decide that the event does not pay for.
 * The data owner's stderr diagnostics of a successful run are not a release and are not compared.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { assertIndistinguishable, observedText } from '../../helpers/neighbour-diff.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../../helpers/people.js';
import { startPostgres, type PostgresCluster } from '../../helpers/postgres-cluster.js';

const SCHEMA = { ...PEOPLE_SCHEMA, intercept: 1 };

let dir: string;
let rows: string[][];
let schemaFile: string;
let pg: PostgresCluster | string;

/** D (the fixture's rows) and D' (row 17 replaced by an extreme one). */
const neighbours = (): [string[][], string[][]] => [rows, rows.map((row, i) => (i === 17 ? ['90', '0', 'no'] : row))];

before(async () => {
  const fixture = peopleFixture('dpfit-sql-neighbour-', 800, 5);
  dir = fixture.dir;
  rows = fixture.lines.slice(1).map((line) => line.split(','));
  schemaFile = join(dir, 'schema.json');
  writeFileSync(schemaFile, JSON.stringify(SCHEMA));
  pg = await startPostgres();
});

after(() => {
  if (typeof pg !== 'string') pg.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** What an adversary observes of `dpfit train --db URL --query QUERY --method dpgd --seed 7 --out model.json --json`. */
async function observe(db: string, query: string): Promise<unknown> {
  const model = join(dir, 'model.json');
  rmSync(model, { force: true });
  const result = await runCli('train', '--db', db, '--query', query, '--schema', schemaFile, '--method', 'dpgd', '--steps', '3', '--noise-multiplier', '2', '--seed', '7', '--out', model, '--json');
  return {
    code: result.code,
    stdout: observedText(result.stdout),
    error: result.code === 0 ? '' : result.stderr,
    model: existsSync(model) ? JSON.parse(readFileSync(model, 'utf8')) : null,
  };
}

const released = { released: ['stdout.model.theta', 'model.theta'] };

/** The comparison is not vacuous: both runs released a model, and the data moved theta (only the accounted noise hides it). */
function assertReleased(observed: unknown[]): void {
  const [a, b] = observed as { code: number; model: { theta: number[] } | null }[];
  assert.equal(a.code, 0, JSON.stringify(a).slice(0, 300));
  assert.ok(a.model !== null && b.model !== null);
  assert.notDeepEqual(a.model.theta, b.model.theta);
}

describe('neighbouring tables are indistinguishable through train --db --method dpgd but for theta', () => {
  it('DuckDB', async () => {
    const observed: unknown[] = [];
    for (const [k, table] of neighbours().entries()) {
      const file = join(dir, `people-${k}.duckdb`);
      const instance = await DuckDBInstance.create(file);
      const connection = await instance.connect();
      await connection.run(`CREATE TABLE people (age DOUBLE, hours DOUBLE, label VARCHAR); INSERT INTO people VALUES ${table.map(([a, h, l]) => `(${a}, ${h}, '${l}')`).join(', ')}`);
      connection.closeSync();
      instance.closeSync();
      observed.push(await observe(`duckdb:${file}`, 'SELECT * FROM people'));
    }
    assertReleased(observed);
    assertIndistinguishable(observed[0], observed[1], released, 'train --db duckdb:');
  });

  it('PostgreSQL', async (t) => {
    if (typeof pg === 'string') return t.skip(pg);
    const observed: unknown[] = [];
    for (const [k, table] of neighbours().entries()) {
      pg.psql(`CREATE TABLE people_${k} (age DOUBLE PRECISION, hours DOUBLE PRECISION, label TEXT); INSERT INTO people_${k} VALUES ${table.map(([a, h, l]) => `(${a}, ${h}, '${l}')`).join(', ')}`);
      observed.push(await observe(pg.url, `SELECT * FROM people_${k}`));
    }
    assertReleased(observed);
    assertIndistinguishable(observed[0], observed[1], released, 'train --db postgres://');
  });
});
