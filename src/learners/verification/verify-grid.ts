/**
 * The grid a model file states (`privacy.granularity`, `privacy.granularities`), checked against
 * what the file's event implies and against theta (docs/architecture.md, "Every released
 * noisy value is exact discrete noise on a public power-of-two grid"). Part of `verifyModel`: a
 * problem here means the claim does not hold.
 *
 * What the event implies exactly. An event with its noise in grid steps AND in the query's units
 * fixes the grid as their ratio (an exact division: a power of two times an integer below 2^53):
 *  - objective perturbation (`objpert` alone, and AMP's first part): noiseStd = g_b s_b with
 *    gridNoiseStd = s_b (`objectiveNoiseGrid`), so g_b = noiseStd / gridNoiseStd is objpert's
 *    `granularity` and AMP's `granularities.objective`;
 *  - RGM's gradient noise: baselineStd = g s_b with gridBaselineStd = s_b (`rgm-gd.ts`), so g is
 *    RGM's `granularity` and `granularities.gradient`.
 * Gaussian and Laplace events are relative to a sensitivity the file does not carry: a grid twice
 * as coarse with a sensitivity twice as large gives the same event, so their grid (the gradient
 * methods', output perturbation's, AMP's output grid, RGM's test grid) is not implied by it.
 *
 * Where theta is a grid value, theta is the check. The released theta is g (k + K) itself, an
 * integer below 2^53 times the grid g (`mechanisms/grid-noise.ts`), for
 *  - one discrete Gaussian as the whole event: output perturbation of the ERM minimiser or of
 *    SGD's output (`releaseWithGaussianNoise`);
 *  - AMP, compose([objectivePerturbation, gaussian]) (`003` Alg. 1): theta~ rounded to the output
 *    grid plus g K, with `granularity` = `granularities.output`;
 *  - shuffled SGD's last iterate on its lattice, selfCompose(shuffledLastIterate) (`lattice-sgd.ts`).
 * theta_j / g is exact for a power of two g, so each coordinate must be an integer below 2^53 in
 * grid steps: one ulp off the grid, or half a step, is refused. (A grid doubled by an edit passes
 * only when every coordinate happens to be an even number of steps, 2^-d of the time: theta is
 * then also a possible release on the coarser grid.) Elsewhere theta is a post-processing the file
 * cannot invert: DP-GD, DP-SGD and plain shuffled SGD release iterates built from many noisy sums
 * with a step size (and n) the file does not carry; RGM projects its iterate; objective
 * perturbation releases a minimiser; one-vs-rest and tuning release gradient runs; a federated
 * model the coordinator's `000` eq. (79) iterate.
 */
import type { DpEvent } from '../../accounting/events/types.js';
import { childEvents } from '../../accounting/events/tree.js';

/** The stated grids of a privacy report. */
export interface StatedGrid {
  readonly granularity?: number;
  readonly granularities?: Readonly<Record<string, number>>;
}

const MAX_GRID_STEPS = 2 ** 53;

function isPowerOfTwo(g: unknown): g is number {
  return typeof g === 'number' && g > 0 && Number.isFinite(g) && Number.isInteger(Math.log2(g)) && 2 ** Math.log2(g) === g;
}

/** The grid an event fixes by its noise in the query's units over its noise in grid steps (undefined: not both given). */
function ratioGrid(units: number | undefined, steps: number | undefined): number | undefined {
  return typeof units === 'number' && typeof steps === 'number' && steps > 0 ? units / steps : undefined;
}

/** Every sub-event (the event included). */
function subEvents(event: DpEvent): DpEvent[] {
  return [event, ...childEvents(event).flatMap(subEvents)];
}

/** The grids the event implies (module comment), each the single value of its sub-events (a mix is a problem). */
function impliedGrids(event: DpEvent): { objective: number[]; gradient: number[] } {
  const objective = new Set<number>();
  const gradient = new Set<number>();
  for (const e of subEvents(event)) {
    if (e.kind === 'objectivePerturbation' && e.discrete === true) {
      const g = ratioGrid(e.noiseStd, e.gridNoiseStd);
      if (g !== undefined) objective.add(g);
    }
    if (e.kind === 'relativeGaussian' && e.discrete === true) {
      const g = ratioGrid(e.baselineStd, e.gridBaselineStd);
      if (g !== undefined) gradient.add(g);
    }
  }
  return { objective: [...objective], gradient: [...gradient] };
}

/** How theta was released when it is a grid value (module comment), else undefined. */
function thetaRelease(event: DpEvent): { readonly grid: 'granularity' | 'output'; readonly what: string } | undefined {
  if (event.kind === 'gaussian' && event.discrete === true) return { grid: 'granularity', what: 'output perturbation releases theta = g (k + K)' };
  if (event.kind === 'compose' && event.events.length === 2) {
    const kinds = event.events.map((e) => e.kind).sort();
    const gaussian = event.events.find((e) => e.kind === 'gaussian');
    if (kinds[0] === 'gaussian' && kinds[1] === 'objectivePerturbation' && gaussian?.kind === 'gaussian' && gaussian.discrete === true) {
      return { grid: 'output', what: "AMP releases theta = g (k + K) on its output grid" };
    }
  }
  if (event.kind === 'selfCompose' && event.event.kind === 'shuffledLastIterate') return { grid: 'granularity', what: "shuffled SGD's last iterate lives on its lattice, theta = g k" };
  return undefined;
}

function fmt(value: number): string {
  return String(value);
}

/**
 * Why the stated grid does not hold for this event and these thetas (empty when it does, or when
 * nothing can be checked). `thetas`: the released parameter vectors (none for a federated model,
 * whose theta is the coordinator's iterate).
 */
export function gridProblems(event: DpEvent, stated: StatedGrid, thetas: readonly ArrayLike<number>[]): string[] {
  const problems: string[] = [];
  const { granularity, granularities } = stated;
  for (const [key, g] of Object.entries(granularities ?? {})) {
    if (!isPowerOfTwo(g)) problems.push(`privacy.granularities.${key} = ${fmt(g)} is not a power of two: no dpfit noise lives on such a grid`);
  }
  const implied = impliedGrids(event);
  const release = thetaRelease(event);
  const amp = release?.grid === 'output';

  // ---- grids the event implies
  if (implied.objective.length > 1) problems.push(`the event's objective perturbation parts are on different grids (${implied.objective.map(fmt).join(', ')}), but the report states one`);
  const [objective] = implied.objective;
  if (objective !== undefined) {
    const key = amp ? 'privacy.granularities.objective' : 'privacy.granularity';
    const claimed = amp ? granularities?.objective : granularity;
    if (claimed !== undefined && claimed !== objective) {
      problems.push(`${key} = ${fmt(claimed)} is not the grid of the objective noise b the event implies (noiseStd / gridNoiseStd = ${fmt(objective)}): the grid or the event was changed`);
    } else if (claimed === undefined && amp) {
      problems.push(`${key} is missing: AMP's report states the grid of its objective noise b (the event implies ${fmt(objective)})`);
    }
  }
  if (implied.gradient.length > 1) problems.push(`the event's Relative Gaussian parts are on different grids (${implied.gradient.map(fmt).join(', ')}), but the report states one`);
  const [gradient] = implied.gradient;
  if (gradient !== undefined) {
    for (const [key, claimed] of [['privacy.granularity', granularity], ['privacy.granularities.gradient', granularities?.gradient]] as const) {
      if (claimed !== undefined && claimed !== gradient) {
        problems.push(`${key} = ${fmt(claimed)} is not the grid of RGM's gradient noise the event implies (baselineStd / gridBaselineStd = ${fmt(gradient)}): the grid or the event was changed`);
      }
    }
  }

  // ---- theta on the stated grid, where theta is the grid value
  if (release === undefined) return problems;
  if (amp) {
    if (granularities?.output === undefined) problems.push("privacy.granularities.output is missing: AMP's report states the grid of its output noise");
    else if (granularity !== granularities.output) problems.push(`privacy.granularity = ${granularity === undefined ? 'none' : fmt(granularity)} is not privacy.granularities.output = ${fmt(granularities.output)}: AMP's headline grid is its output grid`);
  }
  const g = amp ? granularities?.output : granularity;
  if (!isPowerOfTwo(g)) return problems; // no grid stated: verifyModel already gives no guarantee
  thetas.forEach((theta, m) => {
    const off: number[] = [];
    for (let j = 0; j < theta.length; j++) {
      const steps = theta[j] / g;
      if (!(Number.isInteger(steps) && Math.abs(steps) < MAX_GRID_STEPS)) off.push(j);
    }
    if (off.length > 0) {
      const name = thetas.length > 1 ? `models[${m}].theta` : 'theta';
      const j = off[0];
      problems.push(
        `${name}[${j}] = ${fmt(theta[j])} is not on the stated grid (an integer multiple of granularity ${fmt(g)}, ${fmt(theta[j] / g)} steps)${off.length > 1 ? ` nor are ${off.length - 1} more coordinates` : ''}: ${release.what} exactly, so this theta was not released on that grid (edited, or the grid is not the one used)`,
      );
    }
  });
  return problems;
}
