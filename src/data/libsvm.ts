/**
 * LIBSVM / SVMlight sparse text: one row per line, `label index:value index:value ... [# comment]`,
 * indices 1-based and increasing, absent indices are 0. SVMlight's `qid:N` token is accepted and
 * ignored. Blank lines and lines starting with `#` are skipped. The result is a dense `Dataset`
 * with features named f1..fd, where d is `numFeatures` if given (a public constant: prefer it, the
 * largest index seen is a property of the data) or else the largest index in the file.
 *
 * Errors name the source, the line and the feature: `a.svm, line 7, column 'f12': 'x' is not a number`.
 *
 * Browser-safe.
 */
import { DataFormatError, InvalidParameterError } from '../errors.js';
import { optionNames, rejectUnknownOptions, requireInteger } from '../validate.js';
import type { Dataset } from './dataset.js';
import { parseDecimalBytes } from './parse-number.js';

export interface LibsvmOptions {
  /** Name used in error messages. Default "libsvm". */
  source?: string;
  /** Number of features d (public). Default: the largest index in the data. An index above it is an error. */
  numFeatures?: number;
  /** Map labels to {0, 1}: y = 1 where the label equals `positiveLabel`, else 0. Default: keep labels. */
  positiveLabel?: number;
}

const LF = 10;
const CR = 13;
const SPACE = 32;
const TAB = 9;
const HASH = 35;
const COLON = 58;

const LIBSVM_OPTIONS = optionNames<LibsvmOptions>({ source: true, numFeatures: true, positiveLabel: true });

/**
 * Parses LIBSVM text into a dense dataset.
 *
 * @example
 * parseLibsvm(new TextEncoder().encode('+1 1:0.5 3:1\n-1 2:2\n'), { positiveLabel: 1 });
 * // n = 2, d = 3, x = [0.5, 0, 1, 0, 2, 0], y = [1, 0]
 */
export function parseLibsvm(bytes: Uint8Array, options: LibsvmOptions = {}): Dataset {
  rejectUnknownOptions(options, LIBSVM_OPTIONS, 'parseLibsvm');
  if (!(bytes instanceof Uint8Array)) throw new InvalidParameterError('bytes', bytes, 'a Uint8Array');
  const source = options.source ?? 'libsvm';
  const limit = options.numFeatures === undefined ? Infinity : requireInteger('numFeatures', options.numFeatures, 1);
  const labels: number[] = [];
  const rowStart: number[] = [0];
  const indices: number[] = [];
  const values: number[] = [];
  let maxIndex = 0;
  let line = 1;
  let pos = 0;
  const end = bytes.length;
  const isBlank = (c: number): boolean => c === SPACE || c === TAB;
  while (pos < end) {
    // One line: [pos, eol).
    let eol = pos;
    while (eol < end && bytes[eol] !== LF && bytes[eol] !== CR) eol++;
    let stop = eol;
    for (let k = pos; k < eol; k++) {
      if (bytes[k] === HASH) {
        stop = k;
        break;
      }
    }
    let p = pos;
    while (p < stop && isBlank(bytes[p])) p++;
    if (p < stop) {
      // Label.
      let q = p;
      while (q < stop && !isBlank(bytes[q])) q++;
      const label = parseDecimalBytes(bytes, p, q);
      if (Number.isNaN(label)) throw new DataFormatError(source, 'the label is not a number', line, 'label');
      labels.push(label);
      p = q;
      let previous = 0;
      for (;;) {
        while (p < stop && isBlank(bytes[p])) p++;
        if (p >= stop) break;
        let colon = p;
        while (colon < stop && bytes[colon] !== COLON && !isBlank(bytes[colon])) colon++;
        if (colon >= stop || bytes[colon] !== COLON) throw new DataFormatError(source, 'a field is not an index:value pair', line);
        let q2 = colon + 1;
        while (q2 < stop && !isBlank(bytes[q2])) q2++;
        const isQid = colon - p === 3 && bytes[p] === 113 && bytes[p + 1] === 105 && bytes[p + 2] === 100; // "qid"
        if (!isQid) {
          const index = parseDecimalBytes(bytes, p, colon);
          if (!Number.isSafeInteger(index) || index < 1) throw new DataFormatError(source, 'a feature index is not an integer >= 1', line);
          if (index <= previous) throw new DataFormatError(source, 'feature indices must increase along a line', line);
          if (index > limit) throw new DataFormatError(source, `a feature index is above numFeatures ${limit}`, line);
          const value = parseDecimalBytes(bytes, colon + 1, q2);
          if (Number.isNaN(value)) throw new DataFormatError(source, 'a value is not a number', line, `f${index}`);
          previous = index;
          if (index > maxIndex) maxIndex = index;
          indices.push(index - 1);
          values.push(value);
        }
        p = q2;
      }
      rowStart.push(indices.length);
    }
    // Next line.
    pos = eol;
    if (pos < end) {
      pos += bytes[pos] === CR && pos + 1 < end && bytes[pos + 1] === LF ? 2 : 1;
      line++;
    }
  }
  const n = labels.length;
  if (n === 0) throw new DataFormatError(source, 'the file is empty (no data rows)');
  const d = limit === Infinity ? maxIndex : limit;
  if (d === 0) throw new DataFormatError(source, 'no row has a feature (give numFeatures for all-zero data)');
  const x = new Float64Array(n * d);
  for (let i = 0; i < n; i++) for (let k = rowStart[i]; k < rowStart[i + 1]; k++) x[i * d + indices[k]] = values[k];
  const positive = options.positiveLabel;
  const y = Float64Array.from(labels, (label) => (positive === undefined ? label : label === positive ? 1 : 0));
  return { x, y, n, d, featureNames: Array.from({ length: d }, (_, k) => `f${k + 1}`) };
}
