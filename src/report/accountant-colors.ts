/**
 * One colour per accountant (a way of turning an event into epsilon) across every figure dpfit
 * draws: `dpfit curve`, the experiments' figures and the privacy calculator page (web/), which
 * imports this module (it imports nothing, so it bundles for the browser). Before this palette
 * the calculator and the CLI's charts coloured RDP and PLD each their own way.
 *
 * Every colour here is at least 15 CIE76 units (Delta E, in CIELAB) from every other accountant's
 * and from every method's colour in `method-colors.ts`, so that a chart holding both a method and
 * an accountant never shows two series in one colour (`test/report/accountant-colors.test.ts`
 * measures it). Keys are the `accountant` values of a `PrivacyGuarantee` where there is one.
 */

/** The accountants and bounds that have a colour. */
export type AccountantKey = 'rdp' | 'pld' | 'exactGaussian' | 'pure' | 'lowerBound' | 'conjecture' | 'kifer';

/** The colour of each accountant. */
export const ACCOUNTANT_COLORS: Readonly<Record<AccountantKey, string>> = {
  rdp: '#ee3377',
  pld: '#332288',
  exactGaussian: '#44aa99',
  pure: '#aa4499',
  lowerBound: '#005f5f',
  conjecture: '#e7ba52',
  kifer: '#7f7f7f',
};

/**
 * Series labels to accountants, first match wins. A lower bound is matched before the rest, so
 * that "Gaussian, exact (lower bound)" is the lower bound's colour, not the exact Gaussian's.
 */
export const ACCOUNTANT_COLOR_RULES: readonly { readonly pattern: RegExp; readonly accountant: AccountantKey; readonly what: string }[] = [
  { pattern: /lower bound|epsilonLower/i, accountant: 'lowerBound', what: 'a lower bound (what no accountant can go below)' },
  { pattern: /conjecture|Conj\. ?\d/i, accountant: 'conjecture', what: 'a conjectured bound (never a guarantee)' },
  { pattern: /Thm\.? 2\.8|Kifer/i, accountant: 'kifer', what: "Kifer et al.'s bound" },
  { pattern: /\bPLD\b|privacy loss distribution/i, accountant: 'pld', what: 'PLD accountant' },
  { pattern: /\bRDP\b|R[ée]nyi/i, accountant: 'rdp', what: 'RDP accountant' },
  { pattern: /exact ?Gaussian|Gaussian accountant/i, accountant: 'exactGaussian', what: 'exact Gaussian privacy profile' },
  { pattern: /pure[ -]?DP/i, accountant: 'pure', what: 'pure DP (basic composition)' },
];

/** The accountant a series label names, if any (see `ACCOUNTANT_COLOR_RULES`). */
export function accountantOfLabel(label: string): AccountantKey | undefined {
  return ACCOUNTANT_COLOR_RULES.find((rule) => rule.pattern.test(label))?.accountant;
}

/** The colour of an accountant. */
export function accountantColor(accountant: AccountantKey): string {
  return ACCOUNTANT_COLORS[accountant];
}
