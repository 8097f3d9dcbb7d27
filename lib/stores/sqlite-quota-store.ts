// Default quota store: conditional UPSERTs, grouped per statement under load, with the daily history kept by a trigger in the same statement.
import { OptionsTypeError, StoreError } from '../errors.js'
import type { ConsumeResult, DailyUsage, Logger, MonthlyUsage, QuotaStore } from '../types.js'
import { type SqliteDatabase, type SqliteDriverName, type SqliteStatement, openSqliteDatabase } from './sqlite-driver.js'
import { checkDay, checkExpiresAt, checkLimit, checkName, checkUnits, daysBetween, monthsBetween } from './store-args.js'

/** How long usage upgraded from release 0.1.0 is kept after its period ends (as the middleware keeps new usage). */
const upgradedRetention = 400 * 86_400_000

/** Options of {@link SqliteQuotaStore}. */
export interface SqliteQuotaStoreOptions {
  /** File path, or `':memory:'` for a private in-process database. */
  path: string
  /** Table name (letters, digits, `_`). Defaults to `'uv_quota'`. */
  table?: string
  /** Namespace reported as `prefix`. Defaults to `'uv'`. */
  prefix?: string
  /** How long a write waits for another process's lock before it rejects, in ms. Defaults to 5000. */
  busyTimeout?: number
  /** How often rows of expired periods are deleted, in ms (0 = only at start-up). Defaults to 3,600,000 (1 h). */
  purgeInterval?: number
  /** Receives purge failures. Defaults to `console`. */
  logger?: Logger
  /** Clock for the purge, in ms since the epoch. Defaults to `Date.now`. */
  now?: () => number
  /** SQLite binding: node:sqlite where Node has it (22.13+), else the optional `sqlite3` package. */
  driver?: SqliteDriverName
}

// Consumes that arrive while one statement runs are sent together as the next one (group commit):
// one multi-row UPSERT, whose rows SQLite applies in order. A row is inserted only when amount <=
// limit; an existing row is updated only when the sum stays within that row's limit (carried in
// the `lim` column so `excluded.lim` can see it). One statement = one write transaction, which
// SQLite serialises across every connection and process on the file, so each check-and-add is
// atomic. RETURNING names (by `op`, the row's index in the batch) every consume that was written;
// the others were refused. Each row also carries its day (`''`: none); the triggers made in
// openDatabase add every change of `used` to that day's row of `<table>_daily`, inside the same
// statement, so the history is written in the same atomic step as the consume. The `key_id`
// column holds the account id (its name is release 0.1.0's, when usage was per key).
const MAX_BATCH = 64
const CONSUME = (t: string, rows: number): string => `INSERT INTO ${t} (key_id, period, used, expires_at, lim, op, day)
  SELECT column1, column2, column3, column4, column5, column6, column7 FROM (VALUES ${Array.from({ length: rows }, () => '(?,?,?,?,?,?,?)').join(',')})
  WHERE column3 <= column5
  ON CONFLICT (key_id, period) DO UPDATE SET used = used + excluded.used, expires_at = max(expires_at, excluded.expires_at), lim = excluded.lim, op = excluded.op, day = excluded.day
  WHERE used + excluded.used <= excluded.lim
  RETURNING op, used, (SELECT value FROM ${t}_meta WHERE name = 'keys') AS keys_version`

interface Pending {
  params: [string, string, number, number, number]
  day: string
  resolve: (result: ConsumeResult) => void
  reject: (error: unknown) => void
}

type Params = unknown[]

/**
 * Quota on SQLite through Node's built-in node:sqlite (or the optional `sqlite3` package on a
 * Node without it; see sqlite-driver.ts). Keyv has no atomic increment, hence SQL. Atomic across
 * processes sharing the file, so `localKeys` is `false` for a file and `true` for `:memory:`.
 *
 * Durability: the database runs in WAL mode with `synchronous=NORMAL`. A consume resolves only
 * after its transaction committed to the WAL file, which lives in the OS page cache once
 * written; a crash or `kill -9` of this process therefore loses nothing. Only an OS crash or
 * power cut may lose the last commits (that would need `synchronous=FULL`, one fsync per
 * consume).
 */
export class SqliteQuotaStore implements QuotaStore {
  readonly localKeys: boolean
  readonly prefix: string
  readonly #options: Required<Omit<SqliteQuotaStoreOptions, 'logger' | 'now' | 'driver'>> &
    Pick<SqliteQuotaStoreOptions, 'logger' | 'now' | 'driver'>
  #ready: Promise<Opened> | undefined
  #timer: NodeJS.Timeout | undefined
  readonly #queue: Pending[] = []
  #draining = false

  constructor(options: SqliteQuotaStoreOptions) {
    if (options === null || typeof options !== 'object' || typeof options.path !== 'string' || options.path.length === 0) {
      throw new OptionsTypeError(
        `user-verification: SqliteQuotaStore \`path\` must be a file path or ':memory:', got ${JSON.stringify(options?.path)}.`
      )
    }
    const table = options.table ?? 'uv_quota'
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
      throw new OptionsTypeError(
        `user-verification: SqliteQuotaStore \`table\` must be letters, digits and _, got ${JSON.stringify(table)}.`
      )
    }
    this.#options = { busyTimeout: 5000, purgeInterval: 3_600_000, prefix: 'uv', ...options, table }
    this.prefix = this.#options.prefix
    this.localKeys = options.path === ':memory:'
  }

  /** Opens the file, switches it to WAL and creates the table. Rejects when the file cannot be opened or written. */
  async init(): Promise<void> {
    await this.#open()
  }

  async consume(
    accountId: string,
    period: string,
    amount: number,
    limit: number,
    expiresAt: number,
    _operation?: string,
    day?: string
  ): Promise<ConsumeResult> {
    const params: Pending['params'] = [
      checkName('accountId', accountId),
      checkName('period', period),
      checkUnits('amount', amount),
      checkExpiresAt(expiresAt),
      checkLimit(limit)
    ]
    const dayId = day === undefined ? '' : checkDay(day, period)
    return new Promise((resolve, reject) => {
      this.#queue.push({ params, day: dayId, resolve, reject })
      // The first consume of a burst waits for the end of this turn of the event loop, so the
      // requests that arrived with it share its statement instead of queueing behind it.
      if (!this.#draining) {
        this.#draining = true
        setImmediate(() => void this.#drain())
      }
    })
  }

  /** Sends queued consumes, a batch per statement, until the queue is empty. */
  async #drain(): Promise<void> {
    this.#draining = true
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH)
        try {
          const db = await this.#open()
          const rows = await all<UsageRow & { op: number }>(
            await db.consumeStatement(batch.length),
            batch.flatMap((p, op) => [...p.params, op, p.day])
          )
          const written = new Map(rows.map((row) => [Number(row.op), row]))
          for (const [op, pending] of batch.entries()) {
            const row = written.get(op)
            if (row !== undefined) pending.resolve({ granted: true, used: Number(row.used), keysVersion: Number(row.keys_version ?? 0) })
            else this.#refused(db, pending)
          }
        } catch (error) {
          for (const pending of batch) pending.reject(error)
        }
      }
    } finally {
      this.#draining = false
    }
  }

  #refused(db: Opened, pending: Pending): void {
    all<UsageRow>(db.select, [pending.params[0], pending.params[1]]).then((rows) => {
      pending.resolve({ granted: false, used: Number(rows[0]?.used ?? 0), keysVersion: Number(rows[0]?.keys_version ?? 0) })
    }, pending.reject)
  }

  async keysVersion(): Promise<number> {
    const db = await this.#open()
    const rows = await all<UsageRow>(db.select, ['', ''])
    return Number(rows[0]?.keys_version ?? 0)
  }

  /** Bumps the key-records version; the key store of the same file calls it after every write. */
  async keysChanged(): Promise<void> {
    const db = await this.#open()
    await all(db.bump, [])
  }

  async refund(accountId: string, period: string, amount: number, day?: string): Promise<void> {
    const params = [
      checkUnits('amount', amount),
      checkName('accountId', accountId),
      checkName('period', period),
      day === undefined ? '' : checkDay(day, period)
    ]
    const db = await this.#open()
    await all(db.refund, params)
  }

  async get(accountId: string, period: string): Promise<number> {
    const db = await this.#open()
    return this.#used(db, checkName('accountId', accountId), checkName('period', period))
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyUsage[]> {
    daysBetween(from, to)
    const db = await this.#open()
    const rows = await all<{ day: string; units: number }>(db.daily, [checkName('accountId', accountId), from, to])
    return rows.map((r) => ({ day: r.day, units: Number(r.units) }))
  }

  async monthly(accountId: string, from: string, to: string): Promise<MonthlyUsage[]> {
    monthsBetween(from, to)
    const db = await this.#open()
    const rows = await all<{ period: string; units: number }>(db.monthly, [checkName('accountId', accountId), from, to])
    return rows.map((r) => ({ period: r.period, units: Number(r.units) }))
  }

  /** Deletes month totals and days whose `expiresAt` is at or before `now` (also run at start-up and every `purgeInterval`). */
  async purge(now: number): Promise<void> {
    const db = await this.#open()
    await all(db.purge, [now])
    await all(db.purgeDaily, [now])
  }

  /** Finalises the statements, closes the database and stops the purge timer. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    const ready = this.#ready
    if (ready === undefined) return
    this.#ready = Promise.reject(new StoreError('user-verification: the SQLite quota store is closed.'))
    this.#ready.catch(() => {})
    let opened: Opened
    try {
      opened = await ready
    } catch {
      return
    }
    await opened.db.close()
  }

  async #used(db: Opened, keyId: unknown, period: unknown): Promise<number> {
    const rows = await all<UsageRow>(db.select, [keyId, period])
    return Number(rows[0]?.used ?? 0)
  }

  #open(): Promise<Opened> {
    this.#ready ??= openDatabase(this.#options).then((opened) => {
      const { purgeInterval } = this.#options
      const now = this.#options.now ?? Date.now
      const purge = (): void => {
        Promise.all([all(opened.purge, [now()]), all(opened.purgeDaily, [now()])]).catch((error: unknown) => {
          ;(this.#options.logger ?? console).warn('user-verification: could not delete expired quota rows', {
            code: 'WRN_UV_PURGE',
            error: String(error)
          })
        })
      }
      purge()
      if (purgeInterval > 0) {
        this.#timer = setInterval(purge, purgeInterval)
        this.#timer.unref()
      }
      return opened
    })
    return this.#ready
  }
}

interface Opened {
  db: SqliteDatabase
  /** The consume statement for a batch of `rows` (prepared on first use, then kept). */
  consumeStatement: (rows: number) => Promise<SqliteStatement>
  refund: SqliteStatement
  select: SqliteStatement
  purge: SqliteStatement
  purgeDaily: SqliteStatement
  bump: SqliteStatement
  daily: SqliteStatement
  monthly: SqliteStatement
}

interface UsageRow {
  used: number | null
  keys_version: number | null
}

async function openDatabase(options: { path: string; table: string; busyTimeout: number; driver?: SqliteDriverName }): Promise<Opened> {
  const { path, table, busyTimeout, driver } = options
  let db: SqliteDatabase
  try {
    db = await openSqliteDatabase(path, { busyTimeout, ...(driver === undefined ? {} : { driver }) })
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ERR_UV_STORE_DRIVER') throw error
    throw new StoreError(
      `user-verification: cannot open the SQLite store at ${JSON.stringify(path)}: ${(error as Error).message}. Check that the directory exists and is writable, or pass another sqlite:// path.`,
      { cause: error }
    )
  }
  try {
    await exec(db, 'PRAGMA journal_mode=WAL')
    await exec(db, 'PRAGMA synchronous=NORMAL')
    // One write transaction for the schema and the upgrade, so processes opening the file together take turns.
    await exec(db, 'BEGIN IMMEDIATE')
    try {
      const existed =
        (await rows<{ name: string }>(db, `SELECT name FROM sqlite_master WHERE type = 'table' AND name = '${table}'`)).length > 0
      await exec(
        db,
        `CREATE TABLE IF NOT EXISTS ${table} (
        key_id TEXT NOT NULL, period TEXT NOT NULL, used INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        lim INTEGER NOT NULL DEFAULT 0, op INTEGER NOT NULL DEFAULT 0, day TEXT NOT NULL DEFAULT '',
        PRIMARY KEY (key_id, period)) WITHOUT ROWID`
      )
      // Files from before group commit lack the columns that carry a row's limit and batch index; 0.1.0's lack the day.
      const columns = await rows<{ name: string }>(db, `PRAGMA table_info(${table})`)
      for (const column of ['lim INTEGER NOT NULL DEFAULT 0', 'op INTEGER NOT NULL DEFAULT 0', "day TEXT NOT NULL DEFAULT ''"]) {
        if (!columns.some((c) => c.name === column.split(' ')[0])) await exec(db, `ALTER TABLE ${table} ADD COLUMN ${column}`)
      }
      await exec(db, `CREATE TABLE IF NOT EXISTS ${table}_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID`)
      await exec(db, `INSERT OR IGNORE INTO ${table}_meta (name, value) VALUES ('keys', 0)`)
      await exec(
        db,
        `CREATE TABLE IF NOT EXISTS ${table}_daily (
        account_id TEXT NOT NULL, day TEXT NOT NULL, units INTEGER NOT NULL, expires_at INTEGER NOT NULL,
        PRIMARY KEY (account_id, day)) WITHOUT ROWID`
      )
      // Every change of a month total goes to the day named in the row, in the statement that made it.
      // (No INSERT OR IGNORE: inside a trigger fired by an UPSERT its conflict clause does not apply.)
      const toDay = (delta: string) => `INSERT INTO ${table}_daily (account_id, day, units, expires_at)
          SELECT NEW.key_id, NEW.day, 0, NEW.expires_at WHERE NOT EXISTS (SELECT 1 FROM ${table}_daily WHERE account_id = NEW.key_id AND day = NEW.day);
        UPDATE ${table}_daily SET units = max(0, units + ${delta}), expires_at = max(expires_at, NEW.expires_at) WHERE account_id = NEW.key_id AND day = NEW.day;`
      await exec(
        db,
        `CREATE TRIGGER IF NOT EXISTS ${table}_daily_insert AFTER INSERT ON ${table} WHEN NEW.day <> '' BEGIN ${toDay('NEW.used')} END`
      )
      await exec(
        db,
        `CREATE TRIGGER IF NOT EXISTS ${table}_daily_update AFTER UPDATE OF used ON ${table} WHEN NEW.day <> '' AND NEW.used <> OLD.used BEGIN ${toDay('NEW.used - OLD.used')} END`
      )
      const schema = await rows<{ value: number }>(db, `SELECT value FROM ${table}_meta WHERE name = 'schema'`)
      if (schema.length === 0) {
        // Release 0.1.0 counted usage per key: each key became an account with the same hex (see
        // legacyAccountId), so its months move to that account, kept as long as new usage is.
        if (existed) {
          await exec(
            db,
            `UPDATE ${table} SET key_id = 'acct_' || substr(key_id, 5),
            expires_at = max(expires_at, CAST(strftime('%s', period || '-01', '+1 month') AS INTEGER) * 1000 + ${upgradedRetention})
            WHERE key_id LIKE 'key\\_%' ESCAPE '\\'`
          )
        }
        await exec(db, `INSERT INTO ${table}_meta (name, value) VALUES ('schema', 2)`)
      }
      await exec(db, 'COMMIT')
    } catch (error) {
      await exec(db, 'ROLLBACK').catch(() => {})
      throw error
    }
    const consumeStatements = new Map<number, Promise<SqliteStatement>>()
    return {
      db,
      consumeStatement(rows: number): Promise<SqliteStatement> {
        let statement = consumeStatements.get(rows)
        if (statement === undefined) {
          statement = prepare(db, CONSUME(table, rows))
          // A failed prepare is not kept: the batch that needed it rejects, the next one tries again.
          statement.catch(() => consumeStatements.delete(rows))
          consumeStatements.set(rows, statement)
        }
        return statement
      },
      refund: await prepare(db, `UPDATE ${table} SET used = max(0, used - ?1), day = ?4 WHERE key_id = ?2 AND period = ?3`),
      select: await prepare(
        db,
        `SELECT (SELECT used FROM ${table} WHERE key_id = ?1 AND period = ?2) AS used, (SELECT value FROM ${table}_meta WHERE name = 'keys') AS keys_version`
      ),
      bump: await prepare(db, `UPDATE ${table}_meta SET value = value + 1 WHERE name = 'keys'`),
      purge: await prepare(db, `DELETE FROM ${table} WHERE expires_at <= ?1`),
      purgeDaily: await prepare(db, `DELETE FROM ${table}_daily WHERE expires_at <= ?1`),
      daily: await prepare(
        db,
        `SELECT day, units FROM ${table}_daily WHERE account_id = ?1 AND day >= ?2 AND day <= ?3 AND units > 0 ORDER BY day`
      ),
      monthly: await prepare(
        db,
        `SELECT period, used AS units FROM ${table} WHERE key_id = ?1 AND period >= ?2 AND period <= ?3 AND used > 0 ORDER BY period`
      )
    }
  } catch (error) {
    await db.close().catch(() => {})
    throw new StoreError(
      `user-verification: the SQLite store at ${JSON.stringify(path)} is not usable: ${(error as Error).message}. Check the file's permissions and that it is a SQLite database.`,
      { cause: error }
    )
  }
}

async function exec(db: SqliteDatabase, sql: string): Promise<void> {
  // `all` rather than `run`/`exec`: PRAGMA journal_mode returns a row, and every statement must be stepped to the end.
  await db.all(sql)
}

async function rows<T>(db: SqliteDatabase, sql: string): Promise<T[]> {
  return db.all<T>(sql)
}

async function prepare(db: SqliteDatabase, sql: string): Promise<SqliteStatement> {
  return db.prepare(sql)
}

async function all<T>(statement: SqliteStatement, params: Params): Promise<T[]> {
  try {
    return await statement.all<T>(params)
  } catch (error) {
    throw new StoreError(`user-verification: SQLite quota store failed: ${(error as Error).message}`, { cause: error })
  }
}
