/**
 * Dataset fetchers (Node only): download files from their official address — or copy them from a
 * local directory (`from`) — check each one's size and SHA-256 against the pinned values, and write
 * them with a ready-made public schema. Nothing is written unless it verified; files are written
 * to a temporary name and renamed, so an interrupted fetch leaves no half file behind.
 *
 * Tests never touch the network: they call these functions with small files, their own manifest
 * and (for the download path) a fake `fetch`.
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DataFormatError, DpfitError, InvalidParameterError } from '../../errors.js';
import { ADULT_FILES, ADULT_SCHEMA_JSON, normalizeAdultCopy, type RemoteFile } from '../adult.js';
import { describeOsError, requireFile } from './files.js';
import { writeFileAtomic } from './atomic-write.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

/** SHA-256 of bytes as lower-case hex. */
export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Throws a `DataFormatError` naming `source` unless `bytes` has the expected size and SHA-256.
 * Returns the digest.
 */
export function verifyBytes(bytes: Uint8Array, expected: RemoteFile, source: string): string {
  if (bytes.length !== expected.size) {
    throw new DataFormatError(source, `is ${bytes.length} bytes, expected ${expected.size} for ${expected.name} (not the official file, or damaged)`);
  }
  const digest = sha256Hex(bytes);
  if (digest !== expected.sha256) throw new DataFormatError(source, `SHA-256 ${digest} does not match the official ${expected.name} (${expected.sha256})`);
  return digest;
}

export type FetchFunction = (url: string, init?: { signal?: AbortSignal }) => Promise<{ ok: boolean; status: number; statusText?: string; arrayBuffer(): Promise<ArrayBuffer> }>;

/** A download failure (network, HTTP status): exit status 3 (bad data, files or network), one line, with the --from hint. */
export class FetchFailedError extends DpfitError {
  readonly url: string;
  constructor(url: string, reason: string) {
    super('FETCH_FAILED', `${url}: download failed (${reason}); with a local copy use --from DIR`);
    this.url = url;
  }
}

const DOWNLOAD_VERIFIED_OPTIONS = optionNames<NonNullable<Parameters<typeof downloadVerified>[1]>>({ fetchImpl: true, timeoutMs: true });

/**
 * Downloads one file and verifies it (size, SHA-256). Uses `fetchImpl` (default: the global
 * `fetch`) with a timeout.
 */
export async function downloadVerified(file: RemoteFile, options: { fetchImpl?: FetchFunction; timeoutMs?: number } = {}): Promise<Uint8Array> {
  rejectUnknownOptions(options, DOWNLOAD_VERIFIED_OPTIONS, 'downloadVerified');
  const fetchImpl = options.fetchImpl ?? (globalThis.fetch as unknown as FetchFunction | undefined);
  if (fetchImpl === undefined) throw new FetchFailedError(file.url, 'no fetch() in this runtime');
  let response;
  try {
    response = await fetchImpl(file.url, { signal: AbortSignal.timeout(options.timeoutMs ?? 120_000) });
  } catch (error) {
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new FetchFailedError(file.url, cause ?? (error instanceof Error ? error.message : String(error)));
  }
  if (!response.ok) throw new FetchFailedError(file.url, `HTTP ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  verifyBytes(bytes, file, file.url);
  return bytes;
}

export interface InstalledFile {
  readonly name: string;
  readonly path: string;
  readonly bytes: number;
  readonly sha256: string;
  /** Where the bytes came from: the URL, the local path, or the install directory itself. */
  readonly source: string;
  readonly status: 'downloaded' | 'copied' | 'already present' | 'absent (optional)';
  /** Edits undone on a local copy before verifying (e.g. an added header line). */
  readonly changes: readonly string[];
}

export interface InstallOptions {
  /** Install directory (created if needed). */
  dir: string;
  /** Copy from this local directory instead of downloading. */
  from?: string;
  /** Undo known edits of local copies (e.g. `normalizeAdultCopy`). */
  normalize?: (name: string, bytes: Uint8Array) => { bytes: Uint8Array; changes: string[] };
  fetchImpl?: FetchFunction;
}

/** Temporary file, fsync, rename, directory fsync (`output-files.ts`); failures name the file (exit 3). */
function writeAtomically(path: string, bytes: Uint8Array | string): void {
  writeFileAtomic(path, bytes, 'writing');
}

async function makeDirectory(dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    throw new DataFormatError(dir, `cannot create the directory (${code ?? String(error)}: ${describeOsError(code)})`);
  }
}

async function readIfPresent(path: string): Promise<Buffer | undefined> {
  try {
    return await readFile(path);
  } catch {
    return undefined;
  }
}

const INSTALL_OPTIONS = optionNames<InstallOptions>({ dir: true, from: true, normalize: true, fetchImpl: true });

/**
 * Installs verified files into `dir`: a file already there that verifies is kept; otherwise it is
 * copied from `from` (after `normalize`) or downloaded, verified, then written.
 */
export async function installFiles(files: readonly RemoteFile[], options: InstallOptions): Promise<InstalledFile[]> {
  rejectUnknownOptions(options, INSTALL_OPTIONS, 'installFiles');
  if (typeof options.dir !== 'string' || options.dir === '') throw new InvalidParameterError('dir', options.dir, 'a directory path');
  // Verify everything before writing anything.
  const plan: { file: RemoteFile; bytes?: Uint8Array; source: string; status: InstalledFile['status']; changes: string[] }[] = [];
  for (const file of files) {
    const target = join(options.dir, file.name);
    const present = await readIfPresent(target);
    if (present !== undefined && present.length === file.size && sha256Hex(present) === file.sha256) {
      plan.push({ file, source: target, status: 'already present', changes: [] });
      continue;
    }
    if (options.from !== undefined) {
      const source = join(options.from, file.name);
      const local = await readIfPresent(source);
      if (local === undefined) {
        if (file.optional) {
          plan.push({ file, source, status: 'absent (optional)', changes: [] });
          continue;
        }
        await requireFile(source); // throws the precise error (no such file, directory, ...)
        throw new DataFormatError(source, 'cannot be read');
      }
      const { bytes, changes } = options.normalize ? options.normalize(file.name, local) : { bytes: local, changes: [] };
      verifyBytes(bytes, file, source);
      plan.push({ file, bytes, source, status: 'copied', changes });
    } else {
      const bytes = await downloadVerified(file, { fetchImpl: options.fetchImpl });
      plan.push({ file, bytes, source: file.url, status: 'downloaded', changes: [] });
    }
  }
  await makeDirectory(options.dir);
  const report: InstalledFile[] = [];
  for (const step of plan) {
    const path = join(options.dir, step.file.name);
    if (step.bytes !== undefined) writeAtomically(path, step.bytes);
    const absent = step.status === 'absent (optional)';
    report.push({
      name: step.file.name,
      path,
      bytes: absent ? 0 : step.file.size,
      sha256: absent ? '' : step.file.sha256,
      source: step.source,
      status: step.status,
      changes: step.changes,
    });
  }
  return report;
}

export interface FetchAdultOptions {
  /** Install directory (default "data/adult"). */
  dir?: string;
  /** A local copy to install from, in the original form or with a header line added (as some local copies have). */
  from?: string;
  /** Test hook: replaces the global fetch. */
  fetchImpl?: FetchFunction;
  /** Test hook: the files and checksums (default `ADULT_FILES`). */
  files?: readonly RemoteFile[];
}

export interface FetchReport {
  readonly dataset: string;
  readonly dir: string;
  readonly files: readonly InstalledFile[];
  /** Path of the public schema. */
  readonly schema: string;
  /** false when a schema file was already there (it is never overwritten). */
  readonly schemaWritten: boolean;
  /** A kept schema file that differs from the one dpfit ships now (e.g. from an older version, or edited). */
  readonly schemaDiffersFromShipped?: boolean;
  readonly license: string;
  /** The data files by part ("train", "test"). */
  readonly parts: Readonly<Record<string, string>>;
}

const FETCH_ADULT_OPTIONS = optionNames<FetchAdultOptions>({ dir: true, from: true, fetchImpl: true, files: true });

/**
 * `dpfit data fetch adult`: installs adult.data, adult.test (and adult.names) from UCI or from a
 * local copy, verified, plus `adult.schema.json` (`ADULT_SCHEMA_JSON`) unless one exists.
 *
 * @example
 * await fetchAdult({ dir: 'data/adult', from: '/path/to/uci-adult' });
 */
export async function fetchAdult(options: FetchAdultOptions = {}): Promise<FetchReport> {
  rejectUnknownOptions(options, FETCH_ADULT_OPTIONS, 'fetchAdult');
  const dir = options.dir ?? join('data', 'adult');
  const files = await installFiles(options.files ?? ADULT_FILES, { dir, from: options.from, normalize: normalizeAdultCopy, fetchImpl: options.fetchImpl });
  const schemaPath = join(dir, 'adult.schema.json');
  const existing = await readIfPresent(schemaPath);
  if (existing === undefined) writeAtomically(schemaPath, `${JSON.stringify(ADULT_SCHEMA_JSON, null, 2)}\n`);
  return {
    dataset: 'adult',
    dir,
    files,
    schema: schemaPath,
    schemaWritten: existing === undefined,
    ...(existing !== undefined && !sameJson(new TextDecoder().decode(existing), ADULT_SCHEMA_JSON) ? { schemaDiffersFromShipped: true } : {}),
    license: 'CC BY 4.0 (UCI Machine Learning Repository; Becker & Kohavi 1996)',
    parts: { train: join(dir, 'adult.data'), test: join(dir, 'adult.test') },
  };
}

function sameJson(text: string, value: unknown): boolean {
  try {
    return JSON.stringify(JSON.parse(text)) === JSON.stringify(value);
  } catch {
    return false;
  }
}

/** Fetchers by data set name (the CLI's `dpfit data fetch NAME`). */
export const FETCHERS: Readonly<Record<string, (options: FetchAdultOptions) => Promise<FetchReport>>> = { adult: fetchAdult };
