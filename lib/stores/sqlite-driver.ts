// Opens a SQLite file on Node's built-in node:sqlite, or on the optional sqlite3 package where Node has none (Node 20).
import { createRequire } from 'node:module'
import { UserVerificationError } from '../errors.js'

/** Which SQLite binding a database runs on. */
export type SqliteDriverName = 'node:sqlite' | 'sqlite3'

/** A prepared statement; `all` steps it to the end (which commits an autocommit write) and resolves its rows. */
export interface SqliteStatement {
  all<T = Record<string, unknown>>(params?: readonly unknown[]): Promise<T[]>
}

/** The few operations the SQLite stores need, the same on both drivers. */
export interface SqliteDatabase {
  readonly driver: SqliteDriverName
  /** Runs one statement to the end and resolves its rows (PRAGMAs return a row). */
  all<T = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<T[]>
  /** Prepares a statement; a syntax error rejects here. */
  prepare(sql: string): Promise<SqliteStatement>
  /** Finalises every statement and closes the file. */
  close(): Promise<void>
}

/** Options of {@link openSqliteDatabase}. */
export interface OpenSqliteOptions {
  /** How long a statement waits for another connection's write lock before it rejects, in ms. */
  busyTimeout: number
  /** Forces a driver (benchmarks, tests); defaults to node:sqlite where Node has it, else sqlite3. */
  driver?: SqliteDriverName
}

/** The one-line error when neither driver is there, naming what to install. */
export const NO_DRIVER_MESSAGE =
  'user-verification: the sqlite:// store needs Node >= 22.13 (built-in node:sqlite) or the sqlite3 package on older Node: run `npm install sqlite3`, or use memory://, redis:// or postgres://.'

interface NodeSqliteModule {
  DatabaseSync: new (
    path: string,
    options?: { timeout?: number }
  ) => {
    prepare(sql: string): { all(...params: unknown[]): unknown[] }
    close(): void
  }
}

/** Resolves a module by name; injectable so tests can take a driver away. */
export type ModuleLoader = (name: string) => Promise<unknown>

// node:sqlite is looked up through getBuiltinModule: a static or dynamic import of it fails on
// Node 20 before any fallback could run, and bundlers would try to resolve it.
const defaultLoader: ModuleLoader = async (name) => {
  if (name === 'node:sqlite') {
    const get = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule
    const module = get?.call(process, 'node:sqlite')
    if (module === undefined) throw Object.assign(new Error('No such built-in module: node:sqlite'), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' })
    return module
  }
  // sqlite3 is CommonJS; require() through the consumer's node_modules keeps it out of the import graph until used.
  return createRequire(import.meta.url)(name)
}

/**
 * Opens `path` (or `':memory:'`) on node:sqlite when Node has it (22.13+), otherwise on the
 * optional `sqlite3` package. Rejects with {@link NO_DRIVER_MESSAGE} when neither is there, and
 * with the driver's error when the file cannot be opened.
 *
 * node:sqlite is synchronous: a statement runs on the event loop. Its own busy handler would
 * sleep on the event loop while another process holds the write lock, so it is turned off and a
 * statement that finds the file locked is retried on a timer (1 ms, doubling up to 10 ms) until
 * `busyTimeout` has passed; requests keep being served meanwhile. sqlite3 runs statements on the
 * libuv thread pool and keeps its own busy timeout.
 */
export async function openSqliteDatabase(
  path: string,
  options: OpenSqliteOptions,
  load: ModuleLoader = defaultLoader
): Promise<SqliteDatabase> {
  const wanted: SqliteDriverName[] = options.driver === undefined ? ['node:sqlite', 'sqlite3'] : [options.driver]
  for (const driver of wanted) {
    let module: unknown
    try {
      module = await load(driver)
    } catch (error) {
      if (isMissing(error)) continue
      throw error
    }
    if (driver === 'node:sqlite') return openNodeSqlite(module as NodeSqliteModule, path, options.busyTimeout)
    return openSqlite3(module as Sqlite3Module, path, options.busyTimeout)
  }
  throw new UserVerificationError('ERR_UV_STORE_DRIVER', NO_DRIVER_MESSAGE)
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return code === 'ERR_UNKNOWN_BUILTIN_MODULE' || code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND'
}

// SQLITE_BUSY (5), with its extended codes (BUSY_SNAPSHOT 517, BUSY_RECOVERY 261, BUSY_TIMEOUT 773):
// node:sqlite reports it as `errcode`, sqlite3 as `errno` (primary code only).
function isBusy(error: unknown): boolean {
  const { errcode, errno, code } = (error ?? {}) as { errcode?: unknown; errno?: unknown; code?: unknown }
  if (typeof errcode === 'number') return (errcode & 0xff) === 5
  return errno === 5 || code === 'SQLITE_BUSY'
}

/**
 * Runs `fn` again while it fails with SQLITE_BUSY, until `busyTimeout` has passed. SQLite answers
 * BUSY at once, without its busy handler, where waiting could deadlock (a connection switching the
 * file to WAL, or upgrading a read lock while another writes): a statement run on its own has then
 * changed nothing, and running it again is safe.
 */
async function whileBusy<T>(fn: () => T | Promise<T>, busyTimeout: number): Promise<T> {
  const deadline = Date.now() + busyTimeout
  for (let wait = 1; ; wait = Math.min(wait * 2, 10)) {
    try {
      return await fn()
    } catch (error) {
      if (!isBusy(error) || Date.now() >= deadline) throw error
    }
    await new Promise((resolve) => setTimeout(resolve, Math.min(wait, Math.max(1, deadline - Date.now()))))
  }
}

function openNodeSqlite(module: NodeSqliteModule, path: string, busyTimeout: number): SqliteDatabase {
  const db = new module.DatabaseSync(path, { timeout: 0 })
  // Its own busy handler would block the event loop: BUSY comes back at once and is waited for here.
  // Preparing reads the schema, so it can find the file locked too (another process switching it to WAL).
  const retry = <T>(fn: () => T): Promise<T> => whileBusy(fn, busyTimeout)
  return {
    driver: 'node:sqlite',
    all: async <T>(sql: string, params: readonly unknown[] = []) => retry(() => db.prepare(sql).all(...params) as T[]),
    prepare: async (sql) => {
      const statement = await retry(() => db.prepare(sql))
      return { all: async <T>(params: readonly unknown[] = []) => retry(() => statement.all(...params) as T[]) }
    },
    close: async () => db.close()
  }
}

interface Sqlite3Statement {
  all(params: unknown[], callback: (error: Error | null, rows: unknown[]) => void): void
  finalize(callback: () => void): void
}

interface Sqlite3Module {
  Database: new (
    path: string,
    callback: (error: Error | null) => void
  ) => {
    configure(option: 'busyTimeout', ms: number): void
    all(sql: string, params: unknown[], callback: (error: Error | null, rows: unknown[]) => void): void
    prepare(sql: string, callback: (error: Error | null) => void): Sqlite3Statement
    close(callback: (error: Error | null) => void): void
  }
}

async function openSqlite3(module: Sqlite3Module, path: string, busyTimeout: number): Promise<SqliteDatabase> {
  const sqlite3 = (module as { default?: Sqlite3Module }).default ?? module
  const db = await new Promise<InstanceType<Sqlite3Module['Database']>>((resolve, reject) => {
    const database = new sqlite3.Database(path, (error) => (error === null ? resolve(database) : reject(error)))
  })
  db.configure('busyTimeout', busyTimeout)
  const statements: Sqlite3Statement[] = []
  // Always `all`: it steps the statement to SQLITE_DONE, which commits the autocommit transaction
  // before we resolve. `get` stops after one row and leaves the statement (and its transaction,
  // hence the write lock) open until the next call.
  const all = async <T>(statement: Sqlite3Statement, params: readonly unknown[]): Promise<T[]> =>
    new Promise((resolve, reject) => statement.all([...params], (error, rows) => (error === null ? resolve(rows as T[]) : reject(error))))
  return {
    driver: 'sqlite3',
    // Its busy handler waits for ordinary lock waits; the few BUSY answers it does not cover
    // (two processes opening a new file together) are waited for here.
    all: async <T>(sql: string, params: readonly unknown[] = []) =>
      whileBusy(
        () =>
          new Promise<T[]>((resolve, reject) =>
            db.all(sql, [...params], (error, rows) => (error === null ? resolve(rows as T[]) : reject(error)))
          ),
        busyTimeout
      ),
    prepare: async (sql) => {
      const statement = await new Promise<Sqlite3Statement>((resolve, reject) => {
        const s = db.prepare(sql, (error) => (error === null ? resolve(s) : reject(error)))
      })
      statements.push(statement)
      return { all: async (params = []) => all(statement, params) }
    },
    close: async () => {
      for (const s of statements.splice(0)) await new Promise<void>((resolve) => s.finalize(() => resolve()))
      await new Promise<void>((resolve, reject) => db.close((error) => (error === null ? resolve() : reject(error))))
    }
  }
}
