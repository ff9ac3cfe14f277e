/**
 * Reading a DpEvent from the command line: inline JSON, or `@path` to read a JSON file.
 */
import { readFileSync } from 'node:fs';
import { parseEvent, type DpEvent } from '../accounting/events.js';
import { InvalidParameterError } from '../errors.js';

export function readEventFlag(raw: string): DpEvent {
  if (raw.startsWith('@')) {
    const path = raw.slice(1);
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (error) {
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
    const value = part === 'Infinity' || part === 'inf' ? Infinity : Number(part);
    if (part === '' || Number.isNaN(value) || !(value > 1)) throw new InvalidParameterError(`--orders[${i}]`, part, 'a Rényi order > 1');
    return value;
  });
}
