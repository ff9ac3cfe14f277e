/**
 * `dpfit audit --one-run --ledger` (issue 26): the one-run audit trains on the user's data and
 * spends --epsilon, so it reserves its run as `dpfit train --ledger` does (test/cli/ledger-methods.test.ts):
 *   - refused before reading: on a ledger whose budget the planned release does not fit, the same
 *     command with a --data path that does not exist is refused by the budget (exit 4, one line),
 *     not by the missing file;
 *   - on a ledger it fits, it runs and the ledger holds one entry, whose event the run checked it
 *     released (`oneRunAudit`'s `reserved`: another event is an internal error, exit 1, tested on
 *     the library), with the learner's relation; a run of the other relation is then refused;
 *   - --dataset-size is required with --ledger; the ledger flags are refused on many-run audits
 *     (their data are the audit's own).
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { oneRunAudit, planOneRunAudit } from '../../src/audit/one-run.js';
import { loadDataset, readSchemaFile } from '../../src/data/node/read.js';
import { schemaFeatureNames, schemaLabelBound, schemaRowNormBound } from '../../src/data/schema/bounds.js';
import { peopleFixture, runCli } from '../helpers/people.js';

const fixture = peopleFixture('dpfit-audit-ledger-', 1500, 12);
const CASES = [
  { method: 'dpsgd', args: ['--epochs', '2', '--batch-size', '100'], relation: 'addOrRemoveOne' },
  { method: 'dpgd', args: ['--steps', '10'], relation: 'replaceOne' },
] as const;
const audit = (method: string, data: string, ...rest: string[]) =>
  runCli('audit', '--one-run', '--method', method, '--epsilon', '2', '--delta', '1e-5', '--data', data, '--schema', fixture.schema, '--canaries', '100', '--dataset-size', '1500', ...rest);

test('audit --one-run --ledger reserves the run before reading, exactly the event it releases', { timeout: 240_000 }, async () => {
  for (const [k, c] of CASES.entries()) {
    const tiny = join(fixture.dir, `tiny-${k}.ledger`);
    const refused = await audit(c.method, join(fixture.dir, 'absent.csv'), ...c.args, '--ledger', tiny, '--budget-epsilon', '0.5', '--budget-delta', '1e-4', '--json');
    assert.equal(refused.code, 4, refused.stderr);
    assert.match(refused.stderr, /this run is refused, nothing was read or released/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
    assert.equal(refused.stdout, '');

    const ledger = join(fixture.dir, `run-${k}.ledger`);
    const run = await audit(c.method, fixture.data, ...c.args, '--ledger', ledger, '--budget-epsilon', '10', '--budget-delta', '1e-4', '--json');
    assert.equal(run.code, 0, run.stderr);
    const result = JSON.parse(run.stdout);
    const shown = await runCli('ledger', 'show', ledger, '--json');
    assert.equal(shown.code, 0, shown.stderr);
    const { entries } = JSON.parse(shown.stdout);
    assert.equal(entries.length, 1);
    assert.equal(entries[0].extraDelta, 0);
    assert.match(entries[0].description, new RegExp(`audit --one-run --method ${c.method} --canaries 100`));
    // The event is the audited run's: its epsilon at the run's delta is the accountant's number the audit printed.
    const schema = await readSchemaFile(fixture.schema);
    const featureNames = schemaFeatureNames(schema);
    const training = c.method === 'dpsgd' ? { epochs: 2, batchSize: 100, datasetSize: 1500 } : { steps: 10, datasetSize: 1500 };
    const planned = planOneRunAudit({ d: featureNames.length, featureNames, bounds: { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) } }, { method: c.method, epsilon: 2, delta: 1e-5, canaries: 100, training });
    assert.deepEqual(entries[0].event, JSON.parse(JSON.stringify(planned.event)));
    assert.equal(planned.relation, c.relation);
    assert.ok(result.epsilonAccounted <= 2 && result.epsilonAccounted > 1.9, JSON.stringify(result));
    // One relation per ledger: the other method's run is refused before reading.
    const other = CASES[1 - k];
    const mixed = await audit(other.method, join(fixture.dir, 'absent.csv'), ...other.args, '--ledger', ledger);
    assert.equal(mixed.code, 4, mixed.stderr);
    assert.match(mixed.stderr, /this run is refused, nothing was read or released/);
  }
});

test('audit --ledger: --dataset-size required with --one-run, refused without it', { timeout: 60_000 }, async () => {
  const ledger = join(fixture.dir, 'flags.ledger');
  const noSize = await runCli('audit', '--one-run', '--method', 'dpsgd', '--epsilon', '2', '--delta', '1e-5', '--data', fixture.data, '--schema', fixture.schema, '--canaries', '100', '--ledger', ledger, '--budget-epsilon', '10', '--budget-delta', '1e-4');
  assert.equal(noSize.code, 2, noSize.stderr);
  assert.match(noSize.stderr, /--dataset-size is required with --ledger/);
  const manyRun = await runCli('audit', '--method', 'dpsgd', '--epsilon', '2', '--delta', '1e-5', '--runs', '20', '--ledger', ledger);
  assert.equal(manyRun.code, 2, manyRun.stderr);
  assert.match(manyRun.stderr, /--ledger must be given only with --one-run/);
  const budgetAlone = await audit('dpsgd', fixture.data, '--budget-epsilon', '3');
  assert.equal(budgetAlone.code, 2, budgetAlone.stderr);
  assert.match(budgetAlone.stderr, /--budget-epsilon must be given with --ledger/);
});

test('oneRunAudit refuses a run whose release is not the one reserved (nothing returned)', { timeout: 60_000 }, async () => {
  const schema = await readSchemaFile(fixture.schema);
  const featureNames = schemaFeatureNames(schema);
  const shape = { d: featureNames.length, featureNames, bounds: { rowNormBound: schemaRowNormBound(schema), labelBound: schemaLabelBound(schema) } };
  const options = { method: 'dpsgd', epsilon: 2, delta: 1e-5, canaries: 100, training: { epochs: 1, batchSize: 100, datasetSize: 1500 } } as const;
  const prepared = await loadDataset(fixture.data, schema, { droppedRows: 'zeroRows' });
  // Planned for 200 canaries: another q and another d than the run of 100.
  const wrong = planOneRunAudit(shape, { ...options, canaries: 200 });
  assert.throws(() => oneRunAudit(prepared, { ...options, reserved: wrong }), /another event than the one reserved/);
  const right = planOneRunAudit(shape, options);
  assert.ok(oneRunAudit(prepared, { ...options, reserved: right }).guesses === 20);
});
