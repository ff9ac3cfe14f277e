/**
 * DP-GD inside a SQL engine (DuckDB, PostgreSQL, PostgreSQL with postgres_fdw partitions): each
 * step is ONE aggregate query that returns the sum of the clipped per-example gradients; dpfit
 * adds the noise (never the database) and updates theta. The rows never leave the database.
 *
 * Encoding. The public schema's encoding (clip to [lower, upper], scale, log1p, bins, one-hot
 * with an "other" slot, fill, dropRow, the label, the row transform, the intercept) is written
 * in SQL (`schemaEncodingSql`) with the same formulas and the same constants (computed by dpfit
 * and sent as exact literals). The features may still differ from dpfit's in the last bits
 * (log1p is ln(1 + v) in SQL; normalisation skips `transforms.ts`' final guard), which changes no
 * guarantee: the privacy argument below bounds the gradients the database computes, whatever
 * the features are. Rows that `loadDataset` would refuse (a missing value under "error", an
 * unknown label, a non-finite number, one class only) are refused by a check query first.
 *
 * Sensitivity (replace-one, as `dp-gd.ts`). Let a_i be the clipped gradient of row i as the
 * engine computes it: c_i f_i with c_i clamped to [-t_i, t_i], t_i = K / sqrt(ss_i),
 * K = C (1 - 2^-48) (`CLIP_SAFETY`, sent as a literal), ss_i the computed squared norm of the
 * computed features f_i. Whatever order the engine sums ss_i in (gamma_d, Higham 2002 Sec. 3.1)
 * and however its sqrt, division and products round (one rounding each), ||a_i|| <= B =
 * C (1 + (d + 8) u), u = 2^-53 (the same bound as `clippedSumRoundingBound`'s terms). A row's
 * a_i depends on that row alone (deterministic per-row arithmetic), so replacing one row moves
 * the exact sum of the a_i by <= 2B. The engine then adds the n terms in an order of its own
 * (parallel workers, partial aggregates of partitions on other servers, combined in any order):
 * any such summation is a tree of additions of height <= n - 1, so each coordinate's error is
 * <= gamma_{n-1} sum_i |a_ij| (Higham 2002, Sec. 4.2, eq. (4.4) for any order), and in L2 the
 * error is <= gamma_{n-1} sum_i ||a_i|| <= gamma_n n B. The computed sum's sensitivity is
 * therefore <= 2B + 2 gamma_n n B, paid as `roundingSlack` = 2 gamma_n n B + 2 (B - C) on top of
 * the exact 2C (`sqlSumRoundingSlack`). The bound assumes an engine whose SUM over float8/DOUBLE
 * uses IEEE double additions (PostgreSQL's float8 sum and its combine function; DuckDB's SUM),
 * or anything at least as accurate (Kahan's and pairwise sums are), and no overflow (every term
 * is <= B in norm). It grows like n^2 u C: 2e-4 C at n = 1e6, which costs ~1e-4 of the noise.
 *
 * postgres_fdw partitions (several servers as one dataset). The fenced query runs unchanged
 * against a partitioned table whose partitions are foreign tables, but (PostgreSQL 15, EXPLAIN
 * VERBOSE) its OFFSET 0 fences keep postgres_fdw from shipping the aggregate: the remote rows
 * travel to the coordinating server (still inside the database, never to dpfit). The push-down
 * form (`partitionKey`, `partitionSetupSql`, `partitionedGradientSumSql`) ships it. Each server
 * holds a one-row table T (theta as t0..t{d-1}, the clip constant k, the loss's code, the step's
 * nonce), a view T_input of its rows (the server's data) and a view T_rows of them encoded,
 * fenced by OFFSET 0 inside the view, with
 * per row: z = f . theta, ss = f0 f0 + ... + f{d-1} f{d-1}, t = k / sqrt(ss), g = the loss
 * derivative at (z, y), c = clamp(g, -t, t) and whether it clipped, so that each server computes a
 * row's O(d) values once. The coordinator holds T_servers, whose children are foreign tables on
 * every server's T, and a table partitioned by the key whose partitions are foreign tables on the
 * views. Each step is one transaction: `UPDATE T_servers SET t0 = ..., k = ..., loss = ...,
 * nonce = ...` (postgres_fdw ships one direct UPDATE per server), then `SELECT sum(c * f0), ...,
 * key FROM (query) GROUP BY key` (its theta UPDATE, then the transaction made READ ONLY for the
 * statement holding the user's query) with enable_partitionwise_aggregate, no fences and only CASE
 * (postgres_fdw 15 ships neither least/greatest/COALESCE nor subqueries), so that every
 * partition's aggregate is one remote query (`Remote SQL: SELECT sum(...) ... GROUP BY`, checked
 * in test/learners/sql/train-sql.test.ts) and only d + 5 numbers per server cross. Per row the step does one
 * product per sum and, once, the checks below (O(d)); the fenced form's cost per row, spread over
 * the servers (bench/out-of-core-sql.ts).
 *
 * Privacy of this form: dpfit trusts nothing of the views or of the theta tables, it checks them.
 * Per-row checks alone are not enough: PostgreSQL may evaluate an inlined view's column once per
 * USE (a function declared IMMUTABLE can return one value in the sums and another in the check),
 * and a view may pass every row check while each row's value depends on other rows. So before the
 * first step `sql-partition-check.ts` locks every server's view and theta table for the run and
 * checks in the servers' catalogs that each view is exactly dpfit's (`partitionViewSql`: fenced
 * layers of built-in expressions of one row of the server's T_input and the one theta row) and
 * that `query` reads only such partitions with built-in, non-volatile functions (proof there).
 * Then per row i the step reads one value of each column and computes, in the same query,
 * r_i = f_i0 f_i0 + ... + f_i,d-1 f_i,d-1 (the view's order) and the check
 * r_i <= ss_i <= the largest double and |c_i| <= fl(K / fl(sqrt(ss_i))) (0 when ss_i = 0), K
 * dpfit's literal (PostgreSQL orders NaN above every number and a comparison with NULL is not
 * true: NaN, infinite and NULL values fail). If any row fails, dpfit refuses the step: it throws
 * before the sums are used, so nothing is trained further or released. Otherwise ss_i and r_i are
 * finite (so is f_i), and fl(K / fl(sqrt(ss_i))) <= fl(K / fl(sqrt(r_i))) (correctly rounded sqrt
 * and division are monotone): |c_i| <= fl(K / fl(sqrt(r_i))) with r_i a computed sum of squares of
 * f_i, so a_i = (fl(c_i f_i0), ..., fl(c_i f_i,d-1)) has ||a_i|| <= (1 + u) |c_i| ||f_i|| <= B
 * exactly as above (the test checks it on views returning NaN, infinities, NULL and too large c
 * and too small ss). An honest view passes: its ss is r_i bit for bit (same expression, same
 * order) and its c is clamped to k / sqrt(ss) with k = K. What the view computes beyond that (z,
 * g, which rows clipped) changes the model or the diagnostics, never the bound; dpfit still
 * refuses a row whose nonce is not this step's (its view read a theta table this step did not
 * set: another run sharing T, whose UPDATE waits on this step's row locks or fails, or a view
 * wired to another table) and a step whose row count differs from the check query's n (the slack
 * was planned for n). The sum is per partition on its server, then the partials are added by
 * dpfit: still one summation tree over the n terms, so `sqlSumRoundingSlack` covers it unchanged.
 *
 * The step's noise is then planned exactly as in memory (`setUpDpGd` with this slack), so the
 * release and its event are those of `trainDpGd`; the model equals the in-memory one for the
 * same seed whenever both sums round to the same grid point and the slightly larger slack leaves
 * the grid plan unchanged (both overwhelmingly likely; the tests check it).
 */
import { randomInt } from 'node:crypto';
import { DataFormatError, InvalidParameterError } from '../../errors.js';
import { labelColumn, schemaEncodedNormBound, schemaFeatureNames } from '../../data/schema/bounds.js';
import type { CategoricalColumnSpec, NumericColumnSpec, Schema } from '../../data/schema/types.js';
import { numericEncodedWidth } from '../../data/schema/numeric-encoding.js';
import { DP_GD_OPTIONS, type DpGdOptions, dpGdRunEvent, dpGdUpdate, finishDpGd, setUpDpGd } from '../gradient/dp-gd.js';
import type { DpEvent } from '../../accounting/events/types.js';
import type { TrainResult } from '../training.js';
import { CLIP_SAFETY, SMALLEST_CLIP_ROW_NORM } from '../glm/clipped-gradient.js';
import { checkPartitionedViews, type ThetaColumn } from './sql-partition-check.js';
import { inTransaction, isPostgresRunner, subquery, type PostgresRunner, type SqlCell, type SqlRunner } from '../../data/node/sql-runner.js';
import { optionNames, rejectUnknownOptions } from '../../validate.js';

export type { SqlCell, SqlRunner } from '../../data/node/sql-runner.js';

const U = Number.EPSILON / 2;

/** A double as a SQL literal that every engine parses back to the same double (shortest round-trip text). */
export function sqlNumber(v: number): string {
  if (!Number.isFinite(v)) throw new InvalidParameterError('value', v, 'a finite number (a SQL literal)');
  const text = Object.is(v, -0) ? '0' : String(v);
  return `CAST(${text} AS DOUBLE PRECISION)`;
}

export function sqlText(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

export function sqlIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The public slack of a gradient sum computed by a SQL engine over n rows (module comment). */
export function sqlSumRoundingSlack(n: number, clipNorm: number, d: number): number {
  if (!(n * U < 0.5)) throw new InvalidParameterError('rows', n, '< 2^52 (the rounding bound of the SQL sum)');
  const termBound = clipNorm * (1 + (d + 8) * U);
  const gamma = (n * U) / (1 - n * U);
  return (2 * gamma * n * termBound + 2 * (termBound - clipNorm)) * (1 + 16 * U);
}

/** The encoded rows of a query, in SQL: columns f0..f{d-1} and y, and the checks the in-memory reader makes. */
export interface EncodingSql {
  /** SELECT f0, ..., f{d-1}, y FROM ... (rows dropped by "dropRow" policies as zero rows: `data/dropped-rows.ts`). */
  readonly rows: string;
  /** One row: the number of rows, then for each check the number of rows that fail it. */
  readonly checks: string;
  readonly checkNames: readonly string[];
  readonly d: number;
  readonly featureNames: readonly string[];
}

function numericSource(spec: { name: string }): string {
  return `CAST(${sqlIdentifier(spec.name)} AS DOUBLE PRECISION)`;
}

/** The numeric features of a column: the value feature and/or its bins, as SQL expressions of the clipped value. */
function numericFeatures(spec: NumericColumnSpec, clippedValue: string): string[] {
  const out: string[] = [];
  if (spec.encode !== 'bins') {
    const t = (v: string | number): string => (spec.transform === 'log1p' ? `ln(1 + ${typeof v === 'number' ? sqlNumber(v) : v})` : typeof v === 'number' ? sqlNumber(v) : v);
    const lo = spec.transform === 'log1p' ? Math.log1p(spec.lower) : spec.lower;
    const hi = spec.transform === 'log1p' ? Math.log1p(spec.upper) : spec.upper;
    const tv = t(clippedValue);
    if (spec.scale === 'unit') out.push(`greatest(${sqlNumber(0)}, least(${sqlNumber(1)}, (${tv} - ${sqlNumber(lo)}) / ${sqlNumber(hi - lo)}))`);
    else if (spec.scale === 'symmetric') out.push(`greatest(${sqlNumber(-1)}, least(${sqlNumber(1)}, (${sqlNumber(2)} * (${tv} - ${sqlNumber(lo)})) / ${sqlNumber(hi - lo)} - ${sqlNumber(1)}))`);
    else out.push(`greatest(${sqlNumber(lo)}, least(${sqlNumber(hi)}, ${tv}))`);
  }
  if (spec.bins !== undefined) {
    const cuts = spec.bins;
    for (let k = 0; k <= cuts.length; k++) {
      const conditions = [k > 0 ? `${clippedValue} >= ${sqlNumber(cuts[k - 1])}` : '', k < cuts.length ? `${clippedValue} < ${sqlNumber(cuts[k])}` : ''].filter((c) => c !== '');
      out.push(`CASE WHEN ${conditions.join(' AND ')} THEN ${sqlNumber(1)} ELSE ${sqlNumber(0)} END`);
    }
  }
  return out;
}

/**
 * The schema's encoding of `query`'s rows in SQL (module comment). Missing: SQL NULL and the
 * schema's missing tokens (trimmed text). Binary and numeric labels; multi-class labels are
 * refused (train them from rows read by dpfit instead).
 */
export function schemaEncodingSql(schema: Schema, query: string): EncodingSql {
  return encodingFrom(schema, subquery(query));
}

/** `schemaEncodingSql` of the rows of `from`, a FROM item: the user's query as a `subquery`, or a relation (the servers' views). */
function encodingFrom(schema: Schema, from: string): EncodingSql {
  const label = labelColumn(schema);
  if (label.classes !== undefined) throw new InvalidParameterError('--db', 'a multi-class label', 'a binary or numeric label for the SQL push-down (one-vs-rest needs the rows read by dpfit: leave out --method dpgd)');
  const missingTokens = [...new Set((schema.csv?.missing ?? ['', '?']).map((t) => t.trim()))];
  const isMissing = (name: string): string => `(${sqlIdentifier(name)} IS NULL${missingTokens.length > 0 ? ` OR trim(CAST(${sqlIdentifier(name)} AS VARCHAR)) IN (${missingTokens.map(sqlText).join(', ')})` : ''})`;
  const numericMissing = (name: string): string => `${sqlIdentifier(name)} IS NULL`;
  const features: string[] = [];
  const drops: string[] = [];
  const checks: { name: string; sql: string }[] = [];
  const columns = schema.columns.filter((c): c is NumericColumnSpec | CategoricalColumnSpec => c.type === 'numeric' || c.type === 'categorical');
  for (const spec of columns) {
    if (spec.type === 'numeric') {
      const v = numericSource(spec);
      checks.push({ name: `column '${spec.name}': a non-finite number`, sql: `${v} IS NOT NULL AND abs(${v}) > ${sqlNumber(Number.MAX_VALUE)}` });
      if (spec.missing === 'dropRow') drops.push(`NOT (${numericMissing(spec.name)})`);
      if (spec.missing === 'error') checks.push({ name: `column '${spec.name}': missing value (the schema says "missing": "error")`, sql: numericMissing(spec.name) });
      const filled = spec.missing === 'fill' ? `COALESCE(${v}, ${sqlNumber(spec.fillValue as number)})` : v;
      const clipped = `least(greatest(${filled}, ${sqlNumber(spec.lower)}), ${sqlNumber(spec.upper)})`;
      features.push(...numericFeatures(spec, clipped));
      continue;
    }
    if (spec.missing === 'dropRow') drops.push(`NOT ${isMissing(spec.name)}`);
    if (spec.missing === 'error') checks.push({ name: `column '${spec.name}': missing value (the schema says "missing": "error")`, sql: isMissing(spec.name) });
    const text = `trim(CAST(${sqlIdentifier(spec.name)} AS VARCHAR))`;
    spec.categories.forEach((category) => features.push(`CASE WHEN NOT ${isMissing(spec.name)} AND ${text} = ${sqlText(category)} THEN ${sqlNumber(1)} ELSE ${sqlNumber(0)} END`));
    features.push(`CASE WHEN ${isMissing(spec.name)} OR ${text} NOT IN (${spec.categories.map(sqlText).join(', ')}) THEN ${sqlNumber(1)} ELSE ${sqlNumber(0)} END`);
  }
  // The label: 1 / 0 (or -1) for a binary label, the clipped value for a numeric one.
  let y: string;
  const labelMissing = label.positive !== undefined ? isMissing(label.name) : numericMissing(label.name);
  if (label.missing === 'dropRow') drops.push(`NOT ${labelMissing}`);
  else checks.push({ name: `column '${label.name}': missing label (the schema says "missing": "error")`, sql: labelMissing });
  if (label.positive !== undefined) {
    const text = `trim(CAST(${sqlIdentifier(label.name)} AS VARCHAR))`;
    const list = (values: readonly (string | number)[]) => values.map((v) => sqlText(String(v))).join(', ');
    const negative = label.encoding === 'plusMinusOne' ? -1 : 0;
    y = `CASE WHEN ${text} IN (${list(label.positive)}) THEN ${sqlNumber(1)} WHEN ${text} IN (${list(label.negative as readonly (string | number)[])}) THEN ${sqlNumber(negative)} END`;
    checks.push({ name: `column '${label.name}': a label value that is neither positive nor negative`, sql: `NOT ${labelMissing} AND (${y}) IS NULL` });
  } else {
    const v = numericSource(label);
    checks.push({ name: `column '${label.name}': a non-finite label`, sql: `${v} IS NOT NULL AND abs(${v}) > ${sqlNumber(Number.MAX_VALUE)}` });
    y = `least(greatest(${v}, ${sqlNumber(label.lower as number)}), ${sqlNumber(label.upper as number)})`;
  }
  const d0 = features.length;
  const expected = columns.reduce((w, c) => w + (c.type === 'numeric' ? numericEncodedWidth(c) : c.categories.length + 1), 0);
  if (d0 !== expected) throw new DataFormatError('schema', `the SQL encoding has ${d0} features, the schema ${expected} (a dpfit bug)`);
  // A record dropped for a missing value is a zero row (data/dropped-rows.ts): every feature 0, the
  // intercept too (column kept = 0), the label the schema's zero-row label; n counts it.
  const keep = drops.length > 0 ? drops.join(' AND ') : undefined;
  const zeroLabel = label.positive !== undefined ? (label.encoding === 'plusMinusOne' ? -1 : 0) : Math.min(label.upper as number, Math.max(label.lower as number, 0));
  const kept = (expression: string, otherwise: number): string => (keep === undefined ? expression : `CASE WHEN ${keep} THEN ${expression} ELSE ${sqlNumber(otherwise)} END`);
  const raw = features.map((f, j) => `${kept(f, 0)} AS e${j}`).join(', ');
  // OFFSET 0 fences each layer: PostgreSQL would otherwise inline it and recompute it per use.
  const base = `SELECT ${raw}, ${kept(y, zeroLabel)} AS y${keep === undefined ? '' : `, ${kept(sqlNumber(1), 0)} AS kept`} FROM ${from} AS q OFFSET 0`;
  const e = (j: number) => `e${j}`;
  let transformed: string[];
  switch (schema.rowTransform) {
    case 'normalize':
    case 'clip': {
      const max = d0 === 1 ? `abs(${e(0)})` : `greatest(${Array.from({ length: d0 }, (_, j) => `abs(${e(j)})`).join(', ')})`;
      const scaledSquares = Array.from({ length: d0 }, (_, j) => `(${e(j)} / m) * (${e(j)} / m)`).join(' + ');
      const target = schema.rowTransform === 'normalize' ? sqlNumber(1) : sqlNumber(schema.clipNorm as number);
      // As transforms.ts: divide by the largest |value|, then by the norm of the result, times the target.
      const inner = `SELECT *, CASE WHEN m > 0 THEN sqrt(${scaledSquares}) ELSE ${sqlNumber(0)} END AS sn FROM (SELECT *, ${max} AS m FROM (${base}) AS b OFFSET 0) AS mm OFFSET 0`;
      const rescale = schema.rowTransform === 'normalize' ? 'sn > 0' : `m * sn > ${target}`;
      transformed = Array.from({ length: d0 }, (_, j) => `CASE WHEN ${rescale} THEN ((${e(j)} / m) / sn) * ${target} ELSE ${e(j)} END`);
      return finish(`(${inner}) AS nn`);
    }
    case 'scale': {
      const factor = 1 / schemaEncodedNormBound(schema);
      transformed = Array.from({ length: d0 }, (_, j) => `${e(j)} * ${sqlNumber(factor)}`);
      return finish(`(${base}) AS b`);
    }
    case 'none':
      transformed = Array.from({ length: d0 }, (_, j) => e(j));
      return finish(`(${base}) AS b`);
  }
  function finish(layers: string): EncodingSql {
    const intercept = schema.intercept === null ? undefined : keep === undefined ? sqlNumber(schema.intercept) : `CASE WHEN kept = 1 THEN ${sqlNumber(schema.intercept)} ELSE ${sqlNumber(0)} END`;
    const all = intercept === undefined ? transformed : [...transformed, intercept];
    const rows = `SELECT ${all.map((f, j) => `${f} AS f${j}`).join(', ')}, y FROM ${layers} OFFSET 0`;
    const checkSql = `SELECT count(*)${checks.map((c) => `, count(*) FILTER (WHERE ${c.sql})`).join('')}, count(*) FILTER (WHERE NOT (${drops.length > 0 ? drops.join(' AND ') : 'TRUE'})) FROM ${from} AS q`;
    return {
      rows,
      checks: checkSql,
      checkNames: checks.map((c) => c.name),
      d: all.length,
      featureNames: schemaFeatureNames(schema),
    };
  }
}

/**
 * The clip threshold t = k / max(sqrt(ss), 2^-500) in SQL, k a literal or a column: as
 * `clipThreshold` (`SMALLEST_CLIP_ROW_NORM`: a squared norm below 2^-1000 may have underflowed),
 * written with CASE only, which postgres_fdw ships.
 */
function thresholdSql(k: string): string {
  return `CASE WHEN ss > ${sqlNumber(SMALLEST_CLIP_ROW_NORM ** 2)} THEN ${k} / sqrt(ss) ELSE ${k} / ${sqlNumber(SMALLEST_CLIP_ROW_NORM)} END`;
}

/**
 * @internal The columns c = clamp(g, -t, t) and clipped (1 when the clamp bit), from columns g and t.
 * A NaN g (a margin that overflowed) is ordered above every number by both engines (PostgreSQL's
 * float8 and DuckDB's DOUBLE), so it becomes c = t, counted as clipped: within the bound, though
 * not the +0 of the in-memory clamps (`per-example.ts`); tested on DuckDB in `train-sql.test.ts`.
 */
export const CLAMP_SQL = 'CASE WHEN g > t THEN t WHEN g < -t THEN -t ELSE g END AS c, CASE WHEN g > t OR g < -t THEN 1 ELSE 0 END AS clipped';

/** The loss derivative g(z, y) in SQL (columns z and y), as the in-memory losses compute it. */
function lossDerivativeSql(lossName: string): string {
  if (lossName === 'logistic') {
    // -y / (1 + exp(y z)) with y in {-1, +1} (labels 0/1 mapped), as logistic.ts; the exponent is
    // kept in [-700, 700] because PostgreSQL's exp raises an error on overflow and underflow.
    const ys = `CASE WHEN y = 1 THEN ${sqlNumber(1)} ELSE ${sqlNumber(-1)} END`;
    return `-(${ys}) / (${sqlNumber(1)} + exp(least(greatest((${ys}) * z, ${sqlNumber(-700)}), ${sqlNumber(700)})))`;
  }
  if (lossName === 'squared' || lossName === 'linear') return 'z - y';
  throw new InvalidParameterError('--loss', lossName, '"logistic" or "squared" for the SQL push-down');
}

/** The losses of the partitioned push-down, by the code dpfit writes into the theta tables. */
/** The loss codes of the SQL view ('linear', the old name of 'squared', is read as it). */
const LOSS_CODES: Readonly<Record<string, number>> = { logistic: 0, squared: 1 };

/**
 * The aggregate query of one DP-GD step: per row the margin z = f . theta, the loss derivative,
 * the clip threshold t = K / sqrt(||f||^2) and c = clamp(f'(z), -t, t); then
 * SELECT sum(c f_0), ..., sum(c f_{d-1}), count of clipped rows; each layer fenced (OFFSET 0)
 * so that every per-row value is computed once (`partitionedGradientSumSql` for postgres_fdw).
 */
export function clippedGradientSumSql(encoded: EncodingSql, lossName: string, theta: Float64Array, clipNorm: number): string {
  const d = encoded.d;
  if (theta.length !== d) throw new InvalidParameterError('theta.length', theta.length, `d = ${d}`);
  if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
  const margin = Array.from({ length: d }, (_, j) => `f${j} * ${sqlNumber(theta[j])}`).join(' + ');
  const squares = Array.from({ length: d }, (_, j) => `f${j} * f${j}`).join(' + ');
  const derivative = lossDerivativeSql(lossName);
  const k = clipNorm * CLIP_SAFETY;
  const perRow = `SELECT *, ${derivative} AS g, ${thresholdSql(sqlNumber(k))} AS t FROM (SELECT *, ${margin} AS z, ${squares} AS ss FROM (${encoded.rows}) AS r OFFSET 0) AS m OFFSET 0`;
  const clipped = `SELECT *, ${CLAMP_SQL} FROM (${perRow}) AS p OFFSET 0`;
  const sums = Array.from({ length: d }, (_, j) => `sum(c * f${j})`).join(', ');
  return `SELECT ${sums}, sum(clipped) FROM (${clipped}) AS cl`;
}

/**
 * The encoded rows of `query` as one SELECT (columns f0..f{d-1}, y): what `--encoding-sql` prints
 * without `--partition-key`, and the inner part of each server's view (`partitionSetupSql`).
 */
export function encodedRowsSql(schema: Schema, query: string): string {
  return schemaEncodingSql(schema, query).rows;
}

/** The partition key, checked: a plain column name (it is quoted as an identifier). */
function partitionColumn(partitionKey: string): string {
  if (partitionKey.trim() === '' || partitionKey.length > 63) throw new InvalidParameterError('--partition-key', partitionKey, 'a column name of 1 to 63 characters');
  return sqlIdentifier(partitionKey);
}

/** The default name of a run's theta tables (`partitionSetupSql`). */
export const DEFAULT_THETA_TABLE = 'dpfit_theta';

/** The run's theta table name, checked: lower-case letters, digits and _ (the derived names stay below 63 characters). */
function thetaTableName(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,39}$/.test(name)) throw new InvalidParameterError('--theta-table', name, 'a name of 1 to 40 lower-case letters, digits and _, starting with a letter or _');
  return name;
}

/** The per-server and coordinator SQL of a partitioned (postgres_fdw) push-down run (module comment). */
export interface PartitionSetupSql {
  readonly d: number;
  /** On each server: its one-row theta table, the view T_input of its rows (`query`) and the fenced view T_rows of its encoded rows, key `value` (SQL text: a number, or a psql variable). */
  server(value: string): string;
  /** On the coordinator, once: the parent of the servers' theta tables (dpfit UPDATEs it) and the partitioned table of the rows. */
  readonly coordinator: string;
  /**
   * On the coordinator, per server: the foreign tables on that server's theta table and view, and
   * on the catalogs of its pg_catalog that dpfit's view check reads (`sql-partition-check.ts`), in
   * the schema T_catalog_<value> (`foreignServer` a postgres_fdw server; a loopback one for the
   * coordinator's own rows).
   */
  coordinatorPartition(foreignServer: string, value: string): string;
  /** --query for `dpfit train`: the coordinator's partitioned table. */
  readonly query: string;
}

/** The columns of a run's theta table, in order: t0..t{d-1} = theta, k = the clip constant K, loss = the loss's code, nonce = the step's. */
export function thetaColumns(d: number): ThetaColumn[] {
  return [
    ...Array.from({ length: d }, (_, j) => ({ name: `t${j}`, type: 'DOUBLE PRECISION', oid: 701 })),
    { name: 'k', type: 'DOUBLE PRECISION', oid: 701 },
    { name: 'loss', type: 'INTEGER', oid: 23 },
    { name: 'nonce', type: 'BIGINT', oid: 20 },
  ];
}

/**
 * The body of the view T_rows a server holds in a partitioned run named `thetaTable` (T), for its
 * key `value`: its rows read from the view T_input (the server's rows), encoded by the
 * schema, then per row z = f . theta, ss = f0 f0 + ... + f{d-1} f{d-1}, t = k / sqrt(ss), the loss
 * derivative g(z, y), c = clamp(g, -t, t) and whether it clipped, each layer fenced by OFFSET 0 so
 * that the server computes them once per row. Theta is the ONE row `SELECT ... FROM ONLY T LIMIT 1`
 * (a second row in T cannot repeat the data rows). `sql-partition-check.ts` compares each server's
 * view with this text.
 */
export function partitionViewSql(schema: Schema, partitionKey: string, thetaTable: string, value: string): string {
  const key = partitionColumn(partitionKey);
  const name = thetaTableName(thetaTable);
  const { rows, d } = encodingFrom(schema, `${name}_input`);
  const z = Array.from({ length: d }, (_, j) => `e.f${j} * th.t${j}`).join(' + ');
  // The same expression, in the same order, as `partitionedGradientSumSql`'s check.
  const ss = Array.from({ length: d }, (_, j) => `e.f${j} * e.f${j}`).join(' + ');
  const losses = Object.entries(LOSS_CODES).map(([loss, code]) => `WHEN loss = ${code} THEN ${lossDerivativeSql(loss)}`).join(' ');
  const theta = `(SELECT ${thetaColumns(d).map((c) => c.name).join(', ')} FROM ONLY ${name} LIMIT 1)`;
  const perRow = `SELECT e.*, CAST(${value} AS INTEGER) AS ${key}, th.k, th.loss, th.nonce, ${z} AS z, ${ss} AS ss FROM (${rows}) AS e CROSS JOIN ${theta} AS th OFFSET 0`;
  const threshold = `SELECT p.*, ${thresholdSql('k')} AS t, CASE ${losses} END AS g FROM (${perRow}) AS p OFFSET 0`;
  return `SELECT q.*, ${CLAMP_SQL} FROM (${threshold}) AS q OFFSET 0`;
}

/** The columns of the schema that a server's T_input must have (the view reads them by name). */
export function inputColumnNames(schema: Schema): string[] {
  return schema.columns.filter((c) => c.type === 'numeric' || c.type === 'categorical' || c.type === 'label').map((c) => c.name);
}

/**
 * The catalogs of a server that dpfit's view check reads (`sql-partition-check.ts`), each a foreign
 * table on the coordinator with these columns (a subset of PostgreSQL's; pg_catalog is trusted).
 */
export const REMOTE_CATALOGS: Readonly<Record<string, string>> = {
  pg_class: 'oid oid, relname name, relnamespace oid, relkind "char", relrowsecurity boolean',
  pg_namespace: 'oid oid, nspname name',
  pg_views: 'schemaname name, viewname name, definition text',
  pg_rewrite: 'oid oid, rulename name, ev_class oid',
  pg_depend: 'classid oid, objid oid, refclassid oid, refobjid oid',
  pg_attribute: 'attrelid oid, attname name, atttypid oid, atttypmod integer, attnum smallint, attisdropped boolean',
  pg_trigger: 'oid oid, tgrelid oid, tgname name',
  pg_proc: 'oid oid, proname name, pronamespace oid',
};

/**
 * The SQL of a partitioned push-down run named `thetaTable` (T), module comment: each server
 * holds T, one row (`thetaColumns`), the view T_input of its rows (`query`, e.g. `SELECT * FROM
 * local`: what the server's data are) and the view T_rows (`partitionViewSql`). The coordinator
 * holds T_servers, whose children are foreign tables on every server's T (dpfit UPDATEs T_servers:
 * postgres_fdw ships one UPDATE per server), T_parted, partitioned by the key, whose partitions are
 * foreign tables on the views, and per server foreign tables on the catalogs of `REMOTE_CATALOGS`.
 */
export function partitionSetupSql(schema: Schema, query: string, partitionKey: string, thetaTable: string = DEFAULT_THETA_TABLE): PartitionSetupSql {
  const key = partitionColumn(partitionKey);
  const name = thetaTableName(thetaTable);
  const d = schemaEncodingSql(schema, 'SELECT 1').d;
  const theta = thetaColumns(d).map((c) => `${c.name} ${c.type}`).join(', ');
  const rowColumns = `${Array.from({ length: d }, (_, j) => `f${j} DOUBLE PRECISION`).join(', ')}, y DOUBLE PRECISION, ${key} INTEGER NOT NULL, k DOUBLE PRECISION, loss INTEGER, nonce BIGINT, z DOUBLE PRECISION, ss DOUBLE PRECISION, t DOUBLE PRECISION, g DOUBLE PRECISION, c DOUBLE PRECISION, clipped INTEGER`;
  const suffix = (value: string) => value.replace(/[^0-9a-z_]/gi, '_');
  const catalogs = (foreignServer: string, value: string) => {
    const schemaName = `${name}_catalog_${suffix(value)}`;
    return [
      `CREATE SCHEMA ${schemaName};`,
      ...Object.entries(REMOTE_CATALOGS).map(([table, columns]) => `CREATE FOREIGN TABLE ${schemaName}.${table} (${columns}) SERVER ${sqlIdentifier(foreignServer)} OPTIONS (schema_name 'pg_catalog', table_name '${table}');`),
    ].join('\n');
  };
  return {
    d,
    server: (value) => `CREATE TABLE ${name} (${theta});
INSERT INTO ${name} VALUES (${Array.from({ length: d + 3 }, () => '0').join(', ')});
CREATE VIEW ${name}_input AS
${query}
;
CREATE VIEW ${name}_rows AS ${partitionViewSql(schema, partitionKey, name, value)};`,
    coordinator: `CREATE TABLE ${name}_servers (${theta});
CREATE TABLE ${name}_parted (${rowColumns}) PARTITION BY LIST (${key});`,
    coordinatorPartition: (foreignServer, value) => `CREATE FOREIGN TABLE ${name}_theta_${suffix(value)} () INHERITS (${name}_servers) SERVER ${sqlIdentifier(foreignServer)} OPTIONS (table_name '${name}');
CREATE FOREIGN TABLE ${name}_rows_${suffix(value)} PARTITION OF ${name}_parted FOR VALUES IN (${value}) SERVER ${sqlIdentifier(foreignServer)} OPTIONS (table_name '${name}_rows');
${catalogs(foreignServer, value)}`,
    query: `SELECT * FROM ${name}_parted`,
  };
}

/** The UPDATE that sets every server's theta, clip constant, loss and step nonce (through the coordinator's T_servers). */
export function thetaUpdateSql(thetaTable: string, theta: Float64Array, lossName: string, clipNorm: number, nonce: number): string {
  const name = thetaTableName(thetaTable);
  const code = LOSS_CODES[lossName === 'linear' ? 'squared' : lossName];
  if (code === undefined) throw new InvalidParameterError('--loss', lossName, '"logistic" or "squared" for the SQL push-down');
  if (!Number.isSafeInteger(nonce)) throw new InvalidParameterError('nonce', nonce, 'a safe integer');
  return `UPDATE ${name}_servers SET ${Array.from(theta, (v, j) => `t${j} = ${sqlNumber(v)}`).join(', ')}, k = ${sqlNumber(clipNorm * CLIP_SAFETY)}, loss = ${code}, nonce = ${nonce}`;
}

/**
 * One step's clipped gradient sums for a partitioned table whose partitions are foreign tables
 * (postgres_fdw) on the servers' views (`partitionSetupSql`), one row per partition: sum_i c_i f_ij
 * for each j from the view's per-row c (one product per sum), the clipped count, the row count,
 * the rows that fail the privacy check (r_i <= ss_i <= the largest double and |c_i| <=
 * fl(K / fl(sqrt(ss_i))), r_i the sum of squares of f_i recomputed here in the view's order: O(d)
 * once per row),
 * and the rows whose nonce is not this step's (the view read a theta table this step did not
 * set). No fences and only CASE for clamps (postgres_fdw 15 ships neither least/greatest nor
 * subqueries), so that PostgreSQL's partitionwise aggregation plans one full aggregate per
 * partition and postgres_fdw ships it (`Remote SQL: SELECT sum(...) ... GROUP BY`): only d + 5
 * numbers per partition cross. PostgreSQL only (the SET).
 */
export function partitionedGradientSumSql(d: number, query: string, partitionKey: string, clipNorm: number, nonce: number): string {
  return statementText(partitionedGradientStep(d, query, partitionKey, clipNorm, nonce));
}

/** A SELECT and the settings it runs with (PostgreSQL: set for its transaction only). */
export interface SqlStatement {
  readonly settings: Readonly<Record<string, string>>;
  readonly select: string;
}

/** The statement as psql text (SET ...; SELECT ...), for EXPLAIN and tests. */
function statementText(statement: SqlStatement): string {
  return [...Object.entries(statement.settings).map(([key, value]) => `SET ${key} = ${value}`), statement.select].join('; ');
}

/** `partitionedGradientSumSql` as a SELECT and its settings (what dpfit runs, one statement per call). */
export function partitionedGradientStep(d: number, query: string, partitionKey: string, clipNorm: number, nonce: number): SqlStatement {
  if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
  if (!Number.isSafeInteger(nonce)) throw new InvalidParameterError('nonce', nonce, 'a safe integer');
  const key = partitionColumn(partitionKey);
  const sums = Array.from({ length: d }, (_, j) => `sum(c * f${j})`).join(', ');
  const r = Array.from({ length: d }, (_, j) => `f${j} * f${j}`).join(' + ');
  // The view's ss is only trusted once checked against r (computed once per row): ss >= r gives a
  // threshold no larger than r's. PostgreSQL orders NaN above every number and a NULL comparison
  // is not true: NaN, infinite and NULL values fail.
  const bad = `CASE WHEN ss >= (${r}) AND ss <= ${sqlNumber(Number.MAX_VALUE)} AND abs(c) <= (${thresholdSql(sqlNumber(clipNorm * CLIP_SAFETY))}) THEN 0 ELSE 1 END`;
  const stale = `CASE WHEN nonce = ${nonce} THEN 0 ELSE 1 END`;
  // jit off: compiling the expressions costs more than evaluating them on this many rows.
  return {
    settings: { enable_partitionwise_aggregate: 'on', jit: 'off' },
    select: `SELECT ${sums}, sum(clipped), count(*), sum(${bad}), sum(${stale}), ${key} FROM ${subquery(query)} AS r GROUP BY ${key}`,
  };
}

/** The checks of a partitioned encoded query, one row per partition: rows, rows with a missing or non-finite value, min(y), max(y). */
export function partitionedCheckSql(d: number, query: string, partitionKey: string): string {
  return statementText(partitionedCheckStep(d, query, partitionKey));
}

/** `partitionedCheckSql` as a SELECT and its settings. */
function partitionedCheckStep(d: number, query: string, partitionKey: string): SqlStatement {
  const key = partitionColumn(partitionKey);
  const bad = [...Array.from({ length: d }, (_, j) => `f${j}`), 'y'].map((c) => `${c} IS NULL OR NOT (abs(${c}) <= ${sqlNumber(Number.MAX_VALUE)})`).join(' OR ');
  return {
    settings: { enable_partitionwise_aggregate: 'on' },
    select: `SELECT count(*), count(*) FILTER (WHERE ${bad}), ${key} FROM ${subquery(query)} AS r GROUP BY ${key}`,
  };
}

/** Runs `partitionedCheckSql`: n, and the refusals of an encoded query (missing or non-finite values; data of one class train, as in memory: `dataForLoss`). */
export async function checkPartitionedRows(runner: SqlRunner, d: number, query: string, partitionKey: string): Promise<PushDownCheck> {
  const check = partitionedCheckStep(d, query, partitionKey);
  const rows = await runner.query(check.select, check.settings);
  let n = 0;
  let bad = 0;
  for (const row of rows) {
    n += Number(row[0]);
    bad += Number(row[1]);
  }
  if (bad > 0) throw new DataFormatError(runner.name, `at least one encoded row has a missing or non-finite value in f0..f${d - 1} or y (a missing value under "error", or a label neither positive nor negative; messages never count or quote the data)`);
  if (n <= 0) throw new DataFormatError(runner.name, 'the query returns no rows to train on');
  return { n, droppedRows: undefined };
}

/** A cell of a sum as the double it stands for (NULL: an empty sum, 0). */
function cellNumber(cell: SqlCell, what: string): number {
  if (cell === null || cell === '') return 0;
  const v = typeof cell === 'number' ? cell : Number.NaN;
  if (!Number.isFinite(v)) throw new DataFormatError('database', `${what} is not a finite number`);
  return v;
}

export interface PushDownOptions extends Omit<DpGdOptions, 'steps'> {
  /** The number of steps, or its rule given n (called once the check query has counted the rows). */
  readonly steps: number | ((n: number) => number);
  /** Called with n before any step (the CLI's work limits): nothing is read before the servers are checked. */
  readonly checkRows?: (n: number) => void;
  /** Called with each step's SQL time in milliseconds (benchmarks). */
  readonly onQuery?: (milliseconds: number) => void;
  /**
   * PostgreSQL with a table partitioned by this column (e.g. postgres_fdw foreign partitions on
   * other servers): the query returns the ENCODED rows (`encodedRowsSql`, a view on each server)
   * and each step is `partitionedGradientSumSql`, one aggregate shipped to each partition's server.
   */
  readonly partitionKey?: string;
  /** With `partitionKey`: the run's theta tables (`partitionSetupSql`; default `DEFAULT_THETA_TABLE`). */
  readonly thetaTable?: string;
}

const PUSH_DOWN_OPTIONS = optionNames<PushDownOptions>({ ...DP_GD_OPTIONS, checkRows: true, onQuery: true, partitionKey: true, thetaTable: true });

/** What the check query found: n, and the owner's private diagnostics. */
export interface PushDownCheck {
  readonly n: number;
  /** Rows dropped by "dropRow" policies, zero rows counted in n (unknown when the query's rows are already encoded by the servers' views). */
  readonly droppedRows: number | undefined;
}

/** Runs the encoding's checks: the same refusals as loading the rows (`applySchema`, `dataForLoss`). */
export async function checkEncodedRows(runner: SqlRunner, encoded: EncodingSql): Promise<PushDownCheck> {
  const [row] = await runner.query(encoded.checks);
  const counts = row.map((c) => Number(c));
  const [total, ...rest] = counts;
  encoded.checkNames.forEach((name, k) => {
    if (rest[k] > 0) throw new DataFormatError(runner.name, `at least one row with ${name}`);
  });
  // n is the number of records: a dropped one is a zero row of the encoded rows (data/dropped-rows.ts).
  const dropped = rest[encoded.checkNames.length];
  const n = total;
  if (n <= 0) throw new DataFormatError(runner.name, 'the query returns no rows to train on');
  return { n, droppedRows: dropped };
}

/**
 * The refusals of a partitioned step, before its sums are used (module comment): a row that fails
 * the privacy check (its |c| could exceed C / ||f||: refused whatever the cause), a row count
 * other than the check query's n (the slack was planned for n), a row whose nonce is not this
 * step's (its view read a theta other than this step's: the model would be wrong, not the privacy).
 */
function checkPartitionedStep(name: string, rows: SqlCell[][], d: number, n: number, thetaTable: string): void {
  let count = 0;
  let bad = 0;
  let stale = 0;
  for (const row of rows) {
    count += cellNumber(row[d + 1], 'the row count');
    bad += cellNumber(row[d + 2], 'the clip check');
    stale += cellNumber(row[d + 3], 'the nonce check');
  }
  if (bad > 0) throw new DataFormatError(name, `at least one row of the servers' views fails the clip check (ss >= the sum of squares of f0..f${d - 1}, ss finite, |c| <= K / sqrt(ss)): their gradient could exceed the clip norm, so nothing is trained or released (recreate the views from dpfit train --encoding-sql)`);
  if (count !== n) throw new DataFormatError(name, `a step read a different number of rows than the check query's ${n} (the rows changed during the run: the rounding slack was planned for ${n}); nothing is released`);
  if (stale > 0) throw new DataFormatError(name, `at least one row of the servers' views read a theta other than this step's: a view reads a theta table this run does not update (${thetaTable} on every server, ${thetaTable}_servers on the coordinator), or another run shares them; nothing is released`);
}

/**
 * What `trainDpGdInSql` releases on n rows of d encoded features, from public values alone (what a
 * budget reserves before the database is queried): DP-GD's event (`dpGdRunEvent`) with the noise
 * planned for the SQL sum's rounding slack (`sqlSumRoundingSlack`), as the run plans it once the
 * check query has counted n (a run whose count differs from the declared n is refused before any step).
 */
export function planDpGdInSql(shape: { readonly n: number; readonly d: number }, options: DpGdOptions): DpEvent {
  const clipNorm = options.clipNorm;
  if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
  return dpGdRunEvent(setUpDpGd(shape, options, sqlSumRoundingSlack(shape.n, clipNorm, shape.d)));
}

/**
 * DP-GD with the gradient sum pushed into SQL: a check query (n, the refusals), then one
 * aggregate query per step; the noise is added by dpfit with the slack of `sqlSumRoundingSlack`.
 */
export async function trainDpGdInSql(runner: SqlRunner, schema: Schema, query: string, options: PushDownOptions): Promise<TrainResult & { check: PushDownCheck }> {
  rejectUnknownOptions(options, PUSH_DOWN_OPTIONS, 'trainDpGdInSql');
  // The query must be one statement by itself before it is embedded in dpfit's SQL (data/node/sql-runner.ts).
  await runner.checkQuery(query);
  const encoded = schemaEncodingSql(schema, query);
  const d = encoded.d;
  const partitionKey = options.partitionKey;
  const thetaTable = thetaTableName(options.thetaTable ?? DEFAULT_THETA_TABLE);
  if (partitionKey !== undefined) partitionColumn(partitionKey);
  if (partitionKey !== undefined && !isPostgresRunner(runner)) throw new InvalidParameterError('--partition-key', partitionKey, 'given only with PostgreSQL (postgres_fdw partitions)');
  // Partitioned: every server's view and theta table locked for the run and checked against what
  // dpfit's setup creates, before anything is read from them (sql-partition-check.ts).
  const guard = partitionKey === undefined || !isPostgresRunner(runner)
    ? undefined
    : await checkPartitionedViews(runner, { query, partitionKey, thetaTable, inputColumns: inputColumnNames(schema), thetaColumns: thetaColumns(d), viewSql: (value) => partitionViewSql(schema, partitionKey, thetaTable, value) });
  try {
    const check = partitionKey === undefined ? await checkEncodedRows(runner, encoded) : await checkPartitionedRows(runner, d, query, partitionKey);
    const { n } = check;
    const clipNorm = options.clipNorm;
    if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
    options.checkRows?.(n);
    const steps = typeof options.steps === 'function' ? options.steps(n) : options.steps;
    const named = { ...options, steps, featureNames: options.featureNames ?? encoded.featureNames };
    const run = setUpDpGd({ n, d }, named, sqlSumRoundingSlack(n, clipNorm, d));
    const theta = new Float64Array(d);
    const gradient = new Float64Array(d);
    let clippedFraction = 0;
    // Each step's nonce, written with its theta and checked in every row: a random start (not from the
    // noise generator, which it must not advance) so that another run's steps do not repeat it.
    const nonce = randomInt(2 ** 40);
    for (let t = 0; t < run.steps; t++) {
      const started = performance.now();
      const rows = partitionKey === undefined || !isPostgresRunner(runner)
        ? await runner.query(clippedGradientSumSql(encoded, run.loss.name, theta, clipNorm))
        : await partitionedStep(runner, thetaUpdateSql(thetaTable, theta, run.loss.name, clipNorm, nonce + t), partitionedGradientStep(d, query, partitionKey, clipNorm, nonce + t));
      options.onQuery?.(performance.now() - started);
      if (partitionKey !== undefined) checkPartitionedStep(runner.name, rows, d, n, thetaTable);
      gradient.fill(0);
      let clippedCount = 0;
      // One row, or one per partition: their sums added here, in the order returned (covered by the any-order bound).
      for (const row of rows) {
        for (let j = 0; j < d; j++) gradient[j] += cellNumber(row[j], `sum ${j}`);
        clippedCount += cellNumber(row[d], 'the clipped count');
      }
      clippedFraction += clippedCount / n / run.steps;
      dpGdUpdate(run, named, t, gradient, theta);
    }
    return { ...finishDpGd(run, named, theta, clippedFraction), check };
  } finally {
    await guard?.release();
  }
}

/**
 * One partitioned step in ONE transaction, so that the servers' views read this step's theta (and
 * a concurrent run's UPDATE of the same tables waits or fails): dpfit's UPDATE of every server's
 * theta, then the transaction made read-only, then the sums (the statement holding the user's query).
 */
async function partitionedStep(runner: PostgresRunner, update: string, step: SqlStatement): Promise<SqlCell[][]> {
  const connection = await runner.connection();
  return inTransaction(connection, async () => {
    await connection.run(update);
    for (const [key, value] of Object.entries({ transaction_read_only: 'on', ...step.settings, ...runner.exactFloats })) await connection.run('SELECT pg_catalog.set_config($1, $2, true)', [key, value]);
    const rows = await connection.run(step.select);
    await runner.checkExactFloats(connection);
    return rows;
  }, true);
}
