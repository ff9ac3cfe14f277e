/**
 * Every method with `dpfit train`'s DEFAULTS (`src/learners/defaults.ts`: public rules, nothing
 * read from the data) on UCI Adult at epsilon = 1, delta = 1e-5: test accuracy against the
 * majority class (76.38 % of adult.test). Runs the real CLI, as a user would:
 *
 *   dpfit train --data data/adult/adult.data --schema data/adult/adult.schema.json --method M --epsilon 1 --out m.json
 *   dpfit evaluate --model m.json --data data/adult/adult.test
 *
 * with seeds 1..SEEDS (seeded noise: an experiment, not a release). RGM (ridge regression, `000`)
 * is run with `--loss squared` and reported as refused when its Thm. 1 floor is above epsilon.
 * objpert runs with its research opt-in `--accept-no-guarantee` and is labelled NOT private: its
 * released minimiser identifies the dataset (`test/learners/perturbation/grid-inversion.test.ts`).
 *
 * Run: node --import tsx experiments/adult-defaults.ts [--seeds N] [--methods M,M] (needs data/adult: dpfit data fetch adult)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const args = process.argv.slice(2);
const SEEDS = args.includes('--seeds') ? Number(args[args.indexOf('--seeds') + 1]) : 3;
const DATA = join('data', 'adult');
if (!existsSync(join(DATA, 'adult.data'))) {
  process.stdout.write('data/adult is missing (dpfit data fetch adult --dir data/adult)\n');
  process.exit(0);
}
const ALL_METHODS: readonly (readonly string[])[] = [['dpsgd'], ['dpgd'], ['shuffled'], ['output'], ['output-sgd'], ['objpert', '--accept-no-guarantee'], ['amp'], ['rgm', '--loss', 'squared']];
/** --methods M,M: only these rows (e.g. after changing one method's defaults). */
const ONLY = args.includes('--methods') ? new Set(args[args.indexOf('--methods') + 1].split(',')) : undefined;
const METHODS = ALL_METHODS.filter(([method]) => ONLY === undefined || ONLY.has(method));
/** How a method's row is labelled (objpert is research only: no guarantee). */
const LABELS: Readonly<Record<string, string>> = { objpert: '`objpert` (`--accept-no-guarantee`: NOT private, research only)' };
const dir = mkdtempSync(join(tmpdir(), 'dpfit-defaults-'));
const cli = (...argv: string[]) => spawnSync(process.execPath, ['--import', 'tsx', join('src', 'cli', 'main.ts'), ...argv], { encoding: 'utf8' });
const started = performance.now();
const rows: string[] = ['| method | accuracy (mean, min-max over seeds) | beats the majority class (76.38 %) | s per run |', '| --- | --- | --- | --- |'];
try {
  for (const [method, ...extra] of METHODS) {
    const accuracies: number[] = [];
    let refusal: string | undefined;
    const t0 = performance.now();
    for (let seed = 1; seed <= SEEDS && refusal === undefined; seed++) {
      const model = join(dir, `${method}-${seed}.json`);
      const trained = cli('train', '--data', join(DATA, 'adult.data'), '--schema', join(DATA, 'adult.schema.json'), '--method', method, ...extra, '--epsilon', '1', '--seed', String(seed), '--out', model);
      if (trained.status !== 0) {
        refusal = trained.stderr.trim().split('\n').pop();
        break;
      }
      const evaluated = cli('evaluate', '--model', model, '--data', join(DATA, 'adult.test'), '--json');
      accuracies.push(JSON.parse(evaluated.stdout).accuracy);
    }
    const seconds = ((performance.now() - t0) / 1000 / Math.max(1, accuracies.length)).toFixed(1);
    if (refusal !== undefined) {
      rows.push(`| ${LABELS[method] ?? method} | refused: ${refusal.replace(/\|/g, '/')} | — | — |`);
    } else {
      const mean = accuracies.reduce((a, b) => a + b, 0) / accuracies.length;
      const pct = (v: number) => (100 * v).toFixed(2);
      rows.push(`| ${LABELS[method] ?? method} | ${pct(mean)} % (${pct(Math.min(...accuracies))}-${pct(Math.max(...accuracies))}) | ${accuracies.every((a) => a > 0.7638) ? 'yes' : 'NO'} | ${seconds} |`);
    }
    process.stderr.write(`${rows[rows.length - 1]}\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
process.stdout.write(`# dpfit train defaults on Adult, epsilon 1, delta 1e-5 (${SEEDS} seeds, ${((performance.now() - started) / 1000).toFixed(0)} s)\n\n${rows.join('\n')}\n`);
