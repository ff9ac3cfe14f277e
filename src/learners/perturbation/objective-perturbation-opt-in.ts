/**
 * Objective perturbation without output noise (`003` Sec. 2.2) is refused unless the caller opts
 * in to a release with NO guarantee: a user must not get it by accident.
 *
 * Why. `003` Thm. 3.1/3.2 bound the privacy of the EXACT minimiser theta^P of
 * SUM_i l(theta; z_i) + lambda/2 ||theta||^2 + b.theta with continuous Gaussian b. What dpfit can
 * release is a floating-point approximation of theta^P for a b drawn exactly on a public grid g_b
 * (`objectiveNoiseGrid`, g_b = noiseStd / gridNoiseStd of the event). The first-order condition
 * inverts the release: for each candidate dataset D, b_D = -(SUM_{z in D} grad l(theta; z) +
 * lambda theta) is computable from theta and the event's lambda, and only the true dataset puts
 * b_D on the grid (up to the optimiser's residual, far below g_b). On 50 rows with d = 3 at a
 * reported epsilon of 0.935 this grid inversion identified the add/remove neighbour in 184 of 200
 * runs, where an attacker against a 0.935-DP release is capped near e^eps / (1 + e^eps) = 72 %
 * (`test/learners/perturbation/grid-inversion.test.ts`). So the release is not even the conjecture it used to
 * be reported as: it is NOT private. `trainAmp` (`003` Alg. 1, Thm. 4.1) adds output noise that
 * hides b and pays for the approximate minimiser: use it.
 *
 * The accounting of the idealised mechanism (`003` Thm. 3.1/3.2) stays available for research:
 * with `acceptNoGuarantee: true` (CLI `--accept-no-guarantee`) the learner runs and its report
 * carries that epsilon with `guarantee: "none"` and `OBJECTIVE_PERTURBATION_NOT_PRIVATE` in its
 * warnings; `verifyModel` derives `none` for any file whose event is objective perturbation
 * without AMP's output Gaussian.
 */
import { InvalidParameterError } from '../../errors.js';

/** The attack in one sentence (for error messages and warnings). */
export const GRID_INVERSION =
  'its released minimiser identifies the dataset: for each candidate dataset D, b_D = -(gradient of the data term at theta + lambda theta) is recomputed from theta and the event, and only the true D puts b_D on the noise grid';

/**
 * The reason every objective-perturbation report without output noise carries (its guarantee is
 * `none`); `verifyModel` adds the same text for such a file, and its "NOT private" lowers any
 * claim to `none`.
 */
export const OBJECTIVE_PERTURBATION_NOT_PRIVATE =
  `objective perturbation without output noise is NOT private: ${GRID_INVERSION} (its guarantee holds only for the exact minimiser with continuous noise; the epsilon shown is that idealised mechanism's, for research); use amp for a proven guarantee`;

/**
 * Throws `InvalidParameterError` naming `acceptNoGuarantee` unless it is exactly `true`: the
 * caller of objective perturbation without output noise must say that the release has no
 * guarantee (module comment). Called before anything is read from the data.
 */
export function requireObjectivePerturbationOptIn(acceptNoGuarantee: unknown): void {
  if (acceptNoGuarantee === true) return;
  throw new InvalidParameterError(
    'acceptNoGuarantee',
    acceptNoGuarantee,
    "true to release objective perturbation without output noise (research only: guarantee none); for a private model use method 'amp' (trainAmp: proven)",
    `objective perturbation alone is not private: ${GRID_INVERSION}`,
  );
}
