import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ADULT_DOCUMENTED, ADULT_FILES, ADULT_SCHEMA_JSON, adultSchema, normalizeAdultCopy } from '../../../src/data/adult.js';
import { parseCsv } from '../../../src/data/csv.js';
import { maxRowNorm, rowView } from '../../../src/data/dataset.js';
import { applySchema } from '../../../src/data/schema/apply.js';
import { schemaEncodedNormBound, schemaFeatureNames, schemaRowNormBound } from '../../../src/data/schema/bounds.js';
import { isSuggestedSchema, parseSchema, schemaToJson } from '../../../src/data/schema/parse.js';
import { schemaCsvOptions } from '../../../src/data/schema/read-options.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { SUGGESTION_WARNING, inspectTable, suggestSchema } from '../../../src/data/schema/suggest.js';
import type { RawTable } from '../../../src/data/table.js';
import { DataFormatError } from '../../../src/errors.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

const PEOPLE_SCHEMA = {
  version: 1,
  columns: [
    { name: 'age', type: 'numeric', lower: 18, upper: 90 },
    { name: 'hours', type: 'numeric', lower: 0, upper: 100, scale: 'symmetric', missing: 'fill', fillValue: 25 },
    { name: 'sex', type: 'categorical', categories: ['Female', 'Male'] },
    { name: 'id', type: 'ignore' },
    { name: 'income', type: 'label', positive: ['>50K'], negative: ['<=50K'] },
  ],
  rowTransform: 'none',
};

function people(rows: string[], schema: Schema = parseSchema(PEOPLE_SCHEMA)): RawTable {
  return parseCsv(encode(['age,hours,sex,id,income', ...rows].join('\n')), schemaCsvOptions(schema, 'people.csv'));
}

function throwsData(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof DataFormatError, `expected a DataFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

test('applySchema clips and scales by the declared bounds, one-hot encodes with an "other" slot, encodes the label', () => {
  const schema = parseSchema(PEOPLE_SCHEMA, 'people.schema.json');
  const table = people(['54,50,Male,7,>50K', '10,200,Female,8,<=50K', '200,,Other,9,<=50K', '18,-5,?,10,>50K']);
  const prepared = applySchema(table, schema);
  const { dataset } = prepared;
  assert.deepEqual(dataset.featureNames, ['age', 'hours', 'sex=Female', 'sex=Male', 'sex=<other>']);
  // age: (54 - 18) / 72 = 0.5; 10 -> clipped to 18 -> 0; 200 -> 90 -> 1. hours symmetric: 2 * 50/100 - 1 = 0.
  assert.deepEqual(Array.from(rowView(dataset, 0)), [0.5, 0, 0, 1, 0]);
  assert.deepEqual(Array.from(rowView(dataset, 1)), [0, 1, 1, 0, 0]); // hours 200 clipped to 100 -> +1
  assert.deepEqual(Array.from(rowView(dataset, 2)), [1, -0.5, 0, 0, 1]); // hours missing -> fillValue 25; unknown category -> other
  assert.deepEqual(Array.from(rowView(dataset, 3)), [0, -1, 0, 0, 1]); // missing category -> other (default policy)
  assert.deepEqual(Array.from(dataset.y), [1, 0, 0, 1]);
  assert.equal(prepared.rowNormBound, schemaEncodedNormBound(schema));
  assert.ok(Math.abs(prepared.rowNormBound - Math.sqrt(3)) < 1e-14 && prepared.rowNormBound >= Math.sqrt(3));
  assert.deepEqual(prepared.privateDiagnostics.clipped, { age: 2, hours: 2 });
  assert.deepEqual(prepared.privateDiagnostics.other, { sex: 2 });
  assert.equal(prepared.privateDiagnostics.positives, 2);
});

test('the default row transform normalises rows (003 Sec. 5); clip, scale and intercept state their norm bound', () => {
  const rows = ['54,50,Male,7,>50K', '90,100,Female,8,<=50K', '18,0,Male,9,<=50K'];
  const normalized = parseSchema({ ...PEOPLE_SCHEMA, rowTransform: undefined });
  assert.equal(normalized.rowTransform, 'normalize');
  const a = applySchema(people(rows), normalized);
  assert.equal(a.rowNormBound, 1);
  for (let i = 0; i < a.dataset.n; i++) assert.ok(Math.abs(Math.hypot(...rowView(a.dataset, i)) - 1) < 1e-14);
  assert.ok(maxRowNorm(a.dataset) <= 1);
  const clipped = applySchema(people(rows), parseSchema({ ...PEOPLE_SCHEMA, rowTransform: 'clip', clipNorm: 0.5 }));
  assert.equal(clipped.rowNormBound, 0.5);
  assert.ok(maxRowNorm(clipped.dataset) <= 0.5);
  const scaled = applySchema(people(rows), parseSchema({ ...PEOPLE_SCHEMA, rowTransform: 'scale' }));
  assert.equal(scaled.rowNormBound, 1);
  assert.ok(maxRowNorm(scaled.dataset) <= 1);
  const withIntercept = parseSchema({ ...PEOPLE_SCHEMA, rowTransform: 'normalize', intercept: true });
  const b = applySchema(people(rows), withIntercept);
  assert.equal(b.dataset.d, 6);
  assert.equal(b.dataset.featureNames[5], '(intercept)');
  assert.ok(b.rowNormBound >= Math.SQRT2 && b.rowNormBound < Math.SQRT2 * (1 + 1e-14), 'sqrt(1^2 + 1^2)');
  assert.ok(maxRowNorm(b.dataset) <= b.rowNormBound);
  assert.deepEqual(schemaFeatureNames(withIntercept).at(-1), '(intercept)');
});

test('replacing one private row by an extreme one leaves every other transformed row unchanged (property)', () => {
  // The property that makes schema preprocessing private: row i of the output depends on row i only.
  const categories = ['a', 'b', 'c'];
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'x1', type: 'numeric', lower: -5, upper: 5 },
      { name: 'x2', type: 'numeric', lower: 0, upper: 1000, scale: 'none', missing: 'fill', fillValue: 0 },
      { name: 'cat', type: 'categorical', categories },
      { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
    ],
  });
  const value = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e300, max: 1e300 }), fc.integer({ min: -10, max: 10 }));
  const row = fc.record({ x1: value, x2: fc.option(value, { nil: null }), cat: fc.constantFrom('a', 'b', 'c', 'zzz', '?'), y: fc.constantFrom('yes', 'no') });
  const extreme = fc.record({
    x1: fc.constantFrom(1e308, -1e308, 5e-324, 0),
    x2: fc.constantFrom(1e308, -1e308, null),
    cat: fc.constantFrom('never-seen', '?', 'a'),
    y: fc.constantFrom('yes', 'no'),
  });
  const toCsv = (rows: { x1: number; x2: number | null; cat: string; y: string }[]): Uint8Array =>
    encode(['x1,x2,cat,y', ...rows.map((r) => `${r.x1},${r.x2 === null ? '' : r.x2},${r.cat},${r.y}`)].join('\n'));
  for (const rowTransform of ['normalize', 'none', 'clip'] as const) {
    const s = parseSchema({ ...schemaToJson(schema), rowTransform, ...(rowTransform === 'clip' ? { clipNorm: 2 } : {}) });
    fc.assert(
      fc.property(fc.array(row, { minLength: 2, maxLength: 20 }), fc.nat(), extreme, (rows, k, replacement) => {
        const index = k % rows.length;
        const neighbour = rows.map((r, i) => (i === index ? replacement : r));
        const a = applySchema(parseCsv(toCsv(rows), schemaCsvOptions(s)), s).dataset;
        const b = applySchema(parseCsv(toCsv(neighbour), schemaCsvOptions(s)), s).dataset;
        assert.equal(a.n, b.n);
        for (let i = 0; i < rows.length; i++) {
          if (i === index) continue;
          assert.deepEqual(Array.from(rowView(b, i)), Array.from(rowView(a, i)), `row ${i} changed`);
          assert.equal(b.y[i], a.y[i]);
        }
        // The replaced row obeys the public bound too.
        assert.ok(Math.hypot(...rowView(b, index)) <= schemaRowNormBound(s));
      }),
      { seed: 11, numRuns: 150 },
    );
  }
});

test('a suggested schema reads the data: it says so, and an extreme row would move every other row', () => {
  const table = parseCsv(encode('age,city,label\n30,Paris,1\n40,Rome,0\n50,Paris,1\n'), { source: 'private.csv' });
  const { schema, warning } = suggestSchema(table, { label: 'label' });
  assert.equal(warning, SUGGESTION_WARNING);
  assert.match(warning, /READING THE PRIVATE DATA/);
  assert.ok(isSuggestedSchema(schema));
  assert.equal(schema.warning, SUGGESTION_WARNING);
  const json = schemaToJson(schema);
  assert.equal(json.provenance, 'suggested-from-private-data');
  assert.deepEqual(json.columns, [
    { name: 'age', type: 'numeric', lower: 30, upper: 50, scale: 'unit', missing: 'error', note: 'SUGGESTED FROM THE DATA: replace by public bounds' },
    { name: 'city', type: 'categorical', categories: ['Paris', 'Rome'], missing: 'other', note: 'SUGGESTED FROM THE DATA: replace by the public category list' },
    { name: 'label', type: 'label', positive: [1], negative: [0], encoding: 'zeroOne', missing: 'error', note: 'SUGGESTED FROM THE DATA: check the classes' },
  ]);
  // Why it must not be used for training: the bounds follow the data, so one extreme record
  // changes how every other record is scaled (here row 0's age feature).
  const before = applySchema(table, parseSchema({ ...json, rowTransform: 'none' }));
  const neighbour = parseCsv(encode('age,city,label\n30,Paris,1\n40,Rome,0\n1000,Paris,1\n'));
  const resuggested = suggestSchema(neighbour, { label: 'label' }).schema;
  const after = applySchema(neighbour, parseSchema({ ...schemaToJson(resuggested), rowTransform: 'none' }));
  assert.notEqual(after.dataset.x[after.dataset.d * 1], before.dataset.x[before.dataset.d * 1]);
  // The JSON round-trips and keeps its provenance.
  assert.ok(isSuggestedSchema(parseSchema(JSON.parse(JSON.stringify(json)))));
});

test('label, missing-value and schema errors are one clear DataFormatError each', () => {
  const schema = parseSchema({ ...PEOPLE_SCHEMA, columns: PEOPLE_SCHEMA.columns.map((c) => (c.name === 'age' ? { ...c, missing: 'error' } : c)) });
  throwsData(() => applySchema(people(['30,40,Male,1,>50K', '31,40,Male,2,>60K'], schema), schema), /^people\.csv, line 3, column 'income': a label value that the schema does not declare \(positive: ">50K"; negative: "<=50K"\)$/);
  throwsData(() => applySchema(people(['30,40,Male,1,?'], schema), schema), /line 2, column 'income': missing label/);
  throwsData(() => applySchema(people([',40,Male,1,>50K'], schema), schema), /line 2, column 'age': missing value \(the schema says "missing": "error"\)/);
  const other = parseCsv(encode('a,b\n1,2\n'), { source: 'other.csv' });
  throwsData(() => applySchema(other, schema), /^other\.csv: the data have no column named 'age' \(the file's own column names are not shown: they are read from the file\)$/);
  // Schema validation.
  const bad = (json: unknown, pattern: RegExp): void => throwsData(() => parseSchema(json, 's.json'), pattern);
  bad({ ...PEOPLE_SCHEMA, version: 2 }, /^s\.json: version: must be 1, got 2$/);
  bad({ ...PEOPLE_SCHEMA, columns: [{ name: 'age', type: 'numeric', lower: 5, upper: 5 }, PEOPLE_SCHEMA.columns[4]] }, /column 'age': lower \(5\) must be < upper \(5\)/);
  bad({ ...PEOPLE_SCHEMA, columns: [{ name: 'age', type: 'numeric', lower: 0, upper: 'x' }, PEOPLE_SCHEMA.columns[4]] }, /column 'age'\.upper: must be a finite number/);
  bad({ ...PEOPLE_SCHEMA, columns: PEOPLE_SCHEMA.columns.slice(0, 4) }, /exactly one column of type "label", found 0/);
  bad({ ...PEOPLE_SCHEMA, columns: [PEOPLE_SCHEMA.columns[0], { name: 'y', type: 'label', positive: ['1'] }] }, /needs both "positive" and "negative"/);
  bad({ ...PEOPLE_SCHEMA, columns: [PEOPLE_SCHEMA.columns[0], { name: 'y', type: 'label', positive: ['1'], negative: ['1'] }] }, /"1" is both positive and negative/);
  bad({ ...PEOPLE_SCHEMA, columns: [{ name: 'sex', type: 'categorical', categories: ['a', 'a'] }, PEOPLE_SCHEMA.columns[4]] }, /lists "a" twice/);
  bad({ ...PEOPLE_SCHEMA, columns: [{ name: 'sex', type: 'categorical', categories: ['a'], missing: 'fill' }, PEOPLE_SCHEMA.columns[4]] }, /must be one of "error", "dropRow", "other"/);
  bad({ ...PEOPLE_SCHEMA, rowTransform: 'clip' }, /clipNorm: must be a finite number/);
  bad({ ...PEOPLE_SCHEMA, bounds: 1 }, /unknown field "bounds"/);
  bad([], /must be a JSON object/);
});

test('dropRow removes rows without touching the others (and says how many were dropped)', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'age', type: 'numeric', lower: 18, upper: 90, missing: 'dropRow' },
      { name: 'hours', type: 'numeric', lower: 0, upper: 100 },
      { name: 'sex', type: 'categorical', categories: ['Female', 'Male'], missing: 'dropRow' },
      { name: 'id', type: 'ignore' },
      { name: 'income', type: 'label', positive: ['>50K'], negative: ['<=50K'], missing: 'dropRow' },
    ],
    rowTransform: 'none',
  });
  // Row 2 is dropped after its hours were written, row 3 after its age was: no leftovers may remain.
  const table = people(['54,50,Male,1,>50K', '54,50,?,2,>50K', ',100,Female,3,<=50K', '90,0,Female,4,?', '18,100,Female,5,<=50K'], schema);
  const prepared = applySchema(table, schema);
  assert.equal(prepared.dataset.n, 2);
  assert.equal(prepared.privateDiagnostics.droppedRows, 3);
  assert.deepEqual(Array.from(prepared.dataset.x), [0.5, 0.5, 0, 1, 0, 0, 1, 1, 0, 0]);
  assert.deepEqual(Array.from(prepared.dataset.y), [1, 0]);
});

test('numeric labels are clipped to their bounds; numeric binary labels and ±1 encoding', () => {
  const regression = parseSchema({ version: 1, columns: [{ name: 'x', type: 'numeric', lower: 0, upper: 1 }, { name: 'y', type: 'label', lower: -2, upper: 2 }] });
  const r = applySchema(parseCsv(encode('x,y\n0.5,3\n0.5,-1\n'), schemaCsvOptions(regression)), regression);
  assert.deepEqual(Array.from(r.dataset.y), [2, -1]);
  assert.equal(r.labelBound, 2);
  const binary = parseSchema({ version: 1, columns: [{ name: 'x', type: 'numeric', lower: 0, upper: 1 }, { name: 'y', type: 'label', positive: [1], negative: [-1, 0], encoding: 'plusMinusOne' }] });
  assert.deepEqual(schemaCsvOptions(binary).columnTypes, { x: 'numeric', y: 'numeric' });
  const b = applySchema(parseCsv(encode('x,y\n0.5,1\n0.5,0\n0.5,-1\n'), schemaCsvOptions(binary)), binary);
  assert.deepEqual(Array.from(b.dataset.y), [1, -1, -1]);
});

test('the shipped Adult schema: 14 attributes from adult.names, 146 features, label >50K with or without the trailing dot', () => {
  const schema = adultSchema();
  const attributes = schema.columns.filter((c) => c.type !== 'label');
  assert.equal(attributes.length, 14);
  // 13 age bins + fnlwgt + education-num + 2 x (log1p value + 7 dollar bands) + 7 hour bands = 38,
  // 99 categories + 8 other slots = 107, bias 1 (see adult.ts).
  assert.equal(ADULT_DOCUMENTED.featureCount, 146);
  assert.equal(schemaFeatureNames(schema).length, ADULT_DOCUMENTED.featureCount);
  assert.equal(schemaFeatureNames(schema).at(-1), '(intercept)');
  // 003 Sec. 5: unit rows plus a bias of 1, so C = sqrt(2) bounds every logistic gradient.
  assert.ok(schemaRowNormBound(schema) >= Math.SQRT2 && schemaRowNormBound(schema) < Math.SQRT2 * (1 + 1e-14));
  assert.equal(schema.csv?.header, false);
  // Every bound and list carries its public source.
  for (const c of schema.columns) assert.ok(c.note !== undefined && c.note.length > 10, c.name);
  assert.deepEqual(JSON.parse(JSON.stringify(ADULT_SCHEMA_JSON)), ADULT_SCHEMA_JSON);
  // A small file in the original layout of adult.test: comment line, no header, dots, "?" values, blank line at the end.
  const text = [
    '|1x3 Cross validator',
    '25, Private, 226802, 11th, 7, Never-married, Machine-op-inspct, Own-child, Black, Male, 0, 0, 40, United-States, <=50K.',
    '38, ?, 89814, HS-grad, 9, Married-civ-spouse, ?, Husband, White, Male, 0, 0, 50, ?, >50K.',
    '95, Self-emp-inc, 3000000, Doctorate, 16, Divorced, Prof-specialty, Unmarried, Other, Female, 150000, 5000, 99, Holand-Netherlands, >50K',
    '',
    '',
  ].join('\n');
  const table = parseCsv(encode(text), schemaCsvOptions(schema, 'adult.test'));
  const prepared = applySchema(table, schema);
  assert.equal(prepared.dataset.n, 3);
  assert.equal(prepared.dataset.d, 146);
  assert.deepEqual(Array.from(prepared.dataset.y), [0, 1, 1]);
  assert.ok(maxRowNorm(prepared.dataset) <= prepared.rowNormBound);
  const names = prepared.dataset.featureNames;
  const at = (i: number, name: string): number => prepared.dataset.x[i * prepared.dataset.d + names.indexOf(name)];
  for (let i = 0; i < 3; i++) {
    assert.equal(at(i, '(intercept)'), 1);
    // Rows without the bias have unit norm (a row of 14 attributes is never all zero).
    const row = Array.from(rowView(prepared.dataset, i)).slice(0, -1);
    assert.ok(Math.abs(Math.hypot(...row) - 1) < 1e-14);
  }
  // Row 0: age 25 in [25,30), 40 hours in [40,41), no capital gain: the [0,1) band and log1p value 0.
  assert.ok(at(0, 'age=[25,30)') > 0 && at(0, 'hours-per-week=[40,41)') > 0 && at(0, 'capital-gain=[0,1)') > 0);
  assert.equal(at(0, 'log1p(capital-gain)'), 0);
  // Row 2: age 95 -> 90 in [75,90]; capital-gain 150000 -> top-code 99999 alone, value 1 before
  // normalisation; capital-loss 5000 in [3000,10000); 99 hours in [60,99].
  assert.ok(at(2, 'age=[75,90]') > 0 && at(2, 'capital-gain=[99999,99999]') > 0 && at(2, 'capital-loss=[3000,10000)') > 0 && at(2, 'hours-per-week=[60,99]') > 0);
  assert.equal(at(2, 'log1p(capital-gain)'), at(2, 'capital-gain=[99999,99999]'));
  assert.deepEqual(prepared.privateDiagnostics.other, {
    workclass: 1,
    education: 0,
    'marital-status': 0,
    occupation: 1,
    relationship: 0,
    race: 0,
    sex: 0,
    'native-country': 1,
  });
  assert.deepEqual(prepared.privateDiagnostics.clipped, { age: 1, fnlwgt: 1, 'education-num': 0, 'capital-gain': 1, 'capital-loss': 0, 'hours-per-week': 0 });
  const summary = inspectTable(table, schema);
  assert.equal(summary.readsPrivateData, true);
  assert.equal(summary.schema?.featureCount, 146);
  assert.equal(summary.schema?.positives, 2);
});

test('local copies of Adult with an added header line are restored to the original bytes before checksumming', () => {
  const original = encode('39, State-gov, 77516, Bachelors\n\n');
  const withHeader = encode(`age,workclass,fnlwgt,education\n39, State-gov, 77516, Bachelors\n\n`);
  assert.deepEqual(normalizeAdultCopy('adult.data', original), { bytes: original, changes: [] });
  const restored = normalizeAdultCopy('adult.data', withHeader);
  assert.deepEqual(Buffer.from(restored.bytes).toString(), '39, State-gov, 77516, Bachelors\n\n');
  assert.deepEqual(restored.changes, ['removed an added header line']);
  // adult.test: the header replaced the original first line, which is put back.
  const test = normalizeAdultCopy('adult.test', encode('age, workclass\n25, Private\n'));
  assert.equal(Buffer.from(test.bytes).toString(), '|1x3 Cross validator\n25, Private\n');
  const testOriginal = encode('|1x3 Cross validator\n25, Private\n');
  assert.equal(normalizeAdultCopy('adult.test', testOriginal).bytes, testOriginal);
  // The pinned digests are SHA-256 (64 hex digits) with the sizes of UCI's listing.
  assert.deepEqual(
    ADULT_FILES.map((f) => [f.name, f.size, /^[0-9a-f]{64}$/.test(f.sha256)]),
    [
      ['adult.data', 3974305, true],
      ['adult.test', 2003153, true],
      ['adult.names', 5229, true],
    ],
  );
});

test('a multi-class label: "classes" encodes y as the class index; unknown values and mixed declarations are refused', () => {
  const schema = parseSchema({
    version: 1,
    columns: [
      { name: 'v', type: 'numeric', lower: 0, upper: 1 },
      { name: 'species', type: 'label', classes: ['setosa', 'versicolor', 'virginica'] },
    ],
  });
  const table = parseCsv(new TextEncoder().encode('v,species\n0.5,virginica\n0.1,setosa\n0.2,versicolor\n'), schemaCsvOptions(schema));
  const { dataset } = applySchema(table, schema);
  assert.deepEqual(Array.from(dataset.y), [2, 0, 1]);
  assert.equal(parseSchema(schemaToJson(schema)).columns[1].type, 'label', 'a serialised schema round-trips');
  assert.equal(parseSchema(JSON.parse(JSON.stringify(schema))).columns[1].type, 'label', 'the parsed object (as embedded in a model) round-trips');
  assert.throws(() => applySchema(parseCsv(new TextEncoder().encode('v,species\n0.5,rose\n'), schemaCsvOptions(schema)), schema), /^(?!.*rose).*a label value that the schema does not declare \(classes: "setosa"/);
  const bad = (label: Record<string, unknown>) => () => parseSchema({ version: 1, columns: [{ name: 'v', type: 'numeric', lower: 0, upper: 1 }, { name: 'c', type: 'label', ...label }] });
  assert.throws(bad({ classes: ['a'] }), /at least two classes/);
  assert.throws(bad({ classes: ['a', 'a'] }), /repeat/);
  assert.throws(bad({ classes: ['a', 'b'], positive: ['a'] }), /"classes" only/);
});
