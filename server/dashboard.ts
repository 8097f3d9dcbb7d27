// The dashboard as an Express router: the page, its scripts and charting library, and the account, admin and sign-up APIs behind it.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import express, { type Request, type Response } from 'express'
import {
  createVerifier,
  defaultPlans,
  planTable,
  periodOf,
  type Logger,
  type UserVerificationMiddleware,
  type Verifier,
  type VerifierOptions
} from '../lib/index.js'
import { accountRoutes } from './dashboard-account.js'
import { adminRoutes } from './dashboard-admin.js'
import { createDashboardLimiters, defaultDashboardRateLimit, requireKey, signedIn, type DashboardRateLimit } from './dashboard-auth.js'
import { bounded, dashboardErrors, sendDetail, sendJson, storesOf, unavailable, type AuditEvent, type AuditLog } from './dashboard-http.js'
import { signupRoutes } from './dashboard-signup.js'
import { usageReport } from './usage-report.js'
import { optionError } from '../lib/errors.js'

export type { AuditEvent, AuditLog } from './dashboard-http.js'
export type { DashboardRateLimit } from './dashboard-auth.js'
export { loadAdminToken } from './dashboard-auth.js'

/** Options of {@link createDashboard}; every field is optional. */
export interface DashboardOptions {
  /** Units per month of each plan; must be the middleware's `plans`. Defaults to `defaultPlans`. */
  plans?: Record<string, number>
  /** Clock in ms since the epoch, for the current period and key expiry; must be the middleware's. Defaults to `Date.now`. */
  now?: () => number
  /**
   * The operator's admin token (at least 16 characters). Without one there is no admin view: its
   * API answers 404 and the page does not offer it. Defaults to none.
   */
  adminToken?: string
  /** Self-serve sign-up: a name and an email become an account on `signupPlan` with its first key. Defaults to `false`. */
  signup?: boolean
  /** The plan of accounts made by sign-up. Defaults to `free`. */
  signupPlan?: string
  /**
   * Where to upgrade, shown past 80% of the plan and when it is used up: an `https:`, `http:` or
   * `mailto:` URL becomes a link, anything else is shown as text. Defaults to none.
   */
  upgrade?: string
  /** Options of the verifier that screens sign-ups (DNS servers and timeouts). Defaults to the library's. */
  verifier?: VerifierOptions
  /** Where warnings go. Defaults to `console`. */
  logger?: Logger
  /** Receives one event per admin or key action. Defaults to `logger.info('audit', event)`. */
  audit?: AuditLog
  /** Rate limits per client address. Defaults to {@link defaultDashboardRateLimit}. */
  rateLimit?: Partial<DashboardRateLimit>
  /** The API's URL as the page should call it, relative to the dashboard's parent path. Defaults to `api/v1`. */
  apiPath?: string
}

/** The router {@link createDashboard} returns: mount it at the app's root. */
export interface DashboardRouter extends express.Router {
  /** Releases the sign-up verifier's timers. */
  close(): void
}

/**
 * The page's own policy, stricter than helmet's default: no inline code at all, only its own files,
 * only same-origin fetches, no framing. `upgrade-insecure-requests` is left out on purpose: on a
 * plain-HTTP LAN address it would rewrite the page's own script URL to https and break the page.
 */
export const pagePolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

const require = createRequire(import.meta.url)

/** Every file the page loads, by its URL under /dashboard/. The charting library comes from the installed uplot package. */
const assets: Record<string, { path: URL | string; type: string }> = {
  'dashboard.js': { path: new URL('./public/dashboard.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'common.js': { path: new URL('./public/common.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'account.js': { path: new URL('./public/account.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'admin.js': { path: new URL('./public/admin.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'signup.js': { path: new URL('./public/signup.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'dashboard.css': { path: new URL('./public/dashboard.css', import.meta.url), type: 'text/css; charset=utf-8' },
  'vendor/uplot.js': { path: require.resolve('uplot/dist/uPlot.iife.min.js'), type: 'text/javascript; charset=utf-8' },
  'vendor/uplot.css': { path: require.resolve('uplot/dist/uPlot.min.css'), type: 'text/css; charset=utf-8' }
}

/** The upgrade offer as the page shows it: a link for a web or mail URL, text otherwise. */
function upgradeOffer(upgrade: string | undefined): { text: string; url: string | null } | null {
  if (upgrade === undefined || upgrade.trim() === '') return null
  const value = upgrade.trim()
  try {
    const url = new URL(value)
    if (url.protocol === 'https:' || url.protocol === 'http:' || url.protocol === 'mailto:')
      return { text: 'Upgrade your plan', url: url.href }
  } catch {}
  return { text: value, url: null }
}

/**
 * The dashboard as an Express router, to mount at the app's root next to the middleware:
 *
 * ```ts
 * app.use('/api/v1', api)
 * app.use(createDashboard(api, { adminToken: process.env.UV_ADMIN_TOKEN }))
 * ```
 *
 * `GET /dashboard` is the page (account view, plans, and the sign-up and admin views when
 * enabled); its API lives under `/dashboard/api/`. Keys travel in `X-API-Token` and the admin
 * token in `Authorization: Bearer`, never in cookies or URLs. Nothing here logs a key, an email or
 * a name: actions go to the audit log by id.
 */
export function createDashboard(middleware: UserVerificationMiddleware, options: DashboardOptions = {}): DashboardRouter {
  const plans = planTable(options.plans ?? defaultPlans)
  const now = options.now ?? Date.now
  const logger = options.logger ?? console
  const audit: AuditLog =
    options.audit ??
    ((event: AuditEvent) => (logger.info ?? console.log).call(logger, 'audit', event as unknown as Record<string, unknown>))
  const signupPlan = options.signupPlan ?? 'free'
  if (options.signup && !(signupPlan in plans)) {
    throw optionError('range', '', `the sign-up plan "${signupPlan}" is not one of the plans (${Object.keys(plans).join(', ')}).`)
  }
  if (options.adminToken !== undefined && options.adminToken.length < 16) {
    throw optionError(
      'range',
      'adminToken',
      'at least 16 characters',
      `${options.adminToken.length} characters`,
      'Make one with: openssl rand -base64 32'
    )
  }
  const limits = { ...defaultDashboardRateLimit, ...options.rateLimit }
  const limiters = createDashboardLimiters(limits, logger, () => storesOf(middleware))
  const upgrade = upgradeOffer(options.upgrade)
  const verifier: Verifier | undefined = options.signup ? createVerifier(options.verifier) : undefined
  // Read once at construction: a missing file fails at start-up, not per request.
  const page = readFileSync(new URL('./public/dashboard.html', import.meta.url))
  const files = new Map(Object.entries(assets).map(([name, asset]) => [name, { body: readFileSync(asset.path), type: asset.type }]))

  const router = express.Router({ strict: true })
  router.get('/dashboard', (_req: Request, res: Response) => {
    res.set({ 'Content-Security-Policy': pagePolicy, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }).send(page)
  })
  // Relative asset URLs in the page only resolve from `/dashboard`, so send `/dashboard/` there.
  // As JSON with a detail, like every other answer of the server (res.redirect would write text).
  router.get('/dashboard/', (_req, res) => {
    res.status(301).location('../dashboard').json({ detail: 'Moved Permanently' })
  })
  for (const [name, file] of files) {
    // no-cache keeps an upgraded server from pairing a new page with an old script.
    router.get(
      `/dashboard/${name}`,
      (_req, res) => void res.set({ 'Content-Type': file.type, 'Cache-Control': 'no-cache' }).send(file.body)
    )
  }

  const api = express.Router({ strict: true })
  api.use(limiters.perIp)
  api.get('/config', (_req, res) => {
    sendJson(res, 200, {
      plans: Object.entries(plans).map(([name, limit]) => ({ name, limit })),
      signup: verifier !== undefined,
      admin: options.adminToken !== undefined,
      upgrade,
      api: options.apiPath ?? 'api/v1'
    })
  })
  // The usage of the signed-in key's account this month (kept for scripts written against 0.1.0's dashboard).
  api.get('/usage', limiters.failedSignIns, requireKey(middleware, now), async (_req, res) => {
    const { key, account } = signedIn(res)
    const stores = await storesOf(middleware)
    if (!stores) return unavailable(res)
    const period = periodOf(now())
    const used = await bounded(stores.quota.get(account.id, period.id))
    sendJson(res, 200, { id: key.id, ...usageReport(account, period, used, plans) })
  })
  const account = accountRoutes(middleware, { plans, now, audit })
  api.use(['/account', '/keys'], limiters.failedSignIns)
  api.use(account)
  if (verifier !== undefined) api.use(signupRoutes(middleware, { verifier, plan: signupPlan, now, audit, limiter: limiters.signups }))
  if (options.adminToken !== undefined) {
    api.use('/admin', limiters.failedSignIns, adminRoutes(middleware, { token: options.adminToken, plans, now, audit }))
  }
  for (const path of ['/config', '/usage', '/account']) {
    api.all(path, (_req, res) => {
      res.set('Allow', 'GET, HEAD')
      sendDetail(res, 405, 'Method Not Allowed')
    })
  }
  api.use((_req, res) => sendDetail(res, 404, 'Not Found'))
  api.use(dashboardErrors)
  router.use('/dashboard/api', api)

  for (const path of ['/dashboard', ...[...files.keys()].map((name) => `/dashboard/${name}`)]) {
    router.all(path, (_req, res) => {
      res.set('Allow', 'GET, HEAD')
      sendDetail(res, 405, 'Method Not Allowed')
    })
  }
  return Object.assign(router, { close: () => verifier?.close() }) as DashboardRouter
}
