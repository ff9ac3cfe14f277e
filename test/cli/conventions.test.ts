/**
 * Conventions on the command line: `train --loss` (with `--model` a deprecated alias
 * that says so on one stderr line), one `--delta` default shown in every command's help, and the
 * Opacus form of the schedule (`--epochs`) in `audit`.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditSteps } from '../../src/cli/commands/audit.js';
import { peopleFixture, runCli } from '../helpers/people.js';

test('train --loss names the loss; --model is a deprecated alias (one stderr line), same model; both different: exit 2', async () => {
  const { data, schema } = peopleFixture('dpfit-conventions-', 400, 3);
  const base = ['train', '--data', data, '--schema', schema, '--method', 'dpgd', '--epsilon', '1', '--steps', '5', '--clip-norm', '2', '--seed', '4', '--json'];
  const byLoss = await runCli(...base, '--loss', 'squared');
  assert.equal(byLoss.code, 0, byLoss.stderr);
  assert.doesNotMatch(byLoss.stderr, /deprecated/);
  assert.equal(JSON.parse(byLoss.stdout).model.loss.name, 'squared');
  const byModel = await runCli(...base, '--model', 'squared');
  assert.equal(byModel.code, 0, byModel.stderr);
  assert.deepEqual(JSON.parse(byModel.stdout), JSON.parse(byLoss.stdout), 'the alias trains the same model (same seed)');
  const notices = byModel.stderr.split('\n').filter((line) => /deprecated/.test(line));
  assert.deepEqual(notices, ['dpfit: train --model is deprecated: use --loss (--model names a model FILE in evaluate and predict)']);
  // One name per loss: 'linear', the old name of 'squared', still trains the same model and says so on one line.
  const byOldName = await runCli(...base, '--loss', 'linear');
  assert.equal(byOldName.code, 0, byOldName.stderr);
  assert.deepEqual(JSON.parse(byOldName.stdout), JSON.parse(byLoss.stdout));
  assert.deepEqual(byOldName.stderr.split('\n').filter((line) => /deprecated/.test(line)), ['dpfit: --loss linear is deprecated: use --loss squared (the name the model file records)']);
  const both = await runCli(...base, '--loss', 'logistic', '--model', 'squared');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^dpfit: --model must be absent when --loss is given/);
  // Errors about the loss name the new flag.
  const bad = await runCli(...base, '--loss', 'magic');
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^dpfit: --loss must be/);
  // The help shows --loss, not the alias.
  const help = await runCli('train', '--help');
  assert.match(help.stdout, /--loss <L>/);
  assert.doesNotMatch(help.stdout, /--model/);
  assert.match(help.stdout, /logistic \| squared \| huber \| smoothedHinge/);
});

test('--delta: the same default (1e-5) in every command that takes it, shown in --help, equal to giving it', async () => {
  const commands = [['epsilon'], ['epsilon', 'dpsgd'], ['calibrate', 'gaussian'], ['calibrate', 'dpsgd'], ['calibrate', 'rgm'], ['rgm'], ['audit'], ['train'], ['demo']];
  for (const command of commands) {
    const help = await runCli(...command, '--help');
    assert.equal(help.code, 0, command.join(' '));
    assert.match(help.stdout.replace(/\s+/g, ' '), /--delta <D> [^-]*\(default: 1e-5\)/, command.join(' '));
  }
  const same = async (argv: string[]) => {
    const implicit = await runCli(...argv, '--json');
    const explicit = await runCli(...argv, '--delta', '1e-5', '--json');
    assert.equal(implicit.code, 0, `${argv.join(' ')}: ${implicit.stderr}`);
    assert.deepEqual(JSON.parse(implicit.stdout), JSON.parse(explicit.stdout), argv.join(' '));
    assert.equal(JSON.parse(implicit.stdout).delta, 1e-5, argv.join(' '));
  };
  await same(['epsilon', '--event', '{"kind":"gaussian","noiseMultiplier":1}']);
  await same(['epsilon', 'dpsgd', '--sampling-probability', '0.01', '--noise-multiplier', '1.1', '--steps', '100']);
  await same(['calibrate', 'gaussian', '--epsilon', '1']);
  await same(['calibrate', 'dpsgd', '--sampling-probability', '0.01', '--steps', '100', '--epsilon', '1']);
  await same(['calibrate', 'rgm', '--eta', '1e-3', '--dimension', '10', '--epsilon', '0.5']);
  await same(['rgm', '--eta', '1e-3', '--gamma', '1e-4', '--dimension', '10']);
});

test('audit --epochs: T = ceil(E N / B) with N = rows + the canary (as epsilon dpsgd counts); one form at a time; dpsgd only', async () => {
  const base = ['audit', '--method', 'dpsgd', '--epsilon', '2', '--runs', '20', '--rows', '100', '--batch-size', '10', '--threads', '1', '--json'];
  // N = 101, B = 10, E = 2: T = ceil(20.2) = 21 steps; the accountant's epsilon must be the same as with --steps 21.
  const byEpochs = await runCli(...base, '--epochs', '2');
  const bySteps = await runCli(...base, '--steps', '21');
  assert.equal(byEpochs.code, 0, byEpochs.stderr);
  assert.equal(bySteps.code, 0, bySteps.stderr);
  assert.equal(JSON.parse(byEpochs.stdout).epsilonAccounted, JSON.parse(bySteps.stdout).epsilonAccounted);
  // The count itself, against epsilon dpsgd's Opacus form on the same N, B, E (its event's selfCompose count).
  for (const [rows, batch, epochs] of [[100, 10, 2], [100, 7, 3], [999, 250, 0.5], [59999, 2400, 90]]) {
    const opacus = await runCli('epsilon', 'dpsgd', '--dataset-size', String(rows + 1), '--batch-size', String(batch), '--epochs', String(epochs), '--noise-multiplier', '1', '--json');
    assert.equal(auditSteps({ method: 'dpsgd', steps: 20, epochs, rows, batchSize: batch }, false), JSON.parse(opacus.stdout).event.count, `${rows} ${batch} ${epochs}`);
  }
  assert.equal(auditSteps({ method: 'dpsgd', steps: 20, epochs: 2, rows: 100, batchSize: 10 }, false), 21);
  const both = await runCli(...base, '--epochs', '2', '--steps', '21');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^dpfit: --epochs must be absent when --steps is given/);
  const dpgd = await runCli('audit', '--method', 'dpgd', '--epsilon', '2', '--runs', '20', '--epochs', '2');
  assert.equal(dpgd.code, 2);
  assert.match(dpgd.stderr, /^dpfit: --epochs must be given only with --method dpsgd/);
});

test('the clipping norm is --clip-norm in train, audit and federate; --clip stays a deprecated alias in audit and federate (one stderr line, same result; both different: exit 2)', async () => {
  const base = ['audit', '--method', 'dpgd', '--epsilon', '2', '--runs', '20', '--rows', '20', '--steps', '3', '--threads', '1', '--json'];
  const byNorm = await runCli(...base, '--clip-norm', '2');
  assert.equal(byNorm.code, 0, byNorm.stderr);
  assert.doesNotMatch(byNorm.stderr, /deprecated/);
  const byClip = await runCli(...base, '--clip', '2');
  assert.equal(byClip.code, 0, byClip.stderr);
  assert.deepEqual(byClip.stderr.split('\n').filter((line) => /deprecated/.test(line)), ["dpfit: audit --clip is deprecated: use --clip-norm (train's name for the clipping norm)"]);
  assert.equal(JSON.parse(byClip.stdout).epsilonAccounted, JSON.parse(byNorm.stdout).epsilonAccounted);
  const both = await runCli(...base, '--clip-norm', '1', '--clip', '2');
  assert.equal(both.code, 2);
  assert.match(both.stderr, /^dpfit: --clip must be absent when --clip-norm is given/);
  for (const command of [['audit'], ['federate'], ['train', '--method', 'dpgd']]) {
    const help = await runCli(...command, '--help');
    assert.match(help.stdout, /--clip-norm <C/, command.join(' '));
    assert.doesNotMatch(help.stdout, /--clip </, command.join(' '));
  }
  // federate checks its flags before asking any node: the missing norm is named by its new flag.
  const federate = await runCli('federate', '--nodes', 'http://127.0.0.1:1', '--token-file', 'absent-token', '--method', 'dpgd', '--epsilon', '1', '--delta', '1e-6', '--steps', '1');
  assert.equal(federate.code, 2);
  assert.match(federate.stderr, /^dpfit: --clip-norm is required with --method dpgd/);
});

test('the target epsilon is --epsilon in calibrate as in train; --target-epsilon stays a deprecated alias (one stderr line, same result; both different: exit 2)', async () => {
  for (const base of [['calibrate', 'gaussian'], ['calibrate', 'dpsgd', '--sampling-probability', '0.01', '--steps', '100'], ['calibrate', 'rgm', '--eta', '1e-3', '--dimension', '10', '--delta', '1e-8']]) {
    const byEpsilon = await runCli(...base, '--epsilon', '0.5', '--json');
    assert.equal(byEpsilon.code, 0, byEpsilon.stderr);
    assert.equal(byEpsilon.stderr, '');
    const byAlias = await runCli(...base, '--target-epsilon', '0.5', '--json');
    assert.equal(byAlias.code, 0, byAlias.stderr);
    assert.deepEqual(JSON.parse(byAlias.stdout), JSON.parse(byEpsilon.stdout), base.join(' '));
    assert.equal(byAlias.stderr, `dpfit: ${base.slice(0, 2).join(' ')} --target-epsilon is deprecated: use --epsilon (train's name for the target epsilon)\n`);
    const both = await runCli(...base, '--epsilon', '0.5', '--target-epsilon', '1');
    assert.equal(both.code, 2);
    const missing = await runCli(...base);
    assert.equal(missing.code, 2);
    assert.equal(missing.stderr, 'dpfit: --epsilon is required: the target epsilon (> 0)\n');
    const help = await runCli(...base.slice(0, 2), '--help');
    assert.match(help.stdout, /--epsilon <E>/);
    assert.doesNotMatch(help.stdout, /--target-epsilon/);
  }
});
