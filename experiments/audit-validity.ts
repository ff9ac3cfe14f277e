/**
 * The accountant-model audit's validity and power over seeds: for DP-GD and DP-SGD at epsilon 2
 * and 4 (delta 1e-5, 20 steps, 2000 runs per neighbour, 95 % confidence), 100 seeded audits each,
 * counting how often the accountant's own (true) claim is refuted (the verdict decides at
 * refuteConfidence = 1 - 0.05/100, so over the 100 seeds the chance of any refutation of a true
 * claim is <= 5 %) and how often a claim ten times too small is refuted at that confidence (it
 * should be every time); with the range of lower / upper (the 95 % epsilonLower).
 *
 * Run: node --import tsx experiments/audit-validity.ts [--seeds N] [--runs N] [--method dpgd|dpsgd]
 */
import { auditLearner } from '../src/audit/canary-audit.js';
import { seededRng } from '../src/random/rng.js';

const args = process.argv.slice(2);
const flag = (name: string, fallback: number) => (args.includes(name) ? Number(args[args.indexOf(name) + 1]) : fallback);
const seeds = flag('--seeds', 100);
const runs = flag('--runs', 2000);
const methods = args.includes('--method') ? [args[args.indexOf('--method') + 1] as 'dpgd' | 'dpsgd'] : (['dpgd', 'dpsgd'] as const);
const started = performance.now();
const lines = ['| method | epsilon | seeds | true claim refuted | claim / 10 refuted | lower / upper: min, median, max | seconds |', '| --- | --- | --- | --- | --- | --- | --- |'];
for (const method of methods) {
  for (const epsilon of [2, 4]) {
    const t0 = performance.now();
    const ratios: number[] = [];
    let refutedTrue = 0;
    let refutedTenth = 0;
    for (let seed = 1; seed <= seeds; seed++) {
      const r = auditLearner({ method, epsilon, delta: 1e-5, runs, threatModel: 'accountant', rng: seededRng(1000 * epsilon + seed) });
      ratios.push(r.epsilonLower / r.epsilonAccounted);
      if (r.violated) refutedTrue++;
      if (r.refuteLower > r.epsilonAccounted / 10) refutedTenth++;
    }
    ratios.sort((a, b) => a - b);
    lines.push(`| ${method} | ${epsilon} | ${seeds} | ${refutedTrue} | ${refutedTenth} | ${ratios[0].toFixed(2)}, ${ratios[Math.floor(seeds / 2)].toFixed(2)}, ${ratios[seeds - 1].toFixed(2)} | ${((performance.now() - t0) / 1000).toFixed(0)} |`);
    process.stdout.write(`${lines[lines.length - 1]}\n`);
  }
}
process.stdout.write(`\n${lines.join('\n')}\n\n${runs} runs per neighbour; ${((performance.now() - started) / 1000).toFixed(0)} s\n`);
