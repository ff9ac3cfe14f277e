import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { CsvParser, guessColumnTypes, parseCsv, type CsvColumnType, type CsvOptions } from '../../src/data/csv.js';
import { parseLibsvm } from '../../src/data/libsvm.js';
import { parseDecimalBytes } from '../../src/data/parse-number.js';
import type { RawTable } from '../../src/data/table.js';
import { DataFormatError } from '../../src/errors.js';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);

/** A table as plain values: numeric columns as number arrays (null = missing), text columns as strings. */
function plain(table: RawTable): Record<string, (number | string | null)[]> {
  const out: Record<string, (number | string | null)[]> = {};
  for (const c of table.columns) {
    if (c.kind === 'numeric') out[c.name] = Array.from(c.values, (v) => (Number.isNaN(v) ? null : v));
    else out[c.name] = Array.from(c.codes, (k) => (k < 0 ? null : c.levels[k]));
  }
  return out;
}

function throwsData(run: () => unknown, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof DataFormatError, `expected a DataFormatError, got ${String(error)}`);
    assert.match(error.message, pattern);
    return true;
  });
}

test('parseDecimalBytes agrees with Number() on the decimal grammar, bit for bit', () => {
  const check = (text: string): void => {
    const got = parseDecimalBytes(encode(text), 0, text.length);
    const expected = Number.isFinite(Number(text)) ? Number(text) : NaN; // overflow is not a number
    assert.ok(Object.is(got, expected), `${text}: ${got} vs ${expected}`);
  };
  for (const text of ['0', '-0', '+7', '.5', '5.', '1e5', '1E-5', '-1.25e3', '0.1', '0.30000000000000004', '9007199254740993', '123456789012345678901234567890', '1e-320', '2.2250738585072014e-308', '1.7976931348623157e308', '000123.4500']) check(text);
  // Random doubles in their shortest form, in fixed notation with 6 decimals, and random digit strings.
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
      check(String(x));
      if (Math.abs(x) < 1e15) check(x.toFixed(6));
    }),
    { seed: 42, numRuns: 3000 },
  );
  fc.assert(
    fc.property(fc.stringMatching(/^-?[0-9]{1,25}(\.[0-9]{0,25})?(e-?[0-9]{1,3})?$/), (text) => check(text)),
    { seed: 7, numRuns: 3000 },
  );
  for (const bad of ['', '-', '.', 'e5', '1e', '1e+', 'NaN', 'Infinity', '-Infinity', '0x10', '1_000', '1,5', '1.2.3', ' 1', '1 ', '1e400', '--1']) {
    assert.ok(Number.isNaN(parseDecimalBytes(encode(bad), 0, bad.length)), bad);
  }
});

test('CSV: header, comma-space separators, quotes, CRLF, blank lines, BOM, missing tokens, inferred types', () => {
  const text = '\ufeffage, sex ,note\r\n39, Male, "a, ""quoted"" word"\r\n\r\n50,Female,?\n   \n7, ?,"two\nlines"\n-1.5e2,"Male",""\n';
  const table = parseCsv(encode(text), { source: 'people.csv' });
  assert.equal(table.source, 'people.csv');
  assert.equal(table.rowCount, 4);
  assert.deepEqual(plain(table), {
    age: [39, 50, 7, -150],
    sex: ['Male', 'Female', null, 'Male'],
    note: ['a, "quoted" word', null, 'two\nlines', null],
  });
  // Each row remembers the line it starts on (blank lines and the quoted newline are counted).
  assert.deepEqual(Array.from(table.rowLines ?? []), [2, 4, 6, 8]);
});

test('CSV: declared types, skipped columns, other delimiters, comment lines, header-less files', () => {
  const declared = parseCsv(encode('a;b;c\n1;x;2\n3;y;4\n'), { delimiter: ';', columnTypes: { a: 'categorical', b: 'skip' } });
  assert.deepEqual(plain(declared), { a: ['1', '3'], c: [2, 4] });
  // UCI's adult.test: a comment line first, no header, a trailing dot on labels, a blank last line.
  const headerless = parseCsv(encode('|1x3 Cross validator\n25, Private, >50K.\n38, ?, <=50K.\n\n'), {
    header: false,
    comment: '|',
    columnNames: ['age', 'workclass', 'income'],
  });
  assert.deepEqual(plain(headerless), { age: [25, 38], workclass: ['Private', null], income: ['>50K.', '<=50K.'] });
  const unnamed = parseCsv(encode('1,2\n3,4\n'), { header: false });
  assert.deepEqual(plain(unnamed), { column1: [1, 3], column2: [2, 4] });
  // A missing token that spells a number is honoured in numeric columns.
  const sentinel = parseCsv(encode('v\n-999\n5\n'), { missing: ['-999'], columnTypes: 'numeric' });
  assert.deepEqual(plain(sentinel), { v: [null, 5] });
  // Tabs: a tab delimiter is never trimmed away.
  assert.deepEqual(plain(parseCsv(encode('a\tb\n1\t\n'), { delimiter: '\t' })), { a: [1], b: [null] });
});

test('CSV errors name the source, the line and the column', () => {
  throwsData(() => parseCsv(encode('age,sex\n39,Male\n40\n'), { source: 'ragged.csv' }), /^ragged\.csv, line 3: expected 2 fields as in the header, found 1$/);
  throwsData(() => parseCsv(encode('age,sex\n39,Male,extra\n'), { source: 'ragged.csv' }), /line 2: expected 2 fields as in the header, found 3/);
  const lines = ['age,sex', ...Array.from({ length: 1040 }, () => '30,Male'), 'abc,Male'];
  throwsData(() => parseCsv(encode(lines.join('\n')), { source: 'p.csv', columnTypes: { age: 'numeric' } }), /^p\.csv, line 1042, column 'age': a value is not a number$/);
  throwsData(() => parseCsv(encode(''), { source: 'empty.csv' }), /^empty\.csv: the file is empty/);
  throwsData(() => parseCsv(encode('\n\n  \n'), { source: 'blank.csv' }), /the file is empty/);
  throwsData(() => parseCsv(encode('a,b\n'), { source: 'h.csv' }), /has a header but no data rows/);
  throwsData(() => parseCsv(encode('a,b\n1,"open\n2,3\n'), { source: 'q.csv' }), /^q\.csv, line 2: a quoted field is not closed/);
  throwsData(() => parseCsv(encode('a,b\n1,"x"y\n'), { source: 'q.csv' }), /^(?!.*"y").*line 2, column 'b': a character follows a closing quote/);
  throwsData(() => parseCsv(encode('a,a\n1,2\n')), /^(?!.*'a').*a column name appears twice in the first line/);
  throwsData(() => parseCsv(encode('a,b\n1,2\n'), { columnTypes: { c: 'numeric' } }), /^(?!.*\bb\b).*the file's first line does not contain the schema's column 'c'/);
  throwsData(() => parseCsv(encode('a\n1e999\n'), { columnTypes: 'numeric' }), /^(?!.*1e999).*a value is not a number$/);
  throwsData(() => parseCsv(encode('a\nNaN\n'), { columnTypes: 'numeric' }), /^(?!.*NaN).*a value is not a number$/);
});

test('types guessed from the first MiB are confirmed: a column numeric there but text later is read as text', () => {
  const rows = Array.from({ length: 150_000 }, (_, i) => `${i},${i % 10}`);
  rows.push('later-text,7');
  const table = parseCsv(encode(['id,v', ...rows].join('\n')));
  assert.ok(encode(rows.join('\n')).length > 1 << 20, 'beyond the sample');
  const id = table.columns[0];
  assert.equal(id.kind, 'categorical');
  assert.equal(id.kind === 'categorical' ? id.levels[id.codes[150_000]] : '', 'later-text');
  assert.equal(id.kind === 'categorical' ? id.levels[id.codes[12]] : '', '12');
  assert.equal(table.columns[1].kind, 'numeric');
  // Declared numeric columns are not guesses: the same data is an error there.
  assert.throws(() => parseCsv(encode(['id,v', ...rows].join('\n')), { columnTypes: { id: 'numeric' } }), /^(?!.*later-text).*line 150002, column 'id': a value is not a number/);
});

/** Feeds `bytes` to a parser in the pieces given by `cuts`, the way the Node reader does. */
function parseInPieces(bytes: Uint8Array, options: CsvOptions, cuts: number[]): RawTable {
  const run = (types?: ReturnType<CsvParser['inferredTypes']>): CsvParser => {
    const parser = new CsvParser(options, types);
    let buffer = new Uint8Array(0);
    let offset = 0;
    const points = [...new Set(cuts.map((c) => Math.min(c, bytes.length)))].sort((a, b) => a - b);
    for (const cut of [...points, bytes.length]) {
      const next = new Uint8Array(buffer.length + (cut - offset));
      next.set(buffer, 0);
      next.set(bytes.subarray(offset, cut), buffer.length);
      offset = cut;
      const final = cut === bytes.length;
      const consumed = parser.consume(next, 0, next.length, final);
      buffer = next.slice(consumed);
      if (final) break;
    }
    return parser;
  };
  const first = run();
  if (!first.needsInference()) return first.finish();
  return run(first.inferredTypes()).finish();
}

test('CSV fed in arbitrary chunks gives the same table as all at once (what streaming relies on)', () => {
  const cell = fc.oneof(
    fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map((x) => String(x)),
    fc.integer({ min: -1000, max: 1000 }).map(String),
    fc.constantFrom('?', '', ' Male', 'Female ', '"a, b"', '"x ""y"" z"', '"two\nlines"', '"three\r\nline\rends"', 'Zürich'),
  );
  const csv = fc
    .tuple(fc.integer({ min: 1, max: 4 }), fc.integer({ min: 1, max: 8 }))
    .chain(([cols, rows]) =>
      fc.tuple(
        fc.constant(cols),
        fc.array(fc.array(cell, { minLength: cols, maxLength: cols }), { minLength: rows, maxLength: rows }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(400), { maxLength: 6 }),
      ),
    );
  fc.assert(
    fc.property(csv, ([cols, rows, eol, cuts]) => {
      const header = Array.from({ length: cols }, (_, j) => `c${j}`).join(',');
      const text = [header, ...rows.map((r) => r.join(','))].join(eol) + eol;
      const bytes = encode(text);
      const outcome = (read: () => RawTable): unknown => {
        try {
          const table = read();
          return { table: plain(table), lines: Array.from(table.rowLines ?? []) };
        } catch (error) {
          return { error: (error as Error).message }; // e.g. every row blank: "no data rows" both ways
        }
      };
      assert.deepEqual(
        outcome(() => parseInPieces(bytes, { source: 's' }, cuts)),
        outcome(() => parseCsv(bytes, { source: 's' })),
      );
    }),
    { seed: 2026, numRuns: 400 },
  );
});

test('LIBSVM: sparse rows to dense, qid ignored, comments, positive label mapping, errors with line and feature', () => {
  const text = '# a comment line\n+1 1:0.5 3:1 # trailing comment\n-1 qid:3 2:2\n\n0 \n';
  const data = parseLibsvm(encode(text), { positiveLabel: 1 });
  assert.equal(data.n, 3);
  assert.equal(data.d, 3);
  assert.deepEqual(Array.from(data.x), [0.5, 0, 1, 0, 2, 0, 0, 0, 0]);
  assert.deepEqual(Array.from(data.y), [1, 0, 0]);
  assert.deepEqual(data.featureNames, ['f1', 'f2', 'f3']);
  const wide = parseLibsvm(encode('2 1:1\n'), { numFeatures: 5 });
  assert.equal(wide.d, 5);
  assert.deepEqual(Array.from(wide.y), [2]);
  throwsData(() => parseLibsvm(encode('1 1:1\n1 2:x\n'), { source: 'a.svm' }), /^a\.svm, line 2, column 'f2': a value is not a number$/);
  throwsData(() => parseLibsvm(encode('1 3:1 2:1\n'), { source: 'a.svm' }), /line 1: feature indices must increase/);
  throwsData(() => parseLibsvm(encode('1 0:1\n'), { source: 'a.svm' }), /a feature index is not an integer >= 1$/);
  throwsData(() => parseLibsvm(encode('1 7:1\n'), { numFeatures: 5 }), /^(?!.*7).*a feature index is above numFeatures 5$/);
  throwsData(() => parseLibsvm(encode('abc 1:1\n'), { source: 'a.svm' }), /^(?!.*abc).*line 1, column 'label': the label is not a number$/);
  throwsData(() => parseLibsvm(encode('1 1=2\n')), /^(?!.*1=2).*a field is not an index:value pair$/);
  throwsData(() => parseLibsvm(encode('\n# only comments\n'), { source: 'e.svm' }), /^e\.svm: the file is empty/);
});

test('numbers in a declared numeric column are Number(text) bit for bit (the parser\'s fused fast path and its fallback)', () => {
  // Each text before a delimiter, before CR LF, before LF, before CR, and at the end of the input.
  const check = (texts: readonly string[]): void => {
    const ends = ['\r\n', '\n', '\r'];
    const text = `a,b\n${texts.map((t, i) => `${t},${t}${i + 1 < texts.length ? ends[i % 3] : ''}`).join('')}`;
    const table = parseCsv(encode(text), { columnTypes: 'numeric' });
    for (const column of table.columns) {
      const values = (column as { values: Float64Array }).values;
      texts.forEach((t, i) => {
        const expected = Number(t);
        assert.ok(Object.is(values[i], Number.isFinite(expected) ? expected : NaN), `${t}: ${values[i]} vs ${expected}`);
      });
    }
  };
  // Significands of 8, 9, 10 digits (the integer accumulator hands over to the double at 9), 15 and 16 (the fast path's limit), 22 and 23 decimals.
  check(['0', '-0', '+7', '.5', '5.', '-.5', '12345678', '123456789', '1234567890', '-999999999', '9999999999', '0.123456789', '0.1234567890', '123456789012345', '1234567890123456', '9007199254740993', '0.9999999999999999', '1.000000000000001', '0.0000000000000000000001', '0.00000000000000000000001', '000123.4500', '0.832529', '-0.966021', '1e5', '-1.25e3', '2.2250738585072014e-308']);
  fc.assert(
    fc.property(fc.array(fc.stringMatching(/^[-+]?[0-9]{0,17}(\.[0-9]{0,24})?$/).filter((t) => /[0-9]/.test(t)), { minLength: 1, maxLength: 20 }), (texts) => check(texts)),
    { seed: 28, numRuns: 2000 },
  );
  fc.assert(
    fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }).chain((x) => fc.constantFrom(String(x), Math.abs(x) < 1e15 ? x.toFixed(6) : String(x))), { minLength: 1, maxLength: 20 }), (texts) => check(texts)),
    { seed: 29, numRuns: 1000 },
  );
});

test('the numeric fast path reads no byte past the end it is given, and takes a sign only once', () => {
  // A reused buffer holds digits past \`end\` (the file reader's next bytes): the last record, with no
  // line break after it, ends at \`end\`; a number before the last break ends at that break.
  const bytes = encode('a,b\n1.5,-2\n-0.25,+3.5\n7,8999');
  for (const [end, final, expected] of [[bytes.length - 3, true, [1.5, -2, -0.25, 3.5, 7, 8]], [bytes.length - 6, false, [1.5, -2, -0.25, 3.5]]] as const) {
    const parser = new CsvParser({ columnTypes: 'numeric', source: 's' });
    parser.consume(bytes, 0, end, final);
    const table = parser.finish();
    const values = table.columns.flatMap((c) => Array.from((c as { values: Float64Array }).values));
    const rows = table.rowCount;
    assert.deepEqual(Array.from({ length: rows * 2 }, (_, k) => values[(k % 2) * rows + Math.floor(k / 2)]), expected);
  }
  // Two signs are not a number (as Number() says), whatever their order.
  for (const text of ['-+1', '+-1', '--1', '++1', '-', '+', '-.', '+.5']) {
    const table = parseCsv(encode(`a,b\n${text},1\n`), { columnTypes: { a: 'categorical', b: 'numeric' } });
    assert.equal(table.rowCount, 1);
    throwsOrEqual(text);
  }
});

/** A numeric column holding \`text\`: its Number() value, or the "not a number" error when Number() is NaN. */
function throwsOrEqual(text: string): void {
  const read = (): number => (parseCsv(encode(`a,b\n${text},1\n2,3\n`), { columnTypes: 'numeric', source: 's' }).columns[0] as { values: Float64Array }).values[0];
  const expected = Number(text);
  if (Number.isNaN(expected)) throwsData(read, /line 2, column 'a': a value is not a number/);
  else assert.ok(Object.is(read(), expected), text);
}

test('text levels are the same when the parser is fed from one reused buffer, as the file reader does (levels matched by their bytes)', () => {
  // Many levels (more than are matched by bytes), UTF-8, quoted and escaped ones, the same text quoted and not.
  const level = fc.constantFrom('yes', 'no', 'Zürich', 'Zurich', '"yes"', '"a ""b"""', 'a "b"', 'é', 'e', ...Array.from({ length: 30 }, (_, k) => `L${k}`));
  fc.assert(
    fc.property(fc.array(fc.tuple(level, level), { minLength: 1, maxLength: 200 }), fc.integer({ min: 8, max: 64 }), (rows, size) => {
      const bytes = encode(`u,v\n${rows.map(([u, v]) => `${u},${v}`).join('\n')}\n`);
      const parser = new CsvParser({ source: 's', columnTypes: { u: 'categorical', v: 'categorical' } });
      // One buffer, overwritten by each read (streamFile's way): what the parser keeps must not point into it.
      let buffer = Buffer.alloc(size);
      let filled = 0;
      let offset = 0;
      while (offset < bytes.length || filled > 0) {
        if (filled === buffer.length) {
          const bigger = Buffer.alloc(buffer.length * 2);
          bigger.set(buffer);
          buffer = bigger;
        }
        const take = Math.min(buffer.length - filled, bytes.length - offset);
        buffer.set(bytes.subarray(offset, offset + take), filled);
        filled += take;
        offset += take;
        const final = offset === bytes.length;
        const consumed = parser.consume(buffer, 0, filled, final);
        buffer.copyWithin(0, consumed, filled);
        buffer.fill(0x41, filled - consumed); // scribble over the bytes just consumed
        filled -= consumed;
        if (final) break;
      }
      assert.deepEqual(plain(parser.finish()), plain(parseCsv(bytes, { source: 's', columnTypes: { u: 'categorical', v: 'categorical' } })));
    }),
    { seed: 30, numRuns: 300 },
  );
});

test('guessColumnTypes gives the answer of a whole inferring pass, reading only the header when every column is declared', () => {
  // The reference: the sample parsed whole by an inferring parser (what guessColumnTypes did for every file).
  const reference = (sample: Uint8Array, options: CsvOptions, whole: boolean): unknown => {
    const parser = new CsvParser(options);
    parser.consume(sample, 0, sample.length, whole);
    if (!parser.hasColumns()) return undefined;
    return { types: parser.inferredTypes(), guessed: whole ? parser.inferredTypes().map(() => false) : parser.numericGuesses() };
  };
  const cell = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 }).map(String), fc.constantFrom('?', '', 'a', '"b, c"', '7'));
  const type = fc.constantFrom<CsvColumnType | undefined>('numeric', 'categorical', 'skip', undefined);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 4 }).chain((cols) => fc.tuple(fc.array(fc.array(cell, { minLength: cols, maxLength: cols }), { maxLength: 6 }), fc.array(type, { minLength: cols, maxLength: cols }), fc.boolean(), fc.boolean(), fc.nat(200))), ([rows, types, header, whole, cut]) => {
      const cols = types.length;
      const names = Array.from({ length: cols }, (_, j) => `c${j}`);
      const text = [...(header ? [names.join(',')] : []), ...rows.map((r) => r.join(','))].join('\n') + '\n';
      const bytes = encode(text);
      const sample = whole ? bytes : bytes.subarray(0, Math.min(cut, bytes.length));
      const columnTypes = Object.fromEntries(names.flatMap((name, j) => (types[j] === undefined ? [] : [[name, types[j]]])));
      const options: CsvOptions = { source: 's', header, columnTypes, ...(header ? {} : { columnNames: names }) };
      const outcome = (run: () => unknown): unknown => {
        try {
          return run();
        } catch (error) {
          return { error: (error as Error).message };
        }
      };
      const expected = outcome(() => reference(sample, options, whole));
      const got = outcome(() => guessColumnTypes(sample, options, whole));
      if (expected !== undefined && 'error' in (expected as object) && !(got !== undefined && 'error' in (got as object))) {
        // The whole pass met a bad record in the sample; reading the header alone did not: the
        // reader's real pass (these types, from the first byte) meets it first, the same error.
        const { types: guessedTypes } = got as { types: CsvColumnType[] };
        assert.deepEqual(outcome(() => new CsvParser(options, guessedTypes).consume(sample, 0, sample.length, whole)), expected);
      } else assert.deepEqual(got, expected);
    }),
    { seed: 31, numRuns: 1000 },
  );
});
