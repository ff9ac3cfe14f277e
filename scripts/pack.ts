/**
 * Packs dpfit as `npm pack` would publish it, without touching the working tree: the package's
 * files (package.json, README.md, LICENSE, bin/) are copied to a temporary folder, built there as
 * `npm run build` builds them (tsc -p tsconfig.build.json, then the calculator page into
 * dist/web), and packed by `npm pack --ignore-scripts` (the build is done; `prepare` would look
 * for sources the stage does not have).
 *
 * `installPacked` installs such a tarball into an empty project without the network, for
 * test/package/install.test.ts: `npm install TARBALL --offline` would resolve dpfit's dependency
 * ranges afresh, from whatever registry documents the cache holds, possibly to versions newer than
 * the tarballs `npm ci` downloaded (ENOTCACHED); instead the project gets a lockfile holding dpfit
 * (the tarball, with its integrity) and the non-dev entries of dpfit's own package-lock.json, each
 * with its registry tarball URL, and `npm ci --offline` installs exactly those tarballs from npm's
 * cache (no registry document needed).
 *
 * Usage: node --import tsx scripts/pack.ts [DESTINATION]   (default: the current folder)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildWeb } from './build-web.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What `npm pack` adds beside `files` (bin, dist), copied as they are. */
const PACKAGE_FILES = ['package.json', 'README.md', 'LICENSE', 'bin'];

export interface PackedDpfit {
  /** Absolute path of the tarball. */
  readonly tarball: string;
  /** The paths inside the tarball (`package/` stripped), sorted. */
  readonly files: readonly string[];
}

/** Builds and packs dpfit into `destination` (which must exist). */
export async function packDpfit(destination: string): Promise<PackedDpfit> {
  const stage = mkdtempSync(join(tmpdir(), 'dpfit-stage-'));
  try {
    for (const file of PACKAGE_FILES) cpSync(join(ROOT, file), join(stage, file), { recursive: true });
    const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
    execFileSync(process.execPath, [tsc, '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', join(stage, 'dist')], { cwd: ROOT, stdio: ['ignore', 'inherit', 'inherit'] });
    await buildWeb(join(stage, 'dist', 'web'));
    const out = execFileSync('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', destination], { cwd: stage, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
    const [packed] = JSON.parse(out) as { filename: string; files: { path: string }[] }[];
    return { tarball: resolve(destination, packed.filename), files: packed.files.map((f) => f.path).sort() };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

interface LockEntry {
  readonly name?: string;
  readonly version?: string;
  readonly resolved?: string;
  readonly link?: boolean;
  readonly dev?: boolean;
  readonly [field: string]: unknown;
}

export interface InstallResult {
  readonly status: number | null;
  readonly stderr: string;
}

/**
 * Installs `tarball` into `project` (an empty folder) offline, with exactly the dependency versions
 * of dpfit's package-lock.json (module comment). Returns npm's status and stderr: `ENOTCACHED` in
 * it means npm's cache lacks one of those tarballs (run `npm ci` first).
 */
export function installPacked(tarball: string, project: string): InstallResult {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as Record<string, unknown> & { version: string };
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim().replace(/\/?$/, '/');
  const spec = `file:${relative(project, tarball)}`;
  const packages: Record<string, unknown> = {
    '': { name: basename(project), version: '1.0.0', dependencies: { dpfit: spec } },
    'node_modules/dpfit': {
      version: pkg.version,
      resolved: spec,
      integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
      ...Object.fromEntries(['license', 'dependencies', 'optionalDependencies', 'bin', 'engines'].filter((k) => pkg[k] !== undefined).map((k) => [k, pkg[k]])),
    },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev === true) continue;
    const name = entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length);
    packages[path] = entry.resolved !== undefined || entry.link === true ? entry : { ...entry, resolved: `${registry}${name}/-/${name.split('/').pop()}-${entry.version}.tgz` };
  }
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: basename(project), version: '1.0.0', private: true, dependencies: { dpfit: spec } }, null, 2));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify({ name: basename(project), version: '1.0.0', lockfileVersion: 3, requires: true, packages }, null, 2));
  // --ignore-scripts: nothing to build, and no install script may reach the network.
  const result = spawnSync('npm', ['ci', '--offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: project, encoding: 'utf8' });
  return { status: result.status, stderr: result.stderr };
}

const isEntryPoint = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) {
  const packed = await packDpfit(resolve(process.argv[2] ?? '.'));
  process.stdout.write(`${packed.tarball} (${packed.files.length} files)\n`);
}
