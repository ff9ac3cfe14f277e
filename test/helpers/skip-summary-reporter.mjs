/**
 * A node:test reporter that prints, after everything else, which tests or suites were skipped and
 * why (a skip hidden in thousands of lines of output is a suite nobody ran). `npm test` uses it
 * beside the `spec` reporter. Written as .mjs because node loads reporters before tsx.
 */
import { relative } from 'node:path';

export default async function* skipSummary(source) {
  const skipped = [];
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { skip, name, file } = event.data;
    if (skip === undefined || skip === false) continue;
    const where = file === undefined ? '' : `${relative(process.cwd(), file)}: `;
    skipped.push(`  ${where}${name}${typeof skip === 'string' && skip !== '' ? ` — ${skip}` : ''}`);
  }
  yield skipped.length === 0 ? '\nskipped: none\n' : `\nskipped (${skipped.length}):\n${skipped.join('\n')}\n`;
}
