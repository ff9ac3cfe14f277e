/**
 * The coordinator's side of one secure-aggregation step (`masks.ts`, `plan.ts`): every node of the
 * session is asked for its masked share at the same theta, with the same list of public keys; the
 * residues are added mod 2^bits and decoded. There is no dropout recovery: when any node fails or
 * answers something malformed, the masks of the step cannot cancel, so the other nodes' answers
 * (each uniform on Z_{2^bits}^d to whoever lacks one of its pair secrets) are discarded unread and
 * the step releases nothing; the caller stops the run.
 */
import { DpfitError } from '../../errors.js';
import { readResidues, unmaskSum } from './masks.js';

/** What a step needs of a node client (`coordinator.ts`'s NodeClient, the protocol's messages, structurally). */
export interface SecureStepClient {
  readonly label: string;
  gradient(request: { session: string; step: number; theta: readonly number[]; peers: readonly string[] }): Promise<{ readonly session: string; readonly step: number; readonly masked?: readonly string[] }>;
}

export type SecureStepResult = { readonly sum: Float64Array } | { readonly failed: string; readonly cause: unknown };

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/**
 * Asks every node for step t and returns the decoded sum times g (the noisy sum of the nodes'
 * clipped gradient sums), or which node failed.
 */
export async function secureStep(
  clients: readonly SecureStepClient[],
  sessions: readonly string[],
  peers: readonly string[],
  step: number,
  theta: Float64Array,
  shape: { readonly d: number; readonly bits: number; readonly granularity: number },
): Promise<SecureStepResult> {
  const { d, bits, granularity } = shape;
  const settled = await Promise.allSettled(clients.map((client, i) => client.gradient({ session: sessions[i], step, theta: Array.from(theta), peers })));
  const residues: bigint[][] = [];
  for (const [i, outcome] of settled.entries()) {
    if (outcome.status === 'rejected') return { failed: `${clients[i].label}: ${describe(outcome.reason)}`, cause: outcome.reason };
    const answer = outcome.value;
    try {
      if (answer.masked === undefined || answer.session !== sessions[i] || answer.step !== step) throw new DpfitError('FETCH_FAILED', 'its answer is not the masked share of this step');
      residues.push(readResidues(answer.masked, d, bits, 'answer.masked'));
    } catch (error) {
      return { failed: `${clients[i].label}: ${describe(error)}`, cause: new DpfitError('FETCH_FAILED', `${clients[i].label}: ${describe(error)}`) };
    }
  }
  const sum = unmaskSum(residues, d, bits);
  // Number(sum) rounds to the nearest double; times a power of two: post-processing of the released integer sum.
  return { sum: Float64Array.from(sum, (v) => Number(v) * granularity) };
}
