/**
 * Every file a command writes is checked BEFORE any work — before the private data are read or
 * any privacy budget is spent — and written all or nothing (`writeOutputFiles`,
 * `data/node/atomic-write.ts`).
 *
 * `checkOutputPaths` refuses, with one line naming the flag and the path:
 *   - an empty path, or a file path ending in a slash (exit 2, `InvalidParameterError`);
 *   - an output that is one of the command's input files, compared by real path (symbolic links
 *     resolved) and by device + inode (hard links), or the same file as another output (exit 2);
 *   - a directory, a device, a FIFO or a socket where a file is expected, a regular file where a
 *     directory is expected, a file that cannot be written, a directory that does not exist or in
 *     which no file can be created (exit 3, `DataFormatError` with source `--flag PATH`; what the
 *     file system is asked is `checkOutputTarget`'s).
 */
import { realpathSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { checkOutputPathText, checkOutputTarget, type CheckedOutput, type OutputRequest } from '../data/node/atomic-write.js';
import { InvalidParameterError } from '../errors.js';

/** A path the command reads: no output may be (or overwrite) it. `<NAME>` names a positional argument. */
export interface InputRequest {
  readonly flag: string;
  readonly path: string;
}

interface Identity {
  readonly real: string;
  readonly dev?: number;
  readonly ino?: number;
}

function identityOf(path: string): Identity {
  const absolute = resolve(path);
  try {
    const real = realpathSync(absolute);
    const info = statSync(real);
    return { real, dev: info.dev, ino: info.ino };
  } catch {
    return { real: absolute };
  }
}

function sameFile(a: Identity, b: Identity): boolean {
  if (a.real === b.real) return true;
  return a.dev !== undefined && a.ino !== undefined && a.dev === b.dev && a.ino === b.ino;
}

/**
 * Checks every output of a command before it does any work (see the module comment). `undefined`
 * entries (flags not given) are skipped. Inputs that do not exist are compared by path only.
 *
 * @example
 * const [out] = checkOutputPaths([{ flag: '--out', path: 'model.json' }], [{ flag: '--data', path: 'data.csv' }]);
 * // ... train ...
 * writeOutputFiles([{ output: out, data: json }]);
 */
export function checkOutputPaths(outputs: readonly (OutputRequest | undefined)[], inputs: readonly (InputRequest | undefined)[] = []): CheckedOutput[] {
  const given = outputs.filter((o): o is OutputRequest => o !== undefined);
  for (const request of given) checkOutputPathText(request);
  const inputIds = inputs.filter((i): i is InputRequest => i !== undefined && typeof i.path === 'string' && i.path !== '').map((i) => ({ ...i, id: identityOf(i.path) }));
  // Conflicts first (parameter errors), then what the file system says.
  const outputIds = given.map((request) => ({ request, id: identityOf(request.path) }));
  for (const { request, id } of outputIds) {
    const input = inputIds.find((i) => sameFile(i.id, id));
    if (input !== undefined) {
      throw new InvalidParameterError(request.flag, request.path, `another path than the ${input.flag.startsWith('<') ? 'input' : input.flag} file (${input.path}): writing it would destroy an input`);
    }
  }
  outputIds.forEach(({ request, id }, k) => {
    const other = outputIds.slice(0, k).find((o) => sameFile(o.id, id));
    if (other !== undefined) throw new InvalidParameterError(request.flag, request.path, `another path than ${other.request.flag} (${other.request.path})`);
  });
  const checked = given.map(checkOutputTarget);
  // Symbolic links can make two different paths one target: compare the resolved targets too.
  checked.forEach((output, k) => {
    const other = checked.slice(0, k).find((o) => o.target === output.target);
    if (other !== undefined) throw new InvalidParameterError(output.flag, output.path, `another path than ${other.flag} (${other.path})`);
    const input = inputIds.find((i) => i.id.real === output.target);
    if (input !== undefined) throw new InvalidParameterError(output.flag, output.path, `another path than the ${input.flag.startsWith('<') ? 'input' : input.flag} file (${input.path}): writing it would destroy an input`);
  });
  return checked;
}
