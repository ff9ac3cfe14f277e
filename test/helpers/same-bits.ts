/** Two datasets equal bit for bit: shape, feature names, and the bytes of x and y. */
import assert from 'node:assert/strict';
import type { Dataset } from '../../src/data/dataset.js';

export function sameBits(a: Dataset, b: Dataset): void {
  assert.equal(a.n, b.n);
  assert.equal(a.d, b.d);
  assert.deepEqual(a.featureNames, b.featureNames);
  assert.ok(Buffer.from(a.x.buffer, a.x.byteOffset, a.x.byteLength).equals(Buffer.from(b.x.buffer, b.x.byteOffset, b.x.byteLength)), 'x differs');
  assert.ok(Buffer.from(a.y.buffer, a.y.byteOffset, a.y.byteLength).equals(Buffer.from(b.y.buffer, b.y.byteOffset, b.y.byteLength)), 'y differs');
}
