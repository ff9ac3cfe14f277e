import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseEvent } from '../src/accounting/events.js';
import { rdpEpsilon } from '../src/accounting/rdp/accountant.js';
import { main } from '../src/cli/main.js';
import { sampleGaussian } from '../src/random/continuous.js';
import { seededRng } from '../src/random/rng.js';

async function run(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
  return { code, stdout, stderr };
}

/** A small private-looking CSV (age, hours, label yes/no) and its public schema, in a temp dir. */
function fixture(): { dir: string; data: string; schema: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-train-'));
  const rng = seededRng(11);
  const lines = ['age,hours,label'];
  for (let i = 0; i < 1500; i++) {
    const age = Math.round(40 + 12 * sampleGaussian(rng));
    const hours = Math.round(40 + 10 * sampleGaussian(rng));
    const z = (age - 40) / 12 + (hours - 40) / 10;
    lines.push(`${age},${hours},${rng.nextDouble() < 1 / (1 + Math.exp(-2 * z)) ? 'yes' : 'no'}`);
  }
  const data = join(dir, 'people.csv');
  writeFileSync(data, `${lines.join('\n')}\n`);
  const schema = join(dir, 'people.schema.json');
  writeFileSync(
    schema,
    JSON.stringify({
      version: 1,
      columns: [
        { name: 'age', type: 'numeric', lower: 0, upper: 80, scale: 'symmetric' },
        { name: 'hours', type: 'numeric', lower: 0, upper: 80, scale: 'symmetric' },
        { name: 'label', type: 'label', positive: ['yes'], negative: ['no'] },
      ],
    }),
  );
  return { dir, data, schema };
}

test('dpfit train --json: model, privacy report that re-accounts below the target, saved model evaluates', async () => {
  const { dir, data, schema } = fixture();
  const out = join(dir, 'model.json');
  const trained = await run('train', '--data', data, '--schema', schema, '--epsilon', '2', '--delta', '1e-5', '--batch-size', '100', '--epochs', '5', '--seed', '1', '--out', out, '--json');
  assert.equal(trained.code, 0, trained.stderr);
  const result = JSON.parse(trained.stdout);
  for (const field of ['epsilon', 'delta', 'accountant', 'event', 'neighboringRelation', 'guarantee']) assert.ok(field in result.privacy, field);
  assert.ok(result.privacy.epsilon <= 2);
  assert.ok(rdpEpsilon(parseEvent(result.privacy.event), 1e-5).epsilon <= 2, 'the reported event re-accounts below the target');
  assert.equal(result.privacy.neighboringRelation, 'addOrRemoveOne');
  const saved = JSON.parse(readFileSync(out, 'utf8'));
  assert.equal(saved.privacy.epsilon, result.privacy.epsilon, 'the saved model says what it cost');
  assert.ok(saved.schema !== undefined);
  const evaluated = await run('evaluate', '--model', out, '--data', data, '--json');
  assert.equal(evaluated.code, 0, evaluated.stderr);
  assert.ok(JSON.parse(evaluated.stdout).accuracy > 0.6);
  const predicted = JSON.parse((await run('predict', '--model', out, '--data', data, '--json')).stdout);
  assert.equal(predicted.predictions.length, 1500);
  const gd = JSON.parse((await run('train', '--data', data, '--schema', schema, '--method', 'dpgd', '--steps', '30', '--epsilon', '1', '--json', '--seed', '2')).stdout);
  assert.equal(gd.privacy.neighboringRelation, 'replaceOne');
  assert.ok(gd.privacy.epsilon <= 1);
  const shuffled = JSON.parse((await run('train', '--data', data, '--schema', schema, '--method', 'shuffled', '--fraction', '0.5', '--epochs', '1', '--learning-rate', '0.05', '--epsilon', '1', '--conjecture', '--json', '--seed', '3')).stdout);
  assert.equal(shuffled.privacy.neighboringRelation, 'replaceOne');
  assert.ok(shuffled.privacy.epsilon <= 1);
  assert.equal(shuffled.privacy.guarantee, 'proven', 'the conjecture is never the guarantee');
});

test('dpfit train errors: no schema, bad epsilon, missing file, unknown method -> one line, nonzero, no model file', async () => {
  const { dir, data, schema } = fixture();
  const out = join(dir, 'never.json');
  const cases: [string[], number][] = [
    [['train', '--data', data, '--epsilon', '1', '--out', out], 2],
    [['train', '--data', data, '--schema', schema, '--epsilon', '-1', '--out', out], 2],
    [['train', '--data', join(dir, 'missing.csv'), '--schema', schema, '--epsilon', '1', '--out', out], 3],
    [['train', '--data', data, '--schema', schema, '--epsilon', '1', '--method', 'magic', '--out', out], 2],
  ];
  for (const [argv, expected] of cases) {
    const { code, stderr, stdout } = await run(...argv);
    assert.equal(code, expected, `${argv.join(' ')}: ${stderr}`);
    assert.equal(stdout, '');
    assert.equal(stderr.trim().split('\n').length, 1, stderr);
    assert.ok(!existsSync(out));
  }
});
