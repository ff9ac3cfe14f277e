/**
 * The deterministic exp (`src/math/exp.ts`): its accuracy against correctly rounded values, and
 * the WebAssembly SIMD version (`simdExp` of `wasm-logistic-step.ts`) against the JavaScript one
 * bit for bit, on every range the kernel distinguishes (Infinity above EXP_MAX, 0 below EXP_MIN,
 * NaN, signed zeros, subnormals).
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { deterministicExp, EXP_MAX, EXP_MIN } from '../../src/math/exp.js';
import { encodeModule, I32, op, V128, type WasmMemory } from '../../src/learners/glm/kernels/wasm-binary.js';
import { simdExp } from '../../src/learners/glm/kernels/wasm-logistic-step.js';

/** The distance from a to b in units in the last place of b (b normal or zero). */
function ulps(a: number, b: number): number {
  if (a === b) return 0;
  const ulp = 2 ** (Math.floor(Math.log2(Math.abs(b))) - 52);
  return Math.abs(a - b) / ulp;
}

test('deterministicExp is within 4 ulp of the correctly rounded e^x (reference: Python decimal, 60 digits, rounded once)', () => {
  // python3: from decimal import Decimal, getcontext; getcontext().prec = 60; float(Decimal(x).exp())
  const reference: [number, number][] = [
    [-708, 3.307553003638408e-308], [-707.5, 5.453232991066742e-308], [-500.25, 5.548625684622169e-218],
    [-100, 3.720075976020836e-44], [-37, 8.533047625744066e-17], [-20.5, 1.2501528663867426e-9],
    [-1, 0.36787944117144233], [-0.5, 0.6065306597126334], [-1e-8, 0.9999999900000001], [1e-300, 1],
    [0.34657359027997264, 1.414213562373095], [0.5, 1.6487212707001282], [1, 2.718281828459045],
    [2.5, 12.182493960703473], [10, 22026.465794806718], [36.7, 8681754200535380], [100, 2.6881171418161356e43],
    [333.3, 5.6279576190981464e144], [700, 1.0142320547350045e304], [708.9, 7.436322587880697e307], [709, 8.218407461554972e307],
  ];
  for (const [x, e] of reference) assert.ok(ulps(deterministicExp(x), e) <= 4, `exp(${x}) = ${deterministicExp(x)}, correctly rounded ${e}`);
  assert.equal(deterministicExp(0), 1);
  assert.equal(deterministicExp(-0), 1);
});

test('deterministicExp stays within 4 ulp of Math.exp (fdlibm, < 1 ulp) across its range, and its edges are as documented (property)', () => {
  fc.assert(fc.property(fc.double({ min: EXP_MIN, max: EXP_MAX, noNaN: true }), (x) => {
    assert.ok(ulps(deterministicExp(x), Math.exp(x)) <= 4, `x = ${x}`);
  }), { numRuns: 20000 });
  assert.equal(deterministicExp(EXP_MAX + 1e-9), Infinity);
  assert.equal(deterministicExp(Infinity), Infinity);
  assert.ok(Object.is(deterministicExp(EXP_MIN - 1e-9), 0));
  assert.ok(Object.is(deterministicExp(-Infinity), 0));
  assert.ok(Number.isNaN(deterministicExp(NaN)));
});

/** exp(p, count): in-place simdExp over `count` float64 (count even) at byte p. */
function simdExpModule(): { exp: (p: number, count: number) => void; memory: WasmMemory } {
  const [P, COUNT, K, S] = [0, 1, 2, 3];
  const tmp = [4, 5, 6, 7, 8, 9, 10];
  const bytes = encodeModule([{
    name: 'exp',
    params: [I32, I32],
    results: [],
    locals: [I32, V128, V128, V128, V128, V128, V128, V128, V128],
    body: [
      op.block, op.loop,
      op.get(K), op.get(COUNT), op.i32GeS, op.brIf(1),
      op.get(P), op.get(P), op.v128Load(), op.set(S), simdExp(S, tmp), op.v128Store(),
      op.get(P), op.i32(16), op.i32Add, op.set(P), op.get(K), op.i32(2), op.i32Add, op.set(K),
      op.br(0), op.end, op.end,
    ],
  }], { shared: false, pages: 1, maxPages: 1 });
  const api = (globalThis as unknown as { WebAssembly: { Memory: new (d: { initial: number }) => WasmMemory; Module: new (b: Uint8Array) => object; Instance: new (m: object, i: object) => { exports: { exp: (p: number, c: number) => void } } } }).WebAssembly;
  const memory = new api.Memory({ initial: 1 });
  const instance = new api.Instance(new api.Module(bytes), { env: { memory } });
  return { exp: instance.exports.exp, memory };
}

test('the SIMD exp of the fused kernel computes deterministicExp bit for bit, edges included (property)', () => {
  const { exp, memory } = simdExpModule();
  const lanes = new Float64Array(memory.buffer, 0, 4096);
  const special = [0, -0, NaN, Infinity, -Infinity, EXP_MAX, EXP_MAX + 1e-13, EXP_MIN, EXP_MIN - 1e-13, 709.78, -745.2, 5e-324, -5e-324, 1e-300, 0.34657359027997264, -0.34657359027997264, 1e308, -1e308];
  const check = (xs: number[]) => {
    lanes.set(xs);
    const count = xs.length + (xs.length % 2);
    exp(0, count);
    xs.forEach((x, i) => {
      const expected = deterministicExp(x);
      assert.ok(Object.is(lanes[i], expected) || (Number.isNaN(lanes[i]) && Number.isNaN(expected)), `x = ${x}: SIMD ${lanes[i]}, JavaScript ${expected}`);
    });
  };
  check(special);
  fc.assert(fc.property(fc.array(fc.oneof(fc.double(), fc.double({ min: -750, max: 750 }), fc.double({ min: -1, max: 1 })), { minLength: 1, maxLength: 4000 }), check), { numRuns: 200 });
});
