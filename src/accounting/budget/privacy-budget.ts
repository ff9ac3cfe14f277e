/**
 * `PrivacyBudget`: a privacy budget (epsilon, delta) and what was spent from it, in memory, in the
 * style of diffprivlib's `BudgetAccountant` and Opacus's accountants: `check(event)` says whether
 * a release fits, `spend(event)` records it or throws `BudgetExceededError`, `spent()` and
 * `remaining()` say where the budget stands. Releases are DpEvents, composed by the one rule of
 * every dpfit ledger (`rule.ts`: RDP, or the exact Gaussian composition when every event is a
 * Gaussian; deltas paid outside RDP by a union bound), so a budget kept here and one kept in a
 * node's or a data owner's ledger file (`dpfit/node`'s `PrivacyLedger`) decide alike.
 *
 * It composes: `train(data, {..., budget})` spends its run's event before training; the same
 * budget can be handed to several runs and to `spend` by hand. Browser-safe; nothing is persisted (use a `PrivacyLedger` for a
 * budget that must survive the process, shared by several processes).
 */
import type { DpEvent } from '../events/types.js';
import { BudgetExceededError, InvalidParameterError } from '../../errors.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';
import { describeRefusal } from './describe.js';
import { type Budget, type BudgetEntry, decideBudget, extraDeltaSum, spentBudget, type SpentBudget } from './rule.js';

export interface PrivacyBudgetOptions {
  /** Total epsilon for everything spent (> 0; Infinity allows non-private releases). */
  readonly epsilon: number;
  /** Total delta, in [0, 1). */
  readonly delta: number;
}

export interface SpendOptions {
  /** Delta paid outside the RDP accounting (Propose-Test-Release's delta_ptr), added by a union bound. Default 0. */
  readonly extraDelta?: number;
  /** What was released (kept with the entry). */
  readonly description?: string;
}

/** Whether a release fits, and where the budget would stand with it. */
export interface BudgetCheck {
  readonly fits: boolean;
  /** Why it does not fit (absent when it fits). */
  readonly reason?: string;
  /** Epsilon of everything spent so far, at the budget's delta. */
  readonly spent: SpentBudget;
  /** Epsilon of this release on its own, at the budget's delta (by the same rule). */
  readonly epsilonAlone: number;
  /** Epsilon of everything with it (Infinity when it cannot be accounted). */
  readonly epsilonAfter: number;
}

export const PRIVACY_BUDGET_OPTIONS = optionNames<PrivacyBudgetOptions>({ epsilon: true, delta: true });
const SPEND_OPTIONS = optionNames<SpendOptions>({ extraDelta: true, description: true });

/** Checks a budget: epsilon > 0 (Infinity: non-private releases allowed), delta in [0, 1). */
export function requireBudget(budget: Budget, where: string, names = { epsilon: 'epsilon', delta: 'delta' }): Budget {
  if (budget === null || typeof budget !== 'object') throw new InvalidParameterError('budget', budget, 'an object {epsilon, delta}');
  rejectUnknownOptions(budget, PRIVACY_BUDGET_OPTIONS, where);
  const { epsilon, delta } = budget;
  if (!(typeof epsilon === 'number' && epsilon > 0)) throw new InvalidParameterError(names.epsilon, epsilon, 'a number > 0 (Infinity: non-private releases allowed)');
  // delta = 0 is a valid budget but grants nothing: the rule needs sum(extraDelta) < delta and RDP gives no finite epsilon at delta 0.
  if (!(typeof delta === 'number' && delta >= 0 && delta < 1)) throw new InvalidParameterError(names.delta, delta, 'a number in [0, 1)');
  return Object.freeze({ epsilon, delta });
}

/**
 * What is left of `budget` after `spent`: epsilon = budget.epsilon - spent epsilon, rounded down
 * (one ulp), never below 0; delta = budget.delta - the deltas paid outside RDP. Composition is not
 * a sum: a release whose own epsilon is below the remaining epsilon may still not fit (and one
 * above may fit); `check` decides.
 */
export function remainingBudget(budget: Budget, spent: SpentBudget, extraDelta: number): Budget {
  rejectUnknownOptions(budget, PRIVACY_BUDGET_OPTIONS, "remainingBudget's budget");
  const epsilon = budget.epsilon === Infinity ? Infinity : Math.max(0, (budget.epsilon - spent.epsilon) * (1 - Number.EPSILON));
  const delta = Math.max(0, (budget.delta - extraDelta) * (1 - Number.EPSILON));
  return Object.freeze({ epsilon, delta });
}

export class PrivacyBudget {
  readonly budget: Budget;
  private readonly granted: BudgetEntry[] = [];

  constructor(options: PrivacyBudgetOptions) {
    this.budget = requireBudget(options, 'PrivacyBudget');
  }

  private entryOf(event: DpEvent, options: SpendOptions | undefined, where: string): BudgetEntry {
    if (options !== undefined) rejectUnknownOptions(options, SPEND_OPTIONS, where);
    const extraDelta = options?.extraDelta ?? 0;
    if (!(typeof extraDelta === 'number' && extraDelta >= 0 && extraDelta < 1)) throw new InvalidParameterError('extraDelta', extraDelta, 'a number in [0, 1)');
    const description = options?.description ?? '';
    if (typeof description !== 'string') throw new InvalidParameterError('description', description, 'a string');
    return { client: '', description, event, extraDelta };
  }

  /** Whether `event` fits what is left of the budget (nothing is recorded). */
  check(event: DpEvent, options?: SpendOptions): BudgetCheck {
    const entry = this.entryOf(event, options, 'PrivacyBudget.check');
    const decision = decideBudget(this.granted, entry, this.budget);
    let epsilonAlone: number;
    try {
      epsilonAlone = spentBudget([entry], this.budget).epsilon;
    } catch {
      epsilonAlone = Infinity;
    }
    const epsilonAfter = decision.spentAfter === decision.spentBefore && !decision.granted ? Infinity : decision.spentAfter.epsilon;
    return {
      fits: decision.granted,
      ...(decision.granted ? {} : { reason: decision.reason ?? 'over the budget' }),
      spent: decision.spentBefore,
      epsilonAlone,
      epsilonAfter,
    };
  }

  /**
   * Records `event` when it fits and returns what is spent with it; otherwise throws
   * `BudgetExceededError` (what was spent, what it needs, the budget; numbers rounded up) and
   * records nothing.
   */
  spend(event: DpEvent, options?: SpendOptions): SpentBudget {
    const entry = this.entryOf(event, options, 'PrivacyBudget.spend');
    const check = this.check(event, options);
    if (!check.fits) {
      throw new BudgetExceededError(
        describeRefusal({ spentBefore: check.spent, alone: check.epsilonAlone, after: check.epsilonAfter, budget: this.budget, ...(check.reason === undefined ? {} : { reason: check.reason }) }),
      );
    }
    this.granted.push(entry);
    return spentBudget(this.granted, this.budget);
  }

  /** Epsilon of everything spent at the budget's delta (`rule.ts`), and how many releases. */
  spent(): SpentBudget {
    return spentBudget(this.granted, this.budget);
  }

  /** What is left (`remainingBudget`: epsilon headroom rounded down; `check` decides what fits). */
  remaining(): Budget {
    return remainingBudget(this.budget, this.spent(), extraDeltaSum(this.granted));
  }

  /** Every release spent, in order. */
  entries(): readonly { readonly event: DpEvent; readonly extraDelta: number; readonly description: string }[] {
    return this.granted.map((e) => ({ event: e.event, extraDelta: e.extraDelta, description: e.description }));
  }
}
