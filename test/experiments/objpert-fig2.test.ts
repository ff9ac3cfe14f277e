/**
 * `experiments/objpert-fig2.ts --quick` end to end on the synthetic Synthetic-L stand-in (no
 * downloaded data; ~10 s on two idle CPUs): the points, error bars and privacy checks of its JSON,
 * the figure file, and that the worker pool changes no number (trial 1 alone, on one thread, gives
 * the first accuracy of every point of the two-thread run, bit for bit). Adult's scripts need the
 * data set and minutes (`adult-tuning.ts --quick`: ~1.5 CPU-minutes), so no test runs them.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

interface Point {
  method: string;
  epsilon: number;
  mean: number;
  halfWidth95: number;
  accuracies: number[];
  accountedEpsilons: number[];
}

function run(dir: string, name: string, extra: string[]): { points: Point[]; nonPrivateAccuracy: number; epsilons: number[]; trials: number } {
  const json = join(dir, `${name}.json`);
  execFileSync(process.execPath, ['--import', 'tsx', 'experiments/objpert-fig2.ts', '--data', 'synthetic-l', '--quick', '--out', join(dir, name), '--json', json, ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  assert.ok(existsSync(join(dir, name, 'objpert-fig2-synthetic-l.svg')), 'the figure is written');
  return JSON.parse(readFileSync(json, 'utf8'));
}

test('objpert-fig2 --quick: means and 1.96-standard-error bars of every method and epsilon, releases within their epsilon, the same numbers on one thread or two', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dpfit-fig2-'));
  try {
    const pooled = run(dir, 'two-threads', ['--threads', '2']);
    assert.deepEqual(pooled.epsilons, [0.1, 8]);
    assert.equal(pooled.trials, 2);
    assert.deepEqual([...new Set(pooled.points.map((p) => p.method))], ['dishonest', 'honest', 'amp']);
    for (const p of pooled.points) {
      assert.equal(p.accuracies.length, 2);
      const [a, b] = p.accuracies;
      assert.ok(Math.abs(p.mean - (a + b) / 2) < 1e-12, `${p.method} ${p.epsilon}: mean`);
      // Two trials: sample std |a - b| / sqrt(2), standard error |a - b| / 2.
      assert.ok(Math.abs(p.halfWidth95 - (1.96 * Math.abs(a - b)) / 2) < 1e-9, `${p.method} ${p.epsilon}: 1.96 standard errors`);
      assert.ok(p.accuracies.every((x) => x >= 0 && x <= 100));
      if (p.method === 'dishonest') assert.deepEqual(p.accountedEpsilons, [], 'the grid search reports no guarantee');
      else assert.ok(p.accountedEpsilons.length === 2 && p.accountedEpsilons.every((e) => e <= p.epsilon), `${p.method} ${p.epsilon}: ${p.accountedEpsilons}`);
    }
    assert.ok(pooled.nonPrivateAccuracy > 90, `the stand-in is learnable: ${pooled.nonPrivateAccuracy}`);
    const serial = run(dir, 'one-thread', ['--threads', '1', '--trials', '1']);
    for (const p of serial.points) {
      const q = pooled.points.find((x) => x.method === p.method && x.epsilon === p.epsilon) as Point;
      assert.ok(Object.is(p.accuracies[0], q.accuracies[0]), `${p.method} ${p.epsilon}: ${p.accuracies[0]} vs ${q.accuracies[0]}`);
    }
    assert.equal(serial.nonPrivateAccuracy, pooled.nonPrivateAccuracy);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
