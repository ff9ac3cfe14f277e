/**
 * Products of powers of discrete Fourier transforms of real sequences, kept in the bit-reversed
 * order in which `fftToBitReversed` leaves them, so that no permutation pass is ever needed.
 *
 * Two real sequences a (the pessimistic PLD) and b (the optimistic one) are transformed together as
 * z = a + i b; their spectra follow from Z and its conjugate partner, A[f] = (Z[f] + conj Z[N-f]) / 2
 * and B[f] = (Z[f] - conj Z[N-f]) / (2i), and both are Hermitian (A[N-f] = conj A[f]), so only one
 * frequency of each conjugate pair is stored (N/2 + 1 values) and the other is restored at the
 * end. In bit-reversed order the partner of position p >= 2 is 3 * 2^m - 1 - p with
 * 2^m <= p < 2^{m+1} (positions 0 and 1 hold the real frequencies 0 and N/2), so both members of
 * every pair are reached by two sequential sweeps: cache-friendly. Pair (p, partner) with p in the
 * first half of its block is stored at index 2^{m-1} + 1 + (p - 2^m).
 *
 * Powers: (A[f])^k in polar form, |A|^k e^{i k arg A}, one exponentiation per frequency however
 * large k (Zhu, Dong, Wang 2022, Sec. 5; Koskela et al. 2021); magnitudes below e^-745 are 0,
 * recognised without a logarithm (|A|^2 < e^{-1490/k}).
 */
import { ifftFromBitReversed } from './fft.js';

export class SpectrumProduct {
  readonly n: number;
  readonly pRe: Float64Array;
  readonly pIm: Float64Array;
  readonly oRe: Float64Array;
  readonly oIm: Float64Array;

  constructor(n: number) {
    this.n = n;
    const size = (n >>> 1) + 1;
    this.pRe = new Float64Array(size).fill(1);
    this.pIm = new Float64Array(size);
    this.oRe = new Float64Array(size).fill(1);
    this.oIm = new Float64Array(size);
  }
}

export interface PowerTarget {
  readonly product: SpectrumProduct;
  readonly count: number;
}

/** A^k and B^k at one conjugate pair (p, q), multiplied into the products' entry c. */
function visitPair(
  re: Float64Array,
  im: Float64Array,
  p: number,
  q: number,
  c: number,
  k: number,
  threshold: number,
  products: readonly SpectrumProduct[],
): void {
  let live = false;
  for (let i = 0; i < products.length; i++) {
    const s = products[i];
    if (s.pRe[c] !== 0 || s.pIm[c] !== 0 || s.oRe[c] !== 0 || s.oIm[c] !== 0) live = true;
  }
  if (!live) return;
  const zr = re[p];
  const zi = im[p];
  const wr = re[q];
  const wi = im[q];
  let ar = 0.5 * (zr + wr);
  let ai = 0.5 * (zi - wi);
  let br = 0.5 * (zi + wi);
  let bi = 0.5 * (wr - zr);
  if (k !== 1) {
    const a2 = ar * ar + ai * ai;
    if (a2 < threshold) {
      ar = 0;
      ai = 0;
    } else {
      const magnitude = Math.exp(0.5 * k * Math.log(a2));
      const angle = k * Math.atan2(ai, ar);
      ar = magnitude * Math.cos(angle);
      ai = magnitude * Math.sin(angle);
    }
    const b2 = br * br + bi * bi;
    if (b2 < threshold) {
      br = 0;
      bi = 0;
    } else {
      const magnitude = Math.exp(0.5 * k * Math.log(b2));
      const angle = k * Math.atan2(bi, br);
      br = magnitude * Math.cos(angle);
      bi = magnitude * Math.sin(angle);
    }
  }
  for (let i = 0; i < products.length; i++) {
    const s = products[i];
    const xr = s.pRe[c];
    const xi = s.pIm[c];
    s.pRe[c] = xr * ar - xi * ai;
    s.pIm[c] = xr * ai + xi * ar;
    const yr = s.oRe[c];
    const yi = s.oIm[c];
    s.oRe[c] = yr * br - yi * bi;
    s.oIm[c] = yr * bi + yi * br;
  }
}

/**
 * Given the bit-reversed transform (re, im) of a + i b, multiplies A^count and B^count into every
 * target's products (targets sharing a count share the exponentiation).
 */
export function multiplyPowers(re: Float64Array, im: Float64Array, targets: readonly PowerTarget[]): void {
  const n = re.length;
  const counts = [...new Set(targets.map((t) => t.count))];
  for (const k of counts) {
    const products = targets.filter((t) => t.count === k).map((t) => t.product);
    const threshold = k === 1 ? 0 : Math.exp(-1490 / k);
    visitPair(re, im, 0, 0, 0, k, threshold, products);
    if (n > 1) visitPair(re, im, 1, 1, 1, k, threshold, products);
    for (let base = 2; base < n; base *= 2) {
      const half = base >>> 1;
      const mirror = 3 * base - 1;
      for (let j = 0; j < half; j++) visitPair(re, im, base + j, mirror - base - j, half + 1 + j, k, threshold, products);
    }
  }
}

/**
 * The inverse transform of a product: on return re (natural order) holds the composed a-sequence
 * and im the composed b-sequence (circularly, length N).
 */
export function inverseProduct(product: SpectrumProduct, re: Float64Array, im: Float64Array): void {
  const { n, pRe, pIm, oRe, oIm } = product;
  // Z = P + i O at f; at N - f: conj(P) + i conj(O).
  re[0] = pRe[0] - oIm[0];
  im[0] = pIm[0] + oRe[0];
  if (n > 1) {
    re[1] = pRe[1] - oIm[1];
    im[1] = pIm[1] + oRe[1];
  }
  for (let base = 2; base < n; base *= 2) {
    const half = base >>> 1;
    const mirror = 3 * base - 1;
    for (let j = 0; j < half; j++) {
      const p = base + j;
      const q = mirror - p;
      const c = half + 1 + j;
      const pr = pRe[c];
      const pi = pIm[c];
      const or = oRe[c];
      const oi = oIm[c];
      re[p] = pr - oi;
      im[p] = pi + or;
      re[q] = pr + oi;
      im[q] = or - pi;
    }
  }
  ifftFromBitReversed(re, im);
}
