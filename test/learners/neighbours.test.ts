/**
 * The neighbour test of the learners' surfaces (docs/threat-model.md, "library call", "CLI",
 * "model file"): every method of `dpfit train` and of `train()` runs on two neighbouring datasets
 * and everything a reader of the release observes — the exit status, stdout's JSON, the model
 * file, an error's text — must be the same but for the released (noisy) parameters.
 *
 * Pairs:
 *   - "dropRow": one record's missing value filled in (the schema drops rows with that value
 *     missing). A replace-one neighbour of the records; on the old main it moved n and with it
 *     the events (shuffled datasetSize 1800 -> 1801, dpgd's noise multiplier, output-sgd's grid,
 *     rgm's grid scale, DP-SGD's q): a record's missing value was published;
 *   - "replace": one record's values changed, for the replace-one methods;
 *   - "add/remove": one record more, for the add/remove methods (DP-SGD with a declared
 *     --dataset-size; AMP and objective perturbation, whose sum objective uses no n).
 * Runs are seeded so that everything but the data is the same (a seeded run's guarantee is
 * `none` on both sides alike); `modelFile` (the path) is volatile.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDBInstance } from '@duckdb/node-api';
import { loadDataset } from '../../src/data/node/read.js';
import { parseSchema } from '../../src/data/schema/parse.js';
import { defaultMethodOptions } from '../../src/learners/registry.js';
import { PrivateLogisticRegression } from '../../src/learners/estimators.js';
import { train, type TrainOptions } from '../../src/learners/train.js';
import { seededRng } from '../../src/random/rng.js';
import { assertIndistinguishable, observedText } from '../helpers/neighbour-diff.js';
import { runCli } from '../helpers/people.js';
import { METHODS } from '../../src/cli/train-flags.js';

/** Seeded rows of a binary task (age, hours) and of a regression (a, b -> score). */
function classificationRows(n: number, seed: number): string[][] {
  const rng = seededRng(seed);
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const age = 20 + Math.floor(50 * rng.nextDouble());
    const hours = 10 + Math.floor(60 * rng.nextDouble());
    const z = (age - 40) / 12 + (hours - 40) / 10 + (rng.nextDouble() - 0.5);
    rows.push([String(age), String(hours), z > 0 ? 'yes' : 'no']);
  }
  return rows;
}

function regressionRows(n: number, seed: number): string[][] {
  const rng = seededRng(seed);
  const rows: string[][] = [];
  for (let i = 0; i < n; i++) {
    const a = 2 * rng.nextDouble() - 1;
    const b = 2 * rng.nextDouble() - 1;
    const y = Math.max(-2, Math.min(2, 0.8 * a - 0.5 * b + 0.2 * (rng.nextDouble() - 0.5)));
    rows.push([a.toFixed(4), b.toFixed(4), y.toFixed(4)]);
  }
  return rows;
}

const CLASSIFICATION_SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 0, upper: 80, missing: 'dropRow' },
    { name: 'hours', type: 'numeric', lower: 0, upper: 80 },
    { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
};

const REGRESSION_SCHEMA = {
  version: 1,
  rowTransform: 'none',
  columns: [
    { name: 'a', type: 'numeric', lower: -1, upper: 1, scale: 'symmetric', missing: 'dropRow' },
    { name: 'b', type: 'numeric', lower: -1, upper: 1, scale: 'symmetric' },
    { name: 'score', type: 'label', lower: -2, upper: 2 },
  ],
};

interface Pair {
  readonly dir: string;
  readonly schema: string;
  readonly d: string;
  readonly dPrime: string;
}

/** Writes D and D' (D' = edit(D's rows)) with a header and the schema, in a fresh directory. */
function writePair(name: string, header: string, rows: string[][], schema: object, edit: (rows: string[][]) => string[][]): Pair {
  const dir = mkdtempSync(join(tmpdir(), `dpfit-neighbours-${name}-`));
  const write = (file: string, body: string[][]) => {
    const path = join(dir, file);
    writeFileSync(path, `${header}\n${body.map((r) => r.join(',')).join('\n')}\n`);
    return path;
  };
  const schemaPath = join(dir, 'schema.json');
  writeFileSync(schemaPath, JSON.stringify(schema));
  return { dir, schema: schemaPath, d: write('d.csv', rows), dPrime: write('d-prime.csv', edit(rows.map((r) => [...r]))) };
}

/** Row 5's first value missing in D, present in D' (the schema drops rows with it missing). */
function dropRowPair(name: string, header: string, rows: string[][], schema: object): Pair {
  const d = rows.map((r) => [...r]);
  const present = d[5][0];
  d[5][0] = '';
  return writePair(name, header, d, schema, (r) => {
    r[5][0] = present;
    return r;
  });
}

/** What a reader of the release observes of one `dpfit train` run. */
async function observeTrain(data: string, schema: string, flags: readonly string[], out: string) {
  const result = await runCli('train', ...(data === '' ? [] : ['--data', data]), '--schema', schema, '--seed', '11', '--json', '--out', out, ...flags);
  return {
    status: result.code,
    stdout: observedText(result.stdout),
    file: existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : null,
    // A failure's one line is observed; a success's stderr is the data owner's private diagnostics.
    error: result.code === 0 ? '' : result.stderr,
  };
}

const RELEASED = ['stdout.model.theta', 'file.theta', 'stdout.model.models.*.theta', 'file.models.*.theta'];
const RGM_RELEASED = [...RELEASED, 'stdout.privacy.ptr.passed', 'file.privacy.ptr.passed'];

async function assertCliNeighbours(pair: Pair, flags: readonly string[], what: string, options: { released?: string[]; status?: number } = {}): Promise<void> {
  const a = await observeTrain(pair.d, pair.schema, flags, join(pair.dir, 'model-d.json'));
  const b = await observeTrain(pair.dPrime, pair.schema, flags, join(pair.dir, 'model-d-prime.json'));
  assert.equal(a.status, options.status ?? 0, `${what}: exit ${a.status} ${a.error}`);
  if (a.status === 0) assert.notEqual(a.file, null, `${what}: a model was released`);
  assertIndistinguishable(a, b, { released: options.released ?? RELEASED, volatile: ['stdout.modelFile'] }, what);
}

/** Flags that make each method run fast on a few hundred rows (the defaults otherwise). */
function methodFlags(method: string): string[] {
  switch (method) {
    case 'dpgd':
      return ['--steps', '20'];
    case 'dpsgd':
      return ['--epochs', '2', '--batch-size', '64'];
    case 'shuffled':
      return ['--epochs', '1'];
    case 'rgm':
      return ['--loss', 'squared', '--epsilon', '4', '--rho', '0.2', '--steps', '20'];
    case 'objpert':
      // Refused without its research opt-in (not private: its minimiser identifies the dataset); the data layer's pair is what this test is about.
      return ['--accept-no-guarantee'];
    default:
      return [];
  }
}

describe('neighbours: every learner of dpfit train', () => {
  const classification = dropRowPair('cls', 'age,hours,label', classificationRows(300, 1), CLASSIFICATION_SCHEMA);
  const regression = dropRowPair('reg', 'a,b,score', regressionRows(2000, 2), REGRESSION_SCHEMA);

  for (const method of METHODS) {
    it(`${method}: a record's missing value filled in changes nothing but the released parameters`, async () => {
      const pair = method === 'rgm' ? regression : classification;
      const flags = ['--method', method, ...(method === 'rgm' ? [] : ['--epsilon', '1']), ...methodFlags(method)];
      await assertCliNeighbours(pair, flags, `${method}, dropRow pair`, { released: method === 'rgm' ? RGM_RELEASED : RELEASED });
    });
  }

  for (const method of ['dpgd', 'dpsgd']) {
    it(`${method} out of core (--max-memory): the dropRow pair differs only in theta, and each run equals the in-memory one`, async () => {
      const flags = ['--method', method, '--epsilon', '1', ...methodFlags(method)];
      await assertCliNeighbours(classification, [...flags, '--max-memory', '256MB'], `${method} out of core, dropRow pair`);
      for (const data of [classification.d, classification.dPrime]) {
        const memory = await observeTrain(data, classification.schema, flags, join(classification.dir, 'memory.json'));
        const streamed = await observeTrain(data, classification.schema, [...flags, '--max-memory', '256MB'], join(classification.dir, 'memory.json'));
        assert.deepEqual(streamed, memory, `${method}: out of core = in memory, zero rows for the dropped record included`);
      }
    });
  }

  for (const method of ['dpgd', 'output']) {
    it(`${method} from DuckDB (--db): the dropRow pair differs only in theta, and each run equals the one on the CSV file`, async () => {
      const databases: string[] = [];
      for (const [k, csv] of [classification.d, classification.dPrime].entries()) {
        const file = join(classification.dir, `${method}-${k}.duckdb`);
        const instance = await DuckDBInstance.create(file);
        const connection = await instance.connect();
        await connection.run(`CREATE TABLE people AS SELECT * FROM read_csv('${csv}', header = true, nullstr = '', columns = {'age': 'DOUBLE', 'hours': 'DOUBLE', 'label': 'VARCHAR'})`);
        connection.closeSync();
        instance.closeSync();
        databases.push(file);
      }
      const flags = ['--method', method, '--epsilon', '1', ...methodFlags(method)];
      const observeDb = (database: string, out: string) => observeTrain('', classification.schema, ['--db', `duckdb:${database}`, '--query', 'SELECT * FROM people', ...flags], out);
      const a = await observeDb(databases[0], join(classification.dir, 'db-d.json'));
      const b = await observeDb(databases[1], join(classification.dir, 'db-d-prime.json'));
      assert.equal(a.status, 0, a.error);
      assertIndistinguishable(a, b, { released: RELEASED, volatile: ['stdout.modelFile'] }, `${method} --db, dropRow pair`);
      const file = await observeTrain(classification.d, classification.schema, flags, join(classification.dir, 'db-d.json'));
      if (method === 'output') assertIndistinguishable(a, file, { volatile: ['stdout.modelFile'] }, `${method}: --db trains the model the CSV file gives`);
      // DP-GD in the database: the same theta (zero rows add nothing to any sum); its event pays the engine's any-order rounding slack.
      else assert.deepEqual((a.file as { theta: number[] }).theta, (file.file as { theta: number[] }).theta);
    });
  }

  const oneClass = writePair('one-class', 'age,hours,label', classificationRows(200, 6).map((r) => [r[0], r[1], 'yes']), { ...CLASSIFICATION_SCHEMA, columns: CLASSIFICATION_SCHEMA.columns.map((c) => ({ ...c, missing: undefined })) }, (r) => {
    r[9][2] = 'no';
    return r;
  });
  for (const method of METHODS.filter((m) => m !== 'rgm')) {
    it(`${method}: data of one class train like their neighbour with both (no status one record decides)`, async () => {
      const flags = ['--method', method, '--epsilon', '1', ...methodFlags(method), ...(method === 'dpsgd' ? ['--dataset-size', '200'] : [])];
      await assertCliNeighbours(oneClass, flags, `${method}, one class vs two`);
    });
  }

  it('every record dropped vs one kept: both train, the diagnostics too (no metrics on no rows)', async () => {
    const rows = regressionRows(50, 7);
    const all = rows.map((r) => ['', r[1], r[2]]);
    const pair = writePair('all-dropped', 'a,b,score', all, REGRESSION_SCHEMA, (r) => {
      r[3][0] = '0.5';
      return r;
    });
    for (const method of ['dpgd', 'output']) {
      await assertCliNeighbours(pair, ['--method', method, '--loss', 'squared', '--clip-norm', '2', '--regularization', '0.1', '--epsilon', '1', '--diagnostics', join(pair.dir, 'diagnostics.json'), ...methodFlags(method)], `${method}, all dropped vs one kept`);
    }
  });

  const replaced = writePair('replace', 'age,hours,label', classificationRows(300, 3), { ...CLASSIFICATION_SCHEMA, columns: CLASSIFICATION_SCHEMA.columns.map((c) => ({ ...c, missing: undefined })) }, (r) => {
    r[17] = ['79', '2', 'no'];
    return r;
  });
  for (const method of ['dpgd', 'shuffled', 'output', 'output-sgd']) {
    it(`${method}: one record replaced changes nothing but the released parameters (replace-one)`, async () => {
      await assertCliNeighbours(replaced, ['--method', method, '--epsilon', '1', ...methodFlags(method)], `${method}, replace pair`);
    });
  }

  const added = writePair('add', 'age,hours,label', classificationRows(300, 4), { ...CLASSIFICATION_SCHEMA, columns: CLASSIFICATION_SCHEMA.columns.map((c) => ({ ...c, missing: undefined })) }, (r) => [...r, ['33', '71', 'yes']]);
  it('dpsgd with --dataset-size: one record more changes nothing but the released parameters (add/remove)', async () => {
    await assertCliNeighbours(added, ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '300', ...methodFlags('dpsgd')], 'dpsgd, add/remove pair');
  });
  it('dpsgd out of core with --dataset-size: one record more changes nothing but theta, and equals the in-memory run', async () => {
    const flags = ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '300', ...methodFlags('dpsgd')];
    await assertCliNeighbours(added, [...flags, '--max-memory', '256MB'], 'dpsgd out of core, add/remove pair');
    const memory = await observeTrain(added.dPrime, added.schema, flags, join(added.dir, 'memory.json'));
    const streamed = await observeTrain(added.dPrime, added.schema, [...flags, '--max-memory', '256MB'], join(added.dir, 'memory.json'));
    assert.deepEqual(streamed, memory);
  });
    it('amp: one record more changes nothing but the released parameters (add/remove: its sum objective uses no n)', async () => {
    await assertCliNeighbours(added, ['--method', 'amp', '--epsilon', '1'], 'amp, add/remove pair');
  });

  it('work limits use only public counts: refusals are the same on add/remove neighbours (amp, dpsgd with --dataset-size)', async () => {
    // amp keeps n private: its --max-iterations has a limit of its own (max-iterations x rows refused 1001 rows, not 1000).
    await assertCliNeighbours(added, ['--method', 'amp', '--epsilon', '1', '--max-iterations', '2000000'], 'amp, --max-iterations over its limit', { status: 2 });
    // dpsgd with a declared count: epochs x N / batch, N the declared count, never the data's.
    await assertCliNeighbours(added, ['--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '2000', '--epochs', '1000000', '--batch-size', '1'], 'dpsgd, steps over the limit', { status: 2 });
    const result = await runCli('train', '--data', added.dPrime, '--schema', added.schema, '--json', '--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '2000', '--epochs', '1000000', '--batch-size', '1');
    assert.match(result.stderr, /1000000 x 2000 \/ 1/);
    assert.doesNotMatch(result.stderr, /30[01]/, 'the data\'s count is not in the message');
  });

  it('dpsgd without --dataset-size publishes the count, and says so in the report', async () => {
    const a = await observeTrain(added.d, added.schema, ['--method', 'dpsgd', '--epsilon', '1', ...methodFlags('dpsgd')], join(added.dir, 'undeclared.json'));
    const privacy = (a.stdout as { privacy: { datasetSize: { value: number; source: string; note: string } } }).privacy;
    assert.deepEqual([privacy.datasetSize.value, privacy.datasetSize.source], [300, 'records']);
    assert.match(privacy.datasetSize.note, /treated as public/);
  });

  it('a declared count the data disagree with is refused the same way on both neighbours, before training', async () => {
    for (const method of ['dpgd', 'output']) {
      const flags = ['--method', method, '--epsilon', '1', '--dataset-size', '299', ...methodFlags(method)];
      await assertCliNeighbours(classification, flags, `${method}, wrong --dataset-size`, { status: 2 });
      const result = await runCli('train', '--data', classification.d, '--schema', classification.schema, '--json', ...flags);
      assert.equal(result.code, 2, result.stderr);
      assert.match(result.stderr, /--dataset-size must be the number of records.*another number, got 299/);
      assert.doesNotMatch(result.stderr, /300|301/, 'the refusal does not say how many records the data hold');
    }
  });

  it('a declared count under half the data is refused by dpsgd (its noise covers batch sums of up to twice the count)', async () => {
    const result = await runCli('train', '--data', added.d, '--schema', added.schema, '--json', '--method', 'dpsgd', '--epsilon', '1', '--dataset-size', '149', ...methodFlags('dpsgd'));
    assert.equal(result.code, 2, result.stderr);
    assert.match(result.stderr, /--dataset-size.*at least half/);
  });
});

describe('neighbours: the estimators', () => {
  const pair = dropRowPair('estimators', 'age,hours,label', classificationRows(200, 8), CLASSIFICATION_SCHEMA);
  const schema = parseSchema(CLASSIFICATION_SCHEMA, 'schema');
  for (const method of ['dpsgd', 'output', 'outputSgd'] as const) {
    it(`PrivateLogisticRegression (${method}) on what loadDataset returns: defaults from the records' count, the same report on the dropRow pair`, async () => {
      const observe = async (path: string) => {
        const clf = new PrivateLogisticRegression({ epsilon: 1, method, rng: seededRng(4) }).fit(await loadDataset(path, schema));
        return { theta: clf.model.theta, privacy: clf.privacy };
      };
      assertIndistinguishable(await observe(pair.d), await observe(pair.dPrime), { released: ['theta'] }, `estimator ${method}, dropRow pair`);
    });
  }
});

describe('neighbours: train() in the library', () => {
  const pair = dropRowPair('lib', 'age,hours,label', classificationRows(300, 5), CLASSIFICATION_SCHEMA);
  const schema = parseSchema(CLASSIFICATION_SCHEMA, 'schema');
  const common = { epsilon: 1, delta: 1e-5 };
  const cases: Array<[string, (n: number) => TrainOptions]> = [
    ['dpgd', () => ({ method: 'dpgd', ...common, steps: 20, learningRate: 1 })],
    ['dpsgd', () => ({ method: 'dpsgd', ...common, batchSize: 64, epochs: 2, learningRate: 1 })],
    ['outputSgd', (n) => ({ method: 'outputSgd', ...common, ...(defaultMethodOptions('outputSgd', { n, d: 2, smoothness: 0.25, epsilon: 1 }) as { epochs: number; regularization: number }) })],
    ['amp', () => ({ method: 'amp', ...common })],
  ];
  for (const [method, options] of cases) {
    it(`${method}: rows loadDataset dropped are zero rows for train(), so n and the event do not move`, async () => {
      const observe = async (path: string) => {
        const prepared = await loadDataset(path, schema);
        const { model, privacy } = train(prepared, { ...options(prepared.privateDiagnostics.rowsRead), rng: seededRng(3) } as TrainOptions);
        return { model, privacy };
      };
      const a = await observe(pair.d);
      const b = await observe(pair.dPrime);
      assert.equal((a.privacy.datasetSize as { value?: number }).value ?? 300, 300);
      assertIndistinguishable(a, b, { released: ['model.theta'] }, `train() ${method}, dropRow pair`);
    });
  }
});
