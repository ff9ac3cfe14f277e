/**
 * Strict options: `train()` and the estimators refuse a key their learner does not
 * take, naming it and the closest valid option, before anything else (before the data, the
 * target or any other option is looked at); TypeScript refuses such a key in an object literal.
 * Before, `new PrivateLogisticRegression({ epsilon: 1, clipnorm: 0.1, learningrate: 5 })` trained
 * with the default clipping norm and step as if nothing had been said, and `epsilion: 1` said
 * "epsilon must be given" without naming the typo.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InvalidParameterError } from '../../src/errors.js';
import { PrivateLinearRegression, PrivateLogisticRegression } from '../../src/learners/estimators.js';
import { closestName } from '../../src/validate.js';
import { train, type TrainOptions } from '../../src/learners/train.js';
import { makeLogisticData } from '../helpers/logistic-data.js';

/** An InvalidParameterError naming `param` whose message matches `pattern`. */
function refused(param: string, pattern: RegExp) {
  return (e: unknown) => e instanceof InvalidParameterError && e.param === param && pattern.test(e.message);
}

describe('strict options: an unknown key is an error naming it and the closest valid one', () => {
  const data = makeLogisticData(200, 2, 3);

  it('closest names: by edit distance, case-insensitively; nothing when no name is close', () => {
    assert.equal(closestName('clipnorm', ['clipNorm', 'steps']), 'clipNorm');
    assert.equal(closestName('learningrate', ['learningRate', 'regularization']), 'learningRate');
    assert.equal(closestName('epsilion', ['epsilon', 'delta']), 'epsilon');
    assert.equal(closestName('foo', ['epsilon', 'delta', 'rng']), undefined);
  });

  it('train(): "unknown option epsilion (did you mean epsilon?)", and the options of the method listed', () => {
    assert.throws(
      () => train(data, { method: 'dpsgd', epsilion: 1, delta: 1e-5, clipNorm: 1 } as unknown as TrainOptions),
      refused('epsilion', /^unknown option epsilion of train\(\) with method 'dpsgd' \(did you mean epsilon\?\), given 1; its options are (?=.*\bepsilon\b)(?=.*\bclipNorm\b)/),
    );
    assert.throws(() => train(data, { method: 'dpgd', epsilon: 1, delta: 1e-5, clipnorm: 1 } as unknown as TrainOptions), refused('clipnorm', /^unknown option clipnorm of train\(\) with method 'dpgd' \(did you mean clipNorm\?\)/));
    // Nothing close: no suggestion, the valid options listed.
    assert.throws(() => train(data, { method: 'dpsgd', epsilon: 1, delta: 1e-5, clipNorm: 1, foo: 3 } as unknown as TrainOptions), refused('foo', /^unknown option foo of train\(\) with method 'dpsgd', given 3; its options are method, datasetSize, .*batchSize/));
  });

  it('train(): checked before anything else (no data, no target, a bad value elsewhere: the unknown key is what is said)', () => {
    const empty = { x: new Float64Array(0), y: new Float64Array(0), n: 0, d: 2 };
    assert.throws(() => train(empty, { method: 'amp', learningrate: 5, regularization: -1 } as unknown as TrainOptions), refused('learningrate', /^unknown option learningrate/));
    assert.throws(() => train(empty, { method: 'dpsgd', epsilion: 1 } as unknown as TrainOptions), refused('epsilion', /did you mean epsilon\?/));
  });

  it("train(): an option of another method is refused too, naming the methods that take it", () => {
    assert.throws(
      () => train(data, { method: 'dpgd', epsilon: 1, delta: 1e-5, clipNorm: 1, batchSize: 10 } as unknown as TrainOptions),
      refused('batchSize', /^unknown option batchSize of train\(\) with method 'dpgd', given 10; its options are .* \(batchSize is an option of dpsgd, outputSgd\)$/),
    );
    assert.throws(() => train(data, { method: 'amp', epsilon: 1, delta: 1e-5, noiseMultiplier: 1 } as unknown as TrainOptions), refused('noiseMultiplier', /is an option of dpsgd, dpgd, shuffled, output, outputSgd, rgm/));
  });

  it('train(): an unknown method names the closest; rgm refuses another loss by name', () => {
    assert.throws(() => train(data, { method: 'outputsgd', epsilon: 1, delta: 1e-5 } as unknown as TrainOptions), refused('method', /did you mean 'outputSgd'\?/));
    assert.throws(() => train(data, { method: 'rgm', loss: 'huber', epsilon: 1, delta: 1e-5 }), refused('loss', /^loss must be 'squared' \(alias 'linear'\) or 'logistic' for method 'rgm' \(RGM gradient descent is ridge regression, and its GLM bound is implemented for these losses\), got "huber"$/));
  });

  it('a key whose value is undefined is an absent option (as for any optional field)', () => {
    const { model } = train(data, { method: 'dpgd', epsilon: 1, delta: 1e-5, clipNorm: 1, steps: 5, ...({ batchSize: undefined } as object) });
    assert.ok(model !== undefined);
  });

  it("the estimators refuse when made: clipnorm and learningrate are not ignored (the issue's example)", () => {
    assert.throws(
      () => new PrivateLogisticRegression({ epsilon: 1, clipnorm: 0.1, learningrate: 5 } as never),
      refused('clipnorm', /^unknown option clipnorm of PrivateLogisticRegression with method 'dpsgd' \(did you mean clipNorm\?\), given 0\.1; its options are /),
    );
    assert.throws(() => new PrivateLogisticRegression({ epsilon: 1, clipNorm: 0.1, learningrate: 5 } as never), refused('learningrate', /did you mean learningRate\?/));
    assert.throws(() => new PrivateLinearRegression({ epsilon: 1, method: 'dpgd', batchSize: 10 } as never), refused('batchSize', /PrivateLinearRegression with method 'dpgd'/));
    assert.throws(() => new PrivateLogisticRegression({ epsilon: 1, method: 'magic' } as never), refused('method', /'dpsgd'/));
  });

  it('TypeScript refuses an unknown key in an object literal (the options are one exact set per method)', () => {
    // The @ts-expect-error lines fail `tsc` if the key were accepted; at run time the same keys are refused.
    assert.throws(() =>
      // @ts-expect-error -- clipnorm is not an option of dpsgd
      train(data, { method: 'dpsgd', epsilon: 1, delta: 1e-5, clipnorm: 1 }),
    );
    assert.throws(() =>
      // @ts-expect-error -- batchSize is not an option of dpgd
      train(data, { method: 'dpgd', epsilon: 1, delta: 1e-5, clipNorm: 1, batchSize: 10 }),
    );
    assert.throws(() =>
      // @ts-expect-error -- learningrate is not an option of the default method
      new PrivateLogisticRegression({ epsilon: 1, learningrate: 5 }),
    );
    // Every default-filled option may be left out: this compiles (it fails at run time only for want of a clipping norm on plain data).
    assert.throws(() => train(data, { method: 'dpsgd', epsilon: 1, delta: 1e-5 }), refused('clipNorm', /loadDataset/));
  });
});
