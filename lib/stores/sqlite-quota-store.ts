// Default quota store: conditional UPSERTs, grouped per statement under load, on the SQLite file the keys live in.
import type { ConsumeResult, Logger, QuotaStore } from '../types.js'
import { type SqliteDatabase, type SqliteDriverName, type SqliteStatement, openSqliteDatabase } from './sqlite-driver.js'
import { checkExpiresAt, checkLimit, checkName, checkUnits } from './store-args.js'

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
// the others were refused.
const MAX_BATCH = 64
const CONSUME = (t: string, rows: number): string => `INSERT INTO ${t} (key_id, period, used, expires_at, lim, op)
  SELECT column1, column2, column3, column4, column5, column6 FROM (VALUES ${Array.from({ length: rows }, () => '(?,?,?,?,?,?)').join(',')})
  WHERE column3 <= column5
  ON CONFLICT (key_id, period) DO UPDATE SET used = used + excluded.used, expires_at = max(expires_at, excluded.expires_at), lim = excluded.lim, op = excluded.op
  WHERE used + excluded.used <= excluded.lim
  RETURNING op, used, (SELECT value FROM ${t}_meta WHERE name = 'keys') AS keys_version`

interface Pending {
  params: [string, string, number, number, number]
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
      throw new TypeError(
        `user-verification: SqliteQuotaStore \`path\` must be a file path or ':memory:', got ${JSON.stringify(options?.path)}.`
      )
    }
    const table = options.table ?? 'uv_quota'
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(table)) {
      throw new TypeError(`user-verification: SqliteQuotaStore \`table\` must be letters, digits and _, got ${JSON.stringify(table)}.`)
    }
    this.#options = { busyTimeout: 5000, purgeInterval: 3_600_000, prefix: 'uv', ...options, table }
    this.prefix = this.#options.prefix
    this.localKeys = options.path === ':memory:'
  }

  /** Opens the file, switches it to WAL and creates the table. Rejects when the file cannot be opened or written. */
  async init(): Promise<void> {
    await this.#open()
  }

  async consume(keyId: string, period: string, amount: number, limit: number, expiresAt: number): Promise<ConsumeResult> {
    const params: Pending['params'] = [
      checkName('keyId', keyId),
      checkName('period', period),
      checkUnits('amount', amount),
      checkExpiresAt(expiresAt),
      checkLimit(limit)
    ]
    return new Promise((resolve, reject) => {
      this.#queue.push({ params, resolve, reject })
      if (!this.#draining) void this.#drain()
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
            batch.flatMap((p, op) => [...p.params, op])
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

  async refund(keyId: string, period: string, amount: number): Promise<void> {
    const params = [checkUnits('amount', amount), checkName('keyId', keyId), checkName('period', period)]
    const db = await this.#open()
    await all(db.refund, params)
  }

  async get(keyId: string, period: string): Promise<number> {
    const db = await this.#open()
    return this.#used(db, checkName('keyId', keyId), checkName('period', period))
  }

  /** Finalises the statements, closes the database and stops the purge timer. */
  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    const ready = this.#ready
    if (ready === undefined) return
    this.#ready = Promise.reject(new Error('user-verification: the SQLite quota store is closed.'))
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
        all(opened.purge, [now()]).catch((error: unknown) => {
          ;(this.#options.logger ?? console).warn('user-verification: could not delete expired quota rows', { error: String(error) })
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
  bump: SqliteStatement
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
    throw new Error(
      `user-verification: cannot open the SQLite store at ${JSON.stringify(path)}: ${(error as Error).message}. Check that the directory exists and is writable, or pass another sqlite:// path.`,
      { cause: error }
    )
  }
  try {
    await exec(db, 'PRAGMA journal_mode=WAL')
    await exec(db, 'PRAGMA synchronous=NORMAL')
    await exec(
      db,
      `CREATE TABLE IF NOT EXISTS ${table} (
      key_id TEXT NOT NULL, period TEXT NOT NULL, used INTEGER NOT NULL, expires_at INTEGER NOT NULL,
      lim INTEGER NOT NULL DEFAULT 0, op INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (key_id, period)) WITHOUT ROWID`
    )
    // Files from before group commit lack the columns that carry a row's limit and batch index.
    const columns = await db.all<{ name: string }>(`PRAGMA table_info(${table})`)
    for (const column of ['lim', 'op']) {
      if (!columns.some((c) => c.name === column)) await exec(db, `ALTER TABLE ${table} ADD COLUMN ${column} INTEGER NOT NULL DEFAULT 0`)
    }
    await exec(db, `CREATE TABLE IF NOT EXISTS ${table}_meta (name TEXT PRIMARY KEY, value INTEGER NOT NULL) WITHOUT ROWID`)
    await exec(db, `INSERT OR IGNORE INTO ${table}_meta (name, value) VALUES ('keys', 0)`)
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
      refund: await prepare(db, `UPDATE ${table} SET used = max(0, used - ?1) WHERE key_id = ?2 AND period = ?3`),
      select: await prepare(
        db,
        `SELECT (SELECT used FROM ${table} WHERE key_id = ?1 AND period = ?2) AS used, (SELECT value FROM ${table}_meta WHERE name = 'keys') AS keys_version`
      ),
      bump: await prepare(db, `UPDATE ${table}_meta SET value = value + 1 WHERE name = 'keys'`),
      purge: await prepare(db, `DELETE FROM ${table} WHERE expires_at <= ?1`)
    }
  } catch (error) {
    await db.close().catch(() => {})
    throw new Error(
      `user-verification: the SQLite store at ${JSON.stringify(path)} is not usable: ${(error as Error).message}. Check the file's permissions and that it is a SQLite database.`,
      { cause: error }
    )
  }
}

async function exec(db: SqliteDatabase, sql: string): Promise<void> {
  // `all` rather than `run`/`exec`: PRAGMA journal_mode returns a row, and every statement must be stepped to the end.
  await db.all(sql)
}

async function prepare(db: SqliteDatabase, sql: string): Promise<SqliteStatement> {
  return db.prepare(sql)
}

async function all<T>(statement: SqliteStatement, params: Params): Promise<T[]> {
  try {
    return await statement.all<T>(params)
  } catch (error) {
    throw new Error(`user-verification: SQLite quota store failed: ${(error as Error).message}`, { cause: error })
  }
}
