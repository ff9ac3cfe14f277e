/**
 * Files written all or nothing (Node only): the CLI's outputs (each command checks all its paths
 * before any work, `cli/output-files.ts`), the dataset fetchers' downloads (`fetch.ts`) and the
 * experiments' figures. Every refusal is one line naming the path as the caller names it: its
 * `flag` (a command's flag such as `--out`, or a label such as "file") and the path.
 *
 * Before anything is written, `checkOutputPathText` refuses an empty path or one holding a NUL
 * byte (`InvalidParameterError`), and `checkOutputTarget` asks the file system, refusing a file
 * path ending in a slash (`InvalidParameterError`), and (`DataFormatError` with source
 * `FLAG PATH`) a directory, a device, a FIFO or a socket where a file is expected, a regular file
 * where a directory is expected, a file that cannot be written (EACCES, EPERM for an immutable
 * file, EROFS), a directory that does not exist or in which no file can be created (checked by
 * creating, syncing and removing a small probe file there: this also catches /proc, read-only
 * mounts, immutable directories and full disks).
 *
 * `writeOutputFiles` writes each file to a temporary file in the target's own directory, fsyncs
 * it, and only when every file is written renames them into place and fsyncs the directories; any
 * failure removes every temporary file and leaves the targets as they were. Temporary files are
 * hidden (`.NAME.dpfit-PID-RANDOM.tmp`); while any exists, SIGINT, SIGTERM and SIGHUP remove them
 * and exit with the conventional status (128 + the signal number). A `kill -9` cannot be caught:
 * the temporary file it leaves is removed by the next check of the same output once it is older
 * than a minute and its process is gone.
 */
import { randomBytes } from 'node:crypto';
import {
  accessSync,
  closeSync,
  constants as fsConstants,
  fchmodSync,
  fchownSync,
  fsyncSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { describeOsError, nodeKind } from './files.js';

export type OutputKind = 'file' | 'directory';

/** A path to write: a file (default) or a directory that may be created. */
export interface OutputRequest {
  /** How messages name it: the command's flag as the user typed it (`--out`, `--diagnostics`, `--dir`), or a label. */
  readonly flag: string;
  readonly path: string;
  readonly kind?: OutputKind;
}

/** An output path that passed every check. */
export interface CheckedOutput {
  readonly flag: string;
  /** The path as given. */
  readonly path: string;
  readonly kind: OutputKind;
  /** The absolute path that will be written (symbolic links to an existing file resolved). */
  readonly target: string;
  /** For files: whether the target exists (then it is a regular file and is replaced). */
  readonly exists: boolean;
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Rethrows anything that is not an OS error (a bug, or one of ours). */
function osCode(error: unknown): string {
  const code = codeOf(error);
  if (code === undefined || (error as { syscall?: unknown }).syscall === undefined) throw error;
  return code;
}

function fileError(request: { flag: string; path: string }, message: string): DataFormatError {
  return new DataFormatError(`${request.flag} ${request.path}`, message);
}

function tryStat(path: string, follow: boolean): Stats | undefined {
  try {
    return follow ? statSync(path) : lstatSync(path);
  } catch (error) {
    if (osCode(error) === 'ENOENT') return undefined;
    throw error;
  }
}

// ---------------------------------------------------------------------------------------------
// Temporary files and signals
// ---------------------------------------------------------------------------------------------

const pending = new Set<string>();
const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];
const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };
let exitHandlerInstalled = false;
let signalWindows = 0;

/** Removes every temporary file this process has not renamed yet (signal handlers, `exit`). */
export function removePendingTemporaryFiles(): void {
  for (const path of pending) {
    try {
      unlinkSync(path);
    } catch {
      // already gone
    }
  }
  pending.clear();
}

/** The temporary files not yet renamed or removed (for tests). */
export function pendingTemporaryFiles(): readonly string[] {
  return [...pending];
}

/** SIGINT/SIGTERM/SIGHUP while output files are being written: remove the temporary files, exit 128 + the signal number. */
export function exitOnSignal(signal: NodeJS.Signals): void {
  removePendingTemporaryFiles();
  process.exit(128 + (SIGNAL_NUMBERS[signal] ?? 0));
}

/**
 * Runs `write` with signal handlers installed: a SIGINT, SIGTERM or SIGHUP that arrives while
 * temporary files exist removes them and exits with the conventional status. The handlers are
 * removed two turns of the event loop later (so a signal caught during a synchronous write is
 * still delivered to them, and exits once the write is complete); they are never installed during
 * long synchronous work such as training: Ctrl-C keeps its default effect there, when no
 * temporary file exists.
 */
export function withSignalCleanup<T>(write: () => T): T {
  if (!exitHandlerInstalled) {
    exitHandlerInstalled = true;
    process.on('exit', removePendingTemporaryFiles);
  }
  if (signalWindows++ === 0) for (const signal of SIGNALS) process.on(signal, exitOnSignal);
  // Two turns of the event loop: whatever phase we are in, a poll phase (where a signal caught
  // during the synchronous write is dispatched to the handlers) comes before the removal.
  const release = (): void => {
    setImmediate(() =>
      setImmediate(() => {
        if (--signalWindows === 0) for (const signal of SIGNALS) process.removeListener(signal, exitOnSignal);
      }),
    );
  };
  try {
    const result = write();
    if (result instanceof Promise) {
      return result.finally(release) as T;
    }
    release();
    return result;
  } catch (error) {
    release();
    throw error;
  }
}

function temporaryName(target: string): string {
  return join(dirname(target), `.${basename(target)}.dpfit-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

const STALE_MS = 60_000;

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return codeOf(error) === 'EPERM';
  }
}

/**
 * Removes temporary files of `target` (and probe files) in its directory left by dpfit processes
 * that died (kill -9) over a minute ago.
 */
function sweepStaleTemporaries(target: string): void {
  const dir = dirname(target);
  const prefixes = [`.${basename(target)}.dpfit-`, '.dpfit-probe-'];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const prefix = prefixes.find((p) => name.startsWith(p));
    if (prefix === undefined || !name.endsWith('.tmp')) continue;
    const match = /^(\d+)-[0-9a-f]+\.tmp$/.exec(name.slice(prefix.length));
    if (match === null) continue;
    const pid = Number(match[1]);
    if (pid === process.pid || processAlive(pid)) continue;
    const path = join(dir, name);
    try {
      const info = lstatSync(path);
      if (info.isFile() && Date.now() - info.mtimeMs > STALE_MS) unlinkSync(path);
    } catch {
      // raced with someone else: leave it
    }
  }
}

/** Low-level operations, replaceable in tests to simulate failures (a full disk). */
export interface WriteOperations {
  readonly openSync: typeof openSync;
  readonly writeSync: (fd: number, data: Uint8Array, offset: number, length: number) => number;
  readonly fsyncSync: typeof fsyncSync;
  readonly closeSync: typeof closeSync;
  readonly renameSync: typeof renameSync;
}

const NODE_OPERATIONS: WriteOperations = {
  openSync,
  writeSync: (fd, data, offset, length) => writeSync(fd, data, offset, length),
  fsyncSync,
  closeSync,
  renameSync,
};

/** Creates `temporary` exclusively, writes all of `bytes`, fsyncs and closes it. Registered as pending first. */
function writeTemporary(temporary: string, bytes: Uint8Array, ops: WriteOperations, like?: Stats): void {
  const fd = ops.openSync(temporary, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL, 0o666);
  pending.add(temporary);
  try {
    if (like !== undefined) {
      // Replacing a file: keep its permissions (and, as root, its owner).
      fchmodSync(fd, like.mode & 0o7777);
      if (process.getuid?.() === 0 && (like.uid !== 0 || like.gid !== 0)) {
        try {
          fchownSync(fd, like.uid, like.gid);
        } catch {
          // best effort
        }
      }
    }
    let offset = 0;
    while (offset < bytes.length) offset += ops.writeSync(fd, bytes, offset, bytes.length - offset);
    ops.fsyncSync(fd);
  } finally {
    ops.closeSync(fd);
  }
}

function removeTemporary(path: string): void {
  pending.delete(path);
  try {
    unlinkSync(path);
  } catch {
    // never created, or already gone
  }
}

/** fsync of a directory, so a rename in it survives a crash (ignored where directories cannot be synced). */
function syncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch {
    // EINVAL/EISDIR/EPERM on some file systems and platforms: the rename itself is done
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Creates, writes, syncs and removes a small file in `dir`: can this process really create files there? */
function probeDirectory(request: { flag: string; path: string }, dir: string, what: string): void {
  const probe = join(dir, `.dpfit-probe-${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
  try {
    writeTemporary(probe, new Uint8Array(512), NODE_OPERATIONS);
  } catch (error) {
    const code = osCode(error);
    throw fileError(request, `cannot be written: cannot create files in ${what} ${dir} (${code}: ${describeOsError(code)})`);
  } finally {
    removeTemporary(probe);
  }
}

// ---------------------------------------------------------------------------------------------
// Checks
// ---------------------------------------------------------------------------------------------

/** The nearest existing ancestor of an absolute path, and what lies there. */
function nearestExisting(path: string): { path: string; info: Stats } {
  let current = path;
  for (;;) {
    let info: Stats | undefined;
    try {
      info = tryStat(current, true);
    } catch (error) {
      if (osCode(error) !== 'ENOTDIR') throw error; // a file higher up: keep climbing to it
    }
    if (info !== undefined) return { path: current, info };
    const parent = dirname(current);
    if (parent === current) throw Object.assign(new Error('no existing ancestor'), { code: 'ENOENT', syscall: 'stat' });
    current = parent;
  }
}

/** The path a chain of symbolic links leads to (the last one may name a file that does not exist yet). */
function followLinks(request: { flag: string; path: string }, path: string): string {
  let current = path;
  for (let hops = 0; hops < 40; hops++) {
    const info = tryStat(current, false);
    if (info === undefined || !info.isSymbolicLink()) return info === undefined ? current : realpathSync(current);
    current = resolve(dirname(current), readlinkSync(current));
  }
  throw fileError(request, 'cannot be resolved (ELOOP: too many levels of symbolic links)');
}

function checkFileOutput(request: OutputRequest): CheckedOutput {
  const absolute = resolve(request.path);
  if (request.path.endsWith('/') || request.path.endsWith(sep)) {
    throw new InvalidParameterError(request.flag, request.path, 'a file path (it ends with a slash: a directory)');
  }
  let link: Stats | undefined;
  try {
    link = tryStat(absolute, false);
  } catch (error) {
    const code = osCode(error);
    if (code === 'ENOTDIR') {
      const { path } = nearestExisting(dirname(absolute));
      throw fileError(request, `cannot be written: ${path} is a file, not a directory`);
    }
    throw fileError(request, `cannot be written (${code}: ${describeOsError(code)})`);
  }
  let target = absolute;
  let info = link;
  if (link?.isSymbolicLink()) {
    try {
      // A link to a file that does not exist yet is written through: its target is created.
      target = followLinks(request, absolute);
      info = tryStat(target, false);
    } catch (error) {
      if (error instanceof DataFormatError) throw error;
      const code = osCode(error);
      throw fileError(request, `cannot be resolved (${code}: ${describeOsError(code)})`);
    }
  }
  if (info !== undefined && !info.isFile()) {
    throw fileError(request, `is ${nodeKind(info)}, not a regular file: give a file path to write`);
  }
  // The directory the file goes in: it must exist and be a directory in which files can be created.
  const parent = dirname(target);
  let dir: string;
  try {
    dir = realpathSync(parent);
  } catch (error) {
    const code = osCode(error);
    if (code === 'ENOENT') throw fileError(request, `cannot be written: the directory ${parent} does not exist`);
    if (code === 'ENOTDIR') {
      const { path } = nearestExisting(parent);
      throw fileError(request, `cannot be written: ${path} is a file, not a directory`);
    }
    throw fileError(request, `cannot be written: directory ${parent} (${code}: ${describeOsError(code)})`);
  }
  const dirInfo = statSync(dir);
  if (!dirInfo.isDirectory()) throw fileError(request, `cannot be written: ${dir} is not a directory`);
  target = join(dir, basename(target));
  if (info !== undefined) {
    try {
      // EACCES, EROFS, and EPERM for an immutable file (chattr +i), even for root.
      accessSync(target, fsConstants.W_OK);
    } catch (error) {
      const code = osCode(error);
      throw fileError(request, `cannot be written (${code}: ${describeOsError(code)})`);
    }
  }
  probeDirectory(request, dir, 'the directory');
  sweepStaleTemporaries(target);
  return { flag: request.flag, path: request.path, kind: 'file', target, exists: info !== undefined };
}

function checkDirectoryOutput(request: OutputRequest): CheckedOutput {
  const absolute = resolve(request.path);
  let existing: { path: string; info: Stats };
  try {
    existing = nearestExisting(absolute);
  } catch (error) {
    const code = osCode(error);
    if (code === 'ENOTDIR') {
      throw fileError(request, 'cannot be created: a component of the path is a file, not a directory');
    }
    throw fileError(request, `cannot be used (${code}: ${describeOsError(code)})`);
  }
  if (!existing.info.isDirectory()) {
    throw fileError(request, existing.path === absolute ? `is ${nodeKind(existing.info)}, not a directory` : `cannot be created: ${existing.path} is a file, not a directory`);
  }
  const real = realpathSync(existing.path);
  probeDirectory(request, real, existing.path === absolute ? 'the directory' : 'the parent directory');
  const rest = absolute.slice(existing.path.length).replace(/^[/\\]+/, '');
  return { flag: request.flag, path: request.path, kind: 'directory', target: rest === '' ? real : join(real, rest), exists: existing.path === absolute };
}

/** Refuses an output path that is no path: empty, or holding a NUL byte (`InvalidParameterError` naming the flag). */
export function checkOutputPathText(request: OutputRequest): void {
  if (typeof request.path !== 'string' || request.path === '') throw new InvalidParameterError(request.flag, request.path, request.kind === 'directory' ? 'a directory path' : 'a file path');
  if (request.path.includes('\0')) throw new InvalidParameterError(request.flag, request.path, 'a path without NUL bytes');
}

/** Checks one output path on the file system (the module comment says what it refuses); stale temporary files of a file's earlier runs are swept. */
export function checkOutputTarget(request: OutputRequest): CheckedOutput {
  return (request.kind ?? 'file') === 'directory' ? checkDirectoryOutput(request) : checkFileOutput(request);
}

// ---------------------------------------------------------------------------------------------
// Writing
// ---------------------------------------------------------------------------------------------

export interface OutputContent {
  readonly output: CheckedOutput;
  readonly data: string | Uint8Array;
}

/**
 * Writes checked output files all or nothing: every file to a temporary file next to its target
 * (fsynced), then the renames, then an fsync of each directory. If writing any temporary file
 * fails (a full disk, the directory removed meanwhile), every temporary file is removed, no
 * target changes, and the error (a `DataFormatError`) names the flag and the path.
 */
export function writeOutputFiles(files: readonly OutputContent[], ops: WriteOperations = NODE_OPERATIONS): void {
  withSignalCleanup(() => writeAll(files, ops));
}

function writeAll(files: readonly OutputContent[], ops: WriteOperations): void {
  const written: { file: OutputContent; temporary: string }[] = [];
  try {
    for (const file of files) {
      if (file.output.kind !== 'file') throw new Error(`internal error: ${file.output.flag} is a directory output`);
      const temporary = temporaryName(file.output.target);
      const bytes = typeof file.data === 'string' ? Buffer.from(file.data, 'utf8') : file.data;
      let like: Stats | undefined;
      try {
        like = tryStat(file.output.target, false);
        if (like !== undefined && !like.isFile()) throw fileError(file.output, `is now ${nodeKind(like)}, not a regular file: nothing written`);
        written.push({ file, temporary });
        writeTemporary(temporary, bytes, ops, like);
      } catch (error) {
        if (error instanceof DataFormatError) throw error;
        const code = osCode(error);
        throw fileError(file.output, `cannot be written (${code}: ${describeOsError(code)}); nothing was written`);
      }
    }
    const renamed: string[] = [];
    for (const { file, temporary } of written) {
      let problem: string | undefined;
      // A target that became a directory or a device since the check is never replaced.
      const now = tryStat(file.output.target, false);
      if (now !== undefined && !now.isFile()) problem = `is now ${nodeKind(now)}, not a regular file: not replaced`;
      else {
        try {
          ops.renameSync(temporary, file.output.target);
          pending.delete(temporary);
          renamed.push(file.output.path);
        } catch (error) {
          const code = osCode(error);
          problem = `cannot be written (${code}: ${describeOsError(code)})`;
        }
      }
      if (problem !== undefined) throw fileError(file.output, `${problem}; ${renamed.length === 0 ? 'nothing was written' : `already written: ${renamed.join(', ')}`}`);
    }
  } finally {
    for (const { temporary } of written) if (pending.has(temporary)) removeTemporary(temporary);
  }
  for (const dir of new Set(files.map((f) => dirname(f.output.target)))) syncDirectory(dir);
}

/**
 * Checks `path` as an output file and writes it atomically (temporary file, fsync, rename,
 * directory fsync). For library callers that write one file (dataset fetchers); commands check
 * all their outputs before any work instead (`checkOutputPaths`), then write them.
 */
export function writeFileAtomic(path: string, data: string | Uint8Array, label = 'file'): void {
  const request: OutputRequest = { flag: label, path };
  checkOutputPathText(request);
  writeOutputFiles([{ output: checkOutputTarget(request), data }]);
}
