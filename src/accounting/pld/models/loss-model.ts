/**
 * A mechanism, for the PLD accountant, is the privacy loss distribution (PLD) of a dominating pair
 * (P, Q) (Zhu, Dong, Wang 2022, Def. 7 and Thm. 10; `003` Thm. D.1-D.2): the law of the privacy
 * loss L = log(dP/dQ) under P, with an atom at +infinity where Q = 0. Every (epsilon, delta)
 * question about the mechanism and its compositions is a hockey-stick divergence
 *
 *   delta(epsilon) = P(L = inf) + E_P[(1 - e^{epsilon - L})_+]          (`003` eq. D.1),
 *
 * and composition adds independent losses (`003` Thm. D.2). A model gives its atoms (loss values
 * with positive probability) and, for a grid of loss values, the P-mass and the Q-mass of the
 * continuous rest of the loss in each cell: the Q-mass is E_P[e^{-L}; cell], which is all the
 * connect-the-dots discretisation needs (see `../discretize.ts`).
 */

export interface CellMasses {
  /** P(L in cell) for the cells (-inf, e_0], (e_0, e_1], ..., (e_{n-1}, inf), atoms excluded. */
  readonly p: Float64Array;
  /** Q(L in cell) = E_P[e^{-L}; L in cell] for the same cells, atoms excluded. */
  readonly q: Float64Array;
}

/** A finite loss value taken with positive probability. */
export interface LossAtom {
  readonly loss: number;
  /** Its P-probability (its Q-probability is mass * e^{-loss}). */
  readonly mass: number;
}

export interface PrivacyLossModel {
  /** What the model is, for messages (e.g. "Gaussian(z = 1.1)"). */
  readonly description: string;
  /** P(L = +infinity): the probability of an output impossible under Q. */
  readonly infinityMass: number;
  /** The finite loss values that carry probability, heaviest first (the grid is aligned to them when it can). */
  readonly atoms: readonly LossAtom[];
  /** Bounds of the finite losses (+-Infinity when unbounded). */
  readonly lossMin: number;
  readonly lossMax: number;
  /** P- and Q-masses of the continuous part in the cells delimited by the increasing `edges`. */
  cellMasses(edges: Float64Array): CellMasses;
}

/** P(L <= s) and P(s < L < infinity) of a model (atoms included). */
export function lossTails(model: PrivacyLossModel, s: number): { below: number; above: number } {
  const { p } = model.cellMasses(Float64Array.of(s));
  let below = p[0];
  let above = p[1];
  for (const a of model.atoms) {
    if (a.loss <= s) below += a.mass;
    else above += a.mass;
  }
  return { below, above };
}

/** Sorts atoms heaviest first and merges equal losses. */
export function normalizeAtoms(atoms: readonly LossAtom[]): LossAtom[] {
  const byLoss = new Map<number, number>();
  for (const a of atoms) if (a.mass > 0 && Number.isFinite(a.loss)) byLoss.set(a.loss, (byLoss.get(a.loss) ?? 0) + a.mass);
  return [...byLoss.entries()].map(([loss, mass]) => ({ loss, mass })).sort((x, y) => y.mass - x.mass);
}
