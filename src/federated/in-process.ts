/**
 * The federated protocol without a network: a `NodeClient` that calls a `FederatedNode` object
 * directly, every message encoded and read back as on the wire (`wire.ts`), so that experiments
 * and tests run exactly the messages (and the maths) of `dpfit node serve` + `dpfit federate`.
 */
import type { NodeClient } from './coordinator.js';
import type { FederatedNode } from './node.js';
import type { GradientRequest, SessionRequest } from './protocol.js';
import { encodeMessage, readGradientAnswer, readNodeInfo, readSessionPlan } from './wire.js';

const wire = (value: unknown): unknown => JSON.parse(encodeMessage(value));

export function inProcessClient(node: FederatedNode, client = 'in-process coordinator'): NodeClient {
  const label = node.name;
  return {
    label,
    info: async () => readNodeInfo(label, wire(await node.info())),
    openSession: async (request: SessionRequest) => readSessionPlan(label, wire(await node.openSession(wire(request), client))),
    gradient: async (request: GradientRequest) => readGradientAnswer(label, wire(node.gradient(wire(request))), request.theta.length),
  };
}
