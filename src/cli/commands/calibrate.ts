/**
 * `dpfit calibrate gaussian` and `dpfit calibrate rgm`: the noise for a target (epsilon, delta).
 */
import type { Command } from 'commander';
import { calibrateGaussian, type GaussianCalibrationMethod } from '../../accounting/gaussian/calibrate-gaussian.js';
import { calibrateRelativeGaussian } from '../../accounting/rdp/relative-gaussian.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, printResult, type CliIo } from '../io.js';
import { deltaOption } from '../delta-option.js';
import { referencesHelp } from '../help/references.js';
import { deprecatedTargetEpsilonOption, takeTargetEpsilon, targetEpsilonOption, type TargetEpsilonFlags } from '../target-epsilon.js';

export function registerCalibrate(program: Command, io: CliIo): void {
  const calibrate = program
    .command('calibrate')
    .description('find the noise a mechanism needs for a target (epsilon, delta)');

  calibrate
    .command('gaussian')
    .description('noise for the Gaussian mechanism (its exact, analytic calibration by default)')
    .addOption(targetEpsilonOption()).addOption(deprecatedTargetEpsilonOption())
    .addOption(deltaOption('target delta, in (0, 1)'))
    .option('--sensitivity <S>', 'L2 sensitivity of the query', parseNumberFlag('--sensitivity'), 1)
    .option('--method <M>', "'analytic' (exact, any epsilon) or 'classical' (the textbook formula, epsilon < 1)", 'analytic')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
The analytic calibration finds the smallest noise whose exact privacy profile
delta(epsilon) = Phi(-eps s + 1/(2s)) - e^eps Phi(-eps s - 1/(2s)) (s = noise/sensitivity) meets the
target; the classical one is sqrt(2 log(1.25/delta)) * sensitivity / epsilon, proved for epsilon < 1.

Example:
  $ dpfit calibrate gaussian --epsilon 1 --delta 1e-5 --json
  {"noiseStd": 3.7306..., "noiseMultiplier": 3.7306..., "epsilon": 1, "delta": 1e-05, "method": "analytic"}
${referencesHelp([
  ['analytic', 'Balle & Wang 2018, Improving the Gaussian Mechanism for Differential Privacy'],
  ['classical', '004 Prop. 2.2; Dwork & Roth 2014, Thm. A.1'],
])}`,
    )
    .action((options: TargetEpsilonFlags & { delta: number; sensitivity: number; method: string; json?: boolean }, command: Command) => {
      const targetEpsilon = takeTargetEpsilon(options, command, io);
      const result = calibrateGaussian({
        targetEpsilon,
        delta: options.delta,
        sensitivity: options.sensitivity,
        method: options.method as GaussianCalibrationMethod,
      });
      printResult(io, Boolean(options.json), result, () =>
        [
          `Gaussian mechanism, ${result.method} calibration, L2 sensitivity ${formatNumber(result.sensitivity)}:`,
          `  noise std ${formatNumber(result.noiseStd, 10)} (noise multiplier ${formatNumber(result.noiseMultiplier, 10)})`,
          `  guarantees (epsilon = ${formatNumber(result.epsilon)}, delta = ${formatNumber(result.delta)})`,
        ].join('\n'),
      );
    });

  calibrate
    .command('rgm')
    .description('relative noise gamma for the Relative Gaussian Mechanism (its Renyi bound, the order optimised)')
    .requiredOption('--eta <H>', 'relative sensitivity eta (> 0)', parseNumberFlag('--eta'))
    .requiredOption('--dimension <D>', 'dimension of the query output', parseIntegerFlag('--dimension'))
    .addOption(targetEpsilonOption()).addOption(deprecatedTargetEpsilonOption())
    .addOption(deltaOption('target delta, in (0, 1)'))
    .option('--r-rel <R>', "R_rel of the query's relative sensitivity: also return the baseline sigma", parseNumberFlag('--r-rel'))
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Finds the smallest gamma (least noise) such that RGM is (epsilon, delta)-DP, minimising over the
Renyi order alpha in the bound's domain [1, 1 + 1/(eta (2 + eta))). Some targets cannot be reached
by any gamma (the bound has a floor above zero): the command then says what the floor is.

Example:
  $ dpfit calibrate rgm --eta 1e-3 --dimension 10 --epsilon 0.5 --delta 1e-8 --json
${referencesHelp([
  ['RGM', '000 Thm. 1 (its Renyi bound); the floor: 000 Sec. 4.1'],
])}`,
    )
    .action((options: TargetEpsilonFlags & { eta: number; dimension: number; delta: number; rRel?: number; json?: boolean }, command: Command) => {
      const targetEpsilon = takeTargetEpsilon(options, command, io);
      const result = calibrateRelativeGaussian({ eta: options.eta, dimension: options.dimension, targetEpsilon, delta: options.delta, ...(options.rRel === undefined ? {} : { rRel: options.rRel }) });
      printResult(io, Boolean(options.json), result, () =>
        [
          `Relative Gaussian Mechanism, eta ${formatNumber(options.eta)}, dimension ${options.dimension}:`,
          `  gamma ${formatNumber(result.gamma, 10)} at Renyi order ${formatNumber(result.order, 8)}`,
          result.baselineStd !== undefined ? `  baseline sigma ${formatNumber(result.baselineStd, 10)}` : '',
          `  guarantees (epsilon = ${formatNumber(result.epsilon)}, delta = ${formatNumber(result.delta)})`,
        ]
          .filter((line) => line !== '')
          .join('\n'),
      );
    });
}
