/**
 * Accounting speed: epsilon of DP-SGD (z = 1.1, q = 0.01, 1e5 steps, delta = 1e-5) by dpfit's RDP
 * accountant — the whole computation in a fresh accountant each time, no cache — next to Python's
 * dp_accounting RDP accountant measured in the same run when python3 can import it (set
 * DPFIT_DP_ACCOUNTING_PATH to a directory to add to PYTHONPATH). Target: under 20 ms.
 *
 * `npm run bench -- accounting`, or standalone: `node --import tsx bench/accounting.ts`.
 */
import { pathToFileURL } from 'node:url';
import { median, runPythonReference } from './reference.js';
import { dpsgdEvent } from '../src/accounting/calibration/calibrate.js';
import { rdpEpsilon } from '../src/accounting/rdp/accountant.js';

const Q = 0.01;
const Z = 1.1;
const STEPS = 100_000;
const DELTA = 1e-5;

const PYTHON = `
import time, statistics
from dp_accounting import dp_event
from dp_accounting.rdp import rdp_privacy_accountant as rdp
def run():
    a = rdp.RdpAccountant()
    a.compose(dp_event.PoissonSampledDpEvent(${Q}, dp_event.GaussianDpEvent(${Z})), ${STEPS})
    return a.get_epsilon(${DELTA})
run()
times = []
for _ in range(15):
    t = time.perf_counter(); eps = run(); times.append(time.perf_counter() - t)
print(statistics.median(times) * 1000, eps)
`;

function pythonReference(): { ms: number; epsilon: number } | string {
  const numbers = runPythonReference(PYTHON, 120_000);
  if (numbers === undefined) return 'dp_accounting not importable by python3 (skipped)';
  const [ms, epsilon] = numbers;
  return { ms, epsilon };
}

export async function runAccountingBench(): Promise<void> {
  const event = dpsgdEvent(Q, Z, STEPS);
  const first = performance.now();
  const { epsilon } = rdpEpsilon(event, DELTA);
  const coldMs = performance.now() - first;
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    const start = performance.now();
    rdpEpsilon(event, DELTA);
    times.push(performance.now() - start);
  }
  const dpfitMs = median(times);
  process.stdout.write(`epsilon of DP-SGD (q=${Q}, z=${Z}, ${STEPS} steps, delta=${DELTA})\n`);
  process.stdout.write(`  dpfit RDP          ${dpfitMs.toFixed(2)} ms median (first call ${coldMs.toFixed(1)} ms)  epsilon ${epsilon.toFixed(6)}  target < 20 ms: ${dpfitMs < 20 ? 'met' : 'MISSED'}\n`);
  const reference = pythonReference();
  if (typeof reference === 'string') {
    process.stdout.write(`  dp_accounting RDP  ${reference}\n`);
  } else {
    process.stdout.write(
      `  dp_accounting RDP  ${reference.ms.toFixed(2)} ms median  epsilon ${reference.epsilon.toFixed(6)}  (dpfit is ${(reference.ms / dpfitMs).toFixed(1)}x faster)\n`,
    );
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await runAccountingBench();
