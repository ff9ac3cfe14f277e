/**
 * The privacy block of a federated model (`dpfit-federated-model/1`, `000` Sec. 6): local DP,
 * one report per node. Its `summary` sentence and its `nodeNames` list are the model's own
 * description of which nodes took part; `federated/coordinator.ts` writes both from the nodes'
 * reports and `verify-model.ts` checks that every node they name carries its block (a block
 * removed from `nodes` would hide what that node's records cost).
 *
 * The summary's wording is part of the file format: `verifyModel` rebuilds it from the blocks and
 * compares, so a change here must keep accepting the files already written.
 */

/** What the summary says of each node (its block's name and headline claim). */
export interface NodeClaim {
  readonly node: unknown;
  readonly privacy: { readonly epsilon?: unknown; readonly delta?: unknown; readonly guarantee?: unknown };
}

/** The sentence a federated model's privacy block carries for these nodes' reports. */
export function localPerNodeSummary(nodes: readonly NodeClaim[]): string {
  if (nodes.length === 0) return 'no node granted a session: nothing was released';
  const claims = nodes.map((n) => `${String(n.node)}: (${String(n.privacy.epsilon)}, ${String(n.privacy.delta)}) ${String(n.privacy.guarantee)}`);
  return `local differential privacy: each node's records are protected by that node's own (epsilon, delta) below (replace-one neighbours within the node), whatever the coordinator and the other nodes do; ${claims.join('; ')}`;
}

/** What a secure-aggregation model says of its sum (`federated/secure/plan.ts`), as its summary needs it. */
export interface SecureAggregationClaim {
  readonly nodes?: unknown;
  readonly collusion?: unknown;
  readonly countedShares?: unknown;
  readonly ownShare?: { readonly epsilon?: unknown; readonly delta?: unknown };
}

/**
 * The sentence of a federated model trained with secure aggregation (`004` Sec. 5.4): what the
 * coordinator saw, what each node's claim counts, and what holds when the coordinator breaks the
 * protocol. Part of the file format, as `localPerNodeSummary`.
 */
export function secureAggregationSummary(nodes: readonly NodeClaim[], aggregation: SecureAggregationClaim): string {
  if (nodes.length === 0) return 'no node granted a session: nothing was released';
  const claims = nodes.map((n) => `${String(n.node)}: (${String(n.privacy.epsilon)}, ${String(n.privacy.delta)}) ${String(n.privacy.guarantee)}`);
  const t = Number(aggregation.collusion);
  return (
    `secure aggregation over ${String(aggregation.nodes)} nodes: the coordinator saw only the sum of the nodes' clipped gradients plus every node's noise share; ` +
    `each node's records are protected by that node's (epsilon, delta) below (replace-one neighbours within the node), which counts the shares of ${String(aggregation.countedShares)} nodes: ` +
    `it holds against the coordinator following the protocol together with up to ${Number.isFinite(t) ? t + 1 : String(aggregation.collusion)} other nodes that add their shares; ` +
    `against a coordinator that breaks the protocol only a node's own share protects it: (${String(aggregation.ownShare?.epsilon)}, ${String(aggregation.ownShare?.delta)}); ${claims.join('; ')}`
  );
}
