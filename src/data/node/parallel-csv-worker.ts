/**
 * A worker of the parallel CSV reader (`parallel-csv.ts`): counts its byte range, then parses and
 * encodes it into the shared rows it was given; answers each message in order. Node only.
 */
import { parentPort } from 'node:worker_threads';
import { countCsvRange, encodeCsvRange, type CsvRangeJob } from './parallel-csv.js';

type Message = { kind: 'count'; path: string; start: number; end: number } | { kind: 'encode'; job: CsvRangeJob };

// Messages are answered in order: each one waits for the one before.
let queue: Promise<void> = Promise.resolve();
parentPort?.on('message', (message: Message) => {
  queue = queue.then(async () => {
    if (message.kind === 'count') parentPort?.postMessage(await countCsvRange(message.path, message.start, message.end));
    else parentPort?.postMessage(await encodeCsvRange(message.job));
  });
});
