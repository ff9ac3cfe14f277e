/**
 * Privacy of the Relative Gaussian Mechanism, RGM_{gamma,sigma}(R)(x) = R(x) + N(0, gamma |R(x)|^2 + sigma^2)
 * (Hendrikx, Mangold, Bellet 2024 — `000`, Def. 3), for a query R with (eta, R_rel)-relative L2
 * sensitivity (`000`, Def. 2).
 *
 * - `relativeGaussianRdp`: `000` Thm. 1, eq. (5), with its whole validity domain enforced.
 * - `relativeGaussianTcdp`: the same theorem as a (rho, omega)-tCDP guarantee (`000` Sec. 4.1).
 * - `relativeGaussianCorollary1`: the closed-form (epsilon, delta) of `000` Cor. 1, or null when its
 *   applicability condition fails.
 * - `relativeGaussianEpsilon`: the tighter epsilon obtained by optimising the order numerically
 *   (the paper's own recommendation after Cor. 1), with the best valid RDP conversion.
 * - `calibrateRelativeGaussian`: the smallest gamma (least noise) that meets a target
 *   (epsilon, delta), with the order and baseline sigma to use, or an error when the target is
 *   below what any gamma can reach (`000` Sec. 4.1, "Arbitrary privacy guarantees cannot be achieved").
 */
import { CalibrationError, InvalidParameterError } from '../../errors.js';
import { ceilSignificant } from '../../math/decimal-rounding.js';
import { brentMinimize } from '../../math/minimize.js';
import { brentRoot } from '../../math/root-finding.js';
import { optionNames, rejectUnknownOptions, requireInteger, requireNonNegative, requireOpenUnit, requirePositive } from '../../validate.js';
import { couplingReducedNoise } from '../discrete-coupling.js';
import type { RelativeGaussianEvent } from '../events/types.js';
import type { RdpConversion } from './conversion.js';
import { rdpToEpsilon } from './conversion.js';

export interface RelativeGaussianParams {
  /** Relative sensitivity eta > 0 (`000` Def. 2). */
  readonly eta: number;
  /** Relative noise scale gamma > 0 (`000` Def. 3). */
  readonly gamma: number;
  /** Dimension d of the query's output. */
  readonly dimension: number;
  /** Baseline noise std sigma; with rRel, restricts the valid orders (Thm. 1's sigma condition). */
  readonly baselineStd?: number;
  /** Additive term R_rel of the relative sensitivity (`000` Def. 2). */
  readonly rRel?: number;
  /**
   * The baseline in grid steps when the noise is exact discrete Gaussian on a grid (as in a
   * gridded RelativeGaussianEvent): Thm. 1's condition is then checked with the smoothing
   * coupling's continuous baseline sigma sqrt(1 - 64/s_b^2) (`../discrete-coupling.ts`), so that
   * passing such an event here is never optimistic.
   */
  readonly gridBaselineStd?: number;
}

function validate(params: RelativeGaussianParams): void {
  requirePositive('eta', params.eta);
  requirePositive('gamma', params.gamma);
  requireInteger('dimension', params.dimension, 1);
  if (params.baselineStd !== undefined) requirePositive('baselineStd', params.baselineStd);
  if (params.rRel !== undefined) requireNonNegative('rRel', params.rRel);
  const grid = params.gridBaselineStd;
  if (grid !== undefined && !(typeof grid === 'number' && Number.isFinite(grid) && grid >= 16)) {
    throw new InvalidParameterError('gridBaselineStd', grid, 'a finite number >= 16 (the baseline std in grid steps; the smoothing coupling of accounting/discrete-coupling.ts needs it above 8)');
  }
}

/** What Thm. 1's sigma condition is checked on: sigma, or the coupled sigma of a gridded baseline. */
function conditionNote(params: RelativeGaussianParams): string {
  const base = 'the Renyi bound needs sigma^2 >= gamma eta^-2 [1 - eta (alpha - 1)] R_rel^2';
  return params.gridBaselineStd === undefined ? base : `${base}, with sigma = baselineStd sqrt(1 - 64/gridBaselineStd^2) for discrete noise (smoothing coupling)`;
}

/** Thm. 1's order domain: 1 <= alpha < (1+eta)^2 / (2 eta + eta^2) = 1 + 1/(eta (2 + eta)). */
export function relativeGaussianMaxOrder(eta: number): number {
  requirePositive('eta', eta);
  return 1 + 1 / (eta * (2 + eta));
}

/**
 * The smallest order at which Thm. 1's condition sigma^2 >= gamma eta^-2 [1 - eta(alpha-1)] R_rel^2
 * holds (1 when sigma and R_rel are not both given, or when the condition holds at alpha = 1).
 */
export function relativeGaussianMinOrder(params: RelativeGaussianParams): number {
  const { eta, gamma, rRel } = params;
  const baselineStd =
    params.baselineStd !== undefined && params.gridBaselineStd !== undefined ? couplingReducedNoise(params.baselineStd, params.gridBaselineStd) : params.baselineStd;
  if (baselineStd === undefined || rRel === undefined || rRel === 0) return 1;
  // 1 - eta (alpha - 1) <= sigma^2 eta^2 / (gamma R^2)  <=>  alpha >= 1 + (1 - sigma^2 eta^2 / (gamma R^2)) / eta.
  const ratio = (baselineStd * baselineStd * eta * eta) / (gamma * rRel * rRel);
  return Math.max(1, 1 + (1 - ratio) / eta);
}

/** The smallest baseline sigma valid at `order` under Thm. 1: sqrt(gamma [1 - eta(alpha-1)]) R_rel / eta. */
export function relativeGaussianMinBaselineStd(eta: number, gamma: number, rRel: number, order: number): number {
  const factor = Math.max(0, 1 - eta * (order - 1));
  // Round up: a baseline noise that is one ulp short would break the theorem's condition.
  return (Math.sqrt(gamma * factor) * rRel / eta) * (1 + 4 * Number.EPSILON);
}

/** eq. (5) without checks. */
function rdpFormula(eta: number, gamma: number, d: number, order: number): number {
  const c = (2 + eta) ** 2 * (1 + eta) ** 2;
  const denominator = 1 - eta * (order - 1) * (2 + eta);
  return ((order * eta * eta) / (2 * gamma)) * ((1 + gamma * d * c) / denominator);
}

/** The params' names; a RelativeGaussianEvent is accepted as its own params (its `kind` and `discrete` too). */
const RELATIVE_GAUSSIAN_PARAMS = optionNames<RelativeGaussianParams | RelativeGaussianEvent>({ kind: true, eta: true, gamma: true, dimension: true, baselineStd: true, rRel: true, discrete: true, gridBaselineStd: true });

/**
 * The Rényi DP of RGM at `order` (`000` Thm. 1, eq. 5):
 *   epsilon(alpha) = alpha eta^2 / (2 gamma) * (1 + gamma d (2+eta)^2 (1+eta)^2) / (1 - eta (alpha-1)(2+eta)).
 * Orders outside [1, 1 + 1/(eta(2+eta))) and a baseline sigma below the theorem's bound are errors
 * naming the violated condition.
 */
export function relativeGaussianRdp(params: RelativeGaussianParams, order: number): number {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_PARAMS, 'relativeGaussianRdp');
  validate(params);
  const maxOrder = relativeGaussianMaxOrder(params.eta);
  if (!(order >= 1 && order < maxOrder)) {
    throw new InvalidParameterError(
      'order',
      order,
      `in [1, ${maxOrder})`,
      `the Renyi bound needs 1 <= alpha < (1+eta)^2/(2 eta + eta^2) for eta = ${params.eta}`,
    );
  }
  const minOrder = relativeGaussianMinOrder(params);
  if (order < minOrder) {
    const needed = relativeGaussianMinBaselineStd(params.eta, params.gamma, params.rRel as number, order);
    throw new InvalidParameterError(
      'baselineStd',
      params.baselineStd,
      `>= ${needed} at order ${order}`,
      conditionNote(params),
    );
  }
  return rdpFormula(params.eta, params.gamma, params.dimension, order);
}

/** A truncated-CDP guarantee (Bun, Dwork, Rothblum, Steinke 2018): RDP epsilon(alpha) <= rho alpha for 1 < alpha < omega. */
export interface TruncatedCdp {
  readonly rho: number;
  readonly omega: number;
}

/**
 * `000` Sec. 4.1 ("Truncated Concentrated DP"): Thm. 1 turned into
 * (rho, omega)-tCDP with rho = eta^2 [1/gamma + d (2+eta)^2 (1+eta)^2], omega = 1 + 1/(2 eta (2+eta)).
 * Proof (the paper's elimination of alpha): for alpha - 1 < 1/(2 eta (2+eta)) the denominator of
 * eq. (5) is > 1/2, so eq. (5) <= alpha eta^2 (1/gamma + d (2+eta)^2 (1+eta)^2); omega lies inside
 * Thm. 1's order domain. tCDP needs the bound at EVERY order in (1, omega), so Thm. 1's baseline
 * condition must hold down to alpha = 1 (sigma^2 >= gamma R_rel^2 / eta^2); otherwise this refuses.
 *
 * `000` App. A.6 prints a second "alternative" form, (eta^2/gamma + eta^2 d (2+eta)^2 / 2, ...):
 * it drops (1+eta)^2 and halves the d term, so it is NOT implied by Thm. 1 (eq. 5 exceeds it at
 * orders below omega; `test/accounting/rdp/rgm-tcdp.test.ts`), and dpfit does not use it. This form is
 * never tighter than `relativeGaussianRdp` itself, which the accountants use; it is here for users
 * whose accountant composes tCDP.
 */
export function relativeGaussianTcdp(params: RelativeGaussianParams): TruncatedCdp {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_PARAMS, 'relativeGaussianTcdp');
  validate(params);
  const { eta, gamma, dimension: d } = params;
  if (relativeGaussianMinOrder(params) > 1) {
    throw new InvalidParameterError(
      'baselineStd',
      params.baselineStd,
      `>= ${relativeGaussianMinBaselineStd(eta, gamma, params.rRel as number, 1)}`,
      `tCDP needs the Renyi bound at every order in (1, omega), i.e. its baseline condition at alpha = 1 (${conditionNote(params)})`,
    );
  }
  const rho = eta * eta * (1 / gamma + d * (2 + eta) ** 2 * (1 + eta) ** 2);
  // Round rho up and omega down by a few ulps: both must stay on the safe side of the bound.
  return Object.freeze({ rho: rho * (1 + 4 * Number.EPSILON), omega: (1 + 1 / (2 * eta * (2 + eta))) * (1 - 4 * Number.EPSILON) });
}

/** Like `relativeGaussianRdp`, but an order outside the theorem's domain has no bound: Infinity. */
export function relativeGaussianRdpOrInfinity(params: RelativeGaussianParams, order: number): number {
  validate(params);
  if (!(order >= relativeGaussianMinOrder(params) && order < relativeGaussianMaxOrder(params.eta))) return Infinity;
  return rdpFormula(params.eta, params.gamma, params.dimension, order);
}

/**
 * `000` Cor. 1: epsilon = chi + 2 sqrt(chi log(1/delta)), chi = eta^2/gamma + eta^2 (2+eta)^2 (1+eta)^2 d,
 * applicable when 1/gamma >= 4 (2+eta)^2 log(1/delta) or d >= 4 log(1/delta) / (1+eta)^2.
 * Returns null when neither condition holds (the corollary then says nothing).
 * The corollary's proof uses alpha = 1 + sqrt(log(1/delta)/chi): it also needs that order to satisfy
 * the baseline-sigma condition when sigma and R_rel are given.
 */
export function relativeGaussianCorollary1(params: RelativeGaussianParams, delta: number): { epsilon: number; order: number } | null {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_PARAMS, 'relativeGaussianCorollary1');
  validate(params);
  requireOpenUnit('delta', delta);
  const { eta, gamma, dimension: d } = params;
  const logInvDelta = -Math.log(delta);
  const applicable = 1 / gamma >= 4 * (2 + eta) ** 2 * logInvDelta || d >= (4 * logInvDelta) / (1 + eta) ** 2;
  if (!applicable) return null;
  const chi = (eta * eta) / gamma + eta * eta * (2 + eta) ** 2 * (1 + eta) ** 2 * d;
  const order = 1 + Math.sqrt(logInvDelta / chi);
  if (order < relativeGaussianMinOrder(params)) return null;
  return { epsilon: chi + 2 * Math.sqrt(chi * logInvDelta), order };
}

export interface RelativeGaussianEpsilon {
  readonly epsilon: number;
  readonly delta: number;
  readonly order: number;
  readonly rdp: number;
  readonly conversion: RdpConversion;
}

/**
 * The smallest (epsilon, delta)-DP bound over all valid orders: minimises the RDP -> DP conversion
 * of Thm. 1's bound over alpha (a log-spaced scan of alpha - 1, refined by Brent's minimiser).
 * Every order tried is a valid bound, so the result is an upper bound whatever the optimiser does.
 */
export function relativeGaussianEpsilon(params: RelativeGaussianParams, delta: number): RelativeGaussianEpsilon {
  rejectUnknownOptions(params, RELATIVE_GAUSSIAN_PARAMS, 'relativeGaussianEpsilon');
  validate(params);
  requireOpenUnit('delta', delta);
  const maxOrder = relativeGaussianMaxOrder(params.eta);
  const minOrder = relativeGaussianMinOrder(params);
  if (!(minOrder < maxOrder)) {
    throw new InvalidParameterError(
      'baselineStd',
      params.baselineStd,
      `>= ${relativeGaussianMinBaselineStd(params.eta, params.gamma, params.rRel ?? 0, maxOrder)}`,
      `no order satisfies it (${conditionNote(params)})`,
    );
  }
  const at = (order: number) => {
    const rdp = relativeGaussianRdpOrInfinity(params, order);
    return { order, rdp, ...rdpToEpsilon(order, rdp, delta) };
  };
  // Scan t = log(alpha - 1) over the open domain (minOrder, maxOrder).
  const tLo = Math.log(Math.max(minOrder - 1, 0) + (maxOrder - 1) * 1e-9);
  const tHi = Math.log((maxOrder - 1) * (1 - 1e-9));
  const steps = 200;
  let best = at(1 + Math.exp(tLo));
  let bestIndex = 0;
  for (let i = 1; i <= steps; i++) {
    const candidate = at(1 + Math.exp(tLo + ((tHi - tLo) * i) / steps));
    if (candidate.epsilon < best.epsilon) {
      best = candidate;
      bestIndex = i;
    }
  }
  const lo = tLo + ((tHi - tLo) * Math.max(0, bestIndex - 1)) / steps;
  const hi = tLo + ((tHi - tLo) * Math.min(steps, bestIndex + 1)) / steps;
  if (hi > lo) {
    const refined = brentMinimize((t) => at(1 + Math.exp(t)).epsilon, lo, hi, { xTol: 1e-10 });
    const candidate = at(1 + Math.exp(refined.x));
    if (candidate.epsilon < best.epsilon) best = candidate;
  }
  return Object.freeze({ epsilon: best.epsilon, delta, order: best.order, rdp: best.rdp, conversion: best.conversion });
}

/** The smallest epsilon any gamma can reach at this (eta, d, delta): the limit gamma -> infinity. */
export function relativeGaussianEpsilonFloor(eta: number, dimension: number, delta: number): number {
  // As gamma -> infinity, eq. (5) tends to alpha eta^2 d (2+eta)^2 (1+eta)^2 / (2 (1 - eta(alpha-1)(2+eta))),
  // which is eq. (5) itself with gamma -> infinity; evaluate with a gamma so large that 1/gamma is negligible.
  return relativeGaussianEpsilon({ eta, gamma: 1e300, dimension }, delta).epsilon;
}

export interface RelativeGaussianCalibration {
  readonly gamma: number;
  readonly order: number;
  readonly epsilon: number;
  readonly delta: number;
  /** The baseline std sigma to use at `order` (present when rRel was given). */
  readonly baselineStd?: number;
  readonly rRel?: number;
}

const CALIBRATE_RELATIVE_GAUSSIAN_OPTIONS = optionNames<NonNullable<Parameters<typeof calibrateRelativeGaussian>[0]>>({ eta: true, dimension: true, targetEpsilon: true, delta: true, rRel: true });

/**
 * The smallest gamma (least relative noise) for which RGM is (targetEpsilon, delta)-DP by
 * `relativeGaussianEpsilon`, found by Brent's method on log gamma and returned at the safe end
 * (the final value is re-checked). With rRel, also returns the baseline sigma for the chosen order.
 * A target at or below the floor that no gamma reaches is an InvalidParameterError on targetEpsilon.
 */
export function calibrateRelativeGaussian(options: {
  eta: number;
  dimension: number;
  targetEpsilon: number;
  delta: number;
  rRel?: number;
}): RelativeGaussianCalibration {
  rejectUnknownOptions(options, CALIBRATE_RELATIVE_GAUSSIAN_OPTIONS, 'calibrateRelativeGaussian');
  const eta = requirePositive('eta', options.eta);
  const dimension = requireInteger('dimension', options.dimension, 1);
  const targetEpsilon = requirePositive('targetEpsilon', options.targetEpsilon);
  const delta = requireOpenUnit('delta', options.delta);
  if (options.rRel !== undefined) requireNonNegative('rRel', options.rRel);
  const floor = relativeGaussianEpsilonFloor(eta, dimension, delta);
  if (!(targetEpsilon > floor * (1 + 1e-9))) {
    throw new CalibrationError(
      `targetEpsilon ${targetEpsilon} cannot be reached: at eta = ${eta}, d = ${dimension}, delta = ${delta} RGM's epsilon is above ${ceilSignificant(floor)} whatever gamma`,
    );
  }
  const epsilonAt = (gamma: number) => relativeGaussianEpsilon({ eta, gamma, dimension }, delta);
  const f = (logGamma: number) => epsilonAt(Math.exp(logGamma)).epsilon - targetEpsilon;
  // epsilon(gamma) decreases in gamma. Expand an interval in log gamma around eta^2 / targetEpsilon.
  let lo = Math.log((eta * eta) / targetEpsilon);
  let hi = lo;
  while (f(lo) <= 0) {
    lo -= 2;
    if (lo < -700) throw new CalibrationError('calibrateRelativeGaussian: could not bracket gamma from below');
  }
  while (f(hi) > 0) {
    hi += 2;
    if (hi > 690) throw new CalibrationError(`calibrateRelativeGaussian: targetEpsilon ${targetEpsilon} is too close to the floor ${floor}`);
  }
  const root = brentRoot(f, lo, hi, { xAbsTol: 1e-12 });
  let gamma = Math.exp(root.hi);
  let result = epsilonAt(gamma);
  for (let i = 0; result.epsilon > targetEpsilon; i++) {
    if (i > 100) throw new CalibrationError('calibrateRelativeGaussian: could not reach the target on the safe side');
    gamma *= 1 + 1e-12;
    result = epsilonAt(gamma);
  }
  if (options.rRel === undefined || options.rRel === 0) {
    // With R_rel = 0 the sigma condition holds for any sigma > 0 (Def. 3 only needs sigma > 0).
    return Object.freeze({ gamma, order: result.order, epsilon: result.epsilon, delta });
  }
  const baselineStd = relativeGaussianMinBaselineStd(eta, gamma, options.rRel, result.order);
  // Re-account with sigma and R_rel: the chosen order must stay valid for the returned sigma.
  const check = relativeGaussianEpsilon({ eta, gamma, dimension, baselineStd, rRel: options.rRel }, delta);
  if (check.epsilon > targetEpsilon) throw new CalibrationError('calibrateRelativeGaussian: baseline sigma check failed');
  return Object.freeze({ gamma, order: check.order, epsilon: check.epsilon, delta, baselineStd, rRel: options.rRel });
}
