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
 * form (`partitionKey`, `partitionedGradientSumSql`) ships it: each server holds a VIEW of its
 * rows already encoded (`encodedRowsSql`: columns f0..f{d-1}, y, plus the partition key), the
 * coordinator a table partitioned by that key whose partitions are foreign tables on those
 * views, and each step is `SELECT sum(...), ..., key FROM (query) GROUP BY key` with
 * enable_partitionwise_aggregate, no fences and only CASE for clamps (postgres_fdw 15 does not
 * ship least/greatest/COALESCE), so that every partition's aggregate is one remote query
 * (`Remote SQL: SELECT sum(...) ... GROUP BY`, checked in test/train-sql.test.ts) and only d + 2
 * numbers per server cross. Without fences PostgreSQL evaluates the per-row values (margin,
 * threshold) once per sum: 2d^2-4d^2 products per row instead of ~2d, spread over the servers.
 * Privacy of this form: dpfit trusts nothing of the view but its values f and y (the check query
 * refuses NULL and non-finite ones, and one class): the threshold and the clamp are dpfit's SQL.
 * Coordinate j of a_i is c_ij f_ij with c_ij = clamp(g_ij, -t_ij, t_ij) computed inside sum j;
 * the c_ij of different j are the same IEEE evaluation of the same expression on the same
 * server, and the bound above needs even less: each |c_ij| <= t_ij = fl(K / fl(sqrt(ss_ij))) with
 * ss_ij a computed sum of squares of the same f_i, so ||a_i|| <= B as before whatever server
 * computes row i. The sum is per partition on its server, then the partials are added by dpfit:
 * still one summation tree over the n terms, so `sqlSumRoundingSlack` covers it unchanged.
 *
 * The step's noise is then planned exactly as in memory (`setUpDpGd` with this slack), so the
 * release and its event are those of `trainDpGd`; the model equals the in-memory one for the
 * same seed whenever both sums round to the same grid point and the slightly larger slack leaves
 * the grid plan unchanged (both overwhelmingly likely; the tests check it).
 */
import { DataFormatError, InvalidParameterError } from '../errors.js';
import { labelColumn, schemaEncodedNormBound, schemaFeatureNames, type CategoricalColumnSpec, type NumericColumnSpec, type Schema } from '../data/schema.js';
import { numericEncodedWidth } from '../data/numeric-encoding.js';
import { setUpDpGd, dpGdUpdate, finishDpGd, type DpGdOptions, type TrainResult } from './dp-gd.js';
import { CLIP_SAFETY } from './glm/clipped-gradient.js';
import { lossByName } from './losses.js';

const U = Number.EPSILON / 2;

/**
 * Runs SQL and returns the rows as text cells (null for SQL NULL): numbers in the engine's
 * shortest round-trip text, so that Number(cell) is the engine's double exactly.
 */
export interface SqlRunner {
  /** What the messages call the database (never with a password). */
  readonly name: string;
  query(sql: string): Promise<(string | null)[][]>;
}

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
  /** SELECT f0, ..., f{d-1}, y FROM ... (rows dropped by "dropRow" policies filtered out). */
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
  const raw = features.map((f, j) => `${f} AS e${j}`).join(', ');
  const where = drops.length > 0 ? ` WHERE ${drops.join(' AND ')}` : '';
  // OFFSET 0 fences each layer: PostgreSQL would otherwise inline it and recompute it per use.
  const base = `SELECT ${raw}, ${y} AS y FROM (${query}) AS q${where} OFFSET 0`;
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
  function finish(from: string): EncodingSql {
    const all = schema.intercept === null ? transformed : [...transformed, sqlNumber(schema.intercept)];
    const rows = `SELECT ${all.map((f, j) => `${f} AS f${j}`).join(', ')}, y FROM ${from} OFFSET 0`;
    const checkSql = `SELECT count(*)${checks.map((c) => `, count(*) FILTER (WHERE ${c.sql})`).join('')}, count(*) FILTER (WHERE NOT (${drops.length > 0 ? drops.join(' AND ') : 'TRUE'}))${label.positive !== undefined ? `, count(DISTINCT (${y})) FILTER (WHERE ${drops.length > 0 ? drops.join(' AND ') : 'TRUE'})` : ''} FROM (${query}) AS q`;
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
  let derivative: string;
  if (lossName === 'logistic') {
    // -y / (1 + exp(y z)) with y in {-1, +1} (labels 0/1 mapped), as logistic.ts; the exponent is
    // kept in [-700, 700] because PostgreSQL's exp raises an error on overflow and underflow.
    const ys = `CASE WHEN y = 1 THEN ${sqlNumber(1)} ELSE ${sqlNumber(-1)} END`;
    derivative = `-(${ys}) / (${sqlNumber(1)} + exp(least(greatest((${ys}) * z, ${sqlNumber(-700)}), ${sqlNumber(700)})))`;
  } else if (lossName === 'linear') {
    derivative = 'z - y';
  } else {
    throw new InvalidParameterError('--loss', lossName, '"logistic" or "linear" for the SQL push-down');
  }
  const k = clipNorm * CLIP_SAFETY;
  const perRow = `SELECT *, ${derivative} AS g, CASE WHEN ss > 0 THEN ${sqlNumber(k)} / sqrt(ss) ELSE ${sqlNumber(0)} END AS t FROM (SELECT *, ${margin} AS z, ${squares} AS ss FROM (${encoded.rows}) AS r OFFSET 0) AS m OFFSET 0`;
  const clipped = `SELECT *, CASE WHEN g > t THEN t WHEN g < -t THEN -t ELSE g END AS c, CASE WHEN g > t OR g < -t THEN 1 ELSE 0 END AS clipped FROM (${perRow}) AS p OFFSET 0`;
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
  /** On each server: its one-row theta table and the fenced view of its encoded rows, key `value` (SQL text: a number, or a psql variable). */
  server(value: string): string;
  /** On the coordinator, once: the parent of the servers' theta tables (dpfit UPDATEs it) and the partitioned table of the rows. */
  readonly coordinator: string;
  /** On the coordinator, per server: the foreign tables on that server's theta table and view (`foreignServer` a postgres_fdw server; a loopback one for the coordinator's own rows). */
  coordinatorPartition(foreignServer: string, value: string): string;
  /** The table dpfit UPDATEs each step (on the coordinator). */
  readonly thetaParent: string;
  /** --query for `dpfit train`: the coordinator's partitioned table. */
  readonly query: string;
}

/**
 * The SQL of a partitioned push-down run named `thetaTable` (T): each server holds T, a one-row
 * table t0..t{d-1}, and the view T_rows: its encoded rows (`query`, e.g. `SELECT * FROM local`,
 * encoded by the schema), the partition key, z = f . theta (theta read from T) and ss = the sum
 * of f_j^2 in the order j = 0..d-1, fenced by OFFSET 0 inside the view so that the server
 * computes them once per row. The coordinator holds T_servers, whose children are foreign tables
 * on every server's T (dpfit UPDATEs T_servers: postgres_fdw ships one UPDATE per server), and
 * T_parted, partitioned by the key, whose partitions are foreign tables on the views.
 */
export function partitionSetupSql(schema: Schema, query: string, partitionKey: string, thetaTable: string = DEFAULT_THETA_TABLE): PartitionSetupSql {
  const key = partitionColumn(partitionKey);
  const name = thetaTableName(thetaTable);
  const rows = encodedRowsSql(schema, query);
  const d = schemaEncodingSql(schema, 'SELECT 1').d;
  const thetaColumns = Array.from({ length: d }, (_, j) => `t${j} DOUBLE PRECISION`).join(', ');
  const z = Array.from({ length: d }, (_, j) => `e.f${j} * th.t${j}`).join(' + ');
  // The same expression, in the same order, as `partitionedGradientSumSql`'s check of ss.
  const ss = Array.from({ length: d }, (_, j) => `e.f${j} * e.f${j}`).join(' + ');
  const rowColumns = `${Array.from({ length: d }, (_, j) => `f${j} DOUBLE PRECISION`).join(', ')}, y DOUBLE PRECISION, ${key} INTEGER NOT NULL, z DOUBLE PRECISION, ss DOUBLE PRECISION`;
  return {
    d,
    server: (value) => `CREATE TABLE ${name} (${thetaColumns});
INSERT INTO ${name} VALUES (${Array.from({ length: d }, () => '0').join(', ')});
CREATE VIEW ${name}_rows AS SELECT e.*, CAST(${value} AS INTEGER) AS ${key}, ${z} AS z, ${ss} AS ss FROM (${rows}) AS e CROSS JOIN ${name} AS th OFFSET 0;`,
    coordinator: `CREATE TABLE ${name}_servers (${thetaColumns});
CREATE TABLE ${name}_parted (${rowColumns}) PARTITION BY LIST (${key});`,
    coordinatorPartition: (foreignServer, value) => `CREATE FOREIGN TABLE ${name}_theta_${value.replace(/[^0-9a-z_]/gi, '_')} () INHERITS (${name}_servers) SERVER ${sqlIdentifier(foreignServer)} OPTIONS (table_name '${name}');
CREATE FOREIGN TABLE ${name}_rows_${value.replace(/[^0-9a-z_]/gi, '_')} PARTITION OF ${name}_parted FOR VALUES IN (${value}) SERVER ${sqlIdentifier(foreignServer)} OPTIONS (table_name '${name}_rows');`,
    thetaParent: `${name}_servers`,
    query: `SELECT * FROM ${name}_parted`,
  };
}

/** The UPDATE that sets every server's theta (through the coordinator's parent of the foreign theta tables). */
export function thetaUpdateSql(thetaTable: string, theta: Float64Array): string {
  const name = thetaTableName(thetaTable);
  return `UPDATE ${name}_servers SET ${Array.from(theta, (v, j) => `t${j} = ${sqlNumber(v)}`).join(', ')}`;
}

/**
 * One step's clipped gradient sums for a partitioned table whose partitions are foreign tables
 * (postgres_fdw) on the servers' views (`partitionSetupSql`), one row per partition: sum_i c_i f_ij
 * for each j, the clipped count, the row count, the rows whose ss fails its check (ss >= the sum of
 * squares of f recomputed in the view's order, and ss <= the largest double), and the rows whose
 * z is not f . theta for this theta (the view read a theta table other than this run's). Each
 * c_i = clamp(g(z_i, y_i), -t_i, t_i), t_i = K / sqrt(ss_i): O(1) per sum from the view's per-row
 * z and ss, O(d) once per row for the checks. No fences and only CASE for clamps (postgres_fdw 15
 * ships neither least/greatest nor subqueries), so that PostgreSQL's partitionwise aggregation
 * plans one full aggregate per partition and postgres_fdw ships it (`Remote SQL: SELECT sum(...)
 * ... GROUP BY`): only d + 5 numbers per partition cross. PostgreSQL only (the SET).
 */
export function partitionedGradientSumSql(d: number, query: string, partitionKey: string, lossName: string, theta: Float64Array, clipNorm: number): string {
  if (theta.length !== d) throw new InvalidParameterError('theta.length', theta.length, `d = ${d}`);
  if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
  const key = partitionColumn(partitionKey);
  // postgres_fdw (15) ships CASE but not least/greatest/COALESCE/NULLIF: every clamp is a CASE.
  const t = `(CASE WHEN ss > ${sqlNumber(0)} THEN ${sqlNumber(clipNorm * CLIP_SAFETY)} / sqrt(ss) ELSE ${sqlNumber(0)} END)`;
  let c: string;
  let clipped: string;
  if (lossName === 'logistic') {
    // g = -y / (1 + exp(y z)) = -y s with s = 1 / (1 + exp(y z)) in [0, 1] (negation and the
    // factor y = +-1 are exact), so clamp(g, -t, t) = -y min(s, t): the fenced form's value.
    const ys = `(CASE WHEN y = 1 THEN ${sqlNumber(1)} ELSE ${sqlNumber(-1)} END)`;
    const e = `(${ys} * z)`;
    const sig = `(${sqlNumber(1)} / (${sqlNumber(1)} + exp(CASE WHEN abs(${e}) <= ${sqlNumber(700)} THEN ${e} WHEN ${e} > ${sqlNumber(0)} THEN ${sqlNumber(700)} ELSE ${sqlNumber(-700)} END)))`;
    c = `(-${ys} * CASE WHEN ${sig} > ${t} THEN ${t} ELSE ${sig} END)`;
    clipped = `CASE WHEN ${sig} > ${t} THEN 1 ELSE 0 END`;
  } else if (lossName === 'linear') {
    const g = '(z - y)';
    c = `(CASE WHEN ${g} > ${t} THEN ${t} WHEN ${g} < -${t} THEN -${t} ELSE ${g} END)`;
    clipped = `CASE WHEN ${g} > ${t} OR ${g} < -${t} THEN 1 ELSE 0 END`;
  } else {
    throw new InvalidParameterError('--loss', lossName, '"logistic" or "linear" for the SQL push-down');
  }
  const sums = Array.from({ length: d }, (_, j) => `sum(${c} * f${j})`).join(', ');
  const squares = Array.from({ length: d }, (_, j) => `f${j} * f${j}`).join(' + ');
  const margin = Array.from({ length: d }, (_, j) => `f${j} * ${sqlNumber(theta[j])}`).join(' + ');
  // PostgreSQL orders NaN above every number and a NULL comparison is not true: both fail.
  const badSs = `CASE WHEN ss >= (${squares}) AND ss <= ${sqlNumber(Number.MAX_VALUE)} THEN 0 ELSE 1 END`;
  const badZ = `CASE WHEN z = (${margin}) THEN 0 ELSE 1 END`;
  // jit off: compiling the expressions costs more than evaluating them on this many rows.
  return `SET enable_partitionwise_aggregate = on; SET jit = off; SELECT ${sums}, sum(${clipped}), count(*), sum(${badSs}), sum(${badZ}), ${key} FROM (${query}) AS r GROUP BY ${key}`;
}

/** The checks of a partitioned encoded query, one row per partition: rows, rows with a missing or non-finite value, min(y), max(y). */
export function partitionedCheckSql(d: number, query: string, partitionKey: string): string {
  const key = partitionColumn(partitionKey);
  const bad = [...Array.from({ length: d }, (_, j) => `f${j}`), 'y'].map((c) => `${c} IS NULL OR NOT (abs(${c}) <= ${sqlNumber(Number.MAX_VALUE)})`).join(' OR ');
  return `SET enable_partitionwise_aggregate = on; SELECT count(*), count(*) FILTER (WHERE ${bad}), min(y), max(y), ${key} FROM (${query}) AS r GROUP BY ${key}`;
}

/** Runs `partitionedCheckSql`: n, and the refusals of an encoded query (missing or non-finite values, one class only). */
export async function checkPartitionedRows(runner: SqlRunner, d: number, query: string, partitionKey: string, lossName: string): Promise<PushDownCheck> {
  const rows = await runner.query(partitionedCheckSql(d, query, partitionKey));
  let n = 0;
  let bad = 0;
  let lo = Infinity;
  let hi = -Infinity;
  for (const row of rows) {
    n += Number(row[0]);
    bad += Number(row[1]);
    if (row[2] !== null) lo = Math.min(lo, Number(row[2]));
    if (row[3] !== null) hi = Math.max(hi, Number(row[3]));
  }
  if (bad > 0) throw new DataFormatError(runner.name, `${bad} encoded row(s) with a missing or non-finite value in f0..f${d - 1} or y (a missing value under "error", or a label neither positive nor negative)`);
  if (n <= 0) throw new DataFormatError(runner.name, 'the query returns no rows to train on');
  if (lossByName(lossName).labels === 'signed' && !(lo < hi)) throw new InvalidParameterError('labels', 1, 'two classes (the labels have only one)');
  return { n, droppedRows: undefined };
}

/** A cell of a sum as the double it stands for (NULL: an empty sum, 0). */
function cellNumber(cell: string | null, what: string): number {
  if (cell === null || cell === '') return 0;
  const v = Number(cell);
  if (!Number.isFinite(v)) throw new DataFormatError('database', `${what} is not a finite number: ${cell}`);
  return v;
}

export interface PushDownOptions extends DpGdOptions {
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

/** What the check query found: n, and the owner's private diagnostics. */
export interface PushDownCheck {
  readonly n: number;
  /** Rows dropped by "dropRow" policies (unknown when the query's rows are already encoded: the views drop them). */
  readonly droppedRows: number | undefined;
}

/** Runs the encoding's checks: the same refusals as loading the rows (`applySchema`, `dataForLoss`). */
export async function checkEncodedRows(runner: SqlRunner, encoded: EncodingSql, lossName: string): Promise<PushDownCheck> {
  const [row] = await runner.query(encoded.checks);
  const counts = row.map((c) => Number(c));
  const [total, ...rest] = counts;
  encoded.checkNames.forEach((name, k) => {
    if (rest[k] > 0) throw new DataFormatError(runner.name, `${rest[k]} row(s) with ${name}`);
  });
  const dropped = rest[encoded.checkNames.length];
  const n = total - dropped;
  if (n <= 0) throw new DataFormatError(runner.name, 'the query returns no rows to train on');
  const loss = lossByName(lossName);
  const classes = rest[encoded.checkNames.length + 1];
  if (loss.labels === 'signed' && classes !== undefined && classes < 2) throw new InvalidParameterError('labels', classes, 'two classes (the labels have only one)');
  return { n, droppedRows: dropped };
}

/**
 * The refusals of a partitioned step, before its sums are used (module comment): a row whose ss
 * fails its check (its clip threshold could exceed C / ||f||: refused whatever the cause), a row
 * count other than the check query's n (the slack was planned for n), a row whose z is not
 * f . theta for this step's theta (the model would be wrong, not the privacy).
 */
function checkPartitionedStep(name: string, rows: (string | null)[][], d: number, n: number, thetaTable: string): void {
  let count = 0;
  let badSs = 0;
  let badZ = 0;
  for (const row of rows) {
    count += cellNumber(row[d + 1], 'the row count');
    badSs += cellNumber(row[d + 2], 'the ss check');
    badZ += cellNumber(row[d + 3], 'the z check');
  }
  if (badSs > 0) throw new DataFormatError(name, `${badSs} row(s) of the servers' views have ss below the sum of squares of their f0..f${d - 1} (or not finite): their clip threshold could exceed the clip norm, so nothing is trained or released (recreate the views from dpfit train --encoding-sql)`);
  if (count !== n) throw new DataFormatError(name, `a step read ${count} rows, the check query ${n} (the rows changed during the run: the rounding slack was planned for ${n}); nothing is released`);
  if (badZ > 0) throw new DataFormatError(name, `${badZ} row(s) of the servers' views have z other than f . theta for this step's theta: a view reads a theta table this run does not update (${thetaTable} on every server, ${thetaTable}_servers on the coordinator), or another run shares them; nothing is released`);
}

/**
 * DP-GD with the gradient sum pushed into SQL: a check query (n, the refusals), then one
 * aggregate query per step; the noise is added by dpfit with the slack of `sqlSumRoundingSlack`.
 */
export async function trainDpGdInSql(runner: SqlRunner, schema: Schema, query: string, options: PushDownOptions): Promise<TrainResult & { check: PushDownCheck }> {
  const lossName = options.loss ?? 'logistic';
  const encoded = schemaEncodingSql(schema, query);
  const d = encoded.d;
  const partitionKey = options.partitionKey;
  const check = partitionKey === undefined ? await checkEncodedRows(runner, encoded, lossName) : await checkPartitionedRows(runner, d, query, partitionKey, lossName);
  const { n } = check;
  const clipNorm = options.clipNorm;
  if (!(clipNorm > 0 && Number.isFinite(clipNorm))) throw new InvalidParameterError('clipNorm', clipNorm, 'a finite number > 0 (the SQL sum clips every gradient)');
  const named = { ...options, featureNames: options.featureNames ?? encoded.featureNames };
  const run = setUpDpGd({ n, d }, named, sqlSumRoundingSlack(n, clipNorm, d));
  const theta = new Float64Array(d);
  const gradient = new Float64Array(d);
  let clippedFraction = 0;
  const thetaTable = options.thetaTable ?? DEFAULT_THETA_TABLE;
  for (let t = 0; t < run.steps; t++) {
    const started = performance.now();
    // Partitioned: every server's theta set and the sums computed in ONE transaction, so that the
    // servers' views read this step's theta (and a concurrent run's UPDATE of the same tables waits or fails).
    const sql = partitionKey === undefined
      ? clippedGradientSumSql(encoded, run.loss.name, theta, clipNorm)
      : `BEGIN; ${thetaUpdateSql(thetaTable, theta)}; ${partitionedGradientSumSql(d, query, partitionKey, run.loss.name, theta, clipNorm)}; COMMIT`;
    const rows = await runner.query(sql);
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
}
