/**
 * Databases as data sources for `dpfit train --db URL --query SQL`:
 *
 * - DuckDB database files (`duckdb:PATH`, or a path ending in .duckdb/.ddb), opened read-only
 *   through the optional `@duckdb/node-api`;
 * - PostgreSQL (`postgres://...`, `postgresql://...`, libpq URIs), through Debian's `psql` client
 *   run as a child process (no npm client needed; the `pg@8` package could replace it later).
 *   Every query is one `psql` run (the SQL on its stdin) with `extra_float_digits = 3`, so each
 *   double crosses as its shortest round-trip text and `Number()` gives back the server's double exactly.
 *
 * Two uses: `readTable` returns a query's rows as a `RawTable` (then encoded by dpfit like a
 * file: `applySchema`), and `query` runs the aggregate queries of the SQL push-down
 * (`learners/sql-gradient.ts`), which keeps the rows in the database.
 */
import { spawn } from 'node:child_process';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import type { SqlRunner } from '../../learners/sql-gradient.js';
import { parseCsv, type CsvOptions } from '../csv.js';
import type { RawTable } from '../table.js';
import { collect, duckDbError, inferTextColumns, kinds, NUMERIC_SOURCE, selectedColumns } from './duckdb.js';
import { loadDuckDb } from './load-duckdb.js';
import { requireFile } from './read.js';

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

/** Runs psql once; resolves with stdout, or a one-line DataFormatError with the server's message. */
function runPsql(url: string, sql: string, name: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    // The SQL goes through stdin, not argv: a push-down step over d features is O(d^2) text
    // (hundreds of kB for d ~ 20), beyond Linux's 128 kB limit on one argument.
    const child = spawn('psql', ['-X', '-q', '-A', '-t', '-F', '\x1f', '-v', 'ON_ERROR_STOP=1', '-f', '-', url], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, PGCONNECT_TIMEOUT: process.env.PGCONNECT_TIMEOUT ?? '10' },
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (b: Buffer) => out.push(b));
    child.stderr.on('data', (b: Buffer) => err.push(b));
    child.on('error', (error: NodeJS.ErrnoException) => {
      reject(new DataFormatError(name, error.code === 'ENOENT' ? 'PostgreSQL needs the psql client (Debian: apt-get install postgresql-client)' : error.message));
    });
    child.stdin.on('error', () => {}); // psql gone early (a connection error): reported by 'close'
    child.stdin.end(`SET extra_float_digits = 3;\n${sql};\n`);
    child.on('close', (code) => {
      if (code === 0) return resolve(Buffer.concat(out));
      const message = Buffer.concat(err).toString('utf8').split('\n').find((l) => l.trim() !== '') ?? `psql exited with status ${code}`;
      reject(new DataFormatError(name, `${message.replace(/^psql:\S*\s*/, '').trim()} (PostgreSQL)`));
    });
  });
}

/**
 * Refuses a user's query with a backslash: psql, which runs every query, reads a backslash outside
 * a quoted string as one of its meta-commands (`\!` runs a shell command, `\o` writes a file), so
 * a query is SQL only. chr(92) writes the character.
 */
export function checkPsqlQuery(query: string, param = '--query'): void {
  if (query.includes('\\')) throw new InvalidParameterError(param, query, 'SQL without a backslash (psql would read it as a meta-command such as \\! or \\o; write chr(92))');
}

function postgresEngine(url: string): SqlEngine {
  const name = redactUrl(url);
  return {
    kind: 'postgres',
    name,
    async query(sql) {
      const text = (await runPsql(url, sql, name)).toString('utf8');
      return text.split('\n').filter((line) => line !== '').map((line) => line.split('\x1f').map((cell) => (cell === '' ? null : cell)));
    },
    async readTable(query, csv) {
      checkPsqlQuery(query);
      // COPY ... TO STDOUT as CSV (NULL unquoted and empty, text quoted when needed): the built-in parser reads it.
      const bytes = await runPsql(url, `COPY (${query}) TO STDOUT WITH (FORMAT csv, HEADER true)`, name);
      return parseCsv(bytes, { ...csv, header: true, delimiter: ',', comment: undefined, source: name });
    },
    async close() {},
  };
}

async function duckDbEngine(url: string): Promise<SqlEngine> {
  const path = url.replace(/^duckdb:/i, '');
  await requireFile(path);
  const { DuckDBInstance: Instance } = await loadDuckDb(path, 'training inside a DuckDB database');
  const instance: DuckDBInstance = await Instance.create(path, { access_mode: 'READ_ONLY', threads: '1' });
  const connection: DuckDBConnection = await instance.connect();
  const run = async (sql: string) => {
    try {
      return await connection.runAndReadAll(sql);
    } catch (error) {
      throw duckDbError(path, error);
    }
  };
  return {
    kind: 'duckdb',
    name: path,
    async query(sql) {
      const reader = await run(sql);
      return reader.getRows().map((row) => row.map((cell) => (cell === null ? null : String(cell))));
    },
    async readTable(query, csv) {
      const from = `(${query})`;
      const described = (await run(`DESCRIBE SELECT * FROM ${from}`)).getRowObjects();
      const names = described.map((r) => String(r.column_name));
      const types = described.map((r) => String(r.column_type));
      const missing = csv.missing ?? ['', '?'];
      const wanted = kinds(path, names, types, csv.columnTypes, csv.optionalColumns);
      await inferTextColumns(connection, from, names, wanted, missing);
      const selected = selectedColumns(names, wanted, (j) => NUMERIC_SOURCE.test(types[j]));
      return collect(connection, path, `${from} AS q`, selected, missing);
    },
    async close() {
      connection.closeSync();
      instance.closeSync();
    },
  };
}

/** Opens the database a --db URL names (module comment). */
export async function openSqlEngine(url: string): Promise<SqlEngine> {
  return engineKind(url) === 'postgres' ? postgresEngine(url) : duckDbEngine(url);
}
