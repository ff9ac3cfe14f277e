/**
 * The neighbour test of the out-of-core surface (`train --max-memory SIZE --method dpgd`,
 * test/helpers/neighbour-diff.ts): run on D and on D' (one row replaced, DP-GD's relation), with
 * --seed so that the noise is the same and only the data differ, everything its adversary
 * observes must be equal but the released theta: exit status, stdout (--json), the model file,
 * what is printed on stderr, and the error texts of a DuckDB stream that ends early.
 *
 * And out of core is not a second mechanism: with the same seed its stdout, model file and stderr
 * are the in-memory run's, byte for byte (every field).
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { streamChunks } from '../../../src/data/node/duckdb.js';
import { seededRng } from '../../../src/random/rng.js';
import { assertIndistinguishable, observedText } from '../../helpers/neighbour-diff.js';
import { runCli } from '../../helpers/people.js';

const COLUMNS = ['x0', 'x1', 'x2', 'x3', 'x4', 'x5'];
const SCHEMA = {
  version: 1,
  provenance: 'declared',
  columns: [
    ...COLUMNS.map((name) => ({ name, type: 'numeric', lower: -1, upper: 1 })),
    { name: 'y', type: 'label', positive: [1], negative: [0] },
    { name: 'note', type: 'ignore' },
  ],
  intercept: 1,
};

/** `rows` seeded rows (a label from a logistic model of the features) with a `noteBytes` text column the schema ignores. */
function rowsOf(rows: number, seed: number, noteBytes: number): string[] {
  const rng = seededRng(seed);
  const lines = [[...COLUMNS, 'y', 'note'].join(',')];
  for (let i = 0; i < rows; i++) {
    const x = COLUMNS.map(() => rng.nextDouble() * 2 - 1);
    const z = x.reduce((s, v, j) => s + (j % 2 === 0 ? v : -v), 0);
    lines.push(`${x.map((v) => v.toFixed(6)).join(',')},${rng.nextDouble() < 1 / (1 + Math.exp(-2 * z)) ? 1 : 0},${'n'.repeat(noteBytes)}`);
  }
  return lines;
}

/** D' of D: line `at` (a data row) replaced by another row of the domain, longer (its note), with the other label. */
function replaced(lines: readonly string[], at: number, extraNote: number): string[] {
  const other = [...lines];
  const cells = other[at].split(',');
  other[at] = [...COLUMNS.map((_, j) => (j % 2 === 0 ? '-0.999999' : '0.999999')), cells[COLUMNS.length] === '1' ? '0' : '1', 'm'.repeat(cells[COLUMNS.length + 1].length + extraNote)].join(',');
  return other;
}

let dir: string;
let schema: string;
let data: string;
let neighbour: string;

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-neighbour-ooc-'));
  schema = join(dir, 'schema.json');
  writeFileSync(schema, JSON.stringify(SCHEMA));
  // 6000 rows of ~1.5 kB (~9 MB): several of the 4 MiB CSV buffers DuckDB reads with under --max-memory 64MiB.
  const lines = rowsOf(6000, 21, 1500);
  data = join(dir, 'd.csv');
  neighbour = join(dir, 'd-prime.csv');
  writeFileSync(data, `${lines.join('\n')}\n`);
  writeFileSync(neighbour, `${replaced(lines, 2500, 20000).join('\n')}\n`);
});

after(() => rmSync(dir, { recursive: true, force: true }));

/** What an adversary observes of one `dpfit train` run: exit status, stdout, stderr, the model file (always written to the same path). */
async function observe(path: string, ...flags: string[]): Promise<{ observed: { status: number; stdout: unknown; stderr: unknown; modelFile: unknown }; modelText: string | null }> {
  const out = join(dir, 'model.json');
  const run = await runCli('train', '--data', path, '--schema', schema, '--method', 'dpgd', '--steps', '3', '--epsilon', '1', '--delta', '1e-6', '--seed', '7', '--json', '--out', out, ...flags);
  const modelText = existsSync(out) ? readFileSync(out, 'utf8') : null;
  rmSync(out, { force: true });
  return { observed: { status: run.code, stdout: observedText(run.stdout), stderr: observedText(run.stderr), modelFile: modelText === null ? null : JSON.parse(modelText) }, modelText };
}

describe('neighbours out of core (train --max-memory --method dpgd)', () => {
  it("D and D' (one row replaced): the same status, stdout, stderr and model file but theta; each the in-memory run's, byte for byte", async () => {
    const { observed: d, modelText: dModel } = await observe(data, '--max-memory', '64MiB');
    const { observed: dPrime, modelText: dPrimeModel } = await observe(neighbour, '--max-memory', '64MiB');
    assert.equal(d.status, 0, JSON.stringify(d.stderr));
    assertIndistinguishable(d, dPrime, { released: ['stdout.model.theta', 'modelFile.theta'] }, 'train --max-memory 64MiB --method dpgd');
    assert.notDeepEqual((d.modelFile as { theta: number[] }).theta, (dPrime.modelFile as { theta: number[] }).theta, 'the runs saw different data');
    // The same seed in memory: every field of stdout, stderr and the model file, the file byte for byte.
    for (const [path, streamed, streamedModel] of [[data, d, dModel], [neighbour, dPrime, dPrimeModel]] as const) {
      const memory = await observe(path);
      assert.deepEqual(streamed, memory.observed, `${path}: out of core = in memory`);
      assert.equal(streamedModel, memory.modelText, `${path}: the model files byte for byte`);
    }
  });

  it("a DuckDB stream that ends early on D and on D' (at different rows): the same error text", async () => {
    // Files larger than DuckDB's default 32 MB CSV buffer, streamed under a 61 MiB limit with it: the stream
    // ends early, where depends on the rows' lengths, which D' changes (one row 20 kB longer).
    const lines = rowsOf(20000, 22, 1900);
    const paths = [join(dir, 'wide-d.csv'), join(dir, 'wide-d-prime.csv')];
    writeFileSync(paths[0], `${lines.join('\n')}\n`);
    writeFileSync(paths[1], `${replaced(lines, 100, 20000).join('\n')}\n`);
    const ends: number[] = [];
    const errors: string[] = [];
    for (const path of paths) {
      const instance = await DuckDBInstance.create(':memory:', { threads: '1', memory_limit: '61MiB' });
      const connection = await instance.connect();
      try {
        const columns = [...COLUMNS, 'y', 'note'].map((c) => `'${c}': 'VARCHAR'`).join(', ');
        const sql = `SELECT * FROM read_csv('${path}', header = true, auto_detect = false, columns = {${columns}})`;
        let seen = 0;
        try {
          for await (const chunk of streamChunks(connection, sql, 'data.csv', 20000)) seen += chunk.rowCount;
        } catch (error) {
          errors.push((error as Error).message);
        }
        ends.push(seen);
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
    }
    assert.equal(errors.length, 2, 'both streams ended early');
    assert.notEqual(ends[0], ends[1], 'DuckDB stopped at different rows of D and D\'');
    assertIndistinguishable(errors[0], errors[1], {}, 'the error text of an early end');
  });
});
