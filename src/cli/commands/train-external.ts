/**
 * `dpfit train` on data that do not come from a file read whole into memory:
 *
 * - `--max-memory SIZE` with `--data FILE` (CSV or Parquet): out-of-core DP-GD / DP-SGD, the rows
 *   encoded once by dpfit into a temporary file (in $TMPDIR, removed with the run) and read back
 *   in large segments by every step (`data/node/stream-rows.ts`, `learners/gradient/streamed.ts`);
 *   the same release as the in-memory run.
 * - `--db URL --query SQL`: a DuckDB database file or a PostgreSQL server. With `--method dpgd`
 *   the clipped gradient sum runs inside the database, one aggregate query per step, the
 *   schema's encoding written in SQL (`learners/sql/sql-gradient.ts`): the rows never leave it.
 *   `--partition-key COL` ships each step's sums to every postgres_fdw partition's server (each
 *   server holds a theta table and a view of its encoded rows, the coordinator foreign tables on
 *   them: the SQL printed by `--encoding-sql --partition-key COL [--theta-table T]`).
 *   Every other method reads the query's rows through the engine and encodes them in dpfit, as
 *   a file.
 */
import type { PrivateDiagnostics, PreparedData } from '../../data/schema/apply.js';
import type { Schema } from '../../data/schema/types.js';
import { applySchema } from '../../data/schema/apply.js';
import { labelColumn } from '../../data/schema/bounds.js';
import { schemaCsvOptions } from '../../data/schema/read-options.js';
import type { RawTable } from '../../data/table.js';
import { InvalidParameterError } from '../../errors.js';
import { datasetSizeReport } from '../../learners/dataset-size.js';
import type { AnyLearner } from '../../learners/registry.js';
import { completeOptions, LEARNERS } from '../../learners/registry.js';
import { cliName, type SchemaBounds } from '../../learners/learner.js';
import type { Rng } from '../../random/rng.js';
import { CHUNK_ROWS } from '../../learners/glm/per-example.js';
import type { ClippedGradientPool } from '../../learners/glm/parallel/parallel-clipped-sum.js';
import type { MethodResult } from './train-methods.js';
import { learnerOfFlags, optionsFromFlags, orList, type TrainFlags } from '../train-flags.js';

export interface ExternalFlags {
  db?: string;
  query?: string;
  maxMemory?: string;
  partitionKey?: string;
  thetaTable?: string;
  encodingSql?: boolean;
}

/** What an external run gives the command: a prepared table (then trained as usual), or a finished run. */
export type ExternalOutcome =
  | { readonly kind: 'prepared'; readonly prepared: PreparedData; readonly table: RawTable }
  | { readonly kind: 'trained'; readonly result: MethodResult; readonly rows: number; readonly d: number; readonly data: Partial<PrivateDiagnostics>; readonly mode: string };

/** The flag rules, checked before anything is read. */
export function checkExternalFlags(flags: TrainFlags & ExternalFlags): void {
  const hasData = flags.data !== undefined;
  const hasDb = flags.db !== undefined;
  if (hasData === hasDb) throw new InvalidParameterError(hasData ? '--db' : '--data', hasData ? flags.db : undefined, hasData ? 'not given with --data (one source of rows)' : 'given: --data FILE, or --db URL with --query SQL');
  if (hasDb && flags.query === undefined) throw new InvalidParameterError('--query', undefined, 'given with --db: the SELECT whose rows are the training data');
  if (!hasDb && flags.query !== undefined) throw new InvalidParameterError('--query', flags.query, 'given only with --db');
  const learner = learnerOfFlags(flags);
  const inDatabase = orList(methodsWith((l) => l.inDatabase === true));
  if (flags.maxMemory !== undefined) {
    if (hasDb) throw new InvalidParameterError('--max-memory', flags.maxMemory, `given only with --data (with --db and --method ${inDatabase} the rows stay in the database)`);
    if (learner.outOfCore === undefined) throw new InvalidParameterError('--max-memory', flags.maxMemory, `given only with --method ${orList(methodsWith((l) => l.outOfCore !== undefined))} (the methods that train out of core)`);
  }
  if ((flags.maxMemory !== undefined || (hasDb && learner.inDatabase === true)) && flags.tune !== undefined) {
    throw new InvalidParameterError('--tune', flags.tune, 'not given with --max-memory or the SQL push-down (tuning trains several runs on rows in memory)');
  }
  if (flags.partitionKey !== undefined && !(hasDb && /^postgres(ql)?:\/\//i.test(flags.db as string) && learner.inDatabase === true)) {
    throw new InvalidParameterError('--partition-key', flags.partitionKey, `given only with --db postgres://... and --method ${inDatabase} (the aggregate shipped to each postgres_fdw partition)`);
  }
  if (flags.thetaTable !== undefined && flags.partitionKey === undefined) {
    throw new InvalidParameterError('--theta-table', flags.thetaTable, 'given only with --partition-key (the run\'s theta tables on the postgres_fdw servers)');
  }
  if (hasDb && learner.inDatabase === true && flags.loss !== 'logistic' && flags.loss !== 'squared') {
    throw new InvalidParameterError('--loss', flags.loss, `"logistic" or "squared" with --db and --method ${inDatabase} (the losses written in SQL)`);
  }
}

/** The flag rules that need the schema, checked once it is read and before any data are read or any budget is spent. */
export function checkExternalSchema(flags: TrainFlags & ExternalFlags, schema: Schema): void {
  if (flags.maxMemory !== undefined && labelColumn(schema).classes !== undefined) {
    throw new InvalidParameterError('--max-memory', flags.maxMemory, 'not given with a multi-class label (one-vs-rest trains on rows in memory)');
  }
}

/** The --method names of the learners a predicate holds for. */
function methodsWith(predicate: (learner: AnyLearner) => boolean): string[] {
  return LEARNERS.filter((l) => predicate(l as AnyLearner)).map((l) => cliName(l.method));
}

/**
 * A learner's complete options from the flags, on data of d features whose public n is `n` (the
 * registry's rules, as in memory; `n` undefined: a rule that needs it refuses, since the caller
 * does not know it yet).
 */
function externalOptions(learner: AnyLearner, flags: TrainFlags, bounds: SchemaBounds, d: number, n: number | undefined, extra: Record<string, unknown>): Record<string, unknown> {
  const shape = { ...(n === undefined ? {} : { n: datasetSizeReport(learner.method, n, flags.datasetSize).value }), d, bounds };
  return completeOptions(learner, shape, { ...optionsFromFlags(learner, flags), ...extra });
}

/**
 * What `--encoding-sql` prints: the SELECT encoding --query's rows; with --partition-key, the
 * whole setup of a partitioned push-down run (`partitionSetupSql`): the script each server runs
 * (its key value a psql variable), the coordinator's tables, and the per-server foreign tables.
 */
export async function encodingSqlText(schema: Schema, flags: TrainFlags & ExternalFlags): Promise<string> {
  if (flags.query === undefined) throw new InvalidParameterError('--query', undefined, 'given with --encoding-sql: the SELECT of one server\'s rows');
  const { encodedRowsSql, partitionSetupSql, DEFAULT_THETA_TABLE } = await import('../../learners/sql/sql-gradient.js');
  if (flags.partitionKey === undefined) {
    if (flags.thetaTable !== undefined) throw new InvalidParameterError('--theta-table', flags.thetaTable, 'given only with --partition-key');
    return `${encodedRowsSql(schema, flags.query)}\n`;
  }
  const name = flags.thetaTable ?? DEFAULT_THETA_TABLE;
  const setup = partitionSetupSql(schema, flags.query, flags.partitionKey, name);
  const key = flags.partitionKey;
  return `-- dpfit --partition-key ${key} --theta-table ${name}: ${setup.d} encoded features.
-- 1. On EACH server: a one-row theta table ${name}, the view ${name}_input of its rows (--query: what the
--    server's data are) and the view ${name}_rows computing z, ss and the clipped coefficient c once per row.
--    Before the first step dpfit locks every server's ${name}_rows and ${name} and checks, through the
--    foreign tables of section 3, that they are exactly these (the view's definition, built-in functions only,
--    no trigger, rule or row security on ${name}); every step still checks ss and c in every row.
--    Run: psql -v part=<this server's value of ${key}, an integer> -f <this file's section 1> <server URL>
${setup.server(':part')}

-- 2. On the coordinator, once:
${setup.coordinator}

-- 3. On the coordinator, per server SRV (CREATE SERVER SRV FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host ..., port ...,
--    dbname ..., fdw_tuple_cost '0.2', async_capable 'true', options '-c jit=off'), a loopback one for the coordinator's own
--    rows, and a USER MAPPING) with value V of ${key}: foreign tables on its theta table, its view and its catalogs.
--    (dpfit's role on the coordinator needs CREATE on the database: the check builds the expected view in a scratch
--    schema that it rolls back.)
${setup.coordinatorPartition('SRV', 'V').split('\n').map((line) => `-- ${line}`).join('\n')}

-- 4. Train: dpfit train --db <coordinator URL> --query "${setup.query}" --partition-key ${key} --theta-table ${name} --method dpgd ...
--    Each step updates every server's ${name} (through ${name}_servers) and reads the views in one transaction:
--    two runs at the same time need different --theta-table names (a shared one makes the other run wait or fail).
`;
}

/**
 * Trains (or prepares the rows) from --db or out of core. `checkLimits(n)` applies the
 * command's work limits once n is known, before any step.
 */
export async function trainExternal(
  flags: TrainFlags & ExternalFlags,
  schema: Schema,
  context: { rng: Rng; onStep?: (step: number, steps: number) => void; checkLimits: (n: number) => void },
): Promise<ExternalOutcome> {
  const learner = learnerOfFlags(flags);
  const multiClass = labelColumn(schema).classes !== undefined;
  const { schemaLabelBound, schemaRowNormBound } = await import('../../data/schema/bounds.js');
  const bounds = { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) };
  const extra = { rng: context.rng, ...(context.onStep === undefined ? {} : { onStep: context.onStep }) };
  if (flags.db !== undefined) {
    const { openSqlEngine } = await import('../../data/node/sql-engine.js');
    const engine = await openSqlEngine(flags.db);
    try {
      // One statement by itself, before dpfit embeds it in its own SQL (data/node/sql-runner.ts).
      await engine.checkQuery(flags.query as string);
      if (learner.inDatabase !== true || multiClass) {
        const table = await engine.readTable(flags.query as string, schemaCsvOptions(schema, engine.name));
        // The raw rows too: --tune compares them with its --validation file (cli/validation-overlap.ts).
        return { kind: 'prepared', prepared: applySchema(table, schema), table };
      }
      const { trainDpGdInSql, schemaEncodingSql } = await import('../../learners/sql/sql-gradient.js');
      type PushDownOptions = Parameters<typeof trainDpGdInSql>[3];
      const encoded = schemaEncodingSql(schema, flags.query as string);
      const partitionKey = flags.partitionKey;
      // n is counted inside (after the servers' views are checked): the limits follow it, and the
      // options are the in-memory run's (DP-GD's rules use no n; one that did would refuse here).
      const result = await trainDpGdInSql(engine, schema, flags.query as string, {
        ...(externalOptions(learner, flags, bounds, encoded.d, undefined, extra) as Omit<PushDownOptions, 'checkRows'>),
        checkRows: context.checkLimits,
        ...(partitionKey === undefined ? {} : { partitionKey, ...(flags.thetaTable === undefined ? {} : { thetaTable: flags.thetaTable }) }),
      });
      return { kind: 'trained', result: { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } }, rows: result.check.n, d: encoded.d, data: { droppedRows: result.check.droppedRows }, mode: `inside ${engine.kind === 'postgres' ? 'PostgreSQL' : 'DuckDB'}` };
    } finally {
      await engine.close();
    }
  }
  checkExternalSchema(flags, schema);
  const { openStreamedDataset, parseMemorySize } = await import('../../data/node/stream-rows.js');
  const trainOutOfCore = learner.outOfCore as NonNullable<AnyLearner['outOfCore']>;
  const maxMemory = parseMemorySize('--max-memory', flags.maxMemory as string);
  // Encoded once into a temporary file (in $TMPDIR, removed with the run), in the precision the steps use.
  const streamed = await openStreamedDataset(flags.data as string, schema, { maxMemory, ...(flags.precision === undefined ? {} : { precision: flags.precision }) });
  let pool: ClippedGradientPool | undefined;
  try {
    const { n, d } = streamed.rows;
    context.checkLimits(n);
    // DP-GD's segments of whole chunks summed on all CPUs, as in memory (the same sums bit for bit).
    const parallel = learner.options.includes('gradientSummer') && n >= 2 * CHUNK_ROWS;
    let summer = {};
    if (parallel) {
      const { createClippedGradientPool, poolGradientSummer } = await import('../../learners/glm/parallel/parallel-clipped-sum.js');
      pool = await createClippedGradientPool();
      summer = { gradientSummer: poolGradientSummer(pool) };
    }
    // The in-memory run's options: the same public rules on the same public n (DP-SGD: the declared count when there is one).
    const result = await trainOutOfCore(streamed.rows, externalOptions(learner, flags, bounds, d, n, { ...extra, ...summer }));
    return { kind: 'trained', result: { model: result.model, privacy: result.privacy, diagnostics: { ...result.diagnostics } }, rows: n, d, data: streamed.privateDiagnostics, mode: 'out of core' };
  } finally {
    await pool?.close();
    streamed.close();
  }
}
