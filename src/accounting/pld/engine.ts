/**
 * The PLD pipeline for one grid: analyse each mechanism (loss range, variance), choose or take the
 * grid step, discretise every mechanism pessimistically and optimistically (`discretize.ts`) and
 * compose them in the Fourier domain (`compose.ts`). The accountant (`accountant.ts`) drives it,
 * refining the grid until the requested accuracy is met.
 */
import { NumericalError } from '../../errors.js';
import { composePlds, compositionPoints, compositionWidth, type ComposedPlds, type CompositionTerm, type Direction, type PldPair } from './compose.js';
import { discretize } from './discretize.js';
import type { PldComponent } from './event-components.js';
import { alignStep, chooseValueDiscretization, lossMoments, lossQuantiles } from './grid.js';
import { saddlePointTilt } from './tilt.js';
import type { PrivacyLossModel } from './models/loss-model.js';
import type { ProgressMeter } from '../progress-meter.js';

export interface EngineOptions {
  /** Bound on the probability mass truncated from each end of the composed loss. */
  readonly tailMass: number;
  readonly maxGridSize: number;
  /** Exponential tilt of the composition (default 0; see `tilt.ts`). */
  readonly tilt?: number;
}

interface Analysed {
  readonly component: PldComponent;
  readonly remove: PrivacyLossModel;
  readonly add?: PrivacyLossModel;
  readonly variance: number;
}

/** Caches per-mechanism analysis and discretisations across the grids the accountant tries. */
export class PldEngine {
  private readonly analysed: Analysed[];
  private readonly pairs = new Map<string, PldPair>();
  private readonly ranges = new Map<string, { low: number; high: number }>();
  private readonly fitted = new Map<string, { h: number; limited: boolean }>();
  readonly totalCount: number;
  readonly totalVariance: number;
  /**
   * Counts work for progress reports, one unit per mechanism analysed, per discretisation and per
   * transform (the accountant sets it and estimates the total: `plannedUnits`).
   */
  progress: ProgressMeter | undefined;

  constructor(components: readonly PldComponent[], progress?: ProgressMeter) {
    this.progress = progress;
    this.analysed = components.map((component) => {
      const { remove, add } = component.models();
      const variance = Math.max(lossMoments(remove).variance, add === undefined ? 0 : lossMoments(add).variance);
      progress?.tick();
      return { component, remove, add, variance };
    });
    this.totalCount = components.reduce((s, c) => s + c.count, 0);
    this.totalVariance = this.analysed.reduce((s, a) => s + a.component.count * a.variance, 0);
  }

  /**
   * Units of work (see `progress`) of a typical query over `components`: analysis, a discretisation
   * on the planning grid and one on the final grid per direction, and a transform per direction.
   */
  static plannedUnits(components: readonly PldComponent[]): number {
    let units = 0;
    for (const c of components) units += 1 + 3 * (c.key.startsWith('poissonSampled') ? 2 : 1);
    return units;
  }

  /**
   * Nonzero atoms of the mechanisms' losses (randomized response, Laplace), weighted by count and
   * probability, heaviest first: the grid is aligned to them.
   */
  atoms(): number[] {
    const weights = new Map<number, number>();
    for (const a of this.analysed) {
      for (const model of [a.remove, a.add]) {
        if (model === undefined) continue;
        for (const atom of model.atoms) {
          if (atom.loss === 0) continue;
          weights.set(Math.abs(atom.loss), (weights.get(Math.abs(atom.loss)) ?? 0) + a.component.count * atom.mass);
        }
      }
    }
    return [...weights.entries()].sort((x, y) => y[1] - x[1]).map(([loss]) => loss);
  }

  /** Grid step for a relative accuracy, aligned to `align` (see `alignStep`). */
  automaticStep(relativeAccuracy: number, align?: readonly number[]): number {
    return chooseValueDiscretization(this.totalVariance, this.totalCount, relativeAccuracy, align);
  }

  private range(model: PrivacyLossModel, key: string, tail: number): { low: number; high: number } {
    const cacheKey = `${key}|${tail}`;
    let r = this.ranges.get(cacheKey);
    if (r === undefined) {
      r = lossQuantiles(model, tail);
      this.ranges.set(cacheKey, r);
    }
    return r;
  }

  private pair(model: PrivacyLossModel, key: string, h: number, tail: number, maxGridSize: number): PldPair {
    const cacheKey = `${key}|${h}|${tail}`;
    let p = this.pairs.get(cacheKey);
    if (p !== undefined) return p;
    const { low, high } = this.range(model, key, tail);
    let minIndex = Math.floor(low / h);
    let maxIndex = Math.ceil(high / h);
    if (Number.isFinite(model.lossMin)) minIndex = Math.max(minIndex, Math.floor(model.lossMin / h) - 1);
    if (Number.isFinite(model.lossMax)) maxIndex = Math.min(maxIndex, Math.ceil(model.lossMax / h) + 1);
    if (maxIndex <= minIndex) maxIndex = minIndex + 1;
    if (maxIndex - minIndex + 1 > maxGridSize) {
      throw new NumericalError(
        `${model.description} spans ${maxIndex - minIndex + 1} grid points at value discretization ${h} (more than maxGridSize = ${maxGridSize}); use a coarser grid`,
      );
    }
    const d = discretize(model, h, minIndex, maxIndex, 1e-10 / Math.max(1, this.totalCount));
    p = { pessimistic: d.pessimistic, optimistic: d.optimistic };
    // Keep the pairs of two grids (a query alternates between a grid and its 4x coarser plan).
    if (this.pairs.size >= Math.max(64, 4 * this.analysed.length)) this.pairs.clear();
    this.pairs.set(cacheKey, p);
    this.progress?.tick();
    return p;
  }

  /**
   * The widest loss range of one mechanism (both directions), as `pair` cuts it: the composed window
   * is at least this wide, so no step below width / maxGridSize can be composed.
   */
  mechanismWidth(options: EngineOptions): number {
    const tail = options.tailMass / (10 * Math.max(1, this.totalCount));
    let width = 0;
    for (const a of this.analysed) {
      for (const [model, direction] of [[a.remove, 'remove'], [a.add, 'add']] as const) {
        if (model === undefined) continue;
        let { low, high } = this.range(model, `${a.component.key}|${direction}`, tail);
        if (Number.isFinite(model.lossMin)) low = Math.max(low, model.lossMin);
        if (Number.isFinite(model.lossMax)) high = Math.min(high, model.lossMax);
        width = Math.max(width, high - low);
      }
    }
    return width;
  }

  private terms(h: number, options: EngineOptions): CompositionTerm[] {
    // Each mechanism's range is cut where its tails hold tau / (10 K): all truncations of all steps
    // together move at most tau / 5 (`grid.ts`).
    const tail = options.tailMass / (10 * Math.max(1, this.totalCount));
    return this.analysed.map((a) => ({
      count: a.component.count,
      remove: this.pair(a.remove, `${a.component.key}|remove`, h, tail, options.maxGridSize),
      ...(a.add === undefined ? {} : { add: this.pair(a.add, `${a.component.key}|add`, h, tail, options.maxGridSize) }),
    }));
  }

  /** The widest composed loss window at step h (from a grid 4 times coarser). */
  windowWidth(h: number, options: EngineOptions): number {
    return compositionWidth(this.terms(4 * h, options), options.tailMass);
  }

  /**
   * The step to use for a largest acceptable step hMax: the FFT size is a power of two, so the
   * window found on a grid 4 times coarser is spread over all of its points (a finer grid at no
   * extra cost), then aligned to `align` if given. When hMax would need more than maxGridSize
   * points, the step that fills maxGridSize is returned instead, with `limited` set.
   */
  fitStep(hMax: number, options: EngineOptions, align?: readonly number[]): { h: number; limited: boolean } {
    // Memoised: an epsilon query's check by the delta query plans the same grid again.
    const key = `${hMax}|${options.tailMass}|${options.maxGridSize}|${align === undefined ? '' : align.join(',')}`;
    let fitted = this.fitted.get(key);
    if (fitted === undefined) {
      if (this.fitted.size >= 64) this.fitted.clear();
      this.fitted.set(key, (fitted = this.fitStepUncached(hMax, options, align)));
    }
    return fitted;
  }

  private fitStepUncached(hMax: number, options: EngineOptions, align?: readonly number[]): { h: number; limited: boolean } {
    const width = compositionWidth(this.terms(4 * hMax, options), options.tailMass);
    if (!(width > 0) || !Number.isFinite(width)) return { h: alignStep(hMax, align), limited: false };
    // The finer grid's window is a little narrower than the coarse one's (measured: 0.2 %); 0.5 %
    // slack keeps it inside n points (2 % more when aligning may shrink the step).
    const slack = align !== undefined && align.length > 0 ? 1.025 : 1.005;
    const points = Math.ceil((slack * width) / hMax) + 8;
    let n = 2;
    while (n < points) n *= 2;
    if (n > options.maxGridSize) return { h: alignStep((slack * width) / (options.maxGridSize - 8), align), limited: true };
    return { h: alignStep(Math.min(hMax, (slack * width) / (n - 8)), align), limited: false };
  }

  /**
   * A step, at least h, at which the composition tilted by `tilt` fits maxGridSize points (its
   * window, measured at h, spread over them; aligned to `align`). A tilt widens the window (the
   * wrap-around from above is amplified by e^{tilt N h}): a coarser grid keeps the tilt's precision.
   */
  tiltedStep(h: number, options: EngineOptions, tilt: number, align?: readonly number[]): number {
    const width = compositionPoints(this.terms(h, options), options.tailMass, tilt) * h;
    return Math.max(h, alignStep((1.02 * width) / (options.maxGridSize - 16), align));
  }

  /**
   * The saddle-point tilt for delta(epsilon) of the given direction on the grid of step h: the
   * tilt that centres the composed (pessimistic) loss at epsilon.
   */
  saddleTilt(h: number, options: EngineOptions, epsilon: number, direction: Direction): number {
    const parts = this.terms(h, options).map((t) => ({
      pld: (direction === 'add' ? (t.add ?? t.remove) : t.remove).pessimistic,
      count: t.count,
    }));
    return saddlePointTilt(parts, epsilon);
  }

  /** The composed pessimistic and optimistic PLDs (each direction) on the grid of step h. */
  compose(h: number, options: EngineOptions): ComposedPlds {
    const terms = this.terms(h, options);
    const progress = this.progress;
    return composePlds(terms, { tailMass: options.tailMass, maxGridSize: options.maxGridSize, tilt: options.tilt ?? 0, onTransform: progress === undefined ? undefined : () => progress.tick() });
  }
}
