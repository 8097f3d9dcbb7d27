// Keyv storage adapter on the SQLite driver the quota store uses (node:sqlite, or sqlite3 on old Node), replacing @keyv/sqlite.
import { OptionsTypeError } from '../errors.js'
import { EventEmitter } from 'node:events'
import { type SqliteDatabase, type SqliteDriverName, type SqliteStatement, openSqliteDatabase } from './sqlite-driver.js'

/** Options of {@link SqliteKeyvAdapter}. */
export interface SqliteKeyvAdapterOptions {
  /** File path, or `':memory:'`. */
  path: string
  /** Table name (letters, digits, `_`). */
  table: string
  /** How long a write waits for another connection's write lock, in ms. Defaults to 5000. */
  busyTimeout?: number
  /** Rows read per step of the iterator. Defaults to 1000. */
  iterationLimit?: number
  /** Forces a driver; see {@link openSqliteDatabase}. */
  driver?: SqliteDriverName
}

interface Statements {
  db: SqliteDatabase
  get: SqliteStatement
  set: SqliteStatement
  insert: SqliteStatement
  delete: SqliteStatement
  has: SqliteStatement
  page: SqliteStatement
  clear: SqliteStatement
}

/**
 * A Keyv store adapter that keeps @keyv/sqlite's table layout (`key VARCHAR(255) PRIMARY KEY,
 * value TEXT`, keys `<namespace>:<key>`), so files written through @keyv/sqlite by earlier
 * releases read unchanged. Unlike @keyv/sqlite it needs no native module on Node 22.13+, and
 * its iterator pages by key rather than by OFFSET, so a write during `list()` cannot make it
 * skip or repeat a record. Errors reject (the key store builds Keyv with `throwOnErrors`).
 */
export class SqliteKeyvAdapter extends EventEmitter {
  /** Read by Keyv: the dialect marks the adapter as iterable. */
  readonly opts: { dialect: 'sqlite'; url: string; table: string; iterationLimit: number }
  /** Set by Keyv to its namespace. */
  namespace: string | undefined
  readonly ttlSupport = false
  readonly #ready: Promise<Statements>
  #closed: Promise<void> | undefined

  constructor(options: SqliteKeyvAdapterOptions) {
    super()
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(options.table)) {
      throw new OptionsTypeError(`user-verification: SQLite key table must be letters, digits and _, got ${JSON.stringify(options.table)}.`)
    }
    this.opts = { dialect: 'sqlite', url: `sqlite://${options.path}`, table: options.table, iterationLimit: options.iterationLimit ?? 1000 }
    this.#ready = this.#open(options)
    // Callers see the failure on their first call; this keeps an unawaited rejection from crashing the process.
    this.#ready.catch(() => {})
  }

  async #open(options: SqliteKeyvAdapterOptions): Promise<Statements> {
    const { path, table } = options
    const db = await openSqliteDatabase(path, {
      busyTimeout: options.busyTimeout ?? 5000,
      ...(options.driver === undefined ? {} : { driver: options.driver })
    })
    try {
      await db.all(`CREATE TABLE IF NOT EXISTS ${table} (key VARCHAR(255) PRIMARY KEY, value TEXT)`)
      return {
        db,
        get: await db.prepare(`SELECT value FROM ${table} WHERE key = ?1`),
        set: await db.prepare(`INSERT INTO ${table} (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`),
        insert: await db.prepare(`INSERT INTO ${table} (key, value) VALUES (?1, ?2) ON CONFLICT (key) DO NOTHING RETURNING 1 AS inserted`),
        delete: await db.prepare(`DELETE FROM ${table} WHERE key = ?1 RETURNING 1 AS deleted`),
        has: await db.prepare(`SELECT 1 AS found FROM ${table} WHERE key = ?1`),
        page: await db.prepare(`SELECT key, value FROM ${table} WHERE substr(key, 1, length(?1)) = ?1 AND key > ?2 ORDER BY key LIMIT ?3`),
        clear: await db.prepare(`DELETE FROM ${table} WHERE substr(key, 1, length(?1)) = ?1`)
      }
    } catch (error) {
      await db.close().catch(() => {})
      throw error
    }
  }

  async get(key: string): Promise<string | undefined> {
    const { get } = await this.#ready
    const rows = await get.all<{ value: string }>([key])
    return rows[0]?.value
  }

  async set(key: string, value: string): Promise<void> {
    const { set } = await this.#ready
    await set.all([key, value])
  }

  /** Writes `value` only when `key` has none; `true` when written. One statement, so it holds across connections and processes. */
  async setIfAbsent(key: string, value: string): Promise<boolean> {
    const { insert } = await this.#ready
    return (await insert.all([key, value])).length > 0
  }

  async delete(key: string): Promise<boolean> {
    const statements = await this.#ready
    return (await statements.delete.all([key])).length > 0
  }

  async has(key: string): Promise<boolean> {
    const { has } = await this.#ready
    return (await has.all([key])).length > 0
  }

  async clear(): Promise<void> {
    const { clear } = await this.#ready
    await clear.all([this.namespace === undefined ? '' : `${this.namespace}:`])
  }

  async *iterator(namespace?: string): AsyncGenerator<[string, string], void, unknown> {
    const { page } = await this.#ready
    const prefix = namespace === undefined ? '' : `${namespace}:`
    let last = ''
    for (;;) {
      const rows = await page.all<{ key: string; value: string }>([prefix, last, this.opts.iterationLimit])
      for (const row of rows) yield [row.key, row.value]
      if (rows.length < this.opts.iterationLimit) return
      last = rows[rows.length - 1]!.key
    }
  }

  async disconnect(): Promise<void> {
    this.#closed ??= this.#ready.then(
      (statements) => statements.db.close(),
      () => {}
    )
    await this.#closed
  }
}
