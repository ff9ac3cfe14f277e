/**
 * delta(epsilon) and its inverse on a discrete PLD (`src/accounting/pld/queries.ts`): against the
 * definition evaluated at 60 digits, on the safe side of it, and independent of earlier queries
 * (the downward scan is kept per PLD).
 *
 * REFERENCE: delta(epsilon) = P(inf) + sum_{s_i > epsilon} safe_i e^{logScale - tilt s_i}
 * (1 - e^{epsilon - s_i}) (+ belowWindowMass below the grid for a pessimistic PLD, - truncationMass
 * for an optimistic one; safe_i = max(m_i, 0) + errorPerBin, resp. m_i - errorPerBin), computed
 * once by mpmath at 60 digits (python3, mpmath 1.3.0) on the PLDs `cases()` makes, whose numbers are
 * all short dyadic fractions (the same doubles in any language).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deltaForEpsilon, epsilonForDelta } from '../../../src/accounting/pld/queries.js';
import { mulberry32 } from '../../helpers/mulberry32.js';

interface Case { pld: { valueDiscretization: number; minIndex: number; masses: Float64Array; tilt: number; logScale: number; infinityMass: number; truncationMass: number; errorPerBin: number; pessimistic: boolean; belowWindowMass: number }; epsilons: number[] }
/** PLDs whose every number is a short dyadic fraction (the same doubles in any language). */
function cases(): Case[] {
  const r = mulberry32(2906);
  const int = (n: number) => Math.floor(r() * n);
  const out: Case[] = [];
  for (let c = 0; c < 12; c++) {
    const pessimistic = c % 2 === 0;
    const n = [1, 7, 200, 3000][c % 4];
    const h = 2 ** -(3 + int(8));
    const minIndex = int(160) - 80 - Math.floor(n / 2);
    const tilt = [0, 0.5, 3][Math.floor(c / 4)];
    const logScale = tilt === 0 ? 0 : (int(64) - 32) / 4;
    const masses = new Float64Array(n);
    for (let j = 0; j < n; j++) masses[j] = (int(1 << 20) - (pessimistic ? 0 : 1 << 16)) * 2 ** -30;
    const pld = { valueDiscretization: h, minIndex, masses, tilt, logScale, infinityMass: int(1 << 10) * 2 ** -40, truncationMass: int(1 << 10) * 2 ** -44, errorPerBin: 2 ** -48, pessimistic, belowWindowMass: int(1 << 10) * 2 ** -46 };
    const lo = minIndex * h;
    const hi = (minIndex + n - 1) * h;
    const epsilons = [lo - 2 * h, lo, lo + 0.375 * h, (lo + hi) / 2, Math.floor((lo + hi) / 2 / h) * h + h / 8, hi - 0.25 * h, hi, hi + h].filter((e) => e >= 0);
    epsilons.push(0, h / 3, 1.5 * h);
    out.push({ pld, epsilons });
  }
  return out;
}

const REFERENCE: readonly (readonly number[])[] = [
  [3.2196112442761659622e-10, 3.2196112442761659622e-10, 3.2196112442761659622e-10],
  [0.00091748879108293843079, 0.00056869411379193063849, 0.00051868318509676177678, 0.00019441114502797122951, 0.00018154964123517939288, 5.3693697481220437443e-6, 2.0861534721916541457e-11, 2.0861534721916541457e-11, 0.002952571128480792131, 0.0029402661029729622076, 0.0028951224738110904322],
  [7.4404400040352790218e-7, 1.8735590856522321701e-10, 1.8735590856522321701e-10, 0.0048152642580163975869, 0.0047605194200153753248, 0.0045683804622329933784],
  [0.59866091744156908308, 0.59882398678541895181, 2.2022326296271657528e-8, 8.9175955508835613728e-10, 8.9175955508835613728e-10, 0.62513332497045814008, 0.62498868971092577423, 0.62448213011849456249],
  [4.0017766878008842468e-10, 4.0017766878008842468e-10, 4.0017766878008842468e-10, 4.0017766878008842468e-10, 4.2250760672750850323e-9, 4.0017766878008842468e-10, 4.0017766878008842468e-10, 1.5660419265633001123e-8, 1.0580112478199106877e-8, 4.0017766878008842468e-10],
  [5.4308202379615977407e-10, 5.4308202379615977407e-10, 5.4308202379615977407e-10],
  [8.1594338187803243664e-8, 8.1672624219208955765e-10, 8.1672624219208955765e-10, 0.00060426205564275751735, 0.00059802087595456589678, 0.00057640185644627316962],
  [0.000081975930431919391044, 0.000083612002815561158215, 5.0681592256296426058e-10, 5.0681592256296426058e-10, 5.0681592256296426058e-10, 0.0027825063946178333481, 0.0027151037605003716509, 0.0024702288517722861107],
  [0.0001851967194096282466, 6.8303052103146910667e-10, 6.8303052103146910667e-10, 6.8303052103146910667e-10, 6.8303052103146910667e-10, 0.000024435777835201529192, 6.8303052103146910667e-10, 6.8303052103146910667e-10, 0.00099628265345030916292, 0.00098407651231328391579, 0.00093929566170580609902],
  [1.7446005646633591582e-6, 1.0779217953679988367e-6, 9.7095037450339715866e-7, 2.8531220143659242086e-7, 2.6327113286067772501e-7, 0, 6.0907723309355787933e-10, 6.0907723309355787933e-10, 0.000013846168778321015545, 0.000013739086008376356432, 0.000013364021690218426376],
  [0.00021624582460023807379, 0.00021794997495610884073, 1.0524558028172534462e-9, 1.6007106751203536987e-10, 1.6007106751203536987e-10, 0.00037199992953904767061, 0.00037000596777882044229, 0.0003630346966097630556],
  [8.245706339948810637e-10, 8.245706339948810637e-10, 8.245706339948810637e-10, 8.7828551912852588932e-6, 8.631270736494177972e-6, 8.1202535128593660761e-6],
];

test('delta(epsilon) is on the safe side of the definition (60-digit references) and within 1e-11 of it, tilted or not, with negative entries', () => {
  cases().forEach(({ pld, epsilons }, i) => {
    epsilons.forEach((epsilon, k) => {
      const exact = REFERENCE[i][k];
      const delta = deltaForEpsilon(pld, epsilon);
      const label = `case ${i} (${pld.pessimistic ? 'pessimistic' : 'optimistic'}, ${pld.masses.length} points, tilt ${pld.tilt}) at epsilon ${epsilon}: ${delta} vs ${exact}`;
      assert.ok(pld.pessimistic ? delta >= exact : delta <= exact, label);
      assert.ok(Math.abs(delta - exact) <= 1e-11 * exact + 1e-300, label);
    });
  });
});

test('delta(epsilon) does not depend on the queries made before it on the same PLD (the scan kept)', () => {
  const fresh = (pld: Case['pld']) => ({ ...pld });
  for (const { pld, epsilons } of cases()) {
    const alone = epsilons.map((e) => deltaForEpsilon(fresh(pld), e));
    const shared = fresh(pld);
    // Every order: descending, ascending, then shuffled, each on the one PLD.
    const orders = [[...epsilons.keys()].reverse(), [...epsilons.keys()], [...epsilons.keys()].sort((a, b) => ((a * 7) % 5) - ((b * 7) % 5))];
    for (const order of orders) for (const k of order) assert.equal(deltaForEpsilon(shared, epsilons[k]), alone[k], `epsilon ${epsilons[k]}`);
  }
});

test('the inverse agrees with delta(epsilon): delta(epsilonForDelta(d)) <= d on a pessimistic PLD, and epsilonForDelta is the smallest such epsilon up to its rounding slack', () => {
  for (const { pld } of cases()) {
    if (!pld.pessimistic) continue;
    for (const d of [1e-12, 1e-6, 1e-3, 0.1]) {
      const { epsilon } = epsilonForDelta(pld, d);
      if (!Number.isFinite(epsilon)) continue;
      assert.ok(deltaForEpsilon(pld, epsilon) <= d, `d ${d}: epsilon ${epsilon}, delta there ${deltaForEpsilon(pld, epsilon)}`);
      if (epsilon > 0) assert.ok(deltaForEpsilon(pld, epsilon * (1 - 1e-6) - 1e-9) > d * (1 - 1e-9), `d ${d}: epsilon ${epsilon} not near the smallest`);
    }
  }
});
