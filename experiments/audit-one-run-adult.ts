/**
 * One-run audits (Steinke, Nasr & Jagielski 2023; `src/audit/one-run.ts`) of DP-SGD on UCI Adult
 * (32,561 training rows) at epsilon 8, delta 1e-5, with 1,000 canaries and dpfit train's default
 * options (batch 256, 10 epochs, clipping norm and step from the schema's bounds), repeated: each
 * repeat is ONE training. Both scorings: the last model's canary weights, and every iterate's
 * per-step likelihood ratio (accountant threat model). Secure randomness: each run differs.
 *
 * Run: node --import tsx experiments/audit-one-run-adult.ts [--repeats N] [--canaries M]  (needs data/adult: dpfit data fetch adult)
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { oneRunAudit } from '../src/audit/one-run.js';
import { loadDataset, readSchemaFile } from '../src/data/node/read.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const repeats = flag('--repeats', 5);
const canaries = flag('--canaries', 1000);
const DATA = join('data', 'adult');
if (!existsSync(join(DATA, 'adult.data'))) {
  process.stdout.write('data/adult is missing (dpfit data fetch adult --dir data/adult)\n');
  process.exit(1);
}
const prepared = await loadDataset(join(DATA, 'adult.data'), await readSchemaFile(join(DATA, 'adult.schema.json')), { droppedRows: 'zeroRows' });
const lines = ['| threat model | accounted | lower bounds (95 %), one training each | right guesses of 200 | seconds per training |', '| --- | --- | --- | --- | --- |'];
for (const threatModel of ['lastModel', 'accountant'] as const) {
  const bounds: string[] = [];
  const right: number[] = [];
  let accounted = 0;
  const t0 = performance.now();
  for (let i = 0; i < repeats; i++) {
    const r = oneRunAudit(prepared, { method: 'dpsgd', epsilon: 8, delta: 1e-5, canaries, threatModel });
    bounds.push(r.epsilonLower.toFixed(2));
    right.push(r.correct);
    accounted = r.epsilonAccounted;
  }
  lines.push(`| ${threatModel === 'lastModel' ? 'last-model' : 'accountant'} | ${accounted.toFixed(3)} | ${bounds.join(', ')} | ${right.join(', ')} | ${((performance.now() - t0) / 1000 / repeats).toFixed(1)} |`);
  process.stdout.write(`${lines[lines.length - 1]}\n`);
}
process.stdout.write(`\n${lines.join('\n')}\n\n${prepared.dataset.n} rows, ${canaries} canaries, dpsgd at epsilon 8\n`);
