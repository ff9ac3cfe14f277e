/**
 * An independent numerical LOWER bound on epsilon(delta) of T-fold Poisson-subsampled Gaussians
 * (add/remove adjacency, Zhu, Dong & Wang 2022, Thm. 11), for tests and the pld-sweep bench. It
 * shares no code with src/accounting/pld (only the normal tail functions of src/math).
 *
 * Why it is a lower bound (an optimistic discretisation: every approximation below can only lower
 * the hockey-stick divergence delta(eps), so the epsilon it inverts to is a lower bound).
 * delta(eps) = E_P[(1 - e^{eps - S})_+] of the composed loss S = sum_i L_i is, for fixed other
 * steps, a convex function of u_i = e^{-L_i} integrated against P, so
 * - contraction (Jensen): replacing a group of a step's atoms by one atom carrying their P-mass at
 *   their P-weighted u-mean can only lower it; for an x-cell of the Gaussian output that atom is
 *   exactly log(P(cell) / Q(cell)), whatever the cell's width;
 * - moving P-mass to a smaller loss (larger u) or dropping P-mass (every term is >= 0) lowers it;
 * - independent steps compose these orderings (Doroshenko et al. 2022, Sec. 3; any text on convex
 *   orders).
 * Cells: of width h in loss near 0 and of relative width CELL_RATIO beyond h / CELL_RATIO (so tails
 * reaching losses of 50 cost ~1e5 cells, not 50 / h), up to where the remaining P-mass is below
 * 1e-9 delta / T (dropped). Consecutive contracted atoms are then pooled so that every pool's
 * u-mean is exactly a grid point k h (mass from the pool's next atom taken just as needed: itself a
 * contraction), so there is no first-order error, which over 1e5 steps would be ruinous; the last
 * pool is rounded down to a grid point. The step is kept sparse (grid index, mass).
 *
 * The T-fold composition is a power in the Fourier domain (own radix-2 FFT) of the step wrapped
 * modulo the FFT size n, tilted at the saddle point of a target epsilon (e^{lambda s} per step,
 * which commutes with convolution) so that the FFT's rounding is relative to the bins that make
 * delta. From each bin of the circular result are subtracted: a Chernoff bound on the tilted mass
 * outside the window (which wrapping may have put there), and a floating-point error bound (4 times
 * the largest negative bin, at least (T + 8 log2 n) eps times the largest bin); negative results
 * are dropped. epsilon is then the exact inverse of the resulting lower curve.
 *
 * Grid step and tilt. Any h and any tilt give a valid bound; accuracy needs h small against the
 * spread of the (tilted) composition, and the window must fit in n points. The tilt is the smallest
 * that puts the target within 3 tilted spreads of the tilted mean (enough against the FFT's
 * rounding), capped where the tilted spread reaches twice the untilted one: at small q the heavy
 * right tail would otherwise dominate the tilted composition and force a window (and so a grid
 * step) far too wide for the narrow bulk that makes delta. The window ends, below and above the
 * tilted mean separately (that heavy tail needs room above the mean only), where the Chernoff tails
 * fall below 1e-13 of the bins at the target; the spread and that window are measured on the step
 * itself (the tilted variance T K''(lambda)), twice (once on a coarse grid, once on the grid it
 * suggests), and a few grids around that are tried: the largest result (each valid) is returned.
 * For q = 1 the grid covers x within 14 z of the means.
 */
import { normalLogCdf, normalLogSf } from '../../src/math/normal.js';

export interface LowerBoundInput {
  readonly samplingProbability: number;
  readonly noiseMultiplier: number;
  readonly steps: number;
  readonly delta: number;
  /** Where to tilt (e.g. the accountant's epsilon): any value gives a valid bound, this one a tight one. */
  readonly targetEpsilon: number;
  /** Loss grid step (default: adapted to the tilted spread, several tried). */
  readonly step?: number;
  /** Largest FFT size (default 2^20). */
  readonly maxPoints?: number;
}

/** Pools are not balanced with atoms more than FAR grid steps beyond their target. */
const FAR = 4;

/** Budget of loss cells per step. */
const MAX_CELLS = 1e5;

/** Relative width of the loss cells beyond h / CELL_RATIO. */
const CELL_RATIO = 2e-4;

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

interface Atom {
  loss: number;
  mass: number;
}

/** One step's contracted atoms (loss, P-mass), increasing in loss for 'remove', decreasing for 'add'. */
function contractedAtoms(q: number, z: number, h: number, direction: 'remove' | 'add', logDrop: number): Atom[] {
  // Remove-direction loss of output x: T(l(x)) with l(x) = (2x - 1) / (2 z^2), T(t) = log(1 - q + q e^t).
  // Cells in x between the points where the remove loss takes the boundary values; the add-direction loss is minus it.
  const xOfLoss = (s: number) => {
    const t = q >= 1 ? s : s > 30 ? s - Math.log(q) + Math.log1p(-(1 - q) * Math.exp(-s)) : Math.log1p(Math.expm1(s) / q);
    return z * z * t + 0.5;
  };
  // Below the smallest loss log(1 - q) the first cell starts at x = -inf; for q = 1 (no smallest
  // loss) the grid starts at x = -14 z (both Gaussians' lower tails below 1e-40, dropped).
  const lossMin = q < 1 ? Math.log1p(-q) : (2 * (-14 * z) - 1) / (2 * z * z);
  // Stop once the P-mass beyond x is below e^logDrop in both directions (dropped: lowers delta).
  const beyondX = (x: number) => Math.max(Math.log(q) + normalLogSf((x - 1) / z), normalLogSf(x / z));
  let xTop = 1;
  while (beyondX(xTop) >= logDrop) xTop *= 1.5;
  const lossTop = Math.log1p(q * Math.expm1((2 * xTop - 1) / (2 * z * z)));
  // Cell width: h near 0, then relative, at most MAX_CELLS cells over the range (and never above
  // the width where sparse pools are rounded: see pool).
  const widest = Math.max(h, (lossTop - Math.max(lossMin, -50)) / MAX_CELLS);
  const atoms: Atom[] = [];
  let x1 = q < 1 ? -Infinity : xOfLoss(lossMin);
  let s = lossMin;
  for (;;) {
    s += Math.max(h, Math.min(widest, CELL_RATIO * Math.abs(s)));
    const x2 = xOfLoss(s);
    if (!(x2 > x1)) continue;
    const logQ = logCellMass(x1, x2, 0, z);
    const logP1 = logCellMass(x1, x2, 1, z);
    x1 = x2;
    if (logQ !== -Infinity) {
      // Remove: P = q N(1) + (1 - q) N(0), Q = N(0): u-mean point log(P/Q) = log1p(q (P1/Q - 1)).
      const ratio = Math.exp(logP1 - logQ);
      const removeLoss = Math.log1p(q * (ratio - 1));
      const atom = direction === 'remove' ? { loss: removeLoss, mass: Math.exp(logQ) * (1 - q + q * ratio) } : { loss: -removeLoss, mass: Math.exp(logQ) }; // add: P = N(0), Q = the mixture
      if (atom.mass > 0) atoms.push(atom); // an underflowed cell is dropped
    }
    if (s > 0 && beyondX(x1) < logDrop) break;
  }
  return atoms; // in x order: increasing losses for 'remove', decreasing for 'add'
}

/** A sparse grid PLD: mass[j] at loss offset + index[j] * h. */
interface GridPld {
  offset: number;
  index: Float64Array;
  mass: Float64Array;
  logMass: Float64Array;
  maxLogMass: number;
}

/**
 * Pools sorted atoms into grid masses whose u-means are grid points. 'up' (atoms increasing): a
 * pool at grid point g (at or above its first atom) takes mass from atoms above g; 'down' (atoms
 * decreasing) mirrors it.
 */
function pool(atoms: Atom[], h: number, sweep: 'up' | 'down'): GridPld {
  // The first pool (the atoms within h of the first, e.g. a bulk narrower than h) is contracted to
  // its u-mean, and the grid is offset so that this point is on it: no rounding of the bulk.
  let firstMass = 0;
  let firstU = 0;
  let used = 0;
  for (; used < atoms.length && Math.abs(atoms[used].loss - atoms[0].loss) <= h; used++) {
    firstMass += atoms[used].mass;
    firstU += atoms[used].mass * Math.exp(atoms[0].loss - atoms[used].loss);
  }
  const firstLoss = atoms[0].loss - Math.log(firstU / firstMass);
  const offset = firstLoss - Math.round(firstLoss / h) * h;
  const index: number[] = [Math.round(firstLoss / h)];
  const masses: number[] = [firstMass];
  const emit = (g: number, m: number) => {
    if (index.length > 0 && index[index.length - 1] === g) masses[masses.length - 1] += m;
    else {
      index.push(g);
      masses.push(m);
    }
  };
  let target = NaN;
  let mass = 0;
  let excess = 0; // sum w (e^{g h - s} - 1): 0 when the pool's u-mean is e^{-g h}
  const sign = sweep === 'up' ? 1 : -1;
  for (const atom of atoms.slice(used)) {
    let w = atom.mass;
    const s = atom.loss - offset;
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
      if (need > w && -sign * gap > FAR * h) {
        // Balancing the pool would pull in a far atom whole (a contraction of distant losses, e.g.
        // the whole bulk with a tail): instead the pool is rounded down and the atom starts a new one.
        emit(sweep === 'up' ? target - 1 : target, mass);
        target = NaN;
        continue;
      }
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
  const m = Float64Array.from(masses);
  const logMass = m.map(Math.log);
  // Sorted by index (the 'down' sweep emits decreasing indices).
  const order = index.map((_, j) => j).sort((a, b) => index[a] - index[b]);
  return {
    offset,
    index: Float64Array.from(order, (j) => index[j]),
    mass: Float64Array.from(order, (j) => m[j]),
    logMass: Float64Array.from(order, (j) => logMass[j]),
    maxLogMass: logMass.reduce((a, b) => Math.max(a, b), -Infinity),
  };
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
  const cosT = new Float64Array(n >> 1);
  const sinT = new Float64Array(n >> 1);
  for (let k = 0; k < n >> 1; k++) {
    cosT[k] = Math.cos((2 * Math.PI * k) / n);
    sinT[k] = sign * Math.sin((2 * Math.PI * k) / n);
  }
  for (let len = 2; len <= n; len <<= 1) {
    const half = len >> 1;
    const stride = n / len;
    for (let i = 0; i < n; i += len) {
      for (let k = 0; k < half; k++) {
        const c = cosT[k * stride];
        const sn = sinT[k * stride];
        const a = i + k;
        const b = a + half;
        const tr = re[b] * c - im[b] * sn;
        const ti = re[b] * sn + im[b] * c;
        re[b] = re[a] - tr;
        im[b] = im[a] - ti;
        re[a] += tr;
        im[a] += ti;
      }
    }
  }
}

/**
 * log sum_j m_j e^{t s_j} (log-sum-exp) and the tilted mean and variance of the loss s. One pass
 * scaled by an upper bound on the largest term (no overflow), a second with the exact largest when
 * that bound underflowed every term.
 */
function tiltedMoments(p: GridPld, h: number, t: number): { K: number; mean: number; variance: number } {
  const th = t * h;
  const n = p.index.length;
  let top = Math.max(th * p.index[0], th * p.index[n - 1]) + p.maxLogMass;
  const ref = p.index[n >> 1]; // moments about a middle index (no cancellation)
  for (let attempt = 0; attempt < 2; attempt++) {
    let acc = 0;
    let first = 0;
    let second = 0;
    for (let j = 0; j < n; j++) {
      const w = Math.exp(th * p.index[j] + p.logMass[j] - top);
      const i = p.index[j] - ref;
      acc += w;
      first += w * i;
      second += w * i * i;
    }
    if (acc > 1e-200 || attempt === 1) {
      const meanIndex = first / acc;
      return { K: t * p.offset + top + Math.log(acc), mean: p.offset + (ref + meanIndex) * h, variance: Math.max(0, second / acc - meanIndex * meanIndex) * h * h };
    }
    top = -Infinity;
    for (let j = 0; j < n; j++) top = Math.max(top, th * p.index[j] + p.logMass[j]);
  }
  throw new Error('unreachable');
}

/** Minimum of a convex function of t > 0 (golden section on log t, one new value per step). */
function minimizePositive(f: (t: number) => number): number {
  const r = (Math.sqrt(5) - 1) / 2;
  let lo = Math.log(1e-6);
  let hi = Math.log(1e6);
  const g = (a: number) => f(Math.exp(a));
  let m1 = hi - r * (hi - lo);
  let m2 = lo + r * (hi - lo);
  let g1 = g(m1);
  let g2 = g(m2);
  for (let i = 0; i < 34; i++) {
    if (g1 < g2) {
      hi = m2;
      m2 = m1;
      g2 = g1;
      m1 = hi - r * (hi - lo);
      g1 = g(m1);
    } else {
      lo = m1;
      m1 = m2;
      g1 = g2;
      m2 = lo + r * (hi - lo);
      g2 = g(m2);
    }
  }
  return Math.min(g1, g2, g(lo), g(hi)); // each a value at some t > 0: a valid Chernoff bound
}

interface Tilted {
  step: GridPld;
  lambda: number;
  K: (t: number) => number;
  mean: (t: number) => number;
  /** Standard deviation of the tilted T-fold composition. */
  spread: number;
}

/** Log of the Chernoff bound on the tilted composition's mass beyond centre + side x (side 1: above, -1: below). */
function chernoffTail(T: number, K: (t: number) => number, lambda: number, centreOffset: number, side: 1 | -1): number {
  const K0 = K(lambda);
  return minimizePositive((t) => T * (K(lambda + side * t) - K0) - t * centreOffset);
}

/**
 * Widths below and above the tilted mean of a window whose Chernoff tails are negligible against
 * the tilted bins at the target (about e^{-k^2/2} h / spread at k spreads from the mean): below
 * 1e-13 of them, and below e^-30. Each side on its own (at small q the heavy right tail needs a
 * wide window above the mean, the light left tail a narrow one below: a symmetric window would
 * double the FFT for nothing). The Chernoff bound T (K(lambda + t) - K(lambda)) - t a at the offset
 * a is below the threshold for some t > 0 exactly when a >= (T (K(lambda + t) - K(lambda)) -
 * threshold) / t for some t, so the smallest such offset is one minimisation (that ratio is
 * unimodal in t: the numerator is convex and positive at 0), at least 6 spreads and 8 grid steps.
 */
function windowWidths(input: LowerBoundInput, tilted: Tilted, h: number): { low: number; high: number } {
  const T = input.steps;
  const { K, lambda } = tilted;
  const centre = T * tilted.mean(lambda);
  const k = Math.max(0, (input.targetEpsilon - centre) / tilted.spread);
  const threshold = Math.min(-30, Math.log((1e-13 * h) / tilted.spread) - (k * k) / 2);
  const K0 = K(lambda);
  const least = Math.max(8 * h, 6 * tilted.spread);
  const side = (sign: 1 | -1) => {
    const width = minimizePositive((t) => (T * (K(lambda + sign * t) - K0) - threshold) / t) - sign * centre;
    return Number.isFinite(width) ? Math.max(least, width) : least; // (never seen; the tails are bounded below anyway)
  };
  return { low: side(-1), high: side(1) };
}

/**
 * The step on grid h and its tilt (undefined when this direction cannot reach the target). The
 * tilt is the saddle point of the target, lowered when there the tilted spread exceeds twice the
 * untilted one: a heavy right tail (small q) then dominates the tilted composition, whose window
 * would have to be far wider than the bulk that makes delta, at the cost of a grid too coarse for
 * it (any tilt gives a valid bound; this one only keeps the FFT's window and rounding small).
 */
function tiltedStep(input: LowerBoundInput, direction: 'remove' | 'add', h: number): Tilted | undefined {
  const { samplingProbability: q, noiseMultiplier: z, steps: T, delta, targetEpsilon } = input;
  const step = pool(contractedAtoms(q, z, h, direction, Math.log((1e-9 * delta) / T)), h, direction === 'remove' ? 'up' : 'down');
  let top = -Infinity;
  for (const i of step.index) top = Math.max(top, step.offset + i * h);
  if (!(T * top > targetEpsilon)) return undefined;
  // Moments at each tilt computed once (the tilt's bisections and the Chernoff bounds revisit them).
  const memo = new Map<number, { K: number; mean: number; variance: number }>();
  const moments = (t: number) => {
    let m = memo.get(t);
    if (m === undefined) memo.set(t, (m = tiltedMoments(step, h, t)));
    return m;
  };
  const K = (t: number) => moments(t).K;
  // Saddle point: the tilt lambda with T K'(lambda) = target (bisection on the tilted mean).
  const mean = (t: number) => moments(t).mean;
  // Tilted standard deviation of the composition.
  const spreadAt = (t: number) => Math.sqrt(T * moments(t).variance);
  let lambda = 0;
  if (T * mean(0) < targetEpsilon) {
    let lo = 0;
    let hi = 1;
    while (T * mean(hi) < targetEpsilon && hi < 1e7) hi *= 2;
    for (let i = 0; i < 50; i++) {
      const mid = 0.5 * (lo + hi);
      if (T * mean(mid) < targetEpsilon) lo = mid;
      else hi = mid;
    }
    lambda = 0.5 * (lo + hi);
    // The smallest tilt that puts the target within 3 tilted spreads of the tilted mean (there the
    // FFT's relative rounding is already negligible), and at most the largest one whose spread is
    // twice the untilted one, unless the target is then more than 8 spreads away.
    const distance = (t: number) => (targetEpsilon - T * mean(t)) / spreadAt(t);
    const limit = 2 * spreadAt(0);
    let a = 0;
    let b = lambda;
    if (distance(0) <= 3) b = 0;
    for (let i = 0; i < 24 && b > 0; i++) {
      const mid = 0.5 * (a + b);
      if (distance(mid) > 3 && spreadAt(mid) <= limit) a = mid;
      else b = mid;
    }
    const capped = b > 0 && spreadAt(b) <= limit ? b : a;
    // Still far from the target at the cap: the tail itself makes delta (few steps), tilt fully.
    if (distance(capped) <= 8) lambda = capped;
  }
  return { step, lambda, K, mean, spread: spreadAt(lambda) };
}

/** The lower bound on epsilon of one direction from a tilted step on grid h with FFT size at most maxPoints. */
function directionLower(input: LowerBoundInput, tilted: Tilted, h: number, maxPoints: number): number {
  const { steps: T, delta } = input;
  const { step, lambda, K, mean } = tilted;
  const K0 = K(lambda);
  // Chernoff bound on the tilted composition's mass beyond centre + side x.
  const tail = (x: number, side: 1 | -1) => chernoffTail(T, K, lambda, side * x, side);
  const centre = T * mean(lambda);
  // The window (the largest that fits when the one with negligible tails does not: its Chernoff
  // bounds are subtracted below).
  const wanted = windowWidths(input, tilted, h);
  const room = (maxPoints - 8) * h;
  const fits = wanted.low + wanted.high <= room;
  const low = fits ? wanted.low : Math.min(wanted.low, room / 2);
  const high = fits ? wanted.high : room - low;
  const lowTail = tail(centre - low, -1);
  const highTail = tail(centre + high, 1);
  let n = 2;
  while (n < (low + high) / h + 2) n *= 2;
  const aliased = Math.exp(lowTail) + Math.exp(highTail); // tilted mass outside the window
  if (!(aliased < 1e-3)) return 0;
  const c = step.offset;
  const start = Math.floor((centre - T * c - low) / h); // window: composed losses T c + i h, i in [start, start + n)
  // Tilted step: r_j = m_j e^{lambda s_j - K0}, centred on its mean index (small phases), wrapped mod n.
  const centerIndex = Math.round((mean(lambda) - c) / h);
  const re = new Float64Array(n);
  const im = new Float64Array(n);
  for (let j = 0; j < step.index.length; j++) {
    const i = step.index[j];
    const pos = (((i - centerIndex) % n) + n) % n;
    re[pos] += Math.exp(lambda * (c + i * h) + step.logMass[j] - K0);
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
  for (let i = start; i < start + n; i++) {
    const loss = T * c + i * h;
    if (!(loss > 0)) continue;
    const pos = (((i - T * centerIndex) % n) + n) % n;
    const tilted = re[pos] - cut;
    if (!(tilted > 0)) continue;
    losses.push(loss);
    weights.push(Math.exp(Math.log(tilted) + T * K0 - lambda * loss));
  }
  // delta(eps) = sum_{s_i > eps} w_i (1 - e^{eps - s_i}): scan down; on (s_{j-1}, s_j] it is
  // A - e^{eps - s_j} B with B = sum_{i >= j} w_i e^{s_j - s_i} (relative to s_j: no underflow at large losses).
  let A = 0;
  let B = 0;
  for (let j = losses.length - 1; j >= 0; j--) {
    A += weights[j];
    B = B * (j + 1 < losses.length ? Math.exp(losses[j] - losses[j + 1]) : 0) + weights[j];
    const below = j > 0 ? losses[j - 1] : 0;
    // delta at `below` (all atoms >= j strictly above it)
    if (A - Math.exp(below - losses[j]) * B > delta) {
      const eps = losses[j] + Math.log((A - delta) / B);
      return Math.max(0, Math.min(eps, losses[j]));
    }
  }
  return 0;
}

/** Total width of the window of windowWidths. */
function windowSpan(input: LowerBoundInput, tilted: Tilted, h: number): number {
  const { low, high } = windowWidths(input, tilted, h);
  return low + high;
}

/** Grid steps to try: around the one that fits ~36 tilted standard deviations into maxPoints. */
function candidateSteps(input: LowerBoundInput, direction: 'remove' | 'add', maxPoints: number): { h: number; tilted: Tilted }[] {
  const coarse = Math.max(1e-12, Math.min(input.targetEpsilon / 4e4, input.targetEpsilon / (100 * input.steps)));
  const first = tiltedStep(input, direction, coarse);
  if (first === undefined) return [];
  let h = Math.min(coarse, Math.max(36 * first.spread, 1.01 * windowSpan(input, first, coarse)) / maxPoints);
  const second = tiltedStep(input, direction, h);
  if (second === undefined) return [];
  h = Math.max(Math.max(36 * second.spread, 1.01 * windowSpan(input, second, h)) / maxPoints, 1e-12);
  const out: { h: number; tilted: Tilted }[] = [];
  for (const f of [1, 4]) {
    const t = tiltedStep(input, direction, f * h);
    if (t !== undefined) out.push({ h: f * h, tilted: t });
  }
  return out;
}

/**
 * A lower bound on epsilon(delta) of `steps` compositions of the Poisson-subsampled Gaussian
 * (both directions; q = 1 is the Gaussian itself). Several grids are tried (each a valid bound);
 * it stops early once within 1e-6 relative of targetEpsilon.
 */
export function poissonGaussianEpsilonLower(input: LowerBoundInput): number {
  const maxPoints = input.maxPoints ?? 1 << 20;
  const directions = input.samplingProbability >= 1 ? (['remove'] as const) : (['remove', 'add'] as const);
  let best = 0;
  let bestDirection: 'remove' | 'add' | undefined;
  for (const d of directions) {
    if (input.step !== undefined) {
      const t = tiltedStep(input, d, input.step);
      if (t !== undefined) best = Math.max(best, directionLower(input, t, input.step, maxPoints));
      continue;
    }
    for (const { h, tilted } of candidateSteps(input, d, maxPoints)) {
      const value = directionLower(input, tilted, h, maxPoints);
      if (value > best) [best, bestDirection] = [value, d];
      if (best >= input.targetEpsilon * (1 - 1e-6)) return best;
    }
  }
  // Still short of the target by more than 2e-5: one finer grid (4x the points) in the better direction.
  if (input.step === undefined && bestDirection !== undefined && best < input.targetEpsilon * (1 - 2e-5)) {
    const [{ h, tilted }] = candidateSteps(input, bestDirection, 4 * maxPoints);
    best = Math.max(best, directionLower(input, tilted, h, 4 * maxPoints));
  }
  return best;
}

/**
 * Exact epsilon of a mu-GDP pair (T Gaussians of multiplier z: mu = sqrt(T) / z) at delta, by
 * bisection on the exact curve Phi(-e/mu + mu/2) - e^e Phi(-e/mu - mu/2); the lower end of the
 * final bracket, so a lower bound for the tests and the sweep.
 */
export function gaussianEpsilon(mu: number, delta: number): number {
  const curve = (e: number) => Math.exp(normalLogCdf(-e / mu + mu / 2)) - Math.exp(e + normalLogCdf(-e / mu - mu / 2));
  if (curve(0) <= delta) return 0;
  return epsilonBracket(curve, delta).lo; // delta(lo) > delta
}

/**
 * Bisection (200 halvings, from [0, 1] doubled until delta(hi) <= delta) for the epsilon where a
 * decreasing privacy curve delta(epsilon) crosses `delta`: delta(lo) > delta >= delta(hi).
 */
export function epsilonBracket(curve: (epsilon: number) => number, delta: number): { lo: number; hi: number } {
  let lo = 0;
  let hi = 1;
  while (curve(hi) > delta) hi *= 2;
  for (let i = 0; i < 200; i++) {
    const mid = 0.5 * (lo + hi);
    if (curve(mid) > delta) lo = mid;
    else hi = mid;
  }
  return { lo, hi };
}
