// Scale-out quota store on PostgreSQL: one conditional INSERT … ON CONFLICT DO UPDATE … RETURNING per consume, the day's history in the same statement.
import { OptionsTypeError } from '../errors.js'
import type pg from 'pg'
import type { ConsumeResult, DailyUsage, Logger, MonthlyUsage, QuotaStore } from '../types.js'
import { checkDay, checkExpiresAt, checkLimit, checkName, checkUnits, daysBetween, monthsBetween } from './store-args.js'
import { withTimeout } from './with-timeout.js'

/** How long usage upgraded from release 0.1.0 is kept after its period ends (as the middleware keeps new usage). */
const upgradedRetention = 400 * 86_400_000

/** How long a named consume can still be cancelled, in ms: longer than any retry of the middleware. */
const operationTtl = 2 * 3600 * 1000

/** Options of {@link PostgresQuotaStore}. */
export interface PostgresQuotaStoreOptions {
  /** Connection pool; the caller owns it (set `statement_timeout` and `connectionTimeoutMillis` on it). */
  pool: pg.Pool
  /** Table name (lower-case letters, digits, `_`). Defaults to `'uv_quota'`. */
  table?: string
  /** Namespace reported as `prefix`. Defaults to `'uv'`. */
  prefix?: string
  /** How often rows of expired periods are deleted, in ms (0 = never). Defaults to 3,600,000 (1 h). */
  purgeInterval?: number
  /** Receives purge failures. Defaults to `console`. */
  logger?: Logger
  /** Clock for the purge, in ms since the epoch. Defaults to `Date.now`. */
  now?: () => number
  /**
   * Bound on each call, waiting for a pool connection included, in ms (0 = none). A call past it
   * rejects; a consume abandoned so is then undone or fenced off by `cancel`. Defaults to 0.
   */
  timeout?: number
  /** Called by `close()`, e.g. `() => pool.end()` when the store owns the pool. */
  close?: () => Promise<void>
}

/**
 * Quota in PostgreSQL, atomic across every process and instance (`localKeys: false`). The
 * UPSERT takes the row lock and re-checks its WHERE on the newest row version, so concurrent
 * consumes serialise per key and period; a refused consume writes nothing. A resolved consume
 * has committed (durable with the server's default `synchronous_commit = on`).
 */
export class PostgresQuotaStore implements QuotaStore {
  readonly localKeys = false
  readonly prefix: string
  readonly #pool: pg.Pool
  readonly #table: string
  readonly #options: PostgresQuotaStoreOptions
  readonly #sql: {
    consume: string
    select: string
    refund: string
    fence: string
    cancel: string
    purge: string
    purgeOps: string
    purgeDaily: string
    daily: string
    monthly: string
  }
  #timer: NodeJS.Timeout | undefined

  constructor(options: PostgresQuotaStoreOptions) {
    if (options === null || typeof options !== 'object' || typeof options.pool?.query !== 'function') {
      throw new OptionsTypeError('user-verification: PostgresQuotaStore needs `pool`, a pg.Pool.')
    }
    const table = options.table ?? 'uv_quota'
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) {
      throw new OptionsTypeError(
        `user-verification: PostgresQuotaStore \`table\` must be lower-case letters, digits and _, got ${JSON.stringify(table)}.`
      )
    }
    this.#pool = options.pool
    this.#table = table
    this.#options = options
    this.prefix = options.prefix ?? 'uv'
    // The `key_id` columns hold account ids (their name is release 0.1.0's, when usage was per key).
    // Data-modifying CTEs all run, in one statement and one transaction, whether referenced or not.
    this.#sql = {
      // A granted consume also adds to its day ($8, NULL: none) and, when named, records its
      // operation, in the same statement, so cancel can later undo exactly what was applied.
      consume: `WITH applied AS (
          INSERT INTO ${table} AS q (key_id, period, used, expires_at)
          SELECT $1, $2, $3::bigint, $5::bigint WHERE $3::bigint <= $4::bigint
          ON CONFLICT (key_id, period) DO UPDATE SET used = q.used + EXCLUDED.used, expires_at = GREATEST(q.expires_at, EXCLUDED.expires_at)
          WHERE q.used + EXCLUDED.used <= $4::bigint
          RETURNING used),
        daily AS (
          INSERT INTO ${table}_daily AS d (account_id, day, units, expires_at)
          SELECT $1, $8::text, $3::bigint, $5::bigint FROM applied WHERE $8::text IS NOT NULL
          ON CONFLICT (account_id, day) DO UPDATE SET units = d.units + EXCLUDED.units, expires_at = GREATEST(d.expires_at, EXCLUDED.expires_at)),
        named AS (
          INSERT INTO ${table}_ops (operation, key_id, period, amount, expires_at, day)
          SELECT $6::text, $1, $2, $3::bigint, $7::bigint, $8::text FROM applied WHERE $6::text IS NOT NULL)
        SELECT used FROM applied`,
      // Cancel, step 1: a fence (amount 0) under the operation's name, unless the consume recorded it
      // first. ON CONFLICT waits for a consume still in progress on another connection; once the
      // fence stands, that name's INSERT fails, so a consume delayed on a hung server never commits.
      fence: `INSERT INTO ${table}_ops (operation, key_id, period, amount, expires_at) VALUES ($1, $2, $3, 0, $4::bigint)
        ON CONFLICT (operation) DO NOTHING RETURNING 1`,
      // Step 2, when the consume committed: undo it once, leaving the row behind (amount 0) as the fence.
      cancel: `WITH undone AS (
          UPDATE ${table}_ops AS o SET amount = 0 FROM ${table}_ops AS old
          WHERE o.operation = $1 AND old.operation = o.operation AND o.amount > 0
          RETURNING o.key_id, o.period, old.amount, o.day),
        daily AS (UPDATE ${table}_daily AS d SET units = GREATEST(0, d.units - undone.amount) FROM undone
          WHERE d.account_id = undone.key_id AND d.day = undone.day)
        UPDATE ${table} AS q SET used = GREATEST(0, q.used - undone.amount) FROM undone
        WHERE q.key_id = undone.key_id AND q.period = undone.period RETURNING 1`,
      select: `SELECT used FROM ${table} WHERE key_id = $1 AND period = $2`,
      refund: `WITH daily AS (UPDATE ${table}_daily SET units = GREATEST(0, units - $1::bigint) WHERE account_id = $2 AND day = $4::text)
        UPDATE ${table} SET used = GREATEST(0, used - $1::bigint) WHERE key_id = $2 AND period = $3`,
      purge: `DELETE FROM ${table} WHERE expires_at <= $1`,
      purgeOps: `DELETE FROM ${table}_ops WHERE expires_at <= $1`,
      purgeDaily: `DELETE FROM ${table}_daily WHERE expires_at <= $1`,
      daily: `SELECT day, units FROM ${table}_daily WHERE account_id = $1 AND day >= $2 AND day <= $3 AND units > 0 ORDER BY day`,
      monthly: `SELECT period, used AS units FROM ${table} WHERE key_id = $1 AND period >= $2 AND period <= $3 AND used > 0 ORDER BY period`
    }
  }

  /**
   * Creates the tables when missing, upgrades release 0.1.0's usage (per key) in place, and starts
   * the purge timer. Rejects when the database is unreachable. Schema and upgrade run in one
   * transaction under an advisory lock, so instances starting together take turns.
   */
  async init(): Promise<void> {
    const t = this.#table
    const client = await this.#pool.connect()
    try {
      await client.query('BEGIN')
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`user-verification:${t}`])
      const existing = await client.query<{ quota: string | null; meta: string | null }>(
        'SELECT to_regclass($1)::text AS quota, to_regclass($2)::text AS meta',
        [t, `${t}_meta`]
      )
      await client.query(`CREATE TABLE IF NOT EXISTS ${t} (
        key_id TEXT NOT NULL, period TEXT NOT NULL, used BIGINT NOT NULL, expires_at BIGINT NOT NULL,
        PRIMARY KEY (key_id, period))`)
      await client.query(`CREATE TABLE IF NOT EXISTS ${t}_ops (
        operation TEXT PRIMARY KEY, key_id TEXT NOT NULL, period TEXT NOT NULL, amount BIGINT NOT NULL, expires_at BIGINT NOT NULL)`)
      await client.query(`ALTER TABLE ${t}_ops ADD COLUMN IF NOT EXISTS day TEXT`)
      await client.query(`CREATE TABLE IF NOT EXISTS ${t}_daily (
        account_id TEXT NOT NULL, day TEXT NOT NULL, units BIGINT NOT NULL, expires_at BIGINT NOT NULL,
        PRIMARY KEY (account_id, day))`)
      await client.query(`CREATE TABLE IF NOT EXISTS ${t}_meta (name TEXT PRIMARY KEY, value BIGINT NOT NULL)`)
      const schema = await client.query(`SELECT value FROM ${t}_meta WHERE name = 'schema'`)
      if (schema.rowCount === 0) {
        // Release 0.1.0 counted usage per key: each key became an account with the same hex (see
        // legacyAccountId), so its months move to that account, kept as long as new usage is.
        if (existing.rows[0]?.quota !== null && existing.rows[0]?.meta === null) {
          const months = `(EXTRACT(EPOCH FROM (to_date(period || '-01', 'YYYY-MM-DD') + interval '1 month'))::bigint * 1000 + ${upgradedRetention})`
          await client.query(`UPDATE ${t} SET key_id = 'acct_' || substr(key_id, 5), expires_at = GREATEST(expires_at, ${months})
            WHERE key_id LIKE 'key\\_%'`)
          await client.query(`UPDATE ${t}_ops SET key_id = 'acct_' || substr(key_id, 5) WHERE key_id LIKE 'key\\_%'`)
        }
        await client.query(`INSERT INTO ${t}_meta (name, value) VALUES ('schema', 2)`)
      }
      await client.query('COMMIT')
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {})
      throw error
    } finally {
      client.release()
    }
    const interval = this.#options.purgeInterval ?? 3_600_000
    if (interval > 0 && this.#timer === undefined) {
      const now = this.#options.now ?? Date.now
      this.#timer = setInterval(() => {
        this.purge(now()).catch((error: unknown) => {
          ;(this.#options.logger ?? console).warn('user-verification: could not delete expired quota rows', {
            code: 'WRN_UV_PURGE',
            error: String(error)
          })
        })
      }, interval)
      this.#timer.unref()
    }
  }

  async consume(
    accountId: string,
    period: string,
    amount: number,
    limit: number,
    expiresAt: number,
    operation?: string,
    day?: string
  ): Promise<ConsumeResult> {
    const named = operation === undefined ? null : checkName('operation', operation)
    const now = (this.#options.now ?? Date.now)()
    const params = [
      checkName('accountId', accountId),
      checkName('period', period),
      checkUnits('amount', amount),
      checkLimit(limit),
      checkExpiresAt(expiresAt),
      named,
      now + operationTtl,
      day === undefined ? null : checkDay(day, period)
    ]
    const result = await this.#query<{ used: string }>(this.#sql.consume, params)
    const row = result.rows[0]
    if (row !== undefined) return { granted: true, used: Number(row.used) }
    return { granted: false, used: await this.get(accountId, period) }
  }

  /**
   * Undoes the consume named `operation`, or fences it off when it has not committed (yet): a
   * consume sent before a timeout and run later by a hung server can never commit afterwards.
   */
  async cancel(operation: string, accountId: string, period: string, amount: number): Promise<boolean> {
    checkUnits('amount', amount)
    const now = (this.#options.now ?? Date.now)()
    const name = checkName('operation', operation)
    const fenced = await this.#query(this.#sql.fence, [
      name,
      checkName('accountId', accountId),
      checkName('period', period),
      now + operationTtl
    ])
    if ((fenced.rowCount ?? 0) > 0) return false
    const result = await this.#query(this.#sql.cancel, [name])
    return (result.rowCount ?? 0) > 0
  }

  async refund(accountId: string, period: string, amount: number, day?: string): Promise<void> {
    await this.#query(this.#sql.refund, [
      checkUnits('amount', amount),
      checkName('accountId', accountId),
      checkName('period', period),
      day === undefined ? null : checkDay(day, period)
    ])
  }

  async get(accountId: string, period: string): Promise<number> {
    const result = await this.#query<{ used: string }>(this.#sql.select, [checkName('accountId', accountId), checkName('period', period)])
    return result.rows[0] === undefined ? 0 : Number(result.rows[0].used)
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyUsage[]> {
    daysBetween(from, to)
    const result = await this.#pool.query<{ day: string; units: string }>(this.#sql.daily, [checkName('accountId', accountId), from, to])
    return result.rows.map((r) => ({ day: r.day, units: Number(r.units) }))
  }

  async monthly(accountId: string, from: string, to: string): Promise<MonthlyUsage[]> {
    monthsBetween(from, to)
    const result = await this.#pool.query<{ period: string; units: string }>(this.#sql.monthly, [
      checkName('accountId', accountId),
      from,
      to
    ])
    return result.rows.map((r) => ({ period: r.period, units: Number(r.units) }))
  }

  /** Deletes month totals, days and remembered operations whose expiry is at or before `now` (also run every `purgeInterval`). */
  async purge(now: number): Promise<void> {
    await Promise.all([
      this.#pool.query(this.#sql.purge, [now]),
      this.#pool.query(this.#sql.purgeOps, [now]),
      this.#pool.query(this.#sql.purgeDaily, [now])
    ])
  }

  #query<R extends pg.QueryResultRow = pg.QueryResultRow>(sql: string, params: unknown[]): Promise<pg.QueryResult<R>> {
    const query = this.#pool.query<R>(sql, params)
    const timeout = this.#options.timeout ?? 0
    return timeout > 0 ? withTimeout(query, timeout, 'PostgreSQL') : query
  }

  async close(): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    if (this.#options.close !== undefined) await this.#options.close()
  }
}
