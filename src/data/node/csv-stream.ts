/**
 * The built-in CSV reader fed from a file (Node only): `streamFile` parses the file, or a byte
 * range of it, in chunks that end at a line break (a record longer than half the buffer grows it);
 * `readPrefix` reads the first bytes for guessing column types.
 */
import { DataFormatError } from '../../errors.js';
import type { CsvParser } from '../csv.js';
import { openError, openForReading } from './files.js';

/** Bytes read per chunk by the built-in CSV reader. */
export const CHUNK_BYTES = 16 * 1024 * 1024;

/** The longest CSV record the streaming reader accepts (a file with no line breaks is not CSV). */
export const MAX_RECORD_BYTES = 256 * 1024 * 1024;

/**
 * One streaming pass of `parser` over the file, or over bytes [range.start, range.end) of it,
 * `chunkBytes` at a time (`afterChunk` after each chunk is parsed).
 */
export async function streamFile(path: string, parser: CsvParser, chunkBytes: number, afterChunk?: () => void, range?: { readonly start: number; readonly end: number }): Promise<void> {
  const handle = await openForReading(path);
  try {
    let buffer = Buffer.allocUnsafe(chunkBytes);
    let filled = 0;
    let position = range?.start ?? 0;
    const stop = range?.end ?? Infinity;
    for (;;) {
      const want = Math.min(buffer.length - filled, stop - position);
      const { bytesRead } = want > 0 ? await handle.read(buffer, filled, want, position) : { bytesRead: 0 };
      position += bytesRead;
      const eof = bytesRead === 0;
      filled += bytesRead;
      let end = filled;
      if (!eof) {
        // Parse up to the last line break; the rest waits for the next chunk.
        let k = filled - 1;
        while (k >= 0 && buffer[k] !== 10 && buffer[k] !== 13) k--;
        end = k + 1;
      }
      const consumed = end > 0 || eof ? parser.consume(buffer, 0, end, eof) : 0;
      afterChunk?.();
      if (eof) break;
      buffer.copyWithin(0, consumed, filled);
      filled -= consumed;
      if (filled > buffer.length / 2) {
        // A record longer than half the buffer (or a quoted field spanning many lines): grow.
        if (filled > MAX_RECORD_BYTES) {
          throw new DataFormatError(path, `a record (or a quoted field) is longer than ${MAX_RECORD_BYTES / (1024 * 1024)} MiB: not a CSV file, or an unclosed quote`);
        }
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
    }
  } catch (error) {
    if ((error as { syscall?: unknown }).syscall === undefined) throw error; // ours (data errors, a type guess to revise)
    throw openError(path, error);
  } finally {
    await handle.close();
  }
}

/** The first `bytes` bytes of a file (fewer if it is shorter). */
export async function readPrefix(path: string, bytes: number): Promise<Buffer> {
  const handle = await openForReading(path);
  try {
    const buffer = Buffer.alloc(bytes);
    let filled = 0;
    for (;;) {
      const { bytesRead } = await handle.read(buffer, filled, bytes - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
      if (filled === bytes) break;
    }
    return buffer.subarray(0, filled);
  } finally {
    await handle.close();
  }
}
