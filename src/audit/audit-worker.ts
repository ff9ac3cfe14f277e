/**
 * A worker thread of `auditLearnerParallel`: runs its share of the canary runs with its own secure
 * randomness and posts the scores (progress every 10 runs).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { canaryScores, type AuditOptions } from './canary-audit.js';

const { options, runs } = workerData as { options: AuditOptions; runs: number };
try {
  const result = canaryScores(options, runs, undefined, (done) => {
    if (done % 10 === 0 || done === runs) parentPort?.postMessage({ done });
  });
  parentPort?.postMessage({ result });
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error) });
}
