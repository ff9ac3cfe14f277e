/**
 * The `dpfit` command line: builds the commander program, runs it, and turns every error into one
 * line on stderr and an exit status (2 bad parameters, 3 bad data, 4 budget or calibration
 * impossible, 1 internal error). Returns the exit status instead of exiting, so tests can call it.
 */
import { Command, CommanderError } from 'commander';
import { DpfitError } from '../errors.js';
import { registerAccounting } from './commands/account.js';
import { registerCalibrate } from './commands/calibrate.js';
import { registerData } from './commands/data.js';
import { registerDemo } from './commands/demo.js';
import { registerRgm } from './commands/rgm.js';
import { registerTrain } from './commands/train.js';
import { registerVerify } from './commands/verify.js';
import { exitCodeFor, processIo, type CliIo } from './io.js';

export const VERSION = '0.1.0';

export function buildProgram(io: CliIo): Command {
  const program = new Command();
  program
    .name('dpfit')
    .description('Differentially private learning and tight privacy accounting for tabular data.')
    .version(VERSION)
    .showHelpAfterError(false)
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr, outputError: () => {} })
    .exitOverride()
    .enablePositionalOptions()
    .addHelpText(
      'after',
      `
Every command has --help and --json (exactly one JSON object on stdout). Exit status: 0 ok,
2 bad parameters, 3 bad data, 4 budget or calibration impossible, 1 internal error.

Start with:
  $ dpfit demo
  $ dpfit calibrate gaussian --target-epsilon 1 --delta 1e-5
  $ dpfit verify model.json          # does a model file's privacy claim hold?`,
    );
  registerDemo(program, io);
  registerCalibrate(program, io);
  registerRgm(program, io);
  registerAccounting(program, io);
  registerTrain(program, io);
  registerVerify(program, io);
  registerData(program, io);
  for (const command of program.commands) propagate(command);
  return program;
}

/** Subcommands share the parent's output, error handling and exit override. */
function propagate(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) propagate(sub);
}

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') return 0;
      // commander's own message is already one line ("error: unknown option '--x'").
      io.stderr(`dpfit: ${error.message.replace(/^error: /, '')}\n`);
      return 2;
    }
    // Errors thrown inside an option parser arrive wrapped by commander; unwrap to ours.
    const cause = error instanceof Error && (error as { cause?: unknown }).cause instanceof DpfitError ? (error as { cause: DpfitError }).cause : error;
    if (cause instanceof DpfitError) {
      io.stderr(`dpfit: ${cause.message}\n`);
      return exitCodeFor(cause);
    }
    io.stderr(`dpfit: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

const isEntryPoint = process.argv[1] !== undefined && /src[\\/]cli[\\/]main\.ts$/.test(process.argv[1]);
if (isEntryPoint) process.exitCode = await main(process.argv.slice(2));
