/**
 * Objective perturbation for GLMs (`003`, Sec. 3.1 and App. D): its privacy loss distribution, and
 * the closed form of its single-release privacy profile (Thm. 3.1) used as the reference.
 *
 * `003` Lemma D.3 and inequality (D.4) bound the hockey-stick divergence between the outputs on any
 * two neighbouring datasets (either order) by that of the loss
 *
 *   omega = |log(1 - beta/lambda)| + L^2/(2 sigma^2) + |N(0, L^2/sigma^2)|,
 *
 * and Lemma D.6 exhibits a pair (P, Q) whose privacy loss under P is exactly omega (P the
 * half-normal of eq. D.7, Q a rescaled shifted half-normal plus an atom where P = 0, eq. D.10), so
 * (P, Q) is a dominating pair and compositions are accounted by adding independent copies of omega
 * (Lemma D.7, eq. D.11; Thm. D.1). Under Q, with c = |log(1 - beta/lambda)| + v/2 and
 * v = L^2/sigma^2, the finite part of the loss has density e^{-s} 2 phi((s - c)/sqrt v)/sqrt v on
 * s >= c, i.e. 2 e^{-c + v/2} times the N(c - v, v) density: its tails are Gaussian tails.
 *
 * Note on eq. (3.1): the theorem prints H_{e^epsilon} and H_{L^2/(e sigma^2)}; its proof (App. D.2)
 * derives H_{e^{epsilon~}} with epsilon~ = epsilon - |log(1 - beta/lambda)| and H_{e^{L^2/(2 sigma^2)}},
 * which is what `objectivePerturbationDelta` implements (and what E[(1 - e^{epsilon - omega})_+]
 * equals, as the tests check against numerical integration).
 */
import { NumericalError } from '../../../errors.js';
import { gaussianDelta } from '../../gaussian/gaussian-profile.js';
import type { ObjectivePerturbationEvent } from '../../events/types.js';
import { normalCdf } from '../../../math/normal.js';
import { intervalMasses, type TailDistribution } from './interval-mass.js';
import type { PrivacyLossModel } from './loss-model.js';

type Params = Pick<ObjectivePerturbationEvent, 'noiseStd' | 'lipschitz' | 'smoothness' | 'regularization'>;

/**
 * The shift c = |log(1 - beta/lambda)| + L^2/(2 sigma^2) and the variance v = L^2/sigma^2 of omega.
 * L/sigma is accounted as at least 1e-100 (more noise than that is a post-processing of it: a
 * pessimistic bound that keeps v > 0); a v or c beyond floating point is refused.
 */
function shape(params: Params): { a: number; c: number; v: number } {
  const a = -Math.log1p(-params.smoothness / params.regularization);
  const s = Math.max(params.lipschitz / params.noiseStd, 1e-100);
  const v = s * s;
  const c = a + v / 2;
  if (!(Number.isFinite(v) && Number.isFinite(c))) {
    throw new NumericalError(`objective perturbation with lipschitz / noiseStd = ${params.lipschitz / params.noiseStd}: its privacy loss is beyond floating point`);
  }
  return { a, c, v };
}

/** The PLD of one objective-perturbation release (`003` Lemma D.6): omega = c + |N(0, v)|. */
export function objectivePerturbationLossModel(params: Params): PrivacyLossModel {
  const { c, v } = shape(params);
  const sd = Math.sqrt(v);
  const p: TailDistribution = {
    median: c + 0.6744897501960817 * sd,
    cdf: (x) => (x <= c ? 0 : 2 * normalCdf((x - c) / sd) - 1),
    sf: (x) => (x === Infinity ? 0 : 2 * normalCdf((c - x) / sd)),
  };
  // Finite part of the Q-law: 2 e^{-c + v/2} N(c - v, v) restricted to s >= c (the rest of Q sits
  // where P = 0, loss -infinity). Every cut point is represented by its upper tail.
  const scale = 2 * Math.exp(-c + v / 2);
  const q: TailDistribution = {
    median: -Infinity,
    total: scale * normalCdf(-sd),
    cdf: () => 0,
    sf: (x) => (x === Infinity ? 0 : scale * normalCdf((c - v - Math.max(x, c)) / sd)),
  };
  return {
    description: `ObjectivePerturbation(noiseStd = ${params.noiseStd}, lipschitz = ${params.lipschitz}, smoothness = ${params.smoothness}, regularization = ${params.regularization})`,
    infinityMass: 0,
    atoms: [],
    lossMin: c,
    lossMax: Infinity,
    cellMasses: (edges) => ({ p: intervalMasses(p, edges), q: intervalMasses(q, edges) }),
  };
}

/**
 * delta(epsilon) of one objective-perturbation release, `003` Thm. 3.1 eq. (3.1) as derived in its
 * proof (App. D.2): with epsilon^ = epsilon - |log(1 - beta/lambda)| - L^2/(2 sigma^2) and H the
 * Gaussian profile of sensitivity L and noise sigma (`003` eq. B.1),
 *
 *   delta = 2 H(epsilon - |log(1 - beta/lambda)|)                       if epsilon^ >= 0,
 *   delta = (1 - e^{epsilon^}) + e^{epsilon^} 2 H(L^2/(2 sigma^2))       otherwise.
 */
export function objectivePerturbationDelta(epsilon: number, params: Params): number {
  const { a, v } = shape(params);
  const z = params.noiseStd / params.lipschitz;
  const hat = epsilon - a - v / 2;
  if (hat >= 0) return Math.min(1, 2 * gaussianDelta(epsilon - a, z));
  return Math.min(1, -Math.expm1(hat) + Math.exp(hat) * 2 * gaussianDelta(v / 2, z));
}
