/**
 * `dpfit verify MODEL`: re-accounts the event a model file embeds with dpfit's own accountants
 * and says whether the file's privacy claim (epsilon, delta, guarantee, neighbouring relation,
 * and the rest of what the file holds) holds (`learners/verification/verify-model.ts`). Exit 0 when it holds,
 * 4 when it is not supported, 3 for a malformed file.
 */
import type { Command } from 'commander';
import { BudgetExceededError } from '../../errors.js';
import type { GuaranteeSummary, ModelVerification } from '../../learners/verification/verify-model.js';
import { formatNumber, printResult, type CliIo } from '../io.js';
import { loadModelFile } from '../model-file.js';

function summary(label: string, g: GuaranteeSummary): string {
  return `  ${label.padEnd(9)} (epsilon = ${formatNumber(g.epsilon, 8)}, delta = ${formatNumber(g.delta)}) ${g.guarantee}, ${g.accountant} accountant, ${g.neighboringRelation}`;
}

/** The human-readable verdict. */
export function formatVerification(path: string, result: ModelVerification): string {
  const lines = [
    result.holds
      ? `${path}: the privacy claim HOLDS${result.verified?.guarantee === 'none' ? ', but it guarantees nothing (NOT private)' : ''}`
      : `${path}: the privacy claim DOES NOT HOLD`,
  ];
  if (result.claimed !== null) lines.push(summary('claimed', result.claimed));
  if (result.verified !== null) lines.push(summary('verified', result.verified));
  lines.push(...result.problems.map((p) => `  problem   ${p}`));
  lines.push(...result.warnings.map((w) => `  warning   ${w}`));
  return lines.join('\n');
}

export function registerVerify(program: Command, io: CliIo): void {
  program
    .command('verify')
    .description("re-account a model file's privacy event and check that its claimed guarantee holds")
    .argument('<MODEL>', 'a model file written by dpfit train --out')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
A model file claims what it cost in its privacy block: epsilon, delta, the accountant, the
neighbouring relation, the guarantee (proven, conjecture or none) and the DpEvent released.
verify trusts only the event: it accounts it at the claimed delta with dpfit's own accountants
(RDP, PLD when it supports the event, the exact Gaussian composition when the event is one; the
tightest valid bound is the verified epsilon), and checks that
  - the claimed epsilon is at least the verified one, and is what the named accountant gives;
    privacy.rdp and privacy.pld are at least it and are what their accountants give (PLD's
    re-accounted where verify runs it anyway), comparisons are epsilons at the report's delta;
  - the neighbouring relation is the one the event's release has: add/remove-one exactly for
    DP-SGD (poissonSampled), objective perturbation and AMP (objectivePerturbation) and their
    composites, replace-one for every other release;
  - the claimed guarantee is not stronger than what holds: none for seeded randomness, for
    continuous floating-point noise or noise without a stated grid, for epsilon Infinity (no
    noise), for a schema suggested from the private data, for objective perturbation without
    output noise (its minimiser identifies the dataset); conjecture for conjectured bounds; and
    whatever the report's warnings say;
  - the stated grid: granularity (or granularities) is the one the event implies where it
    implies one (objective perturbation's and AMP's objective grid, RGM's gradient grid), and
    theta lies on it where theta is the noisy grid value itself (output, output-sgd, amp, and
    shuffled's lattice iterate): each coordinate an integer multiple of the grid;
  - for Propose-Test-Release (rgm): delta = deltaComponents.rdp + deltaComponents.ptr and the
    test's threshold >= log(1/delta_ptr)/epsilon_ptr;
  - a one-vs-rest model of k classes: the event is k runs, selfCompose(run, k);
  - a federated model: each node's report as above, and a block for every node its own
    description names (privacy.nodeNames and privacy.summary against privacy.nodes);
  - the file holds only fields dpfit writes, anywhere in it, the embedded schema included (an
    extra field can carry anything), and privacy.datasetSize is {value, source, note} as dpfit
    writes it.
The file is not signed: an event edited consistently with its claim, a guarantee raised by
editing randomness and warnings together, or data hidden in free text (warnings, names) cannot
be detected from the file alone (docs/threat-model.md).
No data are read. With --json: {file, holds, format, verified, claimed, problems, warnings} (verified
and claimed: {epsilon, delta, accountant, guarantee, neighboringRelation}; null without a
privacy block).

Exit status: 0 the claim holds, 4 it does not (edited epsilon, changed event, no privacy block,
a guarantee stronger than what holds, a relation the event does not have, a grid the event or
theta contradicts, a node's block missing, a field dpfit does not write), 3 the file is not a
well-formed dpfit model.

Example:
  $ dpfit train --data adult.data --schema adult.schema.json --epsilon 1 --out model.json
  $ dpfit verify model.json
  model.json: the privacy claim HOLDS
    claimed   (epsilon = 0.99999, delta = 1e-05) proven, rdp accountant, addOrRemoveOne
    verified  (epsilon = 0.99999, delta = 1e-05) proven, rdp accountant, addOrRemoveOne`,
    )
    .action((path: string, options: { json?: boolean }) => {
      const { verification } = loadModelFile(path);
      printResult(io, Boolean(options.json), { file: path, ...verification }, () => formatVerification(path, verification));
      if (!verification.holds) {
        const [first] = verification.problems;
        const more = verification.problems.length > 1 ? ` (and ${verification.problems.length - 1} more)` : '';
        throw new BudgetExceededError(`${path}: the privacy claim does not hold: ${first}${more}`);
      }
    });
}
