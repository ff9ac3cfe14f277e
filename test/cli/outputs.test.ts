/**
 * Every path a command writes is checked before any work (a bad path must not cost a run or its
 * budget) and written all or nothing.
 * Each bad output — a directory that does not exist, a path under a regular file, a directory,
 * /dev/full, /proc, an immutable file, the input files themselves (by path, symbolic link and
 * hard link), two outputs that are one file — fails with its exit status (2 for a clash of
 * flags, 3 for what the file system refuses), exactly one stderr line naming the flag, and no
 * file created, removed or changed (temporary files included). We run as root here, so the cases
 * are ones that fail for root too; the chmod case runs the CLI without root's permission-bypassing capabilities (setpriv).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, linkSync, lstatSync, mkdirSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { peopleFixture, runCli } from '../helpers/people.js';
import { assertFailure, assertUnchanged, snapshot } from '../helpers/files.js';

const run = runCli;

function sandbox() {
  const f = peopleFixture('dpfit-outputs-', 60, 11);
  const sub = join(f.dir, 'sub');
  mkdirSync(sub);
  return { ...f, sub };
}

/** A fast private training run (DP-GD, 5 steps on 60 rows). */
function train(box: { data: string; schema: string }, ...more: string[]): string[] {
  return ['train', '--data', box.data, '--schema', box.schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', ...more];
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

describe('train --out / --diagnostics: bad paths fail before any work, one line, nothing written', () => {
  it('file-system refusals exit 3 and name the flag and the path', async () => {
    const box = sandbox();
    const cases: [string, string[], RegExp][] = [
      ['a directory that does not exist', ['--out', join(box.dir, 'no', 'such', 'dir', 'm.json')], /^dpfit: --out \S+m\.json: cannot be written: the directory \S+ does not exist$/],
      ['a path under a regular file', ['--out', join(box.data, 'm.json')], /--out \S+: cannot be written: \S+people\.csv is a file, not a directory/],
      ['a directory', ['--out', box.sub], /--out \S+sub: is a directory, not a regular file/],
      ['a directory as --diagnostics', ['--diagnostics', box.dir], /--diagnostics \S+: is a directory/],
      ['/dev/full (a device)', ['--out', '/dev/full'], /--out \/dev\/full: is a character device, not a regular file/],
      ['/proc/self/status', ['--out', '/proc/self/status'], /--out \/proc\/self\/status: cannot be written/],
      ['a new file in /proc', ['--out', '/proc/dpfit-model.json'], /--out \/proc\/dpfit-model\.json: cannot be written: cannot create files in the directory \/proc/],
      ['a symbolic link into a directory that does not exist', ['--out', join(box.dir, 'dangling.json')], /--out \S+dangling\.json: cannot be written: the directory \S+nowhere does not exist/],
    ];
    symlinkSync(join(box.dir, 'nowhere', 'x.json'), join(box.dir, 'dangling.json'));
    for (const [what, flags, pattern] of cases) {
      const before = snapshot(box.dir);
      const result = await run(...train(box, ...flags));
      assertFailure(result, 3, pattern, what);
      assertUnchanged(before, snapshot(box.dir), what);
    }
    assert.ok(statSync('/dev/full').isCharacterDevice(), '/dev/full is still the device');
  });

  it('outputs are checked before the data are read (the --out error, not the missing --data file)', async () => {
    const box = sandbox();
    const result = await run('train', '--data', join(box.dir, 'missing.csv'), '--schema', box.schema, '--epsilon', '1', '--out', join(box.dir, 'no', 'm.json'));
    assertFailure(result, 3, /^dpfit: --out /, 'outputs first');
  });

  it('an output that is an input, or another output, is a clash of flags: exit 2, the inputs untouched', async () => {
    const box = sandbox();
    const validation = join(box.dir, 'validation.csv');
    writeFileSync(validation, readFileSync(box.data, 'utf8').split('\n').slice(0, 21).join('\n') + '\n');
    symlinkSync(box.data, join(box.dir, 'data-link.csv'));
    linkSync(box.data, join(box.dir, 'data-hardlink.csv'));
    symlinkSync(join(box.dir, 'out.json'), join(box.dir, 'out-link.json'));
    const cases: [string, string[], RegExp][] = [
      ['--out is --data', ['--out', box.data], /^dpfit: --out must be another path than the --data file/],
      ['--out is a symbolic link to --data', ['--out', join(box.dir, 'data-link.csv')], /--out must be another path than the --data file/],
      ['--out is a hard link to --data', ['--out', join(box.dir, 'data-hardlink.csv')], /--out must be another path than the --data file/],
      ['--out is --schema', ['--out', box.schema], /--out must be another path than the --schema file/],
      ['--diagnostics is --data, relative spelling', ['--diagnostics', join(box.dir, 'sub', '..', 'people.csv')], /--diagnostics must be another path than the --data file/],
      ['--out and --diagnostics the same file', ['--out', join(box.dir, 'out.json'), '--diagnostics', join(box.dir, 'out.json')], /--diagnostics must be another path than --out/],
      ['--out and --diagnostics one file through a link', ['--out', join(box.dir, 'out.json'), '--diagnostics', join(box.dir, 'out-link.json')], /--diagnostics must be another path than --out/],
    ];
    for (const [what, flags, pattern] of cases) {
      const before = snapshot(box.dir);
      assertFailure(await run(...train(box, ...flags)), 2, pattern, what);
      assertUnchanged(before, snapshot(box.dir), what);
    }
    // --diagnostics naming the --validation file (with --tune).
    const before = snapshot(box.dir);
    const tuned = await run('train', '--data', box.data, '--schema', box.schema, '--method', 'dpgd', '--steps', '5', '--epsilon', '1', '--tune', '2', '--validation', validation, '--diagnostics', validation);
    assertFailure(tuned, 2, /--diagnostics must be another path than the --validation file/, 'diagnostics = validation');
    assertUnchanged(before, snapshot(box.dir), 'diagnostics = validation');
  });

  it('an immutable model file (chattr +i) is refused before training, even for root (skipped without chattr)', async (t) => {
    const box = sandbox();
    const out = join(box.dir, 'model.json');
    writeFileSync(out, '{"old": true}\n');
    const chattr = spawnSync('chattr', ['+i', out]);
    if (chattr.error !== undefined || chattr.status !== 0) {
      t.skip('chattr +i is not available on this file system');
      return;
    }
    try {
      const before = snapshot(box.dir);
      assertFailure(await run(...train(box, '--out', out)), 3, /--out \S+model\.json: cannot be written \(EPERM: operation not permitted/, 'immutable');
      assertUnchanged(before, snapshot(box.dir), 'immutable');
    } finally {
      spawnSync('chattr', ['-i', out]);
    }
  });

  it('a read-only directory (chmod 555) is refused (as root: the CLI runs without the capabilities that bypass permissions)', async (t) => {
    const box = sandbox();
    chmodSync(box.sub, 0o555);
    try {
      let enforced = true;
      try {
        writeFileSync(join(box.sub, 'probe'), '');
        enforced = false;
      } catch {
        // permissions enforced
      }
      const args = train(box, '--out', join(box.sub, 'm.json'));
      const pattern = /--out \S+: cannot be written: cannot create files in the directory \S+ \(EACCES/;
      let result: { code: number; stdout: string; stderr: string };
      if (enforced) {
        result = await run(...args);
      } else {
        // Root ignores permissions: run the CLI as root WITHOUT the capabilities that bypass them
        // (setpriv, util-linux: CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped from the bounding
        // set), so the directory's mode 555 holds for it while the repository stays readable.
        if (!isRoot() || spawnSync('setpriv', ['--version']).status !== 0) {
          t.skip('permissions are not enforced and setpriv is absent');
          return;
        }
        const drop = '-dac_override,-dac_read_search';
        const child = spawnSync('setpriv', [`--bounding-set=${drop}`, `--inh-caps=${drop}`, process.execPath, '--import', 'tsx', 'test/helpers/dpfit-process.ts', ...args], {
          cwd: join(import.meta.dirname, '..', '..'),
          encoding: 'utf8',
          timeout: 60_000,
        });
        result = { code: child.status ?? -1, stdout: child.stdout, stderr: child.stderr };
      }
      const before = snapshot(box.dir);
      assertFailure(result, 3, pattern, 'read-only dir');
      assertUnchanged(before, snapshot(box.dir), 'read-only dir');
    } finally {
      chmodSync(box.sub, 0o755);
    }
  });

  it('success: written through a symbolic link, an existing file replaced with its mode kept, no temporary file left', async () => {
    const box = sandbox();
    const target = join(box.sub, 'model.json');
    writeFileSync(target, 'old\n');
    chmodSync(target, 0o640);
    const link = join(box.dir, 'model-link.json');
    symlinkSync(target, link);
    const diagnostics = join(box.dir, 'diagnostics.json');
    const result = await run(...train(box, '--out', link, '--diagnostics', diagnostics, '--json'));
    assert.equal(result.code, 0, result.stderr);
    assert.ok(lstatSync(link).isSymbolicLink(), 'the link is kept');
    assert.equal(JSON.parse(readFileSync(target, 'utf8')).format, 'dpfit-linear-model/1');
    assert.equal(statSync(target).mode & 0o777, 0o640, 'mode kept');
    assert.match(readFileSync(diagnostics, 'utf8'), /NOT covered by the privacy guarantee/);
    for (const d of [box.dir, box.sub]) assert.deepEqual(readdirSync(d).filter((n) => n.endsWith('.tmp')), [], `no temporary file in ${d}`);
    // A link to a file that does not exist yet is written through (the link stays a link).
    const fresh = join(box.dir, 'fresh-link.json');
    symlinkSync(join(box.sub, 'fresh.json'), fresh);
    const second = await run(...train(box, '--out', fresh));
    assert.equal(second.code, 0, second.stderr);
    assert.ok(lstatSync(fresh).isSymbolicLink());
    assert.equal(JSON.parse(readFileSync(join(box.sub, 'fresh.json'), 'utf8')).format, 'dpfit-linear-model/1');
  });
});

describe('other commands that write: curve --out, data schema --out, data fetch --dir', () => {
  it('curve: a bad --out fails before any accounting; --out may not be the @event file', async () => {
    const box = sandbox();
    const event = join(box.dir, 'event.json');
    writeFileSync(event, '{"kind":"gaussian","noiseMultiplier":1}');
    const cases: [string, string[], number, RegExp][] = [
      ['missing directory', ['--out', join(box.dir, 'no', 'c.svg')], 3, /^dpfit: --out \S+c\.svg: cannot be written: the directory/],
      ['a directory', ['--out', box.sub], 3, /--out \S+: is a directory/],
      ['/dev/full', ['--out', '/dev/full'], 3, /--out \/dev\/full: is a character device/],
      ['the event file', ['--out', event], 2, /--out must be another path than the --event file/],
    ];
    for (const [what, flags, code, pattern] of cases) {
      const before = snapshot(box.dir);
      assertFailure(await run('curve', '--event', `@${event}`, '--points', '3', ...flags), code, pattern, what);
      assertUnchanged(before, snapshot(box.dir), what);
    }
    const ok = await run('curve', '--event', `@${event}`, '--points', '3', '--out', join(box.sub, 'c.svg'), '--json');
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(readFileSync(join(box.sub, 'c.svg'), 'utf8'), /^<svg/);
  });

  it('data schema --out: writes the suggestion to a file, never over its input', async () => {
    const box = sandbox();
    const before = snapshot(box.dir);
    assertFailure(await run('data', 'schema', box.data, '--out', box.data), 2, /--out must be another path than the input file/, 'schema over its data');
    assertFailure(await run('data', 'schema', box.data, '--out', join(box.data, 'x.json')), 3, /--out \S+: cannot be written/, 'schema under a file');
    assertUnchanged(before, snapshot(box.dir), 'data schema');
    const out = join(box.sub, 'suggested.json');
    const ok = await run('data', 'schema', box.data, '--out', out);
    assert.equal(ok.code, 0, ok.stderr);
    assert.equal(JSON.parse(readFileSync(out, 'utf8')).provenance, 'suggested-from-private-data');
    assert.match(ok.stderr, /WARNING/);
  });

  it('data fetch: --dir under a file or equal to --from fails before any download; no network is exit 3, one line', async () => {
    const box = sandbox();
    const before = snapshot(box.dir);
    assertFailure(await run('data', 'fetch', 'adult', '--dir', join(box.data, 'adult')), 3, /^dpfit: --dir \S+adult: cannot be created: \S+people\.csv is a file, not a directory$/, 'dir under a file');
    assertFailure(await run('data', 'fetch', 'adult', '--dir', '/proc/dpfit-adult'), 3, /--dir \/proc\/dpfit-adult: cannot be written: cannot create files in the parent directory \/proc/, 'dir in /proc');
    assertFailure(await run('data', 'fetch', 'adult', '--dir', box.sub, '--from', box.sub), 2, /--dir must be another path than the --from file/, 'dir = from');
    // No network: the download fails like a DNS failure (the test never touches the network).
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async () => {
      throw Object.assign(new TypeError('fetch failed'), { cause: { code: 'ENOTFOUND' } });
    }) as typeof fetch;
    try {
      assertFailure(await run('data', 'fetch', 'adult', '--dir', join(box.dir, 'adult')), 3, /download failed \(ENOTFOUND\); with a local copy use --from DIR/, 'no network');
    } finally {
      globalThis.fetch = realFetch;
    }
    assertUnchanged(before, snapshot(box.dir), 'data fetch');
    assert.ok(!existsSync(join(box.dir, 'adult')), 'nothing installed');
  });
});

describe('inputs that are not regular files', () => {
  it('--data /dev/zero, a FIFO, verify /dev/zero: exit 3 at once (never an endless read)', async () => {
    const box = sandbox();
    const fifo = join(box.dir, 'pipe.csv');
    const made = spawnSync('mkfifo', [fifo]);
    const started = Date.now();
    assertFailure(await run('train', '--data', '/dev/zero', '--schema', box.schema, '--epsilon', '1'), 3, /\/dev\/zero: is a character device, not a regular file/, 'data /dev/zero');
    assertFailure(await run('verify', '/dev/zero'), 3, /\/dev\/zero: is a character device, not a model file/, 'verify /dev/zero');
    assertFailure(await run('train', '--data', box.data, '--schema', '/dev/zero', '--epsilon', '1'), 3, /\/dev\/zero: is a character device/, 'schema /dev/zero');
    if (made.status === 0) assertFailure(await run('data', 'inspect', fifo), 3, /pipe\.csv: is a FIFO \(named pipe\), not a regular file/, 'a FIFO');
    assert.ok(Date.now() - started < 5000, 'refused at once');
  });
});
