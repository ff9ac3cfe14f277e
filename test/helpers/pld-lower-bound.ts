/**
 * An independent numerical LOWER bound on epsilon(delta) of T-fold Poisson-subsampled Gaussians
 * (add/remove adjacency, Zhu, Dong & Wang 2022, Thm. 11), for tests and the pld-sweep bench. It
 * shares no code with src/accounting/pld (only the normal tail functions of src/math).
 *
 * Why it is a lower bound. delta(eps) = E_P[(1 - e^{eps - S})_+] of the composed loss S is, as a
 * function of u = e^{-L} for each step, an expectation of a convex function, so replacing a group
 * of a step's loss values by one value at their u-mean (a contraction, Jensen) can only lower it,
 * and so can moving mass to smaller losses or dropping it; independent steps compose these
 * orderings (Doroshenko et al. 2022, Sec. 3, and any text on convex orders). Each x-cell of the
 * Gaussian output whose loss lies between two grid points is first contracted to its u-mean
 * log(P(cell) / Q(cell)); then consecutive contracted points are pooled so that every pool's u-mean
 * is exactly a grid point (mass from the pool's next point taken just as needed, so the pooling is
 * itself a contraction): no first-order error, which over 1e5 steps would be ruinous. The last pool
 * is rounded down to a grid point; mass beyond the grid is dropped.
 *
 * The T-fold composition is a power in the Fourier domain (own radix-2 FFT), tilted at the saddle
 * point of a target epsilon (e^{lambda s} per step, which commutes with convolution) so that the
 * FFT's rounding is relative to the bins that make delta. From each bin of the circular result are
 * subtracted: a Chernoff bound on the tilted mass that aliasing may have put there, and a
 * floating-point error bound (4 times the largest negative bin, at least (T + 8 log2 N) eps times
 * the largest bin). epsilon is then the exact inverse of the resulting lower curve.
 */
import { normalLogSf } from '../../src/math/normal.js';

export interface LowerBoundInput {
  readonly samplingProbability: number;
  readonly noiseMultiplier: number;
  readonly steps: number;
  readonly delta: number;
  /** Where to tilt (e.g. the accountant's epsilon): any value gives a valid bound, this one a tight one. */
  readonly targetEpsilon: number;
  /** Loss grid step (default: from the target and the step count). */
  readonly step?: number;
  /** Largest FFT size (default 2^21). */
  readonly maxPoints?: number;
}

/** log(e^a - e^b) for a >= b. */
function logDiffExp(a: number, b: number): number {
  if (b === -Infinity) return a;
  return a + Math.log(-Math.expm1(b - a));
}

/** log P(x1 < X <= x2) for X ~ N(mean, sd^2). */
function logCellMass(x1: number, x2: number, mean: number, sd: number): number {
  const a = (x1 - mean) / sd;
  const b = (x2 - mean) / sd;
  if (a > 0) return logDiffExp(normalLogSf(a), normalLogSf(b)); // upper tail: survival functions
  return logDiffExp(normalLogSf(-b), normalLogSf(-a)); // lower half: P(-b <= -X < -a)
}

/** One step's contracted atoms (loss, P-mass), increasing in loss for 'remove', decreasing for 'add'. */
function contractedAtoms(q: number, z: number, h: number, direction: 'remove' | 'add', logDrop: number): { loss: number; mass: number }[] {
  // Remove-direction loss of output x: T(l(x)) with l(x) = (2x - 1) / (2 z^2), T(t) = log(1 - q + q e^t).
  // Cells in x between the points where the remove loss is k h; the add-direction loss is minus it.
  const xOfLoss = (s: number) => {
    const t = s > 30 ? s - Math.log(q) + Math.log1p(-(1 - q) * Math.exp(-s)) : Math.log1p(Math.expm1(s) / q);
    return z * z * t + 0.5;
  };
  // Below the smallest loss log(1 - q) the first cell starts at x = -inf; for q = 1 (no smallest
  // loss) the grid starts where both Gaussians' lower tails are below 1e-40 (the rest dropped).
  const lossMin = q < 1 ? Math.log1p(-q) : (2 * (-14 * z) - 1) / (2 * z * z);
  const kMin = Math.floor(lossMin / h);
  // Top: the mass beyond x (at most e^logDrop) is dropped, which lowers delta.
  let kMax = Math.max(kMin + 2, Math.ceil(1 / h));
  while (normalLogSf((xOfLoss(kMax * h) - 1) / z) + Math.log(q) > logDrop) kMax = Math.ceil(kMax * 1.25);
  const atoms: { loss: number; mass: number }[] = [];
  let x1 = q < 1 ? -Infinity : xOfLoss(kMin * h);
  for (let k = kMin + 1; k <= kMax; k++) {
    const x2 = xOfLoss(k * h);
    if (!(x2 > x1)) continue;
    const logQ = logCellMass(x1, x2, 0, z);
    const logP1 = logCellMass(x1, x2, 1, z);
    x1 = x2;
    if (logQ === -Infinity) continue;
    // Remove: P = q N(1) + (1 - q) N(0), Q = N(0): u-mean point log(P/Q) = log1p(q (P1/Q - 1)).
    const ratio = Math.exp(logP1 - logQ);
    const removeLoss = Math.log1p(q * (ratio - 1));
    if (direction === 'remove') atoms.push({ loss: removeLoss, mass: Math.exp(logQ) * (1 - q + q * ratio) });
    else atoms.push({ loss: -removeLoss, mass: Math.exp(logQ) }); // add: P = N(0), Q = the mixture
  }
  return direction === 'remove' ? atoms : atoms.reverse();
}

/**
 * Pools sorted atoms into grid masses whose u-means are grid points. 'up' (atoms increasing): a
 * pool at grid point g (at or above its first atom) takes mass from atoms above g; 'down' (atoms
 * decreasing) mirrors it. Returns masses on indices [minIndex, minIndex + length).
 */
function pool(atoms: { loss: number; mass: number }[], h: number, sweep: 'up' | 'down'): { minIndex: number; masses: Float64Array } {
  // Pools land within one grid point of their atoms.
  let lowest = Infinity;
  let highest = -Infinity;
  for (const a of atoms) {
    lowest = Math.min(lowest, a.loss);
    highest = Math.max(highest, a.loss);
  }
  const minIndex = Math.floor(lowest / h) - 2;
  const masses = new Float64Array(Math.ceil(highest / h) + 3 - minIndex);
  const emit = (g: number, m: number) => {
    masses[g - minIndex] += m;
  };
  let target = NaN;
  let mass = 0;
  let excess = 0; // sum w (e^{g h - s} - 1): 0 when the pool's u-mean is e^{-g h}
  const sign = sweep === 'up' ? 1 : -1;
  for (const atom of atoms) {
    let w = atom.mass;
    const s = atom.loss;
    while (w > 0) {
      if (Number.isNaN(target)) {
        const g = sweep === 'up' ? Math.ceil(s / h - 1e-12) : Math.floor(s / h + 1e-12);
        if (Math.abs(s - g * h) <= 1e-12 * h) {
          emit(g, w);
          w = 0;
          break;
        }
        target = g;
        mass = w;
        excess = w * Math.expm1(g * h - s);
        w = 0;
        break;
      }
      const gap = target * h - s; // 'up': < 0 for atoms beyond the target
      if (sign * gap >= 0) {
        mass += w;
        excess += w * Math.expm1(gap);
        w = 0;
        break;
      }
      const need = -excess / Math.expm1(gap);
      if (need <= w) {
        emit(target, mass + need);
        w -= need;
        target = NaN;
        continue;
      }
      mass += w;
      excess += w * Math.expm1(gap);
      w = 0;
    }
  }
  if (!Number.isNaN(target)) emit(sweep === 'up' ? target - 1 : target, mass); // rounded down
  return { minIndex, masses };
}

/** In-place radix-2 FFT (sign -1 forward, +1 inverse without the 1/n). */
function fft(re: Float64Array, im: Float64Array, sign: number): void {
  const n = re.length;
  for (let i = 1, j = 0; i < n; i++) {
    let bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) {
      [re[i], re[j]] = [re[j], re[i]];
      [im[i], im[j]] = [im[j], im[i]];
    }
  }
  for (let len = 2; len <= n; len <<= 1) {
    const half = len >> 1;
    const cosT = new Float64Array(half);
    const sinT = new Float64Array(half);
    for (let k = 0; k < half; k++) {
      cosT[k] = Math.cos((2 * Math.PI * k) / len);
      sinT[k] = sign * Math.sin((2 * Math.PI * k) / len);
    }
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < half; k++) {
        const a = i + k;
        const b = a + half;
        const tr = re[b] * cosT[k] - im[b] * sinT[k];
        const ti = re[b] * sinT[k] + im[b] * cosT[k];
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
  }
}

/** log sum_i m_i e^{t s_i} of a grid PLD (Horner in e^{-|t| h} from the end that dominates: no overflow). */
function logMgf(p: { minIndex: number; masses: Float64Array }, h: number, t: number): number {
  const m = p.masses;
  const n = m.length;
  const y = Math.exp(-Math.abs(t) * h);
  let acc = 0;
  if (t >= 0) {
    for (let j = 0; j < n; j++) acc = acc * y + m[j];
    return t * (p.minIndex + n - 1) * h + Math.log(acc);
  }
  for (let j = n - 1; j >= 0; j--) acc = acc * y + m[j];
  return t * p.minIndex * h + Math.log(acc);
}

/** Minimum of a convex function of t > 0 (golden section on log t). */
function minimizePositive(f: (t: number) => number): number {
  let lo = Math.log(1e-6);
  let hi = Math.log(1e4);
  const g = (a: number) => f(Math.exp(a));
  for (let i = 0; i < 60; i++) {
    const m1 = lo + (hi - lo) * 0.382;
    const m2 = lo + (hi - lo) * 0.618;
    if (g(m1) < g(m2)) hi = m2;
    else lo = m1;
  }
  return Math.min(g(lo), g(hi));
}

/** The lower bound on epsilon of one direction (0 when that direction cannot reach delta). */
function directionLower(input: LowerBoundInput, direction: 'remove' | 'add', h: number): number {
  const { samplingProbability: q, noiseMultiplier: z, steps: T, delta, targetEpsilon } = input;
  const maxPoints = input.maxPoints ?? 1 << 21;
  const step = pool(contractedAtoms(q, z, h, direction, Math.log(1e-9 * delta / T)), h, direction === 'remove' ? 'up' : 'down');
  const top = (step.minIndex + step.masses.length - 1) * h;
  if (!(T * top > targetEpsilon)) return 0;
  const K = (t: number) => logMgf(step, h, t);
  // Saddle point: the tilt lambda with T K'(lambda) = target (bisection on the tilted mean).
  const mean = (t: number) => (K(t + 1e-7) - K(t - 1e-7)) / 2e-7;
  let lambda = 0;
  if (T * mean(0) < targetEpsilon) {
    let lo = 0;
    let hi = 1;
    while (T * mean(hi) < targetEpsilon && hi < 1e6) hi *= 2;
    for (let i = 0; i < 50; i++) {
      const mid = 0.5 * (lo + hi);
      if (T * mean(mid) < targetEpsilon) lo = mid;
      else hi = mid;
    }
    lambda = 0.5 * (lo + hi);
  }
  const K0 = K(lambda);
  // Window of the tilted composition: Chernoff bounds on both sides below 1e-40 (relative).
  const tail = (x: number, side: 1 | -1) => minimizePositive((t) => T * (K(lambda + side * t) - K0) - side * t * x);
  const centre = T * mean(lambda);
  let width = Math.max(16 * h, 10 * Math.sqrt(T) * h);
  let lowTail = 0;
  let highTail = 0;
  for (;;) {
    lowTail = tail(centre - width, -1);
    highTail = tail(centre + width, 1);
    if (Math.max(lowTail, highTail) < -92) break;
    if (2.5 * width > maxPoints * h) {
      width = (maxPoints / 2 - 4) * h; // the largest window: its Chernoff bounds are subtracted below
      lowTail = tail(centre - width, -1);
      highTail = tail(centre + width, 1);
      break;
    }
    width *= 1.25;
  }
  let n = 2;
  while (n < (2 * width) / h + 2) n *= 2;
  if (n > maxPoints) throw new Error(`lower bound: ${n} points needed (step ${h})`);
  const aliased = Math.exp(lowTail) + Math.exp(highTail); // tilted mass outside the window
  const start = Math.floor((centre - width) / h); // window: indices [start, start + n)
  // Tilted step: r_j = m_j e^{lambda s_j - K0}, centred on its mean index (small phases).
  const centerIndex = Math.round(mean(lambda) / h);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let j = 0; j < step.masses.length; j++) {
    const m = step.masses[j];
    if (!(m > 0)) continue;
    const i = step.minIndex + j;
    const pos = (((i - centerIndex) % n) + n) % n;
    re[pos] += m * Math.exp(lambda * i * h - K0);
  }
  fft(re, im, -1);
  for (let k = 0; k < n; k++) {
    const r = Math.hypot(re[k], im[k]);
    const phase = Math.atan2(im[k], re[k]) * T;
    const mag = r > 0 ? Math.exp(T * Math.log(r)) : 0;
    re[k] = mag * Math.cos(phase);
    im[k] = mag * Math.sin(phase);
  }
  fft(re, im, 1);
  // Composed tilted mass at index i (i in the window) sits at circular position i - T centerIndex.
  let maxAbs = 0;
  let maxNeg = 0;
  for (let k = 0; k < n; k++) {
    const v = re[k] / n;
    re[k] = v;
    if (v > maxAbs) maxAbs = v;
    if (-v > maxNeg) maxNeg = -v;
  }
  const noise = Math.max(4 * maxNeg, (T + 8 * Math.log2(n)) * Number.EPSILON * maxAbs);
  const cut = aliased + noise;
  // Untilted lower masses w_i = (c_i - cut)_+ e^{T K0 - lambda s_i}, for losses s_i > 0.
  const losses: number[] = [];
  const weights: number[] = [];
  for (let i = Math.max(start, 1); i < start + n; i++) {
    const pos = (((i - T * centerIndex) % n) + n) % n;
    const c = re[pos] - cut;
    if (!(c > 0)) continue;
    losses.push(i * h);
    weights.push(Math.exp(Math.log(c) + T * K0 - lambda * i * h));
  }
  // delta(eps) = sum_{s_i > eps} w_i (1 - e^{eps - s_i}): scan down; on (s_{j-1}, s_j] it is A - e^eps B.
  let A = 0;
  let B = 0;
  for (let j = losses.length - 1; j >= 0; j--) {
    A += weights[j];
    B += weights[j] * Math.exp(-losses[j]);
    const below = j > 0 ? losses[j - 1] : 0;
    // delta at `below` (all atoms >= j strictly above it)
    if (A - Math.exp(below) * B > delta) {
      const eps = Math.log((A - delta) / B);
      return Math.max(0, Math.min(eps, losses[j]));
    }
  }
  return 0;
}

/**
 * A lower bound on epsilon(delta) of `steps` compositions of the Poisson-subsampled Gaussian
 * (both directions; q = 1 is the Gaussian itself).
 */
export function poissonGaussianEpsilonLower(input: LowerBoundInput): number {
  const h = input.step ?? Math.max(2e-5, input.targetEpsilon / 4e4);
  const directions = input.samplingProbability >= 1 ? (['remove'] as const) : (['remove', 'add'] as const);
  return Math.max(...directions.map((d) => directionLower(input, d, h)));
}
