/**
 * Packs dpfit as `npm pack` would publish it, without touching the working tree: the package's
 * files (package.json, README.md, LICENSE, bin/) are copied to a temporary folder, built there as
 * `npm run build` builds them (tsc -p tsconfig.build.json, then the calculator page into
 * dist/web), and packed by `npm pack --ignore-scripts` (the build is done; `prepare` would look
 * for sources the stage does not have). test/package-install.test.ts installs the tarball into an
 * empty project.
 *
 * Usage: node --import tsx scripts/pack.ts [DESTINATION]   (default: the current folder)
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
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

const isEntryPoint = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) {
  const packed = await packDpfit(resolve(process.argv[2] ?? '.'));
  process.stdout.write(`${packed.tarball} (${packed.files.length} files)\n`);
}
