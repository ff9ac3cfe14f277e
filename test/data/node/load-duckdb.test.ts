/**
 * DuckDB is an optional dependency (`npm install dpfit --omit=optional` leaves it out): loading it
 * is lazy, and a missing package or platform binding is one line naming the file that needed it
 * and the install command (a DataFormatError: exit 3 in the CLI), never a stack trace.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { describe, it } from 'node:test';
import { DUCKDB_PACKAGE, loadDuckDb } from '../../../src/data/node/load-duckdb.js';
import { DataFormatError } from '../../../src/errors.js';

function missing(code: string, message: string): () => Promise<never> {
  return () => Promise.reject(Object.assign(new Error(message), { code }));
}

describe('loadDuckDb', () => {
  it('names the file, the purpose and the install command when the package is missing', async () => {
    await assert.rejects(loadDuckDb('data.parquet', 'reading Parquet files', missing('ERR_MODULE_NOT_FOUND', "Cannot find package '@duckdb/node-api' imported from /x.js")), (error: unknown) => {
      assert.ok(error instanceof DataFormatError);
      assert.equal(error.message, `data.parquet: reading Parquet files needs DuckDB, an optional dependency of dpfit that is not installed: npm install ${DUCKDB_PACKAGE}`);
      return true;
    });
  });

  it("says the same when only the platform's native binding is missing", async () => {
    await assert.rejects(loadDuckDb('a.ledger', 'the privacy ledger', missing('MODULE_NOT_FOUND', "Cannot find module '@duckdb/node-bindings-linux-x64/duckdb.node'")), DataFormatError);
  });

  it('passes any other failure through unchanged', async () => {
    const other = new Error('some other failure');
    await assert.rejects(loadDuckDb('a.parquet', 'reading Parquet files', () => Promise.reject(other)), (error: unknown) => error === other);
  });

  it('loads the installed package, at the version package.json pins', async () => {
    const duckdb = await loadDuckDb('x', 'a test');
    assert.equal(typeof duckdb.DuckDBInstance.create, 'function');
    const require = createRequire(import.meta.url);
    const pkg = require('../../../package.json') as { optionalDependencies: Record<string, string> };
    assert.equal(`@duckdb/node-api@${pkg.optionalDependencies['@duckdb/node-api']}`, DUCKDB_PACKAGE);
  });
});
