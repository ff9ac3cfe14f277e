/**
 * How the user started dpfit, for the "Next: ..." hints to be commands that run as printed: `dpfit`
 * when it came from a PATH or node_modules/.bin (an installed package), `node bin/dpfit.js` (the
 * path as typed, relative to the working directory) in a clone, where `dpfit` is not on the PATH.
 */
import { basename, isAbsolute, relative, sep } from 'node:path';

export function dpfitCommand(script: string | undefined = process.argv[1], cwd: string = process.cwd()): string {
  if (script === undefined || basename(script) !== 'dpfit.js' || script.includes(`${sep}node_modules${sep}`)) return 'dpfit';
  const shown = isAbsolute(script) ? relative(cwd, script) : script;
  return `node ${shown.includes(' ') ? JSON.stringify(shown) : shown}`;
}
