/**
 * `dpfit federate`: the coordinator of federated training (`federated/coordinator.ts`, `000`
 * eq. 79) over nodes served by `dpfit node serve`. It sees only what the nodes release; each
 * node's guarantee is its own (local DP), reported node by node in the model file.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { writeOutputFiles } from '../../data/node/atomic-write.js';
import { checkOutputPaths } from '../output-files.js';
import { BudgetExceededError, DpfitError, InvalidParameterError } from '../../errors.js';
import { federate, type FederateOptions, type FederatedResult } from '../../federated/coordinator.js';
import { httpNodeClient } from '../../federated/http-client.js';
import { FEDERATED_METHODS, MAX_SESSION_STEPS, type FederatedMethod } from '../../federated/protocol.js';
import { takeDeprecatedFlag } from '../deprecated-flag.js';
import { formatNumber, parseIntegerFlag, parseNumberFlag, parseNumberListFlag, printResult, toJson, type CliIo } from '../io.js';
import { referencesHelp } from '../help/references.js';
import { progressBar } from '../progress.js';
import { readTokenFile } from './node.js';
import { MAX_DELTA, parseDeltaFlag } from '../delta-option.js';

interface FederateFlags {
  nodes: string;
  tokenFile: string;
  method: string;
  epsilon?: number;
  delta?: number;
  steps: number;
  regularization: number;
  clipNorm?: number[];
  /** The deprecated name of --clip-norm. */
  clip?: number[];
  featureClip?: number;
  bClip?: number;
  rho?: number;
  rdpOrder?: number;
  learningRate?: number;
  thetaRadius?: number;
  aggregation: string;
  collusion?: number;
  ca?: string;
  out?: string;
  json?: boolean;
}

/** The human-readable report: status, then each node's guarantee. */
function formatReport(result: FederatedResult): string {
  const lines = [result.status === 'trained' ? `trained: ${result.message}` : `STOPPED: ${result.message}`];
  const sum = result.privacy.aggregation;
  if (sum === undefined) lines.push(`privacy (local DP: each node's guarantee covers its own records):`);
  else {
    lines.push(`privacy (secure aggregation over ${sum.nodes} nodes: each node adds a share s = ${sum.shareNoiseStd} grid steps of g = ${sum.granularity}, the sum's noise std ${formatNumber(sum.sumNoiseStd, 6)}; each guarantee counts ${sum.countedShares} shares: it holds against the coordinator following the protocol with up to ${sum.collusion + 1} other nodes):`);
    lines.push(`  against a coordinator that breaks the protocol, each node's own share alone: (epsilon = ${formatNumber(sum.ownShare.epsilon, 6)}, delta = ${formatNumber(sum.ownShare.delta)})`);
  }
  for (const node of result.nodes) {
    if (node.plan === undefined) {
      lines.push(`  ${node.node} (${node.label}): no session${node.error === undefined ? '' : ` (${node.error})`}`);
      continue;
    }
    const p = node.plan.privacy;
    lines.push(
      `  ${node.node} (${node.label}): ${node.plan.method}, ${node.plan.steps} steps: (epsilon = ${formatNumber(p.epsilon, 6)}, delta = ${formatNumber(p.delta)}) ${p.guarantee}, ${p.accountant} accountant, ${p.neighboringRelation}${node.plan.ptr === undefined ? '' : `; PTR ${node.plan.ptr.passed ? 'passed' : 'REJECTED'}`}`,
    );
  }
  return lines.join('\n');
}

export function registerFederate(program: Command, io: CliIo): void {
  program
    .command('federate')
    .description('train one ridge model over data-holding nodes (dpfit node serve), each privatising its own gradients')
    .requiredOption('--nodes <URL,URL,...>', 'the nodes, e.g. http://10.0.0.5:7000,http://10.0.0.6:7000')
    .requiredOption('--token-file <FILE>', 'a file holding the bearer token the nodes expect')
    .requiredOption('--method <M>', `${FEDERATED_METHODS.join(' | ')}`)
    .option('--epsilon <E>', "each node's target epsilon for the whole run (with --rdp-order: its Renyi DP at that order)", parseNumberFlag('--epsilon'))
    .option('--delta <D>', `each node's target delta for the whole run, in (0, ${MAX_DELTA}]`, parseDeltaFlag('--delta'))
    .requiredOption('--steps <T>', 'gradient steps (each node answers each step once)', parseIntegerFlag('--steps'))
    .option('--regularization <MU>', 'mu of the ridge objective, on the average loss (the paper\'s value: 0.03)', parseNumberFlag('--regularization'), 0.03)
    .option('--clip-norm <C[,C...]>', 'dpgd: the per-example gradient clipping norm, one for all nodes or one per node', parseNumberListFlag('--clip-norm'))
    .addOption(new Option('--clip <C[,C...]>', 'deprecated alias of --clip-norm').argParser(parseNumberListFlag('--clip')).hideHelp())
    .option('--feature-clip <R>', "rgm: R_c (default: each node's public row-norm bound)", parseNumberFlag('--feature-clip'))
    .option('--b-clip <B>', 'rgm: the clip of the products x y (default R_c times the label bound)', parseNumberFlag('--b-clip'))
    .option('--rho <RHO>', "rgm: the proposed rho of each node's Propose-Test-Release test", parseNumberFlag('--rho'))
    .option('--rdp-order <A>', 'calibrate each node to Renyi DP at this order instead (the paper\'s: 2)', parseNumberFlag('--rdp-order'))
    .option('--theta-radius <R>', "the public ball ||theta|| <= R every node projects theta onto (default: 2 L / sqrt(mu) from the nodes' label bounds L; rgm: each node's own ball)", parseNumberFlag('--theta-radius'))
    .option('--aggregation <MODE>', "local (each node adds its own full noise) | secure (dpgd: nodes add noise shares to a masked sum only the total of which the coordinator sees)", 'local')
    .option('--collusion <T>', 'secure: each guarantee counts the noise shares of nodes - 1 - T nodes (holds against the coordinator with up to T + 1 other nodes; default 0)', parseIntegerFlag('--collusion'))
    .option('--learning-rate <TAU>', "step size (default 1 / max_i (1 + d gamma_i) L_i from the nodes' public constants)", parseNumberFlag('--learning-rate'))
    .option('--ca <FILE>', 'the CA certificate of https nodes')
    .option('--out <MODEL>', 'write the model file (dpfit-federated-model/1)')
    .option('--json', 'print one JSON object')
    .addHelpText(
      'after',
      `
Runs theta <- theta - tau * mean_i g_i(theta), where g_i is the gradient node i
releases with its own noise. Each node first opens a session: it accounts the WHOLE run (T steps
at --epsilon/--delta for its own records) against its budget and may refuse (HTTP 403). A node
that refuses or stops answering stops the run: nothing more is asked, the report says what each
node granted (that budget is spent), no model is written, exit 4 (3 for network errors, 2 for a
request a node finds invalid, e.g. a target below RGM's floor for its data).

Secure aggregation (--aggregation secure, dpgd only, nodes serving with --allow-secure-aggregation):
each node rounds its clipped gradient sum to a shared grid, adds a discrete Gaussian SHARE of the
noise and masks the integers with pairwise masks (X25519 keys relayed by the coordinator) that
cancel in the sum modulo 2^bits: the coordinator sees only the sum, so each node needs about
sqrt(K - 1 - T) times less noise for the same epsilon. Each node's guarantee counts K - 1 - T
shares (the coordinator following the protocol, with up to T + 1 other nodes colluding); the report
also gives what a node's own share alone guarantees. No dropout recovery: a node failing during a
step stops the run, and that step releases nothing.

Methods: rgm (each node estimates its relative sensitivity locally and checks it by PTR: no
threshold to tune), dpgd (--clip-norm: a threshold that, as the RGM paper shows, depends on the other
nodes' data to be set well), nonprivate (nodes serving with --budget-epsilon Infinity only).

The model file holds the coefficients, the public schema's feature names and one privacy report
per node; dpfit verify checks every node's claim. The coordinator holds no data and keeps no
ledger (no --ledger): every node accounts its sessions in its own (dpfit node serve --ledger).

Example:
  $ dpfit federate --nodes http://127.0.0.1:7000,http://127.0.0.1:7001 --token-file token \\
      --method rgm --epsilon 1 --delta 1e-6 --steps 100 --out model.json
${referencesHelp([
  ['federated training', '000 Sec. 6 (the clip threshold that depends on the other nodes: there too)'],
  ['the update', '000 App. C eq. 79; --regularization 0.03 and --rdp-order 2: 000 App. C'],
  ['--aggregation secure', '004 Sec. 5.4'],
])}`,
    )
    .action(async (flags: FederateFlags, command: Command) => {
      takeDeprecatedFlag(flags as unknown as Record<string, unknown>, { key: 'clip', flag: '--clip' }, { key: 'clipNorm', flag: '--clip-norm' }, command, io, "train's name for the clipping norm");
      // ---- everything checkable before any node is asked anything
      if (!(FEDERATED_METHODS as readonly string[]).includes(flags.method)) throw new InvalidParameterError('--method', flags.method, FEDERATED_METHODS.join(', '));
      const method = flags.method as FederatedMethod;
      if (!(flags.steps >= 1 && flags.steps <= MAX_SESSION_STEPS)) throw new InvalidParameterError('--steps', flags.steps, `an integer in [1, ${MAX_SESSION_STEPS}]`);
      if (method === 'nonprivate') {
        for (const [flag, value] of [['--epsilon', flags.epsilon], ['--delta', flags.delta], ['--rdp-order', flags.rdpOrder]] as const) {
          if (value !== undefined) throw new InvalidParameterError(flag, value, 'absent with --method nonprivate (no noise)');
        }
      } else {
        if (flags.epsilon === undefined) throw new InvalidParameterError('--epsilon', undefined, `given with --method ${method}`);
        if (flags.delta === undefined) throw new InvalidParameterError('--delta', undefined, `given with --method ${method}`);
      }
      if (method === 'dpgd' && flags.clipNorm === undefined) throw new InvalidParameterError('--clip-norm', undefined, 'given with --method dpgd (the clipping norm; one per node allowed)');
      if (flags.aggregation !== 'local' && flags.aggregation !== 'secure') throw new InvalidParameterError('--aggregation', flags.aggregation, 'local or secure');
      if (flags.aggregation === 'secure' && method !== 'dpgd') throw new InvalidParameterError('--aggregation', 'secure', `local with --method ${method} (secure aggregation covers dpgd only)`);
      if (flags.aggregation !== 'secure' && flags.collusion !== undefined) throw new InvalidParameterError('--collusion', flags.collusion, 'given only with --aggregation secure');
      if (method !== 'dpgd' && flags.clipNorm !== undefined) throw new InvalidParameterError('--clip-norm', flags.clipNorm.join(','), 'given only with --method dpgd');
      if (method !== 'rgm') {
        for (const [flag, value] of [['--feature-clip', flags.featureClip], ['--b-clip', flags.bClip], ['--rho', flags.rho]] as const) {
          if (value !== undefined) throw new InvalidParameterError(flag, value, 'given only with --method rgm');
        }
      }
      const urls = flags.nodes.split(',').map((u) => u.trim()).filter((u) => u !== '');
      if (urls.length === 0) throw new InvalidParameterError('--nodes', flags.nodes, 'one or more node URLs, comma-separated');
      if (new Set(urls).size !== urls.length) throw new InvalidParameterError('--nodes', flags.nodes, 'distinct URLs');
      if (flags.clipNorm !== undefined && flags.clipNorm.length !== 1 && flags.clipNorm.length !== urls.length) {
        throw new InvalidParameterError('--clip-norm', flags.clipNorm.join(','), `one norm or one per node (${urls.length})`);
      }
      const [out] = checkOutputPaths([flags.out === undefined ? undefined : { flag: '--out', path: flags.out }], [{ flag: '--token-file', path: flags.tokenFile }, ...(flags.ca === undefined ? [] : [{ flag: '--ca', path: flags.ca }])]);
      const token = readTokenFile(flags.tokenFile);
      let ca: Buffer | undefined;
      if (flags.ca !== undefined) {
        try {
          ca = readFileSync(flags.ca);
        } catch (error) {
          throw new InvalidParameterError('--ca', flags.ca, 'a readable certificate file', (error as NodeJS.ErrnoException).code);
        }
      }
      const clients = urls.map((url) => httpNodeClient(url, token, { client: 'dpfit federate', ...(ca === undefined ? {} : { ca }) }));

      const bar = progressBar(`federated training (${method}, ${urls.length} nodes)`, { enabled: !flags.json });
      const options: FederateOptions = {
        method,
        steps: flags.steps,
        regularization: flags.regularization,
        ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
        ...(flags.delta === undefined ? {} : { delta: flags.delta }),
        ...(flags.clipNorm === undefined ? {} : { clipNorm: flags.clipNorm.length === 1 ? flags.clipNorm[0] : flags.clipNorm }),
        ...(flags.featureClip === undefined ? {} : { featureClip: flags.featureClip }),
        ...(flags.bClip === undefined ? {} : { bClip: flags.bClip }),
        ...(flags.rho === undefined ? {} : { rho: flags.rho }),
        ...(flags.rdpOrder === undefined ? {} : { rdpOrder: flags.rdpOrder }),
        ...(flags.learningRate === undefined ? {} : { learningRate: flags.learningRate }),
        ...(flags.thetaRadius === undefined ? {} : { thetaRadius: flags.thetaRadius }),
        ...(flags.aggregation === 'secure' ? { aggregation: 'secure' as const, ...(flags.collusion === undefined ? {} : { collusion: flags.collusion }) } : {}),
        ...(bar === undefined ? {} : { onStep: (t: number, total: number) => bar.onStep(t, total) }),
      };
      let result: FederatedResult;
      try {
        result = await federate(clients, options);
        bar?.end(result.status === 'trained');
      } catch (error) {
        bar?.end(false);
        throw error;
      }
      if (result.status === 'trained' && out !== undefined) writeOutputFiles([{ output: out, data: `${toJson(result.model)}\n` }]);
      const output = { status: result.status, message: result.message, model: result.model ?? null, privacy: result.privacy, ...(flags.out === undefined ? {} : { modelFile: result.status === 'trained' ? flags.out : null }) };
      printResult(io, Boolean(flags.json), output, () => formatReport(result) + (result.status === 'trained' && flags.out !== undefined ? `\nmodel written to ${flags.out}` : ''));
      if (result.status === 'stopped') {
        // The exit status of the cause: 2 a request a node found invalid, 3 the network, 4 a refusal (budget, PTR).
        const code = result.cause instanceof DpfitError && ['FETCH_FAILED', 'INVALID_PARAMETER'].includes(result.cause.code) ? result.cause.code : 'BUDGET_EXCEEDED';
        throw code === 'BUDGET_EXCEEDED' ? new BudgetExceededError(`the federated run stopped: ${result.message}`) : new DpfitError(code, `the federated run stopped: ${result.message}`);
      }
    });
}
