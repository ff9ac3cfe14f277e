/**
 * `npm run bench -- wor-rdp-sweep`: dpfit's RDP for sampling WITHOUT replacement of a Gaussian
 * (rdp/without-replacement.ts: its own ternary-moment bound and WBK 2019 Thm. 27, the minimum per
 * moment) against dp_accounting's RDP accountant (WBK Thm. 27, `_compute_rdp_sample_wor_gaussian`)
 * over a seeded random sweep (WOR_SWEEP_POINTS, default 100; issue 29's example first): n
 * log-uniform in [10, 1e6], m in [1, n - 1] (ratio log-uniform in [1e-4, 0.95]), z log-uniform in
 * [0.3, 100], compositions log-uniform in [1, 1e5], delta log-uniform in [1e-12, 1e-3], and the
 * orders: dp_accounting's default grid, or 4-24 random orders in (1, 256] (half integers).
 * Both accountants get the same orders (dpfit also refines between them, which only lowers its
 * epsilon). Per point: both epsilons, and the orders at which dpfit's RDP exceeds
 * dp_accounting's by more than 1e-9 relative (with, at integer orders, Thm. 27 evaluated exactly by
 * mpmath: dp_accounting's rounding can put it below its own theorem). Prints the count of points where dpfit's epsilon is
 * above dp_accounting's (acceptance: 0) and both runtimes. With WOR_SWEEP_PLD=1 it also asks the
 * PLD accountant (read only: its upper end against the RDP answer).
 *
 * dp_accounting runs in python3 (set DPFIT_DP_ACCOUNTING_PATH to directories to add to PYTHONPATH,
 * e.g. a checkout's python/dp_accounting); without it the sweep says so and prints dpfit alone.
 */
import { pathToFileURL } from 'node:url';
import { spawnSync } from 'node:child_process';
import { gaussianEvent, sampledWithoutReplacementEvent, selfComposeEvent } from '../src/accounting/events/constructors.js';
import { RdpAccountant } from '../src/accounting/rdp/accountant.js';
import { rdpOfEvent } from '../src/accounting/rdp/event-rdp.js';
import { mulberry32 } from '../test/helpers/mulberry32.js';

/** dp_accounting's DEFAULT_RDP_ORDERS (rdp_privacy_accountant.py). */
const DP_ACCOUNTING_ORDERS = [...Array.from({ length: 99 }, (_, x) => 1 + (x + 1) / 10), ...Array.from({ length: 53 }, (_, i) => 11 + i), 128, 256, 512, 1024];

interface Point {
  n: number;
  m: number;
  z: number;
  count: number;
  delta: number;
  orders: number[];
}

const PYTHON = `
import json, sys, time
from dp_accounting import dp_event, NeighboringRelation
from dp_accounting.rdp import rdp_privacy_accountant as rdp
points = json.load(sys.stdin)
out = []
for p in points:
    t = time.perf_counter()
    a = rdp.RdpAccountant(orders=p['orders'], neighboring_relation=NeighboringRelation.REPLACE_ONE)
    a.compose(dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(p['n'], p['m'], dp_event.GaussianDpEvent(p['z'])), p['count']))
    eps = a.get_epsilon(p['delta'])
    ms = (time.perf_counter() - t) * 1000
    per_step = rdp._compute_rdp_sample_wor_gaussian(p['m'] / p['n'], p['z'], p['orders'])
    out.append({'epsilon': float(eps), 'ms': ms, 'rdp': [float(v) for v in per_step]})
json.dump(out, sys.stdout)
`;

/**
 * WBK Thm. 27 at integer orders evaluated exactly (mpmath, 400+ digits: the alternating sums need
 * them), to tell a dpfit RDP above dp_accounting's from dp_accounting's rounding below the theorem.
 */
const EXACT_THM27 = `
import json, sys, mpmath as mp
out = []
for p in json.load(sys.stdin):
    g, z, alpha = p['ratio'], p['z'], p['order']
    mp.mp.dps = 400 + alpha
    g = mp.mpf(g); t2 = 1 / mp.mpf(z) ** 2
    B = [mp.fsum(mp.binomial(j, i) * (-1) ** (j - i) * mp.exp(t2 * i * (i - 1) / 2) for i in range(j + 1)) for j in range(alpha + 2)]
    s = 1 + g ** 2 * mp.binomial(alpha, 2) * min(4 * (mp.exp(t2) - 1), 2 * mp.exp(t2))
    for j in range(3, alpha + 1):
        s += g ** j * mp.binomial(alpha, j) * min(4 * mp.sqrt(B[2 * (j // 2)] * B[2 * ((j + 1) // 2)]), 2 * mp.exp((j - 1) * j * t2 / 2))
    out.append(float(mp.log(s) / (alpha - 1)))
json.dump(out, sys.stdout)
`;

function exactThm27(cases: { ratio: number; z: number; order: number }[]): number[] | undefined {
  const result = spawnSync('python3', ['-c', EXACT_THM27], { input: JSON.stringify(cases), encoding: 'utf8', timeout: 600_000 });
  return result.status === 0 ? JSON.parse(result.stdout) : undefined;
}

const rng = mulberry32;

export function sweepPoints(total: number): Point[] {
  const random = rng(29);
  const logUniform = (a: number, b: number) => Math.exp(Math.log(a) + random() * (Math.log(b) - Math.log(a)));
  const points: Point[] = [{ n: 1144, m: 162, z: 2.325976, count: 2, delta: 7.83e-9, orders: DP_ACCOUNTING_ORDERS }];
  while (points.length < total) {
    const n = Math.round(logUniform(10, 1e6));
    const m = Math.min(n - 1, Math.max(1, Math.round(n * logUniform(1e-4, 0.95))));
    let orders = DP_ACCOUNTING_ORDERS;
    if (random() < 0.5) {
      const set = new Set<number>();
      const k = 4 + Math.floor(random() * 21);
      while (set.size < k) {
        const order = logUniform(1.01, 256);
        set.add(random() < 0.5 ? Math.max(2, Math.round(order)) : Number(order.toFixed(3)));
      }
      orders = [...set].sort((a, b) => a - b);
    }
    points.push({ n, m, z: logUniform(0.3, 100), count: Math.round(logUniform(1, 1e5)), delta: logUniform(1e-12, 1e-3), orders });
  }
  return points;
}

function dpAccountingReference(points: Point[]): { epsilon: number; ms: number; rdp: number[] }[] | string {
  const extra = process.env.DPFIT_DP_ACCOUNTING_PATH;
  const env = { ...process.env, ...(extra ? { PYTHONPATH: [extra, process.env.PYTHONPATH].filter(Boolean).join(':') } : {}) };
  const result = spawnSync('python3', ['-c', PYTHON], { env, input: JSON.stringify(points), encoding: 'utf8', timeout: 600_000, maxBuffer: 1 << 28 });
  if (result.error) return `python3 could not run (${result.error.message}): dp_accounting comparison skipped`;
  if (result.status !== 0) {
    const last = result.stderr.trim().split('\n').pop() ?? '';
    return `python3 cannot run dp_accounting (${last}); set DPFIT_DP_ACCOUNTING_PATH: comparison skipped`;
  }
  return JSON.parse(result.stdout);
}

export async function runWorRdpSweepBench(): Promise<void> {
  const points = sweepPoints(Number(process.env.WOR_SWEEP_POINTS ?? 100));
  const withPld = process.env.WOR_SWEEP_PLD === '1';
  const pldModule = withPld ? await import('../src/accounting/pld/accountant.js') : undefined;
  const reference = dpAccountingReference(points);
  if (typeof reference === 'string') process.stdout.write(`${reference}\n`);
  let above = 0;
  let orderViolations = 0;
  let belowTheorem = 0;
  let pldAbove = 0;
  let dpfitMs = 0;
  let referenceMs = 0;
  let worstRatio = 0;
  const ratios: number[] = [];
  for (const [i, p] of points.entries()) {
    const event = selfComposeEvent(sampledWithoutReplacementEvent(p.n, p.m, gaussianEvent(p.z)), p.count);
    const start = performance.now();
    const epsilon = new RdpAccountant({ orders: p.orders }).compose(event).getEpsilon(p.delta).epsilon;
    dpfitMs += performance.now() - start;
    let line = `${String(i).padStart(3)} n=${p.n} m=${p.m} z=${p.z.toPrecision(6)} T=${p.count} delta=${p.delta.toPrecision(3)} orders=${p.orders === DP_ACCOUNTING_ORDERS ? 'default' : p.orders.length}: dpfit ${epsilon.toPrecision(8)}`;
    if (typeof reference !== 'string') {
      const ref = reference[i];
      referenceMs += ref.ms;
      const ratio = epsilon / ref.epsilon;
      ratios.push(ratio);
      worstRatio = Math.max(worstRatio, ratio);
      if (epsilon > ref.epsilon) above++;
      const perStep = rdpOfEvent(sampledWithoutReplacementEvent(p.n, p.m, gaussianEvent(p.z)), p.orders);
      const bad = p.orders.filter((order, k) => perStep[k] > ref.rdp[k] * (1 + 1e-9));
      orderViolations += bad.length;
      line += `  dp_accounting ${ref.epsilon.toPrecision(8)}  ratio ${ratio.toFixed(4)}${epsilon > ref.epsilon ? '  ABOVE' : ''}`;
      if (bad.length > 0) {
        // dp_accounting's value against the theorem it implements, where that is an integer order
        const integers = bad.filter((order) => Number.isInteger(order) && order <= 256);
        const exact = exactThm27(integers.map((order) => ({ ratio: p.m / p.n, z: p.z, order })));
        const notes = bad.map((order) => {
          const k = p.orders.indexOf(order);
          const e = exact?.[integers.indexOf(order)];
          const vs = e === undefined ? '' : `, exact Thm. 27 ${e.toPrecision(12)}${ref.rdp[k] < e ? ' (dp_accounting below its theorem)' : ''}`;
          if (e !== undefined && ref.rdp[k] < e * (1 - 1e-12) && perStep[k] <= e * (1 + 1e-9)) belowTheorem++;
          return `${order}: dpfit ${perStep[k].toPrecision(12)} dp_accounting ${ref.rdp[k].toPrecision(12)}${vs}`;
        });
        line += `  RDP above at orders ${notes.join('; ')}`;
      }
    }
    if (pldModule !== undefined) {
      try {
        const pld = new pldModule.PldAccountant().compose(event).getEpsilon(p.delta);
        if (pld.epsilon > epsilon) pldAbove++;
        line += `  pld ${pld.epsilon.toPrecision(8)}${pld.epsilonLower !== undefined ? ` [${pld.epsilonLower.toPrecision(6)}, ${pld.epsilon.toPrecision(6)}]` : ''}${pld.epsilon > epsilon ? ' ABOVE RDP' : ''}`;
      } catch (error) {
        pldAbove++;
        line += `  pld refused: ${(error as Error).message.split('\n')[0]}`;
      }
    }
    process.stdout.write(`${line}\n`);
  }
  process.stdout.write(`points: ${points.length}; dpfit RDP total ${dpfitMs.toFixed(0)} ms\n`);
  if (typeof reference !== 'string') {
    ratios.sort((a, b) => a - b);
    process.stdout.write(
      `dp_accounting total ${referenceMs.toFixed(0)} ms; dpfit epsilon > dp_accounting's: ${above} (acceptance: 0); per-order RDP above by > 1e-9 relative: ${orderViolations} ` +
        `(of which ${belowTheorem} where dp_accounting is below the exact value of its own Thm. 27 and dpfit within 1e-9 of it); ` +
        `epsilon ratio dpfit/dp_accounting: min ${ratios[0].toFixed(4)}, median ${ratios[Math.floor(ratios.length / 2)].toFixed(4)}, max ${worstRatio.toFixed(6)}\n`,
    );
  }
  if (withPld) process.stdout.write(`PLD epsilon above the RDP answer (or refused): ${pldAbove}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) await runWorRdpSweepBench();
