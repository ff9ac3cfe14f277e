/**
 * The classic (epsilon, delta) bound of objective perturbation, `003` Thm. 2.8 (Kifer et al. 2012),
 * exactly as `003` states it: for a convex, twice-differentiable loss with ||grad l|| <= L and
 * grad^2 l < beta I, objective perturbation (SUM objective + lambda/2 ||theta||^2 + b.theta,
 * b ~ N(0, sigma^2 I)) is (epsilon, delta)-DP when
 *
 *   (i)  lambda >= 2 beta / epsilon,   and   (ii) sigma >= L sqrt(8 log(2/delta) + 4 epsilon) / epsilon.
 *
 * Solved for the free parameter (both conditions are monotone):
 *
 *   epsilon(delta) = max(2 beta / lambda, (2 L^2 + L sqrt(4 L^2 + 8 sigma^2 log(2/delta))) / sigma^2)
 *     ((ii) is sigma^2 eps^2 - 4 L^2 eps - 8 L^2 log(2/delta) >= 0, a quadratic in eps whose value
 *     at 0 is negative: it holds exactly from its positive root on);
 *   delta(epsilon) = min(1, 2 exp(-(sigma^2 epsilon^2 / L^2 - 4 epsilon) / 8))   when (i) holds,
 *     and no delta < 1 when it does not (refused, naming `regularization`).
 *
 * An extra, looser curve, for `003` Fig. 1. It must never be reported as tighter than `003`
 * Thm. 3.1 (the exact profile of the dominating pair, `objectivePerturbationDelta`): as printed,
 * Thm. 2.8 pays at most 2 beta / lambda for the Jacobian where Thm. 3.1 pays
 * -log(1 - beta/lambda), so for lambda close to beta it can claim less. Numerically (python3/scipy
 * grid over sigma in [0.2, 500], delta in [1e-12, 0.1]) this happens only for lambda <= 3.1 beta,
 * e.g. sigma = 5, beta = 1, lambda = 1.5, delta = 0.01: Thm. 2.8 gives 1.385, Thm. 3.1 1.426.
 * Both functions therefore also check Thm. 3.1 at their answer (closed form, cheap) and refuse,
 * with `InvalidParameterError` naming `regularization`, when Thm. 2.8 would claim less than it (and
 * when lambda <= beta, where Thm. 3.1 gives no bound at all).
 *
 * The strict Hessian bound of the theorem (grad^2 l < beta I) is taken as the declared
 * `smoothness` beta: a loss whose Hessian reaches beta satisfies it for every beta' > beta, and the
 * bound is continuous in beta.
 */
import { InvalidParameterError } from '../../errors.js';
import { optionNames, rejectUnknownOptions, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { objectivePerturbationDelta } from '../pld/models/objective-perturbation.js';

/** The mechanism's parameters (as in `objectivePerturbationEvent`): lambda regularises the SUM objective. */
export interface KiferObjectivePerturbationParams {
  /** sigma: std of the objective's linear noise b. */
  readonly noiseStd: number;
  /** L: per-example gradient-norm bound. */
  readonly lipschitz: number;
  /** beta: per-example Hessian bound. */
  readonly smoothness: number;
  /** lambda: regulariser of the SUM objective. */
  readonly regularization: number;
}

const KIFER_PARAMS = optionNames<KiferObjectivePerturbationParams>({ noiseStd: true, lipschitz: true, smoothness: true, regularization: true });

function validated(params: KiferObjectivePerturbationParams, caller: string): KiferObjectivePerturbationParams {
  rejectUnknownOptions(params, KIFER_PARAMS, caller);
  return {
    noiseStd: requirePositive('noiseStd', params.noiseStd),
    lipschitz: requirePositive('lipschitz', params.lipschitz),
    smoothness: requireNonNegative('smoothness', params.smoothness),
    regularization: requirePositive('regularization', params.regularization),
  };
}

/** Refuses when Thm. 2.8's (epsilon, delta) would be tighter than Thm. 3.1's at the same parameters. */
function requireNotTighterThanThm31(epsilon: number, delta: number, p: KiferObjectivePerturbationParams): void {
  if (!(p.regularization > p.smoothness)) {
    throw new InvalidParameterError('regularization', p.regularization, `> smoothness (${p.smoothness})`, "the exact bound of the dominating pair, which Kifer et al.'s is never reported below, needs lambda > beta");
  }
  const exact = objectivePerturbationDelta(epsilon, p);
  if (exact > delta) {
    throw new InvalidParameterError(
      'regularization',
      p.regularization,
      `a lambda at which Kifer et al.'s bound is not tighter than the exact one`,
      `at epsilon = ${epsilon}, Kifer et al.'s bound claims delta = ${delta} but the exact bound of the dominating pair gives ${exact}: its Jacobian term 2 beta / lambda is below the exact -log(1 - beta/lambda) when lambda is close to beta`,
    );
  }
}

/**
 * epsilon of objective perturbation at `delta` by `003` Thm. 2.8 (Kifer et al. 2012): the smallest
 * epsilon meeting both of its conditions, max(2 beta/lambda, (2L^2 + L sqrt(4L^2 + 8 sigma^2 log(2/delta)))/sigma^2).
 * Refused (`InvalidParameterError`, `regularization`) where it would be tighter than Thm. 3.1.
 *
 * @example
 * kiferObjectivePerturbationEpsilon(1e-5, {noiseStd: 5, lipschitz: 1, smoothness: 1, regularization: 20}) // 2.0580
 */
export function kiferObjectivePerturbationEpsilon(delta: number, params: KiferObjectivePerturbationParams): number {
  const p = validated(params, 'kiferObjectivePerturbationEpsilon');
  requireOpenUnit('delta', delta);
  const { noiseStd: s, lipschitz: L, smoothness: beta, regularization: lambda } = p;
  const root = (2 * L * L + L * Math.sqrt(4 * L * L + 8 * s * s * Math.log(2 / delta))) / (s * s);
  const epsilon = Math.max((2 * beta) / lambda, root);
  requireNotTighterThanThm31(epsilon, delta, p);
  return epsilon;
}

/**
 * delta(epsilon) of objective perturbation by `003` Thm. 2.8 (Kifer et al. 2012):
 * min(1, 2 exp(-(sigma^2 epsilon^2 / L^2 - 4 epsilon) / 8)). Refused (`InvalidParameterError`)
 * when condition (i) lambda >= 2 beta / epsilon fails (`regularization`), when epsilon <= 0
 * (`epsilon`), and where it would be tighter than Thm. 3.1 (`regularization`).
 *
 * @example
 * kiferObjectivePerturbationDelta(2, {noiseStd: 5, lipschitz: 1, smoothness: 1, regularization: 20}) // 2.0260e-5
 */
export function kiferObjectivePerturbationDelta(epsilon: number, params: KiferObjectivePerturbationParams): number {
  const p = validated(params, 'kiferObjectivePerturbationDelta');
  requirePositive('epsilon', epsilon);
  const { noiseStd: s, lipschitz: L, smoothness: beta, regularization: lambda } = p;
  if (!(lambda >= (2 * beta) / epsilon)) {
    throw new InvalidParameterError('regularization', lambda, `>= 2 beta / epsilon = ${(2 * beta) / epsilon}`, 'Kifer et al.\'s condition lambda >= 2 beta / epsilon');
  }
  const delta = Math.min(1, 2 * Math.exp(-((s * s * epsilon * epsilon) / (L * L) - 4 * epsilon) / 8));
  if (delta < 1) requireNotTighterThanThm31(epsilon, delta, p);
  return delta;
}
