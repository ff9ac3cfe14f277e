/**
 * `dpfit epsilon` and `dpfit delta` with the PLD accountant agree across processes (issue 29): for
 * seeded random DP-SGD events, delta(epsilon(d)) <= d where each query is a separate process, and
 * `dpfit curve --accountant pld` gives the point queries' values. (The 60-case sweep of the
 * acceptance is `bench/pld-corners.ts`; this test keeps 10 cases, two at a time.)
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { mulberry32 } from '../helpers/mulberry32.js';

const run = promisify(execFile);

async function dpfit(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/helpers/dpfit-process.ts', ...args, '--json'], { timeout: 300_000, maxBuffer: 1 << 24 });
  return JSON.parse(stdout) as Record<string, unknown>;
}

test('delta(epsilon(d)) <= d when each query is its own dpfit process (10 seeded cases, and the issue\'s example)', async () => {
  const random = mulberry32(2929);
  const logUniform = (a: number, b: number) => Math.exp(Math.log(a) + random() * (Math.log(b) - Math.log(a)));
  const cases: { event: string; delta: number }[] = [
    { event: '{"kind":"selfCompose","count":168,"event":{"kind":"poissonSampled","samplingProbability":0.0002236,"event":{"kind":"gaussian","noiseMultiplier":1.661914}}}', delta: 2.8e-8 },
  ];
  while (cases.length < 11) {
    const q = Number(logUniform(1e-3, 0.2).toPrecision(4));
    const z = Number(logUniform(0.5, 5).toPrecision(6));
    const steps = Math.round(logUniform(1, 300));
    const delta = Number(logUniform(1e-10, 1e-3).toPrecision(3));
    cases.push({ event: JSON.stringify({ kind: 'selfCompose', count: steps, event: { kind: 'poissonSampled', samplingProbability: q, event: { kind: 'gaussian', noiseMultiplier: z } } }), delta });
  }
  const check = async ({ event, delta }: { event: string; delta: number }) => {
    const first = await dpfit(['epsilon', '--accountant', 'pld', '--delta', String(delta), '--event', event]);
    const epsilon = first.epsilon as number;
    assert.ok(['pld', 'rdp', 'exactGaussian'].includes(first.boundBy as string), `boundBy ${String(first.boundBy)}`);
    const back = await dpfit(['delta', '--accountant', 'pld', '--epsilon', String(epsilon), '--event', event]);
    assert.ok((back.delta as number) <= delta, `${event} at ${delta}: epsilon ${epsilon}, then delta ${String(back.delta)}`);
  };
  for (let i = 0; i < cases.length; i += 2) await Promise.all(cases.slice(i, i + 2).map(check));
});

test('dpfit curve --accountant pld: each point is what dpfit delta answers in its own process', async () => {
  const event = '{"kind":"selfCompose","count":50,"event":{"kind":"poissonSampled","samplingProbability":0.05,"event":{"kind":"gaussian","noiseMultiplier":1.2}}}';
  const curve = (await dpfit(['curve', '--accountant', 'pld', '--points', '3', '--max-epsilon', '2', '--event', event])) as { curves: { label: string; points: { epsilon: number; delta: number }[] }[] };
  const points = curve.curves[0].points;
  const single = await Promise.all(points.map((p) => dpfit(['delta', '--accountant', 'pld', '--epsilon', String(p.epsilon), '--event', event])));
  points.forEach((p, i) => assert.equal(p.delta, single[i].delta, `curve point at epsilon ${p.epsilon}`));
});
