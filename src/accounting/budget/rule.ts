/**
 * The budget rule of every dpfit ledger (a node's, a data owner's `--ledger FILE` across runs, a
 * `PrivacyBudget` in memory): what was released so far is the composition of every granted
 * entry's event, and a new entry is granted only if the composition with it still meets the
 * budget (epsilon, delta). Pure accounting (browser-safe): no file, no clock.
 *
 * Each entry may carry `extraDelta`, delta paid outside the RDP accounting (Propose-Test-Release's
 * delta_ptr, `000` Prop. 2): on the event that no PTR test of the node let an unsafe dataset pass
 * (probability >= 1 - sum of the delta_ptr, a union bound), the releases are the adaptive
 * composition of the events, accounted by RDP (Mironov 2017, Prop. 1), or exactly when every event
 * is a Gaussian (their composition is one Gaussian, Dong, Roth & Su 2022). So the node's guarantee
 * is (epsilon(compose(events), delta_budget - sum extraDelta), delta_budget), and the budget is met
 * iff sum extraDelta < delta_budget and that epsilon <= epsilon_budget.
 *
 * `decideBudget` is the one rule; the persistent ledger (`federated/ledger.ts`), the in-memory one
 * below and `PrivacyBudget` (`privacy-budget.ts`) all apply it, the first inside a database
 * transaction.
 */
import type { DpEvent } from '../events/types.js';
import { composeEvent } from '../events/constructors.js';
import { gaussianCompositionEpsilon } from '../gaussian/gaussian-composition.js';
import { RdpAccountant } from '../rdp/accountant.js';
import { DpfitError } from '../../errors.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

export interface BudgetEntry {
  /** Who asked (a coordinator's name or address). */
  readonly client: string;
  readonly description: string;
  readonly event: DpEvent;
  readonly extraDelta: number;
}

export interface Budget {
  readonly epsilon: number;
  readonly delta: number;
}

export const BUDGET_NAMES = optionNames<Budget>({ epsilon: true, delta: true });

export interface SpentBudget {
  /** Epsilon of everything granted, at `delta` (0 when nothing was granted). */
  readonly epsilon: number;
  /** The delta of that guarantee: the budget's delta once anything was granted, else 0. */
  readonly delta: number;
  readonly entries: number;
}

export type LedgerDecision =
  | { readonly granted: true; readonly id: number; readonly spent: SpentBudget }
  | {
      readonly granted: false;
      readonly reason: string;
      readonly spent: SpentBudget;
      /** What everything would have spent with the refused entry, when it could be accounted. */
      readonly wouldSpend?: SpentBudget;
    };

/** What a node needs of a ledger (the persistent `PrivacyLedger`, or `InMemoryLedger`). */
export interface BudgetLedger {
  readonly budget: Budget;
  reserve(entry: BudgetEntry): Promise<LedgerDecision>;
  spent(): Promise<SpentBudget>;
}

/** The spent budget of a list of entries (the rule of the file comment). */
export function spentBudget(entries: readonly Pick<BudgetEntry, 'event' | 'extraDelta'>[], budget: Budget): SpentBudget {
  rejectUnknownOptions(budget, BUDGET_NAMES, "spentBudget's budget");
  if (entries.length === 0) return { epsilon: 0, delta: 0, entries: 0 };
  const extra = extraDeltaSum(entries);
  const rdpDelta = budget.delta - extra;
  if (!(rdpDelta > 0)) return { epsilon: Infinity, delta: budget.delta, entries: entries.length };
  const all = composeEvent(entries.map((e) => e.event));
  const rdp = new RdpAccountant().compose(all).getEpsilon(rdpDelta).epsilon;
  // A composition of Gaussians only (DP-GD sessions) is itself a Gaussian: its exact epsilon.
  const exact = gaussianCompositionEpsilon(all, rdpDelta)?.epsilon ?? Infinity;
  return { epsilon: Math.min(rdp, exact), delta: budget.delta, entries: entries.length };
}

/**
 * sum of the entries' extraDelta, rounded up: a left-to-right sum of k non-negative terms errs by at
 * most (k - 1) u / (1 - (k - 1) u) relative (Higham 2002, Sec. 4.2), so a factor 1 + k EPS covers it.
 */
export function extraDeltaSum(entries: readonly Pick<BudgetEntry, 'extraDelta'>[]): number {
  let sum = 0;
  for (const e of entries) sum += e.extraDelta;
  return sum * (1 + (entries.length + 1) * Number.EPSILON);
}

/**
 * Whether `entry` may be granted after `granted`: the composition with it must meet the budget.
 * An event the accountant cannot handle is refused with the accountant's reason.
 */
export function decideBudget(
  granted: readonly Pick<BudgetEntry, 'event' | 'extraDelta'>[],
  entry: Pick<BudgetEntry, 'event' | 'extraDelta'>,
  budget: Budget,
): { granted: boolean; reason?: string; spentBefore: SpentBudget; spentAfter: SpentBudget } {
  rejectUnknownOptions(budget, BUDGET_NAMES, "decideBudget's budget");
  const spentBefore = spentBudget(granted, budget);
  if (!(typeof entry.extraDelta === 'number' && entry.extraDelta >= 0 && entry.extraDelta < 1)) {
    // A negative (or NaN) extra delta would lower the sum and grant more than the budget allows.
    return { granted: false, reason: `its extraDelta ${entry.extraDelta} is not in [0, 1)`, spentBefore, spentAfter: spentBefore };
  }
  let spentAfter: SpentBudget;
  try {
    spentAfter = spentBudget([...granted, entry], budget);
  } catch (error) {
    if (!(error instanceof DpfitError)) throw error;
    return { granted: false, reason: `the request cannot be accounted: ${error.message}`, spentBefore, spentAfter: spentBefore };
  }
  const extra = extraDeltaSum([...granted, entry]);
  if (!(extra < budget.delta)) {
    return { granted: false, reason: `its delta paid outside RDP (${entry.extraDelta}) brings the total to ${extra}, not below the budget's delta ${budget.delta}`, spentBefore, spentAfter };
  }
  if (!(spentAfter.epsilon <= budget.epsilon)) {
    return {
      granted: false,
      reason: `it would bring the epsilon of everything granted to ${spentAfter.epsilon} at delta ${budget.delta}, over its budget ${budget.epsilon} (spent so far: ${spentBefore.epsilon} over ${spentBefore.entries} release(s))`,
      spentBefore,
      spentAfter,
    };
  }
  return { granted: true, spentBefore, spentAfter };
}

/** A ledger in memory (experiments, tests): the same rule, no persistence. Calls are serialised. */
export class InMemoryLedger implements BudgetLedger {
  private readonly granted: BudgetEntry[] = [];
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly budget: Budget) {
    rejectUnknownOptions(budget, BUDGET_NAMES, 'InMemoryLedger');
  }

  reserve(entry: BudgetEntry): Promise<LedgerDecision> {
    const run = this.queue.then(() => {
      const decision = decideBudget(this.granted, entry, this.budget);
      if (!decision.granted) return { granted: false as const, reason: decision.reason as string, spent: decision.spentBefore };
      this.granted.push(entry);
      return { granted: true as const, id: this.granted.length, spent: decision.spentAfter };
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async spent(): Promise<SpentBudget> {
    return spentBudget(this.granted, this.budget);
  }
}
