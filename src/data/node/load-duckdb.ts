/**
 * DuckDB (`@duckdb/node-api`) is an optional dependency: `npm install dpfit` installs it (Parquet
 * files, large CSVs, the federated nodes' ledgers), `npm install dpfit --omit=optional` leaves it
 * out for accounting and CSV-only use. Loaded on first use; when it is missing (or its native
 * binding for this platform is), the error says which file needed it and how to install it.
 */
import { DataFormatError } from '../../errors.js';

/** The version dpfit is tested with (package.json's optionalDependencies; see the stack notes on 1.5.6). */
export const DUCKDB_PACKAGE = '@duckdb/node-api@1.5.5-r.5';

type DuckDbModule = typeof import('@duckdb/node-api');

/** Whether an import failed because the package (or its platform binding) is not installed. */
function isMissingModule(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (e === null || typeof e !== 'object') return false;
  if (e.code === 'ERR_MODULE_NOT_FOUND' || e.code === 'MODULE_NOT_FOUND') return true;
  return typeof e.message === 'string' && /Cannot find (module|package) '@duckdb\//.test(e.message);
}

/**
 * `import('@duckdb/node-api')`, or a one-line `DataFormatError` about `source` (the file that
 * needs DuckDB) saying why and how to install it.
 *
 * @param purpose what DuckDB is needed for, e.g. "reading Parquet files"
 */
export async function loadDuckDb(source: string, purpose: string, importer: () => Promise<DuckDbModule> = () => import('@duckdb/node-api')): Promise<DuckDbModule> {
  try {
    return await importer();
  } catch (error) {
    if (!isMissingModule(error)) throw error;
    throw new DataFormatError(source, `${purpose} needs DuckDB, an optional dependency of dpfit that is not installed: npm install ${DUCKDB_PACKAGE}`);
  }
}
