/**
 * The coordinator's `NodeClient` for a node served over HTTP(S) (`http-server.ts`). Answers are
 * read as untrusted (`wire.ts`). Failures are DpfitErrors naming the node's URL: a budget refusal
 * (403) is a `BudgetExceededError` (exit 4: nothing can be released), a request the node finds
 * invalid (400, e.g. a target below RGM's floor for its data size) 'INVALID_PARAMETER' (exit 2),
 * anything else, the network included, 'FETCH_FAILED' (exit 3).
 */
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { BudgetExceededError, DpfitError, InvalidParameterError } from '../errors.js';
import type { NodeClient } from './coordinator.js';
import type { GradientRequest, SessionRequest } from './protocol.js';
import { encodeMessage, readGradientAnswer, readNodeInfo, readSessionPlan } from './wire.js';
import { optionNames, rejectUnknownOptions } from '../validate.js';

export interface HttpClientOptions {
  /** Per-request timeout (default 10 min: a node may read a large file before its first answer). */
  readonly timeoutMs?: number;
  /** CA certificate(s) that sign the nodes' TLS certificates (https URLs). */
  readonly ca?: string | Buffer;
  /** Who the coordinator says it is (the node records it in its ledger). */
  readonly client?: string;
}

/** Largest answer read from a node (a gradient or a plan is far smaller). */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024;

const HTTP_CLIENT_OPTIONS = optionNames<HttpClientOptions>({ timeoutMs: true, ca: true, client: true });

export function httpNodeClient(url: string, token: string, options: HttpClientOptions = {}): NodeClient {
  rejectUnknownOptions(options, HTTP_CLIENT_OPTIONS, 'httpNodeClient');
  let base: URL;
  try {
    base = new URL(url);
  } catch {
    throw new InvalidParameterError('--nodes', url, 'URLs such as http://10.0.0.5:7000');
  }
  if (base.protocol !== 'http:' && base.protocol !== 'https:') throw new InvalidParameterError('--nodes', url, 'http:// or https:// URLs');
  const label = base.origin;
  const timeoutMs = options.timeoutMs ?? 600_000;

  const call = (method: 'GET' | 'POST', path: string, body?: unknown): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const text = body === undefined ? undefined : encodeMessage(body);
      const send = base.protocol === 'https:' ? httpsRequest : httpRequest;
      const req = send(
        new URL(path, base),
        {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(options.client === undefined ? {} : { 'x-dpfit-client': options.client }),
            ...(text === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }),
          },
          ...(options.ca === undefined ? {} : { ca: options.ca }),
          timeout: timeoutMs,
        },
        (res) => {
          const chunks: Buffer[] = [];
          let size = 0;
          res.on('data', (chunk: Buffer) => {
            size += chunk.length;
            if (size > MAX_ANSWER_BYTES) {
              req.destroy(new Error(`answer over ${MAX_ANSWER_BYTES} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => {
            const raw = Buffer.concat(chunks).toString('utf8');
            let json: unknown;
            try {
              json = JSON.parse(raw);
            } catch {
              reject(new DpfitError('FETCH_FAILED', `${label}${path}: answered HTTP ${res.statusCode} with a body that is not JSON: is this a dpfit node?`));
              return;
            }
            const status = res.statusCode ?? 0;
            if (status === 200) {
              resolve(json);
              return;
            }
            const message = typeof (json as { error?: unknown })?.error === 'string' ? (json as { error: string }).error.slice(0, 1000) : `HTTP ${status}`;
            if (status === 403) reject(new BudgetExceededError(`${label}: ${message}`));
            else if (status === 401) reject(new DpfitError('FETCH_FAILED', `${label}: the node refused the token (${message}): check --token-file`));
            else if (status === 400) reject(new DpfitError('INVALID_PARAMETER', `${label}: the node refused the request: ${message}`));
            else reject(new DpfitError('FETCH_FAILED', `${label}${path}: HTTP ${status}: ${message}`));
          });
          res.on('error', (error) => reject(new DpfitError('FETCH_FAILED', `${label}: ${error.message}`)));
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs / 1000} s`)));
      req.on('error', (error) => reject(new DpfitError('FETCH_FAILED', `${label}: ${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}`.replace(/\s+/g, ' ').trim())));
      if (text !== undefined) req.write(text);
      req.end();
    });

  return {
    label,
    info: async () => readNodeInfo(label, await call('GET', '/info')),
    openSession: async (request: SessionRequest) => readSessionPlan(label, await call('POST', '/sessions', request)),
    gradient: async (request: GradientRequest) => readGradientAnswer(label, await call('POST', '/gradient', request), request.theta.length),
  };
}
