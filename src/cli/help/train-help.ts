/**
 * `dpfit train --help` in three views, so that the first screen teaches the basics:
 *   - `train --help`: the flags every run takes, the methods in one line each, examples, references;
 *   - `train --method M --help`: the same plus M's own flags (the registry's `cli.flags`) and, for
 *     the learners whose runs compose, honest tuning's;
 *   - `train --help-all`: every flag, data sources (databases, out of core) and the rules in full.
 * Paper tags appear only in the references section (the methods' `reference`).
 */
import { Help, type Command, type Option } from 'commander';
import type { AnyLearner } from '../../learners/registry.js';
import { LEARNERS } from '../../learners/registry.js';
import { cliName } from '../../learners/learner.js';
import { PAPERS_LINE } from './references.js';

/** What every run may take: always shown. */
const COMMON = ['data', 'schema', 'label', 'loss', 'method', 'epsilon', 'delta', 'seed', 'out', 'diagnostics', 'json', 'ledger', 'budgetEpsilon', 'budgetDelta', 'helpAll', 'help'];
/** Honest learning-rate tuning (the learners whose runs compose). */
const TUNING = ['tune', 'tuneLearningRates', 'validation', 'metric'];

/** The view asked for: every flag, one method's, or the first screen. */
export type TrainHelpView = { readonly kind: 'all' } | { readonly kind: 'method'; readonly learner: AnyLearner } | { readonly kind: 'first' };

export function trainHelpView(command: Command): TrainHelpView {
  if (command.getOptionValue('helpAll') === true) return { kind: 'all' };
  if (command.getOptionValueSource('method') === 'cli') {
    const learner = LEARNERS.find((l) => cliName(l.method) === command.getOptionValue('method'));
    if (learner !== undefined) return { kind: 'method', learner };
  }
  return { kind: 'first' };
}

/** The flags (commander attribute names) the view shows. */
function shownFlags(view: TrainHelpView): ReadonlySet<string> | undefined {
  if (view.kind === 'all') return undefined;
  if (view.kind === 'first') return new Set(COMMON);
  return new Set([...COMMON, ...view.learner.cli.flags, ...(view.learner.composite === undefined ? [] : TUNING), 'datasetSize']);
}

/** Commander's help with the options filtered by the view (`command.configureHelp(trainHelpConfiguration)`). */
export const trainHelpConfiguration = {
  visibleOptions(this: Help, command: Command): Option[] {
    const shown = shownFlags(trainHelpView(command));
    const options = Help.prototype.visibleOptions.call(this, command);
    return shown === undefined ? options : options.filter((option) => shown.has(option.attributeName()));
  },
};

/** The methods, one line each: name, what it does, its neighbouring relation. */
function methodLines(): string[] {
  const width = Math.max(...LEARNERS.map((l) => cliName(l.method).length));
  return LEARNERS.map((l) => `  ${cliName(l.method).padEnd(width)}  ${l.summary} (${l.relation === 'replaceOne' ? 'replace-one' : 'add/remove-one'})`);
}

function referenceLines(): string[] {
  const width = Math.max(...LEARNERS.map((l) => cliName(l.method).length), '--tune'.length);
  return [
    ...LEARNERS.map((l) => `  ${cliName(l.method).padEnd(width)}  ${l.reference}`),
    `  ${'--tune'.padEnd(width)}  Papernot & Steinke 2022 (private selection, Thm. 6)`,
    PAPERS_LINE,
  ];
}

/** The text after the options: short in the first and method views, with the full rules (`rules`) in --help-all. */
export function trainHelpAfter(command: Command, rules: string): string {
  const view = trainHelpView(command);
  const more =
    view.kind === 'all'
      ? []
      : [
          '',
          view.kind === 'first' ? "Each method's own options: dpfit train --method M --help." : '',
          'Databases, out-of-core data, the validation-data rule and the limits: dpfit train --help-all.',
        ].filter((line, i) => i === 0 || line !== '');
  return [
    '',
    'Methods (--method):',
    ...methodLines(),
    '',
    'Examples:',
    '  $ dpfit train --data adult.data --schema adult.schema.json --epsilon 1 --out model.json',
    '  $ dpfit verify model.json',
    '  $ dpfit train --data adult.data --schema adult.schema.json --epsilon 1 --tune 15.4 \\',
    '      --validation public.csv --optimizer adam --out model.json      # tuning paid for',
    ...more,
    ...(view.kind === 'all' ? ['', rules] : []),
    '',
    'References:',
    ...referenceLines(),
  ].join('\n');
}
