/**
 * The JSON form of events, dpfit's public input format (`dpfit epsilon --event JSON`):
 * `eventToJson`, and `parseEvent`, which validates untrusted JSON as the constructors validate
 * their arguments, with the path of the offending field (`event.events[2].noiseMultiplier`), after
 * a depth check that runs before anything recurses (`depth.ts`).
 */
import { InvalidParameterError } from '../../errors.js';
import {
  composeEvent,
  gaussianEvent,
  laplaceEvent,
  NO_OP_EVENT,
  NON_PRIVATE_EVENT,
  nonUniformSampledEvent,
  objectivePerturbationEvent,
  poissonSampledEvent,
  randomizedResponseEvent,
  relativeGaussianEvent,
  repeatAndSelectEvent,
  sampledWithoutReplacementEvent,
  selfComposeEvent,
  shuffledLastIterateEvent,
  shuffledSgdConjectureEvent,
} from './constructors.js';
import { requireEventDepth, requireJsonDepth } from './depth.js';
import { EVENT_FIELDS, EVENT_KINDS, type DpEvent, type DpEventKind } from './types.js';

/** Serialises an event to its public JSON form (Infinity as the string "Infinity"). */
export function eventToJson(event: DpEvent): unknown {
  requireEventDepth(event);
  return JSON.parse(JSON.stringify(event, (_key, value) => (value === Infinity ? 'Infinity' : value)));
}

/**
 * Parses and validates an event from untrusted JSON (a string or an already-parsed value).
 * Unknown kinds, unknown fields, missing fields and out-of-range values are
 * `InvalidParameterError`s whose `param` is the path of the field.
 */
export function parseEvent(input: unknown, path = 'event'): DpEvent {
  let value = input;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch (error) {
      throw new InvalidParameterError(path, truncate(input as string), 'valid JSON', (error as Error).message);
    }
  }
  // Before anything recurses (the walk below, or an error message serialising a nested value).
  requireJsonDepth(value, path);
  return parseChecked(value, path);
}

/** `parseEvent` after the depth check: recursion depth <= MAX_EVENT_DEPTH. */
function parseChecked(value: unknown, path: string): DpEvent {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InvalidParameterError(path, value, 'a JSON object with a "kind" field');
  }
  const record = value as Record<string, unknown>;
  const kind = record.kind;
  if (typeof kind !== 'string' || !(EVENT_KINDS as readonly string[]).includes(kind)) {
    throw new InvalidParameterError(`${path}.kind`, kind, `one of ${EVENT_KINDS.join(', ')}`);
  }
  const allowed = EVENT_FIELDS[kind as DpEventKind];
  for (const key of Object.keys(record)) {
    if (key !== 'kind' && !allowed.includes(key)) {
      throw new InvalidParameterError(`${path}.${key}`, record[key], `absent (not a field of a ${kind} event; fields: ${allowed.join(', ') || 'none'})`);
    }
  }
  const num = (field: string): number => readNumber(record, field, path);
  const sub = (field: string): DpEvent => parseChecked(required(record, field, path), `${path}.${field}`);
  const optional = (field: string): number | undefined => (record[field] === undefined ? undefined : num(field));
  const discrete = (): boolean => readBoolean(record, 'discrete', path);
  return withPath(path, () => {
    switch (kind as DpEventKind) {
      case 'gaussian':
        return gaussianEvent(num('noiseMultiplier'), { discrete: discrete(), gridNoiseStd: optional('gridNoiseStd') });
      case 'laplace':
        return laplaceEvent(num('noiseMultiplier'), { discrete: discrete(), gridScale: optional('gridScale') });
      case 'randomizedResponse':
        return randomizedResponseEvent(num('noiseParameter'), num('numBuckets'));
      case 'relativeGaussian':
        return relativeGaussianEvent({
          eta: num('eta'),
          gamma: num('gamma'),
          dimension: num('dimension'),
          baselineStd: optional('baselineStd'),
          rRel: optional('rRel'),
          discrete: discrete(),
          gridBaselineStd: optional('gridBaselineStd'),
        });
      case 'objectivePerturbation':
        return objectivePerturbationEvent({
          noiseStd: num('noiseStd'),
          lipschitz: num('lipschitz'),
          smoothness: num('smoothness'),
          regularization: num('regularization'),
          discrete: discrete(),
          gridNoiseStd: optional('gridNoiseStd'),
        });
      case 'poissonSampled':
        return poissonSampledEvent(num('samplingProbability'), sub('event'));
      case 'sampledWithoutReplacement':
        return sampledWithoutReplacementEvent(num('sourceDatasetSize'), num('sampleSize'), sub('event'));
      case 'nonUniformSampled':
        return nonUniformSampledEvent(num('maxWeight'), sub('event'));
      case 'compose': {
        const events = required(record, 'events', path);
        if (!Array.isArray(events)) throw new InvalidParameterError(`${path}.events`, events, 'an array of events');
        return composeEvent(events.map((e, i) => parseChecked(e, `${path}.events[${i}]`)));
      }
      case 'selfCompose':
        return selfComposeEvent(sub('event'), num('count'));
      case 'repeatAndSelect':
        return repeatAndSelectEvent(sub('event'), num('mean'), num('shape'));
      case 'shuffledSgdConjecture':
        return shuffledSgdConjectureEvent({
          datasetSize: num('datasetSize'),
          noiseMultiplier: num('noiseMultiplier'),
          epochs: num('epochs'),
          fraction: num('fraction'),
          constant: record.constant === undefined ? undefined : num('constant'),
        });
      case 'shuffledLastIterate':
        return shuffledLastIterateEvent({
          datasetSize: num('datasetSize'),
          stepsPerEpoch: num('stepsPerEpoch'),
          noiseMultiplier: num('noiseMultiplier'),
          shiftGrowth: record.shiftGrowth === undefined ? undefined : num('shiftGrowth'),
        });
      case 'nonPrivate':
        return NON_PRIVATE_EVENT;
      case 'noOp':
        return NO_OP_EVENT;
    }
  });
}

function truncate(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function required(record: Record<string, unknown>, field: string, path: string): unknown {
  if (!(field in record)) throw new InvalidParameterError(`${path}.${field}`, undefined, `present in a ${String(record.kind)} event`);
  return record[field];
}

function readNumber(record: Record<string, unknown>, field: string, path: string): number {
  const value = required(record, field, path);
  if (value === 'Infinity') return Infinity;
  if (typeof value !== 'number') throw new InvalidParameterError(`${path}.${field}`, value, 'a number');
  return value;
}

function readBoolean(record: Record<string, unknown>, field: string, path: string): boolean {
  const value = record[field];
  if (value === undefined) return false;
  if (typeof value !== 'boolean') throw new InvalidParameterError(`${path}.${field}`, value, 'true or false');
  return value;
}

/** Re-throws a constructor's InvalidParameterError with the JSON path prefixed to its param. */
function withPath<T>(path: string, build: () => T): T {
  try {
    return build();
  } catch (error) {
    if (error instanceof InvalidParameterError && !error.param.startsWith(path)) {
      throw new InvalidParameterError(`${path}.${error.param}`, error.value, error.expected);
    }
    throw error;
  }
}
