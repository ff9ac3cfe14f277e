/**
 * dpfit's upper bound (its accountant) against `dpfit audit`'s empirical lower bound (worst-case
 * canary, 95 % confidence), for DP-GD (full batch: the canary's gradient is in every step, the
 * attack is nearly optimal) and DP-SGD (Poisson batches, q = 0.1: the canary is in a step with
 * probability q, and an attack on the final model sees only the sum), at several targets.
 *
 * Run: node --import tsx experiments/audit-gap.ts [--runs N]  (default 2000 per neighbour)
 */
import { auditLearner } from '../src/audit/canary-audit.js';

const args = process.argv.slice(2);
const runs = args.includes('--runs') ? Number(args[args.indexOf('--runs') + 1]) : 2000;
const started = performance.now();
const lines = ['| method | target epsilon | accounted (upper) | audit lower bound (95 %) | ratio | seconds |', '| --- | --- | --- | --- | --- | --- |'];
for (const method of ['dpgd', 'dpsgd'] as const) {
  for (const epsilon of [1, 2, 4, 8]) {
    const t0 = performance.now();
    const r = auditLearner({ method, epsilon, delta: 1e-5, runs: method === 'dpsgd' ? Math.floor(runs / 2) : runs });
    lines.push(`| ${method} | ${epsilon} | ${r.epsilonAccounted.toFixed(3)} | ${r.epsilonLower.toFixed(3)} | ${(r.epsilonLower / r.epsilonAccounted).toFixed(2)} | ${((performance.now() - t0) / 1000).toFixed(1)} |`);
    process.stdout.write(`${lines[lines.length - 1]}\n`);
  }
}
process.stdout.write(`\n${lines.join('\n')}\n\n${runs} runs per neighbour for DP-GD, ${Math.floor(runs / 2)} for DP-SGD; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
