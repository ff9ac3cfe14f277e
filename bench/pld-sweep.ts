/**
 * `npm run bench -- pld-sweep`: PLD epsilon over a seeded log-uniform sweep of q in [1e-4, 1], z in
 * [0.3, 20], steps in [1, 1e5], delta in [1e-12, 1e-2] (PLD_SWEEP_POINTS, default 400, the points
 * once refused and the box's corners first). At each point: refusals (a throw, or a warning that
 * the bracket could not be narrowed), the relative gap to an independent lower bound (the exact
 * Gaussian formula at q = 1, test/helpers/pld-lower-bound.ts otherwise), and the round trip
 * delta(epsilon(d)) <= d on the same accountant. Prints one line per point and a summary.
 */
import { PldAccountant } from '../src/accounting/pld/accountant.js';
import type { DpEvent } from '../src/accounting/events/types.js';
import { gaussianEpsilon, poissonGaussianEpsilonLower } from '../test/helpers/pld-lower-bound.js';
import { mulberry32 } from '../test/helpers/mulberry32.js';

const rng = mulberry32;

export async function runPldSweepBench(): Promise<void> {
  const total = Number(process.env.PLD_SWEEP_POINTS ?? 400);
  const random = rng(17);
  const logUniform = (a: number, b: number) => Math.exp(Math.log(a) + random() * (Math.log(b) - Math.log(a)));
  const points: [number, number, number, number][] = [
    [2, 0.004806, 0.413898, 6.33e-7],
    [2, 0.001257, 0.59597, 6.78e-5],
    [1000, 1e-4, 0.5, 1e-10],
    [100000, 1e-3, 0.8, 1e-12],
    [100000, 1e-4, 0.3, 1e-12],
    [1, 1, 0.3, 1e-12],
    [100000, 1, 20, 1e-2],
    [1, 1e-4, 20, 1e-2],
  ];
  while (points.length < total) {
    const q = random() < 0.1 ? 1 : logUniform(1e-4, 1);
    points.push([Math.max(1, Math.round(logUniform(1, 1e5))), q, logUniform(0.3, 20), logUniform(1e-12, 1e-2)]);
  }
  let refusals = 0;
  let violations = 0;
  let below = 0;
  let worst = 0;
  let worstAt = '';
  const above: string[] = [];
  let pldTime = 0;
  let lowerTime = 0;
  for (const [i, [steps, q, z, delta]] of points.entries()) {
    const label = `#${i} steps=${steps} q=${q.toPrecision(4)} z=${z.toPrecision(4)} delta=${delta.toPrecision(3)}`;
    const event = (q >= 1 ? { kind: 'gaussian', noiseMultiplier: z } : { kind: 'poissonSampled', samplingProbability: q, event: { kind: 'gaussian', noiseMultiplier: z } }) as unknown as DpEvent;
    const t0 = performance.now();
    let epsilon: number;
    let own: number | undefined;
    let back: number;
    try {
      const accountant = new PldAccountant().compose(event, steps);
      const result = accountant.getEpsilon(delta);
      epsilon = result.epsilon;
      own = result.epsilonLower;
      if (result.warnings.some((w) => w.includes('only known to lie'))) {
        refusals++;
        process.stdout.write(`${label}: bracket not narrowed (${result.warnings.join('; ')})\n`);
      }
      back = accountant.getDelta(epsilon).delta;
    } catch (error) {
      refusals++;
      process.stdout.write(`${label}: REFUSED ${(error as Error).message}\n`);
      continue;
    }
    const t1 = performance.now();
    pldTime += t1 - t0;
    if (back > delta) violations++;
    let lower: number;
    try {
      lower = q >= 1 ? gaussianEpsilon(Math.sqrt(steps) / z, delta) : poissonGaussianEpsilonLower({ samplingProbability: q, noiseMultiplier: z, steps, delta, targetEpsilon: epsilon });
    } catch (error) {
      process.stdout.write(`${label}: lower bound failed ${(error as Error).message}\n`);
      above.push(`${label}: lower bound failed`);
      continue;
    }
    lowerTime += performance.now() - t1;
    const gap = lower > 0 ? epsilon / lower - 1 : epsilon === 0 ? 0 : Infinity;
    if (gap < 0) below++;
    // dpfit's own bracket [epsilonLower, epsilon] says whether a gap is dpfit's (wide bracket) or the helper's.
    const ownGap = own !== undefined && own > 0 ? epsilon / own - 1 : Infinity;
    if (gap > 1e-4) above.push(`${label}: gap ${gap.toExponential(2)}, dpfit's own bracket ${ownGap.toExponential(2)}`);
    if (gap > worst) {
      worst = gap;
      worstAt = label;
    }
    process.stdout.write(`${label}: epsilon ${epsilon} epsilonLower ${own} (own gap ${ownGap.toExponential(2)}) lower ${lower} gap ${gap.toExponential(2)} delta(epsilon) ${back <= delta ? '<=' : '>'} delta; ${((t1 - t0) / 1000).toFixed(2)} s (lower bound ${((performance.now() - t1) / 1000).toFixed(2)} s)\n`);
  }
  for (const line of above) process.stdout.write(`above 1e-4: ${line}\n`);
  process.stdout.write(
    `pld-sweep: ${points.length} points, ${above.length} above 1e-4, ${refusals} refusals, ${below} below the lower bound, worst gap ${worst.toExponential(2)} (${worstAt}), ${violations} round-trip violations; PLD ${(pldTime / 1000).toFixed(1)} s, lower bounds ${(lowerTime / 1000).toFixed(1)} s\n`,
  );
}
