/**
 * The privacy-loss-distribution (PLD) accountant: tight (epsilon, delta) for compositions, by
 * discretising each mechanism's dominating pair (`discretize.ts`: connect-the-dots, Doroshenko et
 * al. 2022, pessimistic; a contraction, optimistic) and composing in the Fourier domain
 * (`compose.ts`; Koskela et al. 2020/2021, Zhu, Dong, Wang 2022). Queries are hockey-stick
 * divergences (`003` Thm. D.2) and their inverse (`queries.ts`).
 *
 * Every reported `epsilon` (`delta`) is an upper bound computed pessimistically; `epsilonLower`
 * (`deltaLower`) is a rigorous lower bound on the same mechanism's exact value, computed with the
 * same care, so `epsilon - epsilonLower` is an honest error bar. With the default automatic grid
 * the accountant refines the grid (and fits a coarser one to a tilted window) until that gap is
 * within `relativeAccuracy`; when it cannot, it returns the pessimistic end of its last bracket (a
 * valid bound) with a warning that gives the bracket, never a loose number silently. The
 * compositions queries were answered on are kept and shared by later queries (`finals`), so that
 * getDelta(getEpsilon(delta).epsilon).delta <= delta on one accountant, and a curve's points are
 * the point queries.
 *
 * Like the RDP accountant it is an `EventAccountant` (`../accountant.ts`: `supports`,
 * `compose(event, count)`, `getEpsilon(delta)`, `getDelta(epsilon)`; the whole event is validated
 * before the state changes).
 *
 * Gridded discrete noise (`../discrete-coupling.ts`). Such releases are composed as their
 * continuous surrogates (z_eff = z sqrt(1 - 64/s^2)), queried one ulp inside (delta' =
 * nextDown(delta), resp. epsilon' = nextDown(epsilon)) and rounded one ulp outward, which that
 * module proves covers the coupling's factors e^{+-1e-500}. Their lower bounds (`epsilonLower`,
 * `deltaLower`) come from a second composition of the continuous Gaussians with the larger
 * multipliers z / sqrt(1 - 64/s^2), which the discrete releases dominate (same module, "Lower
 * bounds"): the gap then also shows what the coupling costs.
 *
 * Sampling without replacement (`models/without-replacement-model.ts`). Its symmetrised PLD (an upper
 * bound, Dong, Roth & Su 2022 Thm. 4.2) need not be attained by any pair of datasets once composed,
 * so its `epsilonLower` (`deltaLower`) comes from the lower accountant, which composes the attained
 * mixture pair in both orders instead.
 *
 * Long heterogeneous compositions (`schedule-buckets.ts`). Many distinct Poisson-subsampled
 * Gaussians (a noise or sampling schedule) are composed in buckets, z rounded down and q up to a
 * geometric grid (`scheduleGrid` points per doubling) for the upper bound, and the other way for
 * the lower bound, which then also comes from a second accountant; many distinct continuous
 * Gaussians are merged into one (exactly, up to rounding outward). `onProgress` reports the work
 * of long queries.
 */
import { InvalidParameterError, NumericalError, UnsupportedEventError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { EventAccountant } from '../accountant.js';
import { continuousLowerSurrogate } from '../discrete-coupling.js';
import type { DpEvent } from '../events/types.js';
import { someEvent } from '../events/tree.js';
import { nextDown } from '../float-steps.js';
import type { PrivacyGuarantee } from '../guarantee.js';
import type { ComposedPlds, Direction } from './compose.js';
import type { DiscretePld } from './discrete-pld.js';
import { checkPldSupport, pldComponents, type PldComponent } from './event-components.js';
import { PldEngine } from './engine.js';
import { ProgressMeter, validateProgressCallback, type ProgressCallback } from '../progress-meter.js';
import { bucketComponents, DEFAULT_PLD_SCHEDULE_GRID, type BucketInfo, type NoiseRounding } from './schedule-buckets.js';
import { deltaForEpsilon, deltaWithoutBinError, epsilonForDelta, noiseAt } from './queries.js';
import { DEFAULT_TAIL_MASS, stepRung, tailMassFor, tiltRung, uncheckedTailMass } from './query-plan.js';
import { OtherBounds, type BoundSource, type OtherBound } from './other-bounds.js';

export interface PldAccountantOptions {
  /**
   * Grid step h of the privacy-loss values. Default: chosen automatically from
   * `relativeAccuracy` and refined until the accuracy is met.
   */
  readonly valueDiscretization?: number;
  /**
   * Target accuracy: epsilon - epsilonLower <= relativeAccuracy * epsilon (for getDelta: the
   * pessimistic curve within relativeAccuracy of the optimistic one, horizontally). Default 1e-4.
   */
  readonly relativeAccuracy?: number;
  /**
   * Bound on the probability mass cut from each end of the composed loss (it is added to delta on
   * the pessimistic side). Default: from a ladder (`query-plan.ts`) that depends on delta's level
   * only, so that it moves epsilon by well under its accuracy target and the epsilon and delta
   * queries about one point of the curve compose the same distribution.
   */
  readonly tailMassBound?: number;
  /**
   * Whether getEpsilon checks its answer with the delta query (default true): the epsilon e it
   * returns then has delta(e) <= delta in every other accountant of the same event and options
   * (another process) too. false: e is the pessimistic inverse on the epsilon query's own
   * composition (tail mass 1e-2 relativeAccuracy delta, at most 1e-10), capped by the other bounds
   * like every answer: as valid an upper bound, and faster (a grid of its own, no check), but a
   * delta query elsewhere may answer slightly above delta at it. For searches that re-account the
   * answer they return (a noise calibration's steps, `calibration/calibrate.ts`).
   */
  readonly checkedEpsilon?: boolean;
  /** Largest number of grid points (FFT size). Default 2^22. */
  readonly maxGridSize?: number;
  /**
   * Grid points per doubling of the noise multiplier (and sampling probability) of the buckets of
   * long DP-SGD schedules (`schedule-buckets.ts`): more than 64 distinct Poisson-subsampled
   * Gaussians are composed with z rounded down (up for epsilonLower) to this grid when that makes
   * at most a quarter as many mechanisms. Default 256 (z moves by < 0.27 %); an integer >= 16, or
   * Infinity to compose every distinct mechanism as it is (~60 ms each at 1e5 steps).
   */
  readonly scheduleGrid?: number;
  /**
   * Progress of long queries: called with (done, total), total = 1000, a fraction that never goes
   * backwards, ending with (1000, 1000) once per getEpsilon / getDelta. Only called when the
   * composition has at least 32 distinct mechanisms (each costs a transform of the whole grid).
   */
  readonly onProgress?: ProgressCallback;
}

/** Below this many distinct mechanisms, queries report no progress (they take about a second or less). */
const PROGRESS_MIN_MECHANISMS = 32;

/** The discretisation a PLD result was computed with. */
export interface PldDiscretization {
  /** Grid step h of privacy-loss values. */
  readonly valueDiscretization: number;
  /** Number of grid points of the composed PLD (FFT size). */
  readonly gridSize: number;
  /** The loss window [low, high] of the composed PLD (the widest direction). */
  readonly lossRange: readonly [number, number];
  /** Bound on the mass truncated from each end (included in delta). */
  readonly tailMassBound: number;
  readonly relativeAccuracy: number;
  /** true when h was chosen by the accountant. */
  readonly automatic: boolean;
  /** Exponential tilt of the composition (0: none; see `tilt.ts`). */
  readonly tilt: number;
}

export interface PldGuarantee extends PrivacyGuarantee {
  /** A lower bound on the exact epsilon (getEpsilon): epsilonLower <= true epsilon <= epsilon. */
  readonly epsilonLower?: number;
  /** A lower bound on the exact delta (getDelta). */
  readonly deltaLower?: number;
  /**
   * Whose value `epsilon` (getEpsilon) or `delta` (getDelta) is: the PLD's own upper end, or a
   * smaller valid bound on the same event, the RDP accountant's or the exact Gaussian profile's
   * (`other-bounds.ts`; a note then gives the PLD's upper end).
   */
  readonly boundBy: BoundSource;
  readonly discretization: PldDiscretization;
}

const DEFAULT_RELATIVE_ACCURACY = 1e-4;
const DEFAULT_MAX_GRID = 1 << 22;
const MAX_REFINEMENTS = 4;
/** Relative gap (epsilon) still returned, with a warning, when maxGridSize prevents the requested one. */
const TOLERABLE_GAP = 1e-3;

interface Merged {
  count: number;
  models: PldComponent['models'];
  sampledGaussian?: PldComponent['sampledGaussian'];
}

interface Evaluation {
  readonly value: number;
  readonly lower: number;
  readonly acceptable: boolean;
  /**
   * Accurate enough to return, with a warning, when the requested accuracy cannot be reached within
   * maxGridSize: a gap of at most max(10 relativeAccuracy, 1e-3) (`TOLERABLE_GAP`).
   */
  readonly tolerable: boolean;
  /** Suggested factor for h when not acceptable (< 1). */
  readonly shrink: number;
  readonly warnings: string[];
  /**
   * Set when floating-point error limits the result: recompute tilted at the saddle point of this
   * epsilon (`tilt.ts`).
   */
  readonly tiltAt?: { readonly epsilon: number; readonly direction: Direction };
}

/** A query's result with the composition it was computed on. */
interface Evaluated {
  readonly evaluation: Evaluation;
  readonly discretization: PldDiscretization;
  readonly composed: ComposedPlds;
}

/** Compositions kept for later queries (`PldAccountant.cache`): at most 4, and beyond 2 at most this many grid points in all. */
const CACHE_POINTS = 1 << 22;
/** Rounds of the check an epsilon query makes of its answer with the delta query's own composition. */
const CHECK_ROUNDS = 8;

/** Target for the tilt: delta(epsilon) of one direction. */
interface TiltTarget {
  readonly epsilon: number;
  readonly direction: Direction;
}

/** About how much the floating-point error bound moves epsilon(delta): its delta over the slope. */
function noiseShift(pld: DiscretePld, search: { epsilon: number; slope: number }): number {
  if (pld.errorPerBin === 0 || !Number.isFinite(search.epsilon)) return 0;
  const noise = noiseAt(pld, search.epsilon);
  if (noise === 0) return 0;
  return search.slope > 0 ? noise / search.slope : Infinity;
}

const PLD_ACCOUNTANT_OPTIONS = optionNames<PldAccountantOptions>({ valueDiscretization: true, relativeAccuracy: true, tailMassBound: true, checkedEpsilon: true, maxGridSize: true, scheduleGrid: true, onProgress: true });

export class PldAccountant extends EventAccountant<PldGuarantee> {
  private readonly options: Required<Omit<PldAccountantOptions, 'valueDiscretization' | 'tailMassBound' | 'onProgress'>> & {
    valueDiscretization?: number;
    tailMassBound?: number;
    onProgress?: ProgressCallback;
  };
  private readonly merged = new Map<string, Merged>();
  private nonPrivate = false;
  private engine: PldEngine | undefined;
  /**
   * Compositions by (h, tail mass, tilt), most recent last. A cache only: every query's answer is a
   * function of the event, the options and the value queried (not of earlier queries), so that
   * separate processes agree, and an epsilon query's check of its answer by the delta query
   * (`epsilonOf`) usually finds the composition it needs here.
   */
  private readonly cache = new Map<string, ComposedPlds>();
  /** The options as given (for the lower-bound accountant of gridded discrete noise). */
  private readonly given: PldAccountantOptions;
  /** true once sampling without replacement was composed (lower bounds from the lower accountant). */
  private withoutReplacement = false;
  /** Everything composed, as `continuousLowerSurrogate`s with their counts (for the lower accountant). */
  private readonly lowerEvents: { event: DpEvent; count: number }[] = [];
  private lower: PldAccountant | undefined;
  /** 'down' for the accountant a caller made; 'up' for the lower-bound accountant of schedules. */
  private noiseRounding: NoiseRounding = 'down';
  /** What `bucketComponents` did for the current engine (undefined: nothing), and its result. */
  private buckets: BucketInfo | undefined;
  private reduced: readonly PldComponent[] | undefined;
  /** The progress meter of the running query (shared with the lower-bound accountant). */
  private meter: ProgressMeter | undefined;
  /** The RDP and exact-Gaussian bounds of the same composition (`other-bounds.ts`). */
  private readonly others = new OtherBounds();

  constructor(options: PldAccountantOptions = {}) {
    super();
    rejectUnknownOptions(options, PLD_ACCOUNTANT_OPTIONS, 'PldAccountant');
    if (options.valueDiscretization !== undefined) requirePositive('valueDiscretization', options.valueDiscretization);
    const relativeAccuracy = options.relativeAccuracy ?? DEFAULT_RELATIVE_ACCURACY;
    if (!(typeof relativeAccuracy === 'number' && relativeAccuracy > 0 && relativeAccuracy < 1)) {
      throw new InvalidParameterError('relativeAccuracy', relativeAccuracy, 'in (0, 1)');
    }
    const tailMassBound = options.tailMassBound;
    if (tailMassBound !== undefined) requireOpenUnit('tailMassBound', tailMassBound);
    const maxGridSize = requireInteger('maxGridSize', options.maxGridSize ?? DEFAULT_MAX_GRID, 16, 1 << 28);
    const scheduleGrid = options.scheduleGrid ?? DEFAULT_PLD_SCHEDULE_GRID;
    if (!(scheduleGrid === Infinity || (typeof scheduleGrid === 'number' && Number.isSafeInteger(scheduleGrid) && scheduleGrid >= 16))) {
      throw new InvalidParameterError('scheduleGrid', scheduleGrid, 'an integer >= 16 (grid points per doubling of z) or Infinity (every mechanism as it is)');
    }
    validateProgressCallback(options.onProgress);
    const checkedEpsilon = options.checkedEpsilon ?? true;
    if (typeof checkedEpsilon !== 'boolean') throw new InvalidParameterError('checkedEpsilon', checkedEpsilon, 'true or false');
    this.options = { valueDiscretization: options.valueDiscretization, relativeAccuracy, tailMassBound, checkedEpsilon, maxGridSize, scheduleGrid, onProgress: options.onProgress };
    this.given = { ...options, onProgress: undefined };
  }

  protected override checkSupport(event: DpEvent): void {
    checkPldSupport(event);
  }

  /** The mechanisms of `event` x count and its lower surrogate; the commit merges them into the composition. */
  protected override prepare(event: DpEvent, count: number): () => void {
    const summary = pldComponents(event, count, this.noiseRounding === 'up' ? 'lower' : 'upper');
    for (const c of summary.components) {
      const total = (this.merged.get(c.key)?.count ?? 0) + c.count;
      if (!Number.isSafeInteger(total)) throw new InvalidParameterError('count', count, `such that the total number of compositions stays <= ${Number.MAX_SAFE_INTEGER}`);
    }
    const lowerEvent = continuousLowerSurrogate(event);
    const withoutReplacement = someEvent(event, (e) => e.kind === 'sampledWithoutReplacement');
    const others = this.noiseRounding === 'up' ? undefined : this.others.prepare(event, count);
    return () => {
      others?.();
      for (const c of summary.components) {
        const known = this.merged.get(c.key);
        if (known === undefined) this.merged.set(c.key, { count: c.count, models: c.models, ...(c.sampledGaussian === undefined ? {} : { sampledGaussian: c.sampledGaussian }) });
        else known.count += c.count;
      }
      this.nonPrivate ||= summary.nonPrivate;
      this.engine = undefined;
      this.buckets = undefined;
      this.reduced = undefined;
      this.cache.clear();
      this.withoutReplacement ||= withoutReplacement;
      this.lowerEvents.push({ event: lowerEvent, count });
      this.lower = undefined;
    };
  }

  /**
   * The accountant of the lower surrogates: continuous releases, schedules bucketed with z rounded
   * up (it never has a lower accountant of its own).
   */
  private lowerAccountant(): PldAccountant {
    if (this.lower === undefined) {
      // With schedules in buckets the lower bound is far from the upper one (the buckets' cost, a
      // few 1e-3 relative): a coarser grid (relative accuracy 1e-3) gives it at a fraction of the cost.
      const bucketed = this.buckets !== undefined && this.buckets.buckets > 0;
      const accuracy = Math.max(this.options.relativeAccuracy, bucketed ? 1e-3 : 0);
      const lower = new PldAccountant({ ...this.given, relativeAccuracy: accuracy });
      lower.noiseRounding = 'up';
      for (const { event, count } of this.lowerEvents) lower.compose(event, count);
      this.lower = lower;
    }
    this.lower.meter = this.meter;
    return this.lower;
  }

  /** Whether results need the lower accountant: gridded noise, or schedules in buckets. */
  private needsLowerAccountant(): boolean {
    if (this.noiseRounding === 'up' || this.nonPrivate || this.merged.size === 0) return false;
    if (this.gridded || this.withoutReplacement) return true;
    this.reducedComponents();
    return this.buckets !== undefined && (this.buckets.buckets > 0 || this.buckets.mergedGaussians > 0);
  }

  /** Runs a top-level query with a progress meter when the composition is long. */
  private withProgress<T>(query: () => T): T {
    const report = this.options.onProgress;
    if (report === undefined || this.meter !== undefined || this.merged.size < PROGRESS_MIN_MECHANISMS) return query();
    this.meter = new ProgressMeter(report);
    // The estimate: this accountant's passes, and the lower accountant's when there is one.
    const planned = PldEngine.plannedUnits(this.reducedComponents());
    this.meter.expect(this.needsLowerAccountant() ? 2 * planned : planned);
    if (this.engine !== undefined) this.engine.progress = this.meter;
    try {
      const result = query();
      this.meter.finish();
      return result;
    } finally {
      this.meter = undefined;
      if (this.engine !== undefined) this.engine.progress = undefined;
    }
  }

  /** A lower bound from the lower accountant, or undefined (with a warning) when it fails. */
  private lowerBound(query: (lower: PldAccountant) => number | undefined, warnings: string[]): number | undefined {
    try {
      const value = query(this.lowerAccountant());
      if (value === undefined) return undefined;
      return value > 0 ? nextDown(value) : 0; // absorbs the coupling's additive 2 N xi and factor e^{-N xi}
    } catch (error) {
      if (!(error instanceof NumericalError)) throw error;
      warnings.push(`no lower bound: the composition of the continuous lower surrogates failed (${error.message})`);
      return undefined;
    }
  }

  /** The components to compose: what was composed, with long schedules reduced (`bucketComponents`). */
  private reducedComponents(): readonly PldComponent[] {
    if (this.reduced === undefined) {
      const components: PldComponent[] = [...this.merged.entries()].map(([key, m]) => ({ key, ...m }));
      const reduced = bucketComponents(components, this.options.scheduleGrid, this.noiseRounding);
      this.buckets = reduced.info;
      this.reduced = reduced.components;
    }
    return this.reduced;
  }

  private getEngine(): PldEngine {
    if (this.engine === undefined) this.engine = new PldEngine(this.reducedComponents(), this.meter);
    this.engine.progress = this.meter;
    return this.engine;
  }

  /** The warning that says what `bucketComponents` did, if anything. */
  private bucketWarnings(): string[] {
    const b = this.buckets;
    if (b === undefined) return [];
    const out: string[] = [];
    if (b.buckets > 0) {
      out.push(
        `${b.mechanisms} distinct Poisson-subsampled Gaussian steps were composed in ${b.buckets} buckets, their noise multipliers rounded down (sampling probabilities up) to a grid of ${b.pointsPerDoubling} points per doubling for epsilon and the other way for epsilonLower (a valid upper and lower bound; the gap shows the cost); scheduleGrid sets the grid, Infinity composes every step as it is`,
      );
    }
    if (b.mergedGaussians > 0) out.push(`${b.mergedGaussians} distinct Gaussian releases were composed as one Gaussian with 1/z^2 = sum 1/z_i^2 (exact, Dong, Roth & Su 2022, Cor. 3.3)`);
    return out;
  }

  private composedAt(h: number, tailMass: number, tilt: number): ComposedPlds {
    const key = `${h}|${tailMass}|${tilt}`;
    let c = this.cache.get(key);
    if (c !== undefined) {
      this.cache.delete(key);
      this.cache.set(key, c);
      return c;
    }
    c = this.getEngine().compose(h, { tailMass, maxGridSize: this.options.maxGridSize, tilt });
    this.cache.set(key, c);
    // Each holds up to 4 arrays of gridSize doubles: the oldest go beyond 4, or beyond 2 when large.
    let points = 0;
    for (const kept of this.cache.values()) points += kept.gridSize;
    for (const [oldest, kept] of this.cache) {
      if (this.cache.size <= 2 || (this.cache.size <= 4 && points <= CACHE_POINTS)) break;
      points -= kept.gridSize;
      this.cache.delete(oldest);
    }
    return c;
  }

  /**
   * A query's PLD answer capped by the other valid bounds on the same event (`other-bounds.ts`): the
   * smaller upper end is reported, `boundBy` says whose it is. When the PLD composition cannot be
   * computed (a NumericalError), the other bounds answer alone, with a warning giving the reason.
   */
  private capped(quantity: 'epsilon' | 'delta', at: number, compute: () => PldGuarantee): PldGuarantee {
    if (this.noiseRounding === 'up' || this.nonPrivate || this.merged.size === 0) return compute();
    let pld: PldGuarantee | undefined;
    let failure: NumericalError | undefined;
    try {
      pld = compute();
    } catch (error) {
      if (!(error instanceof NumericalError)) throw error;
      failure = error;
    }
    const other: OtherBound | undefined = quantity === 'epsilon' ? this.others.epsilon(at, pld === undefined ? Infinity : pld.epsilon) : this.others.delta(at);
    const name = (source: BoundSource) => (source === 'rdp' ? 'the RDP accountant' : 'the exact Gaussian composition (Dong, Roth & Su 2022, Cor. 3.3)');
    if (pld === undefined) {
      if (other === undefined || failure === undefined) throw failure ?? new NumericalError('internal error: no PLD result');
      const warning = `the PLD composition could not be computed (${failure.message}): the ${quantity} is ${name(other.source)}'s`;
      const tail = this.options.tailMassBound ?? DEFAULT_TAIL_MASS;
      const result = quantity === 'epsilon' ? this.describe(other.value, at, [warning], {}, this.trivialDiscretization(tail)) : this.describe(at, other.value, [warning], {}, this.trivialDiscretization(tail));
      return Object.freeze({ ...result, boundBy: other.source });
    }
    const own = quantity === 'epsilon' ? pld.epsilon : pld.delta;
    if (other === undefined || !(other.value < own)) return pld;
    const note = `${name(other.source)} bounds the ${quantity} by ${other.value}, below the PLD's upper end ${own}: the smaller is reported`;
    const notes = Object.freeze([...(pld.notes ?? []), note]);
    if (quantity === 'epsilon') return Object.freeze({ ...pld, epsilon: other.value, ...(pld.epsilonLower === undefined ? {} : { epsilonLower: Math.min(pld.epsilonLower, other.value) }), boundBy: other.source, notes });
    return Object.freeze({ ...pld, delta: other.value, ...(pld.deltaLower === undefined ? {} : { deltaLower: Math.min(pld.deltaLower, other.value) }), boundBy: other.source, notes });
  }

  private describe(epsilon: number, delta: number, warnings: string[], extra: { epsilonLower?: number; deltaLower?: number }, discretization: PldDiscretization): PldGuarantee {
    return Object.freeze({
      epsilon,
      delta,
      accountant: 'pld' as const,
      neighboringRelation: this.relation,
      guarantee: 'proven' as const,
      warnings: Object.freeze([...warnings]),
      boundBy: 'pld' as const,
      ...extra,
      discretization: Object.freeze(discretization),
    });
  }

  private trivialDiscretization(tailMass: number): PldDiscretization {
    return {
      valueDiscretization: this.options.valueDiscretization ?? 0,
      gridSize: 0,
      lossRange: [0, 0],
      tailMassBound: tailMass,
      relativeAccuracy: this.options.relativeAccuracy,
      automatic: this.options.valueDiscretization === undefined,
      tilt: 0,
    };
  }

  /**
   * Runs `query` on grids that are refined until it is acceptable (automatic grid), or once (a
   * grid given by the caller, whose inaccuracy becomes a warning). The composition is tilted at
   * `tiltTarget`'s saddle point when given, or when a query reports that floating-point error
   * limits it (then the same grid is recomputed tilted, once).
   */
  private evaluate(
    tailMass: number,
    align: readonly number[] | undefined,
    initialTilt: TiltTarget | undefined,
    query: (composed: ComposedPlds) => Evaluation,
    describeFailure: (e: Evaluation) => string,
  ): Evaluated {
    const engine = this.getEngine();
    const automatic = this.options.valueDiscretization === undefined;
    const engineOptions = { tailMass, maxGridSize: this.options.maxGridSize };
    // 0.9: a margin so that the first grid usually meets the accuracy (no second composition). For
    // a few compositions the variance rule can be far too fine (a loss concentrated near 0 with a
    // long thin tail): start at 2^16 points over the window at least, and let the accuracy check refine.
    let hMax = this.options.valueDiscretization ?? this.firstStep(tailMass);
    const hFirst = hMax;
    let tiltTarget = initialTilt;
    let retilted = false;
    let last: Evaluated | undefined;
    const settle = (reason: string) => {
      // The grid cannot be refined further: return the pessimistic end of the last bracket (a valid
      // bound) with a warning; fail only when nothing was computed.
      if (last !== undefined) {
        last.evaluation.warnings.push(`${describeFailure(last.evaluation)}: ${reason}; the values are valid bounds, raise maxGridSize (or relativeAccuracy) to tighten them`);
        return last;
      }
      throw new NumericalError(`the PLD composition failed: ${reason}`);
    };
    for (let attempt = 0; attempt <= MAX_REFINEMENTS; attempt++) {
      let h = hMax;
      let limited = false;
      if (automatic) {
        ({ h, limited } = engine.fitStep(hMax, engineOptions, align));
        if (limited && last !== undefined && h >= 0.98 * last.discretization.valueDiscretization) {
          return settle(`a finer grid than ${last.discretization.valueDiscretization} needs more than maxGridSize = ${this.options.maxGridSize} points`);
        }
      }
      let composed: ComposedPlds;
      let evaluation: Evaluation;
      try {
        let untilted: { composed: ComposedPlds; evaluation: Evaluation } | undefined;
        for (;;) {
          let tilt = tiltTarget === undefined ? 0 : tiltRung(engine.saddleTilt(h, engineOptions, tiltTarget.epsilon, tiltTarget.direction));
          let tilted: ComposedPlds | undefined;
          // A tilted window can be much wider than the plain one (a heavy upper tail, amplified by
          // the tilt): halve the tilt until it fits; without one, keep the untilted result, whose
          // error terms are valid, and stop tilting.
          // With an automatic grid, first try once a coarser grid that fits the whole tilted window:
          // a tilt cut down leaves the floating-point error that made the tilt necessary.
          let coarsened = !automatic;
          for (let halvings = 0; tilted === undefined && halvings < 8; halvings++) {
            try {
              tilted = this.composedAt(h, tailMass, tilt);
            } catch (error) {
              if (!(error instanceof NumericalError) || tilt === 0 || tiltTarget === undefined) throw error;
              if (!coarsened) {
                coarsened = true;
                const wider = engine.tiltedStep(h, engineOptions, tilt, align);
                if (wider > h) {
                  h = wider;
                  limited = true; // no finer grid fits this tilt
                  tilt = tiltRung(engine.saddleTilt(h, engineOptions, tiltTarget.epsilon, tiltTarget.direction));
                  halvings--;
                  continue;
                }
              }
              tilt /= 4;
            }
          }
          if (tilted === undefined) {
            tiltTarget = undefined;
            if (untilted === undefined) {
              composed = this.composedAt(h, tailMass, 0);
              evaluation = query(composed);
            } else ({ composed, evaluation } = untilted);
            break;
          }
          composed = tilted;
          evaluation = query(composed);
          if (evaluation.tiltAt === undefined || retilted) break;
          untilted = { composed, evaluation };
          retilted = true;
          tiltTarget = evaluation.tiltAt;
        }
      } catch (error) {
        if (error instanceof NumericalError && last !== undefined) return settle(`refining the grid further failed: ${error.message}`);
        throw error;
      }
      let low = Infinity;
      let high = -Infinity;
      for (const d of composed.directions) {
        low = Math.min(low, d.pessimistic.minIndex * h);
        high = Math.max(high, (d.pessimistic.minIndex + d.pessimistic.masses.length - 1) * h);
      }
      const discretization: PldDiscretization = {
        valueDiscretization: h,
        gridSize: composed.gridSize,
        lossRange: [low, high],
        tailMassBound: tailMass,
        relativeAccuracy: this.options.relativeAccuracy,
        automatic,
        tilt: composed.directions[0].pessimistic.tilt,
      };
      last = { evaluation, discretization, composed };
      if (evaluation.acceptable) return last;
      if (!automatic) {
        evaluation.warnings.push(`${describeFailure(evaluation)} at the given valueDiscretization ${h}; a finer grid would tighten it`);
        return last;
      }
      if (limited) return settle(`a finer grid needs more than maxGridSize = ${this.options.maxGridSize} points`);
      // The next step on the ladder below the first (query-plan.ts), so that queries agree.
      hMax = stepRung(hFirst, h * Math.min(0.7, Math.max(1 / 16, evaluation.shrink)));
    }
    return settle(`${MAX_REFINEMENTS} grid refinements (value discretization ${last!.discretization.valueDiscretization}) did not reach it`);
  }

  /** The largest grid step an automatic grid starts from (`evaluate`); refinements only lower it. */
  private firstStep(tailMass: number): number {
    const engine = this.getEngine();
    const engineOptions = { tailMass, maxGridSize: this.options.maxGridSize };
    let hMax = 0.9 * engine.automaticStep(this.options.relativeAccuracy);
    // No grid finer than one mechanism's loss range over maxGridSize can be composed (a rare, heavy
    // tail, e.g. q = 1e-4 at a tiny delta, makes the variance rule ask for one): start above it.
    hMax = Math.max(hMax, (1.05 * engine.mechanismWidth(engineOptions)) / (this.options.maxGridSize / 4 - 16));
    if (engine.totalCount <= 100) hMax = Math.max(hMax, engine.windowWidth(hMax, engineOptions) / 65536);
    return hMax;
  }

  /** The smallest epsilon such that the composition is (epsilon, delta)-DP, with epsilonLower. */
  override getEpsilon(delta: number): PldGuarantee {
    requireOpenUnit('delta', delta);
    return this.withProgress(() => this.capped('epsilon', delta, () => this.pldEpsilonAt(delta)));
  }

  /** A result with the schedule buckets' warnings (if any) appended. */
  private withBucketWarnings(result: PldGuarantee): PldGuarantee {
    const extra = this.bucketWarnings();
    return extra.length === 0 ? result : Object.freeze({ ...result, warnings: Object.freeze([...result.warnings, ...extra]) });
  }

  /** getEpsilon by the PLD alone. */
  private pldEpsilonAt(delta: number): PldGuarantee {
    if (!this.needsLowerAccountant()) return this.withBucketWarnings(this.epsilonOf(delta));
    // Gridded discrete noise (module comment): query at nextDown(delta), round epsilon up one ulp.
    // Schedules in buckets: the lower bound comes from the lower accountant only.
    const inner = this.gridded ? this.epsilonOf(nextDown(delta)) : this.epsilonOf(delta);
    const warnings = [...inner.warnings, ...this.bucketWarnings()]; // (how gridded noise is accounted: docs/accounting.md, always so)
    const above = this.outwardDelta(delta);
    const lower = above < 1 ? this.lowerBound((l) => l.getEpsilon(above).epsilonLower, warnings) : 0;
    const epsilon = this.outwardEpsilon(inner.epsilon);
    return this.describe(epsilon, delta, warnings, lower === undefined ? {} : { epsilonLower: Math.min(lower, epsilon) }, inner.discretization);
  }

  /**
   * epsilon at delta: answered on the epsilon query's own composition, then checked with the delta
   * query (`deltaAt`, what `getDelta` computes in a fresh accountant): the answer e satisfies
   * deltaAt(e) <= delta, raised on the delta query's composition when it did not, and lowered to
   * the smallest e that does on that composition (so that epsilon(delta(e)) <= e as well). Each
   * candidate is a valid bound (a pessimistic inverse), so the check only moves within valid answers.
   */
  private epsilonOf(delta: number): PldGuarantee {
    const checked = this.options.checkedEpsilon;
    const tailMass = this.options.tailMassBound ?? (checked ? tailMassFor : uncheckedTailMass)(delta, this.options.relativeAccuracy);
    if (this.nonPrivate) return this.describe(Infinity, delta, [], { epsilonLower: Infinity }, this.trivialDiscretization(tailMass));
    if (this.merged.size === 0) return this.describe(0, delta, [], { epsilonLower: 0 }, this.trivialDiscretization(tailMass));
    const accuracy = this.options.relativeAccuracy;
    const query = (composed: ComposedPlds): Evaluation => {
      let epsilon = 0;
      let lower = 0;
      let truncated = false;
      let binding: Direction = composed.directions[0].direction;
      let shift = 0;
      for (const d of composed.directions) {
        const upper = epsilonForDelta(d.pessimistic, delta);
        truncated ||= upper.belowTruncation;
        if (upper.epsilon > epsilon) binding = d.direction;
        epsilon = Math.max(epsilon, upper.epsilon);
        const low = epsilonForDelta(d.optimistic, delta);
        lower = Math.max(lower, low.epsilon);
        // How much of the result is floating-point error bound?
        shift = Math.max(shift, noiseShift(d.pessimistic, upper), noiseShift(d.optimistic, low));
      }
      lower = Math.min(lower, epsilon);
      const gap = epsilon - lower;
      const tolerance = accuracy * epsilon + 1e-12;
      const noisy = shift > 0.1 * tolerance;
      const acceptable = !truncated && (epsilon === lower || gap <= tolerance);
      const tolerable = !truncated && Number.isFinite(epsilon) && gap <= Math.max(10 * accuracy, TOLERABLE_GAP) * epsilon + 1e-12;
      const tiltAt = noisy && composed.directions[0].pessimistic.tilt === 0 && Number.isFinite(epsilon) ? { epsilon, direction: binding } : undefined;
      return { value: epsilon, lower, acceptable, tolerable, shrink: Number.isFinite(gap) && gap > 0 ? 0.9 * Math.sqrt(tolerance / gap) : 0.5, warnings: [], tiltAt };
    };
    let result: Evaluated;
    try {
      result = this.evaluate(tailMass, this.getEngine().atoms(), undefined, query, (e) => `epsilon at delta = ${delta} is only known to lie in [${e.lower}, ${e.value}] (requested relative accuracy ${accuracy})`);
    } catch (error) {
      // The epsilon query's own composition failed (a window beyond maxGridSize): start the delta
      // query's check below from the other bounds' epsilon, where the delta query tilts. (Unchecked,
      // the other bounds answer alone: `capped`.)
      const start = error instanceof NumericalError && this.noiseRounding === 'down' && checked ? this.others.epsilon(delta, Infinity) : undefined;
      if (start === undefined || !(start.value > 0)) throw error;
      const check = this.deltaAt(start.value);
      result = { evaluation: { value: start.value, lower: 0, acceptable: false, tolerable: false, shrink: 1, warnings: [] }, discretization: check.discretization, composed: check.composed };
    }
    let lower = result.evaluation.lower;
    let epsilon = consistentEpsilon(result.composed, delta, result.evaluation.value);
    let discretization = result.discretization;
    // The check by the delta query (module comment): from each candidate e, the delta query's
    // composition at e gives the next one, the smallest epsilon at which that composition's delta is
    // <= delta (above e when the delta query disagreed at e, below when it agreed: its composition is
    // tilted at e and may be tighter there). The answer is the smallest candidate the delta query
    // agreed with; without one, the last candidate (each is a valid bound: a pessimistic inverse).
    const rounds = this.noiseRounding === 'up' || !checked ? 0 : CHECK_ROUNDS; // (the lower-bound accountant's upper ends are not reported)
    let agreed: number | undefined;
    let candidate = epsilon;
    let lowered: ComposedPlds | undefined; // the composition the last candidate is the lowest on
    for (let round = 0; round < rounds && Number.isFinite(candidate); round++) {
      const check = this.deltaAt(candidate);
      if (check.composed === lowered && check.evaluation.value <= delta) {
        agreed = candidate; // already the smallest on this composition
        discretization = check.discretization;
        break;
      }
      for (const d of check.composed.directions) lower = Math.max(lower, epsilonForDelta(d.optimistic, delta).epsilon);
      let next: number;
      if (check.evaluation.value <= delta) {
        if (agreed === undefined || candidate < agreed) {
          agreed = candidate;
          discretization = check.discretization;
        }
        next = lowestOn(check.composed, delta, candidate, Math.min(lower, candidate));
        lowered = check.composed;
        // Steps below 1e-12 relative are not worth a composition (a single release's is aligned at
        // its epsilon, so each candidate composes anew).
        const single = this.getEngine().totalCount === 1;
        if (!(next < (single ? candidate * (1 - 1e-12) : candidate))) break;
      } else {
        const raised = consistentEpsilon(check.composed, delta, composedEpsilon(check.composed, delta));
        next = raised > candidate ? raised : candidate + Math.max(4 * Number.EPSILON * candidate, Number.MIN_VALUE) * 2 ** round;
        if (agreed !== undefined && next >= agreed) break;
      }
      candidate = next;
    }
    epsilon = agreed ?? candidate;
    return this.describe(epsilon, delta, result.evaluation.warnings, { epsilonLower: Math.min(lower, epsilon) }, discretization);
  }

  /** The smallest delta such that the composition is (epsilon, delta)-DP, with deltaLower. */
  override getDelta(epsilon: number): PldGuarantee {
    requireNonNegative('epsilon', epsilon);
    return this.withProgress(() => this.capped('delta', epsilon, () => this.pldDeltaAt(epsilon)));
  }

  /** getDelta by the PLD alone. */
  private pldDeltaAt(epsilon: number): PldGuarantee {
    if (!this.needsLowerAccountant()) return this.withBucketWarnings(this.deltaOf(epsilon));
    // Gridded discrete noise (module comment): query at nextDown(epsilon), round delta up one ulp.
    const inner = this.deltaOf(this.inwardEpsilon(epsilon));
    const warnings = [...inner.warnings, ...this.bucketWarnings()]; // (how gridded noise is accounted: docs/accounting.md, always so)
    const beyond = this.outwardEpsilon(epsilon);
    const lower = Number.isFinite(beyond) ? this.lowerBound((l) => l.getDelta(beyond).deltaLower, warnings) : 0;
    const delta = this.outwardDelta(inner.delta);
    return this.describe(epsilon, delta, warnings, lower === undefined ? {} : { deltaLower: Math.min(lower, delta) }, inner.discretization);
  }

  private deltaOf(epsilon: number): PldGuarantee {
    const firstTail = this.options.tailMassBound ?? DEFAULT_TAIL_MASS;
    if (this.nonPrivate) return this.describe(epsilon, 1, [], { deltaLower: 1 }, this.trivialDiscretization(firstTail));
    if (this.merged.size === 0) return this.describe(epsilon, 0, [], { deltaLower: 0 }, this.trivialDiscretization(firstTail));
    const result = this.deltaAt(epsilon);
    return this.describe(epsilon, result.evaluation.value, result.evaluation.warnings, { deltaLower: Math.min(result.evaluation.lower, result.evaluation.value) }, result.discretization);
  }

  /**
   * The delta query at epsilon: a function of the event, the options and epsilon only (no earlier
   * query changes it), so that what a fresh process answers is what `epsilonOf` checks against.
   */
  private deltaAt(epsilon: number): Evaluated {
    const engine = this.getEngine();
    // A single release is exact at grid points (connect-the-dots interpolates the exact curve):
    // put epsilon on the grid unless an atom of the loss claims the alignment, or epsilon is below
    // the first step (aligning would make the step epsilon itself: at epsilon = 1e-9 a grid far
    // beyond maxGridSize, and an answer that failed or was loose; the grid then stays unaligned).
    const atoms = engine.atoms();
    const alignFor = (tailMass: number) =>
      atoms.length > 0 ? atoms : engine.totalCount === 1 && epsilon > 0 && (this.options.valueDiscretization !== undefined || epsilon >= this.firstStep(tailMass)) ? [epsilon] : undefined;
    const accuracy = this.options.relativeAccuracy;
    let floor = 0;
    const query = (composed: ComposedPlds): Evaluation => {
      let delta = 0;
      let lower = 0;
      let shifted = 0;
      let shiftedFar = 0;
      const far = Math.max(10 * accuracy, TOLERABLE_GAP);
      floor = 0;
      for (const d of composed.directions) {
        delta = Math.max(delta, deltaForEpsilon(d.pessimistic, epsilon));
        lower = Math.max(lower, deltaForEpsilon(d.optimistic, epsilon));
        shifted = Math.max(shifted, deltaForEpsilon(d.optimistic, epsilon * (1 - accuracy)));
        shiftedFar = Math.max(shiftedFar, deltaForEpsilon(d.optimistic, epsilon * (1 - far)));
        const p = d.pessimistic;
        const noise = deltaForEpsilon(p, epsilon) - deltaWithoutBinError(p, epsilon);
        floor = Math.max(floor, p.truncationMass + noise);
      }
      lower = Math.min(lower, delta);
      const warnings: string[] = [];
      let acceptable = delta - lower <= accuracy * delta || shifted >= delta;
      if (!acceptable && delta <= 100 * floor) {
        acceptable = true;
        warnings.push(`delta = ${delta} is near the resolution of the computation (truncation and rounding ${floor}): it is a valid upper bound, but the exact value may be much smaller`);
      }
      const gap = delta - lower;
      const tolerable = acceptable || gap <= far * delta || shiftedFar >= delta;
      // Floating-point error a noticeable part of delta: recompute tilted at epsilon.
      let binding: Direction = composed.directions[0].direction;
      let noise = 0;
      for (const d of composed.directions) {
        if (deltaForEpsilon(d.pessimistic, epsilon) >= delta) binding = d.direction;
        noise = Math.max(noise, noiseAt(d.pessimistic, epsilon), noiseAt(d.optimistic, epsilon));
      }
      // Compared with what the accuracy allows (delta's change over a relative epsilon step of
      // relativeAccuracy); for a single release on a small grid, where a second pass is cheap, with
      // 1e-3 of that step in delta itself, so that it matches closed forms to ~1e-9. (Not for
      // compositions: an epsilon query, which does not tilt then, checks its answer here, and
      // finds the composition it made in the cache.)
      const allowed = 0.1 * Math.max(accuracy * delta, shifted - lower);
      const cheap = composed.gridSize <= 1 << 17 && engine.totalCount === 1;
      const tiltAt = composed.directions[0].pessimistic.tilt === 0 && (noise > allowed || (cheap && noise > 1e-3 * accuracy * delta)) ? { epsilon, direction: binding } : undefined;
      return { value: delta, lower, acceptable, tolerable, shrink: gap > 0 ? 0.9 * Math.sqrt((accuracy * delta) / gap) : 0.5, warnings, tiltAt };
    };
    const describeFailure = (e: Evaluation) => `delta at epsilon = ${epsilon} is only known to lie in [${e.lower}, ${e.value}] (requested relative accuracy ${accuracy})`;
    // The tail mass: 1e-18, or the level (query-plan.ts) of the other bounds' delta at epsilon when
    // that is tiny (an upper bound on the exact delta); then, for a tiny delta or one the truncation
    // and rounding limit, the level of the delta found, as an epsilon query at that delta would use.
    const hint = this.noiseRounding === 'down' && this.options.tailMassBound === undefined ? this.others.roughDelta(epsilon) : undefined;
    let tailMass = this.options.tailMassBound ?? (hint !== undefined && hint > 0 ? tailMassFor(hint, accuracy) : DEFAULT_TAIL_MASS);
    for (let round = 0; ; round++) {
      const evaluated = this.evaluate(tailMass, alignFor(tailMass), undefined, query, describeFailure);
      const delta = evaluated.evaluation.value;
      if (this.options.tailMassBound !== undefined || round >= 3 || !(delta > 0)) return evaluated;
      let wanted = tailMassFor(delta, accuracy);
      if (floor > 1e-3 * accuracy * delta) wanted = Math.min(wanted, tailMassFor(1e-2 * delta, accuracy));
      if (!(wanted < tailMass)) return evaluated;
      tailMass = wanted;
    }
  }
}

/** The worst direction's pessimistic epsilon at delta on a composition. */
function composedEpsilon(composed: ComposedPlds, delta: number): number {
  let epsilon = 0;
  for (const d of composed.directions) epsilon = Math.max(epsilon, epsilonForDelta(d.pessimistic, delta).epsilon);
  return epsilon;
}

/** The worst direction's pessimistic delta at epsilon on a composition. */
function composedDelta(composed: ComposedPlds, epsilon: number): number {
  let delta = 0;
  for (const d of composed.directions) delta = Math.max(delta, deltaForEpsilon(d.pessimistic, epsilon));
  return delta;
}

/**
 * epsilon, raised by a few ulps if needed so that the composition's own (pessimistic) delta at it is
 * at most delta: a delta query answered on the same composition then gives at most delta.
 */
function consistentEpsilon(composed: ComposedPlds, delta: number, epsilon: number): number {
  let e = epsilon;
  let step = 4 * Number.EPSILON * Math.max(1, e);
  for (let i = 0; i < 64 && Number.isFinite(e) && composedDelta(composed, e) > delta; i++) {
    e += step;
    step *= 2;
  }
  return e;
}

/**
 * The smallest double x in [floor, epsilon] with the composition's pessimistic delta(x) <= delta,
 * given that epsilon has it (bisection from the composition's own inverse; the curve is
 * nonincreasing).
 */
function lowestOn(composed: ComposedPlds, delta: number, epsilon: number, floor: number): number {
  if (!(epsilon > 0) || !Number.isFinite(epsilon)) return epsilon;
  const ok = (x: number) => composedDelta(composed, x) <= delta;
  let hi = Math.min(epsilon, consistentEpsilon(composed, delta, composedEpsilon(composed, delta)));
  if (!ok(hi)) hi = epsilon;
  // Down in steps growing 16-fold from 1e-12 relative until delta exceeds, then bisection (the
  // composition's own inverse is conservative by its rounding bound, about n ulps of delta).
  let lo = hi;
  for (let k = 0; ; k++) {
    const step = 1e-12 * 16 ** k;
    lo = step < 1 ? Math.max(floor, hi * (1 - step) - Number.MIN_VALUE) : Math.max(0, floor);
    if (!(lo < hi)) return hi;
    if (!ok(lo)) break;
    if (step >= 1 || lo <= floor) return lo;
    hi = lo;
  }
  for (let i = 0; i < 1100; i++) {
    const mid = lo + (hi - lo) / 2;
    if (mid <= lo || mid >= hi) break;
    if (ok(mid)) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** epsilon of one event at delta by the PLD accountant. */
export function pldEpsilon(event: DpEvent, delta: number, options: PldAccountantOptions = {}): PldGuarantee {
  rejectUnknownOptions(options, PLD_ACCOUNTANT_OPTIONS, 'pldEpsilon');
  return new PldAccountant(options).compose(event).getEpsilon(delta);
}

/** delta of one event at epsilon by the PLD accountant. */
export function pldDelta(event: DpEvent, epsilon: number, options: PldAccountantOptions = {}): PldGuarantee {
  rejectUnknownOptions(options, PLD_ACCOUNTANT_OPTIONS, 'pldDelta');
  return new PldAccountant(options).compose(event).getDelta(epsilon);
}

/**
 * The warning of a caller that accounts `event` by RDP because the PLD accountant does not support
 * it (`supports(event)` is false), with the PLD accountant's own reason (its UnsupportedEventError).
 */
export function pldFallbackWarning(event: DpEvent): string {
  let reason = 'an unsupported sub-event';
  try {
    new PldAccountant().compose(event);
  } catch (error) {
    if (error instanceof UnsupportedEventError) reason = error.message;
    else throw error;
  }
  return `the PLD accountant cannot account this event (${reason}): accounted by RDP instead`;
}
