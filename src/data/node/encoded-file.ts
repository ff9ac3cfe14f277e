/**
 * The encoded rows of an out-of-core run in a temporary binary file: written once by the opening
 * pass (the schema's encoding of every record, `stream-rows.ts`), then read back by every step in
 * large segments, straight into the learner's memory (`RowSource.stored`), instead of parsing and
 * encoding the data file again.
 *
 * Layout. The rows are cut into segments of S rows (S a power of two, at least 1024); segment k
 * holds rows kS .. kS + S - 1 and takes S (d b + 16) bytes at offset k S (d b + 16): x (S rows of
 * d values, row-major, b = 8 bytes for float64 or 4 for float32, rounded to nearest), then y
 * (S float64 labels, as the schema encodes them), then the S squared norms of the stored rows
 * (float64, sum over j = 0 .. d-1 in order of x_j * x_j of the stored values, widened exactly:
 * the clip thresholds of every clip norm follow from them, `glm/clip-thresholds.ts`). The last
 * segment is padded with zero rows.
 *
 * The file holds private data. It is created with mode 0600 in a new directory of mode 0700
 * (`mkdtemp`) under `directory` (default `os.tmpdir()`, i.e. $TMPDIR), and its name is removed at
 * once: the data live only while this process holds the file open, so nothing is left on disk
 * when the run ends, fails or is killed (on a system that cannot remove an open file, the name is
 * removed on close and when the process exits). Nothing partial is ever left under a name.
 *
 * Node only.
 */
import { closeSync, mkdtempSync, openSync, read, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import type { StoredRows } from '../row-source.js';
import { describeOsError } from './files.js';
import { readStoredRowsSync } from './stored-read.js';

export type StoredPrecision = 'float64' | 'float32';

export interface EncodedRowsFileOptions {
  /** Values per row. */
  readonly d: number;
  readonly precision: StoredPrecision;
  /** Rows per segment: a power of two, at least 1024. */
  readonly segmentRows: number;
  /** Where the temporary file is created (default `os.tmpdir()`). */
  readonly directory?: string;
  /** The data file, named in errors about the temporary file. */
  readonly source: string;
}

/** Names still on disk (systems that cannot remove an open file): removed when the process exits. */
const named = new Set<string>();
let exitHook = false;

function removeNamed(): void {
  for (const path of named) {
    try {
      unlinkSync(path);
      rmdirSync(join(path, '..'));
    } catch {
      // already gone
    }
  }
  named.clear();
}

/**
 * The segment size for rows of `rowBytes` bytes (plus 16 for the label and the squared norm)
 * within `budget` bytes: the largest power of two in [1024, 2^18] of which two segments fit (one
 * being summed while the next one is read), 1024 when none does.
 */
export function segmentRowsFor(rowBytes: number, budget: number): number {
  let rows = 1024;
  while (rows < 2 ** 18 && 2 * (2 * rows) * (rowBytes + 16) <= budget) rows *= 2;
  return rows;
}

/** The error for a failed operation on the temporary file (its name says nothing of the data). */
function fileError(source: string, directory: string, what: string, error: unknown): DataFormatError {
  const code = (error as { code?: string }).code;
  return new DataFormatError(source, `could not ${what} the temporary file of the encoded rows in ${directory} (${describeOsError(code)}): set TMPDIR to a writable directory with room for them`);
}

/**
 * A temporary file being written with encoded rows, segment by segment; `finish` turns it into
 * `StoredRows` that read it back. `close` releases it (the data are then gone).
 */
export class EncodedRowsFile {
  readonly d: number;
  readonly precision: StoredPrecision;
  readonly segmentRows: number;
  /** Bytes of one segment in the file. */
  readonly segmentBytes: number;
  private readonly source: string;
  private readonly directory: string;
  private fd: number;
  private path: string | undefined;
  private readonly buffer: Uint8Array;
  private readonly xs: Float64Array | Float32Array;
  private readonly ys: Float64Array;
  private readonly ss: Float64Array;
  private filled = 0;
  private segments = 0;
  private rows = 0;
  private finished = false;
  /** The distinct labels appended (at most 65 kept: enough for the learners' label checks). */
  private readonly labels: number[] = [];

  constructor(options: EncodedRowsFileOptions) {
    const { d, precision, segmentRows } = options;
    if (!Number.isSafeInteger(d) || d < 1) throw new InvalidParameterError('d', d, 'an integer >= 1');
    if (precision !== 'float64' && precision !== 'float32') throw new InvalidParameterError('precision', precision, '"float64" or "float32"');
    if (!Number.isSafeInteger(segmentRows) || segmentRows < 1024 || (segmentRows & (segmentRows - 1)) !== 0) throw new InvalidParameterError('segmentRows', segmentRows, 'a power of two >= 1024');
    this.d = d;
    this.precision = precision;
    this.segmentRows = segmentRows;
    this.source = options.source;
    this.directory = options.directory ?? tmpdir();
    const xBytes = segmentRows * d * (precision === 'float64' ? 8 : 4);
    this.segmentBytes = xBytes + 16 * segmentRows;
    const data = new ArrayBuffer(this.segmentBytes);
    this.buffer = new Uint8Array(data);
    this.xs = precision === 'float64' ? new Float64Array(data, 0, segmentRows * d) : new Float32Array(data, 0, segmentRows * d);
    this.ys = new Float64Array(data, xBytes, segmentRows);
    this.ss = new Float64Array(data, xBytes + 8 * segmentRows, segmentRows);
    let dir: string;
    try {
      dir = mkdtempSync(join(this.directory, 'dpfit-rows-'));
    } catch (error) {
      throw fileError(this.source, this.directory, 'create', error);
    }
    const path = join(dir, 'rows.bin');
    try {
      this.fd = openSync(path, 'wx+', 0o600);
    } catch (error) {
      rmdirSync(dir);
      throw fileError(this.source, this.directory, 'create', error);
    }
    try {
      unlinkSync(path);
      rmdirSync(dir);
      this.path = undefined;
    } catch {
      // Windows: an open file keeps its name; removed on close and at exit.
      this.path = path;
      named.add(path);
      if (!exitHook) {
        exitHook = true;
        process.on('exit', removeNamed);
      }
    }
  }

  /** Rows appended so far. */
  get rowCount(): number {
    return this.rows;
  }

  /** The distinct labels appended (at most 65). */
  get labelValues(): readonly number[] {
    return this.labels;
  }

  /** Appends `rows` encoded rows (x: rows * d float64 values, stored in the file's precision; y: rows labels). */
  append(x: Float64Array, y: Float64Array, rows: number): void {
    if (this.finished) throw new Error('internal error: EncodedRowsFile.append after finish');
    const { d, segmentRows: S, xs, ys, ss, labels } = this;
    let r = 0;
    while (r < rows) {
      const take = Math.min(rows - r, S - this.filled);
      const at = this.filled;
      xs.set(x.subarray(r * d, (r + take) * d), at * d);
      for (let k = 0; k < take; k++) {
        const v = y[r + k];
        ys[at + k] = v;
        if (labels.length <= 64 && !labels.includes(v)) labels.push(v);
        // The stored row's squared norm, summed over j in order (`glm/clip-thresholds.ts`).
        let s = 0;
        for (let j = 0, o = (at + k) * d; j < d; j++) {
          const a = xs[o + j];
          s += a * a;
        }
        ss[at + k] = s;
      }
      this.filled += take;
      this.rows += take;
      r += take;
      if (this.filled === S) this.flush();
    }
  }

  /** Forgets every row (the reader starts again). */
  reset(): void {
    this.filled = 0;
    this.segments = 0;
    this.rows = 0;
    this.labels.length = 0;
  }

  private flush(): void {
    const offset = this.segments * this.segmentBytes;
    try {
      let done = 0;
      while (done < this.segmentBytes) done += writeSync(this.fd, this.buffer, done, this.segmentBytes - done, offset + done);
    } catch (error) {
      throw fileError(this.source, this.directory, 'write', error);
    }
    this.segments++;
    this.filled = 0;
  }

  /** Ends the writing (the last segment padded with zero rows) and returns the rows to read. */
  finish(): StoredRows {
    if (!this.finished) {
      if (this.filled > 0) {
        const { d, xs, ys, ss, filled } = this;
        xs.fill(0, filled * d);
        ys.fill(0, filled);
        ss.fill(0, filled);
        this.flush();
      }
      this.finished = true;
    }
    const { d, precision, segmentRows, segmentBytes, rows: n } = this;
    const segments = Math.ceil(n / segmentRows);
    const xBytes = segmentRows * d * (precision === 'float64' ? 8 : 4);
    const readSegment: StoredRows['readSegment'] = async (k, into) => {
      if (!Number.isSafeInteger(k) || k < 0 || k >= segments) throw new InvalidParameterError('segment', k, `an integer in [0, ${segments - 1}]`);
      if (into.x.byteLength < xBytes) throw new InvalidParameterError('into.x.byteLength', into.x.byteLength, `at least ${xBytes}`);
      if (into.y !== undefined && into.y.byteLength < 8 * segmentRows) throw new InvalidParameterError('into.y.byteLength', into.y.byteLength, `at least ${8 * segmentRows}`);
      if (into.norms !== undefined && into.norms.byteLength < 8 * segmentRows) throw new InvalidParameterError('into.norms.byteLength', into.norms.byteLength, `at least ${8 * segmentRows}`);
      const at = k * segmentBytes;
      // The reads at once (the thread pool copies them in parallel).
      await Promise.all([
        this.readAt(into.x, 0, xBytes, at),
        ...(into.y === undefined ? [] : [this.readAt(into.y, 0, 8 * segmentRows, at + xBytes)]),
        ...(into.norms === undefined ? [] : [this.readAt(into.norms, 0, 8 * segmentRows, at + xBytes + 8 * segmentRows)]),
      ]);
      return Math.min(segmentRows, n - k * segmentRows);
    };
    const file = { fd: this.fd, n, d, precision, segmentRows, segmentBytes, source: this.source };
    const readSync: StoredRows['readSync'] = (part, row, rows, into) => readStoredRowsSync({ ...file, fd: this.fd }, part, row, rows, into);
    return { precision, segmentRows, segmentBytes, segments, readSegment, readRows: (indices, x, y) => this.readRows(indices, x, y, n), readSync, file };
  }

  /** Reads `length` bytes at `position` into into[offset..]: all of them, or an error naming the data file. */
  private async readAt(into: Uint8Array, offset: number, length: number, position: number): Promise<void> {
    let done = 0;
    while (done < length) {
      const fd = this.fd;
      if (fd < 0) throw new DataFormatError(this.source, 'the temporary file of the encoded rows was closed before the run ended');
      const got = await new Promise<number>((resolve, reject) => {
        read(fd, into, offset + done, length - done, position + done, (error, bytesRead) => (error ? reject(fileError(this.source, this.directory, 'read', error)) : resolve(bytesRead)));
      });
      if (got === 0) throw new DataFormatError(this.source, 'the temporary file of the encoded rows ended early (it was truncated)');
      done += got;
    }
  }

  /** Rows at the ascending positions `indices` into x (float64, widened) and y: one read per run of consecutive rows of a segment. */
  private async readRows(indices: ArrayLike<number>, x: Float64Array, y: Float64Array, n: number): Promise<void> {
    const { d, segmentRows: S, segmentBytes } = this;
    const b = this.precision === 'float64' ? 8 : 4;
    const count = indices.length;
    if (x.length < count * d || y.length < count) throw new InvalidParameterError('x.length', x.length, `at least indices.length * d = ${count * d}`);
    // Every position checked before any read starts.
    for (let k = 0; k < count; k++) {
      const i = indices[k];
      if (!Number.isSafeInteger(i) || i < 0 || i >= n || (k > 0 && i <= indices[k - 1])) throw new InvalidParameterError(`indices[${k}]`, i, `ascending distinct integers in [0, ${n - 1}]`);
    }
    const reads: Promise<void>[] = [];
    for (let k = 0; k < count;) {
      const first = indices[k];
      const segment = Math.floor(first / S);
      let end = k + 1;
      while (end < count && indices[end] === indices[end - 1] + 1 && Math.floor(indices[end] / S) === segment) end++;
      const rows = end - k;
      const r = first - segment * S;
      const base = segment * segmentBytes;
      const at = k;
      reads.push((async () => {
        const bytes = new Uint8Array(rows * d * b);
        await this.readAt(bytes, 0, bytes.length, base + r * d * b);
        const values = b === 8 ? new Float64Array(bytes.buffer) : new Float32Array(bytes.buffer);
        x.set(values, at * d);
        const labels = new Uint8Array(y.buffer, y.byteOffset + at * 8, rows * 8);
        await this.readAt(labels, 0, rows * 8, base + S * d * b + r * 8);
      })());
      k = end;
    }
    await Promise.all(reads);
  }

  /** Closes the file: the rows are gone. */
  close(): void {
    if (this.fd >= 0) {
      try {
        closeSync(this.fd);
      } catch {
        // already closed
      }
      this.fd = -1;
    }
    if (this.path !== undefined) {
      try {
        unlinkSync(this.path);
        rmdirSync(join(this.path, '..'));
      } catch {
        // already gone
      }
      named.delete(this.path);
      this.path = undefined;
    }
  }
}
