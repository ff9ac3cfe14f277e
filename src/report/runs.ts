/**
 * Experiment runs as `dpfit plot` reads them (`dpfit-runs/1`, written by
 * `experiments/adult-epsilon-sweep.ts --json`): one entry per (method, epsilon, seed) with its
 * test accuracy and, optionally, its training loss at some steps. Summaries for the charts:
 * accuracy per method and epsilon as mean +- std over seeds (std with divisor n, as the
 * experiments' tables), and the loss per step as the median over seeds within the [min, max] band.
 *
 * Everything here is computed from the experiment's outputs, which an experiment computes from
 * its data: diagnostics for the person running it, never a release.
 */
import { DataFormatError } from '../errors.js';
import type { BandRow } from './vega-chart.js';

export const RUNS_FORMAT = 'dpfit-runs/1';

export interface RunRecord {
  readonly method: string;
  readonly epsilon: number;
  readonly seed?: number;
  readonly accuracy: number;
  readonly trainingLoss?: readonly { readonly step: number; readonly loss: number }[];
}

export interface RunsFile {
  readonly experiment?: string;
  readonly delta?: number;
  readonly runs: readonly RunRecord[];
  /** A non-private reference accuracy (drawn as a rule). */
  readonly baseline?: { readonly method: string; readonly accuracy: number };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** Checks a parsed runs file; errors are DataFormatErrors naming `source` and the field. */
export function parseRuns(json: unknown, source: string): RunsFile {
  const fail = (where: string, what: string): never => {
    throw new DataFormatError(source, `${where} ${what} (a ${RUNS_FORMAT} file: {runs: [{method, epsilon, accuracy, seed?, trainingLoss?: [{step, loss}]}]}, as experiments/adult-epsilon-sweep.ts --json writes)`);
  };
  if (!isRecord(json)) return fail('the file', 'is not a JSON object');
  if (json.format !== undefined && json.format !== RUNS_FORMAT) fail('format', `is ${JSON.stringify(json.format)}, not "${RUNS_FORMAT}"`);
  if (!Array.isArray(json.runs) || json.runs.length === 0) fail('runs', 'must be a non-empty array');
  const finite = (v: unknown) => typeof v === 'number' && Number.isFinite(v);
  const runs = (json.runs as unknown[]).map((run, i): RunRecord => {
    const at = `runs[${i}]`;
    if (!isRecord(run)) return fail(at, 'is not an object');
    if (typeof run.method !== 'string' || run.method === '') fail(`${at}.method`, 'must be a non-empty string');
    const epsilon = run.epsilon === 'Infinity' ? Infinity : run.epsilon;
    if (typeof epsilon !== 'number' || !(epsilon > 0)) fail(`${at}.epsilon`, 'must be a number > 0 (or "Infinity")');
    if (!finite(run.accuracy) || (run.accuracy as number) < 0 || (run.accuracy as number) > 1) fail(`${at}.accuracy`, 'must be a number in [0, 1]');
    if (run.seed !== undefined && !finite(run.seed)) fail(`${at}.seed`, 'must be a number when given');
    let trainingLoss: { step: number; loss: number }[] | undefined;
    if (run.trainingLoss !== undefined) {
      if (!Array.isArray(run.trainingLoss)) fail(`${at}.trainingLoss`, 'must be an array of {step, loss}');
      trainingLoss = (run.trainingLoss as unknown[]).map((p, j) => {
        if (!isRecord(p) || !finite(p.step) || !finite(p.loss)) return fail(`${at}.trainingLoss[${j}]`, 'must be {step, loss} with finite numbers');
        return { step: p.step as number, loss: p.loss as number };
      });
    }
    return {
      method: run.method as string,
      epsilon: epsilon as number,
      accuracy: run.accuracy as number,
      ...(run.seed === undefined ? {} : { seed: run.seed as number }),
      ...(trainingLoss === undefined ? {} : { trainingLoss }),
    };
  });
  let baseline: RunsFile['baseline'];
  if (json.baseline !== undefined) {
    const b = json.baseline;
    if (!isRecord(b) || typeof b.method !== 'string' || !finite(b.accuracy)) fail('baseline', 'must be {method, accuracy} when given');
    baseline = { method: (b as Record<string, unknown>).method as string, accuracy: (b as Record<string, unknown>).accuracy as number };
  }
  return {
    ...(typeof json.experiment === 'string' ? { experiment: json.experiment } : {}),
    ...(finite(json.delta) ? { delta: json.delta as number } : {}),
    runs,
    ...(baseline === undefined ? {} : { baseline }),
  };
}

export interface AccuracySummary {
  readonly method: string;
  readonly epsilon: number;
  /** Runs (seeds) summarised. */
  readonly n: number;
  readonly mean: number;
  /** Standard deviation with divisor n (0 for one run). */
  readonly std: number;
}

/** Mean and std of the accuracy per (method, epsilon), methods in order of first appearance, epsilons ascending. */
export function summariseAccuracy(runs: readonly RunRecord[]): AccuracySummary[] {
  const groups = new Map<string, { method: string; epsilon: number; values: number[] }>();
  for (const run of runs) {
    const key = JSON.stringify([run.method, run.epsilon]);
    const group = groups.get(key) ?? { method: run.method, epsilon: run.epsilon, values: [] };
    group.values.push(run.accuracy);
    groups.set(key, group);
  }
  const methods = [...new Set(runs.map((r) => r.method))];
  return [...groups.values()]
    .map(({ method, epsilon, values }) => {
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      const std = Math.sqrt(values.reduce((a, v) => a + (v - mean) ** 2, 0) / values.length);
      return { method, epsilon, n: values.length, mean, std };
    })
    .sort((a, b) => methods.indexOf(a.method) - methods.indexOf(b.method) || a.epsilon - b.epsilon);
}

function median(sorted: readonly number[]): number {
  const m = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[m] : (sorted[m - 1] + sorted[m]) / 2;
}

/** The training loss per step: one panel per epsilon, one line per method (median over seeds) in its [min, max] band. */
export function lossBands(runs: readonly RunRecord[]): BandRow[] {
  const groups = new Map<string, { panel: string; method: string; step: number; epsilon: number; values: number[] }>();
  for (const run of runs) {
    for (const point of run.trainingLoss ?? []) {
      const key = JSON.stringify([run.epsilon, run.method, point.step]);
      const group = groups.get(key) ?? { panel: `epsilon = ${run.epsilon}`, method: run.method, step: point.step, epsilon: run.epsilon, values: [] };
      group.values.push(point.loss);
      groups.set(key, group);
    }
  }
  return [...groups.values()]
    .sort((a, b) => a.epsilon - b.epsilon || a.step - b.step)
    .map(({ panel, method, step, values }) => {
      const sorted = [...values].sort((a, b) => a - b);
      return { panel, method, step, median: median(sorted), min: sorted[0], max: sorted[sorted.length - 1] };
    });
}
