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
import { describeOsError } from '../data/node/files.js';
import { DpfitError, InvalidParameterError, UnknownOptionError } from '../errors.js';
import { exitCodeFor, processIo, type CliIo } from './io.js';
import { referencesHelp } from './help/references.js';

export const VERSION = '0.1.0';

type Register = (program: Command, io: CliIo) => void;

/**
 * The command modules, loaded lazily: a run imports only the module of the command it names (the
 * library behind the other commands is never loaded), `dpfit --help` and unknown commands load
 * all of them. Each group lists its register functions in registration order.
 */
const GROUPS: Readonly<Record<string, () => Promise<readonly Register[]>>> = {
  demo: async () => [(await import('./commands/demo.js')).registerDemo],
  // `account.ts` adds the calibrate subcommands of its events to `calibrate`.
  accounting: async () => [(await import('./commands/calibrate.js')).registerCalibrate, (await import('./commands/account.js')).registerAccounting],
  rgm: async () => [(await import('./commands/rgm.js')).registerRgm],
  train: async () => [(await import('./commands/train.js')).registerTrain],
  verify: async () => [(await import('./commands/verify.js')).registerVerify],
  data: async () => [(await import('./commands/data.js')).registerData],
  node: async () => [(await import('./commands/node.js')).registerNode],
  federate: async () => [(await import('./commands/federate.js')).registerFederate],
  ledger: async () => [(await import('./commands/ledger.js')).registerLedger],
  audit: async () => [(await import('./commands/audit.js')).registerAudit],
  plot: async () => [(await import('./commands/plot.js')).registerPlot],
  calculator: async () => [(await import('./commands/calculator.js')).registerCalculator],
};

/** The group of each top-level command (`test/cli/cli.test.ts` checks it against the full program). */
export const COMMAND_GROUP: Readonly<Record<string, string>> = {
  demo: 'demo',
  calibrate: 'accounting',
  epsilon: 'accounting',
  delta: 'accounting',
  rdp: 'accounting',
  curve: 'accounting',
  account: 'accounting',
  rgm: 'rgm',
  train: 'train',
  evaluate: 'train',
  predict: 'train',
  verify: 'verify',
  data: 'data',
  node: 'node',
  federate: 'federate',
  ledger: 'ledger',
  audit: 'audit',
  plot: 'plot',
  calculator: 'calculator',
};

/** The register functions a run of `argv` needs: its command's group, or every group (help, unknown commands). */
async function registersFor(argv: readonly string[] | undefined): Promise<readonly Register[]> {
  const name = argv?.find((a) => !a.startsWith('-'));
  if (name === undefined && argv !== undefined && argv.some((a) => a === '-V' || a === '--version')) return [];
  const group = name === undefined ? undefined : COMMAND_GROUP[name];
  if (group !== undefined) return GROUPS[group]();
  const all: Register[] = [];
  for (const load of Object.values(GROUPS)) all.push(...(await load()));
  return all;
}

/** The program with the commands `argv` needs (all of them without argv). */
export async function buildProgram(io: CliIo, argv?: readonly string[]): Promise<Command> {
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
  $ dpfit calibrate gaussian --epsilon 1 --delta 1e-5
  $ dpfit verify model.json          # does a model file's privacy claim hold?
${referencesHelp([
  ['rgm', '000 Thm. 1 and Cor. 1'],
  ['federate', '000 Sec. 6'],
  ['train', 'each method\'s: dpfit train --help'],
])}`,
    );
  for (const register of await registersFor(argv)) register(program, io);
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
  'calibrate dpsgd': { count: '--steps', targetEpsilon: '--epsilon' },
  'calibrate gaussian': { epsilon: '--epsilon', targetEpsilon: '--epsilon' },
  'calibrate rgm': { epsilon: '--epsilon', targetEpsilon: '--epsilon' },
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
  // An unknown option is a key of a library call, not a flag the user typed: its message as it is.
  if (!(error instanceof InvalidParameterError) || error instanceof UnknownOptionError) return error.message;
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
  const program = await buildProgram({ stdout: io.stdout, stderr: (text) => (held += text), log: io.log ?? io.stderr }, argv);
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
