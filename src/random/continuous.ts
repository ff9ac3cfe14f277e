/**
 * Continuous samplers on doubles: Gaussian, Laplace, exponential.
 *
 * These are accurate to floating point, not exact: noise drawn this way and added to floats is
 * vulnerable to the floating-point attacks of Mironov ("On Significance of the Least Significant
 * Bits for Differential Privacy", CCS 2012). Mechanisms that need exact noise use the integer
 * samplers of `exact.ts`.
 */
import { InvalidParameterError } from '../errors.js';
import { requireFinite, requirePositive } from '../validate.js';
import { TWO_POW_21, TWO_POW_MINUS_53 } from './bits.js';
import type { Rng } from './rng.js';
import { ZIGGURAT_R, ZIG_F, ZIG_X } from './ziggurat.js';

/** Marsaglia's (1964) exact tail method for x > R: x = R + E1/R, accepted when 2 E2 > (E1/R)^2. */
function gaussianTail(rng: Rng): number {
  for (;;) {
    const x = -Math.log1p(-rng.nextDouble()) / ZIGGURAT_R;
    const y = -Math.log1p(-rng.nextDouble());
    if (2 * y > x * x) return ZIGGURAT_R + x;
  }
}

/**
 * One standard normal by the Ziggurat method. One draw of two 32-bit words gives the layer
 * (8 bits), the sign (1 bit) and a 53-bit uniform (the other 53 bits), all disjoint, so the
 * layer and the position are independent (the flaw Doornik 2005 found in the original code).
 * 98.5% of calls return after this single draw.
 */
function standardGaussian(rng: Rng): number {
  for (;;) {
    const a = rng.nextUint32();
    const b = rng.nextUint32();
    const i = a & 0xff;
    const x = ((a >>> 11) * 4294967296 + b) * TWO_POW_MINUS_53 * ZIG_X[i];
    if (x < ZIG_X[i + 1]) return (a & 0x100) === 0 ? x : -x;
    const z = zigguratEdge(rng, i, x, a);
    if (z === z) return z; // NaN: rejected in the wedge, draw again
  }
}

/** A Gaussian sample N(mean, std^2) (Ziggurat method, see `fillGaussian`). */
export function sampleGaussian(rng: Rng, mean = 0, std = 1): number {
  requireFinite('mean', mean);
  requirePositive('std', std);
  return mean + std * standardGaussian(rng);
}

/**
 * Fills `out` with independent N(0, std^2) samples and returns it: the batch path for noise
 * vectors (Ziggurat method of Marsaglia and Tsang 2000, 256 layers, Marsaglia's 1964 tail).
 *
 * @example
 * const noise = fillGaussian(defaultRng(), new Float64Array(dimension), noiseMultiplier * clipNorm);
 */
export function fillGaussian(rng: Rng, out: Float64Array, std = 1): Float64Array {
  if (!(out instanceof Float64Array)) throw new InvalidParameterError('out', out, 'a Float64Array');
  requirePositive('std', std);
  const n = out.length;
  const negStd = -std;
  for (let k = 0; k < n; ) {
    // The same draw as `standardGaussian`, inlined by hand: this loop is the hot path of DP-SGD.
    const a = rng.nextUint32();
    const b = rng.nextUint32();
    const i = a & 0xff;
    const x = ((a >>> 11) * 4294967296 + b) * TWO_POW_MINUS_53 * ZIG_X[i];
    if (x < ZIG_X[i + 1]) {
      out[k++] = ((a & 0x100) === 0 ? std : negStd) * x;
    } else {
      const z = zigguratEdge(rng, i, x, a);
      if (z === z) out[k++] = std * z;
    }
  }
  return out;
}

/**
 * The rare branch: x = u X[i] fell outside layer i's inner rectangle. Layer 0 continues into the
 * tail (always accepted); other layers test the wedge under the curve and return NaN when the
 * draw is rejected (the caller then draws afresh).
 */
function zigguratEdge(rng: Rng, i: number, x: number, a: number): number {
  if (i === 0) {
    const t = gaussianTail(rng);
    return (a & 0x100) === 0 ? t : -t;
  }
  const y = ZIG_F[i] + rng.nextDouble() * (ZIG_F[i + 1] - ZIG_F[i]);
  if (y < Math.exp(-0.5 * x * x)) return (a & 0x100) === 0 ? x : -x;
  return NaN;
}

/**
 * A Laplace sample with density exp(-|x| / scale) / (2 scale): a random sign times scale * E,
 * E = -log(1 - u) exponential (u in [0, 1), so the logarithm never sees 0).
 */
export function sampleLaplace(rng: Rng, scale: number): number {
  requirePositive('scale', scale);
  const a = rng.nextUint32();
  const b = rng.nextUint32();
  // 32 bits of a and the top 21 of b make u; the lowest bit of b is the sign.
  const u = (a * TWO_POW_21 + (b >>> 11)) * TWO_POW_MINUS_53;
  const e = -scale * Math.log1p(-u);
  return (b & 1) === 0 ? e : -e;
}

/** An exponential sample with density rate * exp(-rate x), x >= 0, by inversion: -log(1 - u) / rate. */
export function sampleExponential(rng: Rng, rate = 1): number {
  requirePositive('rate', rate);
  return -Math.log1p(-rng.nextDouble()) / rate;
}
