/**
 * @internal A minimal WebAssembly binary encoder, enough for the hand-written kernels of
 * `wasm-kernels.ts` (WebAssembly Core Specification 2.0, Sec. 5 "Binary Format", and the
 * fixed-width SIMD proposal merged into it): LEB128 integers, one imported shared memory,
 * functions with typed locals, exports. No toolchain and no prebuilt binary: the module's bytes
 * are built from the instruction lists in the source at run time.
 */

/** The parts of the WebAssembly JavaScript API the kernels use (the project's lib has no DOM types). */
export interface WasmMemory {
  readonly buffer: ArrayBufferLike;
}
export type WasmModule = object;
interface WasmApi {
  Memory: new (descriptor: { initial: number; maximum?: number; shared?: boolean }) => WasmMemory;
  Module: new (bytes: Uint8Array) => WasmModule;
  Instance: new (module: WasmModule, imports: Record<string, Record<string, unknown>>) => { exports: unknown };
  validate(bytes: Uint8Array): boolean;
}

/** The global WebAssembly object, or undefined where there is none. */
export const wasmApi: WasmApi | undefined = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;

/** Value types (Sec. 5.3.1). */
export const I32 = 0x7f;
export const F64 = 0x7c;
export const V128 = 0x7b;

/** Unsigned LEB128. */
export function uleb(value: number): number[] {
  const out: number[] = [];
  let v = value >>> 0;
  do {
    let byte = v & 0x7f;
    v >>>= 7;
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}

/** Signed LEB128 (32-bit). */
export function sleb(value: number): number[] {
  const out: number[] = [];
  let v = value | 0;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    if ((v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0)) {
      out.push(byte);
      return out;
    }
    out.push(byte | 0x80);
  }
}

/** The 8 little-endian bytes of a float64. */
function f64Bytes(value: number): number[] {
  return [...new Uint8Array(new Float64Array([value]).buffer)];
}

/** The 8 little-endian bytes of an int64 holding the 32-bit integer `value`. */
function i64Bytes(value: number): number[] {
  return [...new Uint8Array(new BigInt64Array([BigInt(value | 0)]).buffer)];
}

/** Instructions used by the kernels (Sec. 5.4), as byte lists. memarg: alignment 0 (a hint), offset. */
const mem = (op: number[], offset = 0): number[] => [...op, 0, ...uleb(offset)];
const simd = (code: number): number[] => [0xfd, ...uleb(code)];

export const op = {
  block: [0x02, 0x40],
  loop: [0x03, 0x40],
  if: [0x04, 0x40],
  end: [0x0b],
  br: (depth: number) => [0x0c, ...uleb(depth)],
  brIf: (depth: number) => [0x0d, ...uleb(depth)],
  get: (local: number) => [0x20, ...uleb(local)],
  set: (local: number) => [0x21, ...uleb(local)],
  tee: (local: number) => [0x22, ...uleb(local)],
  i32: (value: number) => [0x41, ...sleb(value)],
  f64Zero: [0x44, 0, 0, 0, 0, 0, 0, 0, 0],
  i32Add: [0x6a],
  i32Sub: [0x6b],
  i32Mul: [0x6c],
  i32Shl: [0x74],
  i32LtS: [0x48],
  i32And: [0x71],
  i32Eqz: [0x45],
  i32GeS: [0x4e],
  select: [0x1b],
  drop: [0x1a],
  i32Load: (offset = 0) => mem([0x28], offset),
  i32Store: (offset = 0) => mem([0x36], offset),
  f32Load: (offset = 0) => mem([0x2a], offset),
  f64Load: (offset = 0) => mem([0x2b], offset),
  f64Store: (offset = 0) => mem([0x39], offset),
  f32Store: (offset = 0) => mem([0x38], offset),
  /** f64.const `value`. */
  f64Const: (value: number) => [0x44, ...f64Bytes(value)],
  f64Min: [0xa4],
  f64Max: [0xa5],
  f32DemoteF64: [0xb6],
  f64Ne: [0x62],
  f64Add: [0xa0],
  f64Mul: [0xa2],
  f64PromoteF32: [0xbb],
  v128Load: (offset = 0) => mem(simd(0x00), offset),
  v128Store: (offset = 0) => mem(simd(0x0b), offset),
  v128Load64Zero: (offset = 0) => mem(simd(0x5d), offset),
  /** v128.load32_zero: one 32-bit value into lane 0, the other lanes zero. */
  v128Load32Zero: (offset = 0) => mem(simd(0x5c), offset),
  /** v128.load32_lane: the 32-bit value at the address replaces lane `lane` of the v128 operand. */
  v128Load32Lane: (offset: number, lane: number) => [...mem(simd(0x56), offset), lane],
  /** v128.load64_splat: one float64 in both lanes. */
  v128Load64Splat: (offset = 0) => mem(simd(0x0a), offset),
  /** i8x16.shuffle with 16 lane indices into the concatenation of its two operands. */
  shuffle: (lanes: number[]) => [...simd(0x0d), ...lanes],
  f64x2Splat: simd(0x14),
  /** v128.load32_splat: one 32-bit value in all four lanes. */
  v128Load32Splat: (offset = 0) => mem(simd(0x09), offset),
  /** f64x2.convert_low_i32x4_s: the two low int32 lanes, exactly, as float64. */
  f64x2ConvertLowI32x4S: simd(0xfe),
  f64x2ReplaceLane: (lane: number) => [...simd(0x22), lane],
  f64x2ExtractLane: (lane: number) => [...simd(0x21), lane],
  else: [0x05],
  i32One: [0x41, 1],
  i32WrapI64: [0xa7],
  i64Add: [0x7c],
  f64Gt: [0x64],
  f64Lt: [0x63],
  f64Neg: [0x9a],
  f64x2Neg: simd(0xed),
  f64x2Ne: simd(0x48),
  f64x2Lt: simd(0x49),
  f64x2Gt: simd(0x4a),
  f64x2Pmin: simd(0xf6),
  f64x2Pmax: simd(0xf7),
  i64x2Sub: simd(0xd1),
  i64x2ExtractLane: (lane: number) => [...simd(0x1d), lane],
  f32x4Add: simd(0xe4),
  f32x4Sub: simd(0xe5),
  f32x4Mul: simd(0xe6),
  f32x4Div: simd(0xe7),
  f32x4Neg: simd(0xe1),
  f32x4Gt: simd(0x44),
  f32x4Ne: simd(0x42),
  f32x4Lt: simd(0x43),
  f32x4Ge: simd(0x46),
  f32x4Splat: simd(0x13),
  v128And: simd(0x4e),
  i32x4ExtractLane: (lane: number) => [...simd(0x1b), lane],
  f32x4Pmin: simd(0xea),
  f32x4Pmax: simd(0xeb),
  i32x4Add: simd(0xae),
  i32x4Sub: simd(0xb1),
  i32x4Shl: simd(0xab),
  f32x4DemoteF64x2Zero: simd(0x5e),
  /** v128.const with all four f32 lanes equal to `value` (rounded to float32). */
  f32x4Const: (value: number) => [...simd(0x0c), ...[0, 1, 2, 3].flatMap(() => [...new Uint8Array(new Float32Array([value]).buffer)])],
  /** v128.const with all four i32 lanes equal to `value`. */
  i32x4Const: (value: number) => [...simd(0x0c), ...[0, 1, 2, 3].flatMap(() => [...new Uint8Array(new Int32Array([value]).buffer)])],
  f64x2Add: simd(0xf0),
  f64x2Sub: simd(0xf1),
  f64x2Mul: simd(0xf2),
  f64x2Div: simd(0xf3),
  i64x2Add: simd(0xce),
  i64x2Shl: simd(0xcb),
  v128AndNot: simd(0x4f),
  v128Bitselect: simd(0x52),
  /** v128.const with both f64 lanes equal to `value`. */
  f64x2Const: (value: number) => [...simd(0x0c), ...f64Bytes(value), ...f64Bytes(value)],
  /** v128.const with both i64 lanes equal to the 32-bit integer `value` (sign-extended). */
  i64x2Const: (value: number) => [...simd(0x0c), ...i64Bytes(value), ...i64Bytes(value)],
  f64x2PromoteLowF32x4: simd(0x5f),
  v128Zero: [...simd(0x0c), ...new Array<number>(16).fill(0)],
  /**
   * f64x2.relaxed_madd(a, b, c) = a b + c, rounded once (fused) or twice (a b rounded, then the
   * sum), as the engine chooses (WebAssembly relaxed SIMD, Sec. "Relaxed fused multiply-add").
   */
  f64x2RelaxedMadd: simd(0x107),
  /** f32x4.relaxed_madd(a, b, c) = a b + c, fused or not as the engine chooses (measured only, not released). */
  f32x4RelaxedMadd: simd(0x105),
};

/** (lane 0 of a, lane 0 of b) and (lane 1 of a, lane 1 of b) for f64x2 operands. */
export const LOW_LANES = [0, 1, 2, 3, 4, 5, 6, 7, 16, 17, 18, 19, 20, 21, 22, 23];
export const HIGH_LANES = [8, 9, 10, 11, 12, 13, 14, 15, 24, 25, 26, 27, 28, 29, 30, 31];

export interface WasmFunction {
  name: string;
  params: number[];
  results: number[];
  /** Extra locals (after the parameters), by type. */
  locals: number[];
  body: number[][];
}

function section(id: number, content: number[]): number[] {
  return [id, ...uleb(content.length), ...content];
}

function vector(items: number[][]): number[] {
  return [...uleb(items.length), ...items.flat()];
}

function name(text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)];
  return [...uleb(bytes.length), ...bytes];
}

/**
 * A module importing `env.memory` (shared, `pages` initial and maximum 64 KiB pages when
 * `shared`; otherwise unshared with no maximum) and exporting `functions`.
 */
export function encodeModule(functions: readonly WasmFunction[], memory: { shared: boolean; pages: number; maxPages: number }): Uint8Array {
  const types = functions.map((f) => [0x60, ...vector(f.params.map((t) => [t])), ...vector(f.results.map((t) => [t]))]);
  const limits = memory.shared ? [0x03, ...uleb(memory.pages), ...uleb(memory.maxPages)] : [0x00, ...uleb(memory.pages)];
  const imports = vector([[...name('env'), ...name('memory'), 0x02, ...limits]]);
  const funcs = vector(functions.map((_, i) => uleb(i)));
  const exports = vector(functions.map((f, i) => [...name(f.name), 0x00, ...uleb(i)]));
  const codes = functions.map((f) => {
    const locals = vector(f.locals.map((t) => [1, t]));
    const body = [...locals, ...f.body.flat(), 0x0b];
    return [...uleb(body.length), ...body];
  });
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vector(types)),
    ...section(2, imports),
    ...section(3, funcs),
    ...section(7, exports),
    ...section(10, vector(codes)),
  ]);
}
