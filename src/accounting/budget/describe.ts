/**
 * What a refused spend says, in numbers a person reads: what was spent, what this release needs on
 * its own, what everything would spend with it, and the budget. Every number printed stands for
 * a privacy loss, so it is rounded UP (the reader never sees less than was or would be spent);
 * the budget is printed as stored (`String`, exact).
 */
import { ceilSignificant, floorSignificant } from '../../math/decimal-rounding.js';
import type { Budget, SpentBudget } from './rule.js';

/** x rounded UP to `digits` significant decimal digits, as text: what a spent or needed epsilon prints as. */
export function formatUp(x: number, digits = 4): string {
  return String(ceilSignificant(x, digits));
}

/** x rounded DOWN to `digits` significant decimal digits, as text: what a remaining budget prints as. */
export function formatDown(x: number, digits = 4): string {
  return String(floorSignificant(x, digits));
}

/** The one line of a refusal (no trailing period): spent, needed, the total with it, the budget. */
export function describeRefusal(what: { readonly spentBefore: SpentBudget; readonly alone: number; readonly after: number; readonly budget: Budget; readonly reason?: string }): string {
  const { spentBefore, alone, after, budget } = what;
  const spent = spentBefore.entries === 0 ? 'nothing spent yet' : `spent epsilon ${formatUp(spentBefore.epsilon)} over ${spentBefore.entries} release(s)`;
  const total = Number.isFinite(after) ? `, everything with it ${formatUp(after)}` : '';
  return (
    `over the privacy budget (epsilon ${String(budget.epsilon)}, delta ${String(budget.delta)}): ${spent}; this release needs epsilon ${formatUp(alone)} on its own${total} ` +
    `(at delta ${String(budget.delta)}; composed by RDP, exactly for Gaussians, so the numbers do not add up)` +
    (what.reason !== undefined && !/over its budget/.test(what.reason) ? `: ${what.reason}` : '')
  );
}
