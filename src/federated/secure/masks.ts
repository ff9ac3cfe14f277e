/**
 * Pairwise masks of secure aggregation (`004` Sec. 5.4, Fig. 13: parties add and subtract large
 * random values that cancel in the sum; Bonawitz et al. 2017, "Practical Secure Aggregation for
 * Privacy-Preserving Machine Learning", without its dropout recovery).
 *
 * Every party i of a session draws a fresh X25519 key pair (`newMaskKeys`) and publishes its public
 * key; the coordinator relays the K public keys, in one order, to every party. Parties i and j
 * agree on the secret ECDH(i, j) (node:crypto `diffieHellman`), and for step t derive a 256-bit key
 * by HKDF-SHA256 (salt: both public keys in list order, info: the protocol and t); AES-256-CTR
 * with a zero IV under that key is the PRG of the pair's mask r_ij(t), d words of `bits` bits
 * (a uniform 64-bit word reduced mod 2^bits is uniform). Party i releases
 *
 *   y_i = v_i + sum_{j > i} r_ij - sum_{j < i} r_ji   (mod 2^bits)
 *
 * with v_i its integer vector (its rounded value plus its discrete Gaussian share, in grid steps).
 * The masks cancel in sum_i y_i = sum_i v_i (mod 2^bits), which is decoded as a signed integer:
 * the modulus is chosen so that the true sum cannot wrap (`secure/plan.ts`).
 *
 * Why integers. The masks are perfectly hiding only in a finite group: y_i is uniform on
 * Z_{2^bits}^d whatever v_i, for anyone who does not know one of i's pair secrets. Floating-point
 * masks would not hide (a sum of doubles rounds, and the rounding depends on v_i).
 *
 * Keys are per session (fresh randomness), so a mask never repeats across sessions: two messages
 * of one node under the same masks would reveal the difference of its values. Each step has its
 * own masks. A peer key that is not a valid X25519 point, or one whose shared secret is all zero
 * (a low-order point), is refused.
 */
import { createCipheriv, createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync, hkdfSync, type KeyObject } from 'node:crypto';
import { InvalidParameterError } from '../../errors.js';

export const MASK_PROTOCOL = 'dpfit-secagg/1';

export interface MaskKeys {
  /** The public key, raw 32 bytes in base64url (43 characters). */
  readonly publicKey: string;
  readonly privateKey: KeyObject;
}

/** A fresh X25519 key pair (the platform's CSPRNG). */
export function newMaskKeys(): MaskKeys {
  const { publicKey, privateKey } = generateKeyPairSync('x25519');
  const jwk = publicKey.export({ format: 'jwk' });
  return { publicKey: jwk.x as string, privateKey };
}

/** The key pair of a given 32-byte private key: for reproducible tests only (a node always uses `newMaskKeys`). */
export function maskKeysFromPrivate(raw: Buffer): MaskKeys {
  if (raw.length !== 32) throw new InvalidParameterError('raw', raw.length, '32 bytes');
  const privateKey = createPrivateKey({ key: { kty: 'OKP', crv: 'X25519', d: raw.toString('base64url'), x: '' }, format: 'jwk' });
  const jwk = createPublicKey(privateKey).export({ format: 'jwk' });
  return { publicKey: jwk.x as string, privateKey };
}

const KEY_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** The pair secrets of the party holding `keys` with every peer of `peers` (the K public keys in the session's order). */
export interface PairSecrets {
  /** This party's position in `peers`. */
  readonly index: number;
  readonly peers: readonly string[];
  /** secrets[j]: ECDH with peer j (empty for the party itself). */
  readonly secrets: readonly Buffer[];
}

/**
 * Checks the relayed key list (K distinct keys, this party's own exactly once) and computes the
 * pair secrets. Throws InvalidParameterError naming the field otherwise.
 */
export function pairSecrets(keys: MaskKeys, peers: readonly unknown[], expected: number): PairSecrets {
  if (peers.length !== expected) throw new InvalidParameterError('request.peers', peers.length, `the ${expected} public keys of the session's nodes`);
  const list: string[] = [];
  for (const [j, key] of peers.entries()) {
    if (typeof key !== 'string' || !KEY_PATTERN.test(key)) throw new InvalidParameterError(`request.peers[${j}]`, key, 'an X25519 public key (43 base64url characters)');
    list.push(key);
  }
  if (new Set(list).size !== list.length) throw new InvalidParameterError('request.peers', 'a repeated key', 'distinct public keys');
  const index = list.indexOf(keys.publicKey);
  if (index < 0) throw new InvalidParameterError('request.peers', 'without this node', "a list that holds this node's public key (from its plan)");
  const secrets = list.map((key, j) => {
    if (j === index) return Buffer.alloc(0);
    let peer: KeyObject;
    try {
      peer = createPublicKey({ key: { kty: 'OKP', crv: 'X25519', x: key }, format: 'jwk' });
    } catch {
      throw new InvalidParameterError(`request.peers[${j}]`, key, 'a valid X25519 public key');
    }
    let secret: Buffer;
    try {
      secret = diffieHellman({ privateKey: keys.privateKey, publicKey: peer });
    } catch {
      // OpenSSL refuses a derivation whose result is all zero (a low-order point).
      secret = Buffer.alloc(32);
    }
    if (secret.every((b) => b === 0)) throw new InvalidParameterError(`request.peers[${j}]`, key, 'a key of full order (its shared secret is zero)');
    return secret;
  });
  return { index, peers: list, secrets };
}

/** The mask r_ij(step) of the pair (i < j): d words of `bits` bits. */
export function pairMask(secrets: PairSecrets, peer: number, step: number, d: number, bits: number): bigint[] {
  const [lo, hi] = secrets.index < peer ? [secrets.index, peer] : [peer, secrets.index];
  const salt = Buffer.concat([Buffer.from(secrets.peers[lo], 'base64url'), Buffer.from(secrets.peers[hi], 'base64url')]);
  const key = Buffer.from(hkdfSync('sha256', secrets.secrets[peer], salt, `${MASK_PROTOCOL} pair mask, step ${step}`, 32));
  const stream = createCipheriv('aes-256-ctr', key, Buffer.alloc(16)).update(Buffer.alloc(8 * d));
  const out: bigint[] = new Array(d);
  for (let k = 0; k < d; k++) out[k] = BigInt.asUintN(bits, stream.readBigUInt64LE(8 * k));
  return out;
}

/** Hex digits of one residue mod 2^bits: every message of a session has the same length. */
export const residueDigits = (bits: number): number => Math.ceil(bits / 4);

/** y_i = v_i + sum_{j > i} r_ij - sum_{j < i} r_ji (mod 2^bits), as fixed-width hex (file comment). */
export function maskValues(values: readonly bigint[], secrets: PairSecrets, step: number, bits: number): string[] {
  const d = values.length;
  const acc = values.map((v) => BigInt.asUintN(bits, v));
  for (let j = 0; j < secrets.peers.length; j++) {
    if (j === secrets.index) continue;
    const r = pairMask(secrets, j, step, d, bits);
    const sign = secrets.index < j ? 1n : -1n;
    for (let k = 0; k < d; k++) acc[k] = BigInt.asUintN(bits, acc[k] + sign * r[k]);
  }
  const width = residueDigits(bits);
  return acc.map((a) => a.toString(16).padStart(width, '0'));
}

/** One masked message read back (fixed-width hex residues); throws InvalidParameterError naming `what`. */
export function readResidues(message: readonly unknown[], d: number, bits: number, what: string): bigint[] {
  const width = residueDigits(bits);
  if (message.length !== d) throw new InvalidParameterError(what, message.length, `${d} residues`);
  return message.map((h, k) => {
    if (typeof h !== 'string' || h.length !== width || !/^[0-9a-f]+$/.test(h)) throw new InvalidParameterError(`${what}[${k}]`, h, `${width} lowercase hex digits`);
    const r = BigInt(`0x${h}`);
    if (r >= 1n << BigInt(bits)) throw new InvalidParameterError(`${what}[${k}]`, h, `a residue below 2^${bits}`);
    return r;
  });
}

/** sum_i y_i mod 2^bits, decoded as a signed integer in [-2^(bits-1), 2^(bits-1)). */
export function unmaskSum(messages: readonly (readonly bigint[])[], d: number, bits: number): bigint[] {
  const out: bigint[] = new Array(d).fill(0n);
  for (const m of messages) for (let k = 0; k < d; k++) out[k] = BigInt.asUintN(bits, out[k] + m[k]);
  return out.map((v) => BigInt.asIntN(bits, v));
}
