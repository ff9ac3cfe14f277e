/**
 * A short human-readable description of a DpEvent, for titles and progress lines (the JSON form,
 * `eventToJson`, stays the exact one): e.g. "1273 x Poisson-sampled (q = 0.007862) Gaussian (z = 0.95)".
 */
import type { DpEvent } from './types.js';

/** 4 significant digits, no trailing zeros. */
function num(x: number): string {
  if (x === Infinity) return 'Infinity';
  return Number(x.toPrecision(4)).toString();
}

export function describeEvent(event: DpEvent, maxLength = 120): string {
  const text = describe(event, 0);
  return text.length > maxLength ? `${text.slice(0, maxLength - 3)}...` : text;
}

function describe(event: DpEvent, depth: number): string {
  if (depth > 6) return '...';
  const inner = (e: DpEvent) => {
    const d = describe(e, depth + 1);
    return e.kind === 'compose' ? `(${d})` : d;
  };
  switch (event.kind) {
    case 'gaussian':
      return `${event.discrete ? 'discrete ' : ''}Gaussian (z = ${num(event.noiseMultiplier)})`;
    case 'laplace':
      return `${event.discrete ? 'discrete ' : ''}Laplace (b = ${num(event.noiseMultiplier)})`;
    case 'randomizedResponse':
      return `randomized response (p = ${num(event.noiseParameter)}, ${event.numBuckets} buckets)`;
    case 'relativeGaussian':
      return `relative Gaussian (eta = ${num(event.eta)}, gamma = ${num(event.gamma)}, d = ${event.dimension})`;
    case 'objectivePerturbation':
      return `objective perturbation (sigma = ${num(event.noiseStd)}, L = ${num(event.lipschitz)}, beta = ${num(event.smoothness)}, lambda = ${num(event.regularization)})`;
    case 'poissonSampled':
      return `Poisson-sampled (q = ${num(event.samplingProbability)}) ${inner(event.event)}`;
    case 'sampledWithoutReplacement':
      return `${event.sampleSize} of ${event.sourceDatasetSize} sampled without replacement, ${inner(event.event)}`;
    case 'nonUniformSampled':
      return `one record sampled with weights <= ${num(event.maxWeight)}, ${inner(event.event)}`;
    case 'compose':
      return event.events.length === 0 ? 'nothing' : event.events.map((e) => inner(e)).join(' + ');
    case 'selfCompose':
      return `${event.count} x ${inner(event.event)}`;
    case 'repeatAndSelect':
      return `best of a random number (mean ${num(event.mean)}) of runs of ${inner(event.event)}`;
    case 'shuffledSgdConjecture':
      return `the shuffled-SGD conjecture (unproven): shuffled SGD, n = ${event.datasetSize}, z = ${num(event.noiseMultiplier)}, ${num(event.epochs)} epochs, tau = ${num(event.fraction)}`;
    case 'shuffledLastIterate':
      return `last iterate of a shuffled epoch (n = ${event.datasetSize}, ${event.stepsPerEpoch} steps, z = ${num(event.noiseMultiplier)})`;
    case 'nonPrivate':
      return 'a non-private release';
    case 'noOp':
      return 'nothing released';
  }
}
