/**
 * Runs independent method runs (`Task`s: one method, epsilon and seed each) on worker threads, so
 * that an experiment uses every CPU. Each worker loads the data set itself (the same rows: Adult
 * from its files, the synthetic sets from their seeds) and runs tasks handed out one at a time in
 * the given order (put the long ones first). Every run derives its randomness from its own seed
 * (`methods.ts`), so the results are those of a serial run, bit for bit, whatever the number of
 * threads and the order in which they finish.
 */
import { availableParallelism } from 'node:os';
import { startModuleWorker } from '../../src/worker-threads.js';
import { loadExperimentData, type DataSetName } from './data-sets.js';
import { protocolFor, runTask, type GridName, type Task, type TaskResult } from './methods.js';

export interface PoolSetup {
  readonly data: DataSetName;
  /** Adult's directory (unused for the synthetic sets). */
  readonly dir: string;
  readonly epochs: number;
  readonly grid: GridName;
}

/** Messages of the worker (`worker.ts`). */
export type WorkerMessage = { readonly kind: 'ready' } | { readonly kind: 'result'; readonly index: number; readonly result: TaskResult } | { readonly kind: 'error'; readonly index: number; readonly message: string };

export const defaultThreads = (): number => Math.max(1, availableParallelism());

/** The results in the order of `tasks`; `onResult` as each finishes. threads = 1 runs on this thread. */
export async function runTasks(setup: PoolSetup, tasks: readonly Task[], threads: number, onResult?: (result: TaskResult) => void): Promise<TaskResult[]> {
  const results: TaskResult[] = new Array(tasks.length);
  if (threads <= 1 || tasks.length <= 1) {
    const data = await loadExperimentData(setup.data, setup.dir);
    const protocol = protocolFor(data, setup.epochs, setup.grid);
    tasks.forEach((task, index) => {
      results[index] = runTask(data, protocol, task);
      onResult?.(results[index]);
    });
    return results;
  }
  let next = 0;
  let done = 0;
  const workers = Array.from({ length: Math.min(threads, tasks.length) }, () => startModuleWorker(new URL('./worker', import.meta.url), { workerData: setup }));
  try {
    await new Promise<void>((resolve, reject) => {
      const hand = (worker: (typeof workers)[number]) => {
        if (next < tasks.length) {
          const index = next++;
          worker.postMessage({ index, task: tasks[index] });
        }
      };
      for (const worker of workers) {
        worker.on('message', (message: WorkerMessage) => {
          if (message.kind === 'ready') return hand(worker);
          if (message.kind === 'error') return reject(new Error(`task ${JSON.stringify(tasks[message.index])}: ${message.message}`));
          results[message.index] = message.result;
          onResult?.(message.result);
          if (++done === tasks.length) resolve();
          else hand(worker);
        });
        worker.on('error', reject);
        worker.on('exit', (code) => {
          if (done < tasks.length) reject(new Error(`a worker exited (code ${code}) with ${tasks.length - done} runs left`));
        });
      }
    });
  } finally {
    await Promise.all(workers.map((worker) => worker.terminate()));
  }
  return results;
}
