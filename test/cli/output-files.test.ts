/**
 * `src/data/node/atomic-write.ts`: the atomic writer under failures that cannot be staged on a
 * healthy disk (a full disk, an I/O error at fsync, a failed rename, a target replaced by a
 * directory between the check and the write), stale temporary files of killed runs, and signals
 * (in a child process: the handler removes pending temporary files and exits 128 + the signal).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, fsyncSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync, writeSync as writeSyncReal } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { checkOutputPaths } from '../../src/cli/output-files.js';
import { pendingTemporaryFiles, writeOutputFiles, type WriteOperations } from '../../src/data/node/atomic-write.js';
import { DataFormatError } from '../../src/errors.js';
import { assertUnchanged, snapshot } from '../helpers/files.js';

const NODE_OPS: WriteOperations = {
  openSync,
  writeSync: (fd, data, offset, length) => writeSyncReal(fd, data, offset, length),
  fsyncSync,
  closeSync,
  renameSync,
};

function osError(code: string, syscall: string): Error {
  return Object.assign(new Error(`${code}: simulated ${syscall}`), { code, syscall });
}

function dir(): string {
  return mkdtempSync(join(tmpdir(), 'dpfit-output-files-'));
}

describe('writeOutputFiles: all or nothing', () => {
  it('a full disk (ENOSPC while writing), an I/O error at fsync, a failed rename: targets unchanged, no temporary file', () => {
    const failures: [string, Partial<WriteOperations>, RegExp][] = [
      ['ENOSPC at write', { writeSync: () => { throw osError('ENOSPC', 'write'); } }, /^--out \S+a\.json: cannot be written \(ENOSPC: no space left on the device\); nothing was written$/],
      ['EIO at fsync', { fsyncSync: () => { throw osError('EIO', 'fsync'); } }, /cannot be written \(EIO: input\/output error\); nothing was written/],
      ['EDQUOT at close', { closeSync: (fd: number) => { closeSync(fd); throw osError('EDQUOT', 'close'); } }, /EDQUOT: disk quota exceeded/],
      ['EXDEV at rename', { renameSync: () => { throw osError('EXDEV', 'rename'); } }, /cannot be written \(EXDEV: not on the same file system\); nothing was written/],
    ];
    for (const [what, fault, pattern] of failures) {
      const d = dir();
      writeFileSync(join(d, 'a.json'), 'old a\n');
      const outputs = checkOutputPaths([{ flag: '--out', path: join(d, 'a.json') }, { flag: '--diagnostics', path: join(d, 'b.json') }]);
      const before = snapshot(d);
      assert.throws(
        () => writeOutputFiles(outputs.map((output) => ({ output, data: `new ${output.flag}\n` })), { ...NODE_OPS, ...fault }),
        (e: unknown) => e instanceof DataFormatError && pattern.test(e.message),
        what,
      );
      assertUnchanged(before, snapshot(d), what);
      assert.deepEqual(pendingTemporaryFiles(), [], `${what}: nothing pending`);
    }
  });

  it('the second file failing leaves the first target unchanged too', () => {
    const d = dir();
    writeFileSync(join(d, 'a.json'), 'old a\n');
    const outputs = checkOutputPaths([{ flag: '--out', path: join(d, 'a.json') }, { flag: '--diagnostics', path: join(d, 'b.json') }]);
    let writes = 0;
    const before = snapshot(d);
    assert.throws(
      () =>
        writeOutputFiles(
          outputs.map((output) => ({ output, data: 'x'.repeat(10) })),
          { ...NODE_OPS, writeSync: (fd, data, offset, length) => (++writes === 2 ? (() => { throw osError('ENOSPC', 'write'); })() : writeSyncReal(fd, data, offset, length)) },
        ),
      (e: unknown) => e instanceof DataFormatError && /^--diagnostics \S+b\.json: cannot be written \(ENOSPC/.test(e.message),
    );
    assertUnchanged(before, snapshot(d), 'second fails');
  });

  it('a target that became a directory (or a device) after the check is never replaced', () => {
    const d = dir();
    const [output] = checkOutputPaths([{ flag: '--out', path: join(d, 'm.json') }]);
    mkdirSync(join(d, 'm.json'));
    const before = snapshot(d);
    assert.throws(() => writeOutputFiles([{ output, data: '{}' }]), (e: unknown) => e instanceof DataFormatError && /--out \S+m\.json: is now a directory, not a regular file/.test(e.message));
    assertUnchanged(before, snapshot(d), 'became a directory');
  });

  it('writes the bytes, replaces an existing file, leaves no temporary file', () => {
    const d = dir();
    writeFileSync(join(d, 'm.json'), 'old');
    const [output] = checkOutputPaths([{ flag: '--out', path: join(d, 'm.json') }]);
    writeOutputFiles([{ output, data: 'new content\n' }]);
    assert.equal(readFileSync(join(d, 'm.json'), 'utf8'), 'new content\n');
    assert.deepEqual(readdirSync(d), ['m.json']);
  });
});

describe('stale temporary files', () => {
  it('a temporary file of a dead process older than a minute is swept by the next check; fresh or live ones are kept', () => {
    const d = dir();
    const dead = join(d, '.m.json.dpfit-999999999-0123456789ab.tmp');
    const fresh = join(d, '.m.json.dpfit-999999998-0123456789ab.tmp');
    const live = join(d, `.m.json.dpfit-${process.ppid}-0123456789ab.tmp`);
    const other = join(d, '.other.json.dpfit-999999999-0123456789ab.tmp');
    for (const p of [dead, fresh, live, other]) writeFileSync(p, 'partial');
    const old = new Date(Date.now() - 10 * 60_000);
    for (const p of [dead, live, other]) utimesSync(p, old, old);
    checkOutputPaths([{ flag: '--out', path: join(d, 'm.json') }]);
    assert.deepEqual(readdirSync(d).sort(), [fresh, live, other].map((p) => p.slice(d.length + 1)).sort());
  });
});

describe('signals', () => {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const moduleUrl = new URL('../../src/data/node/atomic-write.ts', import.meta.url).href;
  const checksUrl = new URL('../../src/cli/output-files.ts', import.meta.url).href;

  function child(script: string): { status: number | null; signal: string | null; stderr: string } {
    const result = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: join(here, '../..'), encoding: 'utf8', timeout: 30_000 });
    return { status: result.status, signal: result.signal, stderr: result.stderr };
  }

  it('the handler removes pending temporary files and exits 128 + the signal (130 for SIGINT); the target is untouched', () => {
    const d = dir();
    writeFileSync(join(d, 'm.json'), 'old\n');
    // The rename step calls the SIGINT handler itself, while the temporary file is pending.
    const script = `
      const m = { ...(await import(${JSON.stringify(moduleUrl)})), ...(await import(${JSON.stringify(checksUrl)})) };
      const [output] = m.checkOutputPaths([{ flag: '--out', path: ${JSON.stringify(join(d, 'm.json'))} }]);
      const fs = await import('node:fs');
      m.writeOutputFiles([{ output, data: 'new\\n' }], { openSync: fs.openSync, writeSync: fs.writeSync, fsyncSync: fs.fsyncSync, closeSync: fs.closeSync,
        renameSync: () => { process.stderr.write('pending ' + m.pendingTemporaryFiles().length + '\\n'); m.exitOnSignal('SIGINT'); } });
    `;
    const result = child(script);
    assert.equal(result.status, 130, result.stderr);
    assert.match(result.stderr, /pending 1/);
    assert.deepEqual(readdirSync(d), ['m.json'], 'no temporary file left');
    assert.equal(readFileSync(join(d, 'm.json'), 'utf8'), 'old\n');
  });

  it('a real SIGTERM during a write: the file is complete (or absent), no temporary file, exit 143', () => {
    const d = dir();
    const script = `
      const m = { ...(await import(${JSON.stringify(moduleUrl)})), ...(await import(${JSON.stringify(checksUrl)})) };
      const fs = await import('node:fs');
      const [output] = m.checkOutputPaths([{ flag: '--out', path: ${JSON.stringify(join(d, 'm.json'))} }]);
      m.writeOutputFiles([{ output, data: 'x'.repeat(100000) }], { openSync: fs.openSync, writeSync: fs.writeSync, closeSync: fs.closeSync, renameSync: fs.renameSync,
        fsyncSync: (fd) => { process.kill(process.pid, 'SIGTERM'); fs.fsyncSync(fd); } });
      setTimeout(() => process.exit(0), 5000);
    `;
    const result = child(script);
    assert.ok(result.status === 143 || result.signal === 'SIGTERM', `status ${result.status} signal ${result.signal}: ${result.stderr}`);
    const names = readdirSync(d);
    assert.ok(names.every((n) => n === 'm.json'), `no temporary file: ${names.join(', ')}`);
    if (names.includes('m.json')) assert.equal(readFileSync(join(d, 'm.json'), 'utf8').length, 100000, 'complete');
    rmSync(d, { recursive: true, force: true });
  });
});
