/**
 * Long heterogeneous DP-SGD schedules: T steps with Poisson sampling q = 0.01 and a
 * noise multiplier that changes at every step, z_t = 0.8 + 0.5 t / T, epsilon at delta = 1e-5.
 *
 * - T = 1e5: dpfit's RDP accountant (chord bounds, `rdp/sampled-gaussian-schedule.ts`; target
 *   under 5 s), the same accounted step by step (`scheduleGrid: Infinity`, what every release
 *   cost before: its epsilon shows how much the chords add), and dpfit's PLD accountant (buckets,
 *   `pld/schedule-buckets.ts`, with epsilonLower).
 * - dp_accounting on the same event where it is feasible: its RDP accountant costs ~25 ms per
 *   distinct step here (~40 min at T = 1e5, run it with DPFIT_BENCH_FULL_REFERENCE=1), so it is
 *   timed at T = 1000 (RDP) and T = 100 (PLD) next to dpfit on those same events, and its T = 1e5
 *   time is extrapolated (linear in T: one curve per distinct step).
 *
 * Every dpfit time is the whole computation in a fresh accountant (events built beforehand), the
 * median of a few runs after a first (cold) one. `npm run bench -- schedule`, or standalone:
 * `node --import tsx bench/schedule.ts` (DPFIT_DP_ACCOUNTING_PATH as for the other benchmarks).
 */
import { pathToFileURL } from 'node:url';
import { median, runPythonReference } from './reference.js';
import type { DpEvent } from '../src/accounting/events/types.js';
import { composeEvent, gaussianEvent, poissonSampledEvent } from '../src/accounting/events/constructors.js';
import { PldAccountant } from '../src/accounting/pld/accountant.js';
import { RdpAccountant, type RdpAccountantOptions } from '../src/accounting/rdp/accountant.js';

const Q = 0.01;
const DELTA = 1e-5;
const STEPS = 100_000;
const TARGET_SECONDS = 5;

function scheduleEvent(steps: number): DpEvent {
  return composeEvent(Array.from({ length: steps }, (_, t) => poissonSampledEvent(Q, gaussianEvent(0.8 + (0.5 * t) / steps))));
}

function python(steps: number, accountant: 'rdp' | 'pld'): string {
  const module = accountant === 'rdp' ? 'from dp_accounting.rdp import rdp_privacy_accountant as m\nA = m.RdpAccountant' : 'from dp_accounting.pld import pld_privacy_accountant as m\nA = m.PLDAccountant';
  return `
import time
from dp_accounting import dp_event
${module}
events = [dp_event.PoissonSampledDpEvent(${Q}, dp_event.GaussianDpEvent(0.8 + 0.5 * t / ${steps})) for t in range(${steps})]
start = time.perf_counter()
a = A()
for e in events:
    a.compose(e)
eps = a.get_epsilon(${DELTA})
print((time.perf_counter() - start) * 1000, repr(float(eps)))
`;
}

function reference(steps: number, accountant: 'rdp' | 'pld', timeoutMs: number): { ms: number; epsilon: number } | undefined {
  const numbers = runPythonReference(python(steps, accountant), timeoutMs);
  return numbers === undefined ? undefined : { ms: numbers[0], epsilon: numbers[1] };
}

/** Median time (ms) of `runs` fresh computations after a cold one, and the result. */
function time<T>(runs: number, compute: () => T): { ms: number; coldMs: number; result: T } {
  let start = performance.now();
  const result = compute();
  const coldMs = performance.now() - start;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    start = performance.now();
    compute();
    times.push(performance.now() - start);
  }
  return { ms: runs === 0 ? coldMs : median(times), coldMs, result };
}

const rdp = (event: DpEvent, options: RdpAccountantOptions = {}) => new RdpAccountant(options).compose(event).getEpsilon(DELTA);
const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const out = (line: string) => process.stdout.write(`${line}\n`);

export async function runScheduleBench(): Promise<void> {
  out(`heterogeneous DP-SGD: q = ${Q}, z_t = 0.8 + 0.5 t / T (a different noise multiplier at every step), delta = ${DELTA}`);
  const event = scheduleEvent(STEPS);
  out(`T = ${STEPS}:`);
  const fast = time(3, () => rdp(event));
  out(
    `  dpfit RDP, chord bounds     ${seconds(fast.ms)} median (first call ${seconds(fast.coldMs)})  epsilon ${fast.result.epsilon.toFixed(9)}  target < ${TARGET_SECONDS} s: ${fast.ms < TARGET_SECONDS * 1000 ? 'met' : 'MISSED'}`,
  );
  const exact = time(0, () => rdp(event, { scheduleGrid: Infinity }));
  const looser = fast.result.epsilon / exact.result.epsilon - 1;
  out(`  dpfit RDP, step by step     ${seconds(exact.ms)}  epsilon ${exact.result.epsilon.toFixed(9)}  (the chords add ${looser.toExponential(2)} relative; ${(exact.ms / fast.ms).toFixed(1)}x slower)`);
  let lastShown = -1;
  const pld = time(0, () =>
    new PldAccountant({
      onProgress: (done, total) => {
        const tenth = Math.floor((10 * done) / total);
        if (process.stderr.isTTY && tenth !== lastShown) process.stderr.write(`\r  (PLD ${(lastShown = tenth) * 10} %)${done === total ? '\n' : ''}`);
      },
    })
      .compose(event)
      .getEpsilon(DELTA),
  );
  out(`  dpfit PLD, buckets          ${seconds(pld.ms)}  epsilon ${pld.result.epsilon.toFixed(6)}  epsilonLower ${pld.result.epsilonLower?.toFixed(6)}  (${pld.result.warnings.length} note(s))`);
  const full = process.env.DPFIT_BENCH_FULL_REFERENCE === '1' ? reference(STEPS, 'rdp', 4 * 3600_000) : undefined;

  // dp_accounting where feasible: the same schedule shape with fewer steps, both libraries on the same event.
  const small = 1000;
  const smallEvent = scheduleEvent(small);
  const smallFast = time(5, () => rdp(smallEvent));
  const smallRef = reference(small, 'rdp', 600_000);
  out(`T = ${small}:`);
  out(`  dpfit RDP                   ${smallFast.ms.toFixed(1)} ms median  epsilon ${smallFast.result.epsilon.toFixed(9)}`);
  if (smallRef === undefined) out('  dp_accounting RDP           not importable by python3 (skipped; set DPFIT_DP_ACCOUNTING_PATH)');
  else {
    out(`  dp_accounting RDP           ${seconds(smallRef.ms)}  epsilon ${smallRef.epsilon.toFixed(9)}  (dpfit is ${(smallRef.ms / smallFast.ms).toFixed(0)}x faster)`);
  }
  const tiny = 100;
  const tinyEvent = scheduleEvent(tiny);
  const tinyPld = time(2, () => new PldAccountant().compose(tinyEvent).getEpsilon(DELTA));
  const tinyRef = smallRef === undefined ? undefined : reference(tiny, 'pld', 600_000);
  out(`T = ${tiny}:`);
  out(`  dpfit PLD                   ${tinyPld.ms.toFixed(0)} ms median  epsilon ${tinyPld.result.epsilon.toFixed(6)}  epsilonLower ${tinyPld.result.epsilonLower?.toFixed(6)}`);
  if (tinyRef !== undefined) out(`  dp_accounting PLD           ${seconds(tinyRef.ms)}  epsilon ${tinyRef.epsilon.toFixed(6)}  (dpfit is ${(tinyRef.ms / tinyPld.ms).toFixed(0)}x faster)`);

  out(`dp_accounting at T = ${STEPS}:`);
  if (full !== undefined) {
    out(`  dp_accounting RDP           ${seconds(full.ms)}  epsilon ${full.epsilon.toFixed(9)}  (dpfit's chords are ${(full.ms / fast.ms).toFixed(0)}x faster)`);
  } else if (smallRef !== undefined) {
    const extrapolated = (smallRef.ms * STEPS) / small;
    out(
      `  dp_accounting RDP           not run: ~${(extrapolated / 60_000).toFixed(0)} min extrapolated from T = ${small} (DPFIT_BENCH_FULL_REFERENCE=1 runs it); dpfit's chords ~${(extrapolated / fast.ms).toFixed(0)}x faster`,
    );
    out('  dp_accounting PLD           not run: it composes one PLD per step (hours at T = 1e5)');
  } else out('  dp_accounting               not importable by python3 (skipped)');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runScheduleBench();
