// Dashboard sign-in: an account's key in X-API-Token, the operator's admin token as a bearer token, and the rate limits around both.
import { createHash, timingSafeEqual } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { NextFunction, Request, RequestHandler, Response } from 'express'
import { rateLimit } from 'express-rate-limit'
import {
  hashKey,
  isKeyActive,
  sharedCounterStore,
  type Account,
  type KeyRecord,
  type Logger,
  type Stores,
  type UserVerificationMiddleware
} from '../lib/index.js'
import { bounded, sendDetail, storesOf, unavailable } from './dashboard-http.js'

/** Shortest admin token accepted: a guessable token would open every account. */
export const minAdminTokenLength = 16

/**
 * The admin token from `--admin-token-file` (its first line) or the `UV_ADMIN_TOKEN` variable;
 * `undefined` when neither is set (then there is no admin view). Throws a message that says the
 * fix when the file cannot be read or the token is too short. The token itself is never printed.
 */
export function loadAdminToken(file: string | undefined, env: NodeJS.ProcessEnv = process.env): string | undefined {
  let token: string | undefined
  if (file !== undefined) {
    let content: string
    try {
      content = readFileSync(file, 'utf8')
    } catch (error) {
      throw new Error(`cannot read --admin-token-file ${file}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`)
    }
    token = content.split(/\r?\n/, 1)[0]?.trim()
  } else if (env.UV_ADMIN_TOKEN !== undefined && env.UV_ADMIN_TOKEN !== '') {
    token = env.UV_ADMIN_TOKEN.trim()
  } else {
    return undefined
  }
  if (token === undefined || token.length < minAdminTokenLength) {
    throw new Error(
      `the admin token must be at least ${minAdminTokenLength} characters (got ${token?.length ?? 0}); make one with: openssl rand -base64 32`
    )
  }
  return token
}

/**
 * Compares a presented admin token with the configured one in constant time: both are hashed
 * first, so neither their length nor the position of the first difference shows in the timing.
 */
export function adminTokenMatches(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented, 'utf8').digest()
  const b = createHash('sha256').update(expected, 'utf8').digest()
  return timingSafeEqual(a, b)
}

/** What a signed-in account request carries in `res.locals`. */
export interface SignedIn {
  key: KeyRecord
  account: Account
}

/** Reads the signed-in key and account that {@link requireKey} put on the response. */
export function signedIn(res: Response): SignedIn {
  return res.locals.signedIn as SignedIn
}

/** A key and its account as the store holds them now (one round trip where the store can read both together). */
export async function readKey(stores: Stores, hash: string): Promise<{ record: KeyRecord | undefined; account: Account | undefined }> {
  return stores.keys.getKeyWithAccount
    ? bounded(stores.keys.getKeyWithAccount(hash))
    : bounded(
        stores.keys.getByHash(hash).then(async (record) => ({
          record,
          account: record === undefined ? undefined : await stores.keys.getAccount(record.accountId)
        }))
      )
}

/** Lets the request through with `res.locals.signedIn` when `X-API-Token` is an active key; 401 otherwise. */
export function requireKey(middleware: UserVerificationMiddleware, now: () => number): RequestHandler {
  return async function keySignIn(req: Request, res: Response, next: NextFunction) {
    // Same rule as the API: the header as Node parsed it (surrounding whitespace already gone).
    const token = req.get('x-api-token') ?? ''
    if (token === '') return sendDetail(res, 401, 'Invalid API token')
    const stores = await storesOf(middleware)
    if (!stores) return unavailable(res)
    let found: SignedIn | undefined
    try {
      const { record: key, account } = await readKey(stores, hashKey(token))
      if (key !== undefined && account !== undefined && isKeyActive(key, account, now())) found = { key, account }
    } catch {
      return unavailable(res)
    }
    if (found === undefined) return sendDetail(res, 401, 'Invalid API token')
    res.locals.signedIn = found
    next()
  }
}

/** Lets the request through when `Authorization: Bearer <token>` carries the admin token; 401 otherwise. */
export function requireAdmin(token: string): RequestHandler {
  return function adminSignIn(req: Request, res: Response, next: NextFunction) {
    const header = req.get('authorization') ?? ''
    const presented = /^Bearer (.+)$/i.exec(header)?.[1]?.trim()
    if (presented === undefined || !adminTokenMatches(presented, token)) {
      res.set('WWW-Authenticate', 'Bearer')
      return sendDetail(res, 401, 'Invalid admin token')
    }
    next()
  }
}

/** Limits of the dashboard's endpoints, per client address (`req.ip`). */
export interface DashboardRateLimit {
  /** Requests per second to the dashboard's API, like the API's own `--rate-limit-ip`. Defaults to `20`. */
  perIp: number
  /** Failed sign-ins (401) per 15 minutes; past it every sign-in answers 429 until the window ends. Defaults to `20`. */
  failedSignIns: number
  /** Sign-up attempts per hour. Defaults to `5`. */
  signups: number
}

export const defaultDashboardRateLimit: DashboardRateLimit = { perIp: 20, failedSignIns: 20, signups: 5 }

/**
 * The three limiters. Their counters live where the API's do: in the stores' Redis when the store
 * is Redis (shared by every instance), otherwise in this process.
 */
export function createDashboardLimiters(limits: DashboardRateLimit, logger: Logger, stores: () => Promise<Stores | undefined>) {
  const make = (name: string, windowMs: number, limit: number, detail: string, extra: Parameters<typeof rateLimit>[0] = {}) =>
    rateLimit({
      windowMs,
      limit,
      store: sharedCounterStore(name, stores),
      legacyHeaders: false,
      standardHeaders: false,
      logger: {
        warn: (error: unknown) => logger.warn(`user-verification: dashboard rate limit: ${String((error as Error)?.message ?? error)}`),
        error: (error: unknown) => logger.error(`user-verification: dashboard rate limit: ${String((error as Error)?.message ?? error)}`)
      },
      handler(req: Request, res: Response) {
        const reset = (req as unknown as { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime?.getTime() ?? Date.now() + windowMs
        res.set('Retry-After', String(Math.max(1, Math.ceil((reset - Date.now()) / 1000))))
        sendDetail(res, 429, detail)
      },
      // A client gone before the limiter ran has no address: nothing to count (nor an error to log).
      skip: (req: Request) => req.ip === undefined,
      ...extra
    })
  return {
    perIp: make('dash-ip', 1000, limits.perIp, 'Too Many Requests'),
    // Counts only answers that refused the credential, so a signed-in user never runs into it.
    failedSignIns: make('dash-signin', 15 * 60_000, limits.failedSignIns, 'Too many failed sign-ins; try again later', {
      skipSuccessfulRequests: true,
      requestWasSuccessful: (_req: Request, res: Response) => res.statusCode !== 401
    }),
    signups: make('dash-signup', 3600_000, limits.signups, 'Too many sign-ups from this address; try again later')
  }
}
