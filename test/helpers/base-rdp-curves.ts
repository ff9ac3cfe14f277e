/** RDP curves of the base mechanisms that the subsampling tests amplify (references in closed form). */

/** Gaussian mechanism, L2 sensitivity 1: alpha / (2 z^2), Infinity at alpha = Infinity. */
export const gaussianCurve = (z: number) => (order: number) => order / (2 * z * z);

/** Laplace mechanism, scale b, L1 sensitivity 1 (Mironov 2017, Prop. 6); pure DP: eps(Infinity) = 1/b. */
export const laplaceCurve = (b: number) => (order: number) =>
  order === Infinity
    ? 1 / b
    : Math.log((order / (2 * order - 1)) * Math.exp((order - 1) / b) + ((order - 1) / (2 * order - 1)) * Math.exp(-order / b)) / (order - 1);

/** The curve named in a reference table row: 'gauss' (parameter z) or 'laplace' (parameter b). */
export const mechanismCurve = (name: string, param: number) => (name === 'gauss' ? gaussianCurve(param) : laplaceCurve(param));
