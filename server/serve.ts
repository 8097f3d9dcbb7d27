// `user-verification serve`: the API on a store, with a demo key, graceful shutdown and workers.
import cluster from 'node:cluster'
import { readFileSync } from 'node:fs'
import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { issueKey, openStores, userVerification, type EmailVerifierOptions, type IssuedKey, type Stores } from '../lib/index.js'
import { apiPath, createApp } from './app.js'
import {
  answerConnect,
  answerOnSocket,
  capConnectionsPerAddress,
  defaultPerAddress,
  limitPipelining,
  maxQueuedPerConnection
} from './connections.js'
import { throttledWarning } from '../lib/errors.js'
import { loadAdminToken } from './dashboard.js'
import { createJsonLogger } from './logger.js'
import { createServerMetrics, serveClusterMetrics } from './metrics.js'

/** Settings of {@link serve}, as the CLI and its environment variables give them. */
export interface ServeSettings extends EmailVerifierOptions {
  port: number
  host: string
  store: string
  demoKey: boolean
  workers: number
  /** Units per calendar month of each plan (`--plans`, `UV_PLANS`). Defaults to the package's plans. */
  plans?: Record<string, number> | undefined
  bodyLimit?: number
  maxInFlight?: number
  maxEventLoopDelay?: number
  rateLimit?: { perKey?: number | undefined; perIp?: number | undefined }
  /** Leave out the per-request log lines. */
  quiet: boolean
  /** Time a client has to send the request headers, in ms. */
  headersTimeout: number
  /** Time a client has to send the whole request, in ms. */
  requestTimeout: number
  /** File whose first line is the dashboard's admin token; without it `UV_ADMIN_TOKEN`, without both no admin view. */
  adminTokenFile?: string | undefined
  /** Self-serve sign-up on the dashboard. */
  signup?: boolean
  /** Where to upgrade (a URL becomes a link, other text is shown as is), shown past 80% of a plan. */
  upgrade?: string | undefined
  /** Open connections per process above which new ones are dropped; `undefined` derives it from the descriptor limit. */
  maxConnections?: number | undefined
  /** Open connections per client address (IPv6 by /56) above which its new ones are closed; 0 = no cap. Defaults to a quarter of `maxConnections`. */
  maxConnectionsPerAddress?: number | undefined
  /** Serve `/metrics` on this port (on `metricsHost`, default `host`) instead of the API port. */
  metricsPort?: number | undefined
  metricsHost?: string | undefined
}

/**
 * The default cap on open connections: the process's descriptor limit less a reserve for the
 * store, DNS and files, so a flood of idle sockets meets the cap before `EMFILE`.
 */
export function defaultMaxConnections(): number {
  let limit = Number.POSITIVE_INFINITY
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1]
    if (line !== undefined && line !== 'unlimited') limit = Number(line)
  } catch {
    // Not Linux: the fixed cap below applies.
  }
  return Math.max(64, Math.min(10_000, limit - 256))
}

/** Human messages (URL, demo key) go to stderr so the JSON log stream on stdout never holds a key. */
function say(line: string): void {
  process.stderr.write(`${line}\n`)
}

/** Opens the store or explains why it cannot, then exits 1. */
async function openOrExit(url: string, logger: ReturnType<typeof createJsonLogger>): Promise<Stores> {
  try {
    return await openStores(url, { logger })
  } catch (error) {
    say(
      `user-verification: cannot open the store ${redactUrl(url)}: ${(error instanceof Error ? error.message : String(error)).replace(/^user-verification: /, '')}`
    )
    process.exit(1)
  }
}

/** Hides a password in a store URL before it is printed. */
export function redactUrl(url: string): string {
  return url.replace(/\/\/([^:@/]*):[^@/]*@/, '//$1:***@')
}

/** Creates the demo key on an empty store; `undefined` when the store has keys already. */
async function ensureDemoKey(stores: Stores): Promise<IssuedKey | undefined> {
  if ((await stores.keys.list()).length > 0) return undefined
  return issueKey(stores.keys, 'free', 'demo')
}

/** Prints where the API listens and, once, the demo key with a request to try it. */
function announce(url: string, demo: IssuedKey | undefined, suffix = ''): void {
  if (demo !== undefined) {
    say(`Demo key on the free plan (${demo.id}), shown only this once:\n\n  ${demo.key}\n`)
    say(
      `Try it:\n  curl -s -X POST ${url} -H 'Content-Type: application/json' -H 'X-API-Token: ${demo.key}' \\\n    -d '{"model":"user_verification","email":"jane.doe@gmail.com","firstname":"Jane","lastname":"Doe"}'\n`
    )
  }
  say(`user-verification listening on ${url}${suffix}`)
}

/** Runs the server (or, with workers > 1, the primary that forks them). Resolves once listening. */
export async function serve(settings: ServeSettings): Promise<void> {
  const logger = createJsonLogger(process.stdout, settings.quiet)
  if (settings.workers > 1 && cluster.isPrimary) return servePrimary(settings, logger)

  const stores = await openOrExit(settings.store, logger)
  const demo = settings.demoKey && cluster.isPrimary ? await ensureDemoKey(stores) : undefined
  const {
    port,
    host,
    store: _store,
    demoKey: _demo,
    workers: _workers,
    quiet: _quiet,
    headersTimeout,
    requestTimeout,
    adminTokenFile,
    signup,
    upgrade,
    maxConnections,
    maxConnectionsPerAddress,
    metricsPort,
    metricsHost,
    ...options
  } = settings
  let adminToken: string | undefined
  try {
    adminToken = loadAdminToken(adminTokenFile)
  } catch (error) {
    say(`user-verification: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(2)
  }
  // The metrics read the middleware's counters at scrape time; the stores they time are the ones the middleware gets.
  const metrics = createServerMetrics({ metrics: () => middleware.metrics() }, { defaultMetrics: true })
  const middleware = userVerification({ ...options, store: metrics.instrumentStores(stores), logger })
  await middleware.ready
  // Audit lines are written even with --quiet, which only drops the per-request lines.
  const auditLog = createJsonLogger(process.stdout, false)
  const { dnsServers, dnsTimeout, dnsTries, dnsCache } = options
  const app = createApp(
    middleware,
    logger,
    {
      ...(settings.plans === undefined ? {} : { plans: settings.plans }),
      adminToken,
      signup,
      upgrade,
      verifier: Object.fromEntries(
        Object.entries({ dnsServers, dnsTimeout, dnsTries, dnsCache }).filter(([, value]) => value !== undefined)
      ),
      audit: (event) => auditLog.info('audit', { ...event }),
      // The dashboard's per-address limit follows the API's when one is set.
      ...(options.rateLimit?.perIp ? { rateLimit: { perIp: options.rateLimit.perIp } } : {})
    },
    metrics,
    metricsPort === undefined
  )
  // With --workers the primary serves --metrics-port (every worker summed); alone, this process does.
  const metricsServer =
    metricsPort !== undefined && cluster.isPrimary
      ? await listenMetrics(metricsPort, metricsHost ?? host, () => metrics.render(), metrics.contentType)
      : undefined
  let stopping = false
  // Slow clients must not hold sockets open: bounded header and whole-request times. Node enforces
  // both from a periodic sweep (every 30 s by default), so sweep often enough to cut on time.
  // Node's own answer to a request without Host is an empty 400: answer it in JSON below instead.
  const pipelinedTooDeep = limitPipelining(maxQueuedPerConnection, logger)
  const server: Server = createServer(
    {
      headersTimeout,
      requestTimeout,
      keepAliveTimeout: Math.min(5_000, headersTimeout),
      connectionsCheckingInterval: Math.min(1_000, headersTimeout),
      requireHostHeader: false
    },
    (req, res) => {
      if (pipelinedTooDeep(req, res)) return
      if (req.headers.host === undefined && req.httpVersion === '1.1') return answerJson(res, 400)
      // While stopping, keep-alive clients would keep the server busy forever: close after each answer.
      if (stopping) res.setHeader('Connection', 'close')
      app(req, res)
    }
  )
  server.on('clientError', answerClientError)
  answerConnect(server)
  // Any Expect but 100-continue: Node would answer an empty 417.
  server.on('checkExpectation', (_req: IncomingMessage, res: ServerResponse) => answerJson(res, 417))
  // Past the cap, new connections are closed at once (before any descriptor of theirs is kept),
  // so idle sockets cannot take the process to EMFILE; the headers timeout frees the held ones.
  server.maxConnections = maxConnections ?? defaultMaxConnections()
  capConnectionsPerAddress(server, maxConnectionsPerAddress ?? defaultPerAddress(server.maxConnections), logger)
  const warnDrop = throttledWarning(logger, 'WRN_UV_CONNECTIONS', 10_000)
  server.on('drop', () => warnDrop('connection cap reached; new connections are dropped', { maxConnections: server.maxConnections }))
  server.listen(port, host)
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch((error: unknown) => {
    say(`user-verification: cannot listen on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  })

  const address = server.address() as AddressInfo
  if (cluster.isPrimary) announce(`http://${formatHost(address.address)}:${address.port}${apiPath}`, demo)
  else process.send?.({ listening: address.port })

  const stop = (signal: string) => {
    if (stopping) return
    stopping = true
    if (signal === primaryGone) logger.warn('shutting down', { reason: primaryGone })
    else logger.info('shutting down', { signal })
    metricsServer?.close()
    server.close(async () => {
      metrics.close()
      await middleware.close()
      await stores.close()
      process.exit(0)
    })
    server.closeIdleConnections()
    setTimeout(() => {
      logger.error('shutdown took over 10 s; exiting')
      process.exit(1)
    }, 10_000).unref()
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
  // A worker whose primary died (kill -9, OOM) loses its IPC channel. Node's cluster code then
  // calls process.exit() at once unless `cluster.worker.exitedAfterDisconnect` is true (the Node
  // docs of `worker.process` say so), which would cut off requests whose units were already
  // consumed: charged without a 200. This listener runs before Node's own (prepended), marks the
  // disconnect as expected, and stops as on SIGTERM instead: no new connections arrive (the primary
  // accepted them and handed them over; its listening socket died with it, and closing this
  // worker's handle only drops its entry), the requests in flight finish and are answered, idle
  // keep-alive connections close, then the process exits 0, or 1 after the 10 s bound.
  // See CONTRIBUTING.md#how-a-request-flows: a unit is charged only for a 200.
  if (cluster.isWorker) {
    process.prependOnceListener('disconnect', () => {
      if (cluster.worker) cluster.worker.exitedAfterDisconnect = true
      stop(primaryGone)
    })
  }
}

/** The reason a worker logs when it shuts down because its primary went away. */
const primaryGone = 'primary gone'

/** `{"detail":"<reason phrase>"}` with `status`, closing the connection: for answers Node would give empty. */
function answerJson(res: ServerResponse, status: number): void {
  const body = JSON.stringify({ detail: STATUS_CODES[status] })
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    Connection: 'close'
  })
  res.end(body)
}

/** Answers what Node's HTTP parser refused (bad framing, huge headers, timeouts) in the API's JSON shape. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node's default does: answer only on a socket nothing was written to yet.
  if (error.code === 'ECONNRESET' || !socket.writable || ((socket as Partial<Socket>).bytesWritten ?? 0) > 0) return void socket.destroy()
  answerOnSocket(socket, error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400)
}

function formatHost(address: string): string {
  return address.includes(':') ? `[${address}]` : address
}

/** `--metrics-port`: a listener of its own that answers only `GET /metrics`, so metrics need not share the public port. */
async function listenMetrics(port: number, host: string, render: () => Promise<string>, contentType: string): Promise<Server> {
  const server = createServer((req, res) => {
    if ((req.url ?? '').split('?')[0] !== '/metrics') return answerJson(res, 404)
    if (req.method !== 'GET' && req.method !== 'HEAD') return answerJson(res, 405)
    render().then(
      (text) => {
        res.writeHead(200, { 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(text) })
        res.end(req.method === 'HEAD' ? undefined : text)
      },
      () => answerJson(res, 503)
    )
  })
  server.listen(port, host)
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  }).catch((error: unknown) => {
    say(`user-verification: cannot listen for metrics on ${host}:${port}: ${error instanceof Error ? error.message : String(error)}`)
    process.exit(1)
  })
  const address = server.address() as AddressInfo
  say(`user-verification metrics on http://${formatHost(address.address)}:${address.port}/metrics`)
  return server
}

/** The primary of `--workers N`: checks the store is safe across processes, then forks. */
async function servePrimary(settings: ServeSettings, logger: ReturnType<typeof createJsonLogger>): Promise<void> {
  // The codes of the warnings given here go to the workers (UV_WARNED_CODES), which then skip them: once per server.
  const warned = new Set<string>()
  const recording = {
    ...logger,
    warn(message: string, fields?: Record<string, unknown>) {
      if (typeof fields?.code === 'string') warned.add(fields.code)
      logger.warn(message, fields)
    }
  }
  const stores = await openOrExit(settings.store, recording)
  if (stores.quota.localKeys || stores.keys.localKeys) {
    say(
      `user-verification: --workers ${settings.workers} needs a store shared by all processes (sqlite://, redis:// or postgres://); ${redactUrl(settings.store)} keeps its data in one process. Use one worker or another store.`
    )
    await stores.close()
    process.exit(2)
  }
  const demo = settings.demoKey ? await ensureDemoKey(stores) : undefined
  await stores.close()
  // Workers' /metrics and --metrics-port both answer with every worker's metrics, summed here.
  const aggregator = serveClusterMetrics()
  const metricsServer =
    settings.metricsPort !== undefined
      ? await listenMetrics(
          settings.metricsPort,
          settings.metricsHost ?? settings.host,
          () => aggregator.clusterMetrics(),
          aggregator.contentType
        )
      : undefined

  let listening = 0
  let port = 0
  // Workers skip the warnings the primary gave already (the store's durability, say): once per server.
  const fork = () => cluster.fork({ UV_WARNED_CODES: [...warned].join(',') })
  const workers = Array.from({ length: settings.workers }, fork)
  for (const worker of workers) {
    worker.on('message', (message: { listening?: number }) => {
      if (message.listening === undefined) return
      port = message.listening
      if (++listening === workers.length)
        announce(`http://${formatHost(settings.host)}:${port}${apiPath}`, demo, ` (${workers.length} workers)`)
    })
  }
  let stopping = false
  cluster.on('exit', (worker, code) => {
    if (stopping) {
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(0)
      return
    }
    logger.error('worker exited; starting another', { worker: worker.id, code })
    fork()
  })
  const stop = (signal: NodeJS.Signals) => {
    stopping = true
    metricsServer?.close()
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal)
  }
  process.on('SIGTERM', () => stop('SIGTERM'))
  process.on('SIGINT', () => stop('SIGINT'))
}
