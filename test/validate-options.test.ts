import assert from 'node:assert/strict';
import { test } from 'node:test';
import { InvalidParameterError, UnknownOptionError } from '../src/errors.js';
import { closestName, optionNames, rejectUnknownOptions } from '../src/validate.js';

interface ExampleOptions {
  readonly epsilon?: number;
  readonly delta: number;
  readonly noiseMultiplier?: number;
  readonly clipNorm?: number;
  readonly samplingProbability?: number;
}
const NAMES = optionNames<ExampleOptions>({ epsilon: true, delta: true, noiseMultiplier: true, clipNorm: true, samplingProbability: true });

/** The UnknownOptionError `rejectUnknownOptions` throws for these options. */
function unknown(options: unknown, allowed: Readonly<Record<string, true>> | readonly string[] = NAMES): UnknownOptionError {
  try {
    rejectUnknownOptions(options, allowed, 'example');
  } catch (error) {
    assert.ok(error instanceof UnknownOptionError, String(error));
    assert.ok(error instanceof InvalidParameterError, 'an unknown option is an InvalidParameterError');
    assert.equal(error.code, 'INVALID_PARAMETER');
    return error;
  }
  assert.fail(`${JSON.stringify(options)} was accepted`);
}

test('rejectUnknownOptions: a typo is refused, naming the key, its value, the function, the closest valid name and the valid names', () => {
  const e = unknown({ epsilion: 1, delta: 1e-5 });
  assert.equal(e.param, 'epsilion');
  assert.equal(e.value, 1);
  assert.equal(e.where, 'example');
  assert.equal(e.suggestion, 'epsilon');
  assert.deepEqual(e.validOptions, ['epsilon', 'delta', 'noiseMultiplier', 'clipNorm', 'samplingProbability']);
  assert.equal(e.message, 'unknown option epsilion of example (did you mean epsilon?), given 1; its options are epsilon, delta, noiseMultiplier, clipNorm, samplingProbability');
  // Substitution, deletion, insertion, transposition.
  assert.equal(unknown({ clipNorn: 1 }).suggestion, 'clipNorm');
  assert.equal(unknown({ noiseMultipler: 1 }).suggestion, 'noiseMultiplier');
  assert.equal(unknown({ deltaa: 1 }).suggestion, 'delta');
  assert.equal(unknown({ detla: 1 }).suggestion, 'delta');
});

test('rejectUnknownOptions: the suggestion ignores case, and a name the key begins is suggested', () => {
  assert.equal(unknown({ clipnorm: 1 }).suggestion, 'clipNorm');
  assert.equal(unknown({ Delta: 1 }).suggestion, 'delta');
  assert.equal(unknown({ EPSILON: 1 }).suggestion, 'epsilon');
  assert.equal(unknown({ samplingProb: 0.1 }).suggestion, 'samplingProbability');
  assert.equal(unknown({ eps: 1 }).suggestion, 'epsilon');
  // Two names begin "no": neither is chosen for a key that is not close to either.
  assert.equal(unknown({ noi: 1 }, ['noiseStd', 'noiseMultiplier']).suggestion, undefined);
});

test('rejectUnknownOptions: a key close to nothing gets no suggestion', () => {
  for (const key of ['foo', 'x', 'learningRate', 'batch', '']) {
    const e = unknown({ [key]: 3 });
    assert.equal(e.suggestion, undefined, key);
    assert.doesNotMatch(e.message, /did you mean/, key);
    assert.match(e.message, /its options are epsilon, delta/);
  }
  // A key that is not an identifier is quoted (the error stays one line).
  assert.match(unknown({ 'a\nb': 1 }).message, /^unknown option "a\\nb" of example, given 1;/);
  // The value of the unknown key is named, undefined included.
  assert.match(unknown({ foo: undefined }).message, /given undefined/);
  assert.match(unknown({ foo: 'bar' }).message, /given "bar"/);
});

test('rejectUnknownOptions: known keys pass, undefined values included; inherited and symbol keys are not options', () => {
  rejectUnknownOptions({}, NAMES, 'example');
  rejectUnknownOptions({ epsilon: 1, delta: 1e-5 }, NAMES, 'example');
  rejectUnknownOptions({ epsilon: undefined, delta: 1e-5, noiseMultiplier: undefined }, NAMES, 'example');
  rejectUnknownOptions(Object.assign(Object.create({ inherited: 1 }), { delta: 1e-5 }), NAMES, 'example');
  rejectUnknownOptions({ delta: 1e-5, [Symbol('tag')]: 1 }, NAMES, 'example');
  const hidden = { delta: 1e-5 };
  Object.defineProperty(hidden, 'internal', { value: 1, enumerable: false });
  rejectUnknownOptions(hidden, NAMES, 'example');
  // A list of names works as well as a record; a key on Object.prototype is no option.
  rejectUnknownOptions({ a: 1 }, ['a', 'b'], 'example');
  assert.equal(unknown({ toString: 1 }).param, 'toString');
  assert.equal(unknown({ c: 1 }, ['a', 'b']).param, 'c');
  // A function that takes no options says so.
  const none = unknown({ delta: 2 }, []);
  assert.equal(none.message, 'unknown option delta of example, given 2; it takes none');
  assert.equal(none.expected, 'absent (example takes no options)');
});

test('rejectUnknownOptions: options that are not an object are refused as options', () => {
  for (const options of [null, undefined, 3, 'epsilon', true, [1, 2], () => 1]) {
    assert.throws(
      () => rejectUnknownOptions(options, NAMES, 'example'),
      (e: unknown) => e instanceof InvalidParameterError && !(e instanceof UnknownOptionError) && e.param === 'options' && /options of example/.test(e.message),
      String(options),
    );
  }
});

test('optionNames: the record it returns is frozen and holds exactly the names written', () => {
  assert.ok(Object.isFrozen(NAMES));
  assert.deepEqual(Object.keys(NAMES), ['epsilon', 'delta', 'noiseMultiplier', 'clipNorm', 'samplingProbability']);
  // The compiler checks the literal against the interface in both directions.
  // @ts-expect-error a key of ExampleOptions is missing
  optionNames<ExampleOptions>({ epsilon: true, delta: true, noiseMultiplier: true, clipNorm: true });
  // @ts-expect-error a key ExampleOptions does not have
  optionNames<ExampleOptions>({ epsilon: true, delta: true, noiseMultiplier: true, clipNorm: true, samplingProbability: true, steps: true });
  // The union of two options types (forwarded options) needs the names of both.
  optionNames<ExampleOptions & { readonly steps?: number }>({ ...NAMES, steps: true });
  // @ts-expect-error steps is missing
  optionNames<ExampleOptions & { readonly steps?: number }>({ ...NAMES });
  // A type with an index signature has no list of names.
  // @ts-expect-error not a list of names
  optionNames<Record<string, number>>({ anything: true });
});

test('closestName: the fewest edits within a third of the length, ties to the first listed', () => {
  assert.equal(closestName('epsilion', ['delta', 'epsilon']), 'epsilon');
  assert.equal(closestName('stesp', ['steps', 'step']), 'steps');
  assert.equal(closestName('ab', ['a', 'b']), 'a');
  assert.equal(closestName('n', ['d']), undefined, 'a one-letter key is suggested only up to case');
  assert.equal(closestName('N', ['d', 'n']), 'n');
  assert.equal(closestName('epsilon', []), undefined);
  assert.equal(closestName('regularisation', ['regularization', 'learningRate']), 'regularization');
  assert.equal(closestName('lerningRate', ['learningRate']), 'learningRate');
});

test("the CLI prints an unknown option's message as it is (a library key is no flag, and an undefined value is no missing flag)", async () => {
  const { errorLine } = await import('../src/cli/main.js');
  const error = new UnknownOptionError('foo', undefined, 'gaussianMechanism', ['sensitivity'], undefined);
  assert.equal(errorLine(error, undefined), 'unknown option foo of gaussianMechanism, given undefined; its options are sensitivity');
});
