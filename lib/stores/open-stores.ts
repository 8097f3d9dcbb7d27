// Opens the key and quota stores named by a store URL, and checks user-supplied stores at the door.
// Backend drivers are imported only when their URL is opened: Redis and PostgreSQL users install theirs (Keyv's convention).
import { optionError, UserVerificationError, OptionsTypeError, StoreError } from '../errors.js'
import type { KeyStore, Logger, QuotaStore, RedisStores, Stores } from '../types.js'
import { cachedKeyReader } from './key-cache.js'
import { KeyvKeyStore } from './keyv-key-store.js'
import { MemoryKeyStore, MemoryQuotaStore } from './memory-store.js'
import { PostgresQuotaStore } from './postgres-quota-store.js'
import { RedisQuotaStore } from './redis-quota-store.js'
import { SqliteKeyvAdapter } from './sqlite-keyv-adapter.js'
import { SqliteQuotaStore } from './sqlite-quota-store.js'
import { throttled } from './throttled-log.js'
import { withTimeout } from './with-timeout.js'

/** Options of {@link openStores}. */
export interface OpenStoresOptions {
  /** Receives store errors and warnings. Defaults to `console`. */
  logger?: Logger
  /**
   * Separates these stores from other users of the same backend: SQLite/PostgreSQL tables
   * `<namespace>_keys` and `<namespace>_quota`, Redis keys `<namespace>-keys::…` and
   * `<namespace>-quota:…`. Lower-case letters, digits and `_`, starting with a letter. Defaults to `'uv'`.
   */
  namespace?: string
  /** Time allowed to connect to Redis/PostgreSQL, in ms. Defaults to 5000. */
  connectTimeout?: number
  /** Time allowed for one Redis command or PostgreSQL statement, in ms. Defaults to 2000. */
  commandTimeout?: number
}

const SCHEMES = 'user-verification: `store` must be a sqlite://, redis://, postgres:// or memory:// URL'

/**
 * Opens the stores for a URL and proves they work before resolving:
 * - `memory://` — in-process Maps (tests; `localKeys: true`).
 * - `sqlite://<path>` — `sqlite://./user-verification.sqlite`, `sqlite:///abs/path.sqlite`,
 *   `sqlite://:memory:`; on Node's built-in node:sqlite (Node >= 22.13; older Node needs the
 *   `sqlite3` package); keys through Keyv on the same driver, quota through conditional UPSERTs,
 *   and `readKey`, an exact key-record cache (key-cache.ts).
 * - `redis://…` / `rediss://…` — needs `@keyv/redis`; keys through Keyv + @keyv/redis, quota
 *   through Lua scripts; one shared client, offline queue off (commands fail fast while
 *   disconnected), reconnecting by itself.
 * - `postgres://…` / `postgresql://…` — needs `pg` and `@keyv/postgres`; keys through Keyv +
 *   @keyv/postgres, quota through an atomic UPSERT; one shared pool with `statement_timeout`.
 *
 * Rejects with an Error naming the fix when the store cannot be reached or used, or when its
 * driver package is not installed (never falls back to memory); throws a TypeError for any
 * other scheme.
 */
export async function openStores(url: string, options: OpenStoresOptions = {}): Promise<Stores> {
  if (typeof url !== 'string')
    throw new OptionsTypeError(`${SCHEMES}, got ${JSON.stringify(url)}. Example: sqlite://./user-verification.sqlite`)
  const logger = options.logger ?? console
  const namespace = options.namespace ?? 'uv'
  if (typeof namespace !== 'string' || !/^[a-z][a-z0-9_]{0,39}$/.test(namespace)) {
    throw optionError('type', 'namespace', 'lower-case letters, digits and _ (starting with a letter, at most 40)', namespace)
  }
  const connectTimeout = positive('connectTimeout', options.connectTimeout ?? 5000)
  const commandTimeout = positive('commandTimeout', options.commandTimeout ?? 2000)
  const scheme = /^([a-z]+):\/\//i.exec(url)?.[1]?.toLowerCase()
  switch (scheme) {
    case 'memory':
      return pair(new MemoryKeyStore({ prefix: namespace }), new MemoryQuotaStore({ prefix: namespace }))
    case 'sqlite':
      return openSqlite(url.slice('sqlite://'.length), namespace, logger)
    case 'redis':
    case 'rediss':
      return openRedis(url, namespace, logger, connectTimeout, commandTimeout)
    case 'postgres':
    case 'postgresql':
      return openPostgres(url, namespace, logger, connectTimeout, commandTimeout)
    default:
      throw new OptionsTypeError(
        `${SCHEMES}, got ${JSON.stringify(redact(url))}. Example: sqlite://./user-verification.sqlite (the default), redis://localhost:6379 or postgres://user@localhost:5432/db.`
      )
  }
}

async function openSqlite(path: string, namespace: string, logger: Logger): Promise<Stores> {
  if (path.length === 0) {
    throw new OptionsTypeError(
      `${SCHEMES}, got "sqlite://" without a path. Example: sqlite://./user-verification.sqlite or sqlite:///var/lib/uv/store.sqlite.`
    )
  }
  // The quota store opens first: it switches the file to WAL, which the key store's connection then inherits.
  const quota = new SqliteQuotaStore({ path, table: `${namespace}_quota`, prefix: namespace, logger })
  await quota.init()
  const { default: Keyv } = await import('keyv')
  const adapter = new SqliteKeyvAdapter({ path, table: `${namespace}_keys`, busyTimeout: 5000, iterationLimit: 1000 })
  const keyv = new Keyv({ store: adapter, namespace: `${namespace}-keys`, throwOnErrors: true })
  const keys = new KeyvKeyStore(keyv, {
    logger,
    localKeys: path === ':memory:',
    prefix: namespace,
    close: async () => adapter.disconnect().catch(() => {}),
    onChange: () => quota.keysChanged()
  })
  try {
    await keys.init()
  } catch (error) {
    await Promise.allSettled([keys.close(), quota.close()])
    throw new StoreError(
      `user-verification: the SQLite key store at ${JSON.stringify(path)} is not usable: ${(error as Error).message}. Check the file's permissions.`,
      { cause: error }
    )
  }
  // Keys are read through an exact cache checked against the consume's key-records version (key-cache.ts).
  return { ...pair(keys, quota), readKey: cachedKeyReader() }
}

async function openRedis(
  url: string,
  namespace: string,
  logger: Logger,
  connectTimeout: number,
  commandTimeout: number
): Promise<RedisStores> {
  const where = redact(url)
  // @keyv/redis re-exports its own @redis/client, so the client we build is the version it was made for.
  const { default: KeyvRedis, createClient } = await importOptional<typeof import('@keyv/redis')>('@keyv/redis', 'redis://', '@keyv/redis')
  const { default: Keyv } = await import('keyv')
  let ready = false
  const client = createClient({
    url,
    // Fail fast while disconnected instead of queueing: the middleware answers 503 and refunds.
    disableOfflineQueue: true,
    commandOptions: { timeout: commandTimeout },
    socket: {
      connectTimeout,
      // Refuse at start-up; once connected, reconnect forever with a short capped backoff.
      reconnectStrategy: (retries: number, cause: Error) => (ready ? Math.min(50 * 2 ** retries, 1000) : cause)
    }
  })
  // destroy() throws on a client that already closed itself (e.g. after a refused connect).
  const destroy = (): void => {
    if (client.isOpen) client.destroy()
  }
  const log = throttled(logger)
  client.on('error', (error: Error) => {
    log('error', `user-verification: Redis store error (${where}): ${error.message}`)
  })
  client.on('ready', () => {
    if (ready) logger.info?.(`user-verification: Redis store reconnected (${where})`)
    ready = true
  })
  try {
    await client.connect()
  } catch (error) {
    destroy()
    throw new StoreError(
      `user-verification: cannot reach the Redis store at ${where}: ${(error as Error).message}. Check the URL and that Redis is running, or use sqlite:// for a single machine.`,
      { cause: error }
    )
  }
  // node-redis's own command timeout stops counting once a command is written, so a hung (not
  // disconnected) server would hang the request: bound the whole round trip ourselves.
  const sendCommand = async (args: string[]): Promise<unknown> => withTimeout(client.sendCommand(args), commandTimeout, `Redis (${where})`)
  const quota = new RedisQuotaStore({ sendCommand, prefix: namespace, logger })
  const adapter = new KeyvRedis(client as never, { namespace: `${namespace}-keys`, throwOnErrors: true, throwOnConnectError: true })
  // Set-if-absent (one SET … NX) for the email index: two processes cannot both claim one address.
  Object.assign(adapter, {
    setIfAbsent: async (key: string, value: string): Promise<boolean> =>
      (await sendCommand(['SET', adapter.createKeyPrefix(key, adapter.namespace), value, 'NX'])) === 'OK'
  })
  const keyv = new Keyv(adapter, { namespace: `${namespace}-keys`, useKeyPrefix: false, throwOnErrors: true })
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    // close() waits for pending replies (QUIT); a hung server must not hang shutdown.
    if (client.isOpen) await withTimeout(client.close(), commandTimeout, `Redis (${where})`).catch(destroy)
  }
  const keys = new KeyvKeyStore(keyv, { logger, prefix: namespace, close, timeout: commandTimeout })
  try {
    await quota.init()
    await keys.init()
  } catch (error) {
    destroy()
    throw new StoreError(
      `user-verification: the Redis store at ${where} is not usable: ${(error as Error).message}. Check the URL, ACL permissions (EVAL, EVALSHA, GET, SET, SCAN, MGET, EXISTS) and that Redis is >= 7.`,
      { cause: error }
    )
  }
  return { keys, quota, close, sendCommand }
}

async function openPostgres(
  url: string,
  namespace: string,
  logger: Logger,
  connectTimeout: number,
  commandTimeout: number
): Promise<Stores> {
  const where = redact(url)
  const install = 'pg @keyv/postgres'
  const { default: pg } = await importOptional<typeof import('pg')>('pg', 'postgres://', install)
  await importOptional('@keyv/postgres', 'postgres://', install)
  const { PooledKeyvPostgres } = await import('./keyv-postgres-adapter.js')
  const { default: Keyv } = await import('keyv')
  const pool = new pg.Pool({
    connectionString: url,
    max: 10,
    connectionTimeoutMillis: connectTimeout,
    statement_timeout: commandTimeout,
    // Client-side bound too, for a server that stops answering altogether.
    query_timeout: commandTimeout + 1000,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
    allowExitOnIdle: true
  })
  const log = throttled(logger)
  // Without a listener, an idle client losing its connection would crash the process.
  pool.on('error', (error) => {
    log('error', `user-verification: PostgreSQL store error (${where}): ${error.message}`)
  })
  let closed = false
  const close = async (): Promise<void> => {
    if (closed) return
    closed = true
    await pool.end()
  }
  const quota = new PostgresQuotaStore({ pool, table: `${namespace}_quota`, prefix: namespace, logger, timeout: commandTimeout + 1000 })
  try {
    await quota.init()
    const adapter = new PooledKeyvPostgres(pool, { table: `${namespace}_keys`, iterationLimit: 1000 })
    const keyv = new Keyv({ store: adapter, namespace: `${namespace}-keys`, throwOnErrors: true })
    const keys = new KeyvKeyStore(keyv, { logger, prefix: namespace, close, timeout: commandTimeout + 1000 })
    await keys.init()
    return {
      keys,
      quota,
      close: async () => {
        await quota.close()
        await close()
      }
    }
  } catch (error) {
    await quota.close()
    await close().catch(() => {})
    throw new StoreError(
      `user-verification: cannot use the PostgreSQL store at ${where}: ${(error as Error).message}. Check the URL, credentials and that PostgreSQL is running, or use sqlite:// for a single machine.`,
      { cause: error }
    )
  }
}

/** Imports an optional backend package, or rejects with one line naming what to install. */
async function importOptional<T>(name: string, scheme: string, install: string): Promise<T> {
  try {
    return (await import(name)) as T
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error
    throw new UserVerificationError(
      'ERR_UV_STORE_DRIVER',
      `${scheme} stores need the ${name} package, which is not installed: run \`npm install ${install}\`.`,
      { cause: error }
    )
  }
}

function pair(keys: KeyStore, quota: QuotaStore): Stores {
  let closed: Promise<void> | undefined
  return {
    keys,
    quota,
    close: async () => {
      closed ??= Promise.all([keys.close?.(), quota.close?.()]).then(() => {})
      return closed
    }
  }
}

const KEY_STORE_MEMBERS = [
  'getByHash',
  'getById',
  'create',
  'update',
  'updateKey',
  'list',
  'listByAccount',
  'getAccount',
  'getAccountByEmail',
  'createAccount',
  'updateAccount',
  'listAccounts'
] as const
const QUOTA_STORE_MEMBERS = ['consume', 'refund', 'get', 'daily', 'monthly'] as const

/** Throws a TypeError naming each missing method when `x` does not look like a {@link KeyStore}. */
export function assertKeyStore(x: unknown): asserts x is KeyStore {
  assertShape('key store', x, KEY_STORE_MEMBERS)
}

/** Throws a TypeError naming each missing method when `x` does not look like a {@link QuotaStore}. */
export function assertQuotaStore(x: unknown): asserts x is QuotaStore {
  assertShape('quota store', x, QUOTA_STORE_MEMBERS)
}

function assertShape(what: string, x: unknown, methods: readonly string[]): void {
  if (x === null || typeof x !== 'object') {
    throw new OptionsTypeError(
      `user-verification: the ${what} must be an object with ${methods.map((m) => `${m}()`).join(', ')}, got ${x === null ? 'null' : typeof x}.`
    )
  }
  const o = x as Record<string, unknown>
  const missing = methods.filter((m) => typeof o[m] !== 'function').map((m) => `${m}()`)
  for (const m of ['init', 'close'])
    if (o[m] !== undefined && typeof o[m] !== 'function') missing.push(`${m}() (optional, but not a function here)`)
  if (typeof o.localKeys !== 'boolean') missing.push('localKeys (boolean)')
  if (typeof o.prefix !== 'string') missing.push('prefix (string)')
  if (missing.length > 0) {
    throw new OptionsTypeError(
      `user-verification: the ${what} is missing ${missing.join(', ')}. Implement the ${what === 'key store' ? 'KeyStore' : 'QuotaStore'} interface, or pass a store URL instead.`
    )
  }
}

function positive(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
    throw optionError('range', name, 'a positive number of ms', value)
  }
  return value
}

/** The URL without its password, for messages and logs. */
function redact(url: string): string {
  try {
    const u = new URL(url)
    if (u.password !== '') u.password = '***'
    return u.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@')
  }
}
