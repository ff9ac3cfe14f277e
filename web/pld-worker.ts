/**
 * The calculator's worker: PLD compositions and calibrations, which may take seconds, run here so
 * that the page stays responsive. It calls the same functions as the CLI (`dpfit epsilon
 * --accountant pld`, `dpfit curve`, `dpfit calibrate dpsgd`) with the same options, so the
 * numbers are the CLI's.
 */
import { calibrateDpsgd, PLD_CALIBRATION } from '../src/accounting/calibration/calibrate.js';
import type { DpEvent } from '../src/accounting/events/types.js';
import { PldAccountant, pldFallbackWarning } from '../src/accounting/pld/accountant.js';
import { RdpAccountant } from '../src/accounting/rdp/accountant.js';
import type { CalibrationResult, PldResult, WorkerRequest, WorkerResponse } from './protocol.js';

interface WorkerScope {
  onmessage: ((message: { data: { id: number; request: WorkerRequest } }) => void) | null;
  postMessage(message: WorkerResponse): void;
}
const scope = self as unknown as WorkerScope;

/**
 * epsilon by PLD, falling back to RDP with the PLD accountant's own reason (as the CLI's
 * --accountant pld does). The epsilon goes to `partial` as soon as it is known (about a second for
 * DP-SGD's default), the curve's points after it (each may refine the grid: several seconds).
 */
function pld(event: DpEvent, delta: number, curveEpsilons: readonly number[], partial: (result: PldResult) => void): PldResult {
  const accountant = new PldAccountant();
  if (!accountant.supports(event)) {
    const g = new RdpAccountant().compose(event).getEpsilon(delta);
    return { guarantee: { ...g, warnings: [...g.warnings, pldFallbackWarning(event)] } };
  }
  accountant.compose(event);
  const guarantee = accountant.getEpsilon(delta);
  if (curveEpsilons.length === 0) return { guarantee };
  partial({ guarantee });
  const curve = curveEpsilons.map((epsilon) => ({ epsilon, delta: accountant.getDelta(epsilon).delta }));
  return { guarantee, curve };
}

function calibrate(request: Extract<WorkerRequest, { task: 'calibrateDpsgd' }>): CalibrationResult {
  const result = calibrateDpsgd({
    samplingProbability: request.samplingProbability,
    steps: request.steps,
    targetEpsilon: request.targetEpsilon,
    delta: request.delta,
    rdpOptions: { orders: undefined },
    ...(request.accountant === 'pld' ? PLD_CALIBRATION : {}),
  });
  return { noiseMultiplier: result.noiseMultiplier, guarantee: result.guarantee, event: result.event };
}

scope.onmessage = ({ data: { id, request } }) => {
  try {
    const partial = (result: unknown) => scope.postMessage({ id, ok: true, partial: true, result });
    const result = request.task === 'pld' ? pld(request.event, request.delta, request.curveEpsilons, partial) : calibrate(request);
    scope.postMessage({ id, ok: true, result });
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    const param = (e as { param?: unknown }).param;
    scope.postMessage({ id, ok: false, error: { name: e.name, message: e.message, ...(typeof param === 'string' ? { param } : {}) } });
  }
};
