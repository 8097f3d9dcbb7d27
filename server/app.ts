// The standalone server's Express app: the API at /api/v1, health, readiness, metrics, JSON errors.
import express, { type NextFunction, type Request, type Response } from 'express'
import helmet from 'helmet'
import type { Logger, UserVerificationMiddleware } from '../lib/index.js'
import { createDashboard, type DashboardOptions } from './dashboard.js'
import { createServerMetrics, type ServerMetrics } from './metrics.js'
import { createDocsRouter } from './openapi.js'

/** Where the API is mounted on the standalone server. */
export const apiPath = '/api/v1'

/** Paths logged as they are; any other path is logged as `(other)`, since a path can carry an email or a name. */
const loggedPaths = new Set([
  '/',
  '/healthz',
  '/readyz',
  '/metrics',
  '/openapi.json',
  '/docs',
  '/docs/swagger-ui.css',
  '/docs/swagger-ui-bundle.js',
  '/docs/docs.js',
  '/docs/docs.css',
  apiPath,
  `${apiPath}/`,
  '/dashboard',
  '/dashboard/'
])

/** Dashboard paths, logged with any id replaced by `:id` (ids are public, but one shape per route keeps the log readable). */
const dashboardPath =
  /^\/dashboard\/(?:[a-z]+\.(?:js|css)|vendor\/uplot\.(?:js|css)|api\/(?:[a-z]+|admin\/[a-z]+)(?:\/(?:key|acct)_[0-9a-f]+(?:\/[a-z]+)?)?)$/

/** The path as the request log shows it: a known route, or `(other)`, since a path can carry an email or a name. */
export function loggedPath(path: string): string {
  if (loggedPaths.has(path)) return path
  if (dashboardPath.test(path)) return path.replace(/(key|acct)_[0-9a-f]+/, ':id')
  return '(other)'
}

/**
 * Builds the app around a ready middleware; `logger` gets one line per request, without PII.
 * `dashboard` configures the dashboard at /dashboard (admin token, sign-up, upgrade offer).
 * `metrics` records the API's requests and answers `/metrics`, unless `serveMetrics` is false
 * (`--metrics-port` serves them on a listener of their own).
 */
export function createApp(
  middleware: UserVerificationMiddleware,
  logger: Required<Logger>,
  dashboard: DashboardOptions = {},
  metrics: ServerMetrics = createServerMetrics(middleware),
  serveMetrics = true
): express.Express {
  const app = express()
  app.disable('x-powered-by')
  app.set('etag', false)
  app.use(helmet())
  app.use(function requestLog(req: Request, res: Response, next: NextFunction) {
    const start = process.hrtime.bigint()
    res.once('finish', () => {
      // Known paths only: a query string or an unknown path could carry personal data.
      const path = req.originalUrl.split('?')[0] ?? ''
      const ms = Number(process.hrtime.bigint() - start) / 1e6
      if (path === apiPath || path === `${apiPath}/`) metrics.observeRequest(res.statusCode, ms / 1000)
      logger.info('request', { method: req.method, path: loggedPath(path), status: res.statusCode, ms })
    })
    next()
  })
  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' })
  })
  app.get('/readyz', async (_req, res) => {
    const checks = await readiness(middleware)
    res.status(checks.ready ? 200 : 503).json(checks)
  })
  if (serveMetrics) app.get('/metrics', metricsHandler(metrics, logger))
  app.use(apiPath, middleware)
  app.use(createDocsRouter())
  app.use(createDashboard(middleware, { logger, ...dashboard }))
  app.use(function notFound(_req: Request, res: Response) {
    res.status(404).json({ detail: 'Not Found' })
  })
  app.use(function serverErrors(error: unknown, _req: Request, res: Response, next: NextFunction) {
    if (res.headersSent) return next(error)
    const status = (error as { status?: unknown } | null)?.status
    if (typeof status === 'number' && status >= 400 && status < 500) return void res.status(status).json({ detail: 'Bad Request' })
    logger.error('unexpected error', { error: error instanceof Error ? error.name : typeof error })
    res.set('Retry-After', '5').status(503).json({ detail: 'Tool service unavailable' })
  })
  return app
}

/** Answers a scrape; 503 when the metrics cannot be gathered (a worker's primary did not answer). */
export function metricsHandler(metrics: ServerMetrics, logger: Required<Logger>) {
  return async (_req: Request, res: Response) => {
    try {
      res.type(metrics.contentType).send(await metrics.render())
    } catch (error) {
      logger.error('metrics unavailable', { error: error instanceof Error ? error.message : String(error) })
      res.set('Retry-After', '5').status(503).json({ detail: 'Tool service unavailable' })
    }
  }
}

/** Store reachable (a real round trip, bounded to 2 s) and name model loaded. */
async function readiness(middleware: UserVerificationMiddleware): Promise<{ ready: boolean; store: boolean; model: boolean }> {
  const stores = middleware.stores()
  let store = false
  if (stores) {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), 2000)
    })
    try {
      await Promise.race([stores.quota.get('readyz', 'readyz'), timeout])
      store = true
    } catch {
      store = false
    } finally {
      clearTimeout(timer)
    }
  }
  const model = middleware.modelLoaded
  return { ready: store && model, store, model }
}
