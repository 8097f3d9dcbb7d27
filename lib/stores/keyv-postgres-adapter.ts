// @keyv/postgres adapter on a pool we own, with an iterator that rejects instead of ending early.
import KeyvPostgres from '@keyv/postgres'
import type pg from 'pg'

/**
 * Two fixes over @keyv/postgres 2.2: it keeps one module-global pool per URI, so closing one
 * store ends every other store's pool in the process (and our timeouts could not be set per
 * store); and its iterator swallows query errors and simply stops, so `list()` would return a
 * partial list during an outage. This subclass runs every query on the given pool (whose
 * `close` the caller owns) and lets iterator errors reject.
 */
export class PooledKeyvPostgres extends KeyvPostgres {
  constructor(pool: pg.Pool, options: { table: string; iterationLimit?: number }) {
    // The parent constructor calls connect() before our fields exist, so the pool rides in opts.
    super({ ...options, dialect: 'postgres', uri: 'postgres://pooled', pool } as ConstructorParameters<typeof KeyvPostgres>[0])
  }

  // biome-ignore lint/suspicious/noExplicitAny: the signature @keyv/postgres declares for connect()
  override async connect(): Promise<(sql: string, values?: unknown) => Promise<any[]>> {
    const pool = (this.opts as { pool: pg.Pool }).pool
    return async (sql, values) => (await pool.query(sql, values as unknown[])).rows
  }

  override async disconnect(): Promise<void> {}

  /** Writes `value` only when `key` has none; `true` when written (one INSERT … ON CONFLICT DO NOTHING, atomic across processes). */
  async setIfAbsent(key: string, value: string): Promise<boolean> {
    const table = `"${String(this.opts.schema ?? 'public').replace(/"/g, '""')}"."${String(this.opts.table).replace(/"/g, '""')}"`
    const rows = await this.query(
      `INSERT INTO ${table} (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING 1 AS inserted`,
      [key, value]
    )
    return rows.length > 0
  }

  override async *iterator(namespace?: string): AsyncGenerator<string[], void, unknown> {
    const limit = this.opts.iterationLimit ?? 500
    const table = `"${String(this.opts.schema ?? 'public').replace(/"/g, '""')}"."${String(this.opts.table).replace(/"/g, '""')}"`
    const pattern = `${namespace === undefined ? '' : `${namespace.replace(/[%_\\]/g, '\\$&')}:`}%`
    let lastKey: string | null = null
    for (;;) {
      const rows: Array<{ key: string; value: string }> =
        lastKey === null
          ? await this.query(`SELECT key, value FROM ${table} WHERE key LIKE $1 ORDER BY key LIMIT $2`, [pattern, limit])
          : await this.query(`SELECT key, value FROM ${table} WHERE key LIKE $1 AND key > $2 ORDER BY key LIMIT $3`, [
              pattern,
              lastKey,
              limit
            ])
      for (const row of rows) yield [row.key, row.value]
      if (rows.length < limit) return
      lastKey = rows[rows.length - 1]!.key
    }
  }
}
