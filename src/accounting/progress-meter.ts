/**
 * Progress of long accounting queries, for an optional `onProgress(done, total)` callback (the CLI
 * draws a bar on stderr with it). The work of a query is not known in advance (the PLD accountant
 * refines its grid until an accuracy is met), so the meter counts units of work against an
 * estimate that grows as passes are added, and reports a fraction that never goes backwards:
 * `done` out of `total` = 1000, below 1000 until `finish`, which reports (1000, 1000) once.
 */
import { InvalidParameterError } from '../errors.js';

export type ProgressCallback = (done: number, total: number) => void;

/** Checks an accountant's `onProgress` option: absent or a function. */
export function validateProgressCallback(onProgress: unknown): void {
  if (onProgress !== undefined && typeof onProgress !== 'function') throw new InvalidParameterError('onProgress', onProgress, 'a function (done, total) => void');
}

export const PROGRESS_SCALE = 1000;

export class ProgressMeter {
  private done = 0;
  private expected = 0;
  private shown = 0;

  constructor(private readonly report: ProgressCallback) {}

  /** More work is coming: `units` more units. */
  expect(units: number): void {
    this.expected += units;
  }

  /** One unit done. */
  tick(): void {
    this.done++;
    if (this.done > this.expected) this.expected = this.done;
    const fraction = Math.floor((PROGRESS_SCALE * this.done) / this.expected);
    const next = Math.min(PROGRESS_SCALE - 1, Math.max(this.shown, fraction));
    if (next > this.shown) {
      this.shown = next;
      this.report(next, PROGRESS_SCALE);
    }
  }

  /** The query is done. */
  finish(): void {
    this.shown = PROGRESS_SCALE;
    this.report(PROGRESS_SCALE, PROGRESS_SCALE);
  }
}
