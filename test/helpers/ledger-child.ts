/**
 * A separate process using a privacy ledger, for test/federated/ledger.test.ts.
 * argv: LEDGER NOISE_MULTIPLIER BUDGET_EPSILON BUDGET_DELTA [hold]
 *   - default: reserves gaussian(NOISE_MULTIPLIER) releases until the budget refuses one, printing
 *     "granted ID" on stdout after each grant resolved (the kill -9 test kills it at random
 *     instants), then "done";
 *   - hold: opens the ledger FILE with DuckDB itself and keeps it open (as a dpfit before per-operation
 *     opens did), prints "open", and closes it when its stdin is closed.
 * An error prints one line on stderr and exits 3.
 */
import { gaussianEvent } from '../../src/accounting/events/constructors.js';
import { PrivacyLedger } from '../../src/federated/ledger.js';

const [path, z, epsilon, delta, mode] = process.argv.slice(2);
try {
  const ledger = await PrivacyLedger.open(path, { epsilon: Number(epsilon), delta: Number(delta) });
  if (mode === 'hold') {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const instance = await DuckDBInstance.create(path);
    process.stdout.write('open\n');
    process.stdin.resume();
    await new Promise((resolve) => process.stdin.on('end', resolve));
    instance.closeSync();
  } else {
    for (;;) {
      const decision = await ledger.reserve({ client: `pid ${process.pid}`, description: 'test release', event: gaussianEvent(Number(z)), extraDelta: 0 });
      if (!decision.granted) break;
      process.stdout.write(`granted ${decision.id}\n`);
    }
  }
  await ledger.close();
  process.stdout.write('done\n');
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 3;
}
