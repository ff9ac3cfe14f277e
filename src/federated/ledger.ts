/**
 * A node's persistent privacy ledger: every release the node granted, on disk, in an embedded
 * transactional database (DuckDB through `@duckdb/node-api`, loaded lazily), so that the node's
 * budget holds across restarts, crashes (kill -9 at any instant) and concurrent requests.
 *
 * The rule. What the node has released is the composition of the events of all granted entries;
 * each entry's `extraDelta` (delta paid outside the RDP accounting: Propose-Test-Release's
 * delta_ptr) is added by a union bound. An entry is granted iff, with it, sum(extraDelta) <
 * budget.delta and the epsilon of the composition at delta = budget.delta - sum(extraDelta) is
 * <= budget.epsilon. The rule itself is `decideBudget` of `budget.ts` (RDP, or the exact Gaussian
 * composition when every event is a Gaussian, whichever is smaller), so this ledger and the
 * in-memory one decide alike. An event the accountant cannot handle (a conjecture, a mix of
 * neighbouring relations, a malformed event) is refused with the accountant's reason; a
 * non-private event (epsilon Infinity) fits only a budget whose epsilon is Infinity.
 *
 * The database is the truth. `reserve` runs BEGIN, reads the granted entries, decides, INSERTs and
 * COMMITs in ONE transaction, and every operation on the connection (reservations, reads, close)
 * goes through one async mutex, so two concurrent reservations are decided one after the other
 * and can never both be granted when together they exceed the budget. DuckDB locks the file
 * against other processes (a second node on the same ledger is refused: `DataFormatError` "is in
 * use by another process"), and this module refuses to open a ledger twice in one process (the
 * OS lock does not separate two handles of one process, and two mutexes would not serialise each
 * other).
 *
 * Durability — what `reserve` relies on before it resolves `granted: true`:
 *   1. DuckDB (1.5.5, the pinned version) writes a committed transaction to the write-ahead log
 *      `FILE.wal` and fsync()s the log before COMMIT returns. Checked with strace: the sequence is
 *      write(wal), fsync(wal), then COMMIT resolves. DuckDB 1.5 has no setting that skips this
 *      fsync (its settings about the WAL are checkpoint thresholds and debug switches), so no
 *      config and no CHECKPOINT are needed: after a crash, the next open replays the log (a
 *      read-only open too, in memory), and an uncommitted transaction was never in the log.
 *   2. DuckDB deletes the WAL at every checkpoint (on close, or past 16 MiB of log) and the next
 *      COMMIT creates it again without fsyncing the directory. A process crash cannot lose that
 *      directory entry (the kernel's page cache survives kill -9), but a power failure could, so
 *      after each COMMIT the ledger fsyncs the file's directory itself (also after creating it).
 *      The strace of a reservation shows write(wal), fsync(wal), fsync(directory), then the grant.
 * A crash before COMMIT returns grants nothing and leaves nothing; a crash after it leaves the
 * entry on disk although the caller may not have learnt of the grant — the spent budget can only
 * be over-counted, never under-counted. Any error while recording (a full disk, an I/O error) is
 * thrown, never a grant. The kill -9 test (`test/federated/ledger.test.ts`) kills a writer at
 * random instants and checks that every grant it announced is on disk and that the spent budget
 * never decreases nor exceeds the budget.
 *
 * The budget is stored in the ledger when it is created and can never be raised: opening an
 * existing ledger with a larger epsilon or delta is refused (`InvalidParameterError` naming
 * `--budget-epsilon` / `--budget-delta` and the stored budget). A smaller budget is accepted as a
 * cap for this open only (it refuses more, and it must still cover what was already spent); the
 * stored budget is unchanged.
 *
 * Speed: identical events are grouped in SQL (GROUP BY their JSON) and each group is one
 * `selfCompose` (the accountants group identical releases anyway: one RDP curve times a count),
 * so a decision costs one accounting of the distinct events, not of every entry.
 */
import { existsSync, realpathSync } from 'node:fs';
import { open as openFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import type { DpEvent } from '../accounting/events/types.js';
import { NO_OP_EVENT, selfComposeEvent } from '../accounting/events/constructors.js';
import { MAX_EVENT_DEPTH, requireEventDepth } from '../accounting/events/depth.js';
import { eventToJson, parseEvent } from '../accounting/events/json.js';
import { loadDuckDb } from '../data/node/load-duckdb.js';
import { DataFormatError, DpfitError, InvalidParameterError, describeValue } from '../errors.js';
import { rejectUnknownOptions } from '../validate.js';
import { BUDGET_NAMES, type Budget, type BudgetEntry, type BudgetLedger, decideBudget, extraDeltaSum, type LedgerDecision, spentBudget, type SpentBudget } from './budget.js';

export type { Budget, LedgerDecision, SpentBudget } from './budget.js';

/** One granted release, as stored. */
export interface LedgerEntry {
  readonly id: number;
  /** ISO 8601 time of the grant (UTC). */
  readonly time: string;
  /** Who asked (a coordinator's name or address), at most `MAX_CLIENT_LENGTH` characters. */
  readonly client: string;
  /** What was released, at most `MAX_DESCRIPTION_LENGTH` characters. */
  readonly description: string;
  readonly event: DpEvent;
  /** Delta paid outside the RDP accounting (Propose-Test-Release), added by a union bound. */
  readonly extraDelta: number;
}

/** The stored file format. */
export const LEDGER_FORMAT = 'dpfit-privacy-ledger/1';
/** Longer `client` strings are stored truncated (a remote caller must not bloat the ledger). */
export const MAX_CLIENT_LENGTH = 500;
/** Longer `description` strings are stored truncated. */
export const MAX_DESCRIPTION_LENGTH = 2000;

const META_TABLE = 'dpfit_ledger_meta';
const ENTRIES_TABLE = 'dpfit_ledger_entries';

/** Ledgers open in this process, by real path. */
const OPEN = new Set<string>();

/** Checks a budget: epsilon > 0 (Infinity: a node that may answer non-privately), delta in [0, 1). */
function requireBudget(budget: Budget): Budget {
  if (budget === null || typeof budget !== 'object') throw new InvalidParameterError('budget', budget, 'an object {epsilon, delta}');
  rejectUnknownOptions(budget, BUDGET_NAMES, "PrivacyLedger.open's budget");
  const { epsilon, delta } = budget;
  if (!(typeof epsilon === 'number' && epsilon > 0)) {
    throw new InvalidParameterError('--budget-epsilon', epsilon, 'a number > 0 (Infinity: a node that may answer non-privately)');
  }
  // delta = 0 is a valid budget, but grants nothing: the rule needs sum(extraDelta) < delta and RDP
  // gives no finite epsilon at delta 0.
  if (!(typeof delta === 'number' && delta >= 0 && delta < 1)) throw new InvalidParameterError('--budget-delta', delta, 'a number in [0, 1)');
  return Object.freeze({ epsilon, delta });
}

/** Budget numbers are stored as text: String() round-trips every double, and Infinity is 'Infinity'. */
const storeNumber = (x: number): string => String(x);

function loadNumber(path: string, key: string, text: string | undefined): number {
  const x = text === undefined ? NaN : Number(text);
  if (Number.isNaN(x)) throw new DataFormatError(path, `is not a dpfit ledger (stored ${key} ${describeValue(text)} is not a number)`);
  return x;
}

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return (message.split('\n').find((l) => l.trim() !== '') ?? message).trim();
}

/**
 * At most `max` UTF-16 units of `text`, as valid Unicode (DuckDB stores UTF-8): lone surrogates,
 * e.g. half of an emoji cut by the truncation, become U+FFFD.
 */
function storableText(text: string, max: number): string {
  return text.slice(0, max).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}

/**
 * fsync()s a directory, so that a file created or deleted in it survives a power failure.
 * Platforms that cannot open a directory (Windows) skip it: a process crash is covered anyway.
 */
async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await openFile(dir, 'r');
  } catch (error) {
    if ((error as { code?: string }).code === 'EISDIR' || (error as { code?: string }).code === 'EPERM') return;
    throw error;
  }
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** The granted entries as the budget rule sees them: grouped identical events, extra deltas in grant order. */
interface LedgerState {
  /** Items for `decideBudget`: one per distinct event (a selfCompose), then one noOp per nonzero extraDelta. */
  readonly items: Pick<BudgetEntry, 'event' | 'extraDelta'>[];
  readonly count: number;
  readonly maxId: number;
}

export class PrivacyLedger implements BudgetLedger {
  private tail: Promise<void> = Promise.resolve();
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Parsed events by their stored JSON (parsing is pure: a cache is safe). */
  private readonly parsed = new Map<string, DpEvent>();

  private constructor(
    /** The ledger file, as given. */
    readonly path: string,
    /** The budget this open enforces: the stored one, or a lower cap given to `open`. */
    readonly budget: Budget,
    /** The budget stored in the file (fixed when the ledger was created). */
    readonly storedBudget: Budget,
    readonly readOnly: boolean,
    private readonly keys: readonly string[],
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /**
   * Opens the ledger at `path` for a node with `budget`, creating the file and its tables when
   * absent. Refuses: an invalid budget or one above the stored budget (`InvalidParameterError`,
   * naming `--budget-epsilon` / `--budget-delta`), a cap below what was already spent, a ledger in
   * use by another process and a file that is not a ledger (`DataFormatError`).
   */
  static async open(path: string, budget: Budget): Promise<PrivacyLedger> {
    const wanted = requireBudget(budget);
    if (typeof path !== 'string' || path === '') throw new InvalidParameterError('--ledger', path, 'a file path');
    return PrivacyLedger.connect(path, wanted);
  }

  /**
   * Opens an existing ledger to read it (`dpfit ledger show`) with its stored budget; `reserve`
   * throws. A missing file is a `DataFormatError`. A running node holds the file: refused too.
   */
  static async openReadOnly(path: string): Promise<PrivacyLedger> {
    if (typeof path !== 'string' || path === '') throw new InvalidParameterError('--ledger', path, 'a file path');
    if (!existsSync(path)) throw new DataFormatError(path, 'no such ledger file');
    return PrivacyLedger.connect(path, undefined);
  }

  private static async connect(path: string, wanted: Budget | undefined): Promise<PrivacyLedger> {
    // Claimed before anything is awaited, so that two opens in this process cannot race.
    const keys = new Set([existsSync(path) ? realpathSync(path) : resolve(path)]);
    if ([...keys].some((k) => OPEN.has(k))) throw new DataFormatError(path, 'is already open in this process (one node per ledger: close it first)');
    for (const k of keys) OPEN.add(k);
    const release = () => {
      for (const k of keys) OPEN.delete(k);
    };
    let instance: DuckDBInstance;
    try {
      const { DuckDBInstance } = await loadDuckDb(path, 'the privacy ledger');
      const config: Record<string, string> = { threads: '1' };
      if (wanted === undefined) config.access_mode = 'READ_ONLY';
      instance = await DuckDBInstance.create(path, config);
    } catch (error) {
      release();
      if (error instanceof DpfitError) throw error;
      const message = firstLine(error);
      if (/could not set lock|conflicting lock/i.test(message)) {
        const pid = /PID (\d+)/.exec(message);
        throw new DataFormatError(
          path,
          `is in use by another process${pid ? ` (PID ${pid[1]})` : ''}: one process at a time may open a ledger (a running node, or dpfit ledger show); stop it, or give this node its own ledger`,
        );
      }
      throw new DataFormatError(path, `cannot be opened as a dpfit ledger (${message})`);
    }
    // The file exists now: its real path too (a second name of a ledger open here is refused).
    const real = realpathSync(path);
    if (!keys.has(real)) {
      if (OPEN.has(real)) {
        instance.closeSync();
        release();
        throw new DataFormatError(path, 'is already open in this process (one node per ledger: close it first)');
      }
      keys.add(real);
      OPEN.add(real);
    }
    let connection: DuckDBConnection | undefined;
    try {
      connection = await instance.connect();
      const tables = new Set(
        (await connection.runAndReadAll("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")).getRowObjects().map((r) => String(r.table_name)),
      );
      let stored: Budget;
      if (tables.size === 0 && wanted !== undefined) {
        // A new ledger (or an empty database file, e.g. a creation that crashed before this commit).
        await connection.run('BEGIN TRANSACTION');
        try {
          await connection.run(`CREATE TABLE ${META_TABLE} (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)`);
          await connection.run(
            `CREATE TABLE ${ENTRIES_TABLE} (id INTEGER PRIMARY KEY, time VARCHAR NOT NULL, client VARCHAR NOT NULL, description VARCHAR NOT NULL, event VARCHAR NOT NULL, extra_delta DOUBLE NOT NULL)`,
          );
          await connection.run(`INSERT INTO ${META_TABLE} VALUES ('format', $1), ('epsilon', $2), ('delta', $3), ('created', $4)`, [
            LEDGER_FORMAT,
            storeNumber(wanted.epsilon),
            storeNumber(wanted.delta),
            new Date().toISOString(),
          ]);
          await connection.run('COMMIT');
        } catch (error) {
          await connection.run('ROLLBACK').catch(() => undefined);
          throw error;
        }
        await syncDirectory(dirname(resolve(path)));
        stored = wanted;
      } else {
        if (!tables.has(META_TABLE) || !tables.has(ENTRIES_TABLE)) {
          throw new DataFormatError(path, `is not a dpfit ledger (a DuckDB database without the tables ${META_TABLE} and ${ENTRIES_TABLE})`);
        }
        stored = await PrivacyLedger.readStoredBudget(connection, path);
      }
      const ledger = new PrivacyLedger(path, wanted ?? stored, stored, wanted === undefined, [...keys], instance, connection);
      if (wanted !== undefined && (wanted.epsilon !== stored.epsilon || wanted.delta !== stored.delta)) await ledger.checkCap(stored);
      return ledger;
    } catch (error) {
      release();
      connection?.closeSync();
      instance.closeSync();
      if (error instanceof DpfitError) throw error;
      throw new DataFormatError(path, `is not a dpfit ledger (${firstLine(error)})`);
    }
  }

  private static async readStoredBudget(connection: DuckDBConnection, path: string): Promise<Budget> {
    const rows = (await connection.runAndReadAll(`SELECT key, value FROM ${META_TABLE}`)).getRowObjects();
    const meta = new Map(rows.map((r) => [String(r.key), String(r.value)]));
    if (meta.get('format') !== LEDGER_FORMAT) throw new DataFormatError(path, `is not a dpfit ledger (format ${describeValue(meta.get('format'))}, expected ${LEDGER_FORMAT})`);
    const epsilon = loadNumber(path, 'epsilon', meta.get('epsilon'));
    const delta = loadNumber(path, 'delta', meta.get('delta'));
    if (!(epsilon > 0 && delta >= 0 && delta < 1)) throw new DataFormatError(path, `is not a valid dpfit ledger (stored budget epsilon ${epsilon}, delta ${delta})`);
    return Object.freeze({ epsilon, delta });
  }

  /** Refuses a budget above the stored one, and a lower cap that does not cover what was spent. */
  private async checkCap(stored: Budget): Promise<void> {
    const raise = `at most the ledger's stored budget (epsilon = ${stored.epsilon}, delta = ${stored.delta}) of ${this.path}: a ledger's budget can never be raised`;
    if (this.budget.epsilon > stored.epsilon) throw new InvalidParameterError('--budget-epsilon', this.budget.epsilon, raise);
    if (this.budget.delta > stored.delta) throw new InvalidParameterError('--budget-delta', this.budget.delta, raise);
    const state = await this.readState();
    if (state.count === 0) return;
    const extra = extraDeltaSum(state.items);
    if (!(extra < this.budget.delta)) {
      throw new InvalidParameterError('--budget-delta', this.budget.delta, `> ${extra}, the delta this ledger already paid outside RDP (${this.path}), and <= its stored budget ${stored.delta}`);
    }
    const spent = spentBudget(state.items, this.budget);
    if (!(spent.epsilon <= this.budget.epsilon)) {
      throw new InvalidParameterError(
        '--budget-epsilon',
        this.budget.epsilon,
        `>= ${spent.epsilon}, the epsilon this ledger already spent at delta ${this.budget.delta} over ${state.count} release(s) (${this.path}), and <= its stored budget ${stored.epsilon}`,
      );
    }
  }

  /** Runs `work` after every earlier operation on this ledger finished (the async mutex). */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.tail.then(() => {
      if (this.closed) throw new DataFormatError(this.path, 'the ledger is closed');
      return work();
    });
    this.tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  }

  private parse(json: string): DpEvent {
    let event = this.parsed.get(json);
    if (event === undefined) {
      try {
        event = parseEvent(json);
      } catch (error) {
        throw new DataFormatError(this.path, `holds an event that cannot be read (${firstLine(error)}): the ledger is damaged; nothing can be granted`);
      }
      this.parsed.set(json, event);
    }
    return event;
  }

  /** The granted entries, grouped for the budget rule (call inside `exclusive`). */
  private async readState(): Promise<LedgerState> {
    const totals = (await this.connection.runAndReadAll(`SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM ${ENTRIES_TABLE}`)).getRowObjects()[0];
    const count = Number(totals.n);
    const maxId = Number(totals.last);
    const items: Pick<BudgetEntry, 'event' | 'extraDelta'>[] = [];
    if (count === 0) return { items, count, maxId };
    const groups = (await this.connection.runAndReadAll(`SELECT event, count(*) AS n, min(id) AS first FROM ${ENTRIES_TABLE} GROUP BY event ORDER BY first`)).getRowObjects();
    for (const group of groups) {
      const event = this.parse(String(group.event));
      const n = Number(group.n);
      if (n === 1) items.push({ event, extraDelta: 0 });
      else if (requireEventDepth(event) + 2 <= MAX_EVENT_DEPTH) items.push({ event: selfComposeEvent(event, n), extraDelta: 0 });
      else for (let i = 0; i < n; i++) items.push({ event, extraDelta: 0 }); // a wrapper would pass the depth limit
    }
    // The extra deltas one by one in grant order: the rule's sum is then the same as over the entries.
    const extras = (await this.connection.runAndReadAll(`SELECT extra_delta FROM ${ENTRIES_TABLE} WHERE extra_delta <> 0 ORDER BY id`)).getRowObjects();
    for (const row of extras) {
      const extraDelta = Number(row.extra_delta);
      if (!(extraDelta > 0 && extraDelta < 1)) throw new DataFormatError(this.path, `holds an extra delta ${extraDelta} outside (0, 1): the ledger is damaged; nothing can be granted`);
      items.push({ event: NO_OP_EVENT, extraDelta });
    }
    return { items, count, maxId };
  }

  /**
   * Grants `entry` iff the composition of every granted event with its event meets the budget (the
   * rule of the file comment), and records it: check, insert and commit in one transaction,
   * durable before the promise resolves. Not granted: `{granted: false, reason}`, nothing
   * recorded. Throws (never grants) when the ledger is closed or read-only, on malformed
   * `client`/`description`/`extraDelta`, and when the database cannot record the entry.
   */
  reserve(entry: BudgetEntry): Promise<LedgerDecision> {
    return this.exclusive(async (): Promise<LedgerDecision> => {
      if (this.readOnly) throw new DataFormatError(this.path, 'is open read-only: nothing can be reserved');
      const { client, description, extraDelta } = entry;
      if (typeof client !== 'string') throw new InvalidParameterError('client', client, 'a string');
      if (typeof description !== 'string') throw new InvalidParameterError('description', description, 'a string');
      if (!(typeof extraDelta === 'number' && extraDelta >= 0 && extraDelta < 1)) throw new InvalidParameterError('extraDelta', extraDelta, 'a number in [0, 1)');
      // What is accounted is exactly what is stored: the event read back from its stored JSON.
      let json: string;
      let event: DpEvent;
      try {
        json = JSON.stringify(eventToJson(entry.event));
        event = parseEvent(json);
      } catch (error) {
        if (!(error instanceof DpfitError)) throw error;
        return { granted: false, reason: `the request's event is not a valid event: ${error.message}`, spent: await this.computeSpent() };
      }
      let id: number;
      let spent: SpentBudget;
      try {
        await this.connection.run('BEGIN TRANSACTION');
        const state = await this.readState();
        const decision = decideBudget(state.items, { event, extraDelta }, this.budget);
        if (!decision.granted) {
          await this.connection.run('ROLLBACK');
          return { granted: false, reason: decision.reason ?? 'over the budget', spent: { ...decision.spentBefore, entries: state.count } };
        }
        id = state.maxId + 1;
        spent = { ...decision.spentAfter, entries: state.count + 1 };
        await this.connection.run(`INSERT INTO ${ENTRIES_TABLE} VALUES ($1, $2, $3, $4, $5, $6)`, [
          id,
          new Date().toISOString(),
          storableText(client, MAX_CLIENT_LENGTH),
          storableText(description, MAX_DESCRIPTION_LENGTH),
          json,
          extraDelta,
        ]);
        await this.connection.run('COMMIT');
      } catch (error) {
        await this.connection.run('ROLLBACK').catch(() => undefined);
        if (error instanceof DpfitError) throw error;
        throw new DataFormatError(this.path, `could not record the reservation, nothing was granted (${firstLine(error)})`);
      }
      try {
        await syncDirectory(dirname(resolve(this.path)));
      } catch (error) {
        // Committed, so the entry counts against the budget; but it is not known durable: no grant.
        throw new DataFormatError(this.path, `could not sync the ledger's directory, nothing was granted (${firstLine(error)})`);
      }
      return { granted: true, id, spent };
    });
  }

  private async computeSpent(): Promise<SpentBudget> {
    const state = await this.readState();
    return { ...spentBudget(state.items, this.budget), entries: state.count };
  }

  /**
   * What the node has released: the epsilon of the composition of every granted event at delta =
   * budget.delta - sum(extraDelta), by the same rule as `reserve`; `delta` is the delta of that
   * guarantee, the RDP delta plus the extra deltas, i.e. budget.delta once anything was granted
   * (0, with epsilon 0, when nothing was).
   */
  spent(): Promise<SpentBudget> {
    return this.exclusive(() => this.computeSpent());
  }

  /** Every granted entry, in grant order. */
  entries(): Promise<LedgerEntry[]> {
    return this.exclusive(async () => {
      const rows = (await this.connection.runAndReadAll(`SELECT id, time, client, description, event, extra_delta FROM ${ENTRIES_TABLE} ORDER BY id`)).getRowObjects();
      return rows.map((r) => ({
        id: Number(r.id),
        time: String(r.time),
        client: String(r.client),
        description: String(r.description),
        event: this.parse(String(r.event)),
        extraDelta: Number(r.extra_delta),
      }));
    });
  }

  /** Closes the ledger after every pending operation (DuckDB checkpoints the log into the file). */
  close(): Promise<void> {
    this.closing ??= this.exclusive(async () => {
      this.closed = true;
      try {
        this.connection.closeSync();
        this.instance.closeSync();
      } finally {
        for (const k of this.keys) OPEN.delete(k);
      }
    });
    return this.closing;
  }
}
