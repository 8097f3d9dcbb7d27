// The Express middleware: the verification API with key auth and monthly quota, per DESIGN §2.
import { randomUUID } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { hashKey, isKeyActive } from '../quota/api-keys.js'
import { StoreError, details, toError, type ErrorCode, type ValidationIssue } from '../errors.js'
import { resolveOptions, type Configuration, type Options } from './options.js'
import { periodOf, type Period } from '../quota/plans.js'
import { QuotaCompensation } from '../quota/compensation.js'
import { createRateLimiters, redisBackendOf } from './rate-limit.js'
import { validateRequest, type RequestBody } from './request-validation.js'
import { assertKeyStore, assertQuotaStore, openStores } from '../stores/open-stores.js'
import { KeyCache, type KeyEntry } from '../quota/key-cache.js'
import type { Account, ConsumeResult, KeyRecord, Stores } from '../types.js'
import { createVerifier, presentFields, type PresentFields } from '../verify.js'

/** The only `model` the API accepts. */
export const modelName = 'user_verification'

/** How long a period's usage (month total and days) is kept after the period ends: >= 13 months of history. */
export const usageRetention = 400 * 24 * 3600 * 1000

/** Counters the standalone server exposes on `/metrics`. */
export interface MiddlewareMetrics {
  /** Responses sent, by HTTP status. */
  responses: Record<number, number>
  /** Requests in progress now. */
  inFlight: number
  /** Units granted since start. */
  unitsConsumed: number
  /** Units given back after a failed verification. */
  unitsRefunded: number
}

/** What {@link userVerification} returns: an Express router plus lifecycle hooks. */
export interface UserVerificationMiddleware extends RequestHandler {
  /** Settles when the stores are open; rejects if they cannot be opened (requests get 503 meanwhile). */
  readonly ready: Promise<void>
  /** `true` when the name model loaded (requests with names get 503 otherwise). */
  readonly modelLoaded: boolean
  /** The open stores (after `ready`). */
  stores(): Stores | undefined
  metrics(): MiddlewareMetrics
  /** Stops timers and closes the stores the middleware opened itself. */
  close(): Promise<void>
}

/** A request that passed every check up to the quota: its key, account and the units now used. */
interface Admitted {
  key: KeyRecord
  account: Account
  limit: number
  used: number
}

/** Sends `{ detail }` with `status`; the API's single way of answering an error. */
function sendDetail(res: Response, status: number, detail: unknown): void {
  res.status(status).json({ detail })
}

/**
 * Sends the 422 array. An echoed `input` can be nested deeper than JSON.stringify can recurse
 * (a 16 KiB body holds 8,000 levels); such inputs are echoed as `null` rather than failing.
 */
function sendIssues(res: Response, issues: ValidationIssue[]): void {
  let text: string
  try {
    text = JSON.stringify({ detail: issues })
  } catch {
    text = JSON.stringify({ detail: issues.map((issue) => ({ ...issue, input: null })) })
  }
  res.status(422).type('application/json').send(text)
}

/**
 * Creates the verification API. Mount it where the API lives:
 * `app.use('/api/v1', userVerification({ store: 'sqlite://./uv.sqlite' }))`.
 */
export function userVerification(options?: Readonly<Partial<Options>>): UserVerificationMiddleware {
  const config = resolveOptions(options)
  const { logger, plans, now, retryAfter } = config
  const verifier = createVerifier({ ...emailOptionsOf(config), emailVerifier: config.emailVerifier, nameVerifier: config.nameVerifier })
  if (verifier.nameModelError) logger.error(verifier.nameModelError.message, { code: 'ERR_UV_MODEL_LOAD' })

  const metrics: MiddlewareMetrics = { responses: {}, inFlight: 0, unitsConsumed: 0, unitsRefunded: 0 }
  const stores = storeOpener(config)
  const loopDelay = config.maxEventLoopDelay > 0 ? eventLoopWatch() : undefined
  const compensation = new QuotaCompensation({ logger })
  const keyCache = new KeyCache()
  const limiters = createRateLimiters(config.rateLimit, { logger, retryAfter, backend: async () => redisBackendOf(await stores.get()) })

  function logFailure(code: ErrorCode, message: string, error: unknown): void {
    logger.error(`user-verification: ${code} ${message}: ${toError(error).message}`, { code })
  }

  function unavailable(res: Response): void {
    res.set('Retry-After', String(retryAfter))
    sendDetail(res, 503, details.unavailable)
  }

  function overloaded(): boolean {
    if (config.maxInFlight > 0 && metrics.inFlight > config.maxInFlight) return true
    return loopDelay !== undefined && loopDelay.current() > config.maxEventLoopDelay
  }

  /**
   * Steps 2-5 of the order of checks: the key (401), the model (400), the data (400) and the
   * quota (402). Answers the request itself when a check fails; otherwise the units are consumed.
   */
  async function admit(
    res: Response,
    open: Stores,
    token: string,
    body: RequestBody,
    fields: PresentFields,
    period: Period,
    time: number
  ): Promise<Admitted | undefined> {
    const day = new Date(time).toISOString().slice(0, 10)
    const hash = hashKey(token)
    // A cached key record can turn out stale at the consume: undo it and go again with a fresh one.
    for (let attempt = 1; ; attempt++) {
      let entry: KeyEntry
      try {
        entry = token === '' ? { record: undefined, account: undefined, version: undefined } : await keyCache.lookup(open, hash, time)
      } catch (error) {
        logFailure('ERR_UV_STORE', 'key lookup failed', error)
        return void unavailable(res)
      }
      const { record: key, account } = entry
      if (key === undefined || account === undefined || !isKeyActive(key, account, time))
        return void sendDetail(res, 401, details.invalidToken)
      if (body.model !== modelName) return void sendDetail(res, 400, details.invalidTool)
      if (fields.count === 0) return void sendDetail(res, 400, details.noData)

      const limit = plans[account.plan]
      if (limit === undefined)
        logger.warn(`user-verification: WRN_UV_UNKNOWN_PLAN account ${account.id} has plan "${account.plan}", which is not configured`)
      // Named only where the store can undo a consume whose reply was lost.
      const operation = open.quota.cancel === undefined ? undefined : randomUUID()
      let consumed: ConsumeResult
      try {
        consumed = await open.quota.consume(account.id, period.id, fields.count, limit ?? 0, period.end + usageRetention, operation, day)
        if (!keyCache.confirm(hash, entry, consumed) && attempt < 3) {
          if (consumed.granted) await open.quota.refund(account.id, period.id, fields.count, day)
          continue
        }
      } catch (error) {
        logFailure('ERR_UV_STORE', 'quota update failed', error)
        if (operation !== undefined) compensation.add(open.quota, operation, account.id, period.id, fields.count, day)
        return void unavailable(res)
      }
      if (!consumed.granted) return void sendDetail(res, 402, details.upgrade)
      metrics.unitsConsumed += fields.count
      return { key, account, limit: limit ?? 0, used: consumed.used }
    }
  }

  async function verificationHandler(req: Request, res: Response): Promise<void> {
    metrics.inFlight++
    res.once('close', () => {
      metrics.inFlight--
      metrics.responses[res.statusCode] = (metrics.responses[res.statusCode] ?? 0) + 1
    })
    const checked = validateRequest(req.get('x-api-token'), req.body)
    if (!checked.ok) return sendIssues(res, checked.issues)
    if (overloaded()) return unavailable(res)

    let open: Stores
    try {
      open = await stores.get()
    } catch (error) {
      logFailure('ERR_UV_STORE', 'the store is not open', error)
      return unavailable(res)
    }
    const { body, token } = checked
    const fields = presentFields(body)
    const time = now()
    const period = periodOf(time)
    const admitted = await admit(res, open, token, body, fields, period, time)
    if (admitted === undefined) return
    const { account, limit, used } = admitted

    let result
    try {
      result = await verifier.verifyFields(fields)
    } catch (error) {
      logFailure('ERR_UV_VERIFIER', 'verification failed', error)
      try {
        await open.quota.refund(account.id, period.id, fields.count, new Date(time).toISOString().slice(0, 10))
        metrics.unitsRefunded += fields.count
      } catch (refundError) {
        logFailure('ERR_UV_REFUND', `could not give back ${fields.count} units of account ${account.id}`, refundError)
      }
      return unavailable(res)
    }

    res.set({
      'X-Quota-Limit': String(limit),
      'X-Quota-Remaining': String(Math.max(0, limit - used)),
      'X-Quota-Reset': new Date(period.end).toISOString()
    })
    res.status(200).json({
      status: 'success',
      received_data: { model: body.model, email: body.email ?? null, firstname: body.firstname ?? null, lastname: body.lastname ?? null },
      ...result
    })
  }

  const router = express.Router()
  const readBody = express.text({ type: () => true, limit: config.bodyLimit, defaultCharset: 'utf-8' })
  // Rate limits come first: their point is to refuse before any parsing or store work.
  // body-parser reads and discards a too-large body before it answers, and a host app's parser may
  // have read it already: refuse on the declared length and close instead.
  function declaredTooLarge(req: Request, res: Response, next: NextFunction): void {
    if (Number(req.headers['content-length']) > config.bodyLimit) {
      res.set('Connection', 'close')
      return sendDetail(res, 413, details.tooLarge)
    }
    next()
  }
  router.post('/', ...limiters.handlers, declaredTooLarge, readBody, verificationHandler)
  router.all('/', function methodNotAllowed(_req, res) {
    res.set('Allow', 'POST')
    sendDetail(res, 405, details.methodNotAllowed)
  })
  router.use(function notFound(_req, res) {
    sendDetail(res, 404, details.notFound)
  })
  router.use(function verificationErrors(error: unknown, _req: Request, res: Response, next: NextFunction) {
    if (res.headersSent) return next(error)
    // Errors of the body reader (too large, bad encoding, corrupt compression, aborted) carry a 4xx status.
    const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown }
    if (type === 'entity.too.large') return sendDetail(res, 413, details.tooLarge)
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return sendDetail(res, 400, details.badEncoding)
    if (typeof status === 'number' && status >= 400 && status < 500) return sendDetail(res, 400, details.badBody)
    logFailure('ERR_UV_VERIFIER', 'unexpected error', error)
    unavailable(res)
  })

  return Object.assign(router as unknown as RequestHandler, {
    ready: stores.first,
    modelLoaded: verifier.nameModelError === undefined,
    stores: stores.current,
    metrics: () => ({ ...metrics, responses: { ...metrics.responses } }),
    async close() {
      loopDelay?.stop()
      await limiters.close()
      await compensation.close()
      verifier.close()
      await stores.close()
    }
  })
}

function emailOptionsOf(config: Configuration) {
  const { dnsServers, resolver, dnsTimeout, dnsTries, dnsCache, disposable, learnMx, now } = config
  const all = { dnsServers, resolver, dnsTimeout, dnsTries, dnsCache, disposable, learnMx, now }
  return Object.fromEntries(Object.entries(all).filter(([, value]) => value !== undefined)) as Partial<typeof all>
}

/** Opens the configured stores once; after a failure, the next request tries again (at most once a second). */
function storeOpener(config: Configuration) {
  const owned = typeof config.store === 'string'
  let open: Stores | undefined
  let pending: Promise<Stores>
  let failedAt = 0

  function attempt(): Promise<Stores> {
    pending = (async () => {
      const stores = typeof config.store === 'string' ? await openStores(config.store, { logger: config.logger }) : config.store
      assertKeyStore(stores.keys)
      assertQuotaStore(stores.quota)
      await stores.keys.init?.()
      await stores.quota.init?.()
      open = stores
      return stores
    })()
    pending.catch((error: unknown) => {
      failedAt = Date.now()
      config.logger.error(`user-verification: ERR_UV_STORE the store could not be opened: ${toError(error).message}`, {
        code: 'ERR_UV_STORE'
      })
    })
    return pending
  }
  const first = attempt().then(() => undefined)
  first.catch(() => {})

  return {
    first,
    current: () => open,
    get(): Promise<Stores> {
      if (open) return Promise.resolve(open)
      if (failedAt > 0 && Date.now() - failedAt > 1000) {
        failedAt = 0
        attempt()
      }
      return pending.catch((error: unknown) => {
        throw new StoreError('the store is not open', { cause: error })
      })
    },
    async close() {
      if (owned) await open?.close()
    }
  }
}

/** Tracks the event loop's recent delay (p99 over the last half second), in ms. */
function eventLoopWatch() {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  let last = 0
  const timer = setInterval(() => {
    last = histogram.percentile(99) / 1e6
    histogram.reset()
  }, 500)
  timer.unref()
  return {
    current: () => last,
    stop() {
      clearInterval(timer)
      histogram.disable()
    }
  }
}
