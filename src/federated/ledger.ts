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
 * The database is the truth, and no process keeps it open. Every operation (a reservation, a
 * read) opens the file, works in ONE transaction and closes it: `reserve` runs BEGIN, reads the
 * granted entries, decides, INSERTs and COMMITs, so the decision is taken from what is on disk at
 * that instant. Two guards serialise the operations on one file:
 *   - across processes, DuckDB's own lock on the file (an fcntl lock: exclusive for a read-write
 *     open, shared for a read-only one, released by the kernel when the holder exits or is killed,
 *     so a crashed process never leaves a stale lock). An open that meets another process's lock
 *     waits and retries (random back-off up to 200 ms) until `lockTimeoutMs` (default 120 s), then
 *     refuses (`DataFormatError` "is in use by another process (PID ...)");
 *   - inside one process, a queue per file (by real path): fcntl locks do not separate two handles
 *     of one process, so two `PrivacyLedger` objects on one file in one process take turns.
 * So several processes may use one ledger at once (a running `dpfit node serve`, `dpfit train
 * --ledger`, `dpfit ledger show`): their reservations are decided one after the other and can
 * never both be granted when together they exceed the budget (test/federated/ledger.test.ts races
 * eight processes). Cost: an open-work-close cycle, ~0.1-0.2 s on a loaded 2-CPU machine (measured
 * in that test's log); a node reserves once per session, a CLI run once per run.

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
 *    3. Closing checkpoints the log into the file and deletes the log; the directory is fsynced
 *      again after the close, so that a deleted log does not come back after a power failure.
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
import { optionNames, rejectUnknownOptions } from '../validate.js';
import { type Budget, type BudgetEntry, type BudgetLedger, decideBudget, extraDeltaSum, type LedgerDecision, spentBudget, type SpentBudget } from '../accounting/budget/rule.js';
import { remainingBudget, requireBudget } from '../accounting/budget/privacy-budget.js';

export type { Budget, LedgerDecision, SpentBudget } from '../accounting/budget/rule.js';

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

/** How long an open waits for another process's lock on the file by default. */
export const DEFAULT_LOCK_TIMEOUT_MS = 120_000;

export interface LedgerOpenOptions {
  /** How long an operation waits for another process that holds the file (default 120 s). */
  readonly lockTimeoutMs?: number;
}

const LEDGER_OPEN_OPTIONS = optionNames<LedgerOpenOptions>({ lockTimeoutMs: true });

/** The tail of each file's in-process queue, by real path (module comment). */
const QUEUES = new Map<string, Promise<void>>();

/** Runs `work` after every earlier operation of this process on the file `key`. */
function queued<T>(key: string, work: () => Promise<T>): Promise<T> {
  const run = (QUEUES.get(key) ?? Promise.resolve()).then(work);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  QUEUES.set(key, tail);
  void tail.then(() => {
    if (QUEUES.get(key) === tail) QUEUES.delete(key);
  });
  return run;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function isLockConflict(message: string): boolean {
  return /could not set lock|conflicting lock/i.test(message);
}

/**
 * Opens the database at `path` (read-write or read-only), waiting while another process holds
 * its lock, up to `timeoutMs`; then a one-line `DataFormatError` naming the holder's PID.
 */
async function openDatabase(path: string, readOnly: boolean, timeoutMs: number): Promise<DuckDBInstance> {
  const { DuckDBInstance } = await loadDuckDb(path, 'the privacy ledger');
  const config: Record<string, string> = { threads: '1' };
  if (readOnly) config.access_mode = 'READ_ONLY';
  const start = Date.now();
  for (let attempt = 0; ; attempt++) {
    try {
      return await DuckDBInstance.create(path, config);
    } catch (error) {
      const message = firstLine(error);
      if (!isLockConflict(message)) throw new DataFormatError(path, `cannot be opened as a dpfit ledger (${message})`);
      if (Date.now() - start >= timeoutMs) {
        const pid = /PID (\d+)/.exec(message);
        throw new DataFormatError(
          path,
          `is in use by another process${pid ? ` (PID ${pid[1]})` : ''} for more than ${timeoutMs / 1000} s: a ledger is locked only while one operation runs, so that process is stuck or holds it open (an older dpfit); stop it and retry`,
        );
      }
      // Random back-off (not a fixed period: waiting processes would wake together), growing to at most 200 ms.
      await sleep(1 + Math.floor(Math.random() * Math.min(200, 5 + 10 * attempt)));
    }
  }
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

/** What `dpfit ledger show` and a node's `GET /budget` print: the same object. */
export interface LedgerSummary {
  readonly format: typeof LEDGER_FORMAT;
  readonly budget: Budget;
  readonly spent: SpentBudget;
  /** What is left (`remainingBudget`: the epsilon headroom rounded down; the rule decides what fits). */
  readonly remaining: Budget;
  readonly entries: readonly (Omit<LedgerEntry, 'event'> & { readonly epsilon: number; readonly event: ReturnType<typeof eventToJson> })[];
}

export class PrivacyLedger implements BudgetLedger {
  private closed = false;
  private pending: Promise<unknown> = Promise.resolve();
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
    /** The file's real path: its in-process queue. */
    private readonly key: string,
    private readonly lockTimeoutMs: number,
  ) {}

  /**
   * Opens the ledger at `path` with `budget`, creating the file and its tables when absent (the
   * budget is then stored). Refuses: an invalid budget or one above the stored budget
   * (`InvalidParameterError`, naming `--budget-epsilon` / `--budget-delta`), a cap below what was
   * already spent, a file that is not a ledger, and a file another process holds for longer than
   * `lockTimeoutMs` (`DataFormatError`). Holds no file handle: every operation opens and closes.
   */
  static async open(path: string, budget: Budget, options: LedgerOpenOptions = {}): Promise<PrivacyLedger> {
    const wanted = requireBudget(budget, "PrivacyLedger.open's budget", { epsilon: '--budget-epsilon', delta: '--budget-delta' });
    return PrivacyLedger.connect(path, wanted, options);
  }

  /**
   * Opens an existing ledger to read it (`dpfit ledger show`) with its stored budget; `reserve`
   * throws. A missing file is a `DataFormatError`. Another process may use the ledger meanwhile.
   */
  static async openReadOnly(path: string, options: LedgerOpenOptions = {}): Promise<PrivacyLedger> {
    return PrivacyLedger.connect(path, undefined, options);
  }

  private static async connect(path: string, wanted: Budget | undefined, options: LedgerOpenOptions): Promise<PrivacyLedger> {
    if (typeof path !== 'string' || path === '') throw new InvalidParameterError('--ledger', path, 'a file path');
    rejectUnknownOptions(options, LEDGER_OPEN_OPTIONS, 'PrivacyLedger.open');
    const lockTimeoutMs = options.lockTimeoutMs ?? DEFAULT_LOCK_TIMEOUT_MS;
    if (!(typeof lockTimeoutMs === 'number' && lockTimeoutMs >= 0 && lockTimeoutMs <= 3_600_000)) throw new InvalidParameterError('lockTimeoutMs', lockTimeoutMs, 'a number of milliseconds in [0, 3600000]');
    if (wanted === undefined && !existsSync(path)) throw new DataFormatError(path, 'no such ledger file');
    // The queue of a file not created yet is its absolute path; once it exists, its real path (a
    // symbolic link and its target share one queue). Creation is serialised on the former.
    const created = existsSync(path);
    const firstKey = created ? realpathSync(path) : resolve(path);
    const stored = await queued(firstKey, () =>
      PrivacyLedger.withDatabase(path, wanted === undefined, lockTimeoutMs, async (connection) => {
        const tables = new Set(
          (await connection.runAndReadAll("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'")).getRowObjects().map((r) => String(r.table_name)),
        );
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
          return wanted;
        }
        if (!tables.has(META_TABLE) || !tables.has(ENTRIES_TABLE)) {
          throw new DataFormatError(path, `is not a dpfit ledger (a DuckDB database without the tables ${META_TABLE} and ${ENTRIES_TABLE})`);
        }
        return PrivacyLedger.readStoredBudget(connection, path);
      }),
    );
    const ledger = new PrivacyLedger(path, wanted ?? stored, stored, wanted === undefined, realpathSync(path), lockTimeoutMs);
    if (wanted !== undefined && (wanted.epsilon !== stored.epsilon || wanted.delta !== stored.delta)) await ledger.checkCap(stored);
    return ledger;
  }

  /**
   * Opens the file, runs `work` on a connection, closes (checkpoint), fsyncs the directory after
   * a read-write close. Call inside the file's queue.
   */
  private static async withDatabase<T>(path: string, readOnly: boolean, lockTimeoutMs: number, work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    const instance = await openDatabase(path, readOnly, lockTimeoutMs);
    let connection: DuckDBConnection | undefined;
    let result: T;
    try {
      connection = await instance.connect();
      result = await work(connection);
    } catch (error) {
      if (error instanceof DpfitError) throw error;
      throw new DataFormatError(path, `is not a dpfit ledger (${firstLine(error)})`);
    } finally {
      connection?.closeSync();
      instance.closeSync();
    }
    if (!readOnly) await syncDirectory(dirname(resolve(path)));
    return result;
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
    const state = await this.operation(true, (c) => this.readState(c));
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

  /** One operation on the file: in this file's queue, opened read-only (`read`) or read-write, closed after. */
  private operation<T>(read: boolean, work: (connection: DuckDBConnection) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new DataFormatError(this.path, 'the ledger is closed'));
    const run = queued(this.key, () => PrivacyLedger.withDatabase(this.path, read || this.readOnly, this.lockTimeoutMs, work));
    this.pending = run.catch(() => undefined);
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

  /** The granted entries, grouped for the budget rule. */
  private async readState(connection: DuckDBConnection): Promise<LedgerState> {
    const totals = (await connection.runAndReadAll(`SELECT count(*) AS n, coalesce(max(id), 0) AS last FROM ${ENTRIES_TABLE}`)).getRowObjects()[0];
    const count = Number(totals.n);
    const maxId = Number(totals.last);
    const items: Pick<BudgetEntry, 'event' | 'extraDelta'>[] = [];
    if (count === 0) return { items, count, maxId };
    const groups = (await connection.runAndReadAll(`SELECT event, count(*) AS n, min(id) AS first FROM ${ENTRIES_TABLE} GROUP BY event ORDER BY first`)).getRowObjects();
    for (const group of groups) {
      const event = this.parse(String(group.event));
      const n = Number(group.n);
      if (n === 1) items.push({ event, extraDelta: 0 });
      else if (requireEventDepth(event) + 2 <= MAX_EVENT_DEPTH) items.push({ event: selfComposeEvent(event, n), extraDelta: 0 });
      else for (let i = 0; i < n; i++) items.push({ event, extraDelta: 0 }); // a wrapper would pass the depth limit
    }
    // The extra deltas one by one in grant order: the rule's sum is then the same as over the entries.
    const extras = (await connection.runAndReadAll(`SELECT extra_delta FROM ${ENTRIES_TABLE} WHERE extra_delta <> 0 ORDER BY id`)).getRowObjects();
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
  async reserve(entry: BudgetEntry): Promise<LedgerDecision> {
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
      return { granted: false, reason: `the request's event is not a valid event: ${error.message}`, spent: await this.spent() };
    }
    let committed = false;
    try {
      return await this.operation(false, async (connection): Promise<LedgerDecision> => {
        try {
          await connection.run('BEGIN TRANSACTION');
          const state = await this.readState(connection);
          const decision = decideBudget(state.items, { event, extraDelta }, this.budget);
          if (!decision.granted) {
            await connection.run('ROLLBACK');
            const accounted = decision.spentAfter !== decision.spentBefore;
            return {
              granted: false,
              reason: decision.reason ?? 'over the budget',
              spent: { ...decision.spentBefore, entries: state.count },
              ...(accounted ? { wouldSpend: { ...decision.spentAfter, entries: state.count + 1 } } : {}),
            };
          }
          const id = state.maxId + 1;
          await connection.run(`INSERT INTO ${ENTRIES_TABLE} VALUES ($1, $2, $3, $4, $5, $6)`, [
            id,
            new Date().toISOString(),
            storableText(client, MAX_CLIENT_LENGTH),
            storableText(description, MAX_DESCRIPTION_LENGTH),
            json,
            extraDelta,
          ]);
          await connection.run('COMMIT');
          committed = true;
          // The log may have been created by this commit: its directory entry made durable (file comment, 2.).
          await syncDirectory(dirname(resolve(this.path)));
          return { granted: true, id, spent: { ...decision.spentAfter, entries: state.count + 1 } };
        } catch (error) {
          if (!committed) await connection.run('ROLLBACK').catch(() => undefined);
          if (error instanceof DpfitError) throw error;
          throw new DataFormatError(this.path, `could not record the reservation, nothing was granted (${firstLine(error)})`);
        }
      });
    } catch (error) {
      // Committed, so the entry counts against the budget; but it is not known durable: no grant.
      if (committed) throw new DataFormatError(this.path, `could not sync the ledger's directory, nothing was granted (${firstLine(error)})`);
      throw error;
    }
  }

  /**
   * What everything granted spent: the epsilon of the composition of every granted event at delta
   * = budget.delta - sum(extraDelta), by the same rule as `reserve`; `delta` is the delta of that
   * guarantee, the RDP delta plus the extra deltas, i.e. budget.delta once anything was granted
   * (0, with epsilon 0, when nothing was).
   */
  async spent(): Promise<SpentBudget> {
    const state = await this.operation(true, (c) => this.readState(c));
    return { ...spentBudget(state.items, this.budget), entries: state.count };
  }

  /** What is left of the budget (`remainingBudget`; `reserve` decides what fits). */
  async remaining(): Promise<Budget> {
    const state = await this.operation(true, (c) => this.readState(c));
    return remainingBudget(this.budget, spentBudget(state.items, this.budget), extraDeltaSum(state.items));
  }

  /** Every granted entry, in grant order. */
  entries(): Promise<LedgerEntry[]> {
    return this.operation(true, async (connection) => {
      const rows = (await connection.runAndReadAll(`SELECT id, time, client, description, event, extra_delta FROM ${ENTRIES_TABLE} ORDER BY id`)).getRowObjects();
      return rows.map((r) => this.entryOfRow(r));
    });
  }

  private entryOfRow(r: Record<string, unknown>): LedgerEntry {
    return {
      id: Number(r.id),
      time: String(r.time),
      client: String(r.client),
      description: String(r.description),
      event: this.parse(String(r.event)),
      extraDelta: Number(r.extra_delta),
    };
  }

  /**
   * The budget, what was spent, what is left and every entry with its own epsilon (by the same
   * rule, for that release alone; they do not add up), read in ONE snapshot of the file:
   * `dpfit ledger show`'s and a node's `GET /budget`'s object.
   */
  summary(): Promise<LedgerSummary> {
    return this.operation(true, async (connection) => {
      const state = await this.readState(connection);
      const rows = (await connection.runAndReadAll(`SELECT id, time, client, description, event, extra_delta FROM ${ENTRIES_TABLE} ORDER BY id`)).getRowObjects();
      const budget = this.budget;
      const spent = { ...spentBudget(state.items, budget), entries: state.count };
      const alone = new Map<string, number>();
      const entries = rows.map((r) => {
        const e = this.entryOfRow(r);
        // Each release alone, by the ledger's rule; identical releases are accounted once.
        const key = `${String(r.event)}|${e.extraDelta}`;
        let epsilon = alone.get(key);
        if (epsilon === undefined) {
          epsilon = spentBudget([e], budget).epsilon;
          alone.set(key, epsilon);
        }
        return { id: e.id, time: e.time, client: e.client, description: e.description, epsilon, extraDelta: e.extraDelta, event: eventToJson(e.event) };
      });
      return { format: LEDGER_FORMAT, budget: { ...budget }, spent, remaining: remainingBudget(budget, spent, extraDeltaSum(state.items)), entries };
    });
  }

  /** No more operations through this object; resolves once its pending one finished. Holds no handle. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pending;
  }
}
