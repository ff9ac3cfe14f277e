/**
 * A worker thread of `auditLearnerParallel`: runs its share of the audit's runs (trainings in the
 * last-model threat model, simulated releases in the accountant's) with its own secure randomness
 * and posts them (progress every 10 runs).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { auditRuns } from './canary-audit.js';
import type { AuditOptions } from './audit-options.js';

const { options, runs } = workerData as { options: AuditOptions; runs: number };
try {
  const result = auditRuns(options, runs, undefined, (done) => {
    if (done % 10 === 0 || done === runs) parentPort?.postMessage({ done });
  });
  parentPort?.postMessage({ result });
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
