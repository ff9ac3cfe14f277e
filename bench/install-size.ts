/**
 * `npm run install-size`: what installing dpfit costs on disk. Packs the package as it would be
 * published (`npm pack`, which builds it), installs the tarball into two empty projects, one
 * with the optional dependencies (`npm install dpfit`: DuckDB for Parquet and the federated
 * ledger) and one without (`npm install dpfit --omit=optional`: accounting, mechanisms, learners
 * on CSV data), and prints each node_modules' size (apparent bytes of its files, and what `du`
 * says it occupies) and package count, then runs a few commands in each install to show what
 * works without the optional packages. Needs the npm registry (dependencies are downloaded).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Apparent size of the files under `dir` and how many package.json files sit at a package root. */
function measure(dir: string): { bytes: number; files: number; packages: number } {
  let bytes = 0;
  let files = 0;
  let packages = 0;
  const walk = (path: string, depth: number) => {
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      const child = join(path, entry.name);
      if (entry.isDirectory()) walk(child, depth + 1);
      else if (entry.isFile()) {
        bytes += lstatSync(child).size;
        files++;
        if (entry.name === 'package.json' && /node_modules[\\/](@[^\\/]+[\\/])?[^\\/@]+$/.test(path)) packages++;
      }
    }
  };
  walk(dir, 0);
  return { bytes, files, packages };
}

function diskUsage(dir: string): number {
  const out = execFileSync('du', ['-sk', dir], { encoding: 'utf8' });
  return Number(out.split(/\s/)[0]) * 1024;
}

const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;

const work = mkdtempSync(join(tmpdir(), 'dpfit-install-size-'));
try {
  process.stdout.write('packing dpfit (npm pack builds it first)...\n');
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })) as { filename: string; size: number; unpackedSize: number; entryCount: number }[];
  const tarball = join(work, packed[0].filename);
  process.stdout.write(`tarball ${packed[0].filename}: ${mb(packed[0].size)} packed, ${mb(packed[0].unpackedSize)} unpacked, ${packed[0].entryCount} files\n\n`);

  const variants = [
    { name: 'npm install dpfit', flags: [] as string[] },
    { name: 'npm install dpfit --omit=optional', flags: ['--omit=optional'] },
  ];
  const checks: { label: string; argv: string[] }[] = [
    { label: 'epsilon dpsgd', argv: ['epsilon', 'dpsgd', '--dataset-size', '60000', '--batch-size', '2400', '--epochs', '90', '--noise-multiplier', '1.5', '--delta', '1e-5', '--json'] },
    { label: 'demo (train on CSV-like data)', argv: ['demo', '--json'] },
    { label: 'curve --out c.svg', argv: ['curve', '--event', '{"kind":"gaussian","noiseMultiplier":2}', '--out', 'c.svg'] },
    { label: 'curve --out c.png', argv: ['curve', '--event', '{"kind":"gaussian","noiseMultiplier":2}', '--out', 'c.png'] },
    { label: 'data inspect x.parquet', argv: ['data', 'inspect', 'x.parquet'] },
  ];
  const rows: string[] = [];
  for (const variant of variants) {
    const project = join(work, variant.flags.length === 0 ? 'full' : 'lean');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'install-size-probe', version: '1.0.0', private: true, type: 'module' }));
    writeFileSync(join(project, 'x.parquet'), 'not parquet');
    const started = Date.now();
    execFileSync('npm', ['install', tarball, '--no-audit', '--no-fund', '--loglevel=error', ...variant.flags], { cwd: project, stdio: ['ignore', 'inherit', 'inherit'] });
    const seconds = (Date.now() - started) / 1000;
    const modules = join(project, 'node_modules');
    const size = measure(modules);
    const own = measure(join(modules, 'dpfit'));
    rows.push(`| \`${variant.name}\` | ${mb(size.bytes)} | ${mb(diskUsage(modules))} | ${size.packages} | ${mb(own.bytes)} |`);
    process.stdout.write(`${variant.name}: node_modules ${mb(size.bytes)} in ${size.files} files (${mb(diskUsage(modules))} on disk), ${size.packages} packages; installed in ${seconds.toFixed(1)} s\n`);
    const top = readdirSync(modules, { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .flatMap((e) => (e.name.startsWith('@') ? readdirSync(join(modules, e.name)).map((n) => `${e.name}/${n}`) : [e.name]))
      .map((name) => ({ name, bytes: measure(join(modules, name)).bytes }))
      .sort((a, b) => b.bytes - a.bytes)
      .slice(0, 6);
    process.stdout.write(`  largest: ${top.map((t) => `${t.name} ${mb(t.bytes)}`).join(', ')}\n`);
    for (const check of checks) {
      const result = spawnSync(process.execPath, [join(modules, 'dpfit', 'bin', 'dpfit.js'), ...check.argv], { cwd: project, encoding: 'utf8' });
      const said = (result.status === 0 ? result.stdout : result.stderr).trim().split('\n')[0].slice(0, 140);
      process.stdout.write(`  dpfit ${check.label}: exit ${result.status}  ${said}\n`);
    }
  }
  process.stdout.write(`\n| install | node_modules (file bytes) | on disk (du) | packages | dpfit itself |\n| --- | --- | --- | --- | --- |\n${rows.join('\n')}\n`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
