import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError } from '../../../src/errors.js';
import { CLIP_SAFETY } from '../../../src/learners/glm/clipped-gradient.js';
import { huberLoss } from '../../../src/learners/glm/losses/huber.js';
import { logisticLoss } from '../../../src/learners/glm/losses/logistic.js';
import { createClippedGradientPool, shareGlmData } from '../../../src/learners/glm/parallel/parallel-clipped-sum.js';
import { CHUNK_ROWS, sumClippedGradients } from '../../../src/learners/glm/per-example.js';
import { squaredLoss } from '../../../src/learners/glm/losses/squared.js';
import type { GlmData, GlmLoss } from '../../../src/learners/glm/types.js';
import { fillGaussian } from '../../../src/random/continuous.js';
import { seededRng } from '../../../src/random/rng.js';

const U = 2 ** -53;

function makeData(n: number, d: number, seed: number, scale = 1): GlmData {
  const rng = seededRng(seed);
  const x = fillGaussian(rng, new Float64Array(n * d), scale);
  const y = new Float64Array(n).map(() => (rng.nextDouble() < 0.5 ? -1 : 1));
  return { x, y, n, d };
}

/**
 * Independent reference: row by row with the scalar `derivative`, the clamp written out
 * (t = C (1 - 2^-48) / ||x||, `clipped-gradient.ts`), and Neumaier-compensated sums; also returns
 * sum_i ||c_i x_i||_1 per coordinate for a rounding-error bound.
 */
function reference(loss: GlmLoss, data: GlmData, theta: Float64Array, clipNorm: number): { sum: Float64Array; abs: Float64Array; clipped: number } {
  const { x, y, n, d } = data;
  const sum = new Float64Array(d);
  const comp = new Float64Array(d);
  const abs = new Float64Array(d);
  let clipped = 0;
  for (let i = 0; i < n; i++) {
    let z = 0;
    let ss = 0;
    for (let j = 0; j < d; j++) {
      z += x[i * d + j] * theta[j];
      ss += x[i * d + j] ** 2;
    }
    let c = loss.derivative(z, y[i]);
    const t = clipNorm === Infinity || ss === 0 ? Infinity : (clipNorm * CLIP_SAFETY) / Math.sqrt(ss);
    if (Math.abs(c) > t) {
      c = Math.sign(c) * t;
      clipped++;
    }
    for (let j = 0; j < d; j++) {
      const term = c * x[i * d + j];
      const s = sum[j] + term;
      comp[j] += Math.abs(sum[j]) >= Math.abs(term) ? sum[j] - s + term : term - s + sum[j];
      sum[j] = s;
      abs[j] += Math.abs(term);
    }
  }
  for (let j = 0; j < d; j++) sum[j] += comp[j];
  return { sum, abs, clipped };
}

function assertNearReference(loss: GlmLoss, data: GlmData, theta: Float64Array, clipNorm: number, label: string): void {
  const got = sumClippedGradients(loss, data, theta, { clipNorm });
  const ref = reference(loss, data, theta, clipNorm);
  assert.equal(got.count, data.n);
  // The derivative of a margin rounded differently may fall on the other side of t only by a hair:
  // the counts agree on these random data (no exact ties).
  assert.equal(got.clippedCount, ref.clipped, `${label}: clipped count`);
  for (let j = 0; j < data.d; j++) {
    // Recursive summation of n terms, each a d-term dot product pushed through f': a generous
    // worst-case bound 4 (n + d + 8) u sum|terms| (Higham, Accuracy and Stability, Sec. 4.2).
    const bound = 4 * (data.n + data.d + 8) * U * ref.abs[j];
    assert.ok(Math.abs(got.sum[j] - ref.sum[j]) <= bound, `${label} [${j}]: ${got.sum[j]} vs ${ref.sum[j]} (bound ${bound})`);
  }
}

test('sumClippedGradients matches an independent row-by-row reference (all row-group and block remainders, and several chunks)', () => {
  const theta3 = Float64Array.from([0.7, -1.2, 0.4]);
  for (const n of [1, 2, 3, 4, 5, 7, 255, 256, 257, 1029]) {
    for (const loss of [logisticLoss, squaredLoss, huberLoss(0.5)]) {
      for (const clipNorm of [0.3, Infinity]) assertNearReference(loss, makeData(n, 3, n), theta3, clipNorm, `${loss.name} n=${n} C=${clipNorm}`);
    }
  }
  // 2 CHUNK_ROWS + 5 rows: three chunks, the last one short.
  const big = makeData(2 * CHUNK_ROWS + 5, 2, 11);
  assertNearReference(logisticLoss, big, Float64Array.from([2, -1]), 0.5, 'three chunks');
  const d20 = makeData(600, 20, 12, 1 / Math.sqrt(20));
  assertNearReference(logisticLoss, d20, fillGaussian(seededRng(13), new Float64Array(20), 1), 0.2, 'd = 20');
});

test('the full-pass (contiguous) kernels and the gathered kernels (indices 0..n-1) give bit-identical sums', () => {
  for (const [n, d] of [[1, 1], [6, 3], [259, 5], [1030, 20]]) {
    const data = makeData(n, d, 100 + n);
    const theta = fillGaussian(seededRng(n), new Float64Array(d), 1);
    for (const loss of [logisticLoss, squaredLoss]) {
      const full = sumClippedGradients(loss, data, theta, { clipNorm: 0.5 });
      const gathered = sumClippedGradients(loss, data, theta, { clipNorm: 0.5, indices: Array.from({ length: n }, (_, i) => i) });
      assert.deepEqual(gathered.sum, full.sum, `n=${n} d=${d} ${loss.name}`);
      assert.equal(gathered.clippedCount, full.clippedCount);
    }
  }
});

test('every summed clipped gradient has norm <= C in floating point, even for huge rows and margins', () => {
  // Rows of norm ~1e6 with theta of norm ~1e3: every gradient is clipped; a one-row batch's sum is
  // that row's clipped gradient, computed by the same kernels as the full pass.
  const data = makeData(400, 7, 21, 1e6 / Math.sqrt(7));
  const theta = fillGaussian(seededRng(22), new Float64Array(7), 1e3);
  for (const loss of [logisticLoss, squaredLoss, huberLoss(1)]) {
    for (const clipNorm of [1e-3, 1, 3.7]) {
      let clipped = 0;
      for (let i = 0; i < data.n; i++) {
        const { sum, clippedCount } = sumClippedGradients(loss, data, theta, { clipNorm, indices: [i] });
        clipped += clippedCount;
        let sq = 0;
        for (const v of sum) sq += v * v;
        assert.ok(Math.sqrt(sq) <= clipNorm, `${loss.name} row ${i}: norm ${Math.sqrt(sq)} > C = ${clipNorm}`);
      }
      // Logistic: about half the rows sit on the flat side (f' ~ 0); squared and Huber clip nearly all.
      assert.ok(clipped > (loss === logisticLoss ? 0.3 : 0.9) * data.n, `${loss.name}: ${clipped} of ${data.n} clipped`);
    }
  }
});

test('a loss that calls sumClippedGradients from inside its batch derivative (re-entrant) gets the same sums', () => {
  const data = makeData(700, 4, 31);
  const inner = makeData(50, 4, 32);
  const theta = Float64Array.from([0.5, -0.5, 1, 0]);
  const reentrant: GlmLoss = {
    ...logisticLoss,
    derivatives(z, y, out, count) {
      sumClippedGradients(logisticLoss, inner, theta, { clipNorm: 1 });
      logisticLoss.derivatives(z, y, out, count);
    },
  };
  assert.deepEqual(sumClippedGradients(reentrant, data, theta, { clipNorm: 0.7 }), sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.7 }));
});

test('parallel sum: bit-identical to sumClippedGradients for 1, 2 and 3 threads, deterministic across runs, clear errors', async () => {
  const n = 3 * CHUNK_ROWS + 17;
  const d = 5;
  const data = shareGlmData(makeData(n, d, 41));
  assert.ok(data.x.buffer instanceof SharedArrayBuffer && data.y.buffer instanceof SharedArrayBuffer);
  const theta = fillGaussian(seededRng(42), new Float64Array(d), 1);
  const serial = sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.4 });
  const serialHuber = sumClippedGradients(huberLoss(0.3), data, theta, { clipNorm: 0.4 });
  for (const threads of [1, 2, 3]) {
    const pool = await createClippedGradientPool({ threads });
    try {
      assert.equal(pool.threads, threads);
      for (let run = 0; run < 3; run++) {
        const out = new Float64Array(d);
        const result = pool.sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.4, out });
        assert.equal(result.sum, out);
        assert.deepEqual(result, serial, `threads ${threads} run ${run}`);
      }
      // A parametrised built-in loss is rebuilt in the workers; labels on a plain ArrayBuffer are copied.
      assert.deepEqual(pool.sumClippedGradients(huberLoss(0.3), { ...data, y: Float64Array.from(data.y) }, theta, { clipNorm: 0.4 }), serialHuber);
      // Batches run on the calling thread: same numbers as the serial function.
      const indices = [5, 5, n - 1, 0];
      assert.deepEqual(pool.sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.4, indices }), sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.4, indices }));
      if (threads > 1) {
        const unshared = { ...data, x: Float64Array.from(data.x) };
        assert.throws(() => pool.sumClippedGradients(logisticLoss, unshared, theta, { clipNorm: 0.4 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'data.x');
        const custom: GlmLoss = { ...logisticLoss, derivatives: (z, y, out, count) => logisticLoss.derivatives(z, y, out, count) };
        assert.throws(() => pool.sumClippedGradients(custom, data, theta, { clipNorm: 0.4 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'loss');
      }
      assert.throws(() => pool.sumClippedGradients(logisticLoss, data, theta, { clipNorm: -1 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'clipNorm');
    } finally {
      await pool.close();
    }
  }
  await assert.rejects(createClippedGradientPool({ threads: 0 }), (e: unknown) => e instanceof InvalidParameterError && e.param === 'threads');
});

test('a row whose squared norm underflows is still clipped (its gradient norm stays <= C)', () => {
  // ||x||^2 = 2e-340 underflows to 0 in double precision; the old threshold C / 0 = Infinity left
  // the gradient f'(z) x = 2e-20 * 1e-170 unclipped, 2e-190 > C = 1e-200.
  const data: GlmData = { x: Float64Array.from([1e-170, 1e-170]), y: Float64Array.from([0]), n: 1, d: 2 };
  const theta = Float64Array.from([1e150, 1e150]);
  const clipNorm = 1e-200;
  const out = new Float64Array(2);
  sumClippedGradients(squaredLoss, data, theta, { clipNorm, out });
  const norm = Math.sqrt((out[0] / clipNorm) ** 2 + (out[1] / clipNorm) ** 2) * clipNorm;
  assert.ok(norm <= clipNorm, `gradient norm ${norm} > clipNorm ${clipNorm}`);
  assert.ok(norm > 0, `clipped (conservatively: as if the row's norm were 2^-500), not zeroed (${norm})`);
  // A zero row contributes exactly nothing (the dropped records of data/dropped-rows.ts).
  const zero = new Float64Array(2);
  sumClippedGradients(squaredLoss, { ...data, x: new Float64Array(2), y: Float64Array.from([7]) }, theta, { clipNorm: 1, out: zero });
  assert.deepEqual(Array.from(zero, Math.abs), [0, 0]);
});

test('the pool adds the chunk sums of a row range to out in chunk order: the in-memory sum of a pass split at chunk boundaries, bit for bit', async () => {
  const d = 7;
  const n = 5 * CHUNK_ROWS + 1234;
  const data = shareGlmData(makeData(n, d, 31, 0.8));
  const theta = Float64Array.from({ length: d }, (_, j) => 0.3 * (j - 3));
  const whole = sumClippedGradients(logisticLoss, data, theta, { clipNorm: 0.6 });
  // The pass in pieces of whole chunks (the out-of-core segments), out accumulated across them.
  const cuts = [0, CHUNK_ROWS, 3 * CHUNK_ROWS, 5 * CHUNK_ROWS, n];
  for (const threads of [1, 2, 3]) {
    const pool = await createClippedGradientPool({ threads });
    try {
      const out = new Float64Array(d);
      let clipped = 0;
      for (let k = 0; k + 1 < cuts.length; k++) clipped += pool.addChunkSums(logisticLoss, data, theta, { clipNorm: 0.6, out }, cuts[k], cuts[k + 1]);
      assert.deepEqual(Array.from(out), Array.from(whole.sum), `threads ${threads}`);
      assert.equal(clipped, whole.clippedCount);
      // A range that is not the whole pass: its chunks added to what out holds, not to zero.
      const partial = Float64Array.from(out);
      pool.addChunkSums(logisticLoss, data, theta, { clipNorm: 0.6, out: partial }, CHUNK_ROWS, 3 * CHUNK_ROWS);
      const expected = Float64Array.from(out);
      for (const start of [CHUNK_ROWS, 2 * CHUNK_ROWS]) {
        const chunk = sumClippedGradients(logisticLoss, { x: data.x.subarray(start * d, (start + CHUNK_ROWS) * d), y: data.y.subarray(start, start + CHUNK_ROWS), n: CHUNK_ROWS, d }, theta, { clipNorm: 0.6 });
        for (let j = 0; j < d; j++) expected[j] += chunk.sum[j];
      }
      assert.deepEqual(Array.from(partial), Array.from(expected));
      assert.throws(() => pool.addChunkSums(logisticLoss, data, theta, { clipNorm: 0.6, out }, 10, 5), (e: unknown) => e instanceof InvalidParameterError);
    } finally {
      await pool.close();
    }
  }
});
