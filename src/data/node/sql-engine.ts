/**
 * Databases as data sources for `dpfit train --db URL --query SQL`:
 *
 * - DuckDB database files (`duckdb:PATH`, or a path ending in .duckdb/.ddb), through the optional
 *   `@duckdb/node-api`: opened read-only with `enable_external_access = false` (no file, no
 *   network, no extension: `read_csv('/etc/passwd')` and `COPY ... TO 'file'` are refused) and the
 *   configuration locked (`lock_configuration`: no query can SET it back). dpfit's statements
 *   run as ONE prepared statement each.
 * - PostgreSQL (`postgres://...`, `postgresql://...`), through node-postgres (`pg`): one
 *   connection per engine, one statement per call over the extended query protocol (its Parse
 *   message refuses a text holding several statements), values as bind parameters, float8 read
 *   as the server's double bit for bit (`textParser`); no psql, so nothing a client could read as
 *   a meta-command. What holds the user's query runs in a READ ONLY transaction, rolled back after.
 *
 * The user's query is checked once (`checkQuery`: it must be one statement by itself) before
 * dpfit embeds it in its own SQL (`sql-runner.ts`, `subquery`). Two uses: `readTable`
 * returns a query's rows as a `RawTable` (then encoded by dpfit like a file: `applySchema`), and
 * `query` runs the aggregate queries of the SQL push-down (`trainDpGdInSql`), which keeps
 * the rows in the database.
 */
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type pg from 'pg';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { subquery, type PostgresRunner, type SqlCell, type SqlConnection, type SqlParameter, type SqlRunner } from './sql-runner.js';
import { parseCsv, type CsvOptions } from '../csv.js';
import type { RawTable } from '../table.js';
import { duckDbMessage, postgresMessage } from './engine-message.js';
import { collect, duckDbError, inferTextColumns, kinds, NUMERIC_SOURCE, selectedColumns } from './duckdb.js';
import { loadDuckDb } from './load-duckdb.js';
import { requireFile } from './files.js';

export interface SqlEngine extends SqlRunner {
  readonly kind: 'duckdb' | 'postgres';
  /** The rows of `query` as a table (numbers as doubles, text as categories; NULL and the missing tokens missing). */
  readTable(query: string, csv: CsvOptions): Promise<RawTable>;
  close(): Promise<void>;
}

/** The URL without a password, for messages. */
export function redactUrl(url: string): string {
  return url.replace(/^([a-z]+:\/\/[^:/@]*):[^@]*@/i, '$1:***@').replace(/password=[^&\s]*/gi, 'password=***');
}

/** Which engine a --db URL names. */
export function engineKind(url: string): 'duckdb' | 'postgres' {
  if (/^postgres(ql)?:\/\//i.test(url)) return 'postgres';
  if (/^duckdb:/i.test(url) || /\.(duckdb|ddb|db)$/i.test(url)) return 'duckdb';
  throw new InvalidParameterError('--db', redactUrl(url), 'postgres://... (PostgreSQL) or duckdb:FILE / FILE.duckdb (DuckDB)');
}

/**
 * A database error as a one-line DataFormatError about `name`: the engine's first line when its
 * kind names no value of the rows, else only its kind (`engine-message.ts`).
 */
function engineError(name: string, engine: 'PostgreSQL' | 'DuckDB', error: unknown): DataFormatError {
  if (error instanceof DataFormatError) return error;
  return new DataFormatError(name, redactUrl(engine === 'PostgreSQL' ? postgresMessage(error) : duckDbMessage(error)));
}

/** A query refused by `checkQuery`: the flag, the start of the query, and why. */
function queryRefused(query: string, reason: string): InvalidParameterError {
  const shown = query.length > 60 ? `${query.slice(0, 57)}...` : query;
  return new InvalidParameterError('--query', shown.replace(/\s+/g, ' '), `one SELECT statement by itself (${reason})`);
}

/**
 * Result cells from PostgreSQL's text: float8 (and float4, integers, oid) as numbers, booleans,
 * the rest (text, numeric: never rounded silently) as strings. The float8 text is exact: with
 * extra_float_digits >= 1 (dpfit sets 3 for each of its transactions and checks after each
 * statement that it is still 3: a query could call set_config) PostgreSQL >= 12 prints the
 * shortest decimal that reads back to the same double (Ryu), and `Number` reads a decimal as the
 * nearest double (ECMAScript's correctly rounded conversion): the round trip gives the server's
 * double bit for bit, -0, infinities and NaN included (test/learners/sql/attacks.test.ts checks it on
 * random bit patterns). (node-postgres's binary mode would not help: it decodes every field as
 * UTF-8 text first, which loses bytes.)
 */
function textParser(oid: number): (text: string) => SqlCell {
  switch (oid) {
    case 700: case 701: case 21: case 23: case 26: return Number;
    case 20: return (t) => {
      const v = Number(t);
      if (!Number.isSafeInteger(v)) throw new Error('a bigint result beyond 2^53');
      return v;
    };
    case 16: return (t) => t === 't';
    default: return (t) => t;
  }
}

const CELL_TYPES = { getTypeParser: ((oid: number) => textParser(oid)) as unknown as pg.CustomTypesConfig['getTypeParser'] };
/** Text results kept as the server's text (`readTable`, parsed by dpfit's CSV rules). */
const TEXT_TYPES = { getTypeParser: (() => (text: string) => text) as unknown as pg.CustomTypesConfig['getTypeParser'] };

/** The query option node-postgres reads but its types do not declare. */
type ExtendedQuery = pg.QueryArrayConfig & { queryMode: 'extended' };

/** One node-postgres connection: one statement per call (extended protocol). */
function pgConnection(client: pg.Client, name: string): SqlConnection & { runText(sql: string): Promise<{ names: string[]; rows: (string | null)[][] }> } {
  const call = async (sql: string, values: readonly SqlParameter[], cells: boolean) => {
    try {
      const config: ExtendedQuery = { text: sql, values: [...values], rowMode: 'array', queryMode: 'extended', types: cells ? CELL_TYPES : TEXT_TYPES };
      return await client.query(config);
    } catch (error) {
      throw engineError(name, 'PostgreSQL', error);
    }
  };
  return {
    async run(sql, values = []) {
      return (await call(sql, values, true)).rows as SqlCell[][];
    },
    async runText(sql) {
      const result = await call(sql, [], false);
      return { names: result.fields.map((f) => f.name), rows: result.rows as (string | null)[][] };
    },
    async close() {
      await client.end().catch(() => {});
    },
  };
}

/** The settings of every transaction that reads numbers (`textParser`). */
export const EXACT_FLOATS: Readonly<Record<string, string>> = { extra_float_digits: '3' };

/** Refuses a transaction in which a statement changed extra_float_digits (its floats were not read exactly). */
export async function checkExactFloats(connection: SqlConnection, name: string): Promise<void> {
  const [[digits]] = await connection.run("SELECT pg_catalog.current_setting('extra_float_digits')");
  if (digits !== EXACT_FLOATS.extra_float_digits) throw new DataFormatError(name, `a statement set extra_float_digits to ${String(digits)}: its numbers were not printed exactly, so they are not used`);
}

/** Connects to `url` (PGCONNECT_TIMEOUT seconds, default 10); errors name the URL without its password. */
async function connectPostgres(url: string, name: string): Promise<ReturnType<typeof pgConnection>> {
  let Client: typeof pg.Client;
  try {
    Client = (await import('pg')).default.Client;
  } catch {
    throw new DataFormatError(name, 'PostgreSQL needs the pg package (npm install pg)');
  }
  const seconds = Number(process.env.PGCONNECT_TIMEOUT ?? '10');
  const client = new Client({ connectionString: url, connectionTimeoutMillis: (Number.isFinite(seconds) && seconds > 0 ? seconds : 10) * 1000, application_name: 'dpfit' });
  // A connection the server ends while idle (e.g. a shut-down server) must not crash dpfit: the next call reports it.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => {});
    throw engineError(name, 'PostgreSQL', error);
  }
  return pgConnection(client, name);
}

/** CSV text of the rows, quoted as PostgreSQL's COPY ... CSV quotes them (NULL unquoted and empty). */
function csvText(names: readonly string[], rows: readonly (readonly (string | null)[])[]): string {
  const field = (v: string | null): string => (v === null ? '' : v === '' || /[",\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
  const lines = [names.map(field).join(',')];
  for (const row of rows) lines.push(row.map(field).join(','));
  return `${lines.join('\n')}\n`;
}

function postgresEngine(url: string): SqlEngine & PostgresRunner {
  const name = redactUrl(url);
  let own: Promise<ReturnType<typeof pgConnection>> | undefined;
  const connection = () => (own ??= connectPostgres(url, name));
  /** Runs `work` in a READ ONLY transaction (rolled back after) with `settings` (and `EXACT_FLOATS`) for that transaction only. */
  const readOnly = async <T>(settings: Readonly<Record<string, string>>, work: (c: Awaited<ReturnType<typeof connection>>) => Promise<T>): Promise<T> => {
    const c = await connection();
    await c.run('BEGIN READ ONLY');
    try {
      for (const [key, value] of Object.entries({ ...settings, ...EXACT_FLOATS })) await c.run('SELECT pg_catalog.set_config($1, $2, true)', [key, value]);
      const result = await work(c);
      await checkExactFloats(c, name);
      return result;
    } finally {
      await c.run('ROLLBACK').catch(() => {});
    }
  };
  return {
    kind: 'postgres',
    name,
    connection,
    openConnection: () => connectPostgres(url, name),
    exactFloats: EXACT_FLOATS,
    checkExactFloats: (c) => checkExactFloats(c, name),
    async query(sql, settings = {}) {
      return readOnly(settings, (c) => c.run(sql));
    },
    async checkQuery(query) {
      // Planned, not run: the extended protocol refuses a second statement, the parser a ')' that
      // closes nothing, an unterminated string or comment.
      try {
        await readOnly({}, (c) => c.run(`EXPLAIN (COSTS OFF)\n${query}\n`));
      } catch (error) {
        throw queryRefused(query, error instanceof Error ? error.message.replace(/^.*?: /, '') : String(error));
      }
    },
    async readTable(query, csv) {
      await this.checkQuery(query);
      // Every column as the server's text (floats with extra_float_digits = 3: their shortest
      // round-trip text), read by dpfit's CSV rules as the file reader would.
      const { names, rows } = await readOnly({}, (c) => c.runText(query));
      return parseCsv(Buffer.from(csvText(names, rows), 'utf8'), { ...csv, header: true, delimiter: ',', comment: undefined, source: name });
    },
    async close() {
      if (own !== undefined) await (await own.catch(() => undefined))?.close();
      own = undefined;
    },
  };
}

/** A DuckDB value as a cell: BIGINT/HUGEINT (JS bigint) as exact numbers below 2^53. */
function duckCell(value: unknown): SqlCell {
  if (value === null || value === undefined) return null;
  if (typeof value === 'number' || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'bigint') {
    if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < -BigInt(Number.MAX_SAFE_INTEGER)) throw new Error('an integer result beyond 2^53');
    return Number(value);
  }
  return String(value);
}

async function duckDbEngine(url: string): Promise<SqlEngine> {
  const path = url.replace(/^duckdb:/i, '');
  await requireFile(path);
  const { DuckDBInstance: Instance, StatementType } = await loadDuckDb(path, 'training inside a DuckDB database');
  const instance: DuckDBInstance = await Instance.create(path, { access_mode: 'READ_ONLY', threads: '1', enable_external_access: 'false', lock_configuration: 'true' });
  const connection: DuckDBConnection = await instance.connect();
  /** ONE prepared statement (DuckDB refuses to prepare several). */
  const prepare = async (sql: string) => {
    try {
      return await connection.prepare(sql);
    } catch (error) {
      throw duckDbError(path, error);
    }
  };
  const engine: SqlEngine = {
    kind: 'duckdb',
    name: path,
    async query(sql) {
      const prepared = await prepare(sql);
      try {
        const reader = await prepared.runAndReadAll();
        return reader.getRows().map((row) => row.map(duckCell));
      } catch (error) {
        throw engineError(path, 'DuckDB', error instanceof DataFormatError ? error : duckDbError(path, error));
      } finally {
        prepared.destroySync();
      }
    },
    async checkQuery(query) {
      let prepared;
      try {
        prepared = await connection.prepare(query);
      } catch (error) {
        throw queryRefused(query, duckDbError(path, error).message.replace(/^.*?: /, ''));
      }
      const type = prepared.statementType;
      prepared.destroySync();
      if (type !== StatementType.SELECT) throw queryRefused(query, 'not a SELECT');
    },
    async readTable(query, csv) {
      await engine.checkQuery(query);
      const from = subquery(query);
      let described;
      try {
        described = (await connection.runAndReadAll(`DESCRIBE SELECT * FROM ${from}`)).getRowObjects();
      } catch (error) {
        throw duckDbError(path, error);
      }
      const names = described.map((r) => String(r.column_name));
      const types = described.map((r) => String(r.column_type));
      const missing = csv.missing ?? ['', '?'];
      const wanted = kinds(path, names, types, csv.columnTypes, csv.optionalColumns);
      try {
        await inferTextColumns(connection, from, names, wanted, missing);
      } catch (error) {
        throw error instanceof DataFormatError ? error : duckDbError(path, error);
      }
      const selected = selectedColumns(names, wanted, (j) => NUMERIC_SOURCE.test(types[j]));
      return collect(connection, path, `${from} AS q`, selected, missing);
    },
    async close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
  return engine;
}

/** Opens the database a --db URL names (module comment). */
export async function openSqlEngine(url: string): Promise<SqlEngine> {
  return engineKind(url) === 'postgres' ? postgresEngine(url) : duckDbEngine(url);
}
