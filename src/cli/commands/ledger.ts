/**
 * `dpfit ledger show --ledger FILE`: what a node's persistent privacy ledger (`federated/ledger.ts`)
 * has granted — its budget, the epsilon spent by everything together, and each release: when, to
 * whom, what, and its own epsilon at the budget's delta. Read-only.
 */
import type { Command } from 'commander';
import { rdpEpsilon } from '../../accounting/rdp/accountant.js';
import { eventToJson } from '../../accounting/events.js';
import { PrivacyLedger } from '../../federated/ledger.js';
import { formatNumber, printResult, type CliIo } from '../io.js';

export function registerLedger(program: Command, io: CliIo): void {
  const ledger = program.command('ledger').description("a node's persistent privacy ledger (dpfit node serve --ledger)");
  ledger
    .command('show')
    .description('print what a ledger has granted: the budget, the epsilon spent, every release')
    .requiredOption('--ledger <FILE>', 'the ledger file')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
The spent epsilon composes every granted release (RDP, exactly when all are Gaussians) at the
budget's delta minus the deltas paid outside RDP (Propose-Test-Release), as the node decides.
Each release's own epsilon is given at the same delta, for reading (they do not add up: composition
is tighter). The ledger is opened read-only; a running node keeps it locked, so stop it first.

Example:
  $ dpfit ledger show --ledger a.ledger`,
    )
    .action(async (flags: { ledger: string; json?: boolean }) => {
      const opened = await PrivacyLedger.openReadOnly(flags.ledger);
      try {
        const spent = await opened.spent();
        const entries = await opened.entries();
        const extra = entries.reduce((s, e) => s + e.extraDelta, 0);
        const at = opened.budget.delta - extra;
        const rows = entries.map((e) => ({
          id: e.id,
          time: e.time,
          client: e.client,
          description: e.description,
          extraDelta: e.extraDelta,
          epsilon: at > 0 ? rdpEpsilon(e.event, at).epsilon : Infinity,
          event: eventToJson(e.event),
        }));
        printResult(io, Boolean(flags.json), { ledger: flags.ledger, budget: opened.budget, spent, entries: rows }, () =>
          [
            `${flags.ledger}: budget (epsilon = ${formatNumber(opened.budget.epsilon)}, delta = ${formatNumber(opened.budget.delta)}); spent epsilon = ${formatNumber(spent.epsilon, 8)} at delta = ${formatNumber(spent.delta)} over ${spent.entries} release(s)`,
            ...rows.map((r) => `  #${r.id} ${r.time} ${r.client}: epsilon ${formatNumber(r.epsilon, 6)}${r.extraDelta > 0 ? ` (+ delta ${formatNumber(r.extraDelta)} outside RDP)` : ''} — ${r.description}`),
          ].join('\n'),
        );
      } finally {
        await opened.close();
      }
    });
}
