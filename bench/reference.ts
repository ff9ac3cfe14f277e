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

/**
 * A long-lived python3 reference for timings interleaved with dpfit's in the same run (so that the
 * load of a shared machine falls on both sides alike). The script prints one line when ready (its
 * words are returned as `banner`), then answers each line it reads on stdin with one line of
 * numbers. Undefined when python3 or an import is missing.
 */
export interface PythonSession {
  banner: string;
  ask(line: string): Promise<number[]>;
  close(): void;
}

export async function startPythonSession(script: string, timeoutMs: number, options: { env?: NodeJS.ProcessEnv; python?: string } = {}): Promise<PythonSession | undefined> {
  const { spawn } = await import('node:child_process');
  const { createInterface } = await import('node:readline');
  const base = options.env ?? process.env;
  const extra = base.DPFIT_DP_ACCOUNTING_PATH;
  const env = { ...base, ...(extra ? { PYTHONPATH: [extra, base.PYTHONPATH].filter(Boolean).join(':') } : {}) };
  let child;
  try {
    child = spawn(options.python ?? 'python3', ['-u', '-c', script], { env, stdio: ['pipe', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
  const lines = createInterface({ input: child.stdout });
  const waiting: ((line: string | undefined) => void)[] = [];
  // Lines that arrived before anyone asked, and whether the process is gone (then nothing more comes).
  const queued: string[] = [];
  let gone = false;
  lines.on('line', (line) => {
    const waiter = waiting.shift();
    if (waiter === undefined) queued.push(line);
    else waiter(line);
  });
  const ended = () => {
    gone = true;
    while (waiting.length > 0) waiting.shift()?.(undefined);
  };
  lines.on('close', ended);
  child.on('error', ended);
  const timer = setTimeout(() => child.kill(), timeoutMs);
  const next = () => new Promise<string | undefined>((resolve) => {
    if (queued.length > 0) resolve(queued.shift());
    else if (gone) resolve(undefined);
    else waiting.push(resolve);
  });
  const banner = await next();
  if (banner === undefined) return undefined;
  return {
    banner,
    async ask(line: string): Promise<number[]> {
      const answer = next();
      child.stdin.write(`${line}\n`);
      const text = await answer;
      if (text === undefined) throw new Error('python reference exited');
      return text.trim().split(/\s+/).map(Number);
    },
    close(): void {
      clearTimeout(timer);
      child.stdin.end();
      child.kill();
    },
  };
}
