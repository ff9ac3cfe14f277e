/**
 * The neighbour test (`helpers/neighbour-diff.ts`) of objective perturbation's two surfaces: AMP
 * and the objpert default path, on D and its add/remove neighbour D' (D without its last row:
 * the relation of both learners, `003` Sec. 2.1). Everything the release's adversary observes
 * is compared: the CLI's exit status, its stdout (`--json`), its error text
 * and the model file; only theta, the accounted noisy value, is compared by shape. (stderr of a
 * successful run is the data owner's private diagnostics, not part of the release.)
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { train } from '../../../src/learners/train.js';
import { makeLogisticData } from '../../helpers/logistic-data.js';
import { assertIndistinguishable, observedText } from '../../helpers/neighbour-diff.js';
import { peopleFixture, runCli } from '../../helpers/people.js';

/** D (people.csv, 300 rows) and D' (the same file without its last row), with their schema. */
function neighbours(): { data: string; neighbour: string; schema: string; dir: string } {
  const f = peopleFixture('dpfit-op-neighbours-', 300, 17);
  const neighbour = join(f.dir, 'neighbour.csv');
  writeFileSync(neighbour, `${f.lines.slice(0, -1).join('\n')}\n`);
  return { data: f.data, neighbour, schema: f.schema, dir: f.dir };
}

/** What the adversary of `dpfit train ARGS --out OUT --json` observes: status, stdout, stderr on failure, the model file. */
async function observeTrain(dir: string, data: string, schema: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const out = join(dir, 'model.json');
  rmSync(out, { force: true });
  const { code, stdout, stderr } = await runCli('train', '--data', data, '--schema', schema, ...args, '--out', out, '--json');
  return {
    code,
    stdout: observedText(stdout),
    ...(code === 0 ? {} : { stderr: observedText(stderr) }),
    file: existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : null,
  };
}

const RELEASED = { released: ['stdout.model.theta', 'file.theta'] };

describe('objective perturbation surfaces on add/remove neighbours', () => {
  it('dpfit train --method amp: status, stdout and model file differ only in theta', async () => {
    const { data, neighbour, schema, dir } = neighbours();
    const args = ['--method', 'amp', '--epsilon', '1'];
    const onD = await observeTrain(dir, data, schema, args);
    const onDPrime = await observeTrain(dir, neighbour, schema, args);
    assert.equal(onD.code, 0, JSON.stringify(onD));
    assertIndistinguishable(onD, onDPrime, RELEASED, 'dpfit train --method amp');
  });

  it('dpfit train --method objpert (the default path): the same refusal on both, nothing written', async () => {
    const { data, neighbour, schema, dir } = neighbours();
    const args = ['--method', 'objpert', '--epsilon', '1'];
    const onD = await observeTrain(dir, data, schema, args);
    const onDPrime = await observeTrain(dir, neighbour, schema, args);
    assert.equal(onD.code, 2);
    assert.equal(onD.file, null);
    assertIndistinguishable(onD, onDPrime, {}, 'dpfit train --method objpert');
  });

  it('the library: train() with amp gives the same report and model shape; objpert without the opt-in the same error', () => {
    const d = makeLogisticData(200, 3, 31);
    const dPrime = { ...d, x: d.x.slice(0, -3), y: d.y.slice(0, -1), n: d.n - 1 };
    const observe = (data: typeof d, method: 'amp' | 'objpert'): unknown => {
      try {
        const { model, privacy } = train(data, method === 'amp' ? { method, epsilon: 1, delta: 1e-5, clipNorm: 1 } : { method, epsilon: 1, delta: 1e-5 });
        return { model, privacy }; // diagnostics are the data owner's, not released
      } catch (error) {
        return { error: (error as Error).message };
      }
    };
    assertIndistinguishable(observe(d, 'amp'), observe(dPrime, 'amp'), { released: ['model.theta'] }, 'train amp');
    const refused = observe(d, 'objpert');
    assert.ok('error' in (refused as object));
    assertIndistinguishable(refused, observe(dPrime, 'objpert'), {}, 'train objpert');
  });
});
