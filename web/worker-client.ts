/**
 * Runs requests on the calculator's worker, one worker per channel (a calculation): a new request
 * on a busy channel, or `cancelWorker`, terminates the worker and its stale work (a PLD
 * composition cannot be interrupted otherwise); the next request starts a fresh one. Every
 * message carries its request's id, and a message whose id is not the channel's pending request
 * is dropped, so no stale result reaches the page.
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

interface Pending {
  readonly id: number;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly onPartial?: (value: unknown) => void;
}

interface Channel {
  readonly worker: Worker;
  pending?: Pending;
}

const channels = new Map<string, Channel>();
let nextId = 1;

function startWorker(): Worker {
  return new Worker(new URL('./pld-worker.js', import.meta.url), { type: 'module' });
}

/** Stops the channel's work, if any: its pending request fails with `SupersededError`. */
export function cancelWorker(channelName: string): void {
  const channel = channels.get(channelName);
  if (channel?.pending === undefined) return;
  channel.worker.terminate();
  channels.delete(channelName);
  channel.pending.reject(new SupersededError());
}

/** Runs `request` on the channel's worker; `onPartial` receives the results it sends before its last. */
export function runInWorker<T, P = unknown>(channelName: string, request: WorkerRequest, onPartial?: (partial: P) => void): Promise<T> {
  cancelWorker(channelName);
  let channel = channels.get(channelName);
  if (channel === undefined) {
    const created: Channel = { worker: startWorker() };
    created.worker.onmessage = (message: MessageEvent<WorkerResponse>) => {
      const pending = created.pending;
      if (pending === undefined || pending.id !== message.data.id) return;
      if (message.data.ok && message.data.partial === true) {
        pending.onPartial?.(message.data.result);
        return;
      }
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
    current.pending = { id, resolve: resolve as (value: unknown) => void, reject, ...(onPartial === undefined ? {} : { onPartial: onPartial as (value: unknown) => void }) };
    current.worker.postMessage({ id, request });
  });
}
