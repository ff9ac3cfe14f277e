/**
 * Bad data files whose every private value is a unique marker, for the tests that no message
 * carries a value of the data (docs/threat-model.md, "Messages"). Text cells hold `SECRET` and a
 * seven-digit code, numbers hold the code in their digits (`37.7123456`, out of range
 * `987123456.321`), header cells that are not the schema's hold markers too; what is public (the
 * schema's column names, categories and label values) is not marked. `leaks(text)` lists the
 * markers of a case that a text contains, as written in the file or as JavaScript prints the number.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { seededRng } from '../../src/random/rng.js';
import type { Rng } from '../../src/random/rng.js';

export type MissingPolicy = { numeric: 'error' | 'dropRow' | 'fill'; categorical: 'error' | 'dropRow' | 'other'; label: 'error' | 'dropRow' };
export type RowTransform = 'normalize' | 'scale' | 'clip' | 'none';

/** What is wrong with a case's file. */
export const DEFECTS = [
  'none', 'headerless', 'wrongHeader', 'duplicateHeader', 'badNumber', 'nonFiniteText', 'unknownCategory', 'outOfRange', 'badLabel', 'missing',
  'empty', 'headerOnly', 'raggedLong', 'raggedShort', 'badEncoding', 'quoteJunk', 'extraColumn',
] as const;
export type Defect = (typeof DEFECTS)[number];

export interface MarkedCase {
  readonly defect: Defect;
  readonly policy: MissingPolicy;
  readonly rowTransform: RowTransform;
  readonly schema: Record<string, unknown>;
  readonly bytes: Buffer;
  /** Every marker written in the file (text as written; numbers also as `String(Number(text))`). */
  readonly markers: readonly string[];
  /** Texts of the file that are values but cannot be unique (NaN, Infinity, 1e999): a message must not hold them either. */
  readonly literals: readonly string[];
}

const NONFINITE = ['NaN', 'Infinity', '-Infinity', '1e999', '-1e999', 'inf'];

/** Seven-digit codes, all different within a process: 7, then a counter times 37 plus a random rest. */
let nextCode = 0;
function code(rng: Rng): string {
  nextCode++;
  return `7${String(nextCode * 37 + (rng.nextUint32() % 37)).padStart(6, '0')}`;
}

/** One bad file with its schema, drawn from `seed`. */
export function markedCase(seed: number, defect: Defect): MarkedCase {
  const rng = seededRng(seed);
  const pick = <T>(values: readonly T[]): T => values[rng.nextUint32() % values.length];
  const policy: MissingPolicy = { numeric: pick(['error', 'dropRow', 'fill'] as const), categorical: pick(['error', 'dropRow', 'other'] as const), label: pick(['error', 'dropRow'] as const) };
  const rowTransform = pick(['normalize', 'scale', 'clip', 'none'] as const);
  const markers: string[] = [];
  const literals: string[] = [];
  const text = (): string => {
    const m = `SECRET${code(rng)}`;
    markers.push(m);
    return m;
  };
  const inRange = (): string => {
    const m = `${10 + (rng.nextUint32() % 60)}.${code(rng)}`;
    markers.push(m, String(Number(m)));
    return m;
  };
  const outOfRange = (): string => {
    const m = `98${code(rng)}.321`;
    markers.push(m, String(Number(m)));
    return m;
  };
  const schema: Record<string, unknown> = {
    version: 1,
    columns: [
      { name: 'age', type: 'numeric', lower: 0, upper: 80, missing: policy.numeric, ...(policy.numeric === 'fill' ? { fillValue: 40 } : {}) },
      { name: 'hours', type: 'numeric', lower: 0, upper: 80, scale: 'symmetric', missing: policy.numeric, ...(policy.numeric === 'fill' ? { fillValue: 40 } : {}) },
      { name: 'city', type: 'categorical', categories: ['north', 'south'], missing: policy.categorical },
      { name: 'label', type: 'label', positive: ['yes'], negative: ['no'], missing: policy.label },
    ],
    rowTransform,
    ...(rowTransform === 'clip' ? { clipNorm: 1 } : {}),
  };
  const header = ['age', 'hours', 'city', 'label'];
  const rows: string[][] = [];
  for (let i = 0; i < 40; i++) rows.push([inRange(), inRange(), pick(['north', 'south']), i % 3 === 0 ? 'yes' : 'no']);
  const row = (): string[] => rows[1 + (rng.nextUint32() % (rows.length - 1))];
  const column = (): number => rng.nextUint32() % 4;
  let lines: string[][] = [header, ...rows];
  let raw: Buffer | undefined;
  switch (defect) {
    case 'none':
      break;
    case 'headerless':
      // The schema expects a header: the first record is read as one.
      lines = rows.map((r) => r.map((cell, j) => (j === 2 ? text() : cell)));
      break;
    case 'wrongHeader':
      lines = [header.map((name, j) => (j === column() || j === 0 ? text() : name)), ...rows];
      break;
    case 'duplicateHeader': {
      const twice = text();
      lines = [[...header, twice, twice], ...rows.map((r) => [...r, inRange(), inRange()])];
      break;
    }
    case 'badNumber':
      for (let k = 0; k < 3; k++) {
        const digits = code(rng);
        const cell = pick([`SECRET${digits}`, `0x${digits}`, `"1,${digits}"`, `${digits}abc`, `${digits}e`]);
        markers.push(digits, cell.replace(/"/g, ''));
        row()[rng.nextUint32() % 2] = cell;
      }
      break;
    case 'nonFiniteText': {
      const value = pick(NONFINITE);
      literals.push(value);
      row()[rng.nextUint32() % 2] = value;
      break;
    }
    case 'unknownCategory':
      for (let k = 0; k < 5; k++) row()[2] = text();
      break;
    case 'outOfRange':
      for (let k = 0; k < 5; k++) row()[rng.nextUint32() % 2] = pick([outOfRange(), `-${outOfRange()}`]);
      break;
    case 'badLabel':
      row()[3] = pick([text(), inRange(), 'YES ']);
      break;
    case 'missing':
      for (let k = 0; k < 4; k++) row()[column()] = pick(['', '?']);
      break;
    case 'empty':
      raw = Buffer.alloc(0);
      break;
    case 'headerOnly':
      lines = [header];
      break;
    case 'raggedLong':
      row().push(text(), inRange());
      break;
    case 'raggedShort':
      row().splice(1 + (rng.nextUint32() % 3));
      break;
    case 'badEncoding':
    case 'quoteJunk':
    case 'extraColumn':
      break;
  }
  if (defect === 'extraColumn') lines = [[...header, text()], ...rows.map((r) => [...r, pick([text(), inRange()])])];
  if (defect === 'quoteJunk') row()[column()] = `"${text()}"${text()}`;
  if (raw === undefined) {
    const csv = `${lines.map((r) => r.join(',')).join('\n')}\n`;
    raw = Buffer.from(csv, 'utf8');
    if (defect === 'badEncoding') {
      // A cell of two markers with a Latin-1 byte (0xE9, not valid UTF-8) between them.
      const first = text();
      const second = text();
      row()[pick([0, 2, 3])] = `${first}${second}`;
      const csv2 = `${lines.map((r) => r.join(',')).join('\n')}\n`;
      const at = csv2.indexOf(second);
      raw = Buffer.concat([Buffer.from(csv2.slice(0, at), 'utf8'), Buffer.from([0xe9]), Buffer.from(csv2.slice(at), 'utf8')]);
    }
  }
  return { defect, policy, rowTransform, schema, bytes: raw, markers, literals };
}

/** Writes a case to dir/NAME.csv and dir/NAME.schema.json. */
export function writeCase(dir: string, name: string, c: MarkedCase): { data: string; schema: string } {
  const data = join(dir, `${name}.csv`);
  const schema = join(dir, `${name}.schema.json`);
  writeFileSync(data, c.bytes);
  writeFileSync(schema, JSON.stringify(c.schema));
  return { data, schema };
}

/** The markers (and non-unique literals, as whole words) of `c` that `text` contains. */
export function leaks(text: string, c: Pick<MarkedCase, 'markers' | 'literals'>): string[] {
  const found = c.markers.filter((m) => m !== '' && text.includes(m));
  for (const literal of c.literals) if (new RegExp(`(^|[^A-Za-z0-9.])${literal.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}($|[^A-Za-z0-9])`, 'i').test(text)) found.push(literal);
  return found;
}
