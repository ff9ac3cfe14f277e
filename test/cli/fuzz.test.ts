/**
 * The CLI fuzzed as a careless or hostile user would use it. fast-check draws argument
 * vectors for every command from a grammar of flags and values — valid, out of range, not
 * numbers, absurdly large, paths that do not exist, are directories, devices or the input files
 * themselves, events that are malformed or deeply nested — with a fixed seed and a bounded number
 * of runs, and asserts for each run:
 *   - the exit status is 0, 2, 3 or 4 (1 is for bugs only);
 *   - on failure, stderr is exactly one line, without a stack trace or "internal error";
 *   - on failure no file of the sandbox was created, removed or changed (no partial outputs, no
 *     temp files left behind, no input overwritten).
 * Training commands run on 60 rows so that a run costs milliseconds.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { runContractProblems, snapshot } from '../helpers/files.js';
import { eventText } from '../helpers/fuzz-events.js';
import { PEOPLE_SCHEMA, peopleFixture, runCli } from '../helpers/people.js';

/** The sandbox: people data (train and a public validation split), its schema, a model, a subdirectory. */
function sandbox() {
  const { dir, data, schema } = peopleFixture('dpfit-fuzz-', 60, 3);
  const validation = join(dir, 'validation.csv');
  writeFileSync(validation, readFileSync(data, 'utf8').split('\n').slice(0, 21).join('\n') + '\n');
  const sub = join(dir, 'sub');
  mkdirSync(sub);
  const model = join(dir, 'model.json');
  return { dir, data, schema, validation, sub, model };
}

const NUMBERS = ['1', '0.5', '2', '1e-5', '0', '-1', '1e400', 'NaN', 'abc', '', '1e-300', '3.7', '1e9', '1e12', '100', '0.999999', '64'];
const EVENTS = [
  '{"kind":"gaussian","noiseMultiplier":1}',
  '{"kind":"selfCompose","count":100,"event":{"kind":"poissonSampled","samplingProbability":0.01,"event":{"kind":"gaussian","noiseMultiplier":1.1}}}',
  '{"kind":"laplace","noiseMultiplier":2,"discrete":true}',
  '{"kind":"gaussian","noiseMultiplier":-1}',
  '{"kind":"gaussian"}',
  '{"kind":"evil"}',
  '{"kind":"compose","events":[{"kind":"noOp"},{"kind":"nonPrivate"}]}',
  '{"kind":"gaussian","noiseMultiplier":1,"gridNoiseStd":100}',
  '{"kind":"relativeGaussian","eta":0.001,"gamma":0.01,"dimension":10}',
  '{"kind":"shuffledSgdConjecture","datasetSize":100,"noiseMultiplier":3,"epochs":1,"fraction":0.5,"constant":16}',
  'not json',
  '[]',
  '{}',
  'null',
  `${'['.repeat(3000)}${']'.repeat(3000)}`,
  `${'{"kind":"compose","events":['.repeat(1500)}{"kind":"noOp"}${']}'.repeat(1500)}`,
];

test('fuzz: every command, any arguments: exit 0/2/3/4, one clean stderr line on failure, no file touched on failure', async () => {
  const box = sandbox();
  const { dir, data, schema, validation, sub, model } = box;
  // A trained model to evaluate, predict with and verify.
  const trained = await runCli('train', '--data', data, '--schema', schema, '--epsilon', '1', '--steps', '20', '--out', model);
  assert.equal(trained.code, 0, trained.stderr);
  const suggested = join(dir, 'suggested.schema.json');
  writeFileSync(suggested, JSON.stringify({ ...PEOPLE_SCHEMA, provenance: 'suggested-from-private-data' }));

  const paths = [data, schema, validation, model, suggested, sub, join(dir, 'absent.json'), join(dir, 'no', 'such', 'dir', 'x.json'), join(data, 'under-a-file.json'), '/dev/full', '/proc/self/status', dir];
  const outPaths = [join(dir, 'out.json'), join(sub, 'out.svg'), ...paths];
  const number = fc.constantFrom(...NUMBERS);
  const path = fc.constantFrom(...paths);
  const outPath = fc.constantFrom(...outPaths);
  // Mostly the right file, sometimes any: success paths (which write files) get exercised too.
  const usually = (right: string, any: fc.Arbitrary<string>) => fc.oneof({ weight: 3, arbitrary: fc.constant(right) }, { weight: 1, arbitrary: any });
  const event = fc.oneof({ weight: 2, arbitrary: fc.constantFrom(...EVENTS) }, { weight: 1, arbitrary: eventText });
  const optional = (flag: string, value: fc.Arbitrary<string>) => fc.option(value.map((v) => [flag, v]), { nil: undefined });
  const flagSet = (...parts: fc.Arbitrary<string[] | undefined>[]) => fc.tuple(...parts).map((xs) => xs.flatMap((x) => x ?? []));
  const json: fc.Arbitrary<string[] | undefined> = fc.option(fc.constant(['--json']), { nil: undefined });

  const commands: fc.Arbitrary<string[]>[] = [
    flagSet(optional('--delta', number), optional('--event', event), optional('--accountant', fc.constantFrom('rdp', 'pld', 'magic')), json).map((f) => ['epsilon', ...f]),
    flagSet(optional('--epsilon', number), optional('--event', event), json).map((f) => ['delta', ...f]),
    flagSet(optional('--event', event), optional('--accountant', fc.constantFrom('rdp', 'pld')), json).map((f) => ['rdp', ...f]),
    flagSet(optional('--sampling-probability', number), optional('--noise-multiplier', number), optional('--steps', number), optional('--delta', number), json).map((f) => ['epsilon', 'dpsgd', ...f]),
    flagSet(optional('--epsilon', number), optional('--delta', number), optional('--method', fc.constantFrom('analytic', 'classical', 'x')), json).map((f) => ['calibrate', 'gaussian', ...f]),
    flagSet(optional('--sampling-probability', number), optional('--steps', number), optional('--epsilon', number), optional('--delta', number), json).map((f) => ['calibrate', 'dpsgd', ...f]),
    flagSet(optional('--eta', number), optional('--gamma', number), optional('--dimension', number), optional('--delta', number), optional('--baseline-std', number), optional('--r-rel', number), json).map((f) => ['rgm', ...f]),
    flagSet(optional('--event', event), optional('--out', outPath), optional('--points', number), json).map((f) => ['curve', ...f]),
    flagSet(
      usually(data, path).map((v) => ['--data', v]),
      usually(schema, path).map((v) => ['--schema', v]),
      optional('--method', fc.constantFrom('dpsgd', 'dpgd', 'shuffled', 'output', 'output-sgd', 'objpert', 'amp', 'rgm', 'magic')),
      optional('--epsilon', fc.oneof(fc.constant('1'), number)),
      optional('--noise-multiplier', fc.constantFrom('0', '1', '-1')),
      optional('--steps', fc.constantFrom('5', '0', '1e12', 'x')),
      optional('--epochs', fc.constantFrom('1', '1e9', '-2')),
      optional('--regularization', fc.constantFrom('0.1', '0', '-1')),
      optional('--max-iterations', fc.constantFrom('1', '0')),
      optional('--grad-tolerance', fc.constantFrom('0.01', '1e-300')),
      optional('--tune', fc.constantFrom('2', '1e9', '-1')),
      optional('--validation', path),
      optional('--accountant', fc.constantFrom('rdp', 'pld')),
      optional('--seed', fc.constantFrom('1', 'x')),
      optional('--out', usually(join(dir, 'out.json'), outPath)),
      optional('--diagnostics', usually(join(sub, 'diagnostics.json'), outPath)),
      json,
    ).map((f) => ['train', ...f]),
    flagSet(usually(model, path).map((v) => ['--model', v]), usually(validation, path).map((v) => ['--data', v]), optional('--schema', path), json).map((f) => ['evaluate', ...f]),
    flagSet(usually(model, path).map((v) => ['--model', v]), usually(validation, path).map((v) => ['--data', v]), optional('--schema', path), json).map((f) => ['predict', ...f]),
    fc.tuple(usually(model, path), json).map(([p, j]) => ['verify', p, ...(j ?? [])]),
    flagSet(optional('--schema', path), json).chain((f) => path.map((p) => ['data', 'inspect', p, ...f])),
    flagSet(optional('--label', fc.constantFrom('label', 'age', 'nope')), optional('--positive', fc.constantFrom('yes', 'zzz')), optional('--out', outPath)).chain((f) => path.map((p) => ['data', 'schema', p, ...f])),
    fc.constantFrom(['--help'], ['nonsense'], ['train', '--help'], ['epsilon', '--bogus', '1'], ['--version']),
  ];

  // The sandbox as it starts: every run begins from it (successful runs may overwrite inputs' neighbours).
  const initial = new Map([...snapshot(dir).keys()].filter((p) => statSync(p).isFile()).map((p) => [p, readFileSync(p)]));
  const restore = (before: Map<string, string>, after: Map<string, string>) => {
    for (const [p, v] of after) if (!before.has(p)) rmSync(p, { force: true, recursive: v === 'dir' });
    for (const [p, bytes] of initial) if (after.get(p) !== before.get(p)) writeFileSync(p, bytes);
  };
  const failures: string[] = [];
  await fc.assert(
    fc.asyncProperty(fc.oneof(...commands), async (argv) => {
      const before = snapshot(dir);
      const { code, stderr } = await runCli(...argv);
      const after = snapshot(dir);
      const problems = runContractProblems(code, stderr, before, after);
      if (problems.length > 0) failures.push(`${argv.map((a) => (a.length > 60 ? `${a.slice(0, 60)}...` : a)).join(' ')}: ${problems.join('; ')} [${stderr.trim().slice(0, 200)}]`);
      // Restore the sandbox for the next run: outputs of successful runs removed, overwritten files restored.
      restore(before, after);
    }),
    { seed: 20261123, numRuns: Number(process.env.DPFIT_FUZZ_RUNS ?? 1000), endOnFailure: false },
  );
  assert.deepEqual(failures, [], `${failures.length} bad runs:\n${failures.slice(0, 40).join('\n')}`);
});
