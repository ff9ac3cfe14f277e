/**
 * Pairwise masks of secure aggregation (`src/federated/secure/masks.ts`): they cancel exactly in
 * the sum (property test over random K, d, modulus and values), one node's masked message is
 * uniform whatever its value (chi-square at fixed keys), and bad relayed keys are refused.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { InvalidParameterError } from '../../../src/errors.js';
import { maskKeysFromPrivate, maskValues, newMaskKeys, pairSecrets, readResidues, residueDigits, unmaskSum, type MaskKeys } from '../../../src/federated/secure/masks.js';

/** K parties with fixed keys (seeded by `seed`) and their pair secrets over the same key list. */
function parties(K: number, seed: number): { keys: MaskKeys[]; peers: string[] } {
  const keys = Array.from({ length: K }, (_, i) => maskKeysFromPrivate(Buffer.alloc(32, (seed * 31 + i * 7 + 1) % 256).fill(i, 0, 1)));
  return { keys, peers: keys.map((k) => k.publicKey) };
}

test('the masks cancel exactly: the decoded sum of the masked messages is the sum of the values (random K, d, bits, values)', () => {
  fc.assert(
    fc.property(fc.integer({ min: 2, max: 7 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 8, max: 120 }), fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 0, max: 2 ** 31 }), (K, d, bits, seed, step, valueSeed) => {
      const { keys, peers } = parties(K, seed);
      // Values whose sum fits the signed range of 2^bits (what the plan's modulus guarantees).
      const limit = (1n << BigInt(bits - 1)) / BigInt(K) - 1n;
      let x = BigInt(valueSeed) + 1n;
      const values = keys.map(() => Array.from({ length: d }, () => {
        x = (x * 6364136223846793005n + 1442695040888963407n) % (1n << 64n);
        return (x % (2n * limit + 1n)) - limit;
      }));
      const messages = keys.map((k, i) => readResidues(maskValues(values[i], pairSecrets(k, peers, K), step, bits), d, bits, 'masked'));
      const expected = Array.from({ length: d }, (_, j) => values.reduce((a, v) => a + v[j], 0n));
      assert.deepEqual(unmaskSum(messages, d, bits), expected);
      // Every message has the same fixed width.
      for (const [i, k] of keys.entries()) for (const h of maskValues(values[i], pairSecrets(k, peers, K), step, bits)) assert.equal(h.length, residueDigits(bits));
    }),
    { numRuns: 150, seed: 4242 },
  );
});

test("one node's masked message is uniform mod 2^8 whatever its value (chi-square, 255 degrees of freedom, fixed keys)", () => {
  const K = 3;
  const d = 64;
  const bits = 8;
  const { keys, peers } = parties(K, 5);
  const secrets = pairSecrets(keys[1], peers, K);
  for (const value of [0n, 127n, -128n]) {
    const counts = new Array(256).fill(0);
    const steps = 400;
    for (let t = 0; t < steps; t++) for (const h of maskValues(new Array(d).fill(value), secrets, t, bits)) counts[Number.parseInt(h, 16)]++;
    const expected = (steps * d) / 256;
    const chi2 = counts.reduce((a, c) => a + (c - expected) ** 2 / expected, 0);
    // mean 255, sd sqrt(510) = 22.6: within 5 sd either side.
    assert.ok(chi2 > 255 - 5 * 22.6 && chi2 < 255 + 5 * 22.6, `value ${value}: chi2 ${chi2}`);
  }
});

test('masks differ between steps and between sessions (fresh keys), so no two messages share a mask', () => {
  const { keys, peers } = parties(3, 9);
  const s = pairSecrets(keys[0], peers, 3);
  assert.notDeepEqual(maskValues([0n, 0n], s, 0, 64), maskValues([0n, 0n], s, 1, 64));
  const fresh = [newMaskKeys(), newMaskKeys(), newMaskKeys()];
  const freshPeers = fresh.map((k) => k.publicKey);
  assert.notDeepEqual(maskValues([0n, 0n], pairSecrets(fresh[0], freshPeers, 3), 0, 64), maskValues([0n, 0n], s, 0, 64));
});

test('relayed key lists are checked: count, duplicates, own key present, valid points, no zero secret', () => {
  const { keys, peers } = parties(3, 11);
  const refused = (list: unknown[], expected = 3) => assert.throws(() => pairSecrets(keys[0], list, expected), InvalidParameterError);
  refused(peers, 4);
  refused([peers[0], peers[1], peers[1]]);
  refused([peers[1], peers[2], newMaskKeys().publicKey]);
  refused([peers[0], peers[1], 'not a key']);
  // The all-zero point has low order: its shared secret is zero.
  refused([peers[0], peers[1], Buffer.alloc(32).toString('base64url')]);
  assert.equal(pairSecrets(keys[2], peers, 3).index, 2);
});

test('residues are read strictly (width, digits, range)', () => {
  assert.throws(() => readResidues(['0f'], 1, 12, 'm'), InvalidParameterError);
  assert.throws(() => readResidues(['0F0'], 1, 12, 'm'), InvalidParameterError);
  assert.throws(() => readResidues(['1ff'], 1, 8, 'm'), InvalidParameterError);
  assert.throws(() => readResidues(['00', '01'], 1, 8, 'm'), InvalidParameterError);
  assert.deepEqual(readResidues(['0ff'], 1, 12, 'm'), [255n]);
  assert.deepEqual(unmaskSum([[255n], [2n]], 1, 8), [1n]);
  assert.deepEqual(unmaskSum([[200n]], 1, 8), [-56n]);
});
