// Optional per-key and per-IP request-rate limits: express-rate-limit, on Redis when the store is Redis.
import { createHash } from 'node:crypto'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { MemoryStore, rateLimit, type ClientRateLimitInfo, type Options as LimiterOptions, type Store } from 'express-rate-limit'
import { RedisStore, type RedisReply } from 'rate-limit-redis'
import { details, optionError, toError, warnOnce, OptionsTypeError, StoreError } from '../errors.js'
import type { Logger, RedisStores, Stores } from '../types.js'

/** Request-rate limits of the API. `0` (the default) turns a limit off. */
export interface RateLimitOptions {
  /**
   * Requests per second allowed for one API key, counted on the SHA-256 digest of the
   * `X-API-Token` header (never the key itself); requests without the header are not counted
   * here. Defaults to `0` (off).
   */
  perKey: number
  /**
   * Requests per second allowed from one client address (`req.ip`, IPv6 grouped by /56). Behind a
   * proxy, set Express's `trust proxy` so `req.ip` is the client's. Defaults to `0` (off).
   */
  perIp: number
}

/** Sends one raw Redis command and resolves to its reply; rejects on errors (as `client.sendCommand`). */
export type SendCommand = (args: string[]) => Promise<unknown>

/** A shared Redis connection for the counters, and the namespace their keys live under. */
export interface RateLimitBackend {
  sendCommand: SendCommand
  /** Keys are `<prefix>-rl-key:<digest>` and `<prefix>-rl-ip:<address>`. */
  prefix: string
}

/** What {@link createRateLimiters} needs from the middleware around it. */
export interface RateLimitContext {
  /** Receives store failures and express-rate-limit's configuration warnings. */
  logger: Logger
  /**
   * Resolves to the Redis backend when the store is Redis, or `undefined` for in-process
   * counters. Called on the first counted request (the stores may still be opening), and again
   * on later requests for as long as it rejects; while it rejects, requests get 503.
   * Defaults to in-process counters.
   */
  backend?: () => Promise<RateLimitBackend | undefined>
  /** Seconds sent in `Retry-After` with a 503 when the counters cannot be reached. Defaults to `5`. */
  retryAfter?: number
}

/** What {@link createRateLimiters} returns. */
export interface RateLimiters {
  /** Middleware to mount before the body is read: per address first, then per key. Empty when both limits are off. */
  readonly handlers: RequestHandler[]
  /** Stops the in-process counters' timers. */
  close(): Promise<void>
}

/** The counting window: limits are per second, so a client may burst up to twice the limit across a window edge. */
const windowMs = 1000

/** Checks `input` (`undefined` fields mean off) and returns limits with every field set. */
export function resolveRateLimit(input: Readonly<Partial<RateLimitOptions>> | undefined): RateLimitOptions {
  if (input !== undefined && (typeof input !== 'object' || input === null)) {
    throw optionError('type', 'rateLimit', 'an object like { perKey: 10, perIp: 50 }', input)
  }
  const resolved: RateLimitOptions = { perKey: 0, perIp: 0 }
  for (const name of ['perKey', 'perIp'] as const) {
    const value = input?.[name]
    if (value === undefined) continue
    if (typeof value !== 'number' || !Number.isInteger(value)) {
      throw optionError('type', `rateLimit.${name}`, 'a whole number of requests per second', value, 'Use 0 to turn it off.')
    }
    if (value < 0) throw optionError('range', `rateLimit.${name}`, '>= 0', value, 'Use 0 to turn it off.')
    resolved[name] = value
  }
  return resolved
}

/**
 * The Redis backend of stores opened by `openStores('redis://…')`, which carry the connection's
 * `sendCommand`; `undefined` for any other stores (the counters then stay in this process).
 */
export function redisBackendOf(stores: Stores): RateLimitBackend | undefined {
  return isRedisStores(stores) ? { sendCommand: stores.sendCommand, prefix: stores.quota.prefix } : undefined
}

/** Whether `stores` are Redis stores with their connection's `sendCommand` (see {@link RedisStores}). */
export function isRedisStores(stores: Stores): stores is RedisStores {
  return typeof (stores as Partial<RedisStores>).sendCommand === 'function'
}

/**
 * An express-rate-limit `Store` for routes other than the API's (the dashboard's) that counts
 * where the API's limits count: in the stores' Redis when `stores()` resolves to Redis stores
 * (keys `<namespace>-rl-<name>:…`, so every instance shares them), in this process otherwise.
 * Give each limiter its own `name`. A counter failure reaches the limiter as an error, which
 * express-rate-limit passes to `next(error)`: answer it with 503, never let the request through.
 */
export function sharedCounterStore(name: string, stores: () => Promise<Stores | undefined>): Store {
  if (!/^[a-z][a-z0-9-]{0,30}$/.test(name))
    throw new OptionsTypeError(`user-verification: counter name must be lower-case letters, digits and -, got ${JSON.stringify(name)}.`)
  return new CounterStore(name, async () => {
    const open = await stores()
    if (open === undefined) throw new StoreError('user-verification: the stores are not open, so the rate-limit counters cannot be reached')
    return redisBackendOf(open)
  })
}

/** The digest the per-key limit counts on: the same SHA-256 the key store is looked up by. */
function tokenDigest(req: Request): string {
  return createHash('sha256')
    .update(req.get('x-api-token') ?? '', 'utf8')
    .digest('hex')
}

/**
 * Builds the rate-limit middleware for `options` (see {@link RateLimitOptions}). A limited
 * request gets 429 `{"detail":"Too Many Requests"}` with `Retry-After` (whole seconds, >= 1).
 * When the counters fail (Redis unreachable), the request gets 503 with `Retry-After`:
 * limits never fail open.
 */
export function createRateLimiters(options: Readonly<Partial<RateLimitOptions>> | undefined, context: RateLimitContext): RateLimiters {
  const limits = resolveRateLimit(options)
  const { logger, backend, retryAfter = 5 } = context
  const stores: CounterStore[] = []
  const handlers: RequestHandler[] = []

  function limiter(name: 'ip' | 'key', limit: number, extra: Partial<LimiterOptions>): void {
    const store = new CounterStore(name, backend)
    stores.push(store)
    const counted = rateLimit({
      windowMs,
      limit,
      store,
      legacyHeaders: false,
      standardHeaders: false,
      requestPropertyName: `rateLimit_${name}`,
      logger: {
        // express-rate-limit warns about its configuration when it starts: once per process is enough.
        warn: (error, message) =>
          warnOnce(logger, 'WRN_UV_RATE_LIMIT', `rate limit (${name}): ${message ?? ''} ${toError(error).message}`.replace(/ {2,}/g, ' ')),
        error: (error, message) =>
          logger.error(`user-verification: rate limit (${name}): ${message ?? ''} ${toError(error).message}`.replace(/ {2,}/g, ' '), {
            code: 'ERR_UV_STORE'
          })
      },
      handler: tooManyRequests,
      ...extra
    })
    handlers.push(guard(counted, name))
  }

  function tooManyRequests(req: Request, res: Response, _next: NextFunction, used: LimiterOptions): void {
    const info = (req as unknown as Record<string, { resetTime?: Date } | undefined>)[used.requestPropertyName]
    const reset = info?.resetTime?.getTime() ?? Date.now() + windowMs
    res.set('Retry-After', String(Math.max(1, Math.ceil((reset - Date.now()) / 1000))))
    res.status(429).json({ detail: details.tooManyRequests })
  }

  // A counter failure reaches us as next(error): answer 503 here rather than let it pass.
  function guard(counted: RequestHandler, name: string): RequestHandler {
    return function rateLimitGuard(req: Request, res: Response, next: NextFunction) {
      counted(req, res, (error?: unknown) => {
        if (error === undefined || error === 'route' || error === 'router') return next(error)
        logger.error(`user-verification: rate limit (${name}) counter failed: ${toError(error).message}`, {
          code: 'ERR_UV_STORE'
        })
        if (res.headersSent) return next(error)
        res.set('Retry-After', String(retryAfter))
        res.status(503).json({ detail: details.unavailable })
      })
    }
  }

  // A client that left before the limiter ran has no address any more: there is nothing to count
  // or answer, and express-rate-limit would log its missing req.ip as an error (attacker finding F9).
  if (limits.perIp > 0) limiter('ip', limits.perIp, { skip: (req) => req.ip === undefined })
  if (limits.perKey > 0) limiter('key', limits.perKey, { keyGenerator: tokenDigest, skip: (req) => req.get('x-api-token') === undefined })

  return {
    handlers,
    async close() {
      await Promise.all(stores.map((store) => store.shutdown()))
    }
  }
}

/**
 * An express-rate-limit store that picks its backend on first use: rate-limit-redis on the
 * store's Redis connection, or express-rate-limit's MemoryStore. The choice waits for the
 * middleware's stores, which open asynchronously.
 */
class CounterStore implements Store {
  readonly prefix: string
  // Redis counters are shared; until the backend is known, claim nothing about locality.
  localKeys = false
  #inner: Store | undefined
  #initialised = false
  #opening: Promise<Store> | undefined
  #options: LimiterOptions | undefined
  readonly #name: string
  readonly #backend: (() => Promise<RateLimitBackend | undefined>) | undefined

  constructor(name: string, backend: (() => Promise<RateLimitBackend | undefined>) | undefined) {
    this.#name = name
    this.prefix = `rl-${name}:`
    this.#backend = backend
  }

  init(options: LimiterOptions): void {
    this.#options = options
  }

  async increment(key: string): Promise<ClientRateLimitInfo> {
    return (await this.#ready()).increment(key)
  }

  async decrement(key: string): Promise<void> {
    await (await this.#ready()).decrement(key)
  }

  async resetKey(key: string): Promise<void> {
    await (await this.#ready()).resetKey(key)
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return (await this.#ready()).get?.(key)
  }

  async shutdown(): Promise<void> {
    await this.#inner?.shutdown?.()
  }

  #ready(): Promise<Store> {
    if (this.#inner !== undefined && this.#initialised) return Promise.resolve(this.#inner)
    this.#opening ??= this.#open().finally(() => {
      this.#opening = undefined
    })
    return this.#opening
  }

  // rate-limit-redis loads its scripts in init() and never retries a failed load, so a failed
  // init is run again on the next request instead of leaving the store broken for good.
  async #open(): Promise<Store> {
    if (this.#inner === undefined) {
      const backend = await this.#backend?.()
      if (backend === undefined) {
        this.#inner = new MemoryStore()
        this.localKeys = true
      } else {
        const send = backend.sendCommand
        this.#inner = new RedisStore({
          sendCommand: (...args: string[]) => send(args) as Promise<RedisReply>,
          prefix: `${backend.prefix}-rl-${this.#name}:`
        })
      }
    }
    await this.#inner.init?.(this.#options ?? ({ windowMs } as LimiterOptions))
    this.#initialised = true
    return this.#inner
  }
}
