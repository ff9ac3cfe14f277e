/**
 * Builds the privacy calculator page (web/) into a folder of static files: index.html and
 * calculator.css copied, web/calculator.ts and web/pld-worker.ts bundled by esbuild with dpfit's
 * own core (src/accounting, src/mechanisms, src/math, src/random) for the browser. `npm run build`
 * (and so `prepare`) writes dist/web/, which `dpfit calculator` serves and which can be hosted
 * anywhere as it is. The bundle must not pull in anything of Node: esbuild's browser platform
 * fails the build on a `node:` import.
 *
 * Usage: node --import tsx scripts/build-web.ts [OUT_DIR]   (default dist/web)
 */
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WEB = join(ROOT, 'web');

/** The static files the calculator needs, besides the bundles. */
export const CALCULATOR_STATIC_FILES: readonly string[] = ['index.html', 'calculator.css'];

/** Builds the calculator into `outDir` (emptied first: it holds this build's files only). */
export async function buildWeb(outDir: string): Promise<void> {
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  for (const file of CALCULATOR_STATIC_FILES) copyFileSync(join(WEB, file), join(outDir, file));
  await build({
    entryPoints: [join(WEB, 'calculator.ts'), join(WEB, 'pld-worker.ts')],
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    sourcemap: false,
    logLevel: 'warning',
    // The core is browser-safe by design (docs/architecture.md); a Node built-in here is a bug.
    external: [],
  });
}

const isEntryPoint = process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url);
if (isEntryPoint) await buildWeb(resolve(process.argv[2] ?? join(ROOT, 'dist', 'web')));
