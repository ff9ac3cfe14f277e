/**
 * `dpfit rgm`: the (epsilon, delta) guarantee of the Relative Gaussian Mechanism for given parameters.
 */
import type { Command } from 'commander';
import { relativeGaussianCorollary1, relativeGaussianEpsilon } from '../../accounting/rdp/relative-gaussian.js';
import { InvalidParameterError } from '../../errors.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, printResult, type CliIo } from '../io.js';
import { deltaOption } from '../delta-option.js';
import { referencesHelp } from '../help/references.js';

export function registerRgm(program: Command, io: CliIo): void {
  program
    .command('rgm')
    .description('(epsilon, delta) of the Relative Gaussian Mechanism (its Renyi bound and closed form)')
    .requiredOption('--eta <H>', 'relative sensitivity eta (> 0)', parseNumberFlag('--eta'))
    .requiredOption('--gamma <G>', 'relative noise gamma (> 0)', parseNumberFlag('--gamma'))
    .requiredOption('--dimension <D>', 'dimension of the query output', parseIntegerFlag('--dimension'))
    .addOption(deltaOption())
    .option('--baseline-std <S>', 'baseline sigma (needs --r-rel: restricts the valid orders)', parseNumberFlag('--baseline-std'))
    .option('--r-rel <R>', 'R_rel of the relative sensitivity (needs --baseline-std)', parseNumberFlag('--r-rel'))
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
epsilon is the smallest bound over all Renyi orders in the Renyi bound's domain (best of Mironov's
and the improved RDP conversion); epsilonCorollary1 is the paper's closed form, null when its
condition (1/gamma >= 4 (2+eta)^2 log(1/delta) or d >= 4 log(1/delta)/(1+eta)^2) fails.

Example (the RGM paper's):
  $ dpfit rgm --eta 1e-3 --gamma 1e-4 --dimension 10 --delta 1e-8 --json
${referencesHelp([
  ['epsilon', '000 Thm. 1 (the Renyi bound)'],
  ['epsilonCorollary1', '000 Cor. 1'],
  ['the example', '000 Sec. 4.1'],
])}`,
    )
    .action((options: { eta: number; gamma: number; dimension: number; delta: number; baselineStd?: number; rRel?: number; json?: boolean }) => {
      // 000 Thm. 1's baseline term needs both: sigma alone (or R_rel alone) would be silently ignored.
      if (options.baselineStd !== undefined && options.rRel === undefined) {
        throw new InvalidParameterError('--r-rel', undefined, 'given with --baseline-std (the baseline sigma restricts the orders through R_rel)');
      }
      if (options.rRel !== undefined && options.baselineStd === undefined) {
        throw new InvalidParameterError('--baseline-std', undefined, 'given with --r-rel (R_rel matters only with a baseline sigma)');
      }
      const params = {
        eta: options.eta,
        gamma: options.gamma,
        dimension: options.dimension,
        baselineStd: options.baselineStd,
        rRel: options.rRel,
      };
      const best = relativeGaussianEpsilon(params, options.delta);
      const corollary = relativeGaussianCorollary1(params, options.delta);
      const result = {
        epsilon: best.epsilon,
        delta: best.delta,
        order: best.order,
        rdp: best.rdp,
        conversion: best.conversion,
        epsilonCorollary1: corollary === null ? null : corollary.epsilon,
        accountant: 'rdp',
        guarantee: 'proven',
      };
      printResult(io, Boolean(options.json), result, () =>
        [
          `Relative Gaussian Mechanism (eta ${formatNumber(options.eta)}, gamma ${formatNumber(options.gamma)}, d ${options.dimension}):`,
          `  epsilon ${formatNumber(best.epsilon)} at delta ${formatNumber(best.delta)} (Renyi order ${formatNumber(best.order, 8)}, ${best.conversion} conversion)`,
          `  Corollary 1: ${corollary === null ? 'not applicable' : formatNumber(corollary.epsilon)}`,
        ].join('\n'),
      );
    });
}
