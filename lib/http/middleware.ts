// The Express middleware: the verification API with key auth and monthly quota, per CONTRIBUTING.md#the-http-contract.
import { randomUUID } from 'node:crypto'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { LRUCache } from 'lru-cache'
import express, { type Application, type NextFunction, type Request, type RequestHandler, type Response } from 'express'
import { hashKey, isKeyActive, readKeyWithAccount } from '../quota/api-keys.js'
import { StoreError, details, warnOnce, withoutPrefix, type ErrorCode, type ValidationIssue } from '../errors.js'
import { resolveOptions, type Configuration, type Options } from './options.js'
import { periodOf, type Period } from '../quota/plans.js'
import { QuotaCompensation } from '../quota/compensation.js'
import { createRateLimiters, redisBackendOf } from './rate-limit.js'
import { validateRequest, type RequestBody } from './request-validation.js'
import { assertKeyStore, assertQuotaStore, openStores } from '../stores/open-stores.js'
import type { Account, ConsumeResult, KeyRead, KeyRecord, Stores, VerifyResult } from '../types.js'
import { createVerifier, presentFields, type PresentFields } from '../verify.js'
import { emailVerifierFrom } from '../email/verifier.js'

/** The only `model` the API accepts. */
export const modelName = 'user_verification'

/** A failure of the same kind is logged at most once per this many ms. */
const burstWindow = 10_000

/** How long a period's usage (month total and days) is kept after the period ends: >= 13 months of history. */
export const usageRetention = 400 * 24 * 3600 * 1000

/** Counters the standalone server exposes on `/metrics`. */
export interface MiddlewareMetrics {
  /** Responses sent in full, by HTTP status. */
  responses: Record<number, number>
  /** Requests whose client left before its answer was written in full (not in `responses`; a 200's units are given back). */
  aborted: number
  /** Requests in progress now. */
  inFlight: number
  /** Units granted since start. */
  unitsConsumed: number
  /** Units given back because the client left before its 200 was written (a failed verification consumes none). */
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

/** A request that passed every check up to the 402 pre-check: its key digest, records and limit. */
interface Admitted {
  hash: string
  entry: ActiveEntry
  limit: number
}

/** A key read whose key is active and whose account is known. */
type ActiveEntry = KeyRead & { record: KeyRecord; account: Account }

/** What an empty token reads as: no key. */
const noKey: KeyRead = Object.freeze({ record: undefined, account: undefined })

/**
 * The key with this digest and its account, through the stores' own read where they have one (it
 * may answer from a cache, without a promise), else from the key store. `held`: see
 * {@link Stores.readKey}; a plain key-store read was made for this request, so it is current.
 */
function readKey(open: Stores, hash: string, time: number, held?: KeyRead): KeyRead | Promise<KeyRead> {
  if (open.readKey !== undefined) return open.readKey(hash, time, held)
  return held ?? readKeyWithAccount(open.keys, hash)
}

/** Whether a consume ran under another key-records version than the key read it used (records changed since). */
function ranUnderNewerRecords(entry: KeyRead, consumed: ConsumeResult): boolean {
  return entry.version !== undefined && consumed.keysVersion !== undefined && consumed.keysVersion !== entry.version
}

function isPromiseLike<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return typeof (value as Partial<PromiseLike<T>>).then === 'function'
}

/** A consume that was granted: what the 200 reports, and what undoing it needs. */
interface Charged {
  account: Account
  limit: number
  used: number
  operation: string | undefined
}

const msPerDay = 86_400_000
let lastDay = { number: Number.NaN, text: '' }

/** The UTC day of a time, `YYYY-MM-DD`: usage is also kept per day. Remembered: it changes daily. */
function dayOf(time: number): string {
  const number = Math.floor(time / msPerDay)
  if (number !== lastDay.number) lastDay = { number, text: new Date(number * msPerDay).toISOString().slice(0, 10) }
  return lastDay.text
}

let lastPeriod: { start: number; period: Period; reset: string } | undefined

/** The quota period of a time and its end as the `X-Quota-Reset` text. Remembered: it changes monthly. */
function periodAt(time: number): { period: Period; reset: string } {
  if (lastPeriod === undefined || time < lastPeriod.start || time >= lastPeriod.period.end) {
    const date = new Date(time)
    const period = periodOf(time)
    lastPeriod = { start: Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1), period, reset: new Date(period.end).toISOString() }
  }
  return lastPeriod
}

/**
 * Writes a JSON answer with Node's own calls: Express's `res.json` would also hash the body for
 * an ETag (an API answer is never cached) and look the content type up, costing more than the
 * verification itself on the hot path. The host app's headers (set before us) are kept.
 */
function sendJson(res: Response, status: number, text: string, headers?: Record<string, string>): void {
  res.statusCode = status
  if (headers !== undefined) for (const name in headers) res.setHeader(name, headers[name]!)
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.setHeader('Content-Length', Buffer.byteLength(text))
  res.end(text)
}

/** Sends `{ detail }` with `status`; the API's single way of answering an error. */
function sendDetail(res: Response, status: number, detail: unknown): void {
  sendJson(res, status, JSON.stringify({ detail }))
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
  sendJson(res, 422, text)
}

/**
 * Creates the verification API. Mount it where the API lives:
 * `app.use('/api/v1', userVerification({ store: 'sqlite://./uv.sqlite' }))`.
 */
export function userVerification(options?: Readonly<Partial<Options>>): UserVerificationMiddleware {
  const config = resolveOptions(options)
  const { logger, plans, now, retryAfter } = config
  // Built from the resolved configuration only: the options were checked once, in resolveOptions.
  const emailVerifier = config.emailVerifier ?? emailVerifierFrom(config.email!)
  const verifier = createVerifier({ emailVerifier, nameVerifier: config.nameVerifier })
  if (verifier.nameModelError) logger.error(verifier.nameModelError.message, { code: 'ERR_UV_MODEL_LOAD' })

  const metrics: MiddlewareMetrics = { responses: {}, aborted: 0, inFlight: 0, unitsConsumed: 0, unitsRefunded: 0 }
  const stores = storeOpener(config)
  const loopDelay = config.maxEventLoopDelay > 0 ? eventLoopWatch() : undefined
  const compensation = new QuotaCompensation({ logger })
  // Usage last seen per account and period: only decides whether the 402 pre-check asks the store.
  const lastUsed = new LRUCache<string, number>({ max: 10_000 })
  const limiters = createRateLimiters(config.rateLimit, { logger, retryAfter, backend: async () => redisBackendOf(await stores.get()) })

  // An outage fails every request the same way: each kind of failure is logged with its cause once
  // per burst (at once, then at most once per window, counting the ones left out), not per request.
  const bursts = new Map<string, { at: number; left: number }>()
  function logFailure(code: ErrorCode, message: string, error: unknown): void {
    const kind = `${code} ${message}`
    const at = Date.now()
    const burst = bursts.get(kind)
    if (burst !== undefined && at - burst.at < burstWindow) {
      burst.left++
      return
    }
    if (bursts.size >= 100) bursts.clear()
    bursts.set(kind, { at, left: 0 })
    const left = burst?.left ?? 0
    const more = left > 0 ? ` (and ${left} more like it since the last such line)` : ''
    logger.error(`user-verification: ${message}: ${withoutPrefix(error)}${more}`, left > 0 ? { code, more: left } : { code })
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
   * Steps 2-5 of the order of checks: the key (401), the model (400), the data (400) and a cheap
   * quota pre-check (402). Answers the request itself when a check fails. Consumes nothing: the
   * units are taken by {@link charge}, after the verification succeeded.
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
    const hash = hashKey(token)
    let entry: KeyRead
    try {
      const read = token === '' ? noKey : readKey(open, hash, time)
      entry = isPromiseLike(read) ? await read : read
    } catch (error) {
      logFailure('ERR_UV_STORE', 'key lookup failed', error)
      return void unavailable(res)
    }
    for (let attempt = 1; ; attempt++) {
      // Unknown, revoked, expired and empty keys and disabled accounts all leave by this one branch.
      if (!isKeyActive(entry.record, entry.account, time)) return void sendDetail(res, 401, details.invalidToken)
      const active = entry as ActiveEntry
      if (body.model !== modelName) return void sendDetail(res, 400, details.invalidTool)
      if (fields.count === 0) return void sendDetail(res, 400, details.noData)
      const limit = limitOf(active.account)
      let over: boolean
      try {
        const usage = overLimit(open, active.account.id, period, fields.count, limit)
        over = typeof usage === 'boolean' ? usage : await usage
        // A 402 decided without a consume must not come from a plan that changed since the key was read.
        if (over && attempt === 1) {
          const current = await readKey(open, hash, time, entry)
          if (current !== entry) {
            entry = current
            continue
          }
        }
      } catch (error) {
        logFailure('ERR_UV_STORE', 'quota read failed', error)
        return void unavailable(res)
      }
      if (over) return void sendDetail(res, 402, details.upgrade)
      return { hash, entry: active, limit }
    }
  }

  /**
   * The cheap 402 pre-check, so an exhausted account costs nothing to answer: the store is asked
   * only when the usage this process last saw says the units will not fit. The consume after the
   * verification stays the exact, atomic check.
   */
  function overLimit(open: Stores, accountId: string, period: Period, count: number, limit: number): boolean | Promise<boolean> {
    if (count > limit) return true
    const slot = `${accountId}\u0000${period.id}`
    const seen = lastUsed.get(slot)
    if (seen === undefined || seen + count <= limit) return false
    return open.quota.get(accountId, period.id).then((used) => {
      lastUsed.set(slot, used)
      return used + count > limit
    })
  }

  /** The plan limit of an account (0, with a warning, for a plan the options do not define). */
  function limitOf(account: Account): number {
    const limit = plans[account.plan]
    // Once per process: a misconfigured plan would otherwise log on every request.
    if (limit === undefined)
      warnOnce(logger, 'WRN_UV_UNKNOWN_PLAN', `account ${account.id} has plan "${account.plan}", which is not configured`, {
        account: account.id,
        plan: account.plan
      })
    return limit ?? 0
  }

  /**
   * Step 5 for real, after a successful verification: consumes the units atomically (402 when
   * they no longer fit). A key read (a cached one, on SQLite) can turn out older than the consume:
   * the consume is undone and the key read again, so a revocation or plan change made meanwhile
   * still applies.
   */
  async function charge(
    res: Response,
    open: Stores,
    admitted: Admitted,
    fields: PresentFields,
    period: Period,
    time: number
  ): Promise<Charged | undefined> {
    const day = dayOf(time)
    let { entry, limit } = admitted
    for (let attempt = 1; ; attempt++) {
      const { account } = entry
      // Named only where the store can undo a consume whose reply was lost.
      const operation = open.quota.cancel === undefined ? undefined : randomUUID()
      let consumed: ConsumeResult
      try {
        consumed = await open.quota.consume(account.id, period.id, fields.count, limit, period.end + usageRetention, operation, day)
      } catch (error) {
        logFailure('ERR_UV_STORE', 'quota update failed', error)
        if (operation !== undefined) compensation.add(open.quota, operation, account.id, period.id, fields.count, day)
        return void unavailable(res)
      }
      lastUsed.set(`${account.id}\u0000${period.id}`, consumed.used)
      if (ranUnderNewerRecords(entry, consumed) && attempt < 3) {
        try {
          if (consumed.granted) await open.quota.refund(account.id, period.id, fields.count, day)
          const fresh = await readKey(open, admitted.hash, time, entry)
          if (!isKeyActive(fresh.record, fresh.account, time)) return void sendDetail(res, 401, details.invalidToken)
          entry = fresh as ActiveEntry
          limit = limitOf(entry.account)
        } catch (error) {
          logFailure('ERR_UV_STORE', 'key lookup failed', error)
          return void unavailable(res)
        }
        continue
      }
      if (!consumed.granted) return void sendDetail(res, 402, details.upgrade)
      metrics.unitsConsumed += fields.count
      return { account, limit, used: consumed.used, operation }
    }
  }

  /** Gives back the units of a consume whose answer never reached the client. */
  function giveBack(open: Stores, charged: Charged, fields: PresentFields, period: Period, time: number): void {
    const { account, operation } = charged
    const day = dayOf(time)
    metrics.unitsRefunded += fields.count
    lastUsed.delete(`${account.id}\u0000${period.id}`)
    // A named consume is undone through cancel, retried until the store answers; others by a refund.
    if (operation !== undefined) return compensation.add(open.quota, operation, account.id, period.id, fields.count, day)
    open.quota.refund(account.id, period.id, fields.count, day).catch((error: unknown) => {
      logFailure('ERR_UV_REFUND', `could not give back ${fields.count} units of account ${account.id}`, error)
    })
  }

  async function verificationHandler(req: Request, res: Response): Promise<void> {
    metrics.inFlight++
    // The client may leave at any point; from then on nothing may be charged for it. A charge
    // whose 200 was not handed to the kernel in full when the response closed is given back.
    let clientLeft = false
    let charged: { open: Stores; charged: Charged; fields: PresentFields; period: Period; time: number } | undefined
    res.once('close', () => {
      metrics.inFlight--
      if (res.writableFinished) return
      clientLeft = true
      if (charged !== undefined) giveBack(charged.open, charged.charged, charged.fields, charged.period, charged.time)
    })
    const checked = validateRequest(req.headers['x-api-token'] as string | undefined, req.body, req.headers['content-type'])
    if (!checked.ok) return sendIssues(res, checked.issues)
    if (overloaded()) return unavailable(res)

    let open = stores.current()
    if (open === undefined) {
      try {
        open = await stores.get()
      } catch (error) {
        logFailure('ERR_UV_STORE', 'the store is not open', error)
        return unavailable(res)
      }
    }
    const { body, token } = checked
    const fields = presentFields(body)
    const time = now()
    const { period, reset } = periodAt(time)
    const admitted = await admit(res, open, token, body, fields, period, time)
    if (admitted === undefined) return

    // Verify first, charge last: a failed verification or a client that left costs nothing.
    let result: VerifyResult
    try {
      result = await verifier.verifyFields(fields)
    } catch (error) {
      logFailure('ERR_UV_VERIFIER', 'verification failed', error)
      return unavailable(res)
    }
    if (clientLeft) return
    const granted = await charge(res, open, admitted, fields, period, time)
    if (granted === undefined) return
    if (clientLeft) return giveBack(open, granted, fields, period, time)
    charged = { open, charged: granted, fields, period, time }
    const { limit, used } = granted
    const text = JSON.stringify({
      status: 'success',
      received_data: { model: body.model, email: body.email ?? null, firstname: body.firstname ?? null, lastname: body.lastname ?? null },
      ...result
    })
    sendJson(res, 200, text, {
      'X-Quota-Limit': String(limit),
      'X-Quota-Remaining': String(Math.max(0, limit - used)),
      'X-Quota-Reset': reset
    })
  }

  /** Counts every answer of the API (whatever answered it: 413, 405, 429 too) once it closed. */
  function countAnswer(res: Response): void {
    res.once('close', () => {
      if (res.writableFinished) metrics.responses[res.statusCode] = (metrics.responses[res.statusCode] ?? 0) + 1
      else metrics.aborted++
    })
  }

  /**
   * A chunked body declares no length, and body-parser reads (and discards) all of it before its
   * 413: a client could stream gigabytes at one core's cost. Its bytes are counted as they come,
   * and past the limit the 413 goes out at once and the connection is closed.
   */
  function limitUndeclaredBody(req: Request, res: Response): void {
    let received = 0
    const count = (chunk: Buffer): void => {
      received += chunk.length
      if (received <= config.bodyLimit) return
      req.off('data', count)
      // The rest is not read: the socket stops reading now and goes in a second. Not at once
      // (nor with Connection: close, after which Node destroys the socket as soon as the answer
      // is out): a reset reaching a client that is still sending can discard the answer before
      // the client has read it.
      req.socket.pause()
      setTimeout(() => req.socket.destroy(), 1000).unref()
      sendDetail(res, 413, details.tooLarge)
    }
    req.on('data', count)
  }

  /**
   * A pipelined request queued behind answers not yet written has no socket until its turn (Node
   * assigns it when the answer before it finishes): it is worked on only then. A queued answer to
   * a connection that closed is dropped without a 'close' event, so a unit charged for it could
   * never be given back; and one request per connection at a time keeps a client that pipelines
   * a thousand requests from running them all at once.
   */
  function waitForTurn(req: Request, res: Response, go: () => void): void {
    const turn = (): void => {
      req.off('close', gone)
      go()
    }
    // The request closes early only when its connection went (a host's body parser may have read
    // it to the end, which closes it too: then its turn still comes, or it never does).
    const gone = (): void => {
      if (!req.socket.destroyed) return
      res.off('socket', turn)
      metrics.aborted++
    }
    res.once('socket', turn)
    req.once('close', gone)
  }

  const router = express.Router()
  const readBody = express.text({ type: () => true, limit: config.bodyLimit, defaultCharset: 'utf-8' })
  // Rate limits come first: their point is to refuse before any parsing or store work.
  // body-parser reads and discards a too-large body before it answers, and a host app's parser may
  // have read it already: refuse on the declared length and close instead.
  // A body parser the host mounted before us (express.json() app-wide) has read the stream already:
  // body-parser then skips, and req.body holds its result. When it failed, its error reaches us
  // through hostBodyErrors below; a JSON syntax error becomes the raw text it could not parse, so
  // the 422 is exactly the one we would have given, anything else goes to verificationErrors.
  const hostErrors = new WeakMap<Request, BodyParserError>()
  let mountedOnApp = false
  let warnedHostParser = false
  // One route handler (size check, body, verification) rather than three: each step Express
  // dispatches costs about as much as a name prediction.
  function verificationRoute(req: Request, res: Response, next: NextFunction): void {
    if (res.socket === null) return waitForTurn(req, res, () => verificationRoute(req, res, next))
    if (Number(req.headers['content-length']) > config.bodyLimit) {
      res.setHeader('Connection', 'close')
      return sendDetail(res, 413, details.tooLarge)
    }
    if (req.headers['content-length'] === undefined && req.headers['transfer-encoding'] !== undefined && !req.complete)
      limitUndeclaredBody(req, res)
    const verify = (error?: unknown): void => {
      // Answered already (a chunked body past the limit): the reader's error is the aborted rest.
      if (res.headersSent) return
      if (error !== undefined) return next(error)
      verificationHandler(req, res).catch((failure: unknown) => answerError(failure, res, next))
    }
    const hostError = hostErrors.get(req)
    if (hostError === undefined) {
      if (!mountedOnApp && !warnedHostParser && req.body !== undefined) {
        warnedHostParser = true
        logger.warn(
          "user-verification: a body parser ran before the middleware, which is mounted on a Router, so a malformed or oversized body would get that parser's error page. Mount it with app.use(path, middleware) on the application, or mount the parser after it.",
          { code: 'WRN_UV_HOST_PARSER' }
        )
      }
      // express.raw() leaves the bytes: read them as the text we would have read.
      if (Buffer.isBuffer(req.body)) req.body = req.body.toString('utf8')
      return readBody(req, res, verify)
    }
    if (hostError.type === 'entity.parse.failed' && typeof hostError.body === 'string') {
      req.body = hostError.body
      return verify()
    }
    next(hostError)
  }
  router.post('/', ...limiters.handlers, verificationRoute)
  router.all('/', function methodNotAllowed(_req, res) {
    res.set('Allow', 'POST')
    sendDetail(res, 405, details.methodNotAllowed)
  })
  router.use(function notFound(_req, res) {
    sendDetail(res, 404, details.notFound)
  })
  router.use(verificationErrors)
  function verificationErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
    answerError(error, res, next)
  }
  function answerError(error: unknown, res: Response, next: NextFunction): void {
    if (res.headersSent) return next(error)
    // Errors of the body reader (too large, bad encoding, corrupt compression, aborted) carry a 4xx status.
    const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown }
    if (type === 'entity.too.large') return sendDetail(res, 413, details.tooLarge)
    if (type === 'encoding.unsupported' || type === 'charset.unsupported') return sendDetail(res, 400, details.badEncoding)
    if (typeof status === 'number' && status >= 400 && status < 500) return sendDetail(res, 400, details.badBody)
    logFailure('ERR_UV_VERIFIER', 'unexpected error', error)
    unavailable(res)
  }

  // A sub-application rather than the bare router: Express tells an application where it was
  // mounted ('mount'), so we can add the error handler that must come after the host's parsers.
  const api = express()
  api.disable('x-powered-by')
  api.use(router)
  // Under an Express app the request already has Express's request and response prototypes (the
  // host's, whose settings a mounted app inherits anyway). Switching them to ours and back, as a
  // sub-application does, costs about as much per request as a name prediction, and nothing here
  // needs ours. Outside Express (a bare node:http server) the application sets them up as usual.
  const application = api as unknown as { handle(req: Request, res: Response, next?: NextFunction): void }
  const handleAsApplication = application.handle.bind(api)
  // The API's own request (POST to where it is mounted, no rate limits to run first) goes straight
  // to its handler: the router's matching and dispatch would cost as much again.
  const direct = limiters.handlers.length === 0
  application.handle = (req, res, next) => {
    countAnswer(res)
    if (req.app === undefined || next === undefined) return handleAsApplication(req, res, next)
    if (direct && req.method === 'POST' && (req.url === '/' || req.url.startsWith('/?')))
      return verificationRoute(req, res, (error?: unknown) => verificationErrors(error, req, res, next))
    router(req, res, next)
  }
  api.on('mount', (parent: Application) => {
    mountedOnApp = true
    parent.use(api.mountpath, function hostBodyErrors(error: unknown, req: Request, res: Response, next: NextFunction) {
      if (!isBodyParserError(error) || res.headersSent) return next(error)
      countAnswer(res)
      hostErrors.set(req, error)
      router(req, res, next)
    })
  })

  return Object.assign(api as unknown as RequestHandler, {
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

/** What body-parser (express.json(), express.text(), …) passes to `next` when it cannot read a body. */
interface BodyParserError {
  type: string
  status: number
  body?: unknown
}

function isBodyParserError(error: unknown): error is BodyParserError {
  const e = error as Partial<BodyParserError> | null
  return (
    e !== null && typeof e === 'object' && typeof e.type === 'string' && typeof e.status === 'number' && e.status >= 400 && e.status < 500
  )
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
      config.logger.error(`user-verification: the store could not be opened: ${withoutPrefix(error)}`, {
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
