/**
 * A federated node over HTTP/JSON (`dpfit node serve`): Node's own `http`/`https`, no framework.
 *
 *   GET  /info       -> NodeInfo
 *   GET  /budget     -> the ledger's summary (`PrivacyLedger.summary()`: what `dpfit ledger show
 *                       --json` prints), when the node has a persistent ledger (404 otherwise)
 *   POST /sessions   SessionRequest  -> SessionPlan          (403: the budget refuses)
 *   POST /gradient   GradientRequest -> GradientAnswer       (404: no such session; 409: step
 *                                                             already answered or beyond T)
 *
 * Every request needs `Authorization: Bearer <token>`; the token is compared in constant time
 * (SHA-256 digests of both sides, `timingSafeEqual`), and a wrong or missing token gets 401 before
 * the body is read. Bodies are JSON of at most `maxBodyBytes` (413 beyond, read no further) nested
 * at most `MAX_MESSAGE_DEPTH` deep (400 otherwise, decided on the text before it is parsed); errors
 * are `{"error": "...", "status": N}` bodies with the status. TLS when given a key and certificate.
 * The node logs one line per request on its log (never the data, never a gradient); only an
 * internal error (500, a bug) logs a stack. No request can make the data decide a status
 * (`node.ts`, `public-ranges.ts`).
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { DpfitError, InvalidParameterError } from '../errors.js';
import { NodeRefusal, type FederatedNode } from './node.js';
import { MAX_MESSAGE_DEPTH } from './protocol.js';
import { encodeMessage } from './wire.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';

export interface NodeServerOptions {
  readonly host: string;
  readonly port: number;
  readonly token: string;
  readonly tls?: { readonly key: string | Buffer; readonly cert: string | Buffer };
  /** Largest request body (default 1 MiB: a gradient request of 50 000 coordinates). */
  readonly maxBodyBytes?: number;
  readonly log?: (line: string) => void;
  /** What `GET /budget` answers: the persistent ledger's summary (`dpfit node serve` gives `ledger.summary`). */
  readonly budget?: () => Promise<unknown>;
}

export interface RunningNodeServer {
  readonly url: string;
  close(): Promise<void>;
}

/** The shortest bearer token accepted (a token is a secret: 128 bits as hex is 32 characters). */
export const MIN_TOKEN_LENGTH = 16;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

function readBody(request: IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limit) {
      reject(new HttpError(413, `request body of ${declared} bytes is over the node's limit of ${limit} bytes`));
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        // Read no further; the connection is closed once the 413 answer is sent.
        request.pause();
        request.removeAllListeners('data');
        reject(new HttpError(413, `request body over the node's limit of ${limit} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

/** Whether JSON text nests arrays and objects deeper than `limit` (a scan of the text: nothing is parsed or recursed). */
function nestsDeeperThan(text: string, limit: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > limit) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}

function send(response: ServerResponse, status: number, body: unknown, close = false): void {
  const text = encodeMessage(body);
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(close ? { connection: 'close' } : {}),
  });
  response.end(text);
}

const TLS_OPTIONS = optionNames<NonNullable<NodeServerOptions['tls']>>({ key: true, cert: true });
const NODE_SERVER_OPTIONS = optionNames<NodeServerOptions>({ host: true, port: true, token: true, tls: true, maxBodyBytes: true, log: true, budget: true });

/** Starts serving `node`; resolves once listening (the URL has the actual port when port is 0). */
export async function startNodeServer(node: FederatedNode, options: NodeServerOptions): Promise<RunningNodeServer> {
  rejectUnknownOptions(options, NODE_SERVER_OPTIONS, 'startNodeServer');
  if (typeof options.tls === 'object' && options.tls !== null) rejectUnknownOptions(options.tls, TLS_OPTIONS, "startNodeServer's tls");
  if (typeof options.token !== 'string' || options.token.length < MIN_TOKEN_LENGTH) {
    throw new InvalidParameterError('token', '(hidden)', `a secret of at least ${MIN_TOKEN_LENGTH} characters`);
  }
  const expected = digest(options.token);
  const limit = options.maxBodyBytes ?? 1024 * 1024;
  const log = options.log ?? (() => {});

  const authorised = (request: IncomingMessage): boolean => {
    const header = request.headers.authorization;
    const given = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : '';
    return timingSafeEqual(digest(given), expected);
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = (request.url ?? '/').split('?')[0];
    const client = `${request.socket.remoteAddress ?? 'unknown'}${typeof request.headers['x-dpfit-client'] === 'string' ? ` (${request.headers['x-dpfit-client'].slice(0, 100)})` : ''}`;
    try {
      if (!authorised(request)) throw new HttpError(401, 'missing or wrong bearer token');
      const route = `${request.method} ${path}`;
      if (route === 'GET /info') {
        send(response, 200, await node.info());
        return;
      }
      if (route === 'GET /budget') {
        if (options.budget === undefined) throw new HttpError(404, 'this node has no persistent ledger to show');
        send(response, 200, await options.budget());
        return;
      }
      if (route !== 'POST /sessions' && route !== 'POST /gradient') {
        throw new HttpError(['/info', '/budget', '/sessions', '/gradient'].includes(path) ? 405 : 404, `no route ${route} (GET /info, GET /budget, POST /sessions, POST /gradient)`);
      }
      const type = request.headers['content-type'] ?? '';
      if (!type.startsWith('application/json')) throw new HttpError(415, 'the body must be JSON (content-type: application/json)');
      const text = await readBody(request, limit);
      if (nestsDeeperThan(text, MAX_MESSAGE_DEPTH)) throw new HttpError(400, `the body nests JSON more than ${MAX_MESSAGE_DEPTH} levels deep (the protocol's messages nest 2)`);
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw new HttpError(400, `the body is not JSON (${(error as Error).message})`);
      }
      if (route === 'POST /sessions') {
        const plan = await node.openSession(body, client);
        log(`session ${plan.session} granted to ${client}: ${plan.method}, ${plan.steps} steps, (${plan.privacy.epsilon}, ${plan.privacy.delta})`);
        send(response, 200, plan);
      } else {
        send(response, 200, node.gradient(body));
      }
    } catch (error) {
      const status = error instanceof HttpError ? error.status : error instanceof NodeRefusal ? error.status : error instanceof InvalidParameterError ? 400 : error instanceof DpfitError ? 422 : 500;
      const message = status === 500 ? 'internal error of the node' : (error as Error).message;
      if (status === 500) log(`internal error on ${request.method} ${path}: ${(error as Error).stack ?? String(error)}`);
      else log(`${status} ${request.method} ${path} from ${client}: ${message}`);
      if (response.headersSent) response.destroy();
      else if (status === 413) {
        // The rest of the body is never read: answer, then drop the connection.
        send(response, status, { error: message, status }, true);
        response.once('finish', () => request.destroy());
      } else send(response, status, { error: message, status });
    }
  };

  const listener = (request: IncomingMessage, response: ServerResponse) => void handle(request, response);
  const server: Server = options.tls === undefined ? createHttpServer(listener) : createHttpsServer({ key: options.tls.key, cert: options.tls.cert }, listener);
  server.headersTimeout = 30_000;
  server.requestTimeout = 120_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const url = `${options.tls === undefined ? 'http' : 'https'}://${host}:${address.port}`;
  return {
    url,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
