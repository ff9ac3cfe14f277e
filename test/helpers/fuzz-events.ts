/**
 * fast-check arbitraries for the event fuzz (test/accounting/events/fuzz.test.ts): JSON values
 * shaped like DpEvents, mostly well-formed, with numbers drawn from valid values, edge cases and
 * garbage (negative, zero, NaN spelled as a string, 1e308, "Infinity", booleans, null), fields
 * sometimes missing or unknown, nesting sometimes deep. Sizes are kept so that one accounting costs
 * milliseconds.
 */
import fc from 'fast-check';

/** Numbers and non-numbers a field may hold: mostly sensible values, so that whole trees reach the accountants. */
const anyValue = fc.oneof(
  { weight: 40, arbitrary: fc.constantFrom(0.5, 1, 1.3, 2, 4, 0.01, 0.1, 0.9, 3) },
  { weight: 4, arbitrary: fc.constantFrom(0, -1, 1e-300, 1e308, 1e-9, 1 - 1e-16, 10, 1000, 65) },
  { weight: 1, arbitrary: fc.constantFrom<unknown>('Infinity', '-Infinity', 'NaN', 'abc', null, true, false, [], {}, '1') },
);
const count = fc.oneof({ weight: 30, arbitrary: fc.constantFrom(1, 2, 10, 100, 1000) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(0, -1, 1.5, 1e15, 'Infinity', 2 ** 53) });
const probability = fc.oneof({ weight: 30, arbitrary: fc.constantFrom(0.001, 0.01, 0.1, 0.5) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(0, 1, 1.5, -0.1, 'NaN') });

type Fields = Record<string, fc.Arbitrary<unknown>>;

/** `value` with odds `weight` : 1 against undefined. */
const usually = <T>(value: fc.Arbitrary<T>, weight: number) => fc.oneof({ weight, arbitrary: value }, { weight: 1, arbitrary: fc.constant(undefined) });

/** An object with kind `kind` and each field present with odds 40 : 1, and an unknown field with odds 1 : 60. */
function shaped(kind: string, fields: Fields): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.entries(fields).map(([name, value]) => usually(value, 40).map((v) => [name, v] as const));
  return fc.tuple(fc.tuple(...entries), fc.oneof({ weight: 60, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant(['bogusField', 1] as const) })).map(([present, extra]) => {
    const out: Record<string, unknown> = { kind };
    for (const [name, v] of present) if (v !== undefined) out[name] = v;
    if (extra !== undefined) out[extra[0]] = extra[1];
    return out;
  });
}

const grid = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(1024, 4096, 100, 0, 'x') });
const discrete = fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(true, false, 'yes') });

const leaf = fc.oneof(
  { weight: 12, arbitrary: shaped('gaussian', { noiseMultiplier: anyValue }) },
  { weight: 1, arbitrary: shaped('gaussian', { noiseMultiplier: anyValue, discrete, gridNoiseStd: grid }) },
  { weight: 2, arbitrary: shaped('laplace', { noiseMultiplier: anyValue }) },
  { weight: 1, arbitrary: shaped('laplace', { noiseMultiplier: anyValue, discrete, gridScale: grid }) },
  { weight: 1, arbitrary: shaped('randomizedResponse', { noiseParameter: probability, numBuckets: fc.constantFrom<unknown>(2, 3, 1, 0, 2.5) }) },
  {
    weight: 1,
    arbitrary: shaped('relativeGaussian', { eta: fc.constantFrom<unknown>(1e-3, 0.01, 0, 2), gamma: fc.constantFrom<unknown>(0.01, 0.1, 0, 1), dimension: fc.constantFrom<unknown>(10, 1, 0, 1.5) }),
  },
  {
    weight: 1,
    arbitrary: shaped('objectivePerturbation', { noiseStd: anyValue, lipschitz: anyValue, smoothness: anyValue, regularization: anyValue }),
  },
  {
    weight: 1,
    arbitrary: shaped('shuffledSgdConjecture', { datasetSize: fc.constantFrom<unknown>(100, 1000, 0), noiseMultiplier: anyValue, epochs: count, fraction: probability, constant: fc.constantFrom<unknown>(16, 0, -1) }),
  },
  {
    weight: 1,
    arbitrary: shaped('shuffledLastIterate', { datasetSize: fc.constantFrom<unknown>(100, 50_000, 0), stepsPerEpoch: fc.constantFrom<unknown>(1, 100, 10_000, 0), noiseMultiplier: anyValue, shiftGrowth: fc.constantFrom<unknown>(undefined, 0, 1e-9, -1) }),
  },
  { weight: 1, arbitrary: fc.constantFrom<Record<string, unknown>>({ kind: 'noOp' }, { kind: 'nonPrivate' }, { kind: 'evil' }, { noKind: 1 }, { kind: 'noOp' }, { kind: 'gaussian', noiseMultiplier: 1 }) },
);

/** A JSON value shaped like an event tree (depth <= 4). */
export const eventJson: fc.Arbitrary<unknown> = fc.letrec<{ event: unknown }>((tie) => ({
  event: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 5, arbitrary: leaf },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('poissonSampled'), samplingProbability: probability, event: tie('event') }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('sampledWithoutReplacement'), sourceDatasetSize: fc.constantFrom<unknown>(1000, 100, 0), sampleSize: fc.constantFrom<unknown>(10, 100, 2000, -1), event: tie('event') }),
    },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('nonUniformSampled'), maxWeight: fc.constantFrom<unknown>(0.01, 0.5, 0, 1, 1.5, 'Infinity'), event: tie('event') }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('compose'), events: fc.array(tie('event'), { maxLength: 4 }) }) },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant('selfCompose'), count, event: tie('event') }) },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant('repeatAndSelect'), mean: fc.constantFrom<unknown>(1, 10, 0, -1), shape: fc.constantFrom<unknown>('Infinity', 0, 1, -0.5, 2), event: tie('event') }),
    },
  ),
})).event;

/** Event text: the JSON of `eventJson`, sometimes (1 in 10) mangled (cut, or a character replaced). */
export const eventText: fc.Arbitrary<string> = fc.oneof(
  { weight: 18, arbitrary: eventJson.map((v) => JSON.stringify(v)) },
  { weight: 1, arbitrary: fc.tuple(eventJson, fc.nat()).map(([v, cut]) => { const s = JSON.stringify(v); return s.slice(0, cut % (s.length + 1)); }) },
  { weight: 1, arbitrary: fc.tuple(eventJson, fc.nat(), fc.constantFrom('"', '{', ']', ',', '\\', '\u0000', 'é')).map(([v, at, c]) => { const s = JSON.stringify(v); const i = at % (s.length + 1); return s.slice(0, i) + c + s.slice(i + 1); }) },
);
