/**
 * `dpfit node serve`: a data owner's node of federated training (`federated/`, `000` Sec. 6). It
 * loads its data next to where they live, opens its persistent privacy ledger, and answers
 * authenticated requests of a coordinator (`dpfit federate`) with privatised gradients, never a
 * record. Every session is accounted against the node's budget in the ledger before anything is
 * released; what would exceed it is refused (HTTP 403).
 */
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { loadDataset, readSchemaFile } from '../../data/node/read.js';
import { labelColumn } from '../../data/schema/bounds.js';
import { isSuggestedSchema, schemaToJson } from '../../data/schema/parse.js';
import type { Schema } from '../../data/schema/types.js';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { PrivacyLedger } from '../../federated/ledger.js';
import { FederatedNode, type NodeData } from '../../federated/node.js';
import { MIN_TOKEN_LENGTH, startNodeServer } from '../../federated/http-server.js';
import { seededRng } from '../../random/rng.js';
import { parseIntegerFlag, parseNumberFlag, type CliIo } from '../io.js';
import { referencesHelp } from '../help/references.js';

/** HOST:PORT (IPv6 hosts in brackets), port 0 for any free port. */
export function parseListen(raw: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:\s]+):(\d{1,5})$/.exec(raw);
  const port = match === null ? NaN : Number(match[2]);
  if (match === null || !(port >= 0 && port <= 65535)) throw new InvalidParameterError('--listen', raw, 'HOST:PORT, e.g. 127.0.0.1:7000 or 0.0.0.0:7000 (port 0: any free port)');
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

/** The bearer token in a file (trimmed): a secret of at least MIN_TOKEN_LENGTH characters. */
export function readTokenFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new DataFormatError(`--token-file ${path}`, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  const token = text.trim();
  if (token.length < MIN_TOKEN_LENGTH || /\s/.test(token)) {
    throw new InvalidParameterError('--token-file', path, `a file holding one secret token of at least ${MIN_TOKEN_LENGTH} characters without spaces (e.g. openssl rand -hex 32 > token)`);
  }
  return token;
}

function readOptionalFile(flag: string, path: string | undefined): Buffer | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new DataFormatError(`${flag} ${path}`, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/**
 * A node's data as the protocol uses it: the schema's features (public bounds), binary labels as
 * -1/+1 (ridge on +-1 targets, as `000` does; label bound 1), numeric labels as they are.
 */
export async function loadNodeData(path: string, schema: Schema): Promise<NodeData> {
  const label = labelColumn(schema);
  if (label === undefined) throw new InvalidParameterError('--schema', 'no label column', 'a schema with a label column');
  if (label.classes !== undefined) throw new InvalidParameterError('--schema', 'a multi-class label', 'a binary or numeric label (federated training fits ridge regression)');
  // n is public (replace-one within the node): a record dropped for a missing value stays, as a zero row (data/dropped-rows.ts).
  const prepared = await loadDataset(path, schema, { droppedRows: 'zeroRows' });
  const { dataset } = prepared;
  const binary = label.positive !== undefined;
  return {
    x: dataset.x,
    y: binary ? dataset.y.map((v) => (v > 0 ? 1 : -1)) : dataset.y,
    n: dataset.n,
    d: dataset.d,
    featureNames: dataset.featureNames ?? Array.from({ length: dataset.d }, (_, j) => `x${j + 1}`),
    rowNormBound: prepared.rowNormBound,
    labelBound: binary ? 1 : prepared.labelBound,
    task: binary ? 'classification' : 'regression',
  };
}

interface ServeFlags {
  data: string;
  schema: string;
  budgetEpsilon: number;
  budgetDelta: number;
  ledger: string;
  listen: string;
  tokenFile: string;
  name?: string;
  tlsKey?: string;
  tlsCert?: string;
  seed?: number;
  allowSecureAggregation?: boolean;
}

export function registerNode(program: Command, io: CliIo): void {
  const node = program.command('node').description('serve a data owner node for federated training (dpfit federate)');
  node
    .command('serve')
    .description("answer a coordinator's requests with privatised gradients of this node's data, within its privacy budget")
    .requiredOption('--data <FILE>', "this node's private data (CSV, Parquet or LIBSVM)")
    .requiredOption('--schema <FILE>', 'the PUBLIC schema (shared by all nodes: the same features)')
    .requiredOption('--budget-epsilon <E>', "this node's total epsilon for everything it will ever release (Infinity allows non-private answers)", (raw: string) =>
      raw.trim() === 'Infinity' ? Infinity : parseNumberFlag('--budget-epsilon')(raw),
    )
    .requiredOption('--budget-delta <D>', "this node's total delta", parseNumberFlag('--budget-delta'))
    .requiredOption('--ledger <FILE>', 'the persistent privacy ledger (created if absent; its budget can never be raised)')
    .requiredOption('--listen <HOST:PORT>', 'where to listen, e.g. 127.0.0.1:7000')
    .requiredOption('--token-file <FILE>', "a file holding the bearer token coordinators must present")
    .option('--name <NAME>', 'the node\'s name in reports (default: the data file name)')
    .option('--tls-key <FILE>', 'serve HTTPS with this private key (with --tls-cert)')
    .option('--tls-cert <FILE>', 'serve HTTPS with this certificate (with --tls-key)')
    .option('--seed <N>', 'seed the noise (reproducible runs for tests; NOT private: every report says guarantee none)', parseIntegerFlag('--seed'))
    .option('--allow-secure-aggregation', "accept dpgd sessions with secure aggregation (dpfit federate --aggregation secure): this node then adds only a share of the noise, and its guarantee rests on the coordinator following the protocol and on the other nodes adding theirs")
    .addHelpText(
      'after',
      `
The node is the only place the data are read. A coordinator (dpfit federate) opens a session:
a whole run of T gradient steps with one mechanism at a target (epsilon, delta) for THIS node's
records (local differential privacy, replace-one neighbours within the node). The node
calibrates its noise from public quantities, checks in its ledger that everything it has ever
released plus this session stays within --budget-epsilon/--budget-delta, records the session
(committed to disk) and only then reads its data. Refused sessions get HTTP 403 and release
nothing. The ledger survives restarts and crashes: the spent budget never goes down
(dpfit ledger show FILE lists it, also while the node runs; GET /budget with the token answers
the same object). The node does not hold the file: other processes (dpfit train --ledger FILE,
another node) may share the budget, and every reservation is decided on what is on disk.

Mechanisms: rgm (the Relative Gaussian Mechanism with this node's own
Propose-Test-Release check: no knowledge of other nodes needed), dpgd (per-example clipping at
the coordinator's threshold, Gaussian noise), nonprivate (only with --budget-epsilon Infinity).

The coordinator is not trusted: every request is checked against public ranges and every theta
is projected onto a public ball before the data are read, so no answer's status depends on a
record. The rows must meet the schema's bounds (row norm, label), checked at start-up.

Secure aggregation (--allow-secure-aggregation, dpgd only): the node masks its clipped gradient
sum, with a noise SHARE, so that the coordinator can read only the sum over the session's K nodes.
The guarantee it accounts counts the shares of K - 1 - T nodes (T: the coordinator's --collusion)
and holds against a coordinator that follows the protocol, together with up to T + 1 other nodes;
against a coordinator that breaks it (relays its own keys, invents nodes) only this node's own
share protects it, which the plan reports too. Without the flag such sessions are refused (400).

Binary labels are used as -1/+1 (ridge regression on +-1 targets, as the RGM paper does).
Stop the node with Ctrl-C (SIGINT) or SIGTERM.

Example:
  $ openssl rand -hex 32 > token
  $ dpfit node serve --data hospital-a.csv --schema shared.schema.json \\
      --budget-epsilon 1 --budget-delta 1e-6 --ledger a.ledger --listen 0.0.0.0:7000 --token-file token
${referencesHelp([
  ['mechanisms', '000 Sec. 6 and App. C (rgm, dpgd; ridge on +-1 targets)'],
  ['secure aggregation', '004 Sec. 5.4'],
])}`,
    )
    .action(async (flags: ServeFlags) => {
      const log = io.log ?? io.stderr;
      // ---- everything checkable before the data are read
      const { host, port } = parseListen(flags.listen);
      const token = readTokenFile(flags.tokenFile);
      if ((flags.tlsKey === undefined) !== (flags.tlsCert === undefined)) throw new InvalidParameterError(flags.tlsKey === undefined ? '--tls-key' : '--tls-cert', undefined, 'given with ' + (flags.tlsKey === undefined ? '--tls-cert' : '--tls-key'));
      const tls = flags.tlsKey === undefined ? undefined : { key: readOptionalFile('--tls-key', flags.tlsKey) as Buffer, cert: readOptionalFile('--tls-cert', flags.tlsCert) as Buffer };
      const schema = await readSchemaFile(flags.schema);
      if (isSuggestedSchema(schema)) throw new InvalidParameterError('--schema', flags.schema, 'a schema written from public knowledge (this one was suggested from private data: its bounds would leak them)');
      const label = labelColumn(schema);
      if (label === undefined) throw new InvalidParameterError('--schema', flags.schema, 'a schema with a label column');
      if (label.classes !== undefined) throw new InvalidParameterError('--schema', flags.schema, 'a binary or numeric label (federated training fits ridge regression; multi-class labels are not supported)');
      const rng = flags.seed === undefined ? undefined : seededRng(flags.seed);
      const ledger = await PrivacyLedger.open(flags.ledger, { epsilon: flags.budgetEpsilon, delta: flags.budgetDelta });
      let server;
      try {
        // ---- the data
        const data = await loadNodeData(flags.data, schema);
        const name = flags.name ?? flags.data.replace(/^.*[\\/]/, '');
        const federated = new FederatedNode(data, ledger, { name, schema: schemaToJson(schema), ...(rng === undefined ? {} : { rng }), ...(flags.allowSecureAggregation === true ? { secureAggregation: true } : {}) });
        server = await startNodeServer(federated, { host, port, token, ...(tls === undefined ? {} : { tls }), log: (line) => log(`dpfit node ${name}: ${line}\n`), budget: () => ledger.summary() });
        const spent = await ledger.spent();
        log(
          `dpfit node ${name}: serving ${data.n} rows x ${data.d} features on ${server.url} (budget epsilon ${flags.budgetEpsilon}, delta ${flags.budgetDelta}; spent so far epsilon ${spent.epsilon} over ${spent.entries} session(s)); Ctrl-C stops\n`,
        );
        await new Promise<void>((resolve) => {
          const stop = () => resolve();
          process.once('SIGINT', stop);
          process.once('SIGTERM', stop);
        });
      } finally {
        await server?.close();
        await ledger.close();
      }
    });
}
