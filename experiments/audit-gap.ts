/**
 * dpfit's upper bound (its accountant) against `dpfit audit`'s empirical lower bound (95 %
 * confidence), in both threat models, for DP-GD (full batch, replace-one) and DP-SGD (Poisson
 * batches with q = 10/101, add/remove-one), 20 steps, delta = 1e-5, at targets 0.5 to 8:
 *   - last-model: the released model only, worst-case canary record, trained through the real
 *     learners; 41 thresholds fixed in advance, Clopper-Pearson with a union bound;
 *   - accountant: every step's noisy sum, a gradient canary at every step (simulated canary
 *     coordinates, `src/audit/gradient-canary.ts`); DP-GD's bound on the Gaussian shift's mu,
 *     DP-SGD's bound on the subsampled Gaussian's parameters from the released values, composed by
 *     an optimistic privacy-loss distribution (`src/audit/bounds/subsampled-gaussian-bound.ts`).
 * Runs on worker threads with secure randomness (no seed: each run of the script differs).
 *
 * Run: node --import tsx experiments/audit-gap.ts [--runs N] [--threads N] [--threat-model lastModel|accountant]  (default 2000 runs per neighbour, every CPU)
 */
import { availableParallelism } from 'node:os';
import { auditLearnerParallel } from '../src/audit/canary-audit.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const runs = flag('--runs', 2000);
const threads = flag('--threads', availableParallelism());
const started = performance.now();
const lines = ['| threat model | method | accounted (upper) | audit lower bound (95 %) | lower / upper | statistic | others | seconds |', '| --- | --- | --- | --- | --- | --- | --- | --- |'];
const models = args.includes('--threat-model') ? [args[args.indexOf('--threat-model') + 1] as 'lastModel' | 'accountant'] : (['lastModel', 'accountant'] as const);
for (const threatModel of models) {
  for (const method of ['dpgd', 'dpsgd'] as const) {
    for (const epsilon of [0.5, 1, 2, 4, 8]) {
      const t0 = performance.now();
      const r = await auditLearnerParallel({ method, epsilon, delta: 1e-5, runs, threatModel }, threads);
      lines.push(`| ${threatModel === 'lastModel' ? 'last-model' : 'accountant'} | ${method} | ${r.epsilonAccounted.toFixed(3)} | ${r.epsilonLower.toFixed(3)} | ${(r.epsilonLower / r.epsilonAccounted).toFixed(2)} | ${r.statistic} | ${Object.entries(r.bounds).filter(([k]) => k !== r.statistic).map(([k, v]) => `${k} ${(v as number).toFixed(2)}`).join(', ')} | ${((performance.now() - t0) / 1000).toFixed(1)} |`);
      process.stdout.write(`${lines[lines.length - 1]}\n`);
    }
  }
}
process.stdout.write(`\n${lines.join('\n')}\n\n${runs} runs per neighbour, ${threads} threads; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
