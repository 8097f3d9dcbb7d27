// Scale-out quota store on Redis: consume-if-within-limit and refund as Lua scripts, one round trip each.
import { createHash } from 'node:crypto'
import type { ConsumeResult, Logger, QuotaStore } from '../types.js'
import { checkExpiresAt, checkLimit, checkName, checkUnits } from './store-args.js'

/**
 * Sends one raw command and resolves to its reply, e.g. `(args) => client.sendCommand(args)`
 * for node-redis/@redis/client or `(args) => ioredis.call(...args)`. It must reject on errors.
 */
export type SendCommand = (args: string[]) => Promise<unknown>

/** Options of {@link RedisQuotaStore}. */
export interface RedisQuotaStoreOptions {
  /** How to talk to Redis (see {@link SendCommand}). The caller owns the connection. */
  sendCommand: SendCommand
  /** Namespace; keys are `<prefix>-quota:<keyId>:<period>`. Defaults to `'uv'`. */
  prefix?: string
  /** Warned once when Redis persistence is off. Defaults to `console`. */
  logger?: Logger
  /** Called by `close()`, e.g. to end a connection this store was given to own. */
  close?: () => Promise<void>
}

// KEYS[1] usage key, KEYS[2] operation key; ARGV amount, limit, expiresAt (ms), operation TTL (ms,
// 0 = no operation). Returns {granted 0|1, used}. A granted operation is remembered so cancel can undo it.
const CONSUME = `if tonumber(ARGV[4]) > 0 and redis.call('EXISTS', KEYS[2]) == 1 then return redis.error_reply('UV_CANCELLED the operation was cancelled') end
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if used + amount > tonumber(ARGV[2]) then return {0, used} end
used = redis.call('INCRBY', KEYS[1], amount)
local ttl = redis.call('PEXPIRETIME', KEYS[1])
if ttl < tonumber(ARGV[3]) then redis.call('PEXPIREAT', KEYS[1], ARGV[3]) end
if tonumber(ARGV[4]) > 0 then redis.call('SET', KEYS[2], amount, 'PX', ARGV[4]) end
return {1, used}`

// Never below zero, and never creates a key (DECRBY on a missing key would, without a TTL).
const REFUND = `if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local used = redis.call('DECRBY', KEYS[1], ARGV[1])
if used < 0 then redis.call('INCRBY', KEYS[1], -used) used = 0 end
return used`

// KEYS[1] usage key, KEYS[2] operation key; ARGV[1] operation TTL (ms). Undoes a remembered operation
// once; 1 if units came back. Leaves 0 under the name as a fence: a consume of that name arriving
// later (sent before a timeout, delayed on the way) is refused by CONSUME's first line.
const CANCEL = `local amount = tonumber(redis.call('GET', KEYS[2]) or '0')
redis.call('SET', KEYS[2], 0, 'PX', ARGV[1])
if amount == 0 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local used = redis.call('DECRBY', KEYS[1], amount)
if used < 0 then redis.call('INCRBY', KEYS[1], -used) end
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
      throw new TypeError(
        'user-verification: RedisQuotaStore needs `sendCommand`, e.g. `{ sendCommand: (args) => client.sendCommand(args) }`.'
      )
    }
    this.#send = options.sendCommand
    this.prefix = options.prefix ?? 'uv'
    this.#keyPrefix = `${this.prefix}-quota:`
    this.#logger = options.logger ?? console
    this.#close = options.close
  }

  /** Checks that Redis answers and warns when it does not persist writes. */
  async init(): Promise<void> {
    await this.#send(['PING'])
    try {
      const reply = await this.#send(['CONFIG', 'GET', 'appendonly'])
      const value = Array.isArray(reply) ? reply[1] : (reply as Record<string, unknown> | null)?.appendonly
      if (value === 'no') {
        this.#logger.warn(
          'user-verification: Redis runs with appendonly off; consumed units since the last snapshot are lost if Redis restarts. Set `appendonly yes` for durable quota.',
          { code: 'WRN_UV_REDIS_NOT_DURABLE' }
        )
      }
    } catch {
      // CONFIG is often disabled on managed Redis; persistence is then the provider's business.
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
    const keys = [this.#key(keyId, period), this.#operationKey(operation ?? '-')]
    const args = [
      String(checkUnits('amount', amount)),
      String(checkLimit(limit)),
      String(checkExpiresAt(expiresAt)),
      operation === undefined ? '0' : String(operationTtl)
    ]
    const reply = await this.#eval(CONSUME, keys, args)
    if (!Array.isArray(reply) || reply.length !== 2)
      throw new Error(`user-verification: unexpected reply from the Redis consume script: ${JSON.stringify(reply)}`)
    return { granted: Number(reply[0]) === 1, used: Number(reply[1]) }
  }

  async refund(keyId: string, period: string, amount: number): Promise<void> {
    const key = this.#key(keyId, period)
    await this.#eval(REFUND, [key], [String(checkUnits('amount', amount))])
  }

  async cancel(operation: string, keyId: string, period: string, amount: number): Promise<boolean> {
    checkUnits('amount', amount)
    const reply = await this.#eval(CANCEL, [this.#key(keyId, period), this.#operationKey(operation)], [String(operationTtl)])
    return Number(reply) === 1
  }

  async get(keyId: string, period: string): Promise<number> {
    const reply = await this.#send(['GET', this.#key(keyId, period)])
    return reply === null || reply === undefined ? 0 : Number(reply)
  }

  async close(): Promise<void> {
    if (this.#close !== undefined) await this.#close()
  }

  #key(keyId: string, period: string): string {
    return `${this.#keyPrefix}${checkName('keyId', keyId)}:${checkName('period', period)}`
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
