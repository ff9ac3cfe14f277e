/**
 * `dpfit ledger show --ledger FILE [--json]`: what a node's persistent privacy ledger
 * (`federated/ledger.ts`) has granted — its stored budget, what everything granted spent
 * together, and each release: when, to whom, what, and its own epsilon. Opened read-only, with the
 * budget stored in the file (no budget flags).
 */
import type { Command } from 'commander';
import { eventKey } from '../../accounting/events/tree.js';
import { eventToJson } from '../../accounting/events/json.js';
import { spentBudget } from '../../federated/budget.js';
import { PrivacyLedger, type LedgerEntry } from '../../federated/ledger.js';
import { formatNumber, printResult, type CliIo } from '../io.js';

/** Text from a remote client on one line: control characters (newlines, terminal escapes) escaped. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function registerLedger(program: Command, io: CliIo): void {
  const ledger = program.command('ledger').description("a node's persistent privacy ledger (dpfit node serve --ledger)");
  ledger
    .command('show')
    .description('print what a ledger has granted: its budget, what was spent, every release')
    .requiredOption('--ledger <FILE>', 'the ledger file (written by dpfit node serve)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
A node records every release it grants in its ledger, committed to disk before anything is
released, and grants a request only if the composition of everything granted with it stays within
the budget stored in the ledger when it was created (it can never be raised).

Spent: the epsilon of the composition of every granted release (RDP; exact when all are
Gaussians) at the budget's delta minus the deltas paid outside RDP (Propose-Test-Release), which
are added back by a union bound: the node's guarantee is (spent epsilon, budget delta), or (0, 0)
when nothing was granted. Each release's own epsilon is given the same way for that release
alone; they do not add up (composition is tighter than a sum).

The ledger is opened read-only. A running node holds its ledger locked: stop it first (exit 3
"in use by another process"). A missing or damaged file is exit 3.
With --json: {ledger, budget, spent: {epsilon, delta, entries}, entries: [{id, time, client,
description, epsilon, extraDelta, event}]}.

Example:
  $ dpfit ledger show --ledger a.ledger
  a.ledger: budget (epsilon = 1, delta = 0.000001); spent epsilon = 0.54735318 at delta = 0.000001 over 2 release(s)
    #1 2026-11-24T02:40:10.823Z coordinator 10.0.0.7: epsilon 0.473079 — dpgd session (50 steps)
    #2 2026-11-24T02:40:10.832Z coordinator 10.0.0.7: epsilon 0.05 (incl. delta 1e-7 outside RDP) — rgm session (20 steps)`,
    )
    .action(async (flags: { ledger: string; json?: boolean }) => {
      const opened = await PrivacyLedger.openReadOnly(flags.ledger);
      let spent;
      let entries: LedgerEntry[];
      try {
        spent = await opened.spent();
        entries = await opened.entries();
      } finally {
        await opened.close();
      }
      const budget = opened.budget;
      // Each release alone, by the ledger's rule; identical releases are accounted once.
      const alone = new Map<string, number>();
      const epsilonAlone = (e: LedgerEntry): number => {
        const key = `${eventKey(e.event)}|${e.extraDelta}`;
        let epsilon = alone.get(key);
        if (epsilon === undefined) {
          epsilon = spentBudget([e], budget).epsilon;
          alone.set(key, epsilon);
        }
        return epsilon;
      };
      const rows = entries.map((e) => ({
        id: e.id,
        time: e.time,
        client: e.client,
        description: e.description,
        epsilon: epsilonAlone(e),
        extraDelta: e.extraDelta,
        event: eventToJson(e.event),
      }));
      printResult(io, Boolean(flags.json), { ledger: flags.ledger, budget: { ...budget }, spent: { ...spent }, entries: rows }, () =>
        [
          `${oneLine(flags.ledger)}: budget (epsilon = ${formatNumber(budget.epsilon)}, delta = ${formatNumber(budget.delta)}); ` +
            (spent.entries === 0
              ? 'nothing granted yet'
              : `spent epsilon = ${formatNumber(spent.epsilon, 8)} at delta = ${formatNumber(spent.delta)} over ${spent.entries} release(s)`),
          ...rows.map(
            (r) =>
              `  #${r.id} ${r.time} ${oneLine(r.client)}: epsilon ${formatNumber(r.epsilon, 6)}${r.extraDelta > 0 ? ` (incl. delta ${formatNumber(r.extraDelta)} outside RDP)` : ''} — ${oneLine(r.description)}`,
          ),
        ].join('\n'),
      );
    });
}
