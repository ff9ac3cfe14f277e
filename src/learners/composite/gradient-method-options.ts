/**
 * The option names of a composite release's `base` (honest tuning, one-vs-rest): a gradient
 * method and its learner's options without the noise, which the composite release sets
 * (`gradient-methods.ts`, `GradientMethodOptions`). Checked before anything is calibrated or
 * trained, so that a misspelt option of the base is refused up front, not in the first run.
 */
import { InvalidParameterError } from '../../errors.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';
import { DP_GD_OPTIONS } from '../gradient/dp-gd.js';
import { DP_SGD_OPTIONS } from '../gradient/dp-sgd.js';
import { requireGradientMethod, type GradientMethodOptions } from './gradient-methods.js';
import { SHUFFLED_SGD_OPTIONS } from '../gradient/shuffled-sgd.js';

const NOISE_KEYS = ['epsilon', 'delta', 'noiseMultiplier', 'rng', 'continuousNoise'] as const;

/** A learner's option names without the noise's (the composite release sets those). */
function withoutNoise<R extends Readonly<Record<string, true>>>(names: R): Omit<R, (typeof NOISE_KEYS)[number]> {
  const out: Record<string, true> = { ...names };
  for (const key of NOISE_KEYS) delete out[key];
  return out as Omit<R, (typeof NOISE_KEYS)[number]>;
}

const BASE_OPTIONS = {
  dpgd: optionNames<Extract<GradientMethodOptions, { method: 'dpgd' }>>(withoutNoise(DP_GD_OPTIONS)),
  dpsgd: optionNames<Extract<GradientMethodOptions, { method: 'dpsgd' }>>(withoutNoise(DP_SGD_OPTIONS)),
  shuffled: optionNames<Extract<GradientMethodOptions, { method: 'shuffled' }>>(withoutNoise(SHUFFLED_SGD_OPTIONS)),
};

/** Refuses a `base` that is not a gradient method's options, naming an unknown option and the closest valid one. */
export function rejectUnknownBaseOptions(base: unknown, where: string): void {
  if (typeof base !== 'object' || base === null || Array.isArray(base)) {
    throw new InvalidParameterError('base', base, "a gradient method's options ({method: 'dpgd' | 'dpsgd' | 'shuffled', ...})");
  }
  const method = requireGradientMethod((base as { method?: unknown }).method as string);
  rejectUnknownOptions(base, BASE_OPTIONS[method], `${where}'s base (method '${method}')`);
}
