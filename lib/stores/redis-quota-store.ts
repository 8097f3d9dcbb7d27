// Scale-out quota store on Redis: consume-if-within-limit (with the day's history) and refund as Lua scripts, one round trip each.
import { createHash } from 'node:crypto'
import { warnOnce, OptionsTypeError, StoreError } from '../errors.js'
import type { ConsumeResult, DailyUsage, Logger, MonthlyUsage, QuotaStore } from '../types.js'
import { checkDay, checkExpiresAt, checkLimit, checkName, checkUnits, daysBetween, monthsBetween } from './store-args.js'

/** How long usage upgraded from release 0.1.0 is kept after its period ends (as the middleware keeps new usage). */
const upgradedRetention = 400 * 86_400_000

/**
 * Sends one raw command and resolves to its reply, e.g. `(args) => client.sendCommand(args)`
 * for node-redis/@redis/client or `(args) => ioredis.call(...args)`. It must reject on errors.
 */
export type SendCommand = (args: string[]) => Promise<unknown>

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /** How to talk to Redis (see {@link SendCommand}). The caller owns the connection. */
  sendCommand: SendCommand
  /** Namespace; keys are `<prefix>-quota:<accountId>:<period>` and `…:<accountId>:<day>`. Defaults to `'uv'`. */
  prefix?: string
  /** Warned once when Redis persistence is off. Defaults to `console`. */
  logger?: Logger
  /** Called by `close()`, e.g. to end a connection this store was given to own. */
  close?: () => Promise<void>
}

// KEYS[1] month key, KEYS[2] operation key, KEYS[3] day key; ARGV amount, limit, expiresAt (ms),
// operation TTL (ms, 0 = no operation), 1 when there is a day. Returns {granted 0|1, used}. The day
// gets the same units in the same script; a granted operation is remembered so cancel can undo it,
// and a cancelled one (its name fenced off by CANCEL) is refused.
const CONSUME = `if tonumber(ARGV[4]) > 0 and redis.call('EXISTS', KEYS[2]) == 1 then return redis.error_reply('UV_CANCELLED the operation was cancelled') end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if used + amount > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], amount)
local ttl = redis.call('PEXPIRETIME', KEYS[1])
if ttl < tonumber(ARGV[3]) then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
if ARGV[5] == '1' then
  redis.call('INCRBY', KEYS[3], amount)
  if redis.call('PEXPIRETIME', KEYS[3]) < tonumber(ARGV[3]) then redis.call('PEXPIREAT', KEYS[3], ARGV[3]) end
end
if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[2], amount, 'PX', ARGV[4]) end
return {1, used}`

// KEYS[1] month key, KEYS[2] day key (optional). Never below zero, and never creates a key
// (DECRBY on a missing key would, without a TTL).
const REFUND = `for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then
    local used = redis.call('DECRBY', KEYS[i], ARGV[1])
    if used < 0 then redis.call('INCRBY', KEYS[i], -used) end
  end
end
return 1`

// KEYS[1] month key, KEYS[2] operation key, KEYS[3] day key (optional); ARGV[1] operation TTL (ms).
// Undoes a remembered operation once; 1 if units came back. Leaves 0 under the name as a fence: a
// consume of that name arriving later (sent before a timeout, delayed on the way) is refused.
const CANCEL = `local amount = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('SET', KEYS[2], 0, 'PX', ARGV[1])
if amount == 0 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for _, key in ipairs({KEYS[1], KEYS[3]}) do
  if redis.call('EXISTS', key) == 1 then
    local used = redis.call('DECRBY', key, amount)
    if used < 0 then redis.call('INCRBY', key, -used) end
  end
end
return 1`

// KEYS[1] a 0.1.0 usage key (per key), KEYS[2] its account's; ARGV expiry (ms). Moves the units
// once (the old key is gone afterwards), so a repeated or concurrent upgrade counts nothing twice.
const UPGRADE = `local used = redis.call('GET', KEYS[1])
if not used then return 0 end
redis.call('INCRBY', KEYS[2], used)
redis.call('DEL', KEYS[1])
if redis.call('PEXPIRETIME', KEYS[2]) < tonumber(ARGV[1]) then redis.call('PEXPIREAT', KEYS[2], ARGV[1]) end
return 1`

/** How long an operation can still be cancelled, in ms: longer than any retry of the middleware. */
const operationTtl = 2 * 3600 * 1000

const sha1 = (text: string): string => createHash('sha1').update(text).digest('hex')

/**
 * Quota in Redis, atomic across every process and instance sharing the server (`localKeys:
 * false`): each consume is one Lua script, which Redis runs without interleaving. Usage keys
 * expire at the period's `expiresAt` (PEXPIREAT). Scripts are sent by hash (EVALSHA) and
 * re-sent in full after a Redis restart (NOSCRIPT).
 *
 * Durability is Redis's: with `appendonly yes` and `appendfsync everysec` a restart loses at
 * most about a second of consumes; with persistence off, all usage since the last snapshot.
 * `init()` warns when `appendonly` is off. Needs Redis >= 7.0 (PEXPIRETIME).
 */
export class RedisQuotaStore implements QuotaStore {
  readonly localKeys = false
  readonly prefix: string
  readonly #send: SendCommand
  readonly #logger: Logger
  readonly #close: (() => Promise<void>) | undefined
  readonly #keyPrefix: string

  constructor(options: RedisQuotaStoreOptions) {
    if (options === null || typeof options !== 'object' || typeof options.sendCommand !== 'function') {
      throw new OptionsTypeError(
        'user-verification: RedisQuotaStore needs `sendCommand`, e.g. `{ sendCommand: (args) => client.sendCommand(args) }`.'
      )
    }
    this.#send = options.sendCommand
    this.prefix = options.prefix ?? 'uv'
    this.#keyPrefix = `${this.prefix}-quota:`
    this.#logger = options.logger ?? console
    this.#close = options.close
  }

  /** Checks that Redis answers, warns when it does not persist writes, and upgrades 0.1.0 usage (per key) in place. */
  async init(): Promise<void> {
    await this.#send(['PING'])
    await this.#upgrade()
    try {
      const reply = await this.#send(['CONFIG', 'GET', 'appendonly'])
      const value = Array.isArray(reply) ? reply[1] : (reply as Record<string, unknown> | null)?.appendonly
      if (value === 'no') {
        warnOnce(
          this.#logger,
          'WRN_UV_REDIS_NOT_DURABLE',
          'Redis runs with appendonly off; consumed units since the last snapshot are lost if Redis restarts. Set `appendonly yes` for durable quota.'
        )
      }
    } catch {
      // CONFIG is often disabled on managed Redis; persistence is then the provider's business.
    }
  }

  /**
   * Release 0.1.0 kept usage under `<prefix>-quota:key_…:<period>`; each key became the account
   * `acct_` + the same hex (see legacyAccountId). Runs until the marker says it is done; each
   * move is one script, so an interrupted upgrade resumes and two instances starting together
   * count nothing twice.
   */
  async #upgrade(): Promise<void> {
    const marker = `${this.#keyPrefix}schema`
    if ((await this.#send(['GET', marker])) === '2') return
    let cursor = '0'
    do {
      const reply = (await this.#send(['SCAN', cursor, 'MATCH', `${this.#keyPrefix}key_*`, 'COUNT', '1000'])) as [string, string[]]
      cursor = String(reply[0])
      for (const key of reply[1]) {
        const match = /^(key_[^:]+):(\d{4})-(\d{2})$/.exec(key.slice(this.#keyPrefix.length))
        if (match === null) continue
        const [, keyId, year, month] = match
        const expiresAt = Date.UTC(Number(year), Number(month), 1) + upgradedRetention
        const account = `acct_${keyId!.slice(4)}`
        await this.#eval(UPGRADE, [key, this.#key(account, `${year}-${month}`)], [String(expiresAt)])
      }
    } while (cursor !== '0')
    await this.#send(['SET', marker, '2'])
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
    const monthKey = this.#key(accountId, period)
    const keys = [
      monthKey,
      this.#operationKey(operation ?? '-'),
      day === undefined ? monthKey : this.#key(accountId, checkDay(day, period))
    ]
    const args = [
      String(checkUnits('amount', amount)),
      String(checkLimit(limit)),
      String(checkExpiresAt(expiresAt)),
      operation === undefined ? '0' : String(operationTtl),
      day === undefined ? '0' : '1'
    ]
    const reply = await this.#eval(CONSUME, keys, args)
    if (!Array.isArray(reply) || reply.length !== 2)
      throw new StoreError(`user-verification: unexpected reply from the Redis consume script: ${JSON.stringify(reply)}`)
    return { granted: Number(reply[0]) === 1, used: Number(reply[1]) }
  }

  async refund(accountId: string, period: string, amount: number, day?: string): Promise<void> {
    const keys = [this.#key(accountId, period)]
    if (day !== undefined) keys.push(this.#key(accountId, checkDay(day, period)))
    await this.#eval(REFUND, keys, [String(checkUnits('amount', amount))])
  }

  async cancel(operation: string, accountId: string, period: string, amount: number, day?: string): Promise<boolean> {
    checkUnits('amount', amount)
    const keys = [this.#key(accountId, period), this.#operationKey(operation)]
    if (day !== undefined) keys.push(this.#key(accountId, checkDay(day, period)))
    const reply = await this.#eval(CANCEL, keys, [String(operationTtl)])
    return Number(reply) === 1
  }

  async get(accountId: string, period: string): Promise<number> {
    const reply = await this.#send(['GET', this.#key(accountId, period)])
    return reply === null || reply === undefined ? 0 : Number(reply)
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyUsage[]> {
    const days = daysBetween(from, to)
    const units = await this.#many(days.map((day) => this.#key(accountId, day)))
    return days.flatMap((day, i) => (units[i]! > 0 ? [{ day, units: units[i]! }] : []))
  }

  async monthly(accountId: string, from: string, to: string): Promise<MonthlyUsage[]> {
    const periods = monthsBetween(from, to)
    const units = await this.#many(periods.map((period) => this.#key(accountId, period)))
    return periods.flatMap((period, i) => (units[i]! > 0 ? [{ period, units: units[i]! }] : []))
  }

  async #many(keys: string[]): Promise<number[]> {
    if (keys.length === 0) return []
    const reply = await this.#send(['MGET', ...keys])
    if (!Array.isArray(reply)) throw new StoreError(`user-verification: unexpected reply from Redis MGET: ${JSON.stringify(reply)}`)
    return reply.map((value) => (value === null || value === undefined ? 0 : Number(value)))
  }

  async close(): Promise<void> {
    if (this.#close !== undefined) await this.#close()
  }

  #key(accountId: string, when: string): string {
    return `${this.#keyPrefix}${checkName('accountId', accountId)}:${checkName('period', when)}`
  }

  #operationKey(operation: string): string {
    return `${this.#keyPrefix}op:${checkName('operation', operation)}`
  }

  async #eval(script: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await this.#send(['EVALSHA', sha1(script), String(keys.length), ...keys, ...args])
    } catch (error) {
      if (!String((error as Error)?.message ?? error).includes('NOSCRIPT')) throw error
      return this.#send(['EVAL', script, String(keys.length), ...keys, ...args])
    }
  }
}
