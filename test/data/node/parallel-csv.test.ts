/**
 * The parallel CSV reader (`src/data/node/parallel-csv.ts`, `loadDataset` with `threads` > 1 into
 * a store in shared memory) against the one-thread reader, the reference: the same rows bit for
 * bit, the same private diagnostics, the same error text (line and column) for a bad record in
 * any range, the first one in file order when several ranges fail; blank and comment lines and
 * dropped records (gaps between the ranges' rows), a last line without a line feed, a column
 * guessed numeric that holds text after the first MiB (read again with it as text), files
 * with a quote or a carriage return before the last range (read by one thread) or in it (read on
 * several), and a last range with more records than its estimated room (read by one thread) give
 * what one thread gives.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { encodeCsvParallel } from '../../../src/data/node/parallel-csv.js';
import { loadDataset } from '../../../src/data/node/read.js';
import { schemaCsvOptions } from '../../../src/data/schema/read-options.js';
import { parseSchema } from '../../../src/data/schema/parse.js';
import type { Schema } from '../../../src/data/schema/types.js';
import { growingFeatures } from '../../../src/learners/glm/kernels/feature-memory.js';
import { seededRng } from '../../../src/random/rng.js';
import { sameBits } from '../../helpers/same-bits.js';

const schema: Schema = parseSchema({
  version: 1,
  csv: { comment: '#' },
  columns: [
    { name: 'a', type: 'numeric', lower: -1, upper: 1 },
    { name: 'b', type: 'numeric', lower: 0, upper: 100, missing: 'dropRow', bins: [10, 50], encode: 'valueAndBins' },
    { name: 'c', type: 'categorical', categories: ['u', 'v'] },
    { name: 'y', type: 'label', positive: ['yes'], negative: ['no'] },
  ],
  intercept: 1,
});

function lines(rows: number, seed: number, extra = false): string[] {
  const rng = seededRng(seed);
  const out = [`a,b,c,y${extra ? ',z' : ''}`];
  for (let i = 0; i < rows; i++) {
    if (i % 997 === 5) out.push('');
    if (i % 1499 === 7) out.push('# a comment line');
    const b = rng.nextDouble() < 0.02 ? '' : (rng.nextDouble() * 120).toFixed(2);
    out.push(`${(rng.nextDouble() * 2.4 - 1.2).toFixed(5)},${b},${['u', 'v', 'w'][Math.floor(rng.nextDouble() * 3)]},${rng.nextDouble() < 0.4 ? 'yes' : 'no'}${extra ? `,${i}` : ''}`);
  }
  return out;
}

let dir: string;
before(() => {
  dir = mkdtempSync(join(tmpdir(), 'dpfit-parallel-csv-'));
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** loadDataset on one thread and on `threads` threads (every file here counts as large). */
async function both(path: string, threads: number) {
  type Outcome = { value: Awaited<ReturnType<typeof loadDataset>> } | { error: string };
  const run = async (t: number): Promise<Outcome> => {
    try {
      return { value: await loadDataset(path, schema, { droppedRows: 'zeroRows', features: growingFeatures, threads: t, parallel: encodeCsvParallel, parallelMinBytes: 1024 }) };
    } catch (error) {
      return { error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
    }
  };
  return { one: await run(1), many: await run(threads) };
}

function assertSame(result: Awaited<ReturnType<typeof both>>): void {
  if ('error' in result.one) {
    assert.deepEqual(result.many, result.one);
    return;
  }
  assert.ok('value' in result.many, `threads failed where one thread did not: ${'error' in result.many ? result.many.error : ''}`);
  sameBits(result.many.value.dataset, result.one.value.dataset);
  assert.deepEqual(result.many.value.privateDiagnostics, result.one.value.privateDiagnostics);
}

describe('the parallel CSV reader', () => {
  for (const threads of [2, 3]) {
    it(`gives the one-thread rows and diagnostics (${threads} threads; blank and comment lines, dropped records, no final line feed)`, async () => {
      const path = join(dir, `rows-${threads}.csv`);
      const text = lines(20000, threads).join('\n');
      writeFileSync(path, text); // no line feed after the last record
      const result = await both(path, threads);
      assert.ok('value' in result.one && result.one.value.privateDiagnostics.droppedRows > 0);
      assertSame(result);
      writeFileSync(path, `${text}\n\n`);
      assertSame(await both(path, threads));
    });
  }

  it('reports a bad record in any range with the one-thread error text, and the first one in file order', async () => {
    const base = lines(20000, 9);
    for (const at of [3, 6000, 13000, 19990]) {
      const bad = [...base];
      bad[at] = bad[at].replace(/,(yes|no)$/, ',maybe');
      const path = join(dir, `bad-${at}.csv`);
      writeFileSync(path, `${bad.join('\n')}\n`);
      const result = await both(path, 3);
      assert.ok('error' in result.one && new RegExp(`line ${at + 1}, column 'y'`).test(result.one.error), JSON.stringify(result.one).slice(0, 200));
      assertSame(result);
    }
    const two = [...base];
    two[7000] = two[7000].replace(/^[^,]*/, 'oops');
    two[15000] = two[15000].replace(/,(yes|no)$/, ',maybe');
    const path = join(dir, 'two-bad.csv');
    writeFileSync(path, `${two.join('\n')}\n`);
    const result = await both(path, 3);
    assert.ok('error' in result.one && /line 7001, column 'a'/.test(result.one.error));
    assertSame(result);
    const wrongCount = [...base];
    wrongCount[12000] += ',1';
    writeFileSync(path, `${wrongCount.join('\n')}\n`);
    assertSame(await both(path, 2));
  });

  it('reads a column guessed numeric that holds text after the first MiB as text, like one thread', async () => {
    const rows = lines(70000, 11, true);
    assert.ok(rows.join('\n').length > 2 ** 20 * 1.2, 'past the type sample');
    rows[66000] = rows[66000].replace(/,\d+$/, ',text');
    const path = join(dir, 'guess.csv');
    writeFileSync(path, `${rows.join('\n')}\n`);
    assertSame(await both(path, 2));
  });

  it('does run on several threads (it is not the one-thread reader by another name), and not with a quote or a carriage return', async () => {
    const path = join(dir, 'outcome.csv');
    const rows = lines(20000, 13);
    const outcome = async () => {
      const options = { ...schemaCsvOptions(schema, path), sizeHint: 0, source: path };
      return encodeCsvParallel(path, statSync(path).size, schema, options, undefined, undefined, false, growingFeatures, 4096, 3, 1024);
    };
    writeFileSync(path, `${rows.join('\n')}\n`);
    const done = await outcome();
    assert.equal(done.kind, 'done');
    if (done.kind === 'done') assert.equal(done.rowsRead, 20000);
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    assert.equal((await outcome()).kind, 'sequential');
    writeFileSync(path, `${rows.join('\n').replace(',u,', ',"u",')}\n`);
    assert.equal((await outcome()).kind, 'sequential');
  });

  it('reads quotes and carriage returns in the last range on several threads (it is never counted): the one-thread rows and errors', async () => {
    const path = join(dir, 'last-range.csv');
    const rows = lines(20000, 14);
    const tail = rows.slice(17000).map((r, i) => (i % 50 === 3 ? r.replace(/,(u|v|w),/, ',"$1",') : r));
    const outcome = async (threads: number) => {
      const options = { ...schemaCsvOptions(schema, path), sizeHint: 0, source: path };
      return encodeCsvParallel(path, statSync(path).size, schema, options, undefined, undefined, false, growingFeatures, 4096, threads, 1024);
    };
    for (const threads of [2, 3]) {
      writeFileSync(path, `${rows.slice(0, 17000).join('\n')}\n${tail.join('\r\n')}\r\n`);
      assert.equal((await outcome(threads)).kind, 'done');
      assertSame(await both(path, threads));
      // A bad record after lines ended by CR LF and by CR alone: the one-thread line.
      const bad = [...tail];
      bad[1500] = bad[1500].replace(/,(yes|no)$/, ',maybe');
      writeFileSync(path, `${rows.slice(0, 17000).join('\n')}\n${bad.slice(0, 700).join('\r\n')}\r${bad.slice(700).join('\r\n')}\r\n`);
      const result = await both(path, threads);
      assert.ok('error' in result.one && /line 18501, column 'y'/.test(result.one.error), JSON.stringify(result.one).slice(0, 200));
      assertSame(result);
    }
  });

  it('reads a file on one thread when its last range holds more records than the room estimated for it: the same rows', async () => {
    const path = join(dir, 'short-tail.csv');
    const rng = seededRng(15);
    const long = Array.from({ length: 10000 }, () => `${(rng.nextDouble() * 2 - 1).toFixed(15)},${(rng.nextDouble() * 100).toFixed(12)},u,yes`);
    const short = Array.from({ length: 40000 }, (_, i) => `0,${i % 100},v,no`);
    writeFileSync(path, `a,b,c,y\n${[...long, ...short].join('\n')}\n`);
    const options = { ...schemaCsvOptions(schema, path), sizeHint: 0, source: path };
    const outcome = await encodeCsvParallel(path, statSync(path).size, schema, options, undefined, undefined, false, growingFeatures, 4096, 2, 1024);
    assert.equal(outcome.kind, 'sequential');
    const result = await both(path, 2);
    assert.ok('value' in result.one && result.one.value.dataset.n === 50000);
    assertSame(result);
  });

  it('reads a file with a quote or a carriage return on one thread: the same rows', async () => {
    const rows = lines(20000, 12);
    const quoted = [...rows];
    quoted[15000] = quoted[15000].replace(/,(u|v|w),/, ',"$1",');
    const path = join(dir, 'quoted.csv');
    writeFileSync(path, `${quoted.join('\n')}\n`);
    assertSame(await both(path, 2));
    writeFileSync(path, `${rows.join('\r\n')}\r\n`);
    assertSame(await both(path, 2));
  });
});
