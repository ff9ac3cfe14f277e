/**
 * The References section that ends a command's `--help` (issue 27): what the text above rests on,
 * by paper tag (`000`-`004`, `docs/papers.md`) or by author and year, one item per line. The
 * descriptions and options above it say what each thing does in plain words; the tags and theorem
 * numbers live only here (`test/cli/help-references.test.ts` holds every command to it), as in
 * `dpfit train --help` (`train-help.ts`, the learners' `reference`).
 */

/** One item: what it is about (a flag, an event kind, a command) and where it comes from. */
export type Reference = readonly [topic: string, source: string];

/** The line under the items when a paper tag appears in them. */
export const PAPERS_LINE = '  Papers by number (000, 003, 004): docs/papers.md in the repository.';

/** `\nReferences:\n  topic  source\n...`, the topics padded to one column, for `addHelpText('after', ...)`. */
export function referencesHelp(references: readonly Reference[]): string {
  const width = Math.max(...references.map(([topic]) => topic.length));
  const tagged = references.some(([, source]) => /\b00\d\b/.test(source));
  return ['', 'References:', ...references.map(([topic, source]) => `  ${topic.padEnd(width)}  ${source}`), ...(tagged ? [PAPERS_LINE] : [])].join('\n');
}
