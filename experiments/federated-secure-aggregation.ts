/**
 * `004` Sec. 5.4 / Fig. 13 (sums by masking) in dpfit: federated dpgd with local noise (each node
 * adds its own full noise) against secure aggregation (each node adds a share; the coordinator sees
 * only the masked sum), at the same per-node (epsilon, delta), for K nodes of n rows each drawn from
 * one logistic model (features in the ball of radius 0.5, labels +-1, ridge on +-1 targets).
 * Prints, per K: the noise std on the averaged gradient (one coordinate, one step) of each mode and
 * their ratio (sqrt(K - 1) expected: the headline counts K - 1 shares), the pooled sign accuracy of
 * each mode over seeds (mean), the non-private accuracy, and the own-share fallback epsilon.
 *
 *   node --import tsx experiments/federated-secure-aggregation.ts
 */
import { InMemoryLedger } from '../src/accounting/budget/rule.js';
import { federate, type FederateOptions } from '../src/federated/coordinator.js';
import { inProcessClient } from '../src/federated/in-process.js';
import { FederatedNode } from '../src/federated/node.js';
import { seededRng } from '../src/random/rng.js';
import { ballRows, signAccuracy } from '../test/helpers/federated-rows.js';

const N = 3000;
const SEEDS = [1, 2, 3, 4, 5];
const rows = (n: number, seed: number) => ballRows(n, seed, ['a', 'b', 'c', 'e']);
const accuracy = signAccuracy;



const mean = (a: number[]) => a.reduce((x, y) => x + y, 0) / a.length;
const run: FederateOptions = { method: 'dpgd', steps: 40, regularization: 0.03, clipNorm: 0.5, epsilon: 0.3, delta: 1e-6 };

for (const K of [2, 5, 10]) {
  const datasets = Array.from({ length: K }, (_, i) => rows(N, 100 + i));
  const nodes = (seed: number, budget = 10) => datasets.map((data, i) => new FederatedNode(data, new InMemoryLedger({ epsilon: budget, delta: 1e-5 }), { name: `n${i}`, rng: seededRng(seed * 1000 + i), secureAggregation: true }));
  const acc: Record<string, number[]> = { local: [], secure: [] };
  let localNoise = 0;
  let secureNoise = 0;
  let own = 0;
  for (const seed of SEEDS) {
    const local = await federate(nodes(seed).map((n) => inProcessClient(n)), run);
    acc.local.push(accuracy(local.model?.theta as number[], datasets));
    const stds = local.privacy.nodes.map((b) => ((b.privacy.granularity as number) * Number(/"gridNoiseStd":(\d+)/.exec(JSON.stringify(b.privacy.event))?.[1])) / N);
    localNoise = Math.sqrt(stds.reduce((a, s) => a + s * s, 0)) / K;
    const secure = await federate(nodes(seed).map((n) => inProcessClient(n)), { ...run, aggregation: 'secure' });
    acc.secure.push(accuracy(secure.model?.theta as number[], datasets));
    const sum = secure.privacy.aggregation;
    if (sum === undefined) throw new Error(secure.message);
    secureNoise = sum.sumNoiseStd / sum.totalRows;
    own = sum.ownShare.epsilon;
  }
  const exact = await federate(datasets.map((data, i) => new FederatedNode(data, new InMemoryLedger({ epsilon: Infinity, delta: 1e-5 }), { name: `n${i}` })).map((n) => inProcessClient(n)), { method: 'nonprivate', steps: run.steps, regularization: run.regularization });
  console.log(
    `K=${K}: gradient noise std local ${localNoise.toExponential(3)}, secure ${secureNoise.toExponential(3)} (ratio ${(localNoise / secureNoise).toFixed(3)}, sqrt(K-1) = ${Math.sqrt(K - 1).toFixed(3)}); ` +
      `accuracy local ${mean(acc.local).toFixed(4)}, secure ${mean(acc.secure).toFixed(4)}, non-private ${accuracy(exact.model?.theta as number[], datasets).toFixed(4)} (${SEEDS.length} seeds); own-share epsilon ${own.toFixed(3)} at epsilon ${run.epsilon}`,
  );
}
