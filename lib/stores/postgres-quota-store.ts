// Scale-out quota store on PostgreSQL: one conditional INSERT … ON CONFLICT DO UPDATE … RETURNING per consume.
import type pg from 'pg'
import type { ConsumeResult, Logger, QuotaStore } from '../types.js'
import { checkExpiresAt, checkLimit, checkName, checkUnits } from './store-args.js'
import { withTimeout } from './with-timeout.js'

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
  readonly #sql: { consume: string; select: string; refund: string; fence: string; cancel: string; purge: string; purgeOps: string }
  #timer: NodeJS.Timeout | undefined

  constructor(options: PostgresQuotaStoreOptions) {
    if (options === null || typeof options !== 'object' || typeof options.pool?.query !== 'function') {
      throw new TypeError('user-verification: PostgresQuotaStore needs `pool`, a pg.Pool.')
    }
    const table = options.table ?? 'uv_quota'
    if (!/^[a-z_][a-z0-9_]{0,62}$/.test(table)) {
      throw new TypeError(
        `user-verification: PostgresQuotaStore \`table\` must be lower-case letters, digits and _, got ${JSON.stringify(table)}.`
      )
    }
    this.#pool = options.pool
    this.#table = table
    this.#options = options
    this.prefix = options.prefix ?? 'uv'
    this.#sql = {
      // A named consume also records its operation in the same statement (one transaction), so
      // cancel can later undo exactly the consumes that were applied.
      consume: `WITH applied AS (
          INSERT INTO ${table} AS q (key_id, period, used, expires_at)
          SELECT $1, $2, $3::bigint, $5::bigint WHERE $3::bigint <= $4::bigint
          ON CONFLICT (key_id, period) DO UPDATE SET used = q.used + EXCLUDED.used, expires_at = GREATEST(q.expires_at, EXCLUDED.expires_at)
          WHERE q.used + EXCLUDED.used <= $4::bigint
          RETURNING used),
        named AS (
          INSERT INTO ${table}_ops (operation, key_id, period, amount, expires_at)
          SELECT $6::text, $1, $2, $3::bigint, $7::bigint FROM applied WHERE $6::text IS NOT NULL)
        SELECT used FROM applied`,
      // Cancel, step 1: a fence (amount 0) under the operation's name, unless the consume recorded it
      // first. ON CONFLICT waits for a consume still in progress on another connection; once the
      // fence stands, that name's INSERT fails, so a consume delayed on a hung server never commits.
      fence: `INSERT INTO ${table}_ops (operation, key_id, period, amount, expires_at) VALUES ($1, $2, $3, 0, $4::bigint)
        ON CONFLICT (operation) DO NOTHING RETURNING 1`,
      // Step 2, when the consume committed: undo it once, leaving the row behind as the fence.
      cancel: `WITH undone AS (
          UPDATE ${table}_ops AS o SET amount = 0 FROM ${table}_ops AS old
          WHERE o.operation = $1 AND old.operation = o.operation AND o.amount > 0
          RETURNING o.key_id, o.period, old.amount)
        UPDATE ${table} AS q SET used = GREATEST(0, q.used - undone.amount) FROM undone
        WHERE q.key_id = undone.key_id AND q.period = undone.period RETURNING 1`,
      select: `SELECT used FROM ${table} WHERE key_id = $1 AND period = $2`,
      refund: `UPDATE ${table} SET used = GREATEST(0, used - $1::bigint) WHERE key_id = $2 AND period = $3`,
      purge: `DELETE FROM ${table} WHERE expires_at <= $1`,
      purgeOps: `DELETE FROM ${table}_ops WHERE expires_at <= $1`
    }
  }

  /** Creates the table when missing and starts the purge timer. Rejects when the database is unreachable. */
  async init(): Promise<void> {
    try {
      await this.#pool.query(`CREATE TABLE IF NOT EXISTS ${this.#table} (
        key_id TEXT NOT NULL, period TEXT NOT NULL, used BIGINT NOT NULL, expires_at BIGINT NOT NULL,
        PRIMARY KEY (key_id, period))`)
      await this.#pool.query(`CREATE TABLE IF NOT EXISTS ${this.#table}_ops (
        operation TEXT PRIMARY KEY, key_id TEXT NOT NULL, period TEXT NOT NULL, amount BIGINT NOT NULL, expires_at BIGINT NOT NULL)`)
    } catch (error) {
      // Two processes creating the table at once: one wins, the other sees a duplicate type.
      if ((error as { code?: string }).code !== '23505' && (error as { code?: string }).code !== '42P07') throw error
    }
    const interval = this.#options.purgeInterval ?? 3_600_000
    if (interval > 0 && this.#timer === undefined) {
      const now = this.#options.now ?? Date.now
      this.#timer = setInterval(() => {
        Promise.all([this.#pool.query(this.#sql.purge, [now()]), this.#pool.query(this.#sql.purgeOps, [now()])]).catch((error: unknown) => {
          ;(this.#options.logger ?? console).warn('user-verification: could not delete expired quota rows', { error: String(error) })
        })
      }, interval)
      this.#timer.unref()
    }
  }

  async consume(
    keyId: string,
    period: string,
    amount: number,
    limit: number,
    expiresAt: number,
    operation?: string
  ): Promise<ConsumeResult> {
    const named = operation === undefined ? null : checkName('operation', operation)
    const now = (this.#options.now ?? Date.now)()
    const params = [
      checkName('keyId', keyId),
      checkName('period', period),
      checkUnits('amount', amount),
      checkLimit(limit),
      checkExpiresAt(expiresAt),
      named,
      now + operationTtl
    ]
    const result = await this.#query<{ used: string }>(this.#sql.consume, params)
    const row = result.rows[0]
    if (row !== undefined) return { granted: true, used: Number(row.used) }
    return { granted: false, used: await this.get(keyId, period) }
  }

  /**
   * Undoes the consume named `operation`, or fences it off when it has not committed (yet): a
   * consume sent before a timeout and run later by a hung server can never commit afterwards.
   */
  async cancel(operation: string, keyId: string, period: string, amount: number): Promise<boolean> {
    checkUnits('amount', amount)
    const now = (this.#options.now ?? Date.now)()
    const name = checkName('operation', operation)
    const fenced = await this.#query(this.#sql.fence, [name, checkName('keyId', keyId), checkName('period', period), now + operationTtl])
    if ((fenced.rowCount ?? 0) > 0) return false
    const result = await this.#query(this.#sql.cancel, [name])
    return (result.rowCount ?? 0) > 0
  }

  async refund(keyId: string, period: string, amount: number): Promise<void> {
    await this.#query(this.#sql.refund, [checkUnits('amount', amount), checkName('keyId', keyId), checkName('period', period)])
  }

  async get(keyId: string, period: string): Promise<number> {
    const result = await this.#query<{ used: string }>(this.#sql.select, [checkName('keyId', keyId), checkName('period', period)])
    return result.rows[0] === undefined ? 0 : Number(result.rows[0].used)
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
