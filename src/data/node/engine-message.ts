/**
 * What dpfit repeats of a database engine's error (DuckDB, PostgreSQL). Their texts are not
 * dpfit's: a conversion error quotes the cell it could not convert (`Could not convert string
 * 'SECRET' to DOUBLE`, `invalid input syntax for type double precision: "SECRET"`), and no
 * message dpfit prints carries a value of the data (docs/threat-model.md, "Messages"). So an
 * engine's text is repeated only for the kinds of error that are about the statement, the
 * catalog, the connection or the machine (a syntax error, an unknown column, a refused login,
 * out of memory); for every other kind dpfit says which kind it was and withholds the text.
 */

/** DuckDB error kinds (the text before the first colon) whose messages name no value of the rows. */
const DUCKDB_SAFE = /^(Parser|Binder|Catalog|Not implemented|Permission|Out of Memory|Connection|Interrupt) Error$/;

/**
 * PostgreSQL SQLSTATE classes whose messages name no value of the rows: 08 connection, 0A feature
 * not supported, 25 transaction state, 28 authorization, 3D/3F catalog and schema names,
 * 42 syntax and access rules, 53 resources, 54 program limits, 57 operator intervention.
 */
const POSTGRES_SAFE = /^(08|0A|25|28|3D|3F|42|53|54|57)/;

/** The first non-blank line of a message. */
function firstLine(message: string): string {
  return (message.split('\n').find((line) => line.trim() !== '') ?? message).trim();
}

/** DuckDB's error, or its kind alone when its text could quote the data. */
export function duckDbMessage(error: unknown): string {
  const first = firstLine(error instanceof Error ? error.message : String(error));
  const kind = /^([A-Za-z][A-Za-z ]*? Error):/.exec(first)?.[1];
  if (kind !== undefined && DUCKDB_SAFE.test(kind)) return `${first} (DuckDB)`;
  if (/^Invalid Input Error: No magic bytes found at end of file/.test(first)) return 'is not a Parquet file (no magic bytes at its end) (DuckDB)';
  // A fixed text about the engine's own settings (names an option, never a value of the rows).
  if (/^Invalid Input Error: Cannot change configuration option "[a-z_]+" - the configuration has been locked$/.test(first)) return `${first} (DuckDB)`;
  return `DuckDB stopped (${kind ?? 'an error'}; its text is not shown: it can quote the data)`;
}

/** PostgreSQL's error (node-postgres: `code` is the SQLSTATE), or its SQLSTATE alone when its text could quote the data. */
export function postgresMessage(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const first = firstLine(error instanceof Error ? error.message : String(error));
  // No SQLSTATE: an error of the client or the network (ECONNREFUSED, a timeout), not of a statement.
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code) || POSTGRES_SAFE.test(code)) return `${first} (PostgreSQL)`;
  return `PostgreSQL stopped (SQLSTATE ${code}; its text is not shown: it can quote the data)`;
}
