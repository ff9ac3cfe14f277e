/**
 * Adaptive numerical integration (globally adaptive Gauss–Kronrod, as in QUADPACK's QAG/QAGI,
 * Piessens et al. 1983), used for privacy-loss integrals that have no closed form.
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative } from '../validate.js';

const EPS = Number.EPSILON;

/**
 * 15-point Kronrod nodes on [-1, 1] (non-negative half, descending) and weights, with the
 * embedded 7-point Gauss rule at the odd positions (Kronrod 1965). Computed for this file with
 * mpmath 1.3 at mp.dps=60 (Gauss nodes: roots of P7; Kronrod nodes: roots of the Stieltjes
 * polynomial E8, orthogonal to P7 x^k; weights: interpolatory), and checked to integrate x^22
 * exactly.
 */
const XK = [
  0.9914553711208126, 0.9491079123427585, 0.8648644233597691, 0.7415311855993945, 0.5860872354676911, 0.4058451513773972,
  0.20778495500789848, 0,
];
const WK = [
  0.022935322010529224, 0.06309209262997856, 0.10479001032225019, 0.14065325971552592, 0.1690047266392679, 0.19035057806478542,
  0.20443294007529889, 0.20948214108472782,
];
/** Gauss weights for XK[1], XK[3], XK[5], XK[7]. */
const WG = [0.1294849661688697, 0.27970539148927664, 0.3818300505051189, 0.4179591836734694];

export interface IntegrateOptions {
  /** Absolute error target (default 0). */
  absTol?: number;
  /** Relative error target (default 1e-10). The goal is error <= max(absTol, relTol * |value|). */
  relTol?: number;
  /** Maximum number of bisections (default 1000; each costs 30 evaluations). */
  maxSubdivisions?: number;
}

export interface IntegrateResult {
  value: number;
  /** Sum over subintervals of |K15 - G7| (an estimate of G7's error, so pessimistic for K15). */
  errorEstimate: number;
  /** Number of calls of the integrand. */
  evaluations: number;
}

interface Piece {
  a: number;
  b: number;
  value: number;
  error: number;
  /** Rounding-error floor included in `error`. */
  floor: number;
}

/**
 * K15 on [a, b] with error |K15 - G7|, floored at 50 eps * (K15 of |g|) for rounding (the
 * floor of QUADPACK's QK15, Piessens et al. 1983).
 */
function kronrod15(g: (t: number) => number, a: number, b: number): Piece {
  const c = 0.5 * (a + b);
  const h = 0.5 * (b - a);
  const fc = g(c);
  let k = WK[7] * fc;
  let gauss = WG[3] * fc;
  let abs = WK[7] * Math.abs(fc);
  for (let j = 0; j < 7; j++) {
    const dx = h * XK[j];
    const f1 = g(c - dx);
    const f2 = g(c + dx);
    k += WK[j] * (f1 + f2);
    abs += WK[j] * (Math.abs(f1) + Math.abs(f2));
    if (j % 2 === 1) gauss += WG[(j - 1) / 2] * (f1 + f2);
  }
  const floor = 50 * EPS * abs * Math.abs(h);
  return { a, b, value: k * h, error: Math.max(Math.abs((k - gauss) * h), floor), floor };
}

/** Max-heap of pieces by error: the next piece to bisect is the worst one. */
class PieceHeap {
  readonly items: Piece[] = [];
  push(piece: Piece): void {
    const items = this.items;
    items.push(piece);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (items[parent].error >= items[i].error) break;
      [items[parent], items[i]] = [items[i], items[parent]];
      i = parent;
    }
  }
  pop(): Piece {
    const items = this.items;
    const top = items[0];
    const last = items.pop() as Piece;
    if (items.length > 0) {
      items[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < items.length && items[l].error > items[m].error) m = l;
        if (r < items.length && items[r].error > items[m].error) m = r;
        if (m === i) break;
        [items[m], items[i]] = [items[i], items[m]];
        i = m;
      }
    }
    return top;
  }
}

const INTEGRATE_OPTIONS = optionNames<IntegrateOptions>({ absTol: true, relTol: true, maxSubdivisions: true });

/**
 * The integral of f over [a, b] by globally adaptive 7/15-point Gauss–Kronrod quadrature: the
 * subinterval with the largest error estimate is bisected until the summed estimate is at most
 * max(absTol, relTol * |value|). Infinite limits are mapped to finite ones (QUADPACK QAGI-style):
 * x = t / (1 - t^2) on (-1, 1) for (-Infinity, Infinity), x = a + t / (1 - t) on [0, 1) for
 * [a, Infinity), x = b - t / (1 - t) for (-Infinity, b]; the nodes never touch t = +-1, and
 * mapped points that overflow contribute 0. Integrable endpoint singularities are handled by
 * bisection but converge slowly. A narrow peak far from where the first nodes fall (e.g. a
 * width-1e-3 spike at x = 1000 on an infinite range) may be missed entirely: split the range
 * at the peak. a > b gives minus the integral over [b, a]. Because of the rounding floor,
 * relTol below ~1e-14 (or absTol below ~1e-14 * integral of |f|) cannot be met.
 *
 * Throws `NumericalError` when the tolerance is not met within `maxSubdivisions` bisections or
 * an interval cannot be split further (it never returns an inaccurate value silently), or when
 * f returns NaN or +-Infinity; `InvalidParameterError` for NaN limits or bad options.
 *
 * @example integrate((x) => Math.exp(-x), 0, Infinity).value // 1
 */
export function integrate(f: (x: number) => number, a: number, b: number, options: IntegrateOptions = {}): IntegrateResult {
  rejectUnknownOptions(options, INTEGRATE_OPTIONS, 'integrate');
  if (typeof a !== 'number' || Number.isNaN(a)) throw new InvalidParameterError('a', a, 'a number or +-Infinity');
  if (typeof b !== 'number' || Number.isNaN(b)) throw new InvalidParameterError('b', b, 'a number or +-Infinity');
  const absTol = requireNonNegative('absTol', options.absTol ?? 0);
  const relTol = requireNonNegative('relTol', options.relTol ?? 1e-10);
  if (absTol === 0 && relTol === 0) throw new InvalidParameterError('relTol', relTol, '> 0 when absTol is 0');
  const maxSubdivisions = requireInteger('maxSubdivisions', options.maxSubdivisions ?? 1000, 0);
  if (a === b) return { value: 0, errorEstimate: 0, evaluations: 0 };
  if (a > b) {
    const r = integrate(f, b, a, options);
    return { value: -r.value, errorEstimate: r.errorEstimate, evaluations: r.evaluations };
  }

  let evaluations = 0;
  const evaluate = (x: number): number => {
    evaluations++;
    const y = f(x);
    if (!Number.isFinite(y)) throw new NumericalError(`integrate: f(${x}) = ${y}`);
    return y;
  };
  // Integrand on the working interval [t0, t1], including the Jacobian of the map.
  let g: (t: number) => number;
  let t0 = a;
  let t1 = b;
  if (a === -Infinity && b === Infinity) {
    t0 = -1;
    t1 = 1;
    g = (t) => {
      const s = 1 - t * t;
      const x = t / s;
      if (!Number.isFinite(x)) return 0;
      const y = evaluate(x);
      return y === 0 ? 0 : (y * (1 + t * t)) / (s * s);
    };
  } else if (b === Infinity || a === -Infinity) {
    const finite = b === Infinity ? a : b;
    const sign = b === Infinity ? 1 : -1;
    t0 = 0;
    t1 = 1;
    g = (t) => {
      const s = 1 - t;
      const x = finite + (sign * t) / s;
      if (!Number.isFinite(x)) return 0;
      const y = evaluate(x);
      return y === 0 ? 0 : y / (s * s);
    };
  } else {
    g = evaluate;
  }

  const heap = new PieceHeap();
  const first = kronrod15(g, t0, t1);
  heap.push(first);
  let value = first.value;
  let error = first.error;
  let floor = first.floor;
  const goal = (v: number): number => Math.max(absTol, relTol * Math.abs(v));
  for (let subdivisions = 0; ; subdivisions++) {
    if (error <= goal(value)) {
      // Confirm with exact sums (the running sums accumulate rounding).
      value = 0;
      error = 0;
      for (const piece of heap.items) {
        value += piece.value;
        error += piece.error;
      }
      if (error <= goal(value)) return { value, errorEstimate: error, evaluations };
    }
    if (floor > goal(value) && error <= 2 * floor) {
      throw new NumericalError(
        `integrate: the goal ${goal(value)} is below the rounding-error floor ${floor} (50 eps * integral of |f|); ` +
          `value ~ ${value}, raise absTol or relTol`,
      );
    }
    if (subdivisions >= maxSubdivisions) {
      throw new NumericalError(
        `integrate: tolerance not met after maxSubdivisions = ${maxSubdivisions} (value ~ ${value}, error estimate ${error}, goal ${goal(value)})`,
      );
    }
    const worst = heap.pop();
    const mid = 0.5 * (worst.a + worst.b);
    if (!(mid > worst.a && mid < worst.b)) {
      throw new NumericalError(
        `integrate: cannot bisect [${worst.a}, ${worst.b}]${t0 === a && t1 === b ? '' : ' (mapped coordinates)'} further ` +
          `(error estimate ${error}, goal ${goal(value)}); ` +
          'the integrand may be singular there or the tolerance below rounding error',
      );
    }
    const left = kronrod15(g, worst.a, mid);
    const right = kronrod15(g, mid, worst.b);
    heap.push(left);
    heap.push(right);
    value += left.value + right.value - worst.value;
    error += left.error + right.error - worst.error;
    floor += left.floor + right.floor - worst.floor;
  }
}
