/**
 * The regularised incomplete beta function I_x(a, b) = B(x; a, b) / B(a, b), by the continued
 * fraction of Abramowitz & Stegun 26.5.8 (modified Lentz), used where it converges fast
 * (x < (a + 1) / (a + b + 2)) and through I_x(a, b) = 1 - I_{1-x}(b, a) elsewhere; the prefactor
 * x^a (1 - x)^b / (a B(a, b)) is taken in log space. Relative error ~1e-13 for a, b up to 1e7. The
 * binomial CDF is P(Bin(n, p) <= k) = I_{1-p}(n - k, k + 1) (A&S 26.5.24), which the
 * Clopper-Pearson bounds of large counts need (`audit/clopper-pearson.ts`).
 */
import { InvalidParameterError, NumericalError } from '../errors.js';
import { requirePositive } from '../validate.js';
import { logBeta } from './gamma.js';

const EPS = Number.EPSILON;
const TINY = 1e-300;

/** The continued fraction of A&S 26.5.8 (converges for x < (a + 1) / (a + b + 2)). */
function fraction(a: number, b: number, x: number): number {
  const qab = a + b;
  const qap = a + 1;
  const qam = a - 1;
  let c = 1;
  let d = 1 - (qab * x) / qap;
  if (Math.abs(d) < TINY) d = TINY;
  d = 1 / d;
  let h = d;
  for (let m = 1; m < 100_000; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < TINY) d = TINY;
    c = 1 + aa / c;
    if (Math.abs(c) < TINY) c = TINY;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < EPS) return h;
  }
  throw new NumericalError(`the incomplete beta continued fraction did not converge (a = ${a}, b = ${b}, x = ${x})`);
}

/** I_x(a, b) for a, b > 0 and x in [0, 1]. */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  requirePositive('a', a);
  requirePositive('b', b);
  if (!(x >= 0 && x <= 1)) throw new InvalidParameterError('x', x, 'in [0, 1]');
  if (x === 0) return 0;
  if (x === 1) return 1;
  const logFront = a * Math.log(x) + b * Math.log1p(-x) - logBeta(a, b);
  if (x < (a + 1) / (a + b + 2)) return Math.min(1, (Math.exp(logFront) * fraction(a, b, x)) / a);
  return Math.max(0, 1 - (Math.exp(logFront) * fraction(b, a, 1 - x)) / b);
}
