/**
 * The `dpfit` command line: builds the commander program, runs it, and turns every error into one
 * line on stderr and an exit status (2 bad parameters, 3 bad data, files or network, 4 budget,
 * calibration or accuracy impossible, 1 a bug). A failure prints exactly that line: what a
 * command writes on stderr before it fails is dropped, parameter errors name the flag as typed
 * (library names such as `samplingProbability` are mapped to `--sampling-probability`), and OS
 * errors that escape a command are one line with exit 3. Returns the exit status instead of
 * exiting, so tests can call it.
 */
import { Command, CommanderError } from 'commander';
import { describeOsError } from '../data/node/output-files.js';
import { DpfitError, InvalidParameterError } from '../errors.js';
import { registerAccounting } from './commands/account.js';
import { registerAudit } from './commands/audit.js';
import { registerCalculator } from './commands/calculator.js';
import { registerCalibrate } from './commands/calibrate.js';
import { registerData } from './commands/data.js';
import { registerDemo } from './commands/demo.js';
import { registerFederate } from './commands/federate.js';
import { registerLedger } from './commands/ledger.js';
import { registerNode } from './commands/node.js';
import { registerPlot } from './commands/plot.js';
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
2 bad parameters, 3 bad data, files or network, 4 budget or calibration impossible (nothing
can be released), 1 internal error (a bug). Errors are one line on stderr.

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
  registerNode(program, io);
  registerFederate(program, io);
  registerLedger(program, io);
  registerAudit(program, io);
  registerPlot(program, io);
  registerCalculator(program, io);
  for (const command of program.commands) propagate(command);
  return program;
}

/** Subcommands share the parent's output, error handling and exit override. */
function propagate(command: Command): void {
  command.exitOverride();
  for (const sub of command.commands) propagate(sub);
}

/**
 * Library parameter names that are not the camelCase of the flag the user typed, by command path
 * (`epsilon dpsgd`); every other name is matched against the command's options
 * (`samplingProbability` is `--sampling-probability`).
 */
const PARAMETER_FLAGS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  train: {
    targetEpsilon: '--epsilon',
    ptrEpsilonFraction: '--ptr-fraction',
    learningRates: '--tune-learning-rates',
    'distribution.mean': '--tune',
    loss: '--loss',
    lossName: '--loss',
    rowNormBound: '--feature-clip',
  },
  'epsilon dpsgd': { count: '--steps' },
  'calibrate dpsgd': { count: '--steps' },
  'calibrate gaussian': { epsilon: '--target-epsilon' },
  'calibrate rgm': { epsilon: '--target-epsilon' },
  curve: { epsilon: '--max-epsilon' },
  delta: { epsilon: '--epsilon' },
  'data inspect': { source: '<file>' },
  'data schema': { maxCategories: '--max-categories' },
};

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let c: Command | null = command; c !== null && c.parent !== null; c = c.parent) names.unshift(c.name());
  return names.join(' ');
}

/** The flag the user typed for a library parameter name (`samplingProbability` -> `--sampling-probability`), if any. */
export function flagForParameter(param: string, command: Command): string | undefined {
  if (param.startsWith('--') || param.startsWith('<')) return undefined;
  const indexed = /^([^[]+)(\[\d+\])$/.exec(param);
  const [name, index] = indexed === null ? [param, ''] : [indexed[1], indexed[2]];
  const alias = PARAMETER_FLAGS[commandPath(command)]?.[name];
  if (alias !== undefined) return `${alias}${index}`;
  const option = command.options.find((o) => o.attributeName() === name && o.long !== undefined);
  return option?.long === undefined ? undefined : `${option.long}${index}`;
}

/** "X is required ..." from an `expected` written as "given ...". */
function requiredMessage(name: string, expected: string): string {
  if (expected === 'given') return `${name} is required`;
  if (expected.startsWith('given')) return `${name} is required${expected.slice('given'.length)}`;
  return `${name} is required: ${expected}`;
}

/**
 * The one line printed for an error: parameter errors name the flag as typed (library names are
 * mapped to flags) and a missing value says "is required" (never "got undefined").
 */
export function errorLine(error: DpfitError, command: Command | undefined): string {
  if (!(error instanceof InvalidParameterError)) return error.message;
  const flag = command === undefined ? undefined : flagForParameter(error.param, command);
  if (error.value === undefined) return requiredMessage(flag ?? error.param, error.expected);
  if (flag === undefined || !error.message.startsWith(`${error.param} `)) return error.message;
  return `${flag}${error.message.slice(error.param.length)}`;
}

/** An error of the operating system (a file, a network socket) that escaped a command: exit 3, one line. */
function systemErrorLine(error: unknown): string | undefined {
  const e = error as { code?: unknown; syscall?: unknown; path?: unknown; hostname?: unknown } | null;
  if (e === null || typeof e !== 'object' || typeof e.code !== 'string' || typeof e.syscall !== 'string') return undefined;
  const where = typeof e.path === 'string' ? `${e.path}: ` : typeof e.hostname === 'string' ? `${e.hostname}: ` : '';
  return `${where}${describeOsError(e.code)} (${e.code}, ${e.syscall})`;
}

export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  // What a command says on stderr (warnings, the data owner's diagnostics) is held until it
  // succeeds: a failure prints exactly one line, its error. (Progress bars draw on the terminal
  // directly, and the warnings that matter before long work are in the bar's label.)
  let held = '';
  const program = buildProgram({ stdout: io.stdout, stderr: (text) => (held += text), log: io.log ?? io.stderr });
  let active: Command | undefined;
  program.hook('preAction', (_program, actionCommand) => {
    active = actionCommand;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    if (held !== '') io.stderr(held);
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version' || error.code === 'commander.help') {
        if (held !== '') io.stderr(held);
        return 0;
      }
      // commander's own message is already one line ("error: unknown option '--x'").
      io.stderr(`dpfit: ${error.message.replace(/^error: /, '')}\n`);
      return 2;
    }
    // Errors thrown inside an option parser arrive wrapped by commander; unwrap to ours.
    const cause = error instanceof Error && (error as { cause?: unknown }).cause instanceof DpfitError ? (error as { cause: DpfitError }).cause : error;
    if (cause instanceof DpfitError) {
      io.stderr(`dpfit: ${oneLine(errorLine(cause, active))}\n`);
      return exitCodeFor(cause);
    }
    const system = systemErrorLine(cause);
    if (system !== undefined) {
      io.stderr(`dpfit: ${oneLine(system)}\n`);
      return 3;
    }
    // A bug: one line (the stack with DPFIT_DEBUG=1).
    const detail = process.env.DPFIT_DEBUG ? (error instanceof Error ? (error.stack ?? error.message) : String(error)) : oneLine(error instanceof Error ? `${error.name}: ${error.message}` : String(error));
    io.stderr(`dpfit: internal error (a bug in dpfit; DPFIT_DEBUG=1 shows where): ${detail}\n`);
    return 1;
  }
}

/** Messages are printed on one line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

const isEntryPoint = process.argv[1] !== undefined && /src[\\/]cli[\\/]main\.ts$/.test(process.argv[1]);
if (isEntryPoint) process.exitCode = await main(process.argv.slice(2));
