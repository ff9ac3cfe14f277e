/**
 * PLD accounting speed and tightness: epsilon of DP-SGD (z = 1.1, q = 0.01, 1e5 steps,
 * delta = 1e-5) by dpfit's PLD accountant — the whole computation in a fresh accountant each time,
 * no cache — next to Python's dp_accounting PLD accountant (its default grid, 1e-4) measured in the
 * same run when python3 can import it (set DPFIT_DP_ACCOUNTING_PATH to a directory to add to
 * PYTHONPATH). dpfit also prints epsilonLower, a rigorous lower bound on the exact epsilon, so
 * the tightness of both upper bounds is visible. Target: faster than dp_accounting at
 * equal or better tightness.
 *
 * Then noise calibration (once 1.0-1.8x slower than dp_accounting's): the smallest z for DP-SGD at
 * q = 0.01 over 1e3 and 1e4 steps to reach epsilon 1 at delta 1e-5, by dpfit's `calibrateDpsgd`
 * with the PLD accountant (`PLD_CALIBRATION`, as `dpfit calibrate dpsgd --accountant pld`: relative
 * tolerance 1e-6, the steps unchecked, the answer checked by the delta query)
 * and by dp_accounting's `calibrate_dp_mechanism` with its PLD accountant, each timed whole in the
 * same run.
 *
 * `npm run bench -- pld`, or standalone: `node --import tsx bench/pld.ts`.
 */
import { pathToFileURL } from 'node:url';
import { median, runPythonReference } from './reference.js';
import { recordSpeed } from './speed-summary.js';
import { calibrateDpsgd, dpsgdEvent, PLD_CALIBRATION } from '../src/accounting/calibration/calibrate.js';
import { pldEpsilon, type PldAccountantOptions } from '../src/accounting/pld/accountant.js';

const Q = 0.01;
const Z = 1.1;
const STEPS = 100_000;
const DELTA = 1e-5;

const PYTHON = `
import time, statistics
from dp_accounting import dp_event
from dp_accounting.pld import pld_privacy_accountant as pld
def run():
    a = pld.PLDAccountant()
    a.compose(dp_event.PoissonSampledDpEvent(${Q}, dp_event.GaussianDpEvent(${Z})), ${STEPS})
    return a.get_epsilon(${DELTA})
times = []
for _ in range(3):
    t = time.perf_counter(); eps = run(); times.append(time.perf_counter() - t)
print(statistics.median(times) * 1000, repr(eps))
`;

const CALIBRATION_STEPS = [1000, 10_000];
const PYTHON_CALIBRATION = `
import time
import dp_accounting
from dp_accounting.pld import pld_privacy_accountant as pld
out = []
for steps in ${JSON.stringify(CALIBRATION_STEPS)}:
    make = lambda z: dp_accounting.SelfComposedDpEvent(dp_accounting.PoissonSampledDpEvent(${Q}, dp_accounting.GaussianDpEvent(z)), steps)
    t = time.perf_counter(); z = dp_accounting.calibrate_dp_mechanism(pld.PLDAccountant, make, 1.0, ${DELTA}); out += [(time.perf_counter() - t) * 1000, z]
print(*[repr(v) for v in out])
`;

/** dpfit's and dp_accounting's PLD noise calibrations, timed whole. */
function runCalibrationBench(): void {
  process.stdout.write(`noise calibration by PLD: DP-SGD q=${Q}, target epsilon 1 at delta ${DELTA}\n`);
  const mine = CALIBRATION_STEPS.map((steps) => {
    const start = performance.now();
    const result = calibrateDpsgd({ samplingProbability: Q, steps, targetEpsilon: 1, delta: DELTA, ...PLD_CALIBRATION });
    return { steps, ms: performance.now() - start, z: result.noiseMultiplier };
  });
  const reference = runPythonReference(PYTHON_CALIBRATION, 600_000);
  mine.forEach((m, i) => {
    recordSpeed({ work: `noise for epsilon 1 by PLD, DP-SGD ${m.steps} steps`, peer: "dp_accounting's PLD", ratio: reference === undefined ? NaN : m.ms / reference[2 * i], target: 1, clock: 'wall' });
    const line = `  ${String(m.steps).padStart(6)} steps: dpfit ${m.ms.toFixed(0)} ms, z = ${m.z.toPrecision(10)}`;
    if (reference === undefined) {
      process.stdout.write(`${line}; dp_accounting not importable by python3 (skipped)\n`);
      return;
    }
    const [ms, z] = [reference[2 * i], reference[2 * i + 1]];
    process.stdout.write(`${line}; dp_accounting ${ms.toFixed(0)} ms, z = ${z.toPrecision(10)}: dpfit ${(ms / m.ms).toFixed(1)}x ${ms >= m.ms ? 'faster' : 'slower'}, z ${m.z >= z ? '>=' : '<'} dp_accounting's by ${((m.z / z - 1) * 1e6).toFixed(2)} ppm\n`);
  });
}

function pythonReference(): { ms: number; epsilon: number } | string {
  const numbers = runPythonReference(PYTHON, 300_000);
  if (numbers === undefined) return 'dp_accounting not importable by python3 (skipped)';
  const [ms, epsilon] = numbers;
  return { ms, epsilon };
}

function timeDpfit(options: PldAccountantOptions, runs: number): { ms: number; coldMs: number; epsilon: number; lower: number; h: number; n: number } {
  const event = dpsgdEvent(Q, Z, STEPS);
  const first = performance.now();
  const r = pldEpsilon(event, DELTA, options);
  const coldMs = performance.now() - first;
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    pldEpsilon(event, DELTA, options);
    times.push(performance.now() - start);
  }
  return { ms: median(times), coldMs, epsilon: r.epsilon, lower: r.epsilonLower ?? NaN, h: r.discretization.valueDiscretization, n: r.discretization.gridSize };
}

export async function runPldBench(): Promise<void> {
  process.stdout.write(`epsilon of DP-SGD by PLD (q=${Q}, z=${Z}, ${STEPS} steps, delta=${DELTA})\n`);
  const configurations: { label: string; options: PldAccountantOptions }[] = [
    { label: 'dpfit PLD (default, relativeAccuracy 1e-4)', options: {} },
    { label: 'dpfit PLD (relativeAccuracy 3e-5)', options: { relativeAccuracy: 3e-5 } },
  ];
  const results = configurations.map(({ label, options }) => ({ label, ...timeDpfit(options, 5) }));
  for (const r of results) {
    process.stdout.write(
      `  ${r.label.padEnd(44)} ${r.ms.toFixed(0).padStart(6)} ms median (first ${r.coldMs.toFixed(0)} ms)  epsilon ${r.epsilon.toFixed(6)}  epsilonLower ${r.lower.toFixed(6)}  (h ${r.h.toExponential(2)}, ${r.n} points)\n`,
    );
  }
  const reference = pythonReference();
  if (typeof reference === 'string') {
    process.stdout.write(`  dp_accounting PLD  ${reference}\n`);
    runCalibrationBench();
    return;
  }
  process.stdout.write(`  ${'dp_accounting PLD (grid 1e-4, pessimistic)'.padEnd(44)} ${reference.ms.toFixed(0).padStart(6)} ms median  epsilon ${reference.epsilon.toFixed(6)}\n`);
  for (const r of results) {
    const speed = reference.ms / r.ms;
    const tighter = r.epsilon <= reference.epsilon;
    process.stdout.write(
      `  ${r.label}: ${speed.toFixed(1)}x ${speed >= 1 ? 'faster' : 'slower'}, epsilon ${tighter ? '<=' : '>'} dp_accounting's (${((r.epsilon / reference.epsilon - 1) * 1e6).toFixed(2)} ppm); target ${speed > 1 && tighter ? 'met' : 'MISSED'}\n`,
    );
  }
  runCalibrationBench();
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runPldBench();
