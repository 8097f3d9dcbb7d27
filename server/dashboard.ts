// The usage dashboard: a self-contained page at /dashboard and the JSON usage of one key behind it.
import { readFileSync } from 'node:fs'
import express, { type Request, type Response } from 'express'
import { defaultPlans, hashKey, isKeyActive, periodOf, type Stores, type UserVerificationMiddleware } from '../lib/index.js'
import { usageReport } from './usage-report.js'

/** Options of {@link createDashboard}. */
export interface DashboardOptions {
  /** Units per month of each plan; must be the middleware's `plans`. Defaults to `defaultPlans`. */
  plans?: Record<string, number>
  /** Clock in ms since the epoch, for the current period. Defaults to `Date.now`. */
  now?: () => number
}

/** A store that does not answer within this time is treated as unavailable. */
const storeTimeout = 5000
/** Seconds a client should wait after a 503. */
const retryAfter = '5'

/**
 * The page's own policy, stricter than helmet's default: no inline code at all, only its own files,
 * only same-origin fetches, no framing. `upgrade-insecure-requests` is left out on purpose: on a
 * plain-HTTP LAN address it would rewrite the page's own script URL to https and break the page.
 */
const pagePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

const assets = {
  page: { file: 'dashboard.html', type: 'text/html; charset=utf-8' },
  script: { file: 'dashboard.js', type: 'text/javascript; charset=utf-8' },
  style: { file: 'dashboard.css', type: 'text/css; charset=utf-8' }
} as const

/** Read once at construction: three small files, and a missing one fails at start-up, not per request. */
function loadAssets(): Record<keyof typeof assets, Buffer> {
  const load = (file: string) => readFileSync(new URL(`./public/${file}`, import.meta.url))
  return { page: load(assets.page.file), script: load(assets.script.file), style: load(assets.style.file) }
}

function sendDetail(res: Response, status: number, detail: string): void {
  res.set('Cache-Control', 'no-store').status(status).json({ detail })
}

function unavailable(res: Response): void {
  res.set('Retry-After', retryAfter)
  sendDetail(res, 503, 'Tool service unavailable')
}

/** Rejects when `promise` takes longer than {@link storeTimeout}. */
async function bounded<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('store timeout')), storeTimeout)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** The open stores, waiting for the middleware's first open if needed; `undefined` when they cannot be opened. */
async function openStores(middleware: UserVerificationMiddleware): Promise<Stores | undefined> {
  const open = middleware.stores()
  if (open) return open
  try {
    await bounded(middleware.ready)
  } catch {
    return undefined
  }
  return middleware.stores()
}

/**
 * The usage dashboard as an Express router, to mount at the app's root:
 * `GET /dashboard` (the page, its script and style beside it) and `GET /dashboard/api/usage`,
 * which reads the key from `X-API-Token` and answers with a usage report (server/usage-report.ts), 401 for a
 * missing, unknown or revoked key, or 503 with `Retry-After` when the store fails.
 * Nothing is logged here: the key never leaves the request.
 */
export function createDashboard(middleware: UserVerificationMiddleware, options: DashboardOptions = {}): express.Router {
  const plans = options.plans ?? defaultPlans
  const now = options.now ?? Date.now
  const files = loadAssets()
  const router = express.Router({ strict: true })

  function sendAsset(name: keyof typeof assets) {
    return (_req: Request, res: Response) => {
      if (name === 'page') res.set('Content-Security-Policy', pagePolicy)
      // The page is tiny; no-cache keeps an upgraded server from pairing a new page with an old script.
      res.set({ 'Content-Type': assets[name].type, 'Cache-Control': 'no-cache' }).send(files[name])
    }
  }

  router.get('/dashboard', sendAsset('page'))
  // Relative asset URLs in the page only resolve from `/dashboard`, so send `/dashboard/` there.
  router.get('/dashboard/', (_req, res) => {
    res.status(301).location('../dashboard').json({ detail: 'Moved Permanently' })
  })
  router.get('/dashboard/dashboard.js', sendAsset('script'))
  router.get('/dashboard/dashboard.css', sendAsset('style'))

  router.get('/dashboard/api/usage', async (req, res) => {
    // Same rule as the API: the header as Node parsed it (surrounding whitespace already gone).
    const token = req.get('x-api-token') ?? ''
    if (token === '') return sendDetail(res, 401, 'Invalid API token')
    const stores = await openStores(middleware)
    if (!stores) return unavailable(res)
    try {
      const key = await bounded(stores.keys.getByHash(hashKey(token)))
      const account = key === undefined ? undefined : await bounded(stores.keys.getAccount(key.accountId))
      const time = now()
      if (key === undefined || account === undefined || !isKeyActive(key, account, time)) return sendDetail(res, 401, 'Invalid API token')
      const period = periodOf(time)
      const used = await bounded(stores.quota.get(account.id, period.id))
      res.set('Cache-Control', 'no-store').json({ id: key.id, ...usageReport(account, period, used, plans) })
    } catch {
      unavailable(res)
    }
  })

  for (const path of ['/dashboard', '/dashboard/api/usage', '/dashboard/dashboard.js', '/dashboard/dashboard.css']) {
    router.all(path, (_req, res) => {
      res.set('Allow', 'GET, HEAD')
      sendDetail(res, 405, 'Method Not Allowed')
    })
  }
  return router
}
