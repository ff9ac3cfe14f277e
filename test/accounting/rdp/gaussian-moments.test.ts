import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { logAlternatingMoment, logGaussianPearsonMoments } from '../../../src/accounting/rdp/subsampling/gaussian-moments.js';
import { logFactorial } from '../../../src/math/gamma.js';

/*
 * log B_j, B_j = E[(L - 1)^j] = sum_i C(j, i) (-1)^(j-i) e^(t2 i (i-1) / 2) (L the likelihood ratio
 * of N(t, 1) to N(0, 1)), by mpmath 1.3.0 run once: the alternating sum at
 * 0.35 j + (j/2) |log10 t2| + t2 j^2 / 4.6 + 60 digits (enough for its cancellation); where
 * marked, also by independent quadrature of E[expm1(t W - t2/2)^j] (mp.quad, 60 digits, split at
 * the integrand's peak), which agreed to all 17 digits. Rows: [t2, j, log B_j]. They span the
 * regimes: no cancellation (t2 j large), heavy cancellation (B_j ~ t^j (j-1)!! against terms
 * ~ 2^j: the positive series), and in between.
 */
const MPMATH_LOG_B: [number, number, number][] = [
  [1e-200, 2, -460.51701859880914],
  [1e-200, 4, -919.93542490895016],
  [1e-200, 64, -14635.115064913284],
  [1e-10, 2, -23.025850929890457], // quad
  [1e-10, 8, -87.449443363804304], // quad
  [1e-10, 100, -970.68828450544683],
  [1e-10, 1024, -8751.9622658739435],
  [1e-4, 4, -17.321435186655582], // quad
  [1e-4, 30, -101.49287596013069], // quad
  [1e-4, 256, -576.35937529458785],
  [0.0025, 10, -22.836667183033337], // quad
  [0.0025, 64, -77.174203199506336], // quad
  [0.0025, 512, 190.76590894186714],
  [0.01, 16, -19.685186678264409], // quad
  [0.01, 100, 12.9966931818604],
  [0.01, 644, 2069.426115190138],
  [0.04, 20, -1.9456772511257204], // quad
  [0.04, 120, 284.5885738422204],
  [0.1848, 10, 6.5596257627570588], // quad
  [0.1848, 64, 372.55623775265694], // quad
  [1, 4, 5.818290038535158], // quad
  [1, 40, 780.0], // quad
  [100, 2, 100.0], // quad
  [100, 8, 2800.0], // quad
];

test('Pearson moments B_j: never below mpmath, within 1e-10 relative (in B_j) or 1e-13 of log B_j', () => {
  const tables = new Map<number, Float64Array>();
  for (const [t2, j, reference] of MPMATH_LOG_B) {
    let table = tables.get(t2);
    if (table === undefined || table.length <= j) {
      table = logGaussianPearsonMoments(t2, Math.max(j, 64));
      tables.set(t2, table);
    }
    const value = table[j];
    // an upper bound: never below the reference beyond the reference's own last digit
    assert.ok(value >= reference - 4e-16 * Math.abs(reference), `t2=${t2} j=${j}: ${value} < ${reference}`);
    assert.ok(value - reference <= Math.max(1e-10, 1e-13 * Math.abs(reference)), `t2=${t2} j=${j}: ${value} vs ${reference}`);
  }
});

test('Pearson moments: closed forms B_0 = 1, B_2 = e^t2 - 1; t2 = 0 gives 0; odd entries NaN', () => {
  for (const t2 of [1e-12, 0.3, 7]) {
    const m = logGaussianPearsonMoments(t2, 3);
    assert.equal(m[0], 0);
    assert.ok(Number.isNaN(m[1]) && Number.isNaN(m[3]));
    const exact = Math.log(Math.expm1(t2));
    assert.ok(m[2] >= exact && m[2] - exact < 1e-12, `t2=${t2}`);
  }
  const zero = logGaussianPearsonMoments(0, 6);
  assert.deepEqual([zero[0], zero[2], zero[4], zero[6]], [0, -Infinity, -Infinity, -Infinity]);
});

test('Pearson moments (property): increasing in t2 and above the leading series term t^j (j-1)!!', () => {
  // B_j = sum_n N_n(j) (t2/2)^n / n! with N_n(j) >= 0 and N_(j/2)(j) = j!: increasing in t2, and
  // at least j! (t2/2)^(j/2) / (j/2)! = t^j (j-1)!!.
  fc.assert(
    fc.property(fc.double({ min: -12, max: 1.5, noNaN: true }), fc.double({ min: 1.001, max: 3, noNaN: true }), fc.integer({ min: 1, max: 60 }), (log10t2, factor, half) => {
      const t2 = 10 ** log10t2;
      const j = 2 * half;
      const lo = logGaussianPearsonMoments(t2, j)[j];
      const hi = logGaussianPearsonMoments(t2 * factor, j)[j];
      const leading = logFactorial(j) - logFactorial(half) + half * Math.log(t2 / 2);
      assert.ok(lo >= leading - 1e-12 * Math.abs(leading), `t2=${t2} j=${j}: ${lo} < leading ${leading}`);
      assert.ok(hi >= lo - 1e-11 * Math.max(1, Math.abs(lo)), `t2=${t2} j=${j}: ${hi} < ${lo}`);
    }),
    { numRuns: 60 },
  );
});

test('alternating moment T_j: refuses (Infinity) rather than round down under cancellation', () => {
  // T_4 for Sigma = t2 [[1, 0], [0, 1]]: E[(L_x - L_y)^4], x ⟂ y; at t2 = 1e-9 the sum of ~1 terms
  // is 1.2e-17 (mpmath): no double evaluation has a correct digit, so no bound is returned.
  assert.equal(logAlternatingMoment(4, 1e-9, 0), Infinity);
  // at t2 = 0.5 it is accurate: mpmath (50 digits) of sum_a C(4,a)(-1)^(4-a) e^(0.25 (a(a-1) + b(b-1))): log = 3.026613126473385
  const value = logAlternatingMoment(4, 0.5, 0);
  assert.ok(value >= 3.026613126473385 - 1e-15 && value - 3.026613126473385 < 1e-12, String(value));
});
