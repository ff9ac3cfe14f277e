/**
 * A progress bar on stderr for long work, shown only when stderr is a terminal (never mixed into
 * --json output on stdout, docs/design.md "CLI contract"), with the time left:
 *
 *   training (dpsgd) [############..................]  40%  ETA 1m12s
 *
 * Work made of several runs (one-vs-rest's classes, honest tuning's random number K of runs)
 * shows ONE bar for the whole command: each run reports its own (step, steps), a run that starts
 * again from step 1 is the next one, and the total is the known number of runs or, for tuning,
 * the expected one (K is random: the bar then says "~" and never reaches 100 % before the end).
 */

/** Where the bar is drawn: process.stderr by default. */
export interface ProgressStream {
  readonly isTTY?: boolean;
  write(text: string): unknown;
}

export interface ProgressOptions {
  /** false: no bar (e.g. with --json). */
  readonly enabled: boolean;
  /** Several runs, each reporting (step, steps) from 1: their number, exact or expected (a mean). */
  readonly runs?: { readonly count: number; readonly exact: boolean };
  readonly stream?: ProgressStream;
  /** Clock in milliseconds (tests). */
  readonly now?: () => number;
}

export interface ProgressBar {
  /** Progress of the current run: `done` of `total` steps. */
  readonly onStep: (done: number, total: number) => void;
  /** The work is over: completed draws 100 % and the time taken; otherwise the line is ended so an error starts on its own line. */
  end(completed: boolean): void;
}

const WIDTH = 30;

/** 42s, 3m05s, 2h03m, 5d04h. */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  if (s < 86_400) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `${Math.floor(s / 86_400)}d${String(Math.floor((s % 86_400) / 3600)).padStart(2, '0')}h`;
}

/**
 * A bar for `label`, or undefined when disabled or when the stream is not a terminal.
 *
 * @example
 * const bar = progressBar('training (dpsgd)', { enabled: !json });
 * try { train({ onStep: bar?.onStep }); bar?.end(true); } catch (e) { bar?.end(false); throw e; }
 */
export function progressBar(label: string, options: ProgressOptions): ProgressBar | undefined {
  const stream = options.stream ?? process.stderr;
  if (!options.enabled || !stream.isTTY) return undefined;
  const now = options.now ?? Date.now;
  const start = now();
  const runs = options.runs;
  const approximate = runs !== undefined && !runs.exact;
  let finishedRuns = 0;
  let lastStep = 0;
  let shown = 0; // displayed fraction, never decreasing
  let lastPercent = -1;
  let lastDraw = -Infinity;
  let drawn = false;
  let ended = false;

  const draw = (fraction: number, final: boolean): void => {
    const percent = Math.floor(100 * fraction);
    const t = now();
    if (!final && percent === lastPercent && t - lastDraw < 1000) return;
    lastPercent = percent;
    lastDraw = t;
    const elapsed = t - start;
    const filled = Math.round(WIDTH * fraction);
    let tail: string;
    if (final) tail = `in ${formatDuration(elapsed)}`;
    else if (fraction >= 0.01 && elapsed >= 1000) tail = `ETA ${approximate ? '~' : ''}${formatDuration((elapsed * (1 - fraction)) / fraction)}`;
    else tail = 'ETA ...';
    const runText = runs !== undefined && !final ? `  run ${finishedRuns + 1}${runs.exact ? ` of ${runs.count}` : ` (~${formatNumberShort(runs.count)} expected)`}` : '';
    stream.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${String(percent).padStart(3)}%  ${tail}${runText}\u001b[K${final ? '\n' : ''}`);
    drawn = true;
  };

  return {
    onStep: (done, total) => {
      if (ended || !(total > 0)) return;
      if (runs !== undefined && done <= lastStep) finishedRuns++;
      lastStep = done;
      let fraction: number;
      if (runs === undefined) fraction = done / total;
      else fraction = (finishedRuns + done / total) / Math.max(runs.count, finishedRuns + 1);
      fraction = Math.min(runs === undefined ? 1 : 0.999, Math.max(shown, fraction));
      shown = fraction;
      if (runs === undefined && done >= total) {
        ended = true;
        draw(1, true);
        return;
      }
      draw(fraction, false);
    },
    end: (completed) => {
      if (ended) return;
      ended = true;
      if (completed) draw(1, true);
      else if (drawn) stream.write('\n');
    },
  };
}

function formatNumberShort(value: number): string {
  return Number(value.toPrecision(3)).toString();
}
