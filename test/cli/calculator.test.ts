/**
 * `dpfit calculator`: the static server of the privacy calculator page (no browser needed here;
 * test/web/calculator-browser.test.ts drives the page in Chromium). It serves the built page's flat
 * folder and nothing else, on 127.0.0.1, prints its URL, and stops cleanly on SIGINT.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { calculatorWebRoot, startCalculatorServer, type CalculatorServer } from '../../src/cli/commands/calculator.js';
import { runCli } from '../helpers/people.js';

describe('calculator server', () => {
  let dir: string;
  let server: CalculatorServer;
  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'dpfit-calc-server-'));
    writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title>');
    writeFileSync(join(dir, 'calculator.js'), 'export {};');
    writeFileSync(join(dir, 'notes.txt'), 'not a page file');
    writeFileSync(join(dirOf(dir), 'dpfit-calc-secret.html'), 'outside');
    server = await startCalculatorServer({ root: dir, port: 0 });
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(join(dirOf(dir), 'dpfit-calc-secret.html'), { force: true });
  });

  it('listens on 127.0.0.1 and serves the page with its content type and a restrictive CSP', async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(server.url);
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'self'/);
    assert.equal(await page.text(), '<!doctype html><title>t</title>');
    const script = await fetch(`${server.url}calculator.js`);
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
  });

  it('serves nothing outside the folder, no unknown file types, and only GET and HEAD', async () => {
    for (const path of ['../dpfit-calc-secret.html', '%2e%2e/dpfit-calc-secret.html', '..%2fdpfit-calc-secret.html', 'notes.txt', 'missing.js', 'sub/index.html']) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 404, path);
      assert.equal(await response.text(), 'not found\n');
    }
    assert.equal((await fetch(server.url, { method: 'POST', body: 'x' })).status, 405);
    const head = await fetch(server.url, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  it('refuses a port outside [0, 65535] with exit 2 naming --port', async () => {
    const result = await runCli('calculator', '--port', '70000');
    assert.equal(result.code, 2);
    assert.equal(result.stderr, 'dpfit: --port must be an integer in [0, 65535] (0: any free port), got 70000\n');
  });

  it('dpfit calculator --json prints the URL of the built page and exits 0 on SIGINT', { timeout: 30_000 }, async () => {
    let built = true;
    try {
      calculatorWebRoot();
    } catch {
      built = false;
    }
    if (!built) {
      // Without `npm run build`, one line saying so (exit 3), not a server serving nothing.
      const result = await runCli('calculator');
      assert.equal(result.code, 3);
      assert.match(result.stderr, /the calculator's page is not built \(run npm run build\)\n$/);
      return;
    }
    const child = spawn(process.execPath, ['--import', 'tsx', 'test/helpers/dpfit-process.ts', 'calculator', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', () => {
        try {
          resolve((JSON.parse(stdout) as { url: string }).url);
        } catch {
          // not the whole object yet
        }
      });
      child.once('exit', (code) => reject(new Error(`dpfit calculator exited with ${code} before printing its URL`)));
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await (await fetch(url)).text();
    assert.match(page, /<title>dpfit privacy calculator<\/title>/);
    const code = new Promise<number | null>((resolve) => child.once('exit', resolve));
    child.kill('SIGINT');
    assert.equal(await code, 0);
    assert.deepEqual(Object.keys(JSON.parse(stdout) as object), ['url']); // exactly one JSON object
  });
});

function dirOf(path: string): string {
  return join(path, '..');
}
