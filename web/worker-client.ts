/**
 * Runs requests on the calculator's worker, one worker per channel (a form): a new request on a
 * busy channel terminates the worker and its stale work (a PLD composition cannot be interrupted
 * otherwise) and starts a fresh one.
 */
import type { WorkerError, WorkerRequest, WorkerResponse } from './protocol.js';

/** The error of a request that a newer request on its channel replaced. */
export class SupersededError extends Error {
  constructor() {
    super('superseded by a newer request');
    this.name = 'SupersededError';
  }
}

/** An error thrown in the worker, rebuilt on the page (message and parameter kept). */
export class WorkerFailure extends Error {
  readonly param: string | undefined;
  constructor(error: WorkerError) {
    super(error.message);
    this.name = error.name;
    this.param = error.param;
  }
}

interface Channel {
  worker: Worker;
  pending?: { id: number; resolve: (value: unknown) => void; reject: (error: Error) => void };
}

const channels = new Map<string, Channel>();
let nextId = 1;

function startWorker(): Worker {
  return new Worker(new URL('./pld-worker.js', import.meta.url), { type: 'module' });
}

export function runInWorker<T>(channelName: string, request: WorkerRequest): Promise<T> {
  let channel = channels.get(channelName);
  if (channel?.pending !== undefined) {
    channel.worker.terminate();
    channel.pending.reject(new SupersededError());
    channel = undefined;
  }
  if (channel === undefined) {
    const created: Channel = { worker: startWorker() };
    created.worker.onmessage = (message: MessageEvent<WorkerResponse>) => {
      const pending = created.pending;
      if (pending === undefined || pending.id !== message.data.id) return;
      created.pending = undefined;
      if (message.data.ok) pending.resolve(message.data.result);
      else pending.reject(new WorkerFailure(message.data.error));
    };
    created.worker.onerror = (event: ErrorEvent) => {
      const pending = created.pending;
      created.pending = undefined;
      pending?.reject(new Error(`the worker failed: ${event.message}`));
    };
    channel = created;
    channels.set(channelName, created);
  }
  const id = nextId++;
  const current = channel;
  return new Promise<T>((resolve, reject) => {
    current.pending = { id, resolve: resolve as (value: unknown) => void, reject };
    current.worker.postMessage({ id, request });
  });
}
