/**
 * The CLI loads only the module of the command it runs (`src/cli/main.ts`), so that
 * start-up does not pay for every command's imports.
 * The table that maps commands to modules must cover every command of the full program, and a
 * command's own group must register it with the same options as the full program.
 */
import assert from 'node:assert/strict';
import test from 'node:test';
import { buildProgram, COMMAND_GROUP } from '../../src/cli/main.js';

const io = { stdout: () => {}, stderr: () => {}, log: () => {} };

test('every command is mapped to its module, and loading only that module defines it exactly as the full program does', async () => {
  const full = await buildProgram(io);
  const names = full.commands.map((c) => c.name()).sort();
  assert.deepEqual(names, Object.keys(COMMAND_GROUP).sort());
  for (const command of full.commands) {
    const alone = await buildProgram(io, [command.name(), '--help']);
    const same = alone.commands.find((c) => c.name() === command.name());
    assert.ok(same !== undefined, command.name());
    assert.equal(same.helpInformation(), command.helpInformation(), command.name());
    assert.deepEqual(same.commands.map((c) => c.name()), command.commands.map((c) => c.name()), command.name());
  }
});

test('help and unknown commands load every module', async () => {
  assert.equal((await buildProgram(io, ['--help'])).commands.length, Object.keys(COMMAND_GROUP).length);
  assert.equal((await buildProgram(io, ['no-such-command'])).commands.length, Object.keys(COMMAND_GROUP).length);
});
