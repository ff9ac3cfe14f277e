/**
 * @internal WebAssembly SIMD versions of the contiguous kernels of `kernels.ts` (margins without
 * norms, and the four-row coefficient update), for features stored as float64 or float32 in a
 * shared WebAssembly memory (`feature-memory.ts`). They compute the same numbers bit for bit as
 * the scalar JavaScript kernels on the same values (float32 features widened to float64, which is
 * exact), because every lane performs the scalar kernel's operations in the scalar kernel's order:
 *
 * - margins: the lanes are the even and the odd half of a row's sum (the order of `kernels.ts`:
 *   z = E + O, E = ((0 + x_0 t_0) + x_2 t_2) + ..., O likewise over odd j, an odd d's last term
 *   added to E's lane), one accumulator per row, four rows per sweep of theta; two rows' halves are
 *   brought into lanes by a shuffle and added.
 * - update: the lanes are two COORDINATES j, j+1 of out; each lane computes
 *   out_j + (((c0 x0_j + c1 x1_j) + c2 x2_j) + c3 x3_j), then remainder rows out_j + c_k x_kj
 *   (skipped when c_k = 0), exactly as `accumulateContiguous`.
 *
 * WebAssembly's f64 add and mul are IEEE-754 round-to-nearest (no fused multiply-add), like
 * JavaScript's. The module is encoded by `wasm-binary.ts` from the instruction lists below; no
 * prebuilt binary. Also: stream sums of float64 and float32 arrays, the memory-speed yardstick of
 * `bench/train.ts`.
 */
import { encodeModule, F64, HIGH_LANES, I32, LOW_LANES, op, V128, wasmApi, type WasmFunction, type WasmMemory, type WasmModule } from './wasm-binary.js';

export type Precision = 'float64' | 'float32';

/** The exports of the kernel module; pointers are byte offsets into the shared memory. */
export interface WasmKernelExports {
  /** z[k] = x_k . theta for `count` rows from `x` (row stride d elements), in the order of `kernels.ts` (z = E + O). */
  margins64(x: number, d: number, theta: number, count: number, z: number): void;
  margins32(x: number, d: number, theta: number, count: number, z: number): void;
  /** out += sum_k c[k] x_k over `count` rows from `x`, four rows at a time (see the module comment). */
  accumulate64(x: number, d: number, count: number, c: number, out: number): void;
  accumulate32(x: number, d: number, count: number, c: number, out: number): void;
  /** c[k] <- clamp(c[k], -t[k], t[k]) for k < count, a NaN c[k] to +0; returns how many were clipped (as `clampCached`). */
  clamp(c: number, t: number, count: number): number;
  /** Sum of `count` float64 (count a multiple of 8) / float32 (a multiple of 16) values: a memory-speed probe. */
  streamSum64(p: number, count: number): number;
  streamSum32(p: number, count: number): number;
}

/** @internal Loads of one element or of two consecutive elements as float64 lanes, for a storage precision. */
export function loads(precision: Precision) {
  const bytes = precision === 'float64' ? 8 : 4;
  return {
    bytes,
    pair: (ptr: number[], offset = 0): number[] => (precision === 'float64' ? [...ptr, ...op.v128Load(offset)] : [...ptr, ...op.v128Load64Zero(offset), ...op.f64x2PromoteLowF32x4]),
    scalar: (ptr: number[], offset = 0): number[] => (precision === 'float64' ? [...ptr, ...op.f64Load(offset)] : [...ptr, ...op.f32Load(offset), ...op.f64PromoteF32]),
  };
}

/** @internal */
export const add = (a: number, b: number): number[] => [...op.get(a), ...op.get(b), ...op.i32Add];
/** @internal */
export const inc = (local: number, by: number[]): number[] => [...op.get(local), ...by, ...op.i32Add, ...op.set(local)];

/**
 * The prologue of the row-group kernels (x param 0, d param 1): rb, rb2, rb3 <- the byte offsets
 * of rows 1, 2, 3 of a group (d, 2d, 3d elements of `bytes` each), o <- x.
 */
function rowStrides(bytes: number, rb: number, rb2: number, rb3: number, o: number): number[] {
  return [
    ...op.get(1), ...op.i32(bytes), ...op.i32Mul, ...op.set(rb),
    ...op.get(rb), ...op.i32(1), ...op.i32Shl, ...op.set(rb2),
    ...op.get(rb2), ...op.get(rb), ...op.i32Add, ...op.set(rb3),
    ...op.get(0), ...op.set(o),
  ];
}

function marginsFunction(precision: Precision): WasmFunction {
  // params: x 0, d 1, th 2, count 3, z 4; locals:
  const [k, o, j, rb, p, tp, rb2, rb3] = [5, 6, 7, 8, 9, 10, 11, 12];
  const accs = [13, 14, 15, 16];
  const tv = 17;
  const [touch, last] = [18, 19];
  const L = loads(precision);
  const rows = [op.get(p), add(p, rb), add(p, rb2), add(p, rb3)];
  /** acc <- acc + (x at ptr) * theta pair (lanes: the even and the odd half of the row's sum). */
  const pairTerm = (acc: number, ptr: number[]) => [...op.get(acc), ...L.pair(ptr), ...op.get(tv), ...op.f64x2Mul, ...op.f64x2Add, ...op.set(acc)];
  /** acc's lane 0 (the even half) <- + x_{d-1} theta_{d-1}, for odd d. */
  const tailTerm = (acc: number, ptr: number[]) => [
    ...op.get(acc), ...op.get(acc), ...op.f64x2ExtractLane(0), ...L.scalar(ptr), ...op.get(tp), ...op.f64Load(), ...op.f64Mul, ...op.f64Add, ...op.f64x2ReplaceLane(0), ...op.set(acc),
  ];
  /** (E_a + O_a, E_b + O_b) for the rows of accumulators a, b. */
  const reduce = (a: number, b: number) => [...op.get(a), ...op.get(b), ...op.shuffle(LOW_LANES), ...op.get(a), ...op.get(b), ...op.shuffle(HIGH_LANES), ...op.f64x2Add];
  return {
    name: `margins${precision === 'float64' ? 64 : 32}`,
    params: [I32, I32, I32, I32, I32],
    results: [],
    locals: [I32, I32, I32, I32, I32, I32, I32, I32, V128, V128, V128, V128, V128, I32, I32],
    body: [
      rowStrides(L.bytes, rb, rb2, rb3, o),
      // last: where the last group of four rows starts (the touches below never pass its end).
      op.get(0), op.get(3), op.i32(4), op.i32Sub, op.get(rb), op.i32Mul, op.i32Add, op.set(last),
      // Groups of four rows, one accumulator each.
      op.block, op.loop,
      op.get(3), op.get(k), op.i32Sub, op.i32(4), op.i32LtS, op.brIf(1),
      ...accs.map((acc) => [...op.v128Zero, ...op.set(acc)]),
      op.i32(0), op.set(j), op.get(o), op.set(p), op.get(2), op.set(tp),
      // touch <- the next group's start (or the last group's): each sweep of theta below reads one
      // 4-byte word per 8 elements ahead, the next four rows in order, so that they stream in while
      // these are summed (the four rows' interleaved reads alone ran at a third of the memory's
      // speed on Adult's 146 columns, `bench/kernel.ts`). The words read are dropped.
      op.get(o), op.get(rb), op.i32(2), op.i32Shl, op.i32Add, op.tee(touch), op.get(last), op.get(touch), op.get(last), op.i32LtS, op.select, op.set(touch),
      op.block, op.loop,
      op.get(1), op.get(j), op.i32Sub, op.i32(2), op.i32LtS, op.brIf(1),
      op.get(tp), op.v128Load(), op.set(tv),
      op.get(touch), op.i32Load(), op.drop, inc(touch, op.i32(8 * L.bytes)),
      ...accs.map((acc, r) => pairTerm(acc, rows[r])),
      inc(p, op.i32(2 * L.bytes)), inc(tp, op.i32(16)), inc(j, op.i32(2)),
      op.br(0), op.end, op.end,
      op.get(j), op.get(1), op.i32LtS, op.if,
      ...accs.map((acc, r) => tailTerm(acc, rows[r])),
      op.end,
      op.get(4), op.get(k), op.i32(3), op.i32Shl, op.i32Add, op.tee(p), reduce(accs[0], accs[1]), op.v128Store(),
      op.get(p), reduce(accs[2], accs[3]), op.v128Store(16),
      inc(o, op.get(rb)), inc(o, op.get(rb3)), inc(k, op.i32(4)),
      op.br(0), op.end, op.end,
      // Remainder rows, one at a time.
      op.block, op.loop,
      op.get(k), op.get(3), op.i32GeS, op.brIf(1),
      op.v128Zero, op.set(accs[0]), op.i32(0), op.set(j), op.get(o), op.set(p), op.get(2), op.set(tp),
      op.block, op.loop,
      op.get(1), op.get(j), op.i32Sub, op.i32(2), op.i32LtS, op.brIf(1),
      op.get(tp), op.v128Load(), op.set(tv),
      pairTerm(accs[0], op.get(p)),
      inc(p, op.i32(2 * L.bytes)), inc(tp, op.i32(16)), inc(j, op.i32(2)),
      op.br(0), op.end, op.end,
      op.get(j), op.get(1), op.i32LtS, op.if, tailTerm(accs[0], op.get(p)), op.end,
      op.get(4), op.get(k), op.i32(3), op.i32Shl, op.i32Add,
      op.get(accs[0]), op.f64x2ExtractLane(0), op.get(accs[0]), op.f64x2ExtractLane(1), op.f64Add, op.f64Store(),
      inc(o, op.get(rb)), inc(k, op.i32(1)),
      op.br(0), op.end, op.end,
    ],
  };
}

function accumulateFunction(precision: Precision): WasmFunction {
  // params: x 0, d 1, count 2, c 3, out 4; locals:
  const [k, o, j, rb, p, q, c0, c1, c2, c3, v, ck, rb2, rb3, pc, c4, c5, c6, c7, w, p4] = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25];
  const L = loads(precision);
  const term = (coef: number, ptr: number[]) => [...op.get(coef), ...L.pair(ptr), ...op.f64x2Mul];
  const scalarTerm = (coef: number, ptr: number[]) => [...op.get(coef), ...op.f64x2ExtractLane(0), ...L.scalar(ptr), ...op.f64Mul];
  /** The group of four rows from `base` with coefficients cs, as ((t0 + t1) + t2) + t3 (pairs of coordinates). */
  const group = (cs: number[], base: number) => [
    ...term(cs[0], op.get(base)),
    ...term(cs[1], add(base, rb)), ...op.f64x2Add,
    ...term(cs[2], add(base, rb2)), ...op.f64x2Add,
    ...term(cs[3], add(base, rb3)), ...op.f64x2Add,
  ];
  const scalarGroup = (cs: number[], base: number) => [
    ...scalarTerm(cs[0], op.get(base)),
    ...scalarTerm(cs[1], add(base, rb)), ...op.f64Add,
    ...scalarTerm(cs[2], add(base, rb2)), ...op.f64Add,
    ...scalarTerm(cs[3], add(base, rb3)), ...op.f64Add,
  ];
  const splats = (cs: number[], offset: number) => cs.flatMap((c, i) => [...op.get(pc), ...op.f64Load(offset + 8 * i), ...op.f64x2Splat, ...op.set(c)]);
  return {
    name: `accumulate${precision === 'float64' ? 64 : 32}`,
    params: [I32, I32, I32, I32, I32],
    results: [],
    locals: [I32, I32, I32, I32, I32, I32, V128, V128, V128, V128, V128, F64, I32, I32, I32, V128, V128, V128, V128, V128, I32],
    body: [
      rowStrides(L.bytes, rb, rb2, rb3, o),
      // Two groups of four rows per sweep of out: out_j = (out_j + G1_j) + G2_j, the order of two
      // consecutive groups of the scalar kernel, with out_j loaded and stored once.
      op.block, op.loop,
      op.get(2), op.get(k), op.i32Sub, op.i32(8), op.i32LtS, op.brIf(1),
      op.get(3), op.get(k), op.i32(3), op.i32Shl, op.i32Add, op.set(pc),
      splats([c0, c1, c2, c3], 0), splats([c4, c5, c6, c7], 32),
      op.i32(0), op.set(j), op.get(o), op.set(p), op.get(4), op.set(q),
      op.get(o), op.get(rb2), op.i32(1), op.i32Shl, op.i32Add, op.set(p4),
      op.block, op.loop,
      op.get(1), op.get(j), op.i32Sub, op.i32(2), op.i32LtS, op.brIf(1),
      group([c0, c1, c2, c3], p), op.set(v),
      group([c4, c5, c6, c7], p4), op.set(w),
      op.get(q), op.get(q), op.v128Load(), op.get(v), op.f64x2Add, op.get(w), op.f64x2Add, op.v128Store(),
      inc(p, op.i32(2 * L.bytes)), inc(p4, op.i32(2 * L.bytes)), inc(q, op.i32(16)), inc(j, op.i32(2)),
      op.br(0), op.end, op.end,
      op.get(j), op.get(1), op.i32LtS, op.if,
      op.get(q), op.get(q), op.f64Load(), scalarGroup([c0, c1, c2, c3], p), op.f64Add, scalarGroup([c4, c5, c6, c7], p4), op.f64Add, op.f64Store(),
      op.end,
      inc(o, op.get(rb2)), inc(o, op.get(rb2)), inc(o, op.get(rb2)), inc(o, op.get(rb2)), inc(k, op.i32(8)),
      op.br(0), op.end, op.end,
      op.block, op.loop,
      op.get(2), op.get(k), op.i32Sub, op.i32(4), op.i32LtS, op.brIf(1),
      op.get(3), op.get(k), op.i32(3), op.i32Shl, op.i32Add, op.set(pc),
      op.get(pc), op.f64Load(0), op.f64x2Splat, op.set(c0),
      op.get(pc), op.f64Load(8), op.f64x2Splat, op.set(c1),
      op.get(pc), op.f64Load(16), op.f64x2Splat, op.set(c2),
      op.get(pc), op.f64Load(24), op.f64x2Splat, op.set(c3),
      op.i32(0), op.set(j), op.get(o), op.set(p), op.get(4), op.set(q),
      op.block, op.loop,
      op.get(1), op.get(j), op.i32Sub, op.i32(2), op.i32LtS, op.brIf(1),
      term(c0, op.get(p)),
      term(c1, add(p, rb)), op.f64x2Add,
      term(c2, add(p, rb2)), op.f64x2Add,
      term(c3, add(p, rb3)), op.f64x2Add, op.set(v),
      op.get(q), op.get(q), op.v128Load(), op.get(v), op.f64x2Add, op.v128Store(),
      inc(p, op.i32(2 * L.bytes)), inc(q, op.i32(16)), inc(j, op.i32(2)),
      op.br(0), op.end, op.end,
      op.get(j), op.get(1), op.i32LtS, op.if,
      op.get(q), op.get(q), op.f64Load(),
      scalarTerm(c0, op.get(p)),
      scalarTerm(c1, add(p, rb)), op.f64Add,
      scalarTerm(c2, add(p, rb2)), op.f64Add,
      scalarTerm(c3, add(p, rb3)), op.f64Add,
      op.f64Add, op.f64Store(),
      op.end,
      inc(o, op.get(rb)), inc(o, op.get(rb3)), inc(k, op.i32(4)),
      op.br(0), op.end, op.end,
      // Remainder rows, one at a time, skipped when c_k = 0 (as the scalar kernel).
      op.block, op.loop,
      op.get(k), op.get(2), op.i32GeS, op.brIf(1),
      op.get(3), op.get(k), op.i32(3), op.i32Shl, op.i32Add, op.f64Load(), op.tee(ck), op.f64Zero, op.f64Ne, op.if,
      op.i32(0), op.set(j), op.get(o), op.set(p), op.get(4), op.set(q),
      op.block, op.loop,
      op.get(j), op.get(1), op.i32GeS, op.brIf(1),
      op.get(q), op.get(q), op.f64Load(), op.get(ck), L.scalar(op.get(p)), op.f64Mul, op.f64Add, op.f64Store(),
      inc(p, op.i32(L.bytes)), inc(q, op.i32(8)), inc(j, op.i32(1)),
      op.br(0), op.end, op.end,
      op.end,
      inc(o, op.get(rb)), inc(k, op.i32(1)),
      op.br(0), op.end, op.end,
    ],
  };
}

/**
 * clamp(c, t, count): c[k] <- clamp(c[k], -t[k], t[k]), returning how many were clipped: the
 * scalar `clampCached` bit for bit. Per lane m = pmax(c, -t) = (c < -t ? -t : c) and
 * pmin(m, t) = (t < m ? t : m), the scalar branches (t >= 0; signed zeros as there); then
 * v128.andnot with the mask c != c, which keeps m where c is a number and makes a NaN c +0 (as the
 * scalar `c !== c` branch; counted as clipped: c > t, c < -t and c != c are disjoint masks).
 */
function clampFunction(): WasmFunction {
  // params: c 0, t 1, count 2; locals: k 3, cnt 4 (v128 of i64 lane counts), cv 5, tv 6, nt 7, ck 8 (f64), tk 9 (f64), n 10 (i32), nan 11 (v128: c != c)
  const [k, cnt, cv, tv, nt, ck, tk, n, nan] = [3, 4, 5, 6, 7, 8, 9, 10, 11];
  return {
    name: 'clamp',
    params: [I32, I32, I32],
    results: [I32],
    locals: [I32, V128, V128, V128, V128, F64, F64, I32, V128],
    body: [
      op.v128Zero, op.set(cnt),
      op.block, op.loop,
      op.get(2), op.get(k), op.i32Sub, op.i32(2), op.i32LtS, op.brIf(1),
      op.get(0), op.v128Load(), op.tee(cv), op.get(cv), op.f64x2Ne, op.set(nan), op.get(1), op.v128Load(), op.tee(tv), op.f64x2Neg, op.set(nt),
      op.get(cnt), op.get(cv), op.get(tv), op.f64x2Gt, op.i64x2Sub, op.get(cv), op.get(nt), op.f64x2Lt, op.i64x2Sub, op.get(nan), op.i64x2Sub, op.set(cnt),
      op.get(0), op.get(cv), op.get(nt), op.f64x2Pmax, op.get(tv), op.f64x2Pmin, op.get(nan), op.v128AndNot, op.v128Store(),
      inc(0, op.i32(16)), inc(1, op.i32(16)), inc(k, op.i32(2)),
      op.br(0), op.end, op.end,
      op.get(cnt), op.i64x2ExtractLane(0), op.get(cnt), op.i64x2ExtractLane(1), op.i64Add, op.i32WrapI64, op.set(n),
      // An odd last element, with the scalar branches.
      op.get(k), op.get(2), op.i32LtS, op.if,
      op.get(0), op.f64Load(), op.set(ck), op.get(1), op.f64Load(), op.set(tk),
      op.get(ck), op.get(tk), op.f64Gt, op.if,
      op.get(0), op.get(tk), op.f64Store(), inc(n, op.i32One),
      op.else,
      op.get(ck), op.get(tk), op.f64Neg, op.f64Lt, op.if,
      op.get(0), op.get(tk), op.f64Neg, op.f64Store(), inc(n, op.i32One),
      op.else,
      op.get(ck), op.get(ck), op.f64Ne, op.if,
      op.get(0), op.f64Zero, op.f64Store(), inc(n, op.i32One),
      op.end,
      op.end,
      op.end,
      op.end,
      op.get(n),
    ],
  };
}

function streamSumFunction(precision: Precision): WasmFunction {
  // params: p 0, count 1; locals: i 2, a0..a3 3..6, v 7. 64 bytes per iteration.
  const [i, a0, a1, a2, a3, v] = [2, 3, 4, 5, 6, 7];
  const swapHalves = [8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7];
  const addOp = precision === 'float64' ? op.f64x2Add : op.f32x4Add;
  const step = precision === 'float64' ? 8 : 16;
  const lane = (acc: number, offset: number) => [...op.get(acc), ...op.get(0), ...op.v128Load(offset), ...addOp, ...op.set(acc)];
  return {
    name: `streamSum${precision === 'float64' ? 64 : 32}`,
    params: [I32, I32],
    results: [F64],
    locals: [I32, V128, V128, V128, V128, V128],
    body: [
      op.block, op.loop,
      op.get(i), op.get(1), op.i32GeS, op.brIf(1),
      lane(a0, 0), lane(a1, 16), lane(a2, 32), lane(a3, 48),
      inc(0, op.i32(64)), inc(i, op.i32(step)),
      op.br(0), op.end, op.end,
      op.get(a0), op.get(a1), addOp, op.get(a2), addOp, op.get(a3), addOp, op.set(v),
      // float32: the four lanes as two float64 pairs, added; then the two float64 lanes.
      ...(precision === 'float64' ? [] : [op.get(v), op.f64x2PromoteLowF32x4, op.get(v), op.get(v), op.shuffle(swapHalves), op.f64x2PromoteLowF32x4, op.f64x2Add, op.set(v)]),
      op.get(v), op.f64x2ExtractLane(0), op.get(v), op.f64x2ExtractLane(1), op.f64Add,
    ],
  };
}

let compiled: WasmModule | null | undefined;

/**
 * The compiled kernel module (importing a shared memory of at most 65536 pages), or null where
 * WebAssembly SIMD or shared memory is unavailable (the JavaScript kernels are then used).
 */
export function kernelModule(): WasmModule | null {
  if (compiled !== undefined) return compiled;
  compiled = null;
  try {
    if (wasmApi === undefined || typeof SharedArrayBuffer === 'undefined') return null;
    const bytes = encodeModule(
      [
        marginsFunction('float64'), marginsFunction('float32'), accumulateFunction('float64'), accumulateFunction('float32'), clampFunction(),
        streamSumFunction('float64'), streamSumFunction('float32'),
      ],
      { shared: true, pages: 1, maxPages: 65536 },
    );
    if (!wasmApi.validate(bytes)) return null;
    compiled = new wasmApi.Module(bytes);
  } catch {
    compiled = null;
  }
  return compiled;
}

/** The kernels bound to `memory` (a shared WebAssembly memory), or null when unavailable. */
export function instantiateKernels(memory: WasmMemory): WasmKernelExports | null {
  const module = kernelModule();
  if (module === null || wasmApi === undefined) return null;
  try {
    return new wasmApi.Instance(module, { env: { memory } }).exports as WasmKernelExports;
  } catch {
    return null;
  }
}
