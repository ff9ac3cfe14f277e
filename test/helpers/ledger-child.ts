/**
 * A process that reserves releases in a ledger until the budget refuses, printing "granted ID" on
 * stdout after each grant returned (the kill -9 test of test/federated-ledger.test.ts kills it at
 * random moments). argv: LEDGER NOISE_MULTIPLIER.
 */
import { gaussianEvent } from '../../src/accounting/events.js';
import { PrivacyLedger } from '../../src/federated/ledger.js';

const [path, z] = process.argv.slice(2);
const ledger = await PrivacyLedger.open(path, { epsilon: 1, delta: 1e-6 });
for (;;) {
  const decision = await ledger.reserve({ client: `pid ${process.pid}`, description: 'test release', event: gaussianEvent(Number(z)), extraDelta: 0 });
  if (!decision.granted) break;
  process.stdout.write(`granted ${decision.id}\n`);
}
await ledger.close();
process.stdout.write('done\n');
