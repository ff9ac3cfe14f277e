/**
 * One colour per method across every figure dpfit draws (docs/figures, `dpfit plot`, the
 * experiments): a series is coloured by the first rule its label matches, so that "RGM" is the
 * same blue in `000`'s figures as in the docs', and clipping thresholds are shades of one hue
 * from small (light) to large (dark). A label that names an accountant or a bound ("RDP (upper
 * bound)", "lower bound", "Conj. 1") takes the accountant's colour (`accountant-colors.ts`, shared
 * with the calculator page) before any method rule is tried. A label nothing matches gets a
 * neutral grey.
 */
import { accountantColor, accountantOfLabel } from './accountant-colors.js';

/** The rules, in order: the first whose pattern matches a series label gives its colour. */
export const METHOD_COLOR_RULES: readonly { readonly pattern: RegExp; readonly color: string; readonly what: string }[] = [
  { pattern: /non-?private|baseline|exact|F\*/i, color: '#222222', what: 'non-private reference' },
  { pattern: /paper'?s? (mode|settings)|not private/i, color: '#9467bd', what: "a paper's own (not private) settings" },
  { pattern: /\bRGM\b|relative gaussian/i, color: '#1f77b4', what: 'RGM' },
  { pattern: /c\s*\/\s*10|c\/10/i, color: '#fdae6b', what: 'clipping at c/10' },
  { pattern: /10\s*c\b|10c/i, color: '#a63603', what: 'clipping at 10c' },
  { pattern: /clip/i, color: '#e6550d', what: 'clipping at c' },
  { pattern: /\bAMP\b|approximate minima/i, color: '#2ca02c', what: 'Approximate Minima Perturbation' },
  { pattern: /objective perturbation|objpert/i, color: '#98df8a', what: 'objective perturbation' },
  { pattern: /output/i, color: '#8c564b', what: 'output perturbation' },
  { pattern: /shuffl|tau = 1$/i, color: '#17becf', what: 'SGD with shuffling (a whole permutation per epoch)' },
  { pattern: /tau = 0?\.5$/i, color: '#9edae5', what: 'SGD on half of each permutation' },
  { pattern: /tau = 0?\.1$/i, color: '#c49c94', what: 'SGD on a tenth of each permutation' },
  { pattern: /with replacement|poisson|DP-?SGD/i, color: '#d62728', what: 'sampled SGD (DP-SGD)' },
  { pattern: /DP-?GD/i, color: '#ff7f0e', what: 'DP-GD' },
  { pattern: /last iterate|amplification by iteration/i, color: '#bcbd22', what: 'the last-iterate bound (amplification by iteration)' },
  { pattern: /no feedback/i, color: '#6baed6', what: 'last iterate without noise feedback' },
  { pattern: /noise feedback/i, color: '#08519c', what: 'last iterate with noise feedback' },
  { pattern: /composition/i, color: '#e377c2', what: 'a composition bound' },
];

const NEUTRAL = '#bbbbbb';

/** The colour of a series label: its accountant's if it names one (`accountant-colors.ts`), else by `METHOD_COLOR_RULES`. */
export function methodColor(label: string): string {
  const accountant = accountantOfLabel(label);
  if (accountant !== undefined) return accountantColor(accountant);
  return METHOD_COLOR_RULES.find((rule) => rule.pattern.test(label))?.color ?? NEUTRAL;
}

/** A vega-lite colour scale for these labels, in this order. */
export function methodColorScale(labels: readonly string[]): { domain: string[]; range: string[] } {
  return { domain: [...labels], range: labels.map(methodColor) };
}
