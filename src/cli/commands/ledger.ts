/**
 * `dpfit ledger show [FILE] [--json]`: what a persistent privacy ledger (`federated/ledger.ts`:
 * a node's, or a data owner's `--ledger FILE` across runs) has granted — its stored budget, what
 * everything granted spent together, what is left, and each release: when, by whom, what, and its
 * own epsilon. Read in one read-only snapshot, with the budget stored in the file (no budget
 * flags), while other processes (a running node, a training run) keep using the ledger. The
 * object is `PrivacyLedger.summary()`, the same a node's `GET /budget` answers.
 */
import type { Command } from 'commander';
import { InvalidParameterError } from '../../errors.js';
import { PrivacyLedger } from '../../federated/ledger.js';
import { formatNumber, printResult, type CliIo } from '../io.js';
import { formatDown, formatUp } from '../../accounting/budget/describe.js';
import { LEDGER_ENV } from '../ledger-flags.js';

/** Text from a remote client on one line: control characters (newlines, terminal escapes) escaped. */
function oneLine(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function registerLedger(program: Command, io: CliIo): void {
  const ledger = program.command('ledger').description('a persistent privacy budget across runs (--ledger FILE of train, audit, federate, node serve)');
  ledger
    .command('show')
    .description('print what a ledger has granted: its budget, what was spent, what is left, every release')
    .argument('[FILE]', `the ledger file (default: --ledger, else $${'{'}${LEDGER_ENV}${'}'})`)
    .option('--ledger <FILE>', 'the ledger file (the same as FILE)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Every release a ledger grants is recorded with its DpEvent, committed to disk before anything is
released (a node's session, a train/audit run of --ledger FILE), and granted only if the
composition of everything granted with it stays within the budget stored in the ledger when it
was created (it can never be raised).

Spent: the epsilon of the composition of every granted release (RDP; exact when all are
Gaussians) at the budget's delta minus the deltas paid outside RDP (Propose-Test-Release), which
are added back by a union bound: the guarantee of everything released is (spent epsilon, budget
delta), or (0, 0) when nothing was granted. Printed rounded up. Remaining: the budget's epsilon
minus the spent epsilon, rounded down; composition is not a sum, so whether a release fits is
decided by the rule, not by comparing its epsilon with this. Each release's own epsilon is given
the same way for that release alone; they do not add up.

Read-only, in one snapshot, while other processes keep using the ledger (a running node, a
training run): an open waits while another process writes (a fraction of a second), up to 120 s.
A missing or damaged file is exit 3. A running node answers the same object on GET /budget.
With --json: {ledger, format, budget, spent: {epsilon, delta, entries}, remaining: {epsilon,
delta}, entries: [{id, time, client, description, epsilon, extraDelta, event}]}.

Example:
  $ dpfit ledger show owner.ledger
  owner.ledger: budget (epsilon = 1, delta = 0.000001); spent epsilon = 0.54735319 at delta = 0.000001 over 2 release(s); remaining epsilon = 0.4526468
    #1 2026-11-24T02:40:10.823Z coordinator 10.0.0.7: epsilon 0.473080 — dpgd session (50 steps)
    #2 2026-11-24T02:40:10.832Z coordinator 10.0.0.7: epsilon 0.05 (incl. delta 1e-7 outside RDP) — rgm session (20 steps)`,
    )
    .action(async (file: string | undefined, flags: { ledger?: string; json?: boolean }) => {
      if (file !== undefined && flags.ledger !== undefined && file !== flags.ledger) throw new InvalidParameterError('--ledger', flags.ledger, `the same file as FILE (${file}), or left out`);
      const path = file ?? flags.ledger ?? process.env[LEDGER_ENV];
      if (path === undefined || path === '') throw new InvalidParameterError('FILE', path, `a ledger file (dpfit ledger show FILE, or --ledger FILE, or $${LEDGER_ENV})`);
      const opened = await PrivacyLedger.openReadOnly(path);
      let summary;
      try {
        summary = await opened.summary();
      } finally {
        await opened.close();
      }
      const { budget, spent, remaining, entries } = summary;
      printResult(io, Boolean(flags.json), { ledger: path, ...summary }, () =>
        [
          `${oneLine(path)}: budget (epsilon = ${formatNumber(budget.epsilon)}, delta = ${formatNumber(budget.delta)}); ` +
            (spent.entries === 0
              ? 'nothing granted yet'
              : `spent epsilon = ${formatUp(spent.epsilon, 8)} at delta = ${formatNumber(spent.delta)} over ${spent.entries} release(s); remaining epsilon = ${formatDown(remaining.epsilon, 8)}`),
          ...entries.map(
            (r) =>
              `  #${r.id} ${r.time} ${oneLine(r.client)}: epsilon ${formatUp(r.epsilon, 6)}${r.extraDelta > 0 ? ` (incl. delta ${formatNumber(r.extraDelta)} outside RDP)` : ''} — ${oneLine(r.description)}`,
          ),
        ].join('\n'),
      );
    });
}
