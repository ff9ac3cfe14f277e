/**
 * Composition of discrete PLDs in the Fourier domain (Koskela, Jälkö, Honkela 2020, Sec. 4;
 * Koskela et al. 2021; Zhu, Dong, Wang 2022, Sec. 5: the characteristic function of a sum of
 * independent losses is the product of theirs). Every distinct mechanism is transformed once, its
 * transform raised to its count (one exponentiation per frequency, however large the count) and
 * multiplied into the product; one inverse transform gives the composed PLD. Heterogeneous
 * compositions (several DP-SGD phases, objective perturbation + Gaussian) cost one transform per
 * distinct mechanism.
 *
 * Circular convolution and truncation. The transform has N points (a power of two) covering the
 * window [A, A + N) of grid indices of the composed loss, chosen by Chernoff bounds
 * (`tail-bounds.ts`) so that at most `tailMass` lies outside it on either side. Mass outside the
 * window wraps around (aliasing). For the PESSIMISTIC PLD, mass from below the window lands at
 * the top (moved up: pessimistic) and mass from above lands at the bottom, so a bound on the mass
 * above the window is added to the mass at +infinity. For the OPTIMISTIC PLD, mass from above
 * lands at the bottom (moved down: optimistic) and a bound on the mass below the window, which
 * may land anywhere, is subtracted from every delta. Each mechanism's PLD is centred on its mean
 * before the transform so that the phases stay small and accurate under exponentiation.
 *
 * Directions. When a mechanism's remove and add directions have different PLDs (Poisson
 * subsampling under add/remove adjacency), each direction is composed separately; the caller
 * reports the worse of the two (valid: for a fixed pair of neighbouring datasets every step of an
 * adaptive composition is in the same direction).
 *
 * Real-pair packing: the pessimistic and optimistic PLDs of a mechanism are transformed together as
 * one complex signal (pessimistic + i optimistic) and separated by Hermitian symmetry, so the
 * lower bound costs no extra transform.
 *
 * Tilting (`tilt.ts`): with tilt lambda > 0 the mechanisms are tilted before the transforms and the
 * result is kept tilted (`DiscretePld.tilt`), which puts the FFT's precision where delta(epsilon)
 * lives. Untilting multiplies what wrapped around from above the window by e^{lambda N h} and what
 * wrapped from below by e^{-lambda N h}; the window's top is chosen so that the former stays below
 * the tail bound, and both are accounted for in the error terms. The mass below a tilted window is
 * not represented: queries below `validFrom` add a bound for it (pessimistic) or ignore it
 * (optimistic).
 */
import { NumericalError } from '../../errors.js';
import type { DiscretePld } from './discrete-pld.js';
import { fftToBitReversed } from './fft.js';
import { tiltPld } from './tilt.js';
import { inverseProduct, multiplyPowers, SpectrumProduct, type PowerTarget } from './spectrum-product.js';
import {
  binnedMgf,
  binWidthFor,
  lowerTailPoint,
  massAtOrAbove,
  massAtOrBelow,
  pldMoments,
  shiftedUpperTailPoint,
  upperTailPoint,
  type BinnedMgf,
  type PldMoments,
  type TailPart,
} from './tail-bounds.js';

export type Direction = 'remove' | 'add';

export interface PldPair {
  readonly pessimistic: DiscretePld;
  readonly optimistic: DiscretePld;
}

export interface CompositionTerm {
  readonly count: number;
  readonly remove: PldPair;
  /** The add direction, when its PLD differs from the remove direction's. */
  readonly add?: PldPair;
}

export interface ComposedDirection extends PldPair {
  readonly direction: Direction;
}

export interface ComposedPlds {
  readonly directions: readonly ComposedDirection[];
  /** Number of points of the transforms. */
  readonly gridSize: number;
}

export interface ComposeOptions {
  /** Probability allowed outside the window on each side (and for each of the two PLDs). */
  readonly tailMass: number;
  /** Largest transform size; a larger need is a NumericalError. */
  readonly maxGridSize: number;
  /** Exponential tilt lambda >= 0 of the composition (default 0). */
  readonly tilt?: number;
  /** Called after each distinct PLD pair is transformed and multiplied in (progress reports). */
  readonly onTransform?: () => void;
}

function nextPowerOfTwo(n: number): number {
  let p = 2;
  while (p < n) p *= 2;
  return p;
}

function mod(a: number, n: number): number {
  const r = a % n;
  return r < 0 ? r + n : r;
}

/** log P(finite) of `count` independent copies: count log(1 - infinityMass). */
function logFinite(infinityMass: number, count: number): number {
  return infinityMass >= 1 ? -Infinity : count * Math.log1p(-infinityMass);
}

function totalMass(m: Float64Array): number {
  let s = 0;
  for (let i = 0; i < m.length; i++) s += m[i];
  return s;
}

interface Setup {
  readonly active: readonly CompositionTerm[];
  readonly h: number;
  readonly directions: readonly Direction[];
  readonly pairOf: (t: CompositionTerm, d: Direction) => PldPair;
  /** true when some mechanism has no finite part (the composition has none either). */
  readonly empty: boolean;
  readonly parts: (d: Direction, kind: 'pessimistic' | 'optimistic') => TailPart[];
}

function setup(terms: readonly CompositionTerm[], tailMass: number): Setup {
  const active = terms.filter((t) => t.count > 0);
  if (active.length === 0) throw new NumericalError('internal error: composePlds needs at least one term with count > 0');
  const h = active[0].remove.pessimistic.valueDiscretization;
  const directions: Direction[] = active.some((t) => t.add !== undefined) ? ['remove', 'add'] : ['remove'];
  const pairOf = (t: CompositionTerm, d: Direction): PldPair => (d === 'add' ? (t.add ?? t.remove) : t.remove);
  const empty = active.some((t) => directions.some((d) => totalMass(pairOf(t, d).pessimistic.masses) === 0));
  const momentCache = new Map<DiscretePld, PldMoments>();
  const moments = (pld: DiscretePld) => {
    let m = momentCache.get(pld);
    if (m === undefined) momentCache.set(pld, (m = pldMoments(pld)));
    return m;
  };
  // Bin width of the MGF bounds, from the composed variance of the widest direction.
  let totalCount = 0;
  let totalVariance = 0;
  for (const t of active) {
    totalCount += t.count;
    totalVariance += t.count * Math.max(...directions.map((d) => moments(pairOf(t, d).pessimistic).variance));
  }
  const width = binWidthFor(totalCount, totalVariance, tailMass, h);
  const mgfCache = new Map<DiscretePld, BinnedMgf>();
  const mgf = (pld: DiscretePld) => {
    let c = mgfCache.get(pld);
    if (c === undefined) mgfCache.set(pld, (c = binnedMgf(pld, width)));
    return c;
  };
  const parts = (d: Direction, kind: 'pessimistic' | 'optimistic'): TailPart[] =>
    active.map((t) => ({ mgf: mgf(pairOf(t, d)[kind]), moments: moments(pairOf(t, d)[kind]), count: t.count }));
  return { active, h, directions, pairOf, empty, parts };
}

/**
 * Window of grid indices of each direction: below `low` and above `high` lies at most tailMass
 * (Chernoff). The optimistic PLD's lower tail and the pessimistic PLD's upper tail are the ones
 * whose truncation is accounted for; the other two tails are close to these. `tilted` gives the
 * tails of the tilted mechanisms (the FFT's content); `plain` the untilted ones, whose upper tail
 * must also fit (its truncation is added to delta), amplified by e^{lambda (high - low)} when tilted.
 */
function windowsOf(tilted: Setup, plain: Setup, tailMass: number, lambda: number): { low: number; high: number }[] {
  const h = plain.h;
  return plain.directions.map((d) => {
    if (plain.empty) return { low: 0, high: 0 };
    // The pessimistic PLD's lower tail too: connect-the-dots puts mass one grid point below the
    // optimistic one's lowest point, and for a loss piled up at its lower bound (Poisson
    // subsampling, remove direction) that point holds most of the mass; wrapped around to the top
    // of the window it would make delta ~1 everywhere (valid, but useless).
    const low = Math.min(lowerTailPoint(tilted.parts(d, 'optimistic'), tailMass), lowerTailPoint(tilted.parts(d, 'pessimistic'), tailMass));
    let high = Math.max(upperTailPoint(tilted.parts(d, 'pessimistic'), tailMass), upperTailPoint(plain.parts(d, 'pessimistic'), tailMass));
    if (lambda > 0) {
      for (const kind of ['pessimistic', 'optimistic'] as const) high = Math.max(high, shiftedUpperTailPoint(plain.parts(d, kind), lambda, low, tailMass));
    }
    return { low: Math.floor(low / h) - 1, high: Math.ceil(high / h) + 1 };
  });
}

/** The widest loss window (high - low) the composition of `terms` needs, for planning the grid. */
export function compositionWidth(terms: readonly CompositionTerm[], tailMass: number): number {
  const s = setup(terms, tailMass);
  return Math.max(...windowsOf(s, s, tailMass, 0).map((w) => (w.high - w.low) * s.h));
}

/** Grid points of the widest window the composition of `terms` tilted by `lambda` needs (`composePlds`). */
export function compositionPoints(terms: readonly CompositionTerm[], tailMass: number, lambda: number): number {
  const plain = setup(terms, tailMass);
  const s = lambda > 0 ? setup(tiltTerms(terms, lambda), tailMass) : plain;
  return Math.max(...windowsOf(s, plain, tailMass, lambda).map((w) => w.high - w.low + 1));
}

function tiltTerms(terms: readonly CompositionTerm[], lambda: number): CompositionTerm[] {
  const cache = new Map<PldPair, PldPair>();
  const tiltPair = (p: PldPair) => {
    let t = cache.get(p);
    if (t === undefined) cache.set(p, (t = { pessimistic: tiltPld(p.pessimistic, lambda), optimistic: tiltPld(p.optimistic, lambda) }));
    return t;
  };
  return terms.map((t) => ({ count: t.count, remove: tiltPair(t.remove), ...(t.add === undefined ? {} : { add: tiltPair(t.add) }) }));
}

export function composePlds(terms: readonly CompositionTerm[], options: ComposeOptions): ComposedPlds {
  const lambda = options.tilt ?? 0;
  if (!(lambda >= 0) || !Number.isFinite(lambda)) throw new NumericalError(`internal error: tilt must be a finite number >= 0, got ${lambda}`);
  const plain = setup(terms, options.tailMass);
  const s = lambda > 0 ? setup(tiltTerms(terms, lambda), options.tailMass) : plain;
  const { active, h, directions, pairOf, empty } = s;
  const windows = windowsOf(s, plain, options.tailMass, lambda);
  const totalCount = active.reduce((sum, t) => sum + t.count, 0);
  const needed = Math.max(...windows.map((w) => w.high - w.low + 1));
  if (!Number.isFinite(needed)) throw new NumericalError('internal error: the composed loss has no finite window');
  const n = nextPowerOfTwo(needed);
  if (n > options.maxGridSize) {
    throw new NumericalError(
      `the composed privacy loss needs ${needed} grid points at value discretization ${h} (more than maxGridSize = ${options.maxGridSize}); ` +
        'use a coarser valueDiscretization or a larger relativeAccuracy, or raise maxGridSize',
    );
  }

  const products = new Map<Direction, SpectrumProduct>();
  const offsets = new Map<Direction, number>();
  for (const d of directions) {
    products.set(d, new SpectrumProduct(n));
    offsets.set(d, 0);
  }
  const { re, im } = scratch(n);
  if (!empty) {
    // Each distinct pair is transformed once and multiplied into every direction that uses it.
    const users = new Map<PldPair, PowerTarget[]>();
    const userDirections = new Map<PldPair, Direction[]>();
    for (const t of active) {
      for (const d of directions) {
        const pair = pairOf(t, d);
        let list = users.get(pair);
        if (list === undefined) {
          users.set(pair, (list = []));
          userDirections.set(pair, []);
        }
        list.push({ product: products.get(d)!, count: t.count });
        userDirections.get(pair)!.push(d);
      }
    }
    for (const [pair, targets] of users) {
      const { pessimistic: pess, optimistic: opt } = pair;
      const center = meanIndex(pess);
      re.fill(0);
      im.fill(0);
      place(re, pess, center);
      place(im, opt, center);
      fftToBitReversed(re, im);
      multiplyPowers(re, im, targets);
      const used = userDirections.get(pair)!;
      targets.forEach((target, i) => offsets.set(used[i], offsets.get(used[i])! + target.count * center));
      options.onTransform?.();
    }
  }

  const out: ComposedDirection[] = [];
  directions.forEach((d, index) => {
    const start = windows[index].low;
    const offset = offsets.get(d)!;
    let logFinitePess = 0;
    let logFiniteTrue = 0;
    let logFiniteOpt = 0;
    let logScalePess = 0;
    let logScaleOpt = 0;
    for (const t of active) {
      const pair = pairOf(t, d);
      logFinitePess += logFinite(pair.pessimistic.infinityMass, t.count);
      logFiniteTrue += logFinite(pair.pessimistic.infinityMass - pair.pessimistic.truncationMass, t.count);
      logFiniteOpt += logFinite(pair.optimistic.infinityMass, t.count);
      logScalePess += t.count * pair.pessimistic.logScale;
      logScaleOpt += t.count * pair.optimistic.logScale;
    }
    const infPess = -Math.expm1(logFinitePess);
    const infTrue = -Math.expm1(logFiniteTrue);
    const infOpt = -Math.expm1(logFiniteOpt);
    if (empty) {
      out.push({
        direction: d,
        pessimistic: { ...emptyPld(h, true), infinityMass: 1, truncationMass: Math.max(0, 1 - infTrue) },
        optimistic: { ...emptyPld(h, false), infinityMass: infOpt },
      });
      return;
    }
    inverseProduct(products.get(d)!, re, im);
    const rotate = (source: Float64Array, clampNegative: boolean) => {
      const masses = new Float64Array(n);
      const pos = mod(start - offset, n);
      masses.set(source.subarray(pos), 0);
      masses.set(source.subarray(0, pos), n - pos);
      let maxNegative = 0;
      let maxAbs = 0;
      for (let j = 0; j < n; j++) {
        const v = masses[j];
        if (v < 0) {
          if (-v > maxNegative) maxNegative = -v;
          if (clampNegative) masses[j] = 0;
        } else if (v > maxAbs) maxAbs = v;
      }
      if (maxNegative > maxAbs) maxAbs = maxNegative;
      // Floating-point error per bin. Each transform errs by about eps times its largest value, and
      // the power k of the spectrum multiplies that by k: the composed entries carry an error of
      // about (sum of counts) eps max|x|, spread smoothly over all bins (measured: 0.2 to 0.8 times
      // that). The largest negative value (true masses are >= 0) shows the noise directly when it
      // is negative there; the larger of 4 times it and the a-priori level is used.
      const noise = Math.max(4 * maxNegative, totalCount * Number.EPSILON * maxAbs, 4 * Number.EPSILON * maxAbs);
      return { masses, noise };
    };
    // The composition's finite part has no mass above the sum of the mechanisms' largest losses:
    // the bins there hold only rounding (and mass wrapped around from below the window, whose
    // losses lie below every epsilon the window answers). Cutting them off keeps their error
    // bounds out of delta, which otherwise sets a floor (e.g. a direction whose losses stay far
    // below the other direction's epsilon, yet share its window).
    const supportEnd = (kind: 'pessimistic' | 'optimistic') => {
      let top = 0;
      for (const t of active) top += t.count * lastPositive(pairOf(t, d)[kind]);
      return top - start + 1;
    };
    const p = trimTo(rotate(re, true), supportEnd('pessimistic'));
    const o = trimTo(rotate(im, false), supportEnd('optimistic'));
    const top = (start + n) * h; // first loss above the window
    const bottom = (start - 1) * h; // last loss below it
    const span = lambda * n * h;
    // Untilted mass above the window: moved to +infinity (pessimistic). What wrapped around from
    // above is amplified by e^{lambda N h} (harmless for the pessimistic PLD, subtracted from the
    // optimistic one); what wrapped from below is damped by e^{-lambda N h}.
    const above = massAtOrAbove(plain.parts(d, 'pessimistic'), top);
    const aboveOpt = lambda > 0 ? massAtOrAbove(plain.parts(d, 'optimistic'), top) : 0;
    const wrappedAbove = aboveOpt > 0 ? Math.min(1, Math.exp(span + Math.log(aboveOpt))) : 0;
    const belowOpt = massAtOrBelow(plain.parts(d, 'optimistic'), bottom);
    const wrappedBelow = belowOpt > 0 ? Math.exp(Math.log(belowOpt) - span) : 0;
    const belowPess = lambda > 0 ? massAtOrBelow(plain.parts(d, 'pessimistic'), bottom) : 0;
    out.push({
      direction: d,
      pessimistic: {
        valueDiscretization: h,
        minIndex: start,
        masses: p.masses,
        tilt: lambda,
        logScale: logScalePess,
        infinityMass: Math.min(1, infPess + above),
        truncationMass: Math.min(1, infPess - infTrue + above),
        errorPerBin: p.noise,
        pessimistic: true,
        belowWindowMass: belowPess,
      },
      optimistic: {
        valueDiscretization: h,
        minIndex: start,
        masses: o.masses,
        tilt: lambda,
        logScale: logScaleOpt,
        infinityMass: infOpt,
        truncationMass: Math.min(1, wrappedBelow + wrappedAbove),
        errorPerBin: o.noise,
        pessimistic: false,
        belowWindowMass: 0,
      },
    });
  });
  return { directions: out, gridSize: n };
}

/** Index of the last grid point of a PLD carrying mass (its minIndex when none). */
function lastPositive(pld: DiscretePld): number {
  for (let j = pld.masses.length - 1; j >= 0; j--) if (pld.masses[j] > 0) return pld.minIndex + j;
  return pld.minIndex;
}

/** The first `length` bins (at least 1) when fewer than all. */
function trimTo<T extends { masses: Float64Array }>(x: T, length: number): T {
  if (!(length < x.masses.length)) return x;
  return { ...x, masses: x.masses.slice(0, Math.max(1, length)) };
}

let scratchBuffers: { re: Float64Array; im: Float64Array } | undefined;

/** Work arrays of length n, reused across calls (allocating 2^20-point arrays costs page faults and GC). */
function scratch(n: number): { re: Float64Array; im: Float64Array } {
  if (scratchBuffers === undefined || scratchBuffers.re.length !== n) scratchBuffers = { re: new Float64Array(n), im: new Float64Array(n) };
  return scratchBuffers;
}

/** Adds a PLD's masses into the circular buffer, index i at position (i - center) mod n. */
function place(buffer: Float64Array, pld: DiscretePld, center: number): void {
  const n = buffer.length;
  const m = pld.masses;
  let pos = mod(pld.minIndex - center, n);
  for (let j = 0; j < m.length; j++) {
    buffer[pos] += m[j];
    if (++pos === n) pos = 0;
  }
}

function emptyPld(h: number, pessimistic: boolean): DiscretePld {
  return { valueDiscretization: h, minIndex: 0, masses: new Float64Array(1), tilt: 0, logScale: 0, infinityMass: 0, truncationMass: 0, errorPerBin: 0, pessimistic, belowWindowMass: 0 };
}

/** Index of the mean of a PLD's finite part (rounded), to centre it before the transform. */
function meanIndex(pld: DiscretePld): number {
  let s = 0;
  let m = 0;
  for (let j = 0; j < pld.masses.length; j++) {
    s += pld.masses[j] * j;
    m += pld.masses[j];
  }
  return pld.minIndex + (m > 0 ? Math.round(s / m) : 0);
}
