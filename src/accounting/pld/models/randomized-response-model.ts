/**
 * k-ary randomized response (replace-one adjacency): with probability p the answer is a uniformly
 * random bucket of k, otherwise the true one. For neighbours whose true buckets differ, the output
 * distributions are P = (1 - p + p/k on bucket x, p/k elsewhere) and Q = (1 - p + p/k on x', p/k
 * elsewhere): this pair is the mechanism itself, hence tight, and symmetric. Its privacy loss
 * takes three values:
 *
 *   +eps0 with P-mass 1 - p + p/k,   -eps0 with P-mass p/k,   0 with P-mass (k - 2) p/k,
 *
 * eps0 = log((1 - p + p/k) / (p/k)) = log1p(k (1 - p) / p). For p = 0 the loss is +infinity with
 * P-mass 1 (no privacy).
 */
import { normalizeAtoms, type PrivacyLossModel } from './loss-model.js';

/** A PLD made of atoms (loss, P-mass) and a mass at +infinity. */
export function atomicLossModel(description: string, atoms: readonly { loss: number; mass: number }[], infinityMass: number): PrivacyLossModel {
  const finite = normalizeAtoms(atoms);
  const losses = finite.map((a) => a.loss);
  return {
    description,
    infinityMass,
    atoms: finite,
    lossMin: losses.length > 0 ? Math.min(...losses) : 0,
    lossMax: losses.length > 0 ? Math.max(...losses) : 0,
    cellMasses: (edges) => ({ p: new Float64Array(edges.length + 1), q: new Float64Array(edges.length + 1) }),
  };
}

export function randomizedResponseLossModel(noiseParameter: number, numBuckets: number): PrivacyLossModel {
  const description = `RandomizedResponse(noiseParameter = ${noiseParameter}, numBuckets = ${numBuckets})`;
  if (noiseParameter === 0) return atomicLossModel(description, [], 1);
  const k = numBuckets;
  const other = noiseParameter / k;
  const own = 1 - noiseParameter + other;
  const eps0 = Math.log1p((k * (1 - noiseParameter)) / noiseParameter);
  return atomicLossModel(
    description,
    [
      { loss: eps0, mass: own },
      { loss: -eps0, mass: other },
      { loss: 0, mass: (k - 2) * other },
    ],
    0,
  );
}
