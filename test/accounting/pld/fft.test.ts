import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bitReversal, fft, fftToBitReversed, ifft, ifftFromBitReversed } from '../../../src/accounting/pld/fft.js';
import { inverseProduct, multiplyPowers, SpectrumProduct } from '../../../src/accounting/pld/spectrum-product.js';
import { InvalidParameterError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';

/** A deterministic pseudo-random sequence (no Math.random in tests). */
function sequence(n: number, seed: number): Float64Array {
  const out = new Float64Array(n);
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out[i] = x / 2147483648 - 0.5;
  }
  return out;
}

/** The DFT by its definition, angles reduced exactly (j f mod n). */
function naiveDft(re: Float64Array, im: Float64Array): { re: Float64Array; im: Float64Array } {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let f = 0; f < n; f++) {
    let sr = 0;
    let si = 0;
    for (let j = 0; j < n; j++) {
      const a = (-2 * Math.PI * ((j * f) % n)) / n;
      sr += re[j] * Math.cos(a) - im[j] * Math.sin(a);
      si += re[j] * Math.sin(a) + im[j] * Math.cos(a);
    }
    outRe[f] = sr;
    outIm[f] = si;
  }
  return { re: outRe, im: outIm };
}

test('fft equals the DFT definition and ifft inverts it (sizes 1..2048, odd and even powers of two)', () => {
  for (const n of [1, 2, 4, 8, 16, 32, 64, 512, 2048]) {
    const re = sequence(n, n);
    const im = sequence(n, n + 7);
    const expected = naiveDft(re, im);
    const xr = Float64Array.from(re);
    const xi = Float64Array.from(im);
    fft(xr, xi);
    for (let f = 0; f < n; f++) {
      assertClose(xr[f], expected.re[f], 0, 1e-11 * Math.sqrt(n), `re[${f}] n=${n}`);
      assertClose(xi[f], expected.im[f], 0, 1e-11 * Math.sqrt(n), `im[${f}] n=${n}`);
    }
    ifft(xr, xi);
    for (let j = 0; j < n; j++) {
      assertClose(xr[j], re[j], 0, 1e-14);
      assertClose(xi[j], im[j], 0, 1e-14);
    }
  }
});

test('the bit-reversed forward transform and the inverse from bit-reversed order round-trip', () => {
  const n = 1 << 13;
  const re = sequence(n, 3);
  const im = sequence(n, 5);
  const xr = Float64Array.from(re);
  const xi = Float64Array.from(im);
  fftToBitReversed(xr, xi);
  // position p holds frequency rev[p]
  const rev = bitReversal(n);
  const nr = Float64Array.from(re);
  const ni = Float64Array.from(im);
  fft(nr, ni);
  for (const p of [0, 1, 2, 3, 100, n - 1]) {
    assertClose(xr[p], nr[rev[p]], 0, 1e-10);
    assertClose(xi[p], ni[rev[p]], 0, 1e-10);
  }
  ifftFromBitReversed(xr, xi);
  for (let j = 0; j < n; j += 97) {
    assertClose(xr[j], re[j], 0, 1e-14);
    assertClose(xi[j], im[j], 0, 1e-14);
  }
});

test('fft rejects lengths that are not powers of two', () => {
  assert.throws(() => fft(new Float64Array(6), new Float64Array(6)), InvalidParameterError);
  assert.throws(() => fft(new Float64Array(8), new Float64Array(4)), InvalidParameterError);
});

test('spectrum products: the k-th power of a packed pair is the k-fold circular convolution of each', () => {
  const n = 64;
  const a = new Float64Array(n);
  const b = new Float64Array(n);
  a.set([0.5, 0.3, 0.2]);
  b.set([0.1, 0.6, 0.0, 0.3]);
  const k = 3;
  const conv = (x: Float64Array, y: Float64Array) => {
    const out = new Float64Array(n);
    for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[(i + j) % n] += x[i] * y[j];
    return out;
  };
  let ea = a;
  let eb = b;
  for (let i = 1; i < k; i++) {
    ea = conv(ea, a);
    eb = conv(eb, b);
  }
  const re = Float64Array.from(a);
  const im = Float64Array.from(b);
  fftToBitReversed(re, im);
  const product = new SpectrumProduct(n);
  multiplyPowers(re, im, [{ product, count: k }]);
  inverseProduct(product, re, im);
  for (let j = 0; j < n; j++) {
    assertClose(re[j], ea[j], 0, 1e-15, `a^${k}[${j}]`);
    assertClose(im[j], eb[j], 0, 1e-15, `b^${k}[${j}]`);
  }
});
