/**
 * `--ledger FILE` (or `$DPFIT_LEDGER`) with `--budget-epsilon E --budget-delta D`: a privacy budget
 * across runs, on the command that releases something computed from a data owner's private data,
 * `train` (every method, one-vs-rest, `--tune`, out of core, in a database), and `audit --one-run`
 * (one training on the user's data with canaries: its run reserved the same way). The many-run
 * `audit` trains on data it generates and `federate`'s coordinator holds no data (each node
 * accounts its own in its own ledger, `node serve --ledger`): neither takes `--ledger`. The ledger is the nodes'
 * (`federated/ledger.ts`): the same file format, the same rule, usable while other processes use it.
 *
 * The budget flags. A new ledger needs both; they are stored in it and can never be raised. On an
 * existing ledger they may be left out (the stored budget applies); given, they are a cap for
 * this run only, as a node's are (lower: accepted when it covers what was already spent; higher:
 * refused, exit 2, naming the flag and the stored budget) — flags that differ from the stored
 * budget never change it, and never let a run spend more than it allows.
 *
 * A run reserves its whole event BEFORE any private data are read (its event is computed from
 * public values: the flags, the schema, the declared number of records), and a run that would
 * exceed the budget is refused with exit 4 and one line (what was spent, what this run needs,
 * the budget; numbers rounded up). A reservation stays when the run fails afterwards
 * (docs/threat-model.md, "Budget across runs").
 */
import { Option, type Command } from 'commander';
import { existsSync } from 'node:fs';
import { userInfo } from 'node:os';
import type { DpEvent } from '../accounting/events/types.js';
import { describeRefusal } from '../accounting/budget/describe.js';
import { type EntryRelation, spentBudget } from '../accounting/budget/rule.js';
import { BudgetExceededError, DpfitError, InvalidParameterError } from '../errors.js';
import { PrivacyLedger } from '../federated/ledger.js';
import { parseNumberFlag } from './io.js';

/** The environment variable that names the ledger when `--ledger` is not given. */
export const LEDGER_ENV = 'DPFIT_LEDGER';

export interface LedgerFlags {
  ledger?: string;
  budgetEpsilon?: number;
  budgetDelta?: number;
}

const parseBudgetEpsilon = (raw: string) => (raw.trim() === 'Infinity' ? Infinity : parseNumberFlag('--budget-epsilon')(raw));

/** `--ledger`, `--budget-epsilon`, `--budget-delta` for a command that releases something (fresh Option objects per command). */
export function ledgerOptions(): Option[] {
  return [
    new Option(
      '--ledger <FILE>',
      `a privacy budget across runs: this run's release is reserved in FILE before any data are read, and refused (exit 4) when everything in FILE with it would exceed the budget (default: $${LEDGER_ENV}; dpfit ledger show --help)`,
    ),
    new Option('--budget-epsilon <E>', 'with --ledger: the total epsilon, stored when FILE is created (on an existing FILE: left out, or at most the stored one, a cap for this run)').argParser(parseBudgetEpsilon),
    new Option('--budget-delta <D>', 'with --ledger: the total delta, stored when FILE is created (on an existing FILE: left out, or at most the stored one)').argParser(parseNumberFlag('--budget-delta')),
  ];
}

/** Adds `ledgerOptions()` to `command`. */
export function withLedgerOptions(command: Command): Command {
  for (const option of ledgerOptions()) command.addOption(option);
  return command;
}

/** The ledger file of a run: `--ledger`, else `$DPFIT_LEDGER`, else none (then no budget flag may be given). */
export function ledgerPath(flags: LedgerFlags): string | undefined {
  const fromEnv = process.env[LEDGER_ENV];
  const path = flags.ledger ?? (fromEnv === undefined || fromEnv === '' ? undefined : fromEnv);
  if (path === undefined) {
    if (flags.budgetEpsilon !== undefined) throw new InvalidParameterError('--budget-epsilon', flags.budgetEpsilon, `given with --ledger FILE (or $${LEDGER_ENV}): the budget of a ledger`);
    if (flags.budgetDelta !== undefined) throw new InvalidParameterError('--budget-delta', flags.budgetDelta, `given with --ledger FILE (or $${LEDGER_ENV}): the budget of a ledger`);
    return undefined;
  }
  if (path === '') throw new InvalidParameterError('--ledger', path, 'a file path');
  return path;
}

/**
 * Opens the run's ledger (module comment: the budget flags), or undefined without one. Reads no
 * private data; a new ledger is created with the flags' budget.
 */
export async function openRunLedger(flags: LedgerFlags): Promise<PrivacyLedger | undefined> {
  const path = ledgerPath(flags);
  if (path === undefined) return undefined;
  if (!existsSync(path)) {
    for (const [flag, value] of [['--budget-epsilon', flags.budgetEpsilon], ['--budget-delta', flags.budgetDelta]] as const) {
      if (value === undefined) throw new InvalidParameterError(flag, undefined, `given: ${path} does not exist yet, and a new ledger stores its budget (--budget-epsilon E --budget-delta D)`);
    }
    return PrivacyLedger.open(path, { epsilon: flags.budgetEpsilon as number, delta: flags.budgetDelta as number });
  }
  // The stored budget fills a flag left out (a read-only look: the file is not changed).
  const reader = await PrivacyLedger.openReadOnly(path);
  await reader.close();
  const stored = reader.budget;
  return PrivacyLedger.open(path, { epsilon: flags.budgetEpsilon ?? stored.epsilon, delta: flags.budgetDelta ?? stored.delta });
}

/** Who reserved: the command, the user and the process (the ledger's `client`). */
function clientName(command: string): string {
  let user = 'unknown user';
  try {
    user = userInfo().username;
  } catch {
    // no user name (a container without a passwd entry)
  }
  return `dpfit ${command} (${user}, pid ${process.pid})`;
}

/**
 * Reserves `planned` (its event, the delta it pays outside RDP, the neighbouring relation its
 * guarantee holds under: a ledger holds one) in `ledger` for this run,
 * before any private data are read, or throws `BudgetExceededError` (exit 4): one line with what
 * was spent, what the run needs, the budget, and `nonPrivate` (why the run was charged as a
 * non-private release) when given.
 */
export async function reserveRun(ledger: PrivacyLedger, command: string, description: string, planned: { readonly event: DpEvent; readonly extraDelta: number; readonly relation?: EntryRelation }, nonPrivate?: string): Promise<number> {
  const { event, extraDelta, relation } = planned;
  const decision = await ledger.reserve({ client: clientName(command), description, event, extraDelta, ...(relation === undefined ? {} : { relation }) });
  if (decision.granted) return decision.id;
  let alone = Infinity;
  let after = Infinity;
  try {
    alone = spentBudget([{ event, extraDelta }], ledger.budget).epsilon;
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
  }
  if (decision.wouldSpend !== undefined) after = decision.wouldSpend.epsilon;
  const charged = nonPrivate === undefined ? '' : ` (this run is charged as a non-private release, which only --budget-epsilon Infinity holds: ${nonPrivate})`;
  throw new BudgetExceededError(`${ledger.path}: this run is refused, nothing was read or released: ${describeRefusal({ spentBefore: decision.spent, alone, after, budget: ledger.budget, reason: decision.reason, relationConflict: decision.relationConflict === true })}${charged}`);
}
