import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { dpfitCommand } from '../../src/cli/invocation.js';

test('the Next: hints name the command the user ran: dpfit when installed, node bin/dpfit.js in a clone', () => {
  assert.equal(dpfitCommand('/usr/local/bin/dpfit', '/home/u'), 'dpfit');
  assert.equal(dpfitCommand('/p/node_modules/dpfit/bin/dpfit.js', '/p'), 'dpfit');
  assert.equal(dpfitCommand('/home/u/dpfit/bin/dpfit.js', '/home/u/dpfit'), 'node bin/dpfit.js');
  assert.equal(dpfitCommand('bin/dpfit.js', '/home/u/dpfit'), 'node bin/dpfit.js');
  assert.equal(dpfitCommand('/home/u/my repo/bin/dpfit.js', '/home/u'), 'node "my repo/bin/dpfit.js"');
  assert.equal(dpfitCommand(undefined, '/'), 'dpfit');
});

test('the hints the demo prints in a clone run as printed (bin/dpfit.js runs dist/, built by npm ci)', () => {
  const root = join(import.meta.dirname, '..', '..');
  const demo = spawnSync(process.execPath, [join('bin', 'dpfit.js'), 'demo'], { cwd: root, encoding: 'utf8' });
  assert.equal(demo.status, 0, demo.stderr);
  const next = /^Next: (.*)$/m.exec(demo.stdout)?.[1];
  assert.ok(next !== undefined, demo.stdout);
  for (const hint of next.split(', ')) {
    const [program, ...args] = hint.split(' ');
    assert.equal(program, 'node', hint);
    const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
    assert.equal(run.status, 0, `${hint}: ${run.stderr}`);
    assert.match(run.stdout, /^Usage: dpfit/m, hint);
  }
});
