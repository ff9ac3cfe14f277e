/**
 * @internal The fused WebAssembly SIMD pass of the logistic loss, which reads the features once per step: for each group of
 * GROUP = 8 rows, while they are in L1,
 *
 *   z = x . theta (as `margins`: z = E + O, the even and odd halves of the sum in the two lanes),
 *   c = clamp(-y / (1 + exp(y z)), -t, t) (as `logisticLoss.derivatives` with `deterministicExp`,
 *       then `clamp`: pmax / pmin, the clip count in i64 lanes),
 *   out_j += ((c0 x0_j + c1 x1_j) + c2 x2_j) + c3 x3_j for each four rows in turn (as
 *       `accumulate`'s four-row groups),
 *
 * so the features are read from memory once per step and every number is the scalar kernels'
 * (`per-example.ts` states the rounding bound these orders satisfy). The module is built for one
 * row length d and storage precision, fully unrolled over j: every row element is a load at a
 * constant offset from the group's first row and there is no inner loop. Rows past the last full
 * group are left to the caller.
 */
import { EXP_LN2_HI, EXP_LN2_LO, EXP_LOG2E, EXP_MAX, EXP_MIN, EXP_SHIFTER, EXP_TAYLOR } from '../../../math/exp.js';
import { encodeModule, HIGH_LANES, I32, LOW_LANES, op, V128, wasmApi, type WasmFunction, type WasmMemory, type WasmModule } from './wasm-binary.js';
import { inc, loads, type Precision } from './wasm-kernels.js';

/**
 * Rows per group (a multiple of 4): GROUP independent margin accumulators hide the add latency
 * (measured on 1e6 x 20: 8 beats 4, 12 and 16).
 */
export const GROUP = 8;

/** The longest row the fused pass is built for (longer rows use the blocked kernels). */
export const FUSED_MAX_D = 512;

/**
 * step(x, theta, y, t, count, out): the pass over the first GROUP floor(count / GROUP) rows from
 * byte `x`; `theta` holds d float64, `y` and `t` float64 labels and thresholds of
 * the same rows, `out` d float64 sums; returns how many derivatives were clipped.
 */
export type LogisticStep = (x: number, theta: number, y: number, t: number, count: number, out: number) => number;

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

/** The fused pass for rows of d elements stored in `precision` (see the module comment). */
export function logisticStepFunction(precision: Precision, d: number): WasmFunction {
  // params: x 0, th 1, y 2, t 3, count 4, out 5
  const [X, TH, Y, T, COUNT, OUT] = [0, 1, 2, 3, 4, 5];
  const locals: number[] = [];
  const local = (type: number): number => 6 + locals.push(type) - 1;
  const [k] = [local(I32)];
  const [a, yv, tv, cnt, g, sum] = Array.from({ length: 6 }, () => local(V128));
  /** Per pair of rows: its margins' accumulator, then its clipped derivatives. */
  const accs = Array.from({ length: GROUP / 2 }, () => local(V128));
  const cs = Array.from({ length: GROUP }, () => local(V128));
  const tmp = Array.from({ length: 7 }, () => local(V128));
  const L = loads(precision);
  const rowBytes = d * L.bytes;
  /** Row r's element j of the group at x: a load at a constant offset. */
  const at = (r: number, j: number) => r * rowBytes + j * L.bytes;
  // Margins in the order of `kernels.ts` (z = E + O): row r's accumulator has the even half in
  // lane 0 and the odd half in lane 1; theta (plain, t_j t_{j+1} pairs) is loaded once per pair.
  const rowAccs = Array.from({ length: GROUP }, () => local(V128));
  const margins: number[][] = rowAccs.map((acc) => [...op.v128Zero, ...op.set(acc)]);
  for (let j = 0; j + 1 < d; j += 2) {
    margins.push(op.get(TH), op.v128Load(8 * j), op.set(a));
    rowAccs.forEach((acc, r) => margins.push(op.get(acc), L.pair(op.get(X), at(r, j)), op.get(a), op.f64x2Mul, op.f64x2Add, op.set(acc)));
  }
  if (d % 2 === 1) {
    margins.push(op.get(TH), op.f64Load(8 * (d - 1)), op.f64x2Splat, op.set(a));
    rowAccs.forEach((acc, r) => margins.push(
      op.get(acc), op.get(acc), op.f64x2ExtractLane(0), L.scalar(op.get(X), at(r, d - 1)), op.get(a), op.f64x2ExtractLane(0), op.f64Mul, op.f64Add, op.f64x2ReplaceLane(0), op.set(acc),
    ));
  }
  // accs[i] = (z_2i, z_2i+1) = (E + O of row 2i, E + O of row 2i + 1).
  accs.forEach((acc, i) => {
    const [e, f] = [rowAccs[2 * i], rowAccs[2 * i + 1]];
    margins.push(op.get(e), op.get(f), op.shuffle(LOW_LANES), op.get(e), op.get(f), op.shuffle(HIGH_LANES), op.f64x2Add, op.set(acc));
  });
  /** acc <- clamp(-y / (1 + exp(y z)), -t, t) for the two rows of `acc` (their y, t at byte `offset`). */
  const derivative = (acc: number, offset: number) => [
    ...op.get(Y), ...op.v128Load(offset), ...op.tee(yv), ...op.get(acc), ...op.f64x2Mul, ...op.set(sum),
    ...op.get(yv), ...op.f64x2Neg, ...op.f64x2Const(1), ...simdExp(sum, tmp), ...op.f64x2Add, ...op.f64x2Div, ...op.set(g),
    ...op.get(T), ...op.v128Load(offset), ...op.set(tv),
    ...op.get(cnt), ...op.get(g), ...op.get(tv), ...op.f64x2Gt, ...op.i64x2Sub, ...op.get(g), ...op.get(tv), ...op.f64x2Neg, ...op.f64x2Lt, ...op.i64x2Sub, ...op.set(cnt),
    ...op.get(g), ...op.get(tv), ...op.f64x2Neg, ...op.f64x2Pmax, ...op.get(tv), ...op.f64x2Pmin, ...op.set(acc),
  ];
  const derivatives = accs.flatMap((acc, i) => [
    derivative(acc, 16 * i),
    [...op.get(acc), ...op.f64x2ExtractLane(0), ...op.f64x2Splat, ...op.set(cs[2 * i])],
    [...op.get(acc), ...op.f64x2ExtractLane(1), ...op.f64x2Splat, ...op.set(cs[2 * i + 1])],
  ]);
  const term = (r: number, j: number) => [...op.get(cs[r]), ...L.pair(op.get(X), at(r, j)), ...op.f64x2Mul];
  const scalarTerm = (r: number, j: number) => [...op.get(cs[r]), ...op.f64x2ExtractLane(0), ...L.scalar(op.get(X), at(r, j)), ...op.f64Mul];
  // out_j <- ((out_j + G_0j) + G_1j) + ..., G_q = ((c x_4q + c x_4q+1) + c x_4q+2) + c x_4q+3: the
  // scalar kernel's consecutive four-row groups, out_j loaded and stored once.
  const update: number[][] = [];
  for (let j = 0; j + 1 < d; j += 2) {
    update.push(op.get(OUT), op.get(OUT), op.v128Load(8 * j));
    for (let q = 0; q < GROUP; q += 4) {
      update.push(term(q, j), term(q + 1, j), op.f64x2Add, term(q + 2, j), op.f64x2Add, term(q + 3, j), op.f64x2Add, op.f64x2Add);
    }
    update.push(op.v128Store(8 * j));
  }
  if (d % 2 === 1) {
    const j = d - 1;
    update.push(op.get(OUT), op.get(OUT), op.f64Load(8 * j));
    for (let q = 0; q < GROUP; q += 4) {
      update.push(scalarTerm(q, j), scalarTerm(q + 1, j), op.f64Add, scalarTerm(q + 2, j), op.f64Add, scalarTerm(q + 3, j), op.f64Add, op.f64Add);
    }
    update.push(op.f64Store(8 * j));
  }
  return {
    name: 'logisticStep',
    params: [I32, I32, I32, I32, I32, I32],
    results: [I32],
    locals,
    body: [
      op.v128Zero, op.set(cnt),
      op.block, op.loop,
      op.get(COUNT), op.get(k), op.i32Sub, op.i32(GROUP), op.i32LtS, op.brIf(1),
      ...margins,
      ...derivatives,
      ...update,
      inc(X, op.i32(GROUP * rowBytes)), inc(Y, op.i32(8 * GROUP)), inc(T, op.i32(8 * GROUP)), inc(k, op.i32(GROUP)),
      op.br(0), op.end, op.end,
      op.get(cnt), op.i64x2ExtractLane(0), op.get(cnt), op.i64x2ExtractLane(1), op.i64Add, op.i32WrapI64,
    ],
  };
}

const modules = new Map<string, WasmModule | null>();
const instances = new WeakMap<WasmMemory, Map<string, LogisticStep | null>>();

/**
 * The fused pass for rows of d elements in `precision`, bound to `memory` (a shared WebAssembly
 * memory), or null where WebAssembly SIMD is unavailable or d > FUSED_MAX_D. Built once per
 * (d, precision) per thread, instantiated once per memory.
 */
export function logisticStepFor(memory: WasmMemory, d: number, precision: Precision): LogisticStep | null {
  if (wasmApi === undefined || d > FUSED_MAX_D) return null;
  const key = `${precision}:${d}`;
  let perMemory = instances.get(memory);
  if (perMemory === undefined) instances.set(memory, (perMemory = new Map()));
  const known = perMemory.get(key);
  if (known !== undefined) return known;
  let module = modules.get(key);
  if (module === undefined) {
    module = null;
    try {
      const bytes = encodeModule([logisticStepFunction(precision, d)], { shared: true, pages: 1, maxPages: 65536 });
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
