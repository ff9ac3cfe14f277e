/**
 * The check of a partitioned push-down run's servers (`--partition-key`, `sql-gradient.ts`): before
 * anything is read from them, every server's view T_rows must be the view dpfit's setup creates,
 * and it must stay so until the run ends. A view is trusted for nothing: its author may be anyone
 * who can create objects on a server, short of its superuser (PostgreSQL itself and pg_catalog are
 * trusted), and may write any SQL, call any function and replace the view at any moment.
 *
 * Why the per-row checks of the step are not enough. PostgreSQL may evaluate a view's column once
 * per REFERENCE when it inlines the view: a function the author declares IMMUTABLE (PostgreSQL
 * believes it) may count its calls and return 1000 c inside the sums and c inside the check. And a
 * view may pass every row check while each row's c depends on OTHER rows (a subquery over the
 * table): replacing one row then moves every term, not one. So the view's TEXT must be dpfit's.
 *
 * The check, per leaf partition of the relations the coordinator's query reads (all must be
 * postgres_fdw foreign tables of a partitioned table, each bound to one key value v):
 *
 * 1. The coordinator's query reads nothing else: every relation it depends on is a partitioned
 *    table whose partitions are postgres_fdw foreign tables, and every function and operator it
 *    calls (read from its parse tree, nested ones included: pg_depend records no dependency on
 *    built-in objects) is built into PostgreSQL (object id below 16384, FirstNormalObjectId:
 *    initdb's objects, which nobody but a superuser can change) and not volatile (a volatile value
 *    may differ at each of its uses, and the step's aggregate is not fenced).
 * 2. Locks (the guard): a SECOND connection opens a transaction that reads one row of every
 *    partition (the remote server locks its view and, recursively, every relation the view reads,
 *    in ACCESS SHARE mode) and runs a no-op UPDATE of every server's theta table (ROW EXCLUSIVE);
 *    it holds them until the run ends. No one can now replace, alter or drop the views or tables
 *    (ACCESS EXCLUSIVE), nor add a trigger to a theta table (SHARE ROW EXCLUSIVE). The check below
 *    starts after these locks are held, so its snapshot, and every step's, sees the definitions the
 *    servers' planners use (in one connection the snapshot would be taken BEFORE the first lock:
 *    a replacement committed in between would be planned but not seen).
 * 3. Through foreign tables on each server's pg_catalog (`REMOTE_CATALOGS`, created by the setup):
 *    T_rows is a view; its definition, as `pg_get_viewdef` prints it in postgres_fdw's session
 *    (search_path = pg_catalog, so that any object outside pg_catalog is printed schema-qualified),
 *    equals the definition of dpfit's view (`partitionViewSql` for v) created on the coordinator
 *    over stand-ins of T and T_input in a scratch schema (columns of the same types), printed the
 *    same way, the scratch schema's name replaced by the server's (on dpfit's text only, where the
 *    random name occurs nowhere else); the objects its rule depends on are T, T_input, itself and
 *    built-in objects only (this catches what the printed text hides: an implicit cast calling a
 *    user function); T is a plain table (no view, no inheritance read: `ONLY`) without row
 *    security, triggers or rules, with dpfit's columns and types; T_input exists in the same schema.
 *    The coordinator's scratch objects are created in a transaction that is rolled back (its role
 *    needs CREATE on the database).
 *
 * What follows. The rows a step sums are those of dpfit's view: per row, fenced (OFFSET 0) layers
 * of built-in, non-volatile expressions of ONE row of T_input and of the one theta row
 * (`FROM ONLY T LIMIT 1`). Each row's values are computed once, the check of the step sees the
 * values the sums use, and a row's term depends on that row alone: the sensitivity argument of
 * `sql-gradient.ts` applies. T_input is the server's data, whatever it is (a table or a view of
 * the data owner's choosing): what it returns are the rows dpfit protects, as for `--query`; the
 * per-reference trick does nothing there (dpfit's first layer reads each of its columns into a
 * fenced row), and whoever defines or writes the data decides what the data are. The per-row
 * checks of each step stay, and still refuse what a view could not produce.
 */
import { DataFormatError } from '../../errors.js';
import { inTransaction, subquery, type PostgresRunner, type SqlCell, type SqlConnection } from '../../data/node/sql-runner.js';

/** A column of dpfit's theta table, with its type's name and object id. */
export interface ThetaColumn {
  readonly name: string;
  readonly type: string;
  readonly oid: number;
}

/** What the check compares the servers with (all from `sql-gradient.ts`). */
export interface PartitionedViewSpec {
  /** The coordinator's query (`--query`), already accepted by `checkQuery`. */
  readonly query: string;
  readonly partitionKey: string;
  /** The run's name T (`--theta-table`). */
  readonly thetaTable: string;
  /** The columns of T_input that dpfit's view reads. */
  readonly inputColumns: readonly string[];
  readonly thetaColumns: readonly ThetaColumn[];
  /** The body of dpfit's view for key value `value`, over T and T_input (unqualified). */
  viewSql(value: string): string;
}

/** The first object id not created by initdb: below it, PostgreSQL's own objects (pinned: pg_depend records no dependency on them). */
const FIRST_NORMAL_OBJECT_ID = 16384;
const PG_CLASS = 1259;
const PG_PROC = 1255;

/** A foreign table partition and what it reads on its server. */
interface Leaf {
  readonly table: string;
  readonly server: string;
  readonly remoteSchema: string;
  readonly remoteTable: string;
  readonly value: string;
  readonly catalogs: Readonly<Record<string, string>>;
}

const text = (cell: SqlCell): string => String(cell);

/** The value of option `key` among a foreign table's options (`key=value` texts). */
function option(options: readonly string[], key: string): string | undefined {
  const found = options.find((o) => o.startsWith(`${key}=`));
  return found === undefined ? undefined : found.slice(key.length + 1);
}

/**
 * Checks the run's servers (module comment) and returns the guard holding their locks; `release`
 * ends it (after the last step, or on any failure). Throws a one-line DataFormatError naming the
 * server and what is wrong before anything is read from the views.
 */
export async function checkPartitionedViews(runner: PostgresRunner, spec: PartitionedViewSpec): Promise<{ release(): Promise<void> }> {
  const own = await runner.connection();
  const refuse = (where: string, what: string) => new DataFormatError(runner.name, `${where}: ${what}; nothing is trained or released (dpfit reads only the views and tables its setup creates: dpfit train --encoding-sql --partition-key ${spec.partitionKey} --theta-table ${spec.thetaTable})`);
  const leaves = await inTransaction(own, () => coordinatorLeaves(own, spec, refuse), false);
  const guard = await runner.openConnection();
  try {
    await guard.run('BEGIN');
    for (const leaf of leaves) await guard.run(`SELECT count(*) FROM (SELECT 1 FROM ${leaf.table} LIMIT 1) AS s`);
    await guard.run(`UPDATE ${spec.thetaTable}_servers SET nonce = nonce WHERE nonce <> nonce`);
    await inTransaction(own, async () => {
      for (const [k, leaf] of leaves.entries()) await checkServer(own, spec, leaf, k, (what) => refuse(`server ${leaf.server} (${leaf.remoteSchema}.${leaf.remoteTable})`, what));
    }, false);
  } catch (error) {
    await guard.close();
    throw error;
  }
  return {
    async release() {
      await guard.run('ROLLBACK').catch(() => {});
      await guard.close();
    },
  };
}

/** Step 1 of the module comment: the foreign table partitions the coordinator's query reads, with their servers and catalogs. */
async function coordinatorLeaves(own: SqlConnection, spec: PartitionedViewSpec, refuse: (where: string, what: string) => Error): Promise<Leaf[]> {
  const where = '--query';
  await own.run(`CREATE TEMPORARY VIEW dpfit_query AS ${subquery(spec.query)}`);
  // Functions: from the query's parse tree (pg_depend records no dependency on built-in objects, so
  // it would not show nextval or random): every function and operator it calls, nested ones included.
  const [[tree]] = await own.run("SELECT ev_action::text FROM pg_catalog.pg_rewrite WHERE ev_class = 'pg_temp.dpfit_query'::pg_catalog.regclass");
  const functionIds = [...text(tree).matchAll(/:(?:funcid|aggfnoid|winfnoid|opfuncid) (\d+)/g)].map((m) => Number(m[1])).filter((oid) => oid !== 0);
  const operatorIds = [...text(tree).matchAll(/:opno (\d+)/g)].map((m) => Number(m[1]));
  const functions = await own.run(`SELECT p.oid::pg_catalog.int8, pg_catalog.format('%s()', p.oid::pg_catalog.regproc), p.provolatile FROM pg_catalog.pg_proc p
    WHERE p.oid = ANY ($1::pg_catalog.oid[]) OR p.oid IN (SELECT o.oprcode FROM pg_catalog.pg_operator o WHERE o.oid = ANY ($2::pg_catalog.oid[]))`, [`{${functionIds.join(',')}}`, `{${operatorIds.join(',')}}`]);
  for (const [oid, what, volatility] of functions) {
    if (Number(oid) >= FIRST_NORMAL_OBJECT_ID) throw refuse(where, `calls ${text(what)}, which is not built into PostgreSQL`);
    if (volatility === 'v') throw refuse(where, `calls ${text(what)}, a volatile function (it may return another value at each of its uses in a step's sums)`);
  }
  // Relations (and types): pg_depend, which records every object that is not built in.
  const dependencies = await own.run(`SELECT DISTINCT d.refclassid::pg_catalog.int8, d.refobjid::pg_catalog.int8, pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0), c.relkind
    FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_rewrite r ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND d.objid = r.oid
    LEFT JOIN pg_catalog.pg_class c ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = d.refobjid
    WHERE r.ev_class = 'pg_temp.dpfit_query'::pg_catalog.regclass AND d.refobjid <> r.ev_class`);
  const parents: number[] = [];
  for (const [catalog, oid, what, relkind] of dependencies) {
    if (catalog !== PG_CLASS) throw refuse(where, `uses ${text(what)}, which is not built into PostgreSQL`);
    if (relkind !== 'p') throw refuse(where, `reads ${text(what)}, not a partitioned table (with --partition-key it reads the setup's partitioned table: SELECT * FROM ${spec.thetaTable}_parted)`);
    parents.push(Number(oid));
  }
  if (parents.length === 0) throw refuse(where, `reads no partitioned table (with --partition-key it reads the setup's: SELECT * FROM ${spec.thetaTable}_parted)`);
  const leaves: Leaf[] = [];
  for (const parent of parents) {
    const rows = await own.run(`SELECT pg_catalog.format('%I.%I', n.nspname, c.relname), c.relkind, t.isleaf, pg_catalog.pg_get_expr(c.relpartbound, c.oid), s.oid, s.srvname, w.fdwname, n.nspname, c.relname, pg_catalog.array_to_string(ft.ftoptions, chr(31))
      FROM pg_catalog.pg_partition_tree($1::pg_catalog.oid) t JOIN pg_catalog.pg_class c ON c.oid = t.relid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
      LEFT JOIN pg_catalog.pg_foreign_table ft ON ft.ftrelid = c.oid LEFT JOIN pg_catalog.pg_foreign_server s ON s.oid = ft.ftserver
      LEFT JOIN pg_catalog.pg_foreign_data_wrapper w ON w.oid = s.srvfdw
      WHERE t.relid <> $1::pg_catalog.oid`, [parent]);
    if (rows.length === 0) throw refuse(where, 'its partitioned table has no partitions');
    for (const [table, relkind, isLeaf, bound, serverOid, server, fdw, schemaName, relname, options] of rows) {
      if (relkind !== 'f' || isLeaf !== true || fdw !== 'postgres_fdw') throw refuse(where, `partition ${text(table)} is not a postgres_fdw foreign table (a ${relkind === 'f' ? `${text(fdw)} foreign table` : `relation of kind ${text(relkind)}`})`);
      const value = /^FOR VALUES IN \('?(-?\d+)'?\)$/.exec(text(bound));
      if (value === null) throw refuse(where, `partition ${text(table)} is ${text(bound)}, not FOR VALUES IN (one integer)`);
      const opts = text(options ?? '').split('\x1f');
      const catalogRows = await own.run(`SELECT pg_catalog.format('%I.%I', n.nspname, c.relname), pg_catalog.array_to_string(ft.ftoptions, chr(31))
        FROM pg_catalog.pg_foreign_table ft JOIN pg_catalog.pg_class c ON c.oid = ft.ftrelid JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE ft.ftserver = $1::pg_catalog.oid AND 'schema_name=pg_catalog' = ANY (ft.ftoptions)`, [Number(serverOid)]);
      const catalogs: Record<string, string> = {};
      for (const [name, catalogOptions] of catalogRows) {
        const table = option(text(catalogOptions).split('\x1f'), 'table_name');
        if (table !== undefined) catalogs[table] ??= text(name);
      }
      const missing = ['pg_class', 'pg_namespace', 'pg_views', 'pg_rewrite', 'pg_depend', 'pg_attribute', 'pg_trigger', 'pg_proc'].filter((c) => catalogs[c] === undefined);
      if (missing.length > 0) throw refuse(`server ${text(server)}`, `the coordinator has no foreign table on its pg_catalog.${missing[0]} (create them with the setup's section 3)`);
      leaves.push({
        table: text(table),
        server: text(server),
        remoteSchema: option(opts, 'schema_name') ?? text(schemaName),
        remoteTable: option(opts, 'table_name') ?? text(relname),
        value: value[1],
        catalogs,
      });
    }
  }
  return leaves;
}

/** Step 3 of the module comment for one server; `refuse` names the server. */
async function checkServer(own: SqlConnection, spec: PartitionedViewSpec, leaf: Leaf, index: number, refuse: (what: string) => Error): Promise<void> {
  const cat = leaf.catalogs;
  const theta = spec.thetaTable;
  const input = `${theta}_input`;
  const relations = await own.run(`SELECT c.relname, c.oid, c.relkind, c.relrowsecurity FROM ${cat.pg_class} c JOIN ${cat.pg_namespace} n ON n.oid = c.relnamespace
    WHERE n.nspname = $1 AND c.relname IN ($2, $3, $4)`, [leaf.remoteSchema, leaf.remoteTable, theta, input]);
  const found = new Map(relations.map(([name, oid, kind, rls]) => [text(name), { oid: Number(oid), kind: text(kind), rls: rls === true }] as const));
  const view = found.get(leaf.remoteTable);
  const thetaTable = found.get(theta);
  const inputRelation = found.get(input);
  if (view === undefined || view.kind !== 'v') throw refuse(view === undefined ? 'no such relation' : `not a view (relation kind ${view.kind})`);
  if (thetaTable === undefined || thetaTable.kind !== 'r') throw refuse(`${leaf.remoteSchema}.${theta} is ${thetaTable === undefined ? 'missing' : `not a plain table (relation kind ${thetaTable.kind})`}`);
  if (thetaTable.rls) throw refuse(`${leaf.remoteSchema}.${theta} has row-level security`);
  if (inputRelation === undefined) throw refuse(`${leaf.remoteSchema}.${input} (the server's rows) is missing`);
  const triggers = await own.run(`SELECT tgname FROM ${cat.pg_trigger} WHERE tgrelid = $1::pg_catalog.oid`, [thetaTable.oid]);
  if (triggers.length > 0) throw refuse(`${leaf.remoteSchema}.${theta} has a trigger (${text(triggers[0][0])})`);
  const rules = await own.run(`SELECT rulename, ev_class, oid FROM ${cat.pg_rewrite} WHERE ev_class IN ($1::pg_catalog.oid, $2::pg_catalog.oid)`, [thetaTable.oid, view.oid]);
  const thetaRule = rules.find((r) => Number(r[1]) === thetaTable.oid);
  if (thetaRule !== undefined) throw refuse(`${leaf.remoteSchema}.${theta} has a rule (${text(thetaRule[0])})`);
  const viewRules = rules.filter((r) => Number(r[1]) === view.oid);
  if (viewRules.length !== 1 || viewRules[0][0] !== '_RETURN') throw refuse(`the view has rules other than its own (${viewRules.map((r) => text(r[0])).join(', ')})`);
  // What the view's rule depends on: itself, T, T_input and built-in objects only.
  const allowed = new Set([view.oid, thetaTable.oid, inputRelation.oid]);
  const dependencies = await own.run(`SELECT DISTINCT refclassid, refobjid FROM ${cat.pg_depend} WHERE classid = 2618 AND objid = $1::pg_catalog.oid`, [Number(viewRules[0][2])]);
  for (const [catalog, oid] of dependencies) {
    if ((Number(catalog) === PG_CLASS && allowed.has(Number(oid))) || Number(oid) < FIRST_NORMAL_OBJECT_ID) continue;
    if (Number(catalog) === PG_PROC) {
      const [fn] = await own.run(`SELECT n.nspname, p.proname FROM ${cat.pg_proc} p JOIN ${cat.pg_namespace} n ON n.oid = p.pronamespace WHERE p.oid = $1::pg_catalog.oid`, [Number(oid)]);
      throw refuse(`the view calls ${fn === undefined ? `function oid ${oid}` : `${text(fn[0])}.${text(fn[1])}()`}, which is not built into PostgreSQL`);
    }
    if (Number(catalog) === PG_CLASS) {
      const [rel] = await own.run(`SELECT n.nspname, c.relname FROM ${cat.pg_class} c JOIN ${cat.pg_namespace} n ON n.oid = c.relnamespace WHERE c.oid = $1::pg_catalog.oid`, [Number(oid)]);
      throw refuse(`the view reads ${rel === undefined ? `relation oid ${oid}` : `${text(rel[0])}.${text(rel[1])}`} (dpfit's reads only ${theta} and ${input})`);
    }
    throw refuse(`the view depends on object ${oid} of catalog ${catalog}, which is not built into PostgreSQL`);
  }
  // T's columns are dpfit's; T_input's columns read by the view are of built-in types (the stand-in copies them).
  const columns = await own.run(`SELECT attrelid, attname, atttypid, atttypmod FROM ${cat.pg_attribute} WHERE attrelid IN ($1::pg_catalog.oid, $2::pg_catalog.oid) AND attnum > 0 AND NOT attisdropped ORDER BY attrelid, attnum`, [thetaTable.oid, inputRelation.oid]);
  const thetaCols = columns.filter((c) => Number(c[0]) === thetaTable.oid);
  const expected = spec.thetaColumns;
  if (thetaCols.length !== expected.length || thetaCols.some((c, j) => c[1] !== expected[j].name || Number(c[2]) !== expected[j].oid)) {
    throw refuse(`${leaf.remoteSchema}.${theta} does not have dpfit's columns (${expected.map((c) => `${c.name} ${c.type}`).join(', ')})`);
  }
  const inputCols = new Map(columns.filter((c) => Number(c[0]) === inputRelation.oid).map((c) => [text(c[1]), { type: Number(c[2]), typmod: Number(c[3]) }] as const));
  const standIn: string[] = [];
  for (const name of spec.inputColumns) {
    const column = inputCols.get(name);
    if (column === undefined) throw refuse(`${leaf.remoteSchema}.${input} has no column '${name}'`);
    if (column.type >= FIRST_NORMAL_OBJECT_ID) throw refuse(`column '${name}' of ${leaf.remoteSchema}.${input} has a type that is not built into PostgreSQL (oid ${column.type})`);
    const [[typeName]] = await own.run('SELECT pg_catalog.format_type($1::pg_catalog.oid, $2::integer)', [column.type, column.typmod]);
    standIn.push(`${quoteIdentifier(name)} ${text(typeName)}`);
  }
  const [definition] = await own.run(`SELECT definition FROM ${cat.pg_views} WHERE schemaname = $1 AND viewname = $2`, [leaf.remoteSchema, leaf.remoteTable]);
  const expectedText = await expectedDefinition(own, spec, leaf, index, standIn);
  if (definition === undefined || definition[0] !== expectedText) throw refuse(`its definition is not the view dpfit creates for this server (partition value ${leaf.value}; or the server runs another PostgreSQL major version than the coordinator, which prints views differently)`);
}

/** An identifier quoted for SQL. */
function quoteIdentifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * dpfit's view for `leaf` as the coordinator prints it (module comment, 3): created over stand-ins
 * in a scratch schema of this (rolled-back) transaction, printed with postgres_fdw's session
 * settings, the scratch schema's name then replaced by the server's schema.
 */
async function expectedDefinition(own: SqlConnection, spec: PartitionedViewSpec, leaf: Leaf, index: number, inputColumns: readonly string[]): Promise<string> {
  const scratch = `dpfit_check_${Date.now().toString(36)}_${Math.floor(Math.random() * 2 ** 31).toString(36)}_${index}`;
  await own.run(`CREATE SCHEMA ${scratch}`);
  await own.run('SELECT pg_catalog.set_config($1, $2, true)', ['search_path', scratch]);
  await own.run(`CREATE TABLE ${spec.thetaTable} (${spec.thetaColumns.map((c) => `${c.name} ${c.type}`).join(', ')})`);
  await own.run(`CREATE TABLE ${spec.thetaTable}_input (${inputColumns.join(', ')})`);
  await own.run(`CREATE VIEW dpfit_expected AS ${spec.viewSql(leaf.value)}`);
  // postgres_fdw's remote session settings (configure_remote_session), under which the server printed its view.
  for (const [key, value] of [['search_path', 'pg_catalog'], ['extra_float_digits', '3'], ['datestyle', 'ISO'], ['intervalstyle', 'postgres'], ['timezone', 'UTC']]) {
    await own.run('SELECT pg_catalog.set_config($1, $2, true)', [key, value]);
  }
  const [[printed, schemaName]] = await own.run(`SELECT pg_catalog.pg_get_viewdef('${scratch}.dpfit_expected'::pg_catalog.regclass), pg_catalog.quote_ident($1)`, [leaf.remoteSchema]);
  return text(printed).replaceAll(`${scratch}.`, `${text(schemaName)}.`);
}
