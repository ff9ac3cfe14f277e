/**
 * `dpfit calculator`: serves the privacy calculator page (web/, built into dist/web by `npm run
 * build`) on 127.0.0.1 and prints its URL; Ctrl-C stops it. The page is static: every number is
 * computed in the browser by dpfit's own core, bundled, so the same files can be hosted anywhere.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { parseIntegerFlag, printResult, type CliIo } from '../io.js';

const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * The built page: dist/web beside the compiled CLI (dist/cli/commands -> dist/web), or the
 * repository's dist/web when the CLI runs from its TypeScript sources.
 */
export function calculatorWebRoot(): string {
  const candidates = [fileURLToPath(new URL('../../web/', import.meta.url)), fileURLToPath(new URL('../../../dist/web/', import.meta.url))];
  const found = candidates.find((dir) => existsSync(join(dir, 'index.html')) && existsSync(join(dir, 'calculator.js')));
  if (found === undefined) throw new DataFormatError(candidates[candidates.length - 1], "the calculator's page is not built (run npm run build)");
  return found;
}

export interface CalculatorServer {
  readonly url: string;
  close(): Promise<void>;
}

/** Serves the flat folder `root` (GET and HEAD of its files only) on host:port (port 0: any free port). */
export async function startCalculatorServer(options: { root: string; port?: number; host?: string }): Promise<CalculatorServer> {
  const host = options.host ?? '127.0.0.1';
  const serve = (request: IncomingMessage, response: ServerResponse) => {
    const headers = {
      'X-Content-Type-Options': 'nosniff',
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'none'",
    };
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.writeHead(405, { ...headers, Allow: 'GET, HEAD' }).end();
      return;
    }
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const name = path === '/' ? 'index.html' : path.slice(1);
    // A flat folder: one path segment of plain characters (no '..', no encoded separators).
    const type = CONTENT_TYPES[extname(name)];
    const file = join(options.root, name);
    if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(name) || type === undefined || !existsSync(file) || !statSync(file).isFile()) {
      response.writeHead(404, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
      return;
    }
    const body = readFileSync(file);
    response.writeHead(200, { ...headers, 'Content-Type': type, 'Content-Length': body.length });
    response.end(request.method === 'HEAD' ? undefined : body);
  };
  const server = createServer(serve);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function registerCalculator(program: Command, io: CliIo): void {
  program
    .command('calculator')
    .description('serve the privacy calculator page on localhost and print its URL (Ctrl-C stops it)')
    .option('--port <P>', 'port on 127.0.0.1 (0: any free port)', parseIntegerFlag('--port'), 0)
    .option('--json', 'print one JSON object {"url"} when the page is served')
    .addHelpText(
      'after',
      `
The page computes in the browser with dpfit's own accountants (the same numbers as the CLI):
DP-SGD's epsilon by RDP and PLD with the privacy curve, the noise for a target, the Gaussian and
Laplace mechanisms and randomized response, objective perturbation and AMP, RGM, and the event
to pass to dpfit epsilon --event. Results update as you type (no button); PLD runs on a web
worker. Its files (dist/web) are static: they can be hosted anywhere.

Example:
  $ dpfit calculator --port 8080
  http://127.0.0.1:8080/`,
    )
    .action(async (flags: { port: number; json?: boolean }) => {
      if (!(flags.port >= 0 && flags.port <= 65535)) throw new InvalidParameterError('--port', flags.port, 'an integer in [0, 65535] (0: any free port)');
      const server = await startCalculatorServer({ root: calculatorWebRoot(), port: flags.port });
      try {
        printResult(io, Boolean(flags.json), { url: server.url }, () => `${server.url}\n(the dpfit privacy calculator; Ctrl-C stops it)`);
        await new Promise<void>((resolve) => {
          const stop = () => {
            process.off('SIGINT', stop);
            process.off('SIGTERM', stop);
            resolve();
          };
          process.on('SIGINT', stop);
          process.on('SIGTERM', stop);
        });
      } finally {
        await server.close();
      }
    });
}
