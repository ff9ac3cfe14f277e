/**
 * What a refused spend says, in numbers a person reads: what was spent, what this release needs on
 * its own, what everything would spend with it, and the budget. Every number printed stands for
 * a privacy loss, so it is rounded UP (the reader never sees less than was or would be spent);
 * the budget is printed as stored (`String`, exact).
 */
import type { Budget, SpentBudget } from './rule.js';

/** x rounded to `digits` significant decimal digits towards +Infinity (`up`) or -Infinity, as text. */
function formatDirected(x: number, digits: number, up: boolean): string {
  if (!Number.isFinite(x) || x === 0 || Math.abs(x) < 1e-290) return String(x);
  const exponent = Math.floor(Math.log10(Math.abs(x)));
  const scale = 10 ** (digits - 1 - exponent);
  let units = up ? Math.ceil(x * scale) : Math.floor(x * scale);
  // x * scale and units / scale are rounded binary operations: step on until the text is on the safe side of x.
  let text = Number((units / scale).toPrecision(digits)).toString();
  while (up ? Number(text) < x : Number(text) > x) {
    units += up ? 1 : -1;
    text = Number((units / scale).toPrecision(digits)).toString();
  }
  return text;
}

/**
 * The smallest number with at most `digits` significant decimal digits that is >= x, as text
 * (Infinity and 0 as they are): what a spent or needed epsilon prints as. Written beside the
 * ledger's rule so that its messages stay pessimistic.
 */
export function formatUp(x: number, digits = 4): string {
  return formatDirected(x, digits, true);
}

/** The largest number with at most `digits` significant decimal digits that is <= x, as text: what a remaining budget prints as. */
export function formatDown(x: number, digits = 4): string {
  return formatDirected(x, digits, false);
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
