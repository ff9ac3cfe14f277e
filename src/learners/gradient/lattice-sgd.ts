/**
 * Noisy projected SGD on a lattice, run so that amplification by iteration (Feldman, Mironov,
 * Talwar & Thakurta 2018, FMTT; `004` Sec. 3.3, Thms. 3.5-3.6) provably applies to what the
 * computer computes, for GLM losses with per-example clipping. It is the iteration of
 * `--method shuffled` when the conditions below hold; its last iterate is then accounted by a
 * `shuffledLastIterate` event (`accounting/rdp/amplification-by-iteration.ts`) next to plain
 * composition, and the smaller proven epsilon is the headline.
 *
 * THE ITERATION. Public: clip norm C, step size eta, L2 strength lambda, projection radius r, a
 * power-of-two lattice step h and an integer noise parameter s (the noise std in lattice steps,
 * s h >= eta z C). The state is an integer vector k (theta = h k, exact doubles: |k| <= 2^52).
 * A step on record (x, y):
 *   p = Pi_r(theta)                        (projection onto the ball of radius r)
 *   c = clamp(f'(<p, x>; y), -t, t)       (t = C / ||x||: the clipped GLM gradient is c x)
 *   v = a p - eta c x                      (a = fl(1 - eta lambda))
 *   k <- clamp(round(v / h) + K, +-2^52)   (K: d independent discrete Gaussians N_Z(0, s^2), drawn exactly)
 *
 * WHY THE THEOREM APPLIES. Write Phi_x(u) = a Pi_r(u) - eta c(<Pi_r(u), x>) x (exact arithmetic).
 *  (1) Phi_x is non-expansive. c(m) = clamp(f'(m), -t, t) is nondecreasing (f is convex, so f' is)
 *      and beta_f-Lipschitz (beta_f = sup f'', clamping keeps both), so it is the derivative of a
 *      convex beta_f-smooth phi, and u -> a u - eta c(<u, x>) x is the gradient step of the convex
 *      function F(u) = phi(<u, x>) + lambda' ||u||^2 / 2 (lambda' = (1 - a) / eta), which is
 *      (beta_f ||x||^2 + lambda')-smooth: with eta (beta_f R^2 + lambda') <= 2 the step is
 *      non-expansive (Hardt, Recht & Singer 2016, Lemma 3.6), and so is the projection.
 *      Per-example clipping therefore does NOT break non-expansiveness for GLMs.
 *  (2) Two records x, x' move Phi by ||eta (c x - c' x')|| <= 2 eta C (1 + gamma_{d+8}).
 *  (3) The computed v is within e_fl (`floatingPointError`, a rounding-error analysis in the
 *      function's comment) of Phi_x(theta) in L2, and rounding to the lattice moves each of two
 *      values by <= h sqrt(d) / 2. So, in lattice units, the computed map G (rounding and the
 *      clamp, which is 1-Lipschitz, included) satisfies ||G(a) - G(b)|| <= ||a - b|| + e with
 *      e = 2 e_fl / h + sqrt(d), and the differing record's two maps are within
 *      Delta = (2 eta C (1 + gamma_{d+8}) + 2 e_fl) / h + sqrt(d) on the same input.
 *  (4) Shifted Renyi divergence on the lattice. Contraction: for a map with ||G(a) - G(b)|| <=
 *      ||a - b|| + e, D^(w + e)(G(X) || G(X')) <= D^(w)(X || X') (couple, apply G, post-process).
 *      Shift reduction with K: given a coupling of X with Y at lattice distance W <= w + a,
 *      take the lattice vector u = round(W min(1, a / ||W||)) (||u|| <= a + sqrt(d)/2,
 *      ||W - u|| <= w + sqrt(d)/2, u = W exactly when a >= ||W||): D^(w + sqrt(d)/2)(X + K ||
 *      X' + K) <= D^(w + a)(X || X') + sup_u D_alpha(K + u || K). For an integer shift u,
 *      D_alpha(N_Z(u, s^2) || N_Z(0, s^2)) <= alpha ||u||^2 / (2 s^2): the normaliser is shift-
 *      invariant and sum_x exp(-(x - c)^2 / (2 s^2)) is largest at integer c (its Fourier
 *      coefficients are positive, Poisson summation), the discrete analogue of the Gaussian's
 *      identity (Canonne, Kamath & Steinke 2020, Prop. 5).
 *  (5) The record k-th from the end of an epoch: shift Delta after its map, k noise draws, k - 1
 *      later maps. Spreading the reduction equally (optimal by Cauchy-Schwarz) gives
 *      D_alpha <= alpha (Delta + (k - 1) e + k sqrt(d))^2 / (2 s^2 k)
 *             = 2 alpha (1 + g k)^2 / (z_e^2 k),  z_e = 2 s / (Delta - e), g = (e + sqrt(d)) / (Delta - e):
 *      FMTT Thm. 22 / `004` Thm. 3.6 with the rounding's shift added. The permutation, drawn from
 *      no data, is mixed over (`004` Lemma 3.1) and epochs compose (the event's comment).
 *
 * The same run is also a composition of one Gaussian release per step (the differing record is
 * touched once per epoch): each step releases the lattice point G(theta) + K of sensitivity
 * Delta with discrete noise s, accounted like the other gridded releases (`mechanisms/grid-noise.ts`).
 */
import type { GaussianEvent, ShuffledLastIterateEvent } from '../../accounting/events/types.js';
import { gaussianEvent, shuffledLastIterateEvent } from '../../accounting/events/constructors.js';
import { InvalidParameterError } from '../../errors.js';
import { fillDiscreteGaussian } from '../../random/exact.js';
import type { Rng } from '../../random/rng.js';
import type { GlmData, GlmLoss } from '../glm/types.js';

const U = Number.EPSILON / 2;
/** gamma_n = n u / (1 - n u) (Higham 2002, Sec. 3.1). */
const gammaN = (n: number) => (n * U) / (1 - n * U);
/** The lattice index range: |k| <= 2^52 keeps h k an exact double and k + K exact (|K| < 2^52). */
const MAX_INDEX = 2 ** 52;
/** Largest noise parameter (lattice steps) the exact sampler takes. */
const MAX_NOISE_PARAMETER = 2 ** 46;
/** The smallest noise parameter in lattice steps. */
const MIN_NOISE_PARAMETER = 1024;
/** The rounding shift of a whole epoch is kept below this fraction of the step's sensitivity when the lattice range allows. */
const TARGET_EPOCH_SLACK = 2 ** -20;
/**
 * The derivative of every dpfit loss is computed with relative error <= 2^-46 (each is a few
 * roundings and at most one exp: logistic -y / (1 + e^{y m}), squared m - y, Huber and the
 * smoothed hinge a clamp or a product of such terms), the assumption behind `floatingPointError`.
 * The logistic exp is `math/exp.ts`' deterministic one, within 4 ulp of e^x (tested against
 * correctly rounded values); beyond its range (e^x -> 0 below -708, Infinity above 709) f' is off
 * by less than 1.3e-308 in absolute terms, far below 2^-45 t for any clip threshold t > 1e-290.
 */
const DERIVATIVE_RELATIVE_ERROR = 2 ** -46;

export interface LatticeSgdSettings {
  /** Records per epoch n and steps per epoch m <= n. */
  readonly n: number;
  readonly stepsPerEpoch: number;
  readonly d: number;
  readonly clipNorm: number;
  readonly learningRate: number;
  readonly regularization: number;
  /** r: the public radius of the ball the iterate is projected on before each step. */
  readonly projectionRadius: number;
  /** R: a PUBLIC bound on every row's norm (from the schema), checked on the data by the caller. */
  readonly rowNormBound: number;
  /** sup f'' of the loss (`GlmLoss.curvatureBound`). */
  readonly curvatureBound: number;
}

export interface LatticeSgdPlan {
  /** h: the lattice step (a power of two). */
  readonly granularity: number;
  /** s: the integer noise parameter in lattice steps (noise std s h in theta's units). */
  readonly noiseParameter: number;
  /** e_fl: the bound on the floating-point error of one computed step, in theta's units. */
  readonly floatError: number;
  /** a = fl(1 - eta lambda). */
  readonly decay: number;
  /** Delta and e of the file comment, in lattice steps. */
  readonly stepShift: number;
  readonly perStepSlack: number;
  /** One epoch's last-iterate event. */
  readonly epochEvent: ShuffledLastIterateEvent;
  /** One step's release as a Gaussian mechanism (plain composition). */
  readonly stepEvent: GaussianEvent;
}

/** Why amplification by iteration does not apply to these settings, or undefined when it does. */
export function latticeSgdObstacle(settings: LatticeSgdSettings): string | undefined {
  const { clipNorm: C, learningRate: eta, regularization: lambda, projectionRadius: r, rowNormBound: R, curvatureBound: beta } = settings;
  if (!(Number.isFinite(beta) && beta >= 0)) return `the loss has no finite smoothness bound (sup f'' = ${beta}); FMTT's contraction needs a smooth loss`;
  if (!(Number.isFinite(R) && R > 0)) return 'no public row-norm bound R (train on what loadDataset returns, or give rowNormBound): the smoothness of the loss in theta is beta_f R^2';
  if (!(Number.isFinite(C) && C > 0)) return `the clipping norm is ${C}; a finite one is needed`;
  if (!(Number.isFinite(r) && r > 0)) return `the projection radius is ${r}; a finite public radius r > 0 is needed (it bounds the floating-point error of a step)`;
  const decay = 1 - eta * lambda;
  const smoothnessStep = (1 - decay + eta * beta * R * R) * (1 + 1e-12);
  if (!(smoothnessStep <= 2)) {
    return `the step is not provably non-expansive: learningRate x (beta_f R^2 + regularization) = ${smoothnessStep} must be <= 2 (beta_f = ${beta}, R = ${R}); lower the learning rate to <= ${2 / (beta * R * R + lambda)}`;
  }
  return undefined;
}

/**
 * A public bound on ||computed v - Phi_x(theta)||_2 for one step (file comment). With u = 2^-53,
 * gamma_n = n u / (1 - n u), ||x|| <= R, ||Pi_r(theta)|| <= r:
 *  - projection: the computed scale r / sqrt(sum theta_j^2) has relative error <= gamma_{d+4}, the
 *    products one more rounding, and where the two branches disagree ||theta|| is within
 *    gamma_{d+2} of r: ||p - Pi_r(theta)|| <= e_p = r gamma_{d+6};
 *  - margin: |fl(<p, x>) - <Pi_r(theta), x>| <= gamma_d ||p|| R + e_p R = e_m (any summation order);
 *  - clipped derivative: f' is beta_f-Lipschitz and clamping 1-Lipschitz; the computed f' has
 *    relative error <= 2^-46, which matters only where |f'| <= t (1 + 2^-45) (else both clamp):
 *    |c~ - c| <= beta_f e_m + 2^-45 t, and t ||x|| <= C (1 + gamma_{d+8});
 *  - v_j = fl(fl(p_j a) - fl(fl(eta c~) x_j)): three roundings on terms bounded by ||p|| and
 *    eta |c~| ||x||: <= 2.01 u (||p|| + eta C') + u eta C' in L2, plus a e_p + eta R |c~ - c|.
 * The sum, doubled as a safety factor.
 */
export function floatingPointError(settings: LatticeSgdSettings): number {
  const { d, clipNorm: C, learningRate: eta, projectionRadius: r, rowNormBound: R, curvatureBound: beta } = settings;
  const ep = r * gammaN(d + 6);
  const pNorm = r * (1 + gammaN(d + 6));
  const em = gammaN(d) * pNorm * R + ep * R;
  const cFactor = C * (1 + gammaN(d + 8));
  const derivativeError = eta * R * beta * em + eta * cFactor * 2 * DERIVATIVE_RELATIVE_ERROR * (1 + 1e-3);
  const stepRounding = 2.01 * U * (pNorm + eta * cFactor) + U * eta * cFactor;
  return 2 * (ep + derivativeError + stepRounding);
}

/** The largest power of two <= x (x > 0 finite). */
function powerOfTwoBelow(x: number): number {
  let p = 2 ** Math.floor(Math.log2(x));
  while (p > x) p /= 2;
  while (p * 2 <= x) p *= 2;
  return p;
}

/**
 * The lattice and the noise for noise multiplier z (noise std >= z C in gradient units, i.e.
 * eta z C in theta's), and the events that account the run. Throws naming the condition when
 * amplification by iteration does not apply (`latticeSgdObstacle`).
 */
export function planLatticeSgd(settings: LatticeSgdSettings, noiseMultiplier: number): LatticeSgdPlan {
  const obstacle = latticeSgdObstacle(settings);
  if (obstacle !== undefined) throw new InvalidParameterError('lastIterate', true, `usable only when its conditions hold: ${obstacle}`);
  if (!(noiseMultiplier > 0 && Number.isFinite(noiseMultiplier))) throw new InvalidParameterError('noiseMultiplier', noiseMultiplier, 'a finite number > 0');
  const { n, stepsPerEpoch: m, d, clipNorm: C, learningRate: eta, regularization: lambda, projectionRadius: r } = settings;
  const sensitivity = 2 * eta * C * (1 + gammaN(d + 8)) * (1 + 4 * U);
  const floatError = floatingPointError(settings);
  const std = eta * noiseMultiplier * C;
  // Fine enough that a whole epoch's rounding shift is <= 2^-20 of the sensitivity, coarse
  // enough that |v| / h stays < 2^51 (the clamp then never binds) and s <= 2^46.
  const rangeFloor = (r * (1 + gammaN(d + 6)) + 2 * eta * C) / 2 ** 51;
  let h = powerOfTwoBelow((sensitivity * TARGET_EPOCH_SLACK) / (m * Math.sqrt(d)));
  while (h < rangeFloor || std / h > MAX_NOISE_PARAMETER) h *= 2;
  if (!(h >= 2 ** -960)) throw new InvalidParameterError('learningRate', eta, 'large enough that the lattice step stays a normal double');
  const noiseParameter = Math.ceil(std / h);
  if (noiseParameter < MIN_NOISE_PARAMETER) {
    throw new InvalidParameterError('noiseMultiplier', noiseMultiplier, `large enough that the noise spans >= ${MIN_NOISE_PARAMETER} lattice steps (it spans ${noiseParameter}; the projection radius r = ${r} sets the lattice's coarseness)`);
  }
  // Delta = base + e (file comment, (3)); base = 2 eta C (1 + gamma) / h is exact (h a power of two).
  const sqrtD = Math.sqrt(d) * (1 + U);
  const base = sensitivity / h;
  const perStepSlack = ((2 * floatError) / h) * (1 + 4 * U) + sqrtD;
  const stepShift = (base + perStepSlack) * (1 + 2 * U);
  const effectiveNoise = ((2 * noiseParameter) / base) * (1 - 4 * U);
  const shiftGrowth = ((perStepSlack + sqrtD) / base) * (1 + 4 * U);
  const epochEvent = shuffledLastIterateEvent({ datasetSize: n, stepsPerEpoch: m, noiseMultiplier: effectiveNoise, shiftGrowth });
  // One step as a Gaussian mechanism: a lattice query of sensitivity Delta plus N_Z(0, s^2).
  const stepEvent = gaussianEvent((noiseParameter / stepShift) * (1 - 4 * U), { discrete: true, gridNoiseStd: noiseParameter });
  return { granularity: h, noiseParameter, floatError, decay: 1 - eta * lambda, stepShift, perStepSlack, epochEvent, stepEvent };
}

/** Scratch buffers of a run (length d each). */
export interface LatticeScratch {
  readonly projected: Float64Array;
  readonly noise: Float64Array;
}

export function latticeScratch(d: number): LatticeScratch {
  return { projected: new Float64Array(d), noise: new Float64Array(d) };
}

/**
 * The deterministic part of a step on row i: out = round(v / h) for v the computed
 * a Pi_r(h k) - eta c x_i (the map G of the file comment, before the noise). `thresholds` are the
 * rows' clip thresholds t_i = C / ||x_i|| (`clipThresholds(data, C).values`). Returns whether the
 * example's gradient was clipped (a diagnostic for the data owner, not part of any release).
 */
export function latticeMap(
  plan: LatticeSgdPlan, settings: LatticeSgdSettings, loss: GlmLoss, data: GlmData, thresholds: Float64Array,
  i: number, k: Float64Array, scratch: LatticeScratch, out: Float64Array,
): boolean {
  const { d, x, y } = data;
  const h = plan.granularity;
  const r = settings.projectionRadius;
  const p = scratch.projected;
  let ss = 0;
  for (let j = 0; j < d; j++) {
    const t = h * k[j];
    p[j] = t;
    ss += t * t;
  }
  const norm = Math.sqrt(ss);
  if (norm > r) {
    const scale = r / norm;
    for (let j = 0; j < d; j++) p[j] *= scale;
  }
  const row = i * d;
  let margin = 0;
  for (let j = 0; j < d; j++) margin += p[j] * x[row + j];
  const t = thresholds[i];
  const g = loss.derivative(margin, y[i]);
  // NaN (an overflowed margin) becomes +0, counted as clipped, as in every clipped sum (`glm/per-example.ts`).
  const c = g > t ? t : g < -t ? -t : g !== g ? 0 : g;
  const b = settings.learningRate * c;
  const a = plan.decay;
  for (let j = 0; j < d; j++) {
    const v = p[j] * a - b * x[row + j];
    // v / h is exact (power-of-two scaling); the clamp is data-independent and 1-Lipschitz.
    out[j] = Math.round(Math.max(-MAX_INDEX, Math.min(MAX_INDEX, v / h)));
  }
  return c !== g;
}

/**
 * One step on row i, in place on the lattice indices `k` (theta = h k): the map, then
 * K ~ N_Z(0, s^2)^d added exactly (|round| <= 2^52 and |K| < 2^52 keep the sum exact) and the
 * data-independent clamp. Returns whether the example's gradient was clipped.
 */
export function latticeSgdStep(
  plan: LatticeSgdPlan, settings: LatticeSgdSettings, loss: GlmLoss, data: GlmData, thresholds: Float64Array,
  i: number, k: Float64Array, rng: Rng, scratch: LatticeScratch,
): boolean {
  const clipped = latticeMap(plan, settings, loss, data, thresholds, i, k, scratch, k);
  fillDiscreteGaussian(rng, scratch.noise, plan.noiseParameter);
  for (let j = 0; j < k.length; j++) k[j] = Math.max(-MAX_INDEX, Math.min(MAX_INDEX, k[j] + scratch.noise[j]));
  return clipped;
}
