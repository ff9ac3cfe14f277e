/** A worker of `pool.ts`: loads the data set once, then runs the tasks it is handed. */
import { parentPort, workerData } from 'node:worker_threads';
import { loadExperimentData } from './data-sets.js';
import { protocolFor, runTask, type Task } from './methods.js';
import type { PoolSetup, WorkerMessage } from './pool.js';

const port = parentPort;
if (port === null) throw new Error('experiments/tuning/worker.ts runs as a worker thread of pool.ts');
const setup = workerData as PoolSetup;
const data = await loadExperimentData(setup.data, setup.dir);
const protocol = protocolFor(data, setup.epochs, setup.grid);
const post = (message: WorkerMessage) => port.postMessage(message);
port.on('message', ({ index, task }: { index: number; task: Task }) => {
  try {
    post({ kind: 'result', index, result: runTask(data, protocol, task) });
  } catch (error) {
    post({ kind: 'error', index, message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  }
});
post({ kind: 'ready' });
