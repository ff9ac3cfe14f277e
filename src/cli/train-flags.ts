/**
 * `dpfit train`'s flags and the learner options they become: each method reads only the flags its
 * registry entry lists (`cli.flags`, plus `--tune`'s for a learner whose runs compose); every
 * other flag given is refused, naming the methods that take it. `optionsFromFlags` is the one
 * translation the in-memory, out-of-core and in-database paths and the CLI's work limits share.
 */
import { InvalidParameterError } from '../errors.js';
import { cliName } from '../learners/learner.js';
import { LEARNERS, learnerOfCliName, type AnyLearner } from '../learners/registry.js';

export interface TrainFlags {
  data: string;
  schema?: string;
  label?: string;
  /** The loss (--loss; --model is its deprecated alias). */
  loss: string;
  method: string;
  epsilon?: number;
  delta: number;
  noiseMultiplier?: number;
  clipNorm?: number;
  steps?: number;
  epochs?: number;
  batchSize?: number;
  learningRate?: number;
  regularization?: number;
  /** dpgd: feature storage, 'float64' or 'float32' (checked when parsed). */
  precision?: 'float64' | 'float32';
  optimizer: string;
  schedule: string;
  fraction?: number;
  conjecture?: boolean;
  projectionRadius?: number;
  gradTolerance?: number;
  maxIterations?: number;
  noiseStd?: number;
  outputNoiseStd?: number;
  accountant?: string;
  parameterNormBound?: number;
  featureClip?: number;
  bClip?: number;
  rho?: number;
  bNormBound?: number;
  ptrFraction?: number;
  /** objpert: the release has no guarantee (required: objective perturbation alone identifies the dataset). */
  acceptNoGuarantee?: boolean;
  tune?: number;
  tuneLearningRates?: number[];
  validation?: string;
  metric?: string;
  /** --dataset-size: the number of records, declared without the data (`learners/dataset-size.ts`). */
  datasetSize?: number;
  seed?: number;
  out?: string;
  diagnostics?: string;
  json?: boolean;
}

/** `--method`'s names: each learner's library name in kebab-case (`outputSgd` -> `output-sgd`), in the registry's order. */
export const METHODS: readonly string[] = LEARNERS.map((l) => cliName(l.method));



/** The flags of --tune: read by every learner whose runs compose (`composite` in its entry). */
const TUNING_FLAGS = ['tune', 'tuneLearningRates', 'validation', 'metric'] as const;

/** The flags a learner reads besides --data, --schema, --label, --loss, --method, --epsilon, --delta, --dataset-size, --seed, --out, --diagnostics, --json. */
export function learnerFlags(learner: AnyLearner): readonly string[] {
  return [...learner.cli.flags, ...(learner.composite === undefined ? [] : TUNING_FLAGS)];
}

const ALL_METHOD_FLAGS: ReadonlySet<string> = new Set(LEARNERS.flatMap((l) => learnerFlags(l as AnyLearner)));

/** The learners a predicate holds for, by their --method names (`dpsgd, dpgd, shuffled`). */
export function methodsWith(predicate: (learner: AnyLearner) => boolean): string[] {
  return LEARNERS.filter((l) => predicate(l as AnyLearner)).map((l) => cliName(l.method));
}

/** "a, b or c". */
export function orList(names: readonly string[]): string {
  return names.length <= 1 ? names.join('') : `${names.slice(0, -1).join(', ')} or ${names[names.length - 1]}`;
}

/** The learner --method names; refuses an unknown name (exit 2), listing them. */
export function learnerOfFlags(flags: Pick<TrainFlags, 'method'>): AnyLearner {
  const learner = learnerOfCliName(flags.method);
  if (learner === undefined) throw new InvalidParameterError('--method', flags.method, METHODS.map((m) => `'${m}'`).join(', '));
  return learner;
}

/** The kebab-case flag of a TrainFlags field. */
function flagOf(name: string): string {
  return `--${cliName(name)}`;
}

/** The flag that sets a learner's option (its own name unless the entry maps another flag to it). */
function flagOfOption(learner: AnyLearner, option: string): string {
  const renamed = Object.entries(learner.cli.flagOptions ?? {}).find(([, o]) => o === option);
  return renamed === undefined ? option : renamed[0];
}

/** Whether the user gave a flag (optimizer and schedule have defaults: given means another value). */
function given(flags: TrainFlags, name: keyof TrainFlags): boolean {
  if (name === 'optimizer') return flags.optimizer !== 'sgd';
  if (name === 'schedule') return flags.schedule !== 'constant';
  return flags[name] !== undefined && flags[name] !== false;
}

/**
 * The learner's options the flags give, in library names (`--conjecture` is `accountConjecture`):
 * the loss, the target, the declared count, and every flag of the learner that was given.
 */
export function optionsFromFlags(learner: AnyLearner, flags: TrainFlags): Record<string, unknown> {
  const options: Record<string, unknown> = {
    method: learner.method,
    loss: flags.loss,
    delta: flags.delta,
    ...(flags.epsilon === undefined ? {} : { epsilon: flags.epsilon }),
    ...(flags.datasetSize === undefined ? {} : { datasetSize: flags.datasetSize }),
  };
  for (const flag of learner.cli.flags) {
    const value = flags[flag as keyof TrainFlags];
    if (value === undefined || value === false) continue;
    options[learner.cli.flagOptions?.[flag] ?? flag] = value;
  }
  return options;
}

/**
 * Every check the flags alone decide, before any file is read: a known method, its opt-in, no
 * flag the method would silently ignore (e.g. --accountant pld with dpsgd, whose noise is
 * calibrated and reported by RDP), the flags --tune needs and refuses, and the method's rules on
 * its options (`--regularization > 0` for output). Throws InvalidParameterError naming the flag.
 */
export function checkMethodFlags(flags: TrainFlags): void {
  const learner = learnerOfFlags(flags);
  const method = flags.method;
  if (learner.optIn !== undefined && flags[learner.optIn.option as keyof TrainFlags] !== true) {
    // Decided by the flags alone, before any file is read: the refusal is the same whatever the data.
    throw new InvalidParameterError('--method', flags.method, learner.optIn.refusal.expected, learner.optIn.refusal.detail);
  }
  if (flags.tune !== undefined && learner.composite === undefined) {
    throw new InvalidParameterError('--tune', flags.tune, `used with a gradient method (${methodsWith((l) => l.composite !== undefined).join(', ')}); ${method}'s own parameters are chosen without touching the data`);
  }
  const reads = learnerFlags(learner);
  if (flags.accountant !== undefined && !reads.includes('accountant')) {
    const users = orList(methodsWith((l) => learnerFlags(l).includes('accountant')));
    throw new InvalidParameterError(
      '--accountant',
      flags.accountant,
      `given only with --method ${users} (their noise is calibrated by it); --method ${method} is calibrated and reported by its own accountant (see the report's "accountant"; dpfit epsilon --accountant pld --event re-accounts the model's event)`,
    );
  }
  for (const name of Object.keys(flags) as (keyof TrainFlags)[]) {
    if (!ALL_METHOD_FLAGS.has(name) || reads.includes(name) || !given(flags, name)) continue;
    const users = methodsWith((l) => learnerFlags(l).includes(name));
    throw new InvalidParameterError(flagOf(name), flags[name], `given only with --method ${users.join(', ')} (--method ${method} does not use it)`);
  }
  if (flags.tune === undefined) {
    if (flags.tuneLearningRates !== undefined) throw new InvalidParameterError('--tune-learning-rates', flags.tuneLearningRates, 'given only with --tune (the candidates of honest tuning)');
    if (flags.validation !== undefined) throw new InvalidParameterError('--validation', flags.validation, 'given only with --tune (it scores the tuning candidates)');
    if (flags.metric !== undefined) throw new InvalidParameterError('--metric', flags.metric, 'given only with --tune (it scores the tuning candidates)');
  } else {
    if (flags.epsilon === undefined) throw new InvalidParameterError('--epsilon', undefined, 'given with --tune (the noise is calibrated for the whole tuned release)');
    if (flags.validation === undefined) throw new InvalidParameterError('--validation', undefined, 'given with --tune: a PUBLIC labelled file (not part of the private data) scores the candidates');
    if (flags.learningRate !== undefined) throw new InvalidParameterError('--learning-rate', flags.learningRate, 'not given with --tune (use --tune-learning-rates for the candidate grid)');
    if (flags.noiseMultiplier !== undefined) throw new InvalidParameterError('--noise-multiplier', flags.noiseMultiplier, 'not given with --tune (the noise is calibrated from --epsilon for the whole tuned release)');
  }
  if (flags.accountant !== undefined && flags.accountant !== 'rdp' && flags.accountant !== 'pld') {
    throw new InvalidParameterError('--accountant', flags.accountant, "'rdp' or 'pld'");
  }
  for (const rule of learner.rules ?? []) {
    const flag = flagOfOption(learner, rule.option);
    const value = flags[flag as keyof TrainFlags] ?? rule.absent;
    if (value === undefined || rule.holds(value)) continue;
    throw new InvalidParameterError(flagOf(flag), value, `${rule.expected} for --method ${method} (${rule.why})`);
  }
}

