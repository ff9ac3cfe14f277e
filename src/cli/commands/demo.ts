/**
 * `dpfit demo`: the README's first command. Until the learners land it demonstrates the
 * mechanisms and their accounting on an embedded synthetic data set: a private mean released with
 * the analytically calibrated Gaussian mechanism, next to what the classical calibration would
 * have cost, and its privacy report.
 */
import type { Command } from 'commander';
import { calibrateGaussian } from '../../accounting/calibrate-gaussian.js';
import { eventToJson } from '../../accounting/events.js';
import { gaussianMechanism } from '../../mechanisms/gaussian.js';
import { sampleGaussian } from '../../random/continuous.js';
import { defaultRng, seededRng } from '../../random/rng.js';
import { formatNumber, parseNumberFlag, printResult, type CliIo } from '../io.js';

/** The embedded data set: 10,000 synthetic ages, clipped to the public range [18, 90]. */
function syntheticAges(): Float64Array {
  const rng = seededRng(20261122); // the data is fake and fixed; the privacy noise below is not seeded
  const ages = new Float64Array(10_000);
  for (let i = 0; i < ages.length; i++) ages[i] = Math.min(90, Math.max(18, Math.round(sampleGaussian(rng, 41, 13))));
  return ages;
}

export function registerDemo(program: Command, io: CliIo): void {
  program
    .command('demo')
    .description('release a private mean of embedded synthetic data and print its privacy report')
    .option('--epsilon <E>', 'privacy budget epsilon', parseNumberFlag('--epsilon'), 1)
    .option('--delta <D>', 'privacy budget delta', parseNumberFlag('--delta'), 1e-5)
    .option('--json', 'print one JSON object')
    .action((options: { epsilon: number; delta: number; json?: boolean }) => {
      const ages = syntheticAges();
      const lower = 18;
      const upper = 90;
      let sum = 0;
      for (const a of ages) sum += Math.min(upper, Math.max(lower, a));
      const n = ages.length; // public: the demo releases a mean over a data set of known size
      const sensitivity = (upper - lower) / n; // replace-one: one age moves the mean by at most (upper - lower)/n
      const release = gaussianMechanism(sum / n, {
        sensitivity,
        targetEpsilon: options.epsilon,
        delta: options.delta,
        rng: defaultRng(),
      });
      const classical = options.epsilon < 1 ? calibrateGaussian({ targetEpsilon: options.epsilon, delta: options.delta, method: 'classical' }) : null;
      const result = {
        query: 'mean age of 10,000 synthetic people, ages clipped to the public range [18, 90]',
        trueValue: sum / n,
        privateValue: release.value,
        noiseStd: release.noiseStd,
        privacy: {
          epsilon: options.epsilon,
          delta: options.delta,
          mechanism: 'gaussian (analytic calibration, Balle & Wang 2018)',
          event: eventToJson(release.event),
          neighboringRelation: 'replaceOne',
          guarantee: 'proven',
          rng: 'secure (crypto.getRandomValues)',
        },
        classicalNoiseStd: classical === null ? null : classical.noiseStd * sensitivity,
      };
      printResult(io, Boolean(options.json), result, () =>
        [
          'dpfit demo: a private mean of embedded synthetic data',
          `  query            ${result.query}`,
          `  true mean        ${formatNumber(result.trueValue, 6)}   (never released)`,
          `  private mean     ${formatNumber(release.value, 6)}`,
          `  noise std        ${formatNumber(release.noiseStd, 4)}   (analytic Gaussian, sensitivity ${formatNumber(sensitivity, 4)})`,
          classical === null
            ? '  classical noise  not applicable (004 Prop. 2.2 needs epsilon < 1)'
            : `  classical noise  ${formatNumber(classical.noiseStd * sensitivity, 4)}   (004 Prop. 2.2 would have needed this much)`,
          '',
          'Privacy report',
          `  guarantee        (epsilon = ${formatNumber(options.epsilon)}, delta = ${formatNumber(options.delta)})-DP, proven`,
          `  neighbours       replace one record`,
          `  event            ${JSON.stringify(result.privacy.event)}`,
          `  randomness       ${result.privacy.rng}`,
          '',
          'Next: dpfit --help, dpfit calibrate gaussian --help, dpfit rgm --help',
        ].join('\n'),
      );
    });
}
