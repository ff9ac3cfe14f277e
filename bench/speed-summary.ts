/**
 * Issue 28's table, collected while the benches run: each bench records the ratio it printed
 * (dpfit's time over its peer's, both measured in the same run), and `npm run bench -- speed`
 * (kernel, amp, ooc, pld in one process) ends with every row, its target and whether it was met.
 */
import { availableParallelism, cpus, loadavg } from 'node:os';

export interface SpeedRow {
  /** What was timed, e.g. "clipped logistic step, 1e6 x 20, float32, 1 thread". */
  readonly work: string;
  /** The peer the ratio is against, e.g. "numpy's best one-thread". */
  readonly peer: string;
  /** dpfit's time over the peer's (below 1: dpfit is faster); NaN when the peer is missing. */
  readonly ratio: number;
  /** The target for the ratio (met when ratio <= target). */
  readonly target: number;
  /** Wall or CPU time. */
  readonly clock: 'wall' | 'CPU';
}

const rows: SpeedRow[] = [];

/** Records one row (the bench prints its own detail; this is the summary's line). */
export function recordSpeed(row: SpeedRow): void {
  rows.push(row);
}

/** The summary table of every row recorded in this process, with the machine and the load. */
export function speedSummary(): string {
  if (rows.length === 0) return '';
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  const lines = [
    `summary (${availableParallelism()} CPUs, ${cpu}; Node ${process.versions.node}; load ${loadavg().map((l) => l.toFixed(2)).join(' ')} at the end)`,
    `  ${'work'.padEnd(58)} ${'peer'.padEnd(34)} clock  dpfit/peer  target  met`,
  ];
  for (const r of rows) {
    const met = Number.isNaN(r.ratio) ? 'peer missing' : r.ratio <= r.target ? 'yes' : 'NO';
    lines.push(`  ${r.work.padEnd(58)} ${r.peer.padEnd(34)} ${r.clock.padEnd(5)}  ${r.ratio.toFixed(2).padStart(10)}  ${('<= ' + r.target).padStart(6)}  ${met}`);
  }
  return `${lines.join('\n')}\n`;
}
