/**
 * The CLI's number parsing (src/cli/io.ts): decimals only. `Number()` reads "0x10" as 16, "0b1",
 * "0o7", and a blank string as 0; dpfit's flags refuse them, naming the flag and the text.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { parseOrdersFlag } from '../../src/cli/event-input.js';
import { parseDecimal, parseIntegerFlag, parseNumberFlag } from '../../src/cli/io.js';
import { peopleFixture, runCli } from '../helpers/people.js';

test('parseDecimal equals Number() on every decimal text, and is NaN on hex, octal, binary, blank and named numbers', () => {
  // Any double printed by JavaScript (shortest round trip, exponent forms included), with a sign and blanks around.
  fc.assert(
    fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom('', '+'), fc.constantFrom('', ' '), (x, sign, blank) => {
      const text = `${blank}${x < 0 || Object.is(x, -0) ? '' : sign}${String(x)}${blank}`;
      assert.ok(Object.is(parseDecimal(text), Number(text)), text);
    }),
    { seed: 27, numRuns: 2000 },
  );
  for (const text of ['.5', '5.', '1e5', '1E-5', '-0.25e+2', '007']) assert.equal(parseDecimal(text), Number(text), text);
  for (const text of ['0x10', '0X1f', '0b1', '0o7', '', ' ', 'Infinity', '-Infinity', 'NaN', '1_000', '1e', 'e5', '.', '--1', '1,5', '１']) {
    assert.ok(Number.isNaN(parseDecimal(text)), text);
  }
});

test('number flags refuse what is not a decimal, naming the flag and the text', () => {
  assert.throws(() => parseNumberFlag('--epsilon')('0x10'), /^InvalidParameterError: --epsilon must be a finite decimal number \(e\.g\. 0\.5 or 1e-5\), got "0x10"$/);
  assert.throws(() => parseNumberFlag('--epsilon')(' '), /--epsilon must be a finite decimal number/);
  assert.throws(() => parseIntegerFlag('--steps')('0x10'), /--steps must be a finite decimal number/);
  assert.throws(() => parseOrdersFlag('2,0x10'), /--orders\[1\] must be a Rényi order > 1, got "0x10"/);
  assert.equal(parseNumberFlag('--epsilon')('16'), 16);
  assert.equal(parseIntegerFlag('--steps')('1e3'), 1000);
  assert.deepEqual(parseOrdersFlag('2, 4.5,inf'), [2, 4.5, Infinity]);
});

test('dpfit --epsilon 0x10 is refused (exit 2, one line), not read as 16', async () => {
  const { data, schema } = peopleFixture('dpfit-io-', 20, 1);
  for (const argv of [['calibrate', 'gaussian', '--epsilon', '0x10'], ['demo', '--epsilon', '0x10'], ['train', '--data', data, '--schema', schema, '--epsilon', '0x10']]) {
    const result = await runCli(...argv);
    assert.equal(result.code, 2, `${argv[0]}: ${result.stdout}${result.stderr}`);
    assert.equal(result.stdout, '');
    assert.equal(result.stderr, 'dpfit: --epsilon must be a finite decimal number (e.g. 0.5 or 1e-5), got "0x10"\n', argv[0]);
  }
});
