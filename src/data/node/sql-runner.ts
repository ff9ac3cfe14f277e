/**
 * What the SQL push-down (`trainDpGdInSql` and its check of partitioned views) needs of a
 * database: the interface `sql-engine.ts` implements for DuckDB and PostgreSQL (node-postgres).
 * Defined here, beside its implementation, so that the data layer never imports the learners.
 *
 * Every call runs ONE statement: PostgreSQL through the extended query protocol (whose Parse
 * message refuses several statements), DuckDB as one prepared statement. The user's `--query` is
 * embedded in dpfit's SQL only through `subquery` after `checkQuery` has accepted it: a text that is
 * one complete statement by itself, between parentheses on lines of its own, is a subquery and
 * nothing else (it can neither close dpfit's parenthesis nor comment out the rest).
 */

/** A result cell: a double (float8, read exactly), an integer (exact, |v| < 2^53), text, a boolean, or NULL. */
export type SqlCell = number | string | boolean | null;

/** A bind parameter ($1, $2, ...). */
export type SqlParameter = string | number;

/** Runs read-only SQL on a database; `name` is what messages call it (never with a password). */
export interface SqlRunner {
  readonly name: string;
  /**
   * Runs `sql`, ONE statement, so that it cannot write (PostgreSQL: in a read-only transaction,
   * `settings` set for that transaction only; DuckDB: a read-only database without access to files
   * or the network, settings ignored), and returns its rows.
   */
  query(sql: string, settings?: Readonly<Record<string, string>>): Promise<SqlCell[][]>;
  /**
   * Refuses (one line naming --query) a query that is not ONE statement by itself: what `subquery`
   * may embed. PostgreSQL plans it (EXPLAIN, nothing runs); DuckDB prepares it and requires a SELECT.
   */
  checkQuery(query: string): Promise<void>;
}

/** One connection: statements run one at a time, in its transaction when the caller began one (BEGIN ... COMMIT through `run`). */
export interface SqlConnection {
  /** ONE statement, $1... bound to `values`; float8 comes back exact (in a transaction with the runner's `exactFloats`). */
  run(sql: string, values?: readonly SqlParameter[]): Promise<SqlCell[][]>;
  close(): Promise<void>;
}

/** PostgreSQL: the push-down with `--partition-key` writes each step's theta and needs a second connection (`sql-partition-check.ts`). */
export interface PostgresRunner extends SqlRunner {
  readonly kind: 'postgres';
  /** The engine's own connection (the one `query` uses between its calls). */
  connection(): Promise<SqlConnection>;
  /** A new connection to the same database, closed by the caller. */
  openConnection(): Promise<SqlConnection>;
  /** The settings under which the engine reads numbers exactly (set for each transaction that reads them). */
  readonly exactFloats: Readonly<Record<string, string>>;
  /** Refuses, after a statement, a transaction whose settings no longer read numbers exactly. */
  checkExactFloats(connection: SqlConnection): Promise<void>;
}

/** Whether `runner` is a PostgreSQL runner with connections (`PostgresRunner`). */
export function isPostgresRunner(runner: SqlRunner): runner is PostgresRunner {
  return (runner as Partial<PostgresRunner>).kind === 'postgres' && typeof (runner as Partial<PostgresRunner>).openConnection === 'function';
}

/** The user's query as a FROM item of dpfit's SQL: on lines of its own, so that a trailing -- comment ends before dpfit's ')'. Only for queries `checkQuery` accepted. */
export function subquery(query: string): string {
  return `(\n${query}\n)`;
}

/** Runs `work` in one transaction on `connection`: COMMIT when it resolves and `commit` is true, ROLLBACK otherwise. */
export async function inTransaction<T>(connection: SqlConnection, work: () => Promise<T>, commit: boolean, begin = 'BEGIN'): Promise<T> {
  await connection.run(begin);
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await connection.run('ROLLBACK').catch(() => {});
    throw error;
  }
  await connection.run(commit ? 'COMMIT' : 'ROLLBACK');
  return result;
}
