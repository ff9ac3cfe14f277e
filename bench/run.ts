/**
 * `npm run bench -- <name>`: runs one benchmark (or all). Each benchmark times dpfit against a
 * reference measured in the same run and prints ratios (docs/design.md, "Benchmarks").
 */
import { speedSummary } from './speed-summary.js';

const BENCHMARKS: Record<string, () => Promise<void>> = {
  samplers: async () => (await import('./samplers.js')).runSamplersBench(),
  accounting: async () => (await import('./accounting.js')).runAccountingBench(),
  train: async () => (await import('./train.js')).runTrainBench(),
  kernel: async () => (await import('./kernel.js')).runKernelBench(),
  amp: async () => (await import('./amp.js')).runAmpBench(),
  dpsgd: async () => (await import('./dpsgd.js')).runDpSgdBench(),
  pld: async () => (await import('./pld.js')).runPldBench(),
  'pld-sweep': async () => (await import('./pld-sweep.js')).runPldSweepBench(),
  'pld-corners': async () => (await import('./pld-corners.js')).runPldCornersBench(),
  'wor-rdp-sweep': async () => (await import('./wor-rdp-sweep.js')).runWorRdpSweepBench(),
  schedule: async () => (await import('./schedule.js')).runScheduleBench(),
  data: async () => (await import('./data.js')).runDataBench(),
  memory: async () => (await import('./memory.js')).runMemoryBench(),
  ooc: async () => (await import('./out-of-core.js')).runOutOfCoreBench(),
  opacus: async () => (await import('./opacus.js')).runOpacusBench(),
};

/** Groups: `speed` is issue 28's table (every row with its peer in one run, then the summary). */
const GROUPS: Record<string, string[]> = { speed: ['kernel', 'amp', 'ooc', 'pld'] };

const requested = process.argv.slice(2);
const names = (requested.length === 0 ? Object.keys(BENCHMARKS) : requested).flatMap((name) => GROUPS[name] ?? [name]);
for (const name of names) {
  const run = BENCHMARKS[name];
  if (run === undefined) {
    process.stderr.write(`bench: unknown benchmark '${name}' (known: ${[...Object.keys(BENCHMARKS), ...Object.keys(GROUPS)].join(', ')})\n`);
    process.exitCode = 2;
    break;
  }
  process.stdout.write(`== ${name}\n`);
  await run();
}
process.stdout.write(speedSummary());
