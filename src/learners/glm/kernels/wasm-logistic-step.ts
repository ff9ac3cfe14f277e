/**
 * @internal The fused WebAssembly SIMD pass of the logistic loss, which reads the features once per
 * step. The rows are taken in blocks of B = `fusedBlockRows(precision)` rows (8 for float64, 16
 * for float32: measured best on 1e6 x 20, `bench/kernel.ts`), and each block goes through three
 * short loops while its rows are in L1:
 *
 *   1. margins, four rows per sweep of theta: for float64 rows z = x . theta as `margins` of
 *      `kernels.ts` (z = E + O, the even and odd halves of the sum in the two lanes); for float32
 *      rows the float32 margin of `float32-logistic.ts` (four f32x4 lanes from theta32, which the
 *      pass writes after the block scratch first, reduced as (a0 + a2) + (a1 + a3), four margins in
 *      one f32x4); into the block scratch;
 *   2. derivatives, four rows per iteration: c = clamp(-y / (1 + exp(y z)), -t, t) (as
 *      `logisticLoss.derivatives` with `deterministicExp`; for float32 rows four rows per f32x4 as
 *      `float32LogisticDerivatives` with `exp32`, widened; then `clamp` in float64: pmax / pmin,
 *      a NaN c made +0 by v128.andnot with the mask c != c, the clip count in i64 lanes), in place of z;
 *   3. the update, one sweep of out per four-row group in row order:
 *      out_j <- out_j + (((c0 x0_j + c1 x1_j) + c2 x2_j) + c3 x3_j) (as `accumulate`'s four-row groups).
 *
 * Every number is the scalar kernels' (float32 rows: `float32-logistic.ts`'s JavaScript), and
 * `per-example.ts` states the rounding bound these orders satisfy. Float32 rows, 1e6 x 20, one
 * thread: float32 margins and the f32x4 derivative made the step 1.37x faster than float64 margins
 * on rows widened into a scratch with the float64 exp (before/after interleaved, docs/performance.md). Loops, not straight-line code: V8 schedules a block's loads in program order and its
 * arithmetic next to its uses, so the previous straight-line body (eight rows, fully unrolled over
 * j) kept every loaded row element alive across the exp and spilled it to the stack: it was 1.4 to
 * 1.9 times slower on 1e6 x 20, float64 and float32 (`bench/kernel.ts`; before/after in the commit).
 *
 * Float32 rows with a finite clip norm take the update 'fixed' (`fixed-point.ts`): in
 * step 2, after the f32x4 derivative, the clamp in float32 lanes (t demoted, four rows per vector)
 * and the row scales s = fl32(c sigma32); step 3 per quad of coordinates sums the 16 rows'
 * fl32(fl32(x s) + 1.5 2^23) as int32 lanes (their bits are bits(M) + q: exact integer sums), less
 * 16 bits(M), into float64 integer sums Q in the scratch, which are dequantized into out every
 * 1024 rows from the call's first (out_j + Q_j unit). 1e6 x 20, one thread: the pass 8-10 % faster
 * than with the float64 update (the derivative stays in float32 lanes and no element is widened;
 * docs/performance.md). Its relaxed variant uses f32x4.relaxed_madd for the float32
 * margins and for x s + M (measured only).
 *
 * `fused` builds the variant with WebAssembly relaxed SIMD's f64x2.relaxed_madd (where the engine
 * has it, `relaxedSimdAvailable`): the margins' terms and the update's group terms are
 * multiply-adds in the same tree (G = madd(c3, x3, madd(c2, x2, madd(c1, x1, c0 x0))), then
 * out_j + G), so each term passes through no more roundings than in the exact variant (a fused
 * multiply-add rounds once where a multiply and an add round twice) and `clippedSumRoundingBound`
 * holds for it unchanged; its sums are not the scalar kernels' bit for bit. The exp, the
 * derivative and the clamp are the exact variant's.
 *
 * The module is built for one row length d, storage precision and variant. Rows past the last
 * full block are left to the caller.
 */
import { EXP_LN2_HI, EXP_LN2_LO, EXP_LOG2E, EXP_MAX, EXP_MIN, EXP_SHIFTER, EXP_TAYLOR } from '../../../math/exp.js';
import { FIXED_FLUSH_ROWS, FIXED_MAGIC, FIXED_MAGIC_BITS, FLOAT32_MIN_NORMAL } from './fixed-point.js';
import { encodeModule, F64, HIGH_LANES, I32, LOW_LANES, op, V128, wasmApi, type WasmFunction, type WasmMemory, type WasmModule } from './wasm-binary.js';
import { EXP32, FLOAT32_MAX } from './float32-logistic.js';
import { inc, loads, type Precision } from './wasm-kernels.js';

/** Rows per block of the fused pass: 8 for float64 rows, 16 for float32 (a multiple of 4 dividing WASM_BLOCK). */
export function fusedBlockRows(precision: Precision): number {
  return precision === 'float64' ? 8 : 16;
}

/** The longest row the fused pass is built for (longer rows use the blocked kernels). */
export const FUSED_MAX_D = 512;

/** The most rows per block of any precision (the scratch `feature-memory.ts` reserves). */
export const FUSED_MAX_BLOCK_ROWS = 16;

/**
 * step(x, theta, y, t, count, out, scratch): the pass over the first B floor(count / B) rows from
 * byte `x` (B = `fusedBlockRows`); `theta` holds d float64, `y` and `t` float64 labels and
 * thresholds of the same rows, `out` d float64 sums, `scratch` 8 B bytes (the block's margins,
 * then its coefficients) followed, for float32 rows, by 16 ceil(d / 4) bytes (theta32);
 * returns how many derivatives were clipped.
 */
export type LogisticStep = (x: number, theta: number, y: number, t: number, count: number, out: number, scratch: number, sigma?: number, unit?: number) => number;

/**
 * Byte offsets in the scratch of the fixed-point update (`fixed-point.ts`, float32 rows): after the
 * block's coefficients (8 B bytes) and theta32 (16 ceil(d / 4)), the integer sums Q (4 ceil(d / 4)
 * float64, exact integers) and the block's row scales s (B float32).
 */
export function fixedScratchOffsets(d: number): { q: number; s: number } {
  const quads = Math.ceil(d / 4);
  const q = 8 * fusedBlockRows('float32') + 16 * quads;
  return { q, s: q + 32 * quads };
}

/**
 * `deterministicExp` (`math/exp.ts`) on both lanes of local `s`, left on the stack: the same
 * operations in the same order as the JavaScript (the Estrin tree of the polynomial; 2^n from the
 * exponent bits of k = s' log2 e + SHIFTER, whose low 12 bits hold n), then Infinity where
 * s > EXP_MAX and 0 where s < EXP_MIN. `tmp` are seven v128 locals.
 */
export function simdExp(s: number, tmp: readonly number[]): number[] {
  const [sc, k, n, r, r2, r4, r8] = tmp;
  const [c13, c12, c11, c10, c9, c8, c7, c6, c5, c4, c3, c2] = EXP_TAYLOR;
  const c = op.f64x2Const;
  /** a + b r */
  const lin = (a: number, b: number) => [...c(a), ...c(b), ...op.get(r), ...op.f64x2Mul, ...op.f64x2Add];
  return [
    ...op.get(s), ...c(EXP_MIN), ...op.f64x2Pmax, ...c(EXP_MAX), ...op.f64x2Pmin, ...op.set(sc),
    ...op.get(sc), ...c(EXP_LOG2E), ...op.f64x2Mul, ...c(EXP_SHIFTER), ...op.f64x2Add, ...op.tee(k),
    ...c(EXP_SHIFTER), ...op.f64x2Sub, ...op.set(n),
    ...op.get(sc), ...op.get(n), ...c(EXP_LN2_HI), ...op.f64x2Mul, ...op.f64x2Sub, ...op.get(n), ...c(EXP_LN2_LO), ...op.f64x2Mul, ...op.f64x2Sub, ...op.set(r),
    ...op.get(r), ...op.get(r), ...op.f64x2Mul, ...op.set(r2),
    ...op.get(r2), ...op.get(r2), ...op.f64x2Mul, ...op.set(r4),
    ...op.get(r4), ...op.get(r4), ...op.f64x2Mul, ...op.set(r8),
    // Infinity where s > EXP_MAX (bitselect's first operand), else p 2^n ...
    ...c(Infinity),
    ...c(1), ...op.get(r), ...op.f64x2Add,
    ...op.get(r2), ...lin(c2, c3), ...op.f64x2Mul, ...op.f64x2Add,
    ...op.get(r4), ...lin(c4, c5), ...op.get(r2), ...lin(c6, c7), ...op.f64x2Mul, ...op.f64x2Add, ...op.f64x2Mul, ...op.f64x2Add,
    ...op.get(r8), ...lin(c8, c9), ...op.get(r2), ...lin(c10, c11), ...op.f64x2Mul, ...op.f64x2Add,
    ...op.get(r4), ...lin(c12, c13), ...op.f64x2Mul, ...op.f64x2Add, ...op.f64x2Mul, ...op.f64x2Add,
    ...op.get(k), ...op.i64x2Const(1023), ...op.i64x2Add, ...op.i32(52), ...op.i64x2Shl, ...op.f64x2Mul,
    ...op.get(s), ...c(EXP_MAX), ...op.f64x2Gt, ...op.v128Bitselect,
    // ... and 0 where s < EXP_MIN.
    ...op.get(s), ...c(EXP_MIN), ...op.f64x2Lt, ...op.v128AndNot,
  ];
}

/**
 * theta32 (`float32Theta`: theta_j clamped to +-FLOAT32_MAX, rounded to float32, zero-padded to
 * 4 ceil(d / 4)) at byte `at` of the scratch (param 6), from theta (param 1).
 */
function float32ThetaPrologue(d: number, at: number): number[][] {
  const [TH, S] = [1, 6];
  const code: number[][] = [[...op.get(S), ...op.v128Zero, ...op.v128Store(at + 16 * (Math.ceil(d / 4) - 1))]];
  for (let j = 0; j < d; j++) {
    code.push([
      ...op.get(S), ...op.get(TH), ...op.f64Load(8 * j), ...op.f64Const(FLOAT32_MAX), ...op.f64Min, ...op.f64Const(-FLOAT32_MAX), ...op.f64Max,
      ...op.f32DemoteF64, ...op.f32Store(at + 4 * j),
    ]);
  }
  return code;
}

/**
 * `float32LogisticDerivatives` for four rows, left on the stack as f32x4: the labels at local `p`
 * (four float64, narrowed), the float32 margins at `sp` (an f32x4); `exp32` operation for operation.
 * `yv`, `sv`: v128 locals; `tmp`: five.
 */
function float32Derivatives(p: number, sp: number, yv: number, sv: number, tmp: readonly number[]): number[] {
  const [sc, k, n, r, r2] = tmp;
  const c = op.f32x4Const;
  const [c2, c3, c4, c5, c6] = EXP32.taylor;
  return [
    ...op.get(p), ...op.v128Load(), ...op.f32x4DemoteF64x2Zero, ...op.get(p), ...op.v128Load(16), ...op.f32x4DemoteF64x2Zero,
    ...op.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]), ...op.tee(yv),
    ...op.get(sp), ...op.v128Load(), ...op.f32x4Mul, ...op.tee(sv),
    ...c(EXP32.min), ...op.f32x4Pmax, ...c(EXP32.max), ...op.f32x4Pmin, ...op.set(sc),
    ...op.get(sc), ...c(EXP32.log2e), ...op.f32x4Mul, ...c(EXP32.shifter), ...op.f32x4Add, ...op.tee(k),
    ...c(EXP32.shifter), ...op.f32x4Sub, ...op.set(n),
    ...op.get(sc), ...op.get(n), ...c(EXP32.c1), ...op.f32x4Mul, ...op.f32x4Sub, ...op.get(n), ...c(EXP32.c2), ...op.f32x4Mul, ...op.f32x4Sub, ...op.set(r),
    ...op.get(r), ...op.get(r), ...op.f32x4Mul, ...op.set(r2),
    // -y / (1 + e), e = Infinity where s > max (bitselect's first operand), else p 2^n.
    ...op.get(yv), ...op.f32x4Neg, ...c(1),
    ...c(Infinity),
    ...c(1), ...op.get(r), ...op.f32x4Add,
    ...op.get(r2), ...c(c2), ...c(c3), ...op.get(r), ...op.f32x4Mul, ...op.f32x4Add, ...op.f32x4Mul, ...op.f32x4Add,
    ...op.get(r2), ...op.get(r2), ...op.f32x4Mul,
    ...c(c4), ...c(c5), ...op.get(r), ...op.f32x4Mul, ...op.f32x4Add, ...op.get(r2), ...c(c6), ...op.f32x4Mul, ...op.f32x4Add,
    ...op.f32x4Mul, ...op.f32x4Add,
    ...op.get(k), ...op.i32x4Const(127), ...op.i32x4Add, ...op.i32(23), ...op.i32x4Shl, ...op.f32x4Mul,
    ...op.get(sv), ...c(EXP32.max), ...op.f32x4Gt, ...op.v128Bitselect,
    ...op.f32x4Add, ...op.f32x4Div,
  ];
}

/** The last `rest` (1-3) float32 elements of a row at local p + off into an f32x4, the other lanes 0. */
function float32TailLoad(p: number, rest: number, off: number): number[] {
  return rest === 1 ? [...op.get(p), ...op.v128Load32Zero(off)]
    : rest === 2 ? [...op.get(p), ...op.v128Load64Zero(off)]
      : [...op.get(p), ...op.get(p), ...op.v128Load64Zero(off), ...op.v128Load32Lane(off + 8, 2)];
}

/**
 * The fused pass for rows of d elements stored in `precision` (see the module comment); `fused`: the
 * relaxed-SIMD variant; `fixed` (float32 rows only): the fixed-point update of `fixed-point.ts`
 * instead of the float64 one (two more parameters, sigma and unit).
 */
export function logisticStepFunction(precision: Precision, d: number, fused = false, fixed = false): WasmFunction {
  const [X, TH, Y, T, COUNT, OUT, S, SIGMA, UNIT] = [0, 1, 2, 3, 4, 5, 6, 7, 8];
  if (fixed && precision !== 'float32') throw new Error('the fixed-point update is for float32 rows');
  const params = fixed ? [I32, I32, I32, I32, I32, I32, I32, F64, F64] : [I32, I32, I32, I32, I32, I32, I32];
  const locals: number[] = [];
  const local = (type: number): number => params.length + locals.push(type) - 1;
  const [k, r0, sp, bend, p, pend, tp] = Array.from({ length: 7 }, () => local(I32));
  const [a, cnt, w] = Array.from({ length: 3 }, () => local(V128));
  const accs = Array.from({ length: 4 }, () => local(V128));
  const cs = Array.from({ length: 4 }, () => local(V128));
  const lanes = [0, 1].map(() => ({ y: local(V128), t: local(V128), s: local(V128), g: local(V128), tmp: Array.from({ length: 7 }, () => local(V128)) }));
  const B = fusedBlockRows(precision);
  const L = loads(precision);
  const rowBytes = d * L.bytes;
  const pairs = Math.floor(d / 2);
  // float32 rows: float32 margins from theta32 (`float32-logistic.ts`), kept after the block scratch.
  const f32 = precision === 'float32';
  const quads = Math.floor(d / 4);
  const theta32 = 8 * B;
  const madd = op.f64x2RelaxedMadd;
  const [sq, qp] = [local(I32), local(I32)];
  const [sig, unitv, magic, fmin, fmax, tmin, cnt32] = Array.from({ length: 7 }, () => local(V128));
  const fx = fixedScratchOffsets(d);

  /** acc <- acc + x_pair theta_pair. */
  const marginTerm = (acc: number, r: number) => (fused
    ? [...L.pair(op.get(p), r * rowBytes), ...op.get(a), ...op.get(acc), ...madd, ...op.set(acc)]
    : [...op.get(acc), ...L.pair(op.get(p), r * rowBytes), ...op.get(a), ...op.f64x2Mul, ...op.f64x2Add, ...op.set(acc)]);
  /** acc's lane 0 (the even half) <- + x_{d-1} theta_{d-1}, for odd d (a scalar multiply and add, as the scalar kernel). */
  const tailTerm = (acc: number, r: number) => [
    ...op.get(acc), ...op.get(acc), ...op.f64x2ExtractLane(0),
    ...L.scalar(op.get(p), r * rowBytes), ...op.get(a), ...op.f64x2ExtractLane(0), ...op.f64Mul, ...op.f64Add,
    ...op.f64x2ReplaceLane(0), ...op.set(acc),
  ];
  const margins: number[][] = [
    op.get(X), op.set(r0), op.get(S), op.set(sp), op.get(S), op.i32(8 * B), op.i32Add, op.set(bend),
    op.loop,
    ...accs.map((acc) => [...op.v128Zero, ...op.set(acc)]),
    op.get(r0), op.set(p), op.get(TH), op.set(tp),
  ];
  if (f32) {
    // Four float32 lanes per row: lane l sums j = l, l + 4, ...; the last quad's missing elements load as 0.
    const quadTerm = (acc: number, load: number[]) => (fused && fixed
      ? [...load, ...op.get(a), ...op.get(acc), ...op.f32x4RelaxedMadd, ...op.set(acc)]
      : [...op.get(acc), ...load, ...op.get(a), ...op.f32x4Mul, ...op.f32x4Add, ...op.set(acc)]);
    margins.push(op.get(S), op.i32(theta32), op.i32Add, op.set(tp));
    if (quads > 0) {
      margins.push(
        op.get(r0), op.i32(16 * quads), op.i32Add, op.set(pend),
        op.loop, op.get(tp), op.v128Load(), op.set(a),
        ...accs.map((acc, r) => quadTerm(acc, [...op.get(p), ...op.v128Load(r * rowBytes)])),
        inc(p, op.i32(16)), inc(tp, op.i32(16)),
        op.get(p), op.get(pend), op.i32LtS, op.brIf(0), op.end,
      );
    }
    const rest = d % 4;
    if (rest > 0) {
      const tailLoad = (off: number) => float32TailLoad(p, rest, off);
      margins.push(op.get(tp), op.v128Load(), op.set(a), ...accs.map((acc, r) => quadTerm(acc, tailLoad(r * rowBytes))));
    }
    // z_r = (a_r0 + a_r2) + (a_r1 + a_r3) for the four rows, as float32 lanes, then widened: two per store.
    const halves = (x: number, y: number) => [
      ...op.get(x), ...op.get(y), ...op.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]),
      ...op.get(x), ...op.get(y), ...op.shuffle([8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31]), ...op.f32x4Add,
    ];
    margins.push(
      halves(accs[0], accs[1]), op.set(accs[0]), halves(accs[2], accs[3]), op.set(accs[2]),
      op.get(accs[0]), op.get(accs[2]), op.shuffle([0, 1, 2, 3, 8, 9, 10, 11, 16, 17, 18, 19, 24, 25, 26, 27]),
      op.get(accs[0]), op.get(accs[2]), op.shuffle([4, 5, 6, 7, 12, 13, 14, 15, 20, 21, 22, 23, 28, 29, 30, 31]), op.f32x4Add, op.set(w),
      op.get(sp), op.get(w), op.v128Store(),
    );
  } else if (pairs > 0) {
    margins.push(
      op.get(r0), op.i32(2 * pairs * L.bytes), op.i32Add, op.set(pend),
      op.loop, op.get(tp), op.v128Load(), op.set(a),
      ...accs.map((acc, r) => marginTerm(acc, r)),
      inc(p, op.i32(2 * L.bytes)), inc(tp, op.i32(16)),
      op.get(p), op.get(pend), op.i32LtS, op.brIf(0), op.end,
    );
  }
  if (!f32 && d % 2 === 1) margins.push(op.get(tp), op.f64Load(), op.f64x2Splat, op.set(a), ...accs.map((acc, r) => tailTerm(acc, r)));
  // (E + O of row 0, of row 1) and (of row 2, of row 3) into the block scratch.
  if (!f32) {
    margins.push(
      op.get(sp), op.get(accs[0]), op.get(accs[1]), op.shuffle(LOW_LANES), op.get(accs[0]), op.get(accs[1]), op.shuffle(HIGH_LANES), op.f64x2Add, op.v128Store(),
      op.get(sp), op.get(accs[2]), op.get(accs[3]), op.shuffle(LOW_LANES), op.get(accs[2]), op.get(accs[3]), op.shuffle(HIGH_LANES), op.f64x2Add, op.v128Store(16),
    );
  }
  margins.push(
    inc(r0, op.i32(4 * rowBytes)), inc(sp, op.i32(32)),
    op.get(sp), op.get(bend), op.i32LtS, op.brIf(0), op.end,
  );

  // Two pairs of rows per iteration (two independent exps: the latency of one is hidden by the other).
  const derivatives: number[][] = [op.get(S), op.set(sp), op.get(Y), op.set(p), op.get(T), op.set(tp), op.loop];
  if (f32) {
    derivatives.push(float32Derivatives(p, sp, lanes[0].y, lanes[0].s, lanes[0].tmp), op.set(w));
  }
  if (fixed) {
    // All in float32 lanes, four rows (`fixedPointCoefficients`, `fixedPointRowScale`): t32 = fl32(t) capped
    // at FLT_MAX, 0 where below 2^-126; c clamped to [-t32, t32] (a NaN c to +0, counted); s = fl32(c sigma32)
    // clamped to +-FLT_MAX, into the block's row scales.
    const [tv, nanm] = [lanes[0].t, lanes[0].g];
    derivatives.push(
      op.get(tp), op.v128Load(), op.f32x4DemoteF64x2Zero, op.get(tp), op.v128Load(16), op.f32x4DemoteF64x2Zero,
      op.shuffle([0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23]), op.tee(tv), op.get(fmax), op.f32x4Pmin,
      op.get(tv), op.get(tmin), op.f32x4Ge, op.v128And, op.set(tv),
      op.get(w), op.get(w), op.f32x4Ne, op.set(nanm),
      op.get(cnt32), op.get(w), op.get(tv), op.f32x4Gt, op.i32x4Sub, op.get(w), op.get(tv), op.f32x4Neg, op.f32x4Lt, op.i32x4Sub,
      op.get(nanm), op.i32x4Sub, op.set(cnt32),
      op.get(sq), op.get(w), op.get(tv), op.f32x4Neg, op.f32x4Pmax, op.get(tv), op.f32x4Pmin, op.get(nanm), op.v128AndNot,
      op.get(sig), op.f32x4Mul, op.get(fmin), op.f32x4Pmax, op.get(fmax), op.f32x4Pmin, op.v128Store(), inc(sq, op.i32(16)),
    );
  } else if (f32) {
    derivatives.push(op.get(w), op.f64x2PromoteLowF32x4, op.set(lanes[0].g));
    derivatives.push(op.get(w), op.get(w), op.shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]), op.f64x2PromoteLowF32x4, op.set(lanes[1].g));
  } else {
    lanes.forEach((l, e) => derivatives.push(op.get(p), op.v128Load(16 * e), op.tee(l.y), op.get(sp), op.v128Load(16 * e), op.f64x2Mul, op.set(l.s)));
    lanes.forEach((l) => derivatives.push(op.get(l.y), op.f64x2Neg, op.f64x2Const(1), simdExp(l.s, l.tmp), op.f64x2Add, op.f64x2Div, op.set(l.g)));
  }
  if (!fixed) lanes.forEach((l, e) => derivatives.push(
    op.get(tp), op.v128Load(16 * e), op.set(l.t),
    // The lanes where g is NaN (a free temporary: the exp is done).
    op.get(l.g), op.get(l.g), op.f64x2Ne, op.set(l.tmp[0]),
    op.get(cnt), op.get(l.g), op.get(l.t), op.f64x2Gt, op.i64x2Sub, op.get(l.g), op.get(l.t), op.f64x2Neg, op.f64x2Lt, op.i64x2Sub,
    op.get(l.tmp[0]), op.i64x2Sub, op.set(cnt),
    op.get(sp), op.get(l.g), op.get(l.t), op.f64x2Neg, op.f64x2Pmax, op.get(l.t), op.f64x2Pmin, op.get(l.tmp[0]), op.v128AndNot, op.v128Store(16 * e),
  ));
  derivatives.push(inc(sp, op.i32(32)), inc(p, op.i32(32)), inc(tp, op.i32(32)), op.get(sp), op.get(bend), op.i32LtS, op.brIf(0), op.end);
  if (fixed) derivatives.unshift(op.get(S), op.i32(fx.s), op.i32Add, op.set(sq));

  /** G = ((c0 x0 + c1 x1) + c2 x2) + c3 x3 for the coordinate pair at p (rows rowBytes apart). */
  const term = (r: number) => [...op.get(cs[r]), ...L.pair(op.get(p), r * rowBytes), ...op.f64x2Mul];
  const groupSum = fused
    ? [...term(0), ...op.set(w), ...[1, 2, 3].flatMap((r) => [...op.get(cs[r]), ...L.pair(op.get(p), r * rowBytes), ...op.get(w), ...madd, ...op.set(w)]), ...op.get(w)]
    : [...term(0), ...term(1), ...op.f64x2Add, ...term(2), ...op.f64x2Add, ...term(3), ...op.f64x2Add];
  const scalarTerm = (r: number) => [...op.get(cs[r]), ...op.f64x2ExtractLane(0), ...L.scalar(op.get(p), r * rowBytes), ...op.f64Mul];
  const fixedUpdate = (): number[][] => {
    // Per quad of coordinates: the 16 rows' fl32(fl32(x s) + M), whose bits are bits(M) + q, summed
    // in int32 lanes (wrapping: exact modulo 2^32), less 16 bits(M): the exact sum of q (|sum| <= 2^25);
    // then added to Q in float64 (exact): Q_j..j+3 += the four lanes.
    const q = (load: (off: number) => number[]) => [
      ...Array.from({ length: B }, (_, r) => [
        ...load(r * rowBytes), ...op.get(S), ...op.v128Load32Splat(fx.s + 4 * r), ...(fused ? [...op.get(magic), ...op.f32x4RelaxedMadd] : [...op.f32x4Mul, ...op.get(magic), ...op.f32x4Add]),
        ...(r > 0 ? op.i32x4Add : []),
      ]).flat(),
      ...op.i32x4Const(B * FIXED_MAGIC_BITS), ...op.i32x4Sub,
    ];
    const intoQ = [
      ...op.set(w),
      ...op.get(qp), ...op.get(qp), ...op.v128Load(), ...op.get(w), ...op.f64x2ConvertLowI32x4S, ...op.f64x2Add, ...op.v128Store(),
      ...op.get(qp), ...op.get(qp), ...op.v128Load(16), ...op.get(w), ...op.get(w), ...op.shuffle([8, 9, 10, 11, 12, 13, 14, 15, 8, 9, 10, 11, 12, 13, 14, 15]),
      ...op.f64x2ConvertLowI32x4S, ...op.f64x2Add, ...op.v128Store(16),
    ];
    const code: number[][] = [op.get(X), op.set(p), op.get(S), op.i32(fx.q), op.i32Add, op.set(qp)];
    if (quads > 0) {
      code.push(
        op.get(X), op.i32(16 * quads), op.i32Add, op.set(pend),
        op.loop, q((off) => [...op.get(p), ...op.v128Load(off)]), intoQ,
        inc(p, op.i32(16)), inc(qp, op.i32(32)),
        op.get(p), op.get(pend), op.i32LtS, op.brIf(0), op.end,
      );
    }
    const rest = d % 4;
    if (rest > 0) {
      const tailLoad = (off: number) => float32TailLoad(p, rest, off);
      code.push(q(tailLoad), intoQ);
    }
    return code;
  };
  /** Every FIXED_FLUSH_ROWS rows from the call's first: out_j <- out_j + Q_j unit, Q_j <- 0 (`fixedPointFlush`). */
  const flush = (): number[][] => {
    const code: number[][] = [op.get(k), op.i32(FIXED_FLUSH_ROWS - 1), op.i32And, op.i32Eqz, op.if, op.get(OUT), op.set(tp), op.get(S), op.i32(fx.q), op.i32Add, op.set(qp)];
    if (pairs > 0) {
      code.push(
        op.get(OUT), op.i32(16 * pairs), op.i32Add, op.set(pend),
        op.loop,
        op.get(tp), op.get(tp), op.v128Load(), op.get(qp), op.v128Load(), op.get(unitv), op.f64x2Mul, op.f64x2Add, op.v128Store(),
        op.get(qp), op.v128Zero, op.v128Store(),
        inc(tp, op.i32(16)), inc(qp, op.i32(16)),
        op.get(tp), op.get(pend), op.i32LtS, op.brIf(0), op.end,
      );
    }
    if (d % 2 === 1) {
      code.push(op.get(tp), op.get(tp), op.f64Load(), op.get(qp), op.f64Load(), op.get(UNIT), op.f64Mul, op.f64Add, op.f64Store(), op.get(qp), op.f64Zero, op.f64Store());
    }
    code.push(op.end);
    return code;
  };
  const qBytes = 32 * Math.ceil(d / 4);
  const fixedPrologue: number[][] = fixed
    ? [
      op.get(SIGMA), op.f32DemoteF64, op.f32x4Splat, op.set(sig), op.get(UNIT), op.f64x2Splat, op.set(unitv), op.f32x4Const(FIXED_MAGIC), op.set(magic),
      op.f32x4Const(-FLOAT32_MAX), op.set(fmin), op.f32x4Const(FLOAT32_MAX), op.set(fmax), op.f32x4Const(FLOAT32_MIN_NORMAL), op.set(tmin),
      ...Array.from({ length: qBytes / 16 }, (_, i) => [...op.get(S), ...op.v128Zero, ...op.v128Store(fx.q + 16 * i)]),
    ]
    : [];

  const update: number[][] = fixed ? fixedUpdate() : [
    op.get(X), op.set(r0), op.get(S), op.set(sp),
    op.loop,
    ...cs.map((c, r) => [...op.get(sp), ...op.v128Load64Splat(8 * r), ...op.set(c)]),
    op.get(r0), op.set(p), op.get(OUT), op.set(tp),
  ];
  if (!fixed && pairs > 0) {
    update.push(
      op.get(r0), op.i32(2 * pairs * L.bytes), op.i32Add, op.set(pend),
      op.loop, op.get(tp), op.get(tp), op.v128Load(), groupSum, op.f64x2Add, op.v128Store(),
      inc(p, op.i32(2 * L.bytes)), inc(tp, op.i32(16)),
      op.get(p), op.get(pend), op.i32LtS, op.brIf(0), op.end,
    );
  }
  if (!fixed && d % 2 === 1) {
    update.push(op.get(tp), op.get(tp), op.f64Load(), scalarTerm(0), scalarTerm(1), op.f64Add, scalarTerm(2), op.f64Add, scalarTerm(3), op.f64Add, op.f64Add, op.f64Store());
  }
  if (!fixed) update.push(inc(r0, op.i32(4 * rowBytes)), inc(sp, op.i32(32)), op.get(sp), op.get(bend), op.i32LtS, op.brIf(0), op.end);

  return {
    name: 'logisticStep',
    params,
    results: [I32],
    locals,
    body: [
      ...(f32 ? float32ThetaPrologue(d, theta32) : []),
      ...fixedPrologue,
      op.v128Zero, op.set(cnt),
      op.block, op.loop,
      op.get(COUNT), op.get(k), op.i32Sub, op.i32(B), op.i32LtS, op.brIf(1),
      ...margins,
      ...derivatives,
      ...update,
      inc(X, op.i32(B * rowBytes)), inc(Y, op.i32(8 * B)), inc(T, op.i32(8 * B)), inc(k, op.i32(B)),
      ...(fixed ? flush() : []),
      op.br(0), op.end, op.end,
      op.get(cnt), op.i64x2ExtractLane(0), op.get(cnt), op.i64x2ExtractLane(1), op.i64Add, op.i32WrapI64,
      ...(fixed ? [[0, 1, 2, 3].flatMap((lane) => [...op.get(cnt32), ...op.i32x4ExtractLane(lane), ...op.i32Add])] : []),
    ],
  };
}

const modules = new Map<string, WasmModule | null>();
const instances = new WeakMap<WasmMemory, Map<string, LogisticStep | null>>();

/** A module of one function (type () -> v128) using f64x2.relaxed_madd: valid only where the engine has relaxed SIMD. */
const RELAXED_PROBE: WasmFunction = {
  name: 'probe', params: [], results: [V128], locals: [],
  body: [op.v128Zero, op.v128Zero, op.v128Zero, op.f64x2RelaxedMadd],
};

let relaxed: boolean | undefined;

/**
 * Whether this engine has WebAssembly relaxed SIMD (f64x2.relaxed_madd), detected by validating a
 * small module: Node 22 and current browsers have it; Node 20 only with
 * `--experimental-wasm-relaxed-simd`.
 */
export function relaxedSimdAvailable(): boolean {
  if (relaxed === undefined) {
    try {
      relaxed = wasmApi !== undefined && wasmApi.validate(encodeModule([RELAXED_PROBE], { shared: false, pages: 1, maxPages: 1 }));
    } catch {
      relaxed = false;
    }
  }
  return relaxed;
}

/**
 * The fused pass for rows of d elements in `precision`, bound to `memory` (a shared WebAssembly
 * memory), or null where WebAssembly SIMD is unavailable or d > FUSED_MAX_D. `variant`: 'exact'
 * (the scalar kernels' numbers bit for bit) or 'fused' (relaxed SIMD multiply-adds; null where the
 * engine has no relaxed SIMD). Built once per (d, precision, variant) per thread, instantiated
 * once per memory.
 */
export function logisticStepFor(memory: WasmMemory, d: number, precision: Precision, variant: 'exact' | 'fused' = 'exact', update: 'float64' | 'fixed' = 'float64'): LogisticStep | null {
  if (wasmApi === undefined || d > FUSED_MAX_D) return null;
  if (variant === 'fused' && !relaxedSimdAvailable()) return null;
  if (update === 'fixed' && precision !== 'float32') return null;
  const key = `${precision}:${d}:${variant}:${update}`;
  let perMemory = instances.get(memory);
  if (perMemory === undefined) instances.set(memory, (perMemory = new Map()));
  const known = perMemory.get(key);
  if (known !== undefined) return known;
  let module = modules.get(key);
  if (module === undefined) {
    module = null;
    try {
      const bytes = encodeModule([logisticStepFunction(precision, d, variant === 'fused', update === 'fixed')], { shared: true, pages: 1, maxPages: 65536 });
      if (wasmApi.validate(bytes)) module = new wasmApi.Module(bytes);
    } catch {
      module = null;
    }
    modules.set(key, module);
  }
  let step: LogisticStep | null = null;
  if (module !== null) {
    try {
      step = (new wasmApi.Instance(module, { env: { memory } }).exports as { logisticStep: LogisticStep }).logisticStep;
    } catch {
      step = null;
    }
  }
  perMemory.set(key, step);
  return step;
}
