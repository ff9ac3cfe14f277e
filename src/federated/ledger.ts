/**
 * A node's persistent privacy ledger: every granted release, on disk, in an embedded transactional
 * database (DuckDB, `@duckdb/node-api`), so that a node's budget holds across restarts, crashes
 * and concurrent requests (issue 13).
 *
 *   - The budget is stored with the ledger when it is created and can never be raised: opening an
 *     existing ledger with another budget is refused (lowering it is allowed: it only refuses more).
 *   - `reserve` decides with the one rule of `budget.ts` (`decideBudget`) and records the entry in
 *     ONE transaction, and reservations of the process are serialised by a queue, so two
 *     concurrent reservations can never both be granted when together they exceed the budget.
 *   - Durability: DuckDB appends a committed transaction to its write-ahead log and syncs it to
 *     disk before COMMIT returns; a crash (kill -9) afterwards replays it on the next open. A
 *     reservation is granted (and the node releases anything) only after COMMIT returned, so the
 *     spent budget never goes down; a crash before COMMIT grants nothing. The test kills writers
 *     with SIGKILL and checks both (`test/federated-ledger.test.ts`).
 *   - One writer: DuckDB locks the file against other processes (a second node on the same ledger
 *     is refused with a clear error), and this module refuses to open a ledger twice in one
 *     process (two queues would not serialise each other).
 */
import { resolve } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { parseEvent, eventToJson } from '../accounting/events.js';
import { DataFormatError, InvalidParameterError } from '../errors.js';
import { decideBudget, spentBudget, type Budget, type BudgetEntry, type BudgetLedger, type LedgerDecision, type SpentBudget } from './budget.js';

export interface LedgerEntry extends BudgetEntry {
  readonly id: number;
  /** ISO time of the grant. */
  readonly time: string;
}

const OPEN = new Set<string>();

function requireBudget(budget: Budget): Budget {
  if (!(typeof budget.epsilon === 'number' && budget.epsilon > 0 && !Number.isNaN(budget.epsilon))) {
    throw new InvalidParameterError('--budget-epsilon', budget.epsilon, 'a number > 0 (Infinity: a node that may answer non-privately)');
  }
  if (!(typeof budget.delta === 'number' && budget.delta >= 0 && budget.delta < 1)) throw new InvalidParameterError('--budget-delta', budget.delta, 'in [0, 1)');
  return { epsilon: budget.epsilon, delta: budget.delta };
}

/** A stored number (Infinity is stored as the text 'Infinity'). */
const store = (x: number) => (x === Infinity ? 'Infinity' : String(x));
const load = (x: unknown) => (x === 'Infinity' ? Infinity : Number(x));

export class PrivacyLedger implements BudgetLedger {
  private queue: Promise<unknown> = Promise.resolve();
  private granted: LedgerEntry[];
  private closed = false;

  private constructor(
    readonly path: string,
    readonly budget: Budget,
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    entries: LedgerEntry[],
    readonly readOnly: boolean,
  ) {
    this.granted = entries;
  }

  /**
   * Opens (creating it when absent) the ledger at `path` for a node with `budget`. Refuses a budget
   * above the stored one, a ledger in use by another process, and a file that is not a ledger.
   */
  static async open(path: string, budget: Budget): Promise<PrivacyLedger> {
    const wanted = requireBudget(budget);
    return PrivacyLedger.connect(path, wanted);
  }

  /** Opens an existing ledger to read it (`dpfit ledger show`): its stored budget, no writes. */
  static async openReadOnly(path: string): Promise<PrivacyLedger> {
    const { existsSync } = await import('node:fs');
    if (!existsSync(path)) throw new DataFormatError(path, 'no such ledger file');
    return PrivacyLedger.connect(path, undefined);
  }

  private static async connect(path: string, wanted: Budget | undefined): Promise<PrivacyLedger> {
    const key = resolve(path);
    if (OPEN.has(key)) throw new DataFormatError(path, 'is already open in this process (one node per ledger)');
    const { DuckDBInstance } = await import('@duckdb/node-api');
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(path, wanted === undefined ? { access_mode: 'READ_ONLY' } : {});
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/lock/i.test(message)) throw new DataFormatError(path, 'is in use by another process (a ledger has one node: stop the other one, or give this node its own ledger)');
      throw new DataFormatError(path, `is not a dpfit ledger (${message.split('\n')[0]})`);
    }
    const connection = await instance.connect();
    try {
      let budget: Budget;
      if (wanted === undefined) {
        budget = await PrivacyLedger.storedBudget(connection, path);
      } else {
        await connection.run('CREATE TABLE IF NOT EXISTS dpfit_ledger_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL)');
        await connection.run(
          'CREATE TABLE IF NOT EXISTS dpfit_ledger_entries (id INTEGER PRIMARY KEY, time VARCHAR NOT NULL, client VARCHAR NOT NULL, description VARCHAR NOT NULL, event VARCHAR NOT NULL, extra_delta DOUBLE NOT NULL)',
        );
        const stored = await connection.runAndReadAll("SELECT key, value FROM dpfit_ledger_meta WHERE key IN ('epsilon', 'delta')");
        if (stored.getRowObjects().length === 0) {
          await connection.run('BEGIN TRANSACTION');
          await connection.run("INSERT INTO dpfit_ledger_meta VALUES ('format', 'dpfit-privacy-ledger/1'), ('epsilon', $1), ('delta', $2), ('created', $3)", [store(wanted.epsilon), store(wanted.delta), new Date().toISOString()]);
          await connection.run('COMMIT');
          budget = wanted;
        } else {
          budget = await PrivacyLedger.storedBudget(connection, path);
          if (wanted.epsilon > budget.epsilon) {
            throw new InvalidParameterError('--budget-epsilon', wanted.epsilon, `at most the ledger's stored budget ${budget.epsilon} (${path}: a budget can never be raised)`);
          }
          if (wanted.delta > budget.delta) throw new InvalidParameterError('--budget-delta', wanted.delta, `at most the ledger's stored budget ${budget.delta} (${path}: a budget can never be raised)`);
          budget = wanted;
        }
      }
      const rows = (await connection.runAndReadAll('SELECT id, time, client, description, event, extra_delta FROM dpfit_ledger_entries ORDER BY id')).getRowObjects();
      const entries = rows.map((r) => ({
        id: Number(r.id),
        time: String(r.time),
        client: String(r.client),
        description: String(r.description),
        event: parseEvent(String(r.event)),
        extraDelta: Number(r.extra_delta),
      }));
      OPEN.add(key);
      return new PrivacyLedger(path, budget, instance, connection, entries, wanted === undefined);
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      if (error instanceof InvalidParameterError || error instanceof DataFormatError) throw error;
      throw new DataFormatError(path, `is not a dpfit ledger (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`);
    }
  }

  private static async storedBudget(connection: DuckDBConnection, path: string): Promise<Budget> {
    let rows;
    try {
      rows = (await connection.runAndReadAll("SELECT key, value FROM dpfit_ledger_meta WHERE key IN ('format', 'epsilon', 'delta')")).getRowObjects();
    } catch {
      throw new DataFormatError(path, 'is not a dpfit ledger (no dpfit_ledger_meta table)');
    }
    const meta = new Map(rows.map((r) => [String(r.key), String(r.value)]));
    if (meta.get('format') !== 'dpfit-privacy-ledger/1' || !meta.has('epsilon') || !meta.has('delta')) throw new DataFormatError(path, 'is not a dpfit ledger (format dpfit-privacy-ledger/1)');
    return { epsilon: load(meta.get('epsilon')), delta: load(meta.get('delta')) };
  }

  /** Grants `entry` when the composition with it meets the budget (`decideBudget`), recorded and committed first. */
  reserve(entry: BudgetEntry): Promise<LedgerDecision> {
    const run = this.queue.then(async (): Promise<LedgerDecision> => {
      if (this.closed) throw new DataFormatError(this.path, 'the ledger is closed');
      if (this.readOnly) throw new DataFormatError(this.path, 'is open read-only');
      const decision = decideBudget(this.granted, entry, this.budget);
      if (!decision.granted) return { granted: false, reason: decision.reason as string, spent: decision.spentBefore };
      const id = (this.granted.at(-1)?.id ?? 0) + 1;
      const time = new Date().toISOString();
      await this.connection.run('BEGIN TRANSACTION');
      try {
        await this.connection.run('INSERT INTO dpfit_ledger_entries VALUES ($1, $2, $3, $4, $5, $6)', [id, time, entry.client.slice(0, 500), entry.description.slice(0, 2000), JSON.stringify(eventToJson(entry.event)), entry.extraDelta]);
        await this.connection.run('COMMIT');
      } catch (error) {
        await this.connection.run('ROLLBACK').catch(() => undefined);
        throw error;
      }
      this.granted.push({ ...entry, id, time });
      return { granted: true, id, spent: decision.spentAfter };
    });
    this.queue = run.catch(() => undefined);
    return run;
  }

  async spent(): Promise<SpentBudget> {
    await this.queue;
    return spentBudget(this.granted, this.budget);
  }

  async entries(): Promise<readonly LedgerEntry[]> {
    await this.queue;
    return [...this.granted];
  }

  async close(): Promise<void> {
    if (this.closed) return;
    await this.queue;
    this.closed = true;
    OPEN.delete(resolve(this.path));
    this.connection.closeSync();
    this.instance.closeSync();
  }
}
