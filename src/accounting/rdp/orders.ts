/**
 * The default grid of Rényi orders: fine fractional orders near 1 (they matter at large sampling
 * rates — ACCOUNTING-NOTES: for q = 0.256 a grid without 1.5 loses 15 % of epsilon), steps of
 * 0.25 to 10, 0.5 to 20, 1 to 64, then a coarse tail to 1024 for tiny deltas and pure-DP-like
 * mechanisms, and Infinity (pure DP). The accountant refines the best order continuously.
 */
function range(start: number, stop: number, step: number): number[] {
  const out: number[] = [];
  for (let i = 0; start + i * step <= stop + 1e-9; i++) out.push(Number((start + i * step).toFixed(10)));
  return out;
}

export const DEFAULT_ORDERS: readonly number[] = Object.freeze([
  1.01,
  1.02,
  1.05,
  1.1,
  1.15,
  ...range(1.25, 10, 0.25),
  ...range(10.5, 20, 0.5),
  ...range(21, 64, 1),
  72,
  80,
  96,
  112,
  128,
  160,
  192,
  256,
  384,
  512,
  768,
  1024,
  // D_infinity is pure DP: it lets pure-DP mechanisms (Laplace, randomized response) keep their
  // pure epsilon instead of a conversion from a finite order.
  Infinity,
]);

/** Merges caller-chosen orders into a sorted grid without duplicates; every order must be > 1. */
export function mergeOrders(base: readonly number[], extra: readonly number[] = []): number[] {
  return [...new Set([...base, ...extra])].sort((a, b) => a - b);
}
