/**
 * Reading a DpEvent from the command line: inline JSON, or `@path` to read a JSON file (a regular
 * file of at most MAX_EVENT_FILE_BYTES: `@/dev/zero` or a FIFO would never end).
 */
import { readFileSync, statSync } from 'node:fs';
import type { DpEvent } from '../accounting/events/types.js';
import { parseEvent } from '../accounting/events/json.js';
import { InvalidParameterError } from '../errors.js';
import { parseDecimal } from './io.js';

/** The largest event file read (an event of a million steps written out is ~100 MB; use selfCompose). */
export const MAX_EVENT_FILE_BYTES = 64 * 1024 * 1024;

export function readEventFlag(raw: string): DpEvent {
  if (raw.startsWith('@')) {
    const path = raw.slice(1);
    const expected = 'inline JSON or @FILE naming a readable JSON file';
    let text: string;
    try {
      const info = statSync(path);
      if (!info.isFile()) throw new InvalidParameterError('--event', raw, expected, info.isDirectory() ? 'a directory' : 'not a regular file (a device, FIFO or socket)');
      if (info.size > MAX_EVENT_FILE_BYTES) throw new InvalidParameterError('--event', raw, `${expected} of at most ${MAX_EVENT_FILE_BYTES / 1024 / 1024} MiB`, `${info.size} bytes`);
      text = readFileSync(path, 'utf8');
    } catch (error) {
      if (error instanceof InvalidParameterError) throw error;
      throw new InvalidParameterError('--event', raw, 'inline JSON or @FILE naming a readable JSON file', (error as NodeJS.ErrnoException).code ?? String(error));
    }
    return parseEvent(text);
  }
  return parseEvent(raw);
}

/** Parses `--orders 2,4.5,32` into a list of numbers. */
export function parseOrdersFlag(raw: string): number[] {
  const orders = raw.split(',').map((part) => part.trim());
  return orders.map((part, i) => {
    const value = part === 'Infinity' || part === 'inf' ? Infinity : parseDecimal(part);
    if (part === '' || Number.isNaN(value) || !(value > 1)) throw new InvalidParameterError(`--orders[${i}]`, part, 'a Rényi order > 1');
    return value;
  });
}
