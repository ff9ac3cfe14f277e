/**
 * Internal: the tables of the Ziggurat method for the standard normal (used by `continuous.ts`).
 */

// ---------------------------------------------------------------------------------------------
// Ziggurat tables for the half-normal density f(x) = exp(-x^2 / 2), x >= 0
// (G. Marsaglia, W. W. Tsang, "The Ziggurat Method for Generating Random Variables",
// J. Stat. Softw. 5(8), 2000). The area under f is cut into LAYERS regions of equal area V:
// a base strip [0, R] x [0, f(R)] plus the tail x > R, and LAYERS - 1 rectangles stacked on it.
// Boundaries: X[0] = V / f(R) (the width the base strip would have as a rectangle), X[1] = R,
// X[i+1] = f^-1(f(X[i]) + V / X[i]), X[LAYERS] = 0. The sign is drawn separately.
// ---------------------------------------------------------------------------------------------

export const LAYERS = 256;
/** The tail start R for 256 layers (Marsaglia and Tsang 2000). */
export const ZIGGURAT_R = 3.6541528853610088;

/**
 * Mills ratio of the unnormalised Gaussian, integral_x^inf exp(-t^2/2) dt / exp(-x^2/2), by
 * Laplace's continued fraction 1/(x + 1/(x + 2/(x + 3/(x + ...)))) evaluated bottom-up; 400 levels
 * give full double precision for x > 3.
 */
function millsRatio(x: number): number {
  let acc = x;
  for (let k = 400; k >= 1; k--) acc = x + k / acc;
  return 1 / acc;
}

/** Layer boundaries X[0..256], the density at them F[i] = f(X[i]) (F[0] unused), the layer area V. */
export const { ZIG_X, ZIG_F, ZIG_V } = buildZiggurat();

function buildZiggurat(): { ZIG_X: Float64Array; ZIG_F: Float64Array; ZIG_V: number } {
  const f = (x: number): number => Math.exp(-0.5 * x * x);
  const fR = f(ZIGGURAT_R);
  const v = fR * (ZIGGURAT_R + millsRatio(ZIGGURAT_R));
  const x = new Float64Array(LAYERS + 1);
  const fx = new Float64Array(LAYERS + 1);
  x[0] = v / fR;
  x[1] = ZIGGURAT_R;
  for (let i = 1; i < LAYERS - 1; i++) x[i + 1] = Math.sqrt(-2 * Math.log(v / x[i] + f(x[i])));
  x[LAYERS] = 0;
  for (let i = 0; i <= LAYERS; i++) fx[i] = f(x[i]);
  fx[0] = 0; // the base strip's lower edge; unused by the wedge test, which never runs for i = 0
  return { ZIG_X: x, ZIG_F: fx, ZIG_V: v };
}

/**
 * Internal check for tests: the top layer [0, X[255]] x [f(X[255]), 1] must have area V, up to
 * the rounding of R. Returns the relative mismatch.
 */
export function zigguratTopLayerMismatch(): number {
  const top = ZIG_X[LAYERS - 1] * (1 - ZIG_F[LAYERS - 1]);
  return Math.abs(top - ZIG_V) / ZIG_V;
}
