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
 * The index of the first backslash psql would read as a meta-command in `sql` (`\!` runs a shell
 * command, `\o` writes a file: psql runs every PostgreSQL query dpfit sends), or -1. Like psql's
 * lexer, it skips what PostgreSQL quotes: '...' strings ('' inside; E'...' strings also escape
 * with a backslash), "..." identifiers, $tag$...$tag$ strings, -- and (nested) /* *\/ comments.
 * A '...' string holding a backslash before a quote counts as a meta-command at the string's
 * start: with standard_conforming_strings off, psql would end that string elsewhere.
 */
export function psqlMetaCommandAt(sql: string): number {
  const n = sql.length;
  let i = 0;
  /** Moves i to the closing quote; false when a backslash before a quote makes the end ambiguous. */
  const skipQuoted = (close: string, backslashEscapes: boolean): boolean => {
    for (i++; i < n; i++) {
      if (sql[i] === '\\' && close === "'") {
        // In E'...' the backslash escapes; in '...' it does only where standard_conforming_strings
        // is off, where psql would end the string elsewhere: refused rather than guessed.
        if (backslashEscapes) i++;
        else if (sql[i + 1] === "'") return false;
      } else if (sql[i] === close) {
        if (sql[i + 1] === close) i++;
        else return true;
      }
    }
    return true;
  };
  while (i < n) {
    const c = sql[i];
    if (c === '\\') return i;
    if (c === "'") {
      const escaped = i > 0 && (sql[i - 1] === 'E' || sql[i - 1] === 'e') && !/[A-Za-z0-9_$]/.test(sql[i - 2] ?? ' ');
      const start = i;
      if (!skipQuoted("'", escaped)) return start;
    } else if (c === '"') {
      skipQuoted('"', false);
    } else if (c === '-' && sql[i + 1] === '-') {
      while (i < n && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      let depth = 1;
      for (i += 2; i < n && depth > 0; i++) {
        if (sql[i] === '/' && sql[i + 1] === '*') (depth++, i++);
        else if (sql[i] === '*' && sql[i + 1] === '/') (depth--, i++);
      }
      continue;
    } else if (c === '$') {
      const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i, i + 66));
      if (tag !== null && !(i > 0 && /[A-Za-z0-9_]/.test(sql[i - 1]))) {
        const end = sql.indexOf(tag[0], i + tag[0].length);
        i = end < 0 ? n : end + tag[0].length;
        continue;
      }
    }
    i++;
  }
  return -1;
}

/**
 * Refuses SQL in which psql would find a meta-command (`psqlMetaCommandAt`): dpfit's PostgreSQL
 * queries are SQL only. A backslash inside a quoted string is fine; elsewhere write chr(92).
 */
export function checkPsqlQuery(query: string, param = '--query'): void {
  const at = psqlMetaCommandAt(query);
  if (at >= 0) {
    throw new InvalidParameterError(param, query.slice(Math.max(0, at - 20), at + 20), 'SQL without a backslash outside quoted strings (psql would read it as a meta-command such as \\! or \\o; write chr(92))');
  }
}

function postgresEngine(url: string): SqlEngine {
  const name = redactUrl(url);
  return {
    kind: 'postgres',
    name,
    async query(sql) {
      checkPsqlQuery(sql);
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
