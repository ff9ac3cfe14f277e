/**
 * Which records of one set have a near-duplicate in another (`schema/records.ts` records): the
 * same value in every categorical column (equal slots, or equal aliases >= 0: the same category
 * up to its spelling), and numeric values within `tolerance` of each other in every numeric column
 * (|u - u'| <= tolerance as computed; a missing value matches only a missing value).
 *
 * The search is exact, not a heuristic: every pair within the tolerance is found. "The same
 * categorical value" is not transitive (`RED` is in the other slot with the alias of `red`: it is
 * the same as `red` and as any other value of the other slot, which are not the same as `red`),
 * so the index uses its transitive closure per column: the classes of slots joined by a value
 * that has both (a union-find over the slots and aliases present in either set). Values that are
 * the same are in one class; a class may hold values that are not (`red` and `blue!` when `RED`
 * is present), which the comparison of every candidate on every column rules out. Without
 * aliases, or with no value outside its category's slot, the classes are the slots. The
 * reference records are indexed by those classes and their cells floor(u / w) on a grid of width
 * w = 4 x tolerance over at most `MAX_GRID_COLUMNS` numeric columns. A value u' within tolerance
 * of u lies between u - t and u + t, t a hair above the tolerance (the margin covers the rounding
 * of u - t, and rounded division and floor are monotone), so its cell is one of the at most two
 * cells that interval meets: a probe record visits at most 2^G cells (G grid columns; 1.5^G on
 * average), and every candidate found there is compared on every column. Numeric columns beyond
 * the grid are compared on the candidates only (the fallback when there are many numeric
 * columns: fewer cells, more candidates, the same answer). Adult (32,561 x 16,281 rows, six
 * numeric columns) takes a few tens of milliseconds.
 *
 * Browser-safe.
 */
import { InvalidParameterError } from '../errors.js';
import type { SchemaRecords } from './schema/records.js';

/** At most this many numeric columns are gridded: a probe visits at most 2^8 = 256 cells. */
export const MAX_GRID_COLUMNS = 8;

/** Reference rows read to choose the grid columns (a choice of speed only: any choice gives the same answer). */
const GRID_CHOICE_ROWS = 10_000;

/** The cell of a value on the grid of width w, as a key part; missing values have their own cell. */
function cellOf(u: number, width: number): string {
  return Number.isNaN(u) ? 'm,' : `${Math.floor(u / width)},`;
}

/** The numeric columns to grid: those whose values fall into the most distinct cells (most selective). */
function gridColumns(reference: SchemaRecords, width: number): number[] {
  const k = reference.numericColumns;
  const rows = Math.min(reference.n, GRID_CHOICE_ROWS);
  const distinct = Array.from({ length: k }, (_, j) => {
    const cells = new Set<string>();
    for (let i = 0; i < rows; i++) cells.add(cellOf(reference.numeric[i * k + j], width));
    return { j, count: cells.size };
  });
  return distinct
    .sort((a, b) => b.count - a.count || a.j - b.j)
    .slice(0, MAX_GRID_COLUMNS)
    .map((c) => c.j);
}

/**
 * Per categorical column, the class of each slot present in either set: each value with an alias
 * joins its slot to its alias, so two values that are the same (equal slots, or equal aliases
 * >= 0) have one class. A listed value joins its own category's slot only: the slots of two
 * categories are joined only through a value outside its category's slot (`RED`, in the other
 * slot with the alias of `red`) or through two categories of one folded text.
 */
function slotClasses(sets: readonly SchemaRecords[], c: number): Map<number, number>[] {
  return Array.from({ length: c }, (_, j) => {
    // Union-find over slots (keys s) and aliases (keys -2 - a, below every slot, which is >= -1).
    const parent = new Map<number, number>();
    const find = (x: number): number => {
      let root = x;
      while (parent.has(root) && parent.get(root) !== root) root = parent.get(root) as number;
      // Path compression.
      while (x !== root) {
        const next = parent.get(x) as number;
        parent.set(x, root);
        x = next;
      }
      return root;
    };
    const slots = new Set<number>();
    for (const set of sets) {
      for (let i = 0; i < set.n; i++) {
        const slot = set.categorical[i * c + j];
        slots.add(slot);
        const alias = set.categoricalAlias === undefined ? -1 : set.categoricalAlias[i * c + j];
        if (alias < 0) continue;
        const a = find(slot);
        const b = find(-2 - alias);
        if (a !== b) parent.set(b, a);
      }
    }
    return new Map([...slots].map((slot) => [slot, find(slot)] as const));
  });
}

function classesKey(records: SchemaRecords, row: number, classes: readonly Map<number, number>[]): string {
  const c = records.categoricalColumns;
  let key = '';
  for (let j = 0; j < c; j++) key += `${classes[j].get(records.categorical[row * c + j]) as number},`;
  return key;
}

/** Whether row a of `x` and row b of `y` hold the same value in every categorical column: equal slots, or equal aliases (>= 0). */
function categoricalSame(x: SchemaRecords, a: number, y: SchemaRecords, b: number): boolean {
  const c = x.categoricalColumns;
  for (let j = 0; j < c; j++) {
    if (x.categorical[a * c + j] === y.categorical[b * c + j]) continue;
    const u = x.categoricalAlias === undefined ? -1 : x.categoricalAlias[a * c + j];
    const v = y.categoricalAlias === undefined ? -1 : y.categoricalAlias[b * c + j];
    if (u < 0 || u !== v) return false;
  }
  return true;
}

/** Whether row a of `x` and row b of `y` are within the tolerance on every numeric column. */
function numericClose(x: SchemaRecords, a: number, y: SchemaRecords, b: number, tolerance: number): boolean {
  const k = x.numericColumns;
  for (let j = 0; j < k; j++) {
    const u = x.numeric[a * k + j];
    const v = y.numeric[b * k + j];
    if (Number.isNaN(u) || Number.isNaN(v)) {
      if (Number.isNaN(u) !== Number.isNaN(v)) return false;
    } else if (!(Math.abs(u - v) <= tolerance)) return false;
  }
  return true;
}

/**
 * For each row of `probe`, 1 when some row of `reference` is within `tolerance` of it (the same
 * value in every categorical column, every numeric value within the tolerance), else 0. Both must
 * have the same columns (records of one schema). `tolerance` > 0; values are expected in [0, 1].
 */
export function nearDuplicateRows(reference: SchemaRecords, probe: SchemaRecords, tolerance: number): Uint8Array {
  if (!(tolerance >= 1e-12 && tolerance <= 1)) throw new InvalidParameterError('tolerance', tolerance, 'in [1e-12, 1]');
  if (reference.numericColumns !== probe.numericColumns || reference.categoricalColumns !== probe.categoricalColumns) {
    throw new InvalidParameterError('probe', `${probe.numericColumns} numeric and ${probe.categoricalColumns} categorical columns`, `the reference's ${reference.numericColumns} and ${reference.categoricalColumns}`);
  }
  const width = 4 * tolerance;
  const k = reference.numericColumns;
  const grid = gridColumns(reference, width);
  const classes = slotClasses([reference, probe], reference.categoricalColumns);
  const index = new Map<string, number[]>();
  for (let i = 0; i < reference.n; i++) {
    let key = classesKey(reference, i, classes);
    for (const j of grid) key += cellOf(reference.numeric[i * k + j], width);
    const rows = index.get(key);
    if (rows === undefined) index.set(key, [i]);
    else rows.push(i);
  }
  const found = new Uint8Array(probe.n);
  for (let i = 0; i < probe.n; i++) {
    // Per grid column, the key parts of the (one or two) cells a value within the tolerance can be in.
    const cells = grid.map((j): string[] => {
      const u = probe.numeric[i * k + j];
      if (Number.isNaN(u)) return [cellOf(u, width)];
      // Just above the tolerance: covers the rounding of u -/+ t, so every value the comparison accepts is inside.
      const t = tolerance * (1 + 1e-6) + 4 * Number.EPSILON * Math.abs(u);
      const low = Math.floor((u - t) / width);
      const high = Math.floor((u + t) / width);
      return low === high ? [`${low},`] : [`${low},`, `${high},`];
    });
    const search = (g: number, key: string): boolean => {
      if (g === grid.length) {
        const rows = index.get(key);
        return rows !== undefined && rows.some((r) => categoricalSame(reference, r, probe, i) && numericClose(reference, r, probe, i, tolerance));
      }
      return cells[g].some((cell) => search(g + 1, key + cell));
    };
    found[i] = search(0, classesKey(probe, i, classes)) ? 1 : 0;
  }
  return found;
}
