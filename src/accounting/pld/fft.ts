/**
 * Radix-4 complex fast Fourier transforms for convolution (Cooley & Tukey 1965; the radix-4
 * butterflies are two fused radix-2 stages), in place on split real/imaginary Float64Arrays.
 * They are the numerical kernel of the PLD accountant's composition (Koskela et al. 2021, Sec. 4:
 * the distribution of a sum of independent privacy losses is the convolution of their
 * distributions, i.e. a product of discrete Fourier transforms). They belong to `src/math` by
 * docs/design.md's layers and can move there unchanged.
 *
 * For speed no bit-reversal permutation is ever performed: the forward transform is a
 * decimation-in-frequency FFT that takes natural order and returns the spectrum in bit-reversed
 * order, and the inverse is a decimation-in-time FFT that takes bit-reversed order and returns
 * natural order. Pointwise work in between (products, powers) does not care about the order;
 * `bitReversal(n)` gives the map for work that pairs frequencies f and N - f.
 *
 * Conventions: forward X[f] = sum_j x[j] e^{-2 pi i j f / N}; the inverse divides by N.
 */
import { InvalidParameterError } from '../../errors.js';

interface Plan {
  readonly n: number;
  /** Radix-2 twiddles of size n (used when log2 n is odd): cos, sin of 2 pi k / n, interleaved, k < n/2. */
  readonly radix2: Float64Array;
  /** For each radix-4 stage size s (a power of 4): cos, sin of 2 pi jk / s for j = 1, 2, 3, interleaved, k < s/4. */
  readonly radix4: Map<number, Float64Array>;
  reverse?: Uint32Array;
}

const plans = new Map<number, Plan>();

/**
 * Stages whose size is at most this many complex points (256 KiB of data) are run block by
 * block, all of them on one block before the next: the block stays in cache, so a transform of
 * 2^20 points streams through memory 3-4 times instead of 10.
 */
const CACHE_BLOCK = 1 << 14;

function plan(n: number): Plan {
  let p = plans.get(n);
  if (p !== undefined) return p;
  if (!(Number.isSafeInteger(n) && n >= 1 && (n & (n - 1)) === 0)) throw new InvalidParameterError('n', n, 'a power of two');
  // Each twiddle is computed directly from its angle (no recurrence): about one ulp of error.
  const half = n >>> 1;
  const radix2 = new Float64Array(2 * half);
  for (let k = 0; k < half; k++) {
    const angle = (2 * Math.PI * k) / n;
    radix2[2 * k] = Math.cos(angle);
    radix2[2 * k + 1] = Math.sin(angle);
  }
  const radix4 = new Map<number, Float64Array>();
  for (let s = 4; s <= n; s *= 4) {
    const quarter = s / 4;
    const table = new Float64Array(6 * quarter);
    for (let k = 0; k < quarter; k++) {
      for (let j = 1; j <= 3; j++) {
        const angle = (2 * Math.PI * ((j * k) % s)) / s;
        table[6 * k + 2 * (j - 1)] = Math.cos(angle);
        table[6 * k + 2 * (j - 1) + 1] = Math.sin(angle);
      }
    }
    radix4.set(s, table);
  }
  p = { n, radix2, radix4 };
  if (plans.size >= 6) plans.clear();
  plans.set(n, p);
  return p;
}

function isOddPower(n: number): boolean {
  return Math.round(Math.log2(n)) % 2 === 1;
}

function requireSameLength(re: Float64Array, im: Float64Array): number {
  const n = re.length;
  if (im.length !== n) throw new InvalidParameterError('im.length', im.length, `equal to re.length (${n})`);
  if (n > 0) plan(n); // validates the power of two
  return n;
}

/** One radix-4 decimation-in-frequency stage of size `size` on the blocks of [from, to). */
function difStage(re: Float64Array, im: Float64Array, from: number, to: number, size: number, tw: Float64Array): void {
  const quarter = size >>> 2;
  for (let start = from; start < to; start += size) {
    for (let k = 0; k < quarter; k++) {
      const i0 = start + k;
      const i1 = i0 + quarter;
      const i2 = i1 + quarter;
      const i3 = i2 + quarter;
      const x0r = re[i0], x0i = im[i0], x1r = re[i1], x1i = im[i1];
      const x2r = re[i2], x2i = im[i2], x3r = re[i3], x3i = im[i3];
      // y0 = x0 + x2, y1 = x1 + x3, t0 = x0 - x2, t1 = -i (x1 - x3)
      const y0r = x0r + x2r, y0i = x0i + x2i;
      const y1r = x1r + x3r, y1i = x1i + x3i;
      const t0r = x0r - x2r, t0i = x0i - x2i;
      const t1r = x1i - x3i, t1i = x3r - x1r;
      re[i0] = y0r + y1r;
      im[i0] = y0i + y1i;
      // z1 = (y0 - y1) W^{2k}, z2 = (t0 + t1) W^k, z3 = (t0 - t1) W^{3k}; W = e^{-2 pi i / size}
      const o = 6 * k;
      const c1 = tw[o], s1 = -tw[o + 1], c2 = tw[o + 2], s2 = -tw[o + 3], c3 = tw[o + 4], s3 = -tw[o + 5];
      const ar = y0r - y1r, ai = y0i - y1i;
      re[i1] = ar * c2 - ai * s2;
      im[i1] = ar * s2 + ai * c2;
      const br = t0r + t1r, bi = t0i + t1i;
      re[i2] = br * c1 - bi * s1;
      im[i2] = br * s1 + bi * c1;
      const cr = t0r - t1r, ci = t0i - t1i;
      re[i3] = cr * c3 - ci * s3;
      im[i3] = cr * s3 + ci * c3;
    }
  }
}

/** One radix-4 decimation-in-time stage (inverse sign) of size `size` on the blocks of [from, to). */
function ditStage(re: Float64Array, im: Float64Array, from: number, to: number, size: number, tw: Float64Array): void {
  const quarter = size >>> 2;
  for (let start = from; start < to; start += size) {
    for (let k = 0; k < quarter; k++) {
      const i0 = start + k;
      const i1 = i0 + quarter;
      const i2 = i1 + quarter;
      const i3 = i2 + quarter;
      // a0 = x0, a1 = x1 W^{2k}, a2 = x2 W^k, a3 = x3 W^{3k}; W = e^{+2 pi i / size}
      const o = 6 * k;
      const c1 = tw[o], s1 = tw[o + 1], c2 = tw[o + 2], s2 = tw[o + 3], c3 = tw[o + 4], s3 = tw[o + 5];
      const a0r = re[i0], a0i = im[i0];
      const x1r = re[i1], x1i = im[i1], x2r = re[i2], x2i = im[i2], x3r = re[i3], x3i = im[i3];
      const a1r = x1r * c2 - x1i * s2, a1i = x1r * s2 + x1i * c2;
      const a2r = x2r * c1 - x2i * s1, a2i = x2r * s1 + x2i * c1;
      const a3r = x3r * c3 - x3i * s3, a3i = x3r * s3 + x3i * c3;
      const pr = a0r + a1r, pi = a0i + a1i;
      const mr = a0r - a1r, mi = a0i - a1i;
      const qr = a2r + a3r, qi = a2i + a3i;
      const ur = a3i - a2i, ui = a2r - a3r; // +i (a2 - a3)
      re[i0] = pr + qr;
      im[i0] = pi + qi;
      re[i2] = pr - qr;
      im[i2] = pi - qi;
      re[i1] = mr + ur;
      im[i1] = mi + ui;
      re[i3] = mr - ur;
      im[i3] = mi - ui;
    }
  }
}

/** The radix-4 stage sizes (powers of 4) of a transform of size n, ascending. */
function radix4Sizes(n: number): number[] {
  const top = isOddPower(n) ? n >>> 1 : n;
  const sizes: number[] = [];
  for (let s = 4; s <= top; s *= 4) sizes.push(s);
  return sizes;
}

/**
 * Forward DFT, natural order in, BIT-REVERSED order out (decimation in frequency): after the call
 * (re[p], im[p]) holds X[rev(p)]. Radix-4 stages are two fused radix-2 stages, so the output order
 * is plain binary bit reversal.
 */
export function fftToBitReversed(re: Float64Array, im: Float64Array): void {
  const n = requireSameLength(re, im);
  if (n <= 1) return;
  const { radix2, radix4 } = plan(n);
  if (isOddPower(n)) {
    // One radix-2 stage of size n: (a, b) -> (a + b, (a - b) W^k).
    const half = n >>> 1;
    for (let k = 0; k < half; k++) {
      const b = k + half;
      const dr = re[k] - re[b];
      const di = im[k] - im[b];
      re[k] += re[b];
      im[k] += im[b];
      const wr = radix2[2 * k];
      const wi = -radix2[2 * k + 1];
      re[b] = dr * wr - di * wi;
      im[b] = dr * wi + di * wr;
    }
  }
  const sizes = radix4Sizes(n).reverse();
  let i = 0;
  for (; i < sizes.length && sizes[i] > CACHE_BLOCK; i++) difStage(re, im, 0, n, sizes[i], radix4.get(sizes[i])!);
  if (i === sizes.length) return;
  const block = sizes[i];
  for (let from = 0; from < n; from += block) {
    for (let j = i; j < sizes.length; j++) difStage(re, im, from, from + block, sizes[j], radix4.get(sizes[j])!);
  }
}

/**
 * Inverse DFT (with the 1/N factor), BIT-REVERSED order in, natural order out (decimation in
 * time): the inverse of `fftToBitReversed`.
 */
export function ifftFromBitReversed(re: Float64Array, im: Float64Array): void {
  const n = requireSameLength(re, im);
  if (n <= 1) return;
  const { radix2, radix4 } = plan(n);
  const sizes = radix4Sizes(n);
  let small = 0;
  while (small < sizes.length && sizes[small] <= CACHE_BLOCK) small++;
  if (small > 0) {
    const block = sizes[small - 1];
    for (let from = 0; from < n; from += block) {
      for (let j = 0; j < small; j++) ditStage(re, im, from, from + block, sizes[j], radix4.get(sizes[j])!);
    }
  }
  for (let j = small; j < sizes.length; j++) ditStage(re, im, 0, n, sizes[j], radix4.get(sizes[j])!);
  if (isOddPower(n)) {
    const half = n >>> 1;
    for (let k = 0; k < half; k++) {
      const b = k + half;
      const wr = radix2[2 * k];
      const wi = radix2[2 * k + 1];
      const xr = re[b] * wr - im[b] * wi;
      const xi = re[b] * wi + im[b] * wr;
      re[b] = re[k] - xr;
      im[b] = im[k] - xi;
      re[k] += xr;
      im[k] += xi;
    }
  }
  const scale = 1 / n;
  for (let j = 0; j < n; j++) {
    re[j] *= scale;
    im[j] *= scale;
  }
}

/** rev[p] = the frequency stored at position p by `fftToBitReversed` (an involution). */
export function bitReversal(n: number): Uint32Array {
  const p = plan(n);
  if (p.reverse === undefined) {
    const reverse = new Uint32Array(n);
    const bits = Math.round(Math.log2(n));
    for (let i = 0; i < n; i++) {
      let r = 0;
      for (let b = 0, x = i; b < bits; b++, x >>>= 1) r = (r << 1) | (x & 1);
      reverse[i] = r >>> 0;
    }
    p.reverse = reverse;
  }
  return p.reverse;
}

/** Natural-order forward DFT (a convenience for tests and small transforms). */
export function fft(re: Float64Array, im: Float64Array): void {
  fftToBitReversed(re, im);
  permute(re, im);
}

/** Natural-order inverse DFT, including the 1/N factor. */
export function ifft(re: Float64Array, im: Float64Array): void {
  permute(re, im);
  ifftFromBitReversed(re, im);
}

function permute(re: Float64Array, im: Float64Array): void {
  const n = re.length;
  if (n <= 1) return;
  const reverse = bitReversal(n);
  for (let i = 0; i < n; i++) {
    const j = reverse[i];
    if (j > i) {
      const tr = re[i];
      re[i] = re[j];
      re[j] = tr;
      const ti = im[i];
      im[i] = im[j];
      im[j] = ti;
    }
  }
}
