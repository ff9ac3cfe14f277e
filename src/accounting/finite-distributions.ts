/**
 * Exact differential privacy of a mechanism whose outputs on two neighbouring datasets are finite
 * distributions (given as outcome -> probability), e.g. one enumerated exactly (`004` Sec. 4.5's
 * toy example, in the tests). Pure DP is the largest log ratio over outcomes in either direction
 * (Infinity when one distribution puts mass where the other puts none); delta(epsilon) is the
 * hockey-stick divergence sum_o max(0, P(o) - e^epsilon Q(o)), the larger of both directions.
 */
import { InvalidParameterError } from '../errors.js';

export type FiniteDistribution = ReadonlyMap<string, number>;

function check(name: string, p: FiniteDistribution): void {
  let total = 0;
  for (const [outcome, mass] of p) {
    if (!(mass >= 0 && mass <= 1)) throw new InvalidParameterError(`${name}[${outcome}]`, mass, 'a probability in [0, 1]');
    total += mass;
  }
  if (!(Math.abs(total - 1) <= 1e-9)) throw new InvalidParameterError(name, total, 'probabilities summing to 1 (within 1e-9)');
}

/** max over outcomes and both directions of |log(P(o) / Q(o))|: the exact pure-DP epsilon of the pair. */
export function pureEpsilonOfPair(p: FiniteDistribution, q: FiniteDistribution): number {
  check('p', p);
  check('q', q);
  let epsilon = 0;
  for (const outcome of new Set([...p.keys(), ...q.keys()])) {
    const a = p.get(outcome) ?? 0;
    const b = q.get(outcome) ?? 0;
    if (a === 0 && b === 0) continue;
    if (a === 0 || b === 0) return Infinity;
    epsilon = Math.max(epsilon, Math.abs(Math.log(a / b)));
  }
  return epsilon;
}

/** max(H_{e^eps}(P || Q), H_{e^eps}(Q || P)): the smallest delta for which the pair is (epsilon, delta)-indistinguishable. */
export function deltaOfPair(p: FiniteDistribution, q: FiniteDistribution, epsilon: number): number {
  check('p', p);
  check('q', q);
  if (!(epsilon >= 0)) throw new InvalidParameterError('epsilon', epsilon, 'a number >= 0');
  const factor = Math.exp(epsilon);
  let forward = 0;
  let backward = 0;
  for (const outcome of new Set([...p.keys(), ...q.keys()])) {
    const a = p.get(outcome) ?? 0;
    const b = q.get(outcome) ?? 0;
    forward += Math.max(0, a - factor * b);
    backward += Math.max(0, b - factor * a);
  }
  return Math.max(forward, backward);
}
