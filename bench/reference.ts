/**
 * Shared by the benchmarks: the median of timings, and running a Python reference script (its
 * stdout: whitespace-separated numbers) with DPFIT_DP_ACCOUNTING_PATH added to PYTHONPATH.
 */
import { spawnSync } from 'node:child_process';

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/** The numbers a python3 script prints, or undefined when python3 or an import is missing. */
export function runPythonReference(script: string, timeoutMs: number): number[] | undefined {
  const extra = process.env.DPFIT_DP_ACCOUNTING_PATH;
  const env = { ...process.env, ...(extra ? { PYTHONPATH: [extra, process.env.PYTHONPATH].filter(Boolean).join(':') } : {}) };
  const result = spawnSync('python3', ['-c', script], { env, encoding: 'utf8', timeout: timeoutMs });
  if (result.error || result.status !== 0) return undefined;
  return result.stdout.trim().split(/\s+/).map(Number);
}
