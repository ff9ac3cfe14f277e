/**
 * The fused encoder (`src/data/schema/encoder.ts`, behind `applySchema` and the chunked readers)
 * against the row-by-row pipeline dpfit shipped before it (`test/helpers/reference-apply-schema.ts`:
 * one call per cell, then a new copy of the dataset per row transform and for the intercept): on
 * random schemas (every numeric encoding, scale and missing policy, categorical columns read as
 * text and as numbers, binary / multi-class / numeric / ignored labels, every row transform,
 * intercepts) and random tables (missing values, infinities, out-of-bound values, unknown
 * categories, undeclared labels), the same rows bit for bit, the same labels and private
 * diagnostics, or the same error (class and text). Also encoded chunk by chunk into one dirty
 * buffer (not zeroed, as a reused block is), the rows are the same.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { applySchema } from '../../../src/data/schema/apply.js';
import { schemaEncoder } from '../../../src/data/schema/encoder.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import type { Schema } from '../../../src/data/schema/types.js';
import type { RawColumn, RawTable } from '../../../src/data/table.js';
import { referenceApplySchema } from '../../helpers/reference-apply-schema.js';
import { sameBits } from '../../helpers/same-bits.js';

const LEVELS = ['a', ' b', 'c ', 'd', '1', ' 2', 'yes', 'no', 'x y'];

/** A numeric column spec with any public encoding, and a value generator for it (NaN = missing). */
const numericSpec = fc.record({
  lower: fc.constantFrom(-5, 0, 1, 17),
  span: fc.constantFrom(1, 3.5, 73, 1e5),
  scale: fc.constantFrom('unit', 'symmetric', 'none'),
  missing: fc.constantFrom('error', 'dropRow', 'fill'),
  log1p: fc.boolean(),
  bins: fc.constantFrom(0, 1, 3),
  encode: fc.constantFrom('bins', 'valueAndBins'),
});

const categoricalSpec = fc.record({
  categories: fc.subarray(LEVELS, { minLength: 1 }),
  missing: fc.constantFrom('error', 'dropRow', 'other'),
  numbers: fc.boolean(),
});

const labelSpec = fc.constantFrom('binaryText', 'binaryNumber', 'plusMinusOne', 'classes', 'numeric', 'dropRow');

const schemaArbitrary = fc.record({
  numeric: fc.array(numericSpec, { minLength: 0, maxLength: 4 }),
  categorical: fc.array(categoricalSpec, { minLength: 0, maxLength: 3 }),
  label: labelSpec,
  rowTransform: fc.constantFrom('normalize', 'scale', 'clip', 'none'),
  intercept: fc.constantFrom(false, true, 0.5, -2),
}).filter((s) => s.numeric.length + s.categorical.length > 0);

type SchemaShape = typeof schemaArbitrary extends fc.Arbitrary<infer T> ? T : never;

function schemaOf(shape: SchemaShape): Schema {
  const columns: Record<string, unknown>[] = [];
  shape.numeric.forEach((c, j) => {
    const upper = c.lower + c.span;
    const spec: Record<string, unknown> = { name: `n${j}`, type: 'numeric', lower: c.lower, upper, scale: c.scale, missing: c.missing };
    if (c.missing === 'fill') spec.fillValue = c.lower + c.span / 3;
    if (c.log1p && c.lower > -1) spec.transform = 'log1p';
    if (c.bins > 0) {
      spec.bins = Array.from({ length: c.bins }, (_, k) => c.lower + (c.span * (k + 1)) / (c.bins + 1));
      spec.encode = c.encode;
    }
    columns.push(spec);
  });
  shape.categorical.forEach((c, j) => {
    columns.push({ name: `c${j}`, type: 'categorical', categories: c.numbers ? ['1', '2', ' 3'] : c.categories.map((l) => l.trim()).filter((l, k, all) => l !== '' && all.indexOf(l) === k), missing: c.missing });
  });
  const label: Record<string, unknown> = { name: 'y', type: 'label' };
  if (shape.label === 'binaryText') Object.assign(label, { positive: ['yes'], negative: ['no', 'd'] });
  else if (shape.label === 'binaryNumber') Object.assign(label, { positive: [1], negative: [0, 2] });
  else if (shape.label === 'plusMinusOne') Object.assign(label, { positive: ['yes'], negative: ['no'], encoding: 'plusMinusOne' });
  else if (shape.label === 'classes') Object.assign(label, { classes: ['a', 'b', 'c', 'd'] });
  else if (shape.label === 'numeric') Object.assign(label, { lower: -1, upper: 3 });
  else Object.assign(label, { positive: ['yes'], negative: ['no'], missing: 'dropRow' });
  columns.push(label);
  return parseSchema({ version: 1, columns, rowTransform: shape.rowTransform, ...(shape.rowTransform === 'clip' ? { clipNorm: 0.75 } : {}), intercept: shape.intercept });
}

/** Cells: mostly in range, some out of bounds, missing, infinite (`rare` makes errors rare enough to reach later rows). */
const numericCell = fc.oneof(
  { weight: 20, arbitrary: fc.double({ min: -20, max: 2e5, noNaN: true }) },
  { weight: 2, arbitrary: fc.constant(NaN) },
  { weight: 1, arbitrary: fc.constantFrom(Infinity, -Infinity, 0, -0) },
);
const levelCell = fc.oneof({ weight: 20, arbitrary: fc.integer({ min: 0, max: LEVELS.length - 1 }) }, { weight: 2, arbitrary: fc.constant(-1) });

const tableArbitrary = (shape: SchemaShape) => fc.record({
  rows: fc.integer({ min: 0, max: 60 }),
  numeric: fc.array(fc.array(numericCell, { minLength: 60, maxLength: 60 }), { minLength: shape.numeric.length, maxLength: shape.numeric.length }),
  categorical: fc.array(fc.array(levelCell, { minLength: 60, maxLength: 60 }), { minLength: shape.categorical.length, maxLength: shape.categorical.length }),
  categoricalNumbers: fc.array(fc.array(fc.constantFrom(1, 2, 3, 4, NaN), { minLength: 60, maxLength: 60 }), { minLength: shape.categorical.length, maxLength: shape.categorical.length }),
  labelCodes: fc.array(fc.oneof({ weight: 30, arbitrary: fc.constantFrom(0, 1, 3, 6, 7) }, { weight: 1, arbitrary: fc.constantFrom(-1, 2, 8) }), { minLength: 60, maxLength: 60 }),
  labelNumbers: fc.array(fc.oneof({ weight: 30, arbitrary: fc.constantFrom(0, 1, 2, -0.5, 2.5, 9) }, { weight: 1, arbitrary: fc.constantFrom(NaN, 5, Infinity) }), { minLength: 60, maxLength: 60 }),
});

function tableOf(shape: SchemaShape, cells: ReturnType<typeof tableArbitrary> extends fc.Arbitrary<infer T> ? T : never): RawTable {
  const n = cells.rows;
  const columns: RawColumn[] = [];
  shape.numeric.forEach((_, j) => columns.push({ kind: 'numeric', name: `n${j}`, values: Float64Array.from(cells.numeric[j].slice(0, n)) }));
  shape.categorical.forEach((c, j) => {
    if (c.numbers) columns.push({ kind: 'numeric', name: `c${j}`, values: Float64Array.from(cells.categoricalNumbers[j].slice(0, n)) });
    else columns.push({ kind: 'categorical', name: `c${j}`, codes: Int32Array.from(cells.categorical[j].slice(0, n)), levels: LEVELS });
  });
  const numericLabel = shape.label === 'binaryNumber' || shape.label === 'numeric';
  if (numericLabel) columns.push({ kind: 'numeric', name: 'y', values: Float64Array.from(cells.labelNumbers.slice(0, n)) });
  else columns.push({ kind: 'categorical', name: 'y', codes: Int32Array.from(cells.labelCodes.slice(0, n)), levels: LEVELS });
  columns.push({ kind: 'categorical', name: 'unused', codes: new Int32Array(n), levels: ['z'] });
  return { source: 'random.csv', rowCount: n, columns: columns.reverse(), rowLines: Int32Array.from({ length: n }, (_, i) => i + 2) };
}

/** The result of a run: the value, or the error's class and text. */
function outcome<T>(run: () => T): { value: T } | { error: string } {
  try {
    return { value: run() };
  } catch (error) {
    return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

test('applySchema is the row-by-row pipeline bit for bit: rows, labels, diagnostics, errors (property, random schemas and tables)', () => {
  fc.assert(
    fc.property(schemaArbitrary.chain((shape) => fc.tuple(fc.constant(shape), tableArbitrary(shape), fc.boolean())), ([shape, cells, ignoreLabel]) => {
      const schema = schemaOf(shape);
      const table = tableOf(shape, cells);
      const options = ignoreLabel ? { label: 'ignore' as const } : {};
      const expected = outcome(() => referenceApplySchema(table, schema, options));
      const got = outcome(() => applySchema(table, schema, options));
      if ('error' in expected) {
        assert.deepEqual(got, expected);
        return;
      }
      assert.ok('value' in got, `the encoder threw where the reference did not: ${'error' in got ? got.error : ''}`);
      sameBits(got.value.dataset, expected.value.dataset);
      const { dataset: _a, ...restGot } = got.value;
      const { dataset: _b, ...restExpected } = expected.value;
      assert.deepEqual(restGot, restExpected);
    }),
    { numRuns: 600, seed: 28 },
  );
});

test('encoded chunk by chunk into a dirty buffer (not zeroed, as a reused block): the same rows as the whole table', () => {
  fc.assert(
    fc.property(schemaArbitrary.chain((shape) => fc.tuple(fc.constant(shape), tableArbitrary(shape), fc.integer({ min: 1, max: 25 }))), ([shape, cells, chunk]) => {
      const schema = schemaOf(shape);
      const table = tableOf(shape, cells);
      const expected = outcome(() => referenceApplySchema(table, schema));
      if ('error' in expected) return;
      const encoder = schemaEncoder(schema);
      const { d } = encoder;
      const x = new Float64Array((table.rowCount + 1) * d).fill(7.25);
      const y = new Float64Array(table.rowCount + 1).fill(7.25);
      let at = 0;
      for (let start = 0; start < table.rowCount; start += chunk) {
        const end = Math.min(table.rowCount, start + chunk);
        const part: RawTable = {
          source: table.source,
          rowCount: end - start,
          columns: table.columns.map((c): RawColumn => (c.kind === 'numeric' ? { ...c, values: c.values.subarray(start, end) } : { ...c, codes: c.codes.subarray(start, end) })),
        };
        at += encoder.encode(part, x, y, at, false).kept;
      }
      sameBits({ x: x.subarray(0, at * d), y: y.subarray(0, at), n: at, d, featureNames: encoder.featureNames as string[] }, expected.value.dataset);
    }),
    { numRuns: 300, seed: 29 },
  );
});

test('a value within its bounds (the short path of unit and symmetric scales) is the general path\'s bit for bit: signed zeros, the bounds, their neighbours', () => {
  const below = (v: number): number => v - Math.abs(v) * Number.EPSILON - Number.MIN_VALUE;
  const above = (v: number): number => v + Math.abs(v) * Number.EPSILON + Number.MIN_VALUE;
  for (const [lower, upper] of [[0, 1], [-1, 1], [-0, 2], [-5, -2], [17, 73.5], [0, 1e300], [-1e300, 1e300]]) {
    const values = [0, -0, lower, upper, above(lower), below(upper), (lower + upper) / 2, lower / 3 + (2 * upper) / 3, 1e-310, -1e-310];
    for (const scale of ['unit', 'symmetric', 'none']) {
      const schema = parseSchema({ version: 1, rowTransform: 'none', intercept: false, columns: [{ name: 'a', type: 'numeric', lower, upper, scale }, { name: 'y', type: 'label', lower: -1, upper: 1 }] });
      const table: RawTable = { source: 'edge.csv', rowCount: values.length, columns: [{ kind: 'numeric', name: 'a', values: Float64Array.from(values) }, { kind: 'numeric', name: 'y', values: new Float64Array(values.length) }] };
      const expected = outcome(() => referenceApplySchema(table, schema));
      assert.ok('value' in expected);
      sameBits(applySchema(table, schema).dataset, expected.value.dataset);
    }
  }
});
