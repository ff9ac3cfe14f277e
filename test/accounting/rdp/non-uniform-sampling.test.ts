import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import * as E from '../../../src/accounting/events/constructors.js';
import type { DpEvent } from '../../../src/accounting/events/types.js';
import { neighboringRelationOf } from '../../../src/accounting/neighboring.js';
import { PldAccountant } from '../../../src/accounting/pld/accountant.js';
import { pureEpsilon } from '../../../src/accounting/pure-dp.js';
import { RdpAccountant, rdpEpsilon } from '../../../src/accounting/rdp/accountant.js';
import { gaussianRdp } from '../../../src/accounting/rdp/base-mechanisms.js';
import { rdpCurveOf, rdpOfEvent } from '../../../src/accounting/rdp/event-rdp.js';
import { nonUniformSampledGaussianRdpCurve, nonUniformSampledRdp } from '../../../src/accounting/rdp/subsampling/non-uniform-sampling.js';
import { DEFAULT_ORDERS } from '../../../src/accounting/rdp/orders.js';
import { totalVariation } from '../../../src/accounting/total-variation.js';
import { InvalidParameterError, UnsupportedEventError } from '../../../src/errors.js';
import { assertClose } from '../../helpers/assert-close.js';
import { gaussianCurve, laplaceCurve, mechanismCurve } from '../../helpers/base-rdp-curves.js';

const gaussian = gaussianCurve;
const laplace = laplaceCurve;
const mechanism = mechanismCurve;

/*
 * References: an independent mpmath 1.3 evaluation (mp.dps = 60; binomial, exp, log, expm1 on
 * mpf) of `004` Thm. 4.2 with the sum from j = 3 and WBK 2019 Thm. 9's refinements, gamma -> c:
 *   s = 1 + c^2 C(a,2) min(4 (e^e(2) - 1), e^e(2) min(2, (e^e(inf) - 1)^2))
 *         + sum_{j=3}^{a} c^j C(a,j) e^((j-1) e(j)) min(2, (e^e(inf) - 1)^j);  min(log(s) / (a - 1), e(a)),
 * a fractional order a by ((f + 1 - a)(f - 1) U(f) + (a - f) f U(f + 1)) / (a - 1), f = floor(a),
 * min'ed with e(a). Rows: [mechanism, parameter, c, order, rdp].
 */
const MPMATH_THM_4_2: [string, number, number, number, number][] = [
  ['gauss', 1.0, 0.002, 2, 0.000021746018181305072735],
  ['gauss', 1.0, 0.002, 3, 0.00003277899175111358055],
  ['gauss', 1.0, 0.002, 8, 0.000089670358773738823011],
  ['gauss', 1.0, 0.002, 64, 25.697749664786344049],
  ['gauss', 1.0, 0.002, 1024, 505.77999457907745418],
  ['gauss', 1.0, 0.002, 4.5, 0.000050355008668625304111],
  ['gauss', 1.0, 0.05, 2, 0.01349987439918917536],
  ['gauss', 1.0, 0.05, 3, 0.022388973302410297475],
  ['gauss', 1.0, 0.05, 8, 0.70088057692617878258],
  ['gauss', 1.0, 0.05, 64, 28.967718756715944846],
  ['gauss', 1.0, 0.05, 1024, 509.00201691012832182],
  ['gauss', 1.0, 0.05, 4.5, 0.043484476154008087371],
  ['gauss', 1.0, 0.3, 2, 0.39829998590046739703],
  ['gauss', 1.0, 0.3, 3, 0.63382454928542101438],
  ['gauss', 1.0, 0.3, 8, 2.7265872130085443887],
  ['gauss', 1.0, 0.3, 64, 30.787918852439683165],
  ['gauss', 1.0, 0.3, 1024, 510.79552785488836896],
  ['gauss', 1.0, 0.3, 4.5, 1.1068745888659694191],
  ['gauss', 3.0, 0.002, 2, 1.8803033320984001241e-6],
  ['gauss', 3.0, 0.002, 3, 2.8316145311494273626e-6],
  ['gauss', 3.0, 0.002, 8, 7.700276089205619386e-6],
  ['gauss', 3.0, 0.002, 64, 0.000075410741617616497808],
  ['gauss', 3.0, 0.002, 1024, 50.668883467966343065],
  ['gauss', 3.0, 0.002, 4.5, 4.342518183447090423e-6],
  ['gauss', 3.0, 0.05, 2, 0.001174500691374448186],
  ['gauss', 3.0, 0.05, 3, 0.001933494360375845977],
  ['gauss', 3.0, 0.05, 8, 0.0075483430436968301152],
  ['gauss', 3.0, 0.05, 64, 0.54303880340525836515],
  ['gauss', 3.0, 0.05, 1024, 53.890905799017210712],
  ['gauss', 3.0, 0.05, 4.5, 0.0033833078495374956629],
  ['gauss', 3.0, 0.3, 2, 0.041436395894258111991],
  ['gauss', 3.0, 0.3, 3, 0.092111401305025584331],
  ['gauss', 3.0, 0.3, 8, 0.32452424192603693894],
  ['gauss', 3.0, 0.3, 64, 2.3465929291102346261],
  ['gauss', 3.0, 0.3, 1024, 55.684416743777257854],
  ['gauss', 3.0, 0.3, 4.5, 0.18797659287675746336],
  ['laplace', 2.0, 0.002, 2, 2.0566798716810101557e-6],
  ['laplace', 2.0, 0.002, 3, 3.0868919834573185223e-6],
  ['laplace', 2.0, 0.002, 8, 8.2566201946292485677e-6],
  ['laplace', 2.0, 0.002, 64, 0.000068228377423247822004],
  ['laplace', 2.0, 0.002, 1024, 0.0011665066136929577857],
  ['laplace', 2.0, 0.002, 4.5, 4.7084666635374343496e-6],
  ['laplace', 2.0, 0.05, 2, 0.001284600788640872117],
  ['laplace', 2.0, 0.05, 3, 0.0019536696302371276233],
  ['laplace', 2.0, 0.05, 8, 0.0055330025381266235212],
  ['laplace', 2.0, 0.05, 64, 0.036531636597245956058],
  ['laplace', 2.0, 0.05, 1024, 0.05099133198453100015],
  ['laplace', 2.0, 0.05, 4.5, 0.0030407223007469562381],
  ['laplace', 2.0, 0.3, 2, 0.045236566852723415538],
  ['laplace', 2.0, 0.3, 3, 0.070535380940383367897],
  ['laplace', 2.0, 0.3, 8, 0.17247968273510087929],
  ['laplace', 2.0, 0.3, 64, 0.2643176156898534955],
  ['laplace', 2.0, 0.3, 1024, 0.27739690648886441799],
  ['laplace', 2.0, 0.3, 4.5, 0.10895711737472964316],
];

/*
 * `004` Thm. 4.2 AS PRINTED (sum from j = 1, no min with the base curve), same mpmath evaluation:
 *   s = 1 + 4 c^2 C(a,2) (e^e(2) - 1) + 2 sum_{j=1}^{a} c^j C(a,j) e^((j-1) e(j));  log(s) / (a - 1).
 * The j = 1 term 2 c a dominates at small orders: 370x dpfit's value at c = 0.002, order 2.
 */
const MPMATH_PRINTED: [string, number, number, number, number][] = [
  ['gauss', 1.0, 0.002, 2, 0.0080170164361958232747],
  ['gauss', 1.0, 0.002, 3, 0.006037421220014827065],
  ['gauss', 1.0, 0.002, 8, 0.0046931559526897569468],
  ['gauss', 1.0, 0.002, 64, 25.697749664786344049],
  ['gauss', 1.0, 0.05, 2, 0.20764342455434822506],
  ['gauss', 1.0, 0.05, 3, 0.16728666975388166359],
  ['gauss', 1.0, 0.05, 8, 0.70222867247600126615],
  ['gauss', 1.0, 0.05, 64, 28.967718756715944846],
  ['gauss', 1.0, 0.3, 2, 1.1963051389808658666],
  ['gauss', 1.0, 0.3, 3, 0.98761209978307601836],
  ['gauss', 1.0, 0.3, 8, 2.7265872292528108333],
  ['gauss', 1.0, 0.3, 64, 30.787918852439683165],
  ['gauss', 3.0, 0.002, 2, 0.0079789041725634617551],
  ['gauss', 3.0, 0.002, 3, 0.0059803344353147527842],
  ['gauss', 3.0, 0.002, 8, 0.0045419168367329797287],
  ['gauss', 3.0, 0.002, 64, 0.0039033463641920635644],
  ['gauss', 3.0, 0.05, 2, 0.18794139092899907486],
  ['gauss', 3.0, 0.05, 3, 0.13905719686834168934],
  ['gauss', 3.0, 0.05, 8, 0.099784122200914626964],
  ['gauss', 3.0, 0.05, 64, 0.54303880340525875412],
  ['gauss', 3.0, 0.3, 2, 0.89341518923126434814],
  ['gauss', 3.0, 0.3, 3, 0.64126405951012529531],
  ['gauss', 3.0, 0.3, 8, 0.42887221768994339519],
  ['gauss', 3.0, 0.3, 64, 2.3465929291102346261],
  ['laplace', 2.0, 0.002, 2, 0.0079813864029667199327],
  ['laplace', 2.0, 0.002, 3, 0.0059840455417352106884],
  ['laplace', 2.0, 0.002, 8, 0.0045516522377951431353],
  ['laplace', 2.0, 0.002, 64, 0.0039686862899974259724],
  ['laplace', 2.0, 0.05, 2, 0.18923643541299999968],
  ['laplace', 2.0, 0.05, 3, 0.14086087939590017397],
  ['laplace', 2.0, 0.05, 8, 0.1032208731773644193],
  ['laplace', 2.0, 0.05, 64, 0.076026248115712607288],
  ['laplace', 2.0, 0.3, 2, 0.9161939099322243916],
  ['laplace', 2.0, 0.3, 3, 0.66646865528510498626],
  ['laplace', 2.0, 0.3, 8, 0.45284010332486450893],
  ['laplace', 2.0, 0.3, 64, 0.40070476873168400607],
];

test('004 Thm. 4.2 (sum from j = 3, WBK refinements): matches its mpmath evaluation to 1e-10, never below', () => {
  for (const [name, param, c, order, expected] of MPMATH_THM_4_2) {
    const rdp = nonUniformSampledRdp(c, mechanism(name, param), order);
    assertClose(rdp, expected, 1e-10, 0, `${name}(${param}) c=${c} order=${order}`);
    assert.ok(rdp >= expected * (1 - 1e-15), `${name}(${param}) c=${c} order=${order}: below the reference`);
  }
});

test("never above the thesis' printed bound (sum from j = 1), and far below it at small orders", () => {
  for (const [name, param, c, order, printed] of MPMATH_PRINTED) {
    const inner = name === 'gauss' ? E.gaussianEvent(param) : E.laplaceEvent(param);
    const general = nonUniformSampledRdp(c, mechanism(name, param), order);
    const accounted = rdpOfEvent(E.nonUniformSampledEvent(c, inner), [order])[0];
    assert.ok(general <= printed * (1 + 1e-12), `${name}(${param}) c=${c} order=${order}: ${general} > printed ${printed}`);
    assert.ok(accounted <= printed * (1 + 1e-12), `${name}(${param}) c=${c} order=${order}: the event's ${accounted} > printed ${printed}`);
  }
  // The printed j = 1 term (2 c alpha) costs a factor 368 at c = 0.002, order 2, z = 1.
  const ratio = 0.0080170164361958232747 / nonUniformSampledRdp(0.002, gaussian(1), 2);
  assert.ok(ratio > 368 && ratio < 369, String(ratio));
});

/*
 * At c = 1/n the weights can be uniform: one record of n sampled without replacement. References:
 * dp_accounting (google/differential-privacy @ b5b0286e313b64a692abfc8c528d54ef47d960a0,
 * python/dp_accounting, absl.logging shimmed), run on this machine:
 *   acc = RdpAccountant(orders=[a], neighboring_relation=NeighborRel.REPLACE_ONE)
 *   acc.compose(SampledWithoutReplacementDpEvent(n, 1, GaussianDpEvent(z)));  acc._rdp[0]
 * Its `_compute_rdp_sample_wor_gaussian_int` is WBK Thm. 27 for orders <= 256 and WBK Thm. 9
 * (eps(inf) = inf) above. Rows: [n, z, order, rdp].
 */
const DP_ACCOUNTING_ONE_OF_N: [number, number, number, number][] = [
  [100, 1.0, 2, 0.0005435086381094331],
  [100, 1.0, 3, 0.0008348726849544131],
  [100, 1.0, 8, 0.002684165012688936],
  [100, 1.0, 32, 11.26863552351778],
  [100, 1.0, 256, 123.37948854732396],
  [100, 1.0, 300, 145.38174612503053],
  [100, 1.0, 512, 251.38717419169208],
  [100, 1.0, 1024, 507.39100574460286],
  [1000, 2.0, 2, 1.1361010213879566e-6],
  [1000, 2.0, 3, 1.7050526659660789e-6],
  [1000, 2.0, 8, 4.558811888485881e-6],
  [1000, 2.0, 32, 1.846472063774705e-5],
  [1000, 2.0, 256, 25.06787370886719],
  [1000, 2.0, 300, 30.571460078548224],
  [1000, 2.0, 512, 57.08008306133406],
  [1000, 2.0, 1024, 121.08616983529116],
  [50, 0.8, 2, 0.0038093218574844208],
  [50, 0.8, 3, 0.006550434723681689],
  [50, 0.8, 8, 1.879165915575404],
  [50, 0.8, 32, 20.98414229054384],
  [50, 0.8, 256, 196.07535395212136],
  [50, 0.8, 300, 230.45221152358562],
  [50, 0.8, 512, 396.0816778246602],
  [50, 0.8, 1024, 796.0848304883891],
];
/* The same, get_epsilon(delta) of SelfComposedDpEvent(..., T) at dp_accounting's default orders. Rows: [n, z, T, delta, epsilon]. */
const DP_ACCOUNTING_ONE_OF_N_EPSILON: [number, number, number, number, number][] = [
  [100, 1.0, 100, 1e-5, 1.482525669114427],
  [1000, 2.0, 1000, 1e-6, 0.19823516162783802],
  [50, 0.8, 20, 1e-5, 2.7902229349043792],
  [1000, 1.0, 1000, 1e-5, 0.7033246750676585], // the README's example at c = 1/n (dpfit: 0.6819)
];

/** The default grid to order 128 and Infinity (orders up to 1024 cost ~0.8 s per Gaussian curve). */
const GRID_TO_128 = DEFAULT_ORDERS.filter((order) => order <= 128 || order === Infinity);

test('at c = 1/n: WBK Thm. 9 as dp_accounting computes it, never above its Thm. 27, and the same release as one of n without replacement', () => {
  const curves = new Map<string, (order: number) => number>();
  for (const [n, z, order, reference] of DP_ACCOUNTING_ONE_OF_N) {
    const general = nonUniformSampledRdp(1 / n, gaussian(z), order);
    // Order 2 (only the j = 2 term, the same in both theorems) and orders > 256 (Thm. 9): equal.
    if (order === 2 || order > 256) assertClose(general, reference, 1e-12, 0, `n=${n} z=${z} order=${order}`);
    if (!curves.has(`${n},${z}`)) curves.set(`${n},${z}`, rdpCurveOf(E.nonUniformSampledEvent(1 / n, E.gaussianEvent(z))));
    const accounted = curves.get(`${n},${z}`)!(order);
    assert.ok(accounted <= reference * (1 + 1e-12), `n=${n} z=${z} order=${order}: ${accounted} > dp_accounting ${reference}`);
  }
  for (const [n, z, steps, delta, reference] of DP_ACCOUNTING_ONE_OF_N_EPSILON) {
    const { epsilon } = rdpEpsilon(E.selfComposeEvent(E.nonUniformSampledEvent(1 / n, E.gaussianEvent(z)), steps), delta);
    assert.ok(epsilon <= reference * (1 + 1e-9), `n=${n} z=${z}: ${epsilon} > dp_accounting ${reference}`);
  }
  const inners: DpEvent[] = [E.gaussianEvent(1.3), E.gaussianEvent(2, { discrete: true, gridNoiseStd: 1024 }), E.gaussianEvent(2, { discrete: true }), E.laplaceEvent(0.7), E.randomizedResponseEvent(0.4, 3)];
  for (const inner of inners) {
    for (const n of [2, 37, 1000]) {
      const nonUniform = rdpOfEvent(E.nonUniformSampledEvent(1 / n, inner), GRID_TO_128);
      const withoutReplacement = rdpOfEvent(E.sampledWithoutReplacementEvent(n, 1, inner), GRID_TO_128);
      assert.deepEqual(nonUniform, withoutReplacement, `${inner.kind} n=${n}`);
    }
  }
});

/**
 * D_alpha(P || Q) for P, Q two mixtures of randomized responses RR(p, k) on records valued in
 * {0..k-1} with the same weights w: the exact RDP of ONE pair of replace-one neighbours, a LOWER
 * bound on the mechanism's RDP.
 */
function mixedRandomizedResponseRenyi(weights: number[], values: number[], replaced: number, p: number, k: number, alpha: number): number {
  const law = (vals: number[]) =>
    Array.from({ length: k }, (_, o) => weights.reduce((sum, w, r) => sum + w * (p / k + (vals[r] === o ? 1 - p : 0)), 0));
  const P = law(values);
  const Q = law(values.map((v, r) => (r === 0 ? replaced : v)));
  return Math.log(P.reduce((sum, pv, o) => sum + pv ** alpha * Q[o] ** (1 - alpha), 0)) / (alpha - 1);
}

/** The same for a 1-D Gaussian mechanism (noise z, records at positions in [0, 1]), by the trapezoidal rule. */
function mixedGaussianRenyi(weights: number[], means: number[], replaced: number, z: number, alpha: number): number {
  const lo = -12 * z - 2;
  const hi = 12 * z + 3;
  const steps = 20000;
  const h = (hi - lo) / steps;
  // log of the mixture density (without 1/(z sqrt(2 pi))), shifted by the nearest component so it never underflows.
  const logDensity = (mus: number[], x: number) => {
    const exps = mus.map((mu) => -((x - mu) ** 2) / (2 * z * z));
    const top = Math.max(...exps);
    return top + Math.log(weights.reduce((s, w, r) => s + w * Math.exp(exps[r] - top), 0));
  };
  const other = means.map((m, r) => (r === 0 ? replaced : m));
  const logs: number[] = [];
  for (let i = 0; i <= steps; i++) {
    const x = lo + i * h;
    logs.push(alpha * logDensity(means, x) + (1 - alpha) * logDensity(other, x) + (i === 0 || i === steps ? -Math.LN2 : 0));
  }
  const top = Math.max(...logs);
  const logIntegral = top + Math.log(logs.reduce((s, v) => s + Math.exp(v - top), 0)) + Math.log(h / (z * Math.sqrt(2 * Math.PI)));
  return logIntegral / (alpha - 1);
}

test('soundness: the exact RDP of real neighbouring pairs (public weights <= c) never exceeds the bound', () => {
  const orders = [1.5, 2, 3, 5, 8, 16];
  // Randomized response: exact sums over its k outputs, random weights, values and replacement.
  fc.assert(
    fc.property(
      fc.array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: 2, maxLength: 6 }),
      fc.integer({ min: 2, max: 4 }),
      fc.double({ min: 0.05, max: 0.95, noNaN: true }),
      fc.array(fc.nat(), { minLength: 7, maxLength: 7 }),
      (raw, k, p, picks) => {
        const total = raw.reduce((s, v) => s + v, 0);
        const weights = raw.map((v) => v / total);
        const c = Math.max(...weights);
        if (!(c < 1)) return;
        const values = weights.map((_, r) => picks[r] % k);
        const replaced = (values[0] + 1 + (picks[6] % (k - 1))) % k;
        const bound = rdpOfEvent(E.nonUniformSampledEvent(c, E.randomizedResponseEvent(p, k)), orders);
        orders.forEach((alpha, i) => {
          for (const [a, b] of [[values, replaced], [values.map((v, r) => (r === 0 ? replaced : v)), values[0]]] as const) {
            const exact = mixedRandomizedResponseRenyi(weights, [...a], b, p, k, alpha);
            assert.ok(exact <= bound[i] * (1 + 1e-9) + 1e-15, `w=${weights} p=${p} k=${k} alpha=${alpha}: exact ${exact} > bound ${bound[i]}`);
          }
        });
      },
    ),
    { seed: 41, numRuns: 150 },
  );
  // Gaussian (the Gaussian-specific ternary moments): the replaced record at the far end, others spread.
  for (const z of [0.7, 1.5]) {
    for (const [weights, means] of [
      [[0.5, 0.5], [1, 0]],
      [[0.3, 0.3, 0.4], [1, 0, 0]],
      [[0.2, 0.1, 0.7], [1, 1, 0.5]],
      [[0.1, 0.45, 0.45], [0, 1, 0]],
    ] as const) {
      const c = Math.max(...weights);
      const bound = rdpOfEvent(E.nonUniformSampledEvent(c, E.gaussianEvent(z)), orders);
      orders.forEach((alpha, i) => {
        const exact = mixedGaussianRenyi([...weights], [...means], 1 - means[0], z, alpha);
        assert.ok(exact <= bound[i], `z=${z} w=${weights} alpha=${alpha}: exact ${exact} > bound ${bound[i]}`);
      });
    }
  }
});

const innerEvent: fc.Arbitrary<DpEvent> = fc.oneof(
  fc.double({ min: 0.3, max: 20, noNaN: true }).map((z) => E.gaussianEvent(z)),
  fc.double({ min: 0.2, max: 10, noNaN: true }).map((b) => E.laplaceEvent(b)),
  fc.tuple(fc.double({ min: 0.05, max: 0.95, noNaN: true }), fc.integer({ min: 2, max: 5 })).map(([p, k]) => E.randomizedResponseEvent(p, k)),
);
const weight = fc.double({ min: 1e-6, max: 0.999, noNaN: true });
const ORDER_SAMPLE = [1.25, 2, 3, 4.5, 8, 16, 32, 128, Infinity];

test('properties: >= 0, never above the inner curve, nondecreasing in c, additive under composition', () => {
  fc.assert(
    fc.property(innerEvent, weight, weight, fc.integer({ min: 1, max: 50 }), (inner, c1, c2, count) => {
      const [lo, hi] = c1 <= c2 ? [c1, c2] : [c2, c1];
      const base = rdpOfEvent(inner, ORDER_SAMPLE);
      const small = rdpOfEvent(E.nonUniformSampledEvent(lo, inner), ORDER_SAMPLE);
      const large = rdpOfEvent(E.nonUniformSampledEvent(hi, inner), ORDER_SAMPLE);
      const composed = rdpOfEvent(E.selfComposeEvent(E.nonUniformSampledEvent(lo, inner), count), ORDER_SAMPLE);
      const pair = rdpOfEvent(E.composeEvent([E.nonUniformSampledEvent(lo, inner), E.nonUniformSampledEvent(hi, inner)]), ORDER_SAMPLE);
      ORDER_SAMPLE.forEach((order, i) => {
        const at = `${JSON.stringify(inner)} c=${lo},${hi} order=${order}`;
        assert.ok(small[i] >= 0 && !Number.isNaN(small[i]), at);
        assert.ok(small[i] <= base[i], `${at}: above the inner curve`);
        assert.ok(small[i] <= large[i], `${at}: not monotone in c (${small[i]} > ${large[i]})`);
        assertClose(composed[i], count * small[i], 1e-12, 0, `${at}: selfCompose`);
        assertClose(pair[i], small[i] + large[i], 1e-12, 0, `${at}: compose`);
      });
    }),
    { seed: 20240604, numRuns: 50 },
  );
});

test('c -> 1 gives the inner curve (a deterministic choice), c -> 0 gives 0; large orders stay finite', () => {
  for (const inner of [E.gaussianEvent(1), E.laplaceEvent(2)]) {
    const near1 = rdpOfEvent(E.nonUniformSampledEvent(1 - 1e-9, inner), ORDER_SAMPLE);
    const base = rdpOfEvent(inner, ORDER_SAMPLE);
    ORDER_SAMPLE.forEach((order, i) => assertClose(near1[i], base[i], 1e-9, 0, `${inner.kind} order ${order}`));
    const tiny = rdpOfEvent(E.nonUniformSampledEvent(1e-300, inner), [2, 32, 1024]);
    for (const v of tiny) assert.ok(v >= 0 && v < 1e-290, String(v));
  }
  // Order 1024 at c = 1e-6: log-space terms, positive and far below the base 512.
  const v = nonUniformSampledRdp(1e-6, gaussian(1), 1024);
  assert.ok(Number.isFinite(v) && v > 0 && v < 512, String(v));
  assert.ok(nonUniformSampledGaussianRdpCurve(1e-6, 1)(1024) <= v);
});

test('pure DP log(1 + c (e^eps - 1)) and total variation c TV, against exact randomized response', () => {
  // Binary randomized response with p = 0.5 (eps = log 3), weights (0.3, 0.3, 0.4): record 1 moves
  // from 0 to 1, the others are 0 and 1. Exact: P = (0.3 (0.75) + 0.3 (0.75) + 0.4 (0.25), ...).
  const weights = [0.3, 0.3, 0.4];
  const law = (vals: number[]) => [0, 1].map((o) => weights.reduce((s, w, r) => s + w * (0.25 + (vals[r] === o ? 0.5 : 0)), 0));
  const P = law([0, 0, 1]);
  const Q = law([1, 0, 1]);
  const exactEps = Math.max(...P.map((pv, o) => Math.abs(Math.log(pv / Q[o]))));
  const exactTv = Math.abs(P[0] - Q[0]);
  const event = E.nonUniformSampledEvent(0.4, E.randomizedResponseEvent(0.5, 2));
  const eps = pureEpsilon(event);
  assertClose(eps, Math.log1p(0.4 * 2), 1e-14); // rounded up by a few ulps
  assert.ok(eps >= Math.log1p(0.4 * 2));
  assert.ok(exactEps <= eps, `${exactEps} > ${eps}`);
  assertClose(totalVariation(event), 0.4 * 0.5, 1e-14);
  assert.ok(exactTv <= totalVariation(event));
  assert.equal(pureEpsilon(E.nonUniformSampledEvent(0.1, E.gaussianEvent(1))), Infinity);
});

test('refusals: c outside (0, 1), add/remove inner events, the PLD accountant, inner curves undefined at integer orders', () => {
  for (const c of [0, 1, -0.1, 1.5, NaN]) {
    assert.throws(() => E.nonUniformSampledEvent(c, E.gaussianEvent(1)), (e: unknown) => e instanceof InvalidParameterError && e.param === 'maxWeight' && /0 < c < 1/.test(e.message));
    assert.throws(() => nonUniformSampledRdp(c, gaussian(1), 2), (e: unknown) => e instanceof InvalidParameterError && e.param === 'maxWeight');
  }
  // Thm. 4.2 is proven for replace-one neighbours: an add/remove-one inner event, or a composition with one, is refused.
  const addRemove = E.poissonSampledEvent(0.1, E.gaussianEvent(1));
  const sampled = E.nonUniformSampledEvent(0.01, E.gaussianEvent(1));
  assert.equal(neighboringRelationOf(sampled), 'replaceOne');
  assert.throws(() => neighboringRelationOf(E.nonUniformSampledEvent(0.01, addRemove)), (e: unknown) => e instanceof UnsupportedEventError && /replace-one neighbours only/.test(e.message));
  const accountant = new RdpAccountant().compose(sampled, 10);
  const before = accountant.getEpsilon(1e-5).epsilon;
  assert.throws(() => accountant.compose(addRemove), UnsupportedEventError);
  assert.throws(() => accountant.compose(E.nonUniformSampledEvent(0.01, addRemove)), UnsupportedEventError);
  assert.equal(accountant.getEpsilon(1e-5).epsilon, before, 'a refused event leaves the accountant as it was');
  // PLD: no dominating pair; it says so and names the RDP accountant.
  const pld = new PldAccountant();
  assert.equal(pld.supports(sampled), false);
  assert.throws(() => pld.compose(E.selfComposeEvent(sampled, 3)), (e: unknown) => e instanceof UnsupportedEventError && /004 Thm\. 4\.2/.test(e.message) && /RDP accountant/.test(e.message));
  // The theorem needs eps at integer orders: a curve undefined there (NaN) is refused by name.
  const fractionalOnly = (order: number) => (Number.isInteger(order) ? NaN : order / 2);
  assert.throws(() => nonUniformSampledRdp(0.01, fractionalOnly, 2.5), (e: unknown) => e instanceof InvalidParameterError && /^baseRdp\(/.test(e.param));
  // A conjecture inside stays a conjecture (the event is walked like the other samplings).
  const conjecture = E.nonUniformSampledEvent(0.01, E.shuffledSgdConjectureEvent({ datasetSize: 100, noiseMultiplier: 3, epochs: 1, fraction: 0.5 }));
  assert.throws(() => rdpEpsilon(conjecture, 1e-5), UnsupportedEventError);
  assert.equal(rdpEpsilon(conjecture, 1e-5, { allowConjecture: true }).guarantee, 'conjecture');
  assert.ok(Number.isFinite(rdpCurveOf(sampled)(7)));
});
