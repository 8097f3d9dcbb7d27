// Child process of http.bench.ts: serves either a bare Express JSON echo or the full endpoint, as
// built (dist/, what users run: `npm run build` first).
import { mkdtempSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import { startDnsServer } from '../test/fixtures/dns-server.js'
import { benchZone } from './http-traffic.js'

// The build, typed by the sources (the type check runs before the build).
const { issueKey, openStores, userVerification }: typeof import('../lib/index.js') = await import(
  new URL('../dist/lib/index.js', import.meta.url).href
)
const { createServerMetrics }: typeof import('../server/metrics.js') = await import(
  new URL('../dist/server/metrics.js', import.meta.url).href
)

const mode = process.argv[2]
const app = express()
let key = ''
if (mode === 'echo') {
  app.post('/', express.json(), (req, res) => {
    res.json(req.body)
  })
} else {
  const dns = await startDnsServer(benchZone())
  const store = process.env.BENCH_STORE ?? `sqlite://${join(mkdtempSync(join(tmpdir(), 'uv-bench-')), 'bench.sqlite')}`
  const stores = await openStores(store)
  // A plan large enough that the run measures verification, not 402s.
  key = (await issueKey(stores.keys, 'bench')).key
  // BENCH_METRICS=1: the standalone server's metrics on (stores timed, DNS and name-model channels
  // subscribed, a latency histogram per request), to show what they cost on the request path.
  const metrics =
    process.env.BENCH_METRICS === '1' ? createServerMetrics({ metrics: () => middleware.metrics() }, { defaultMetrics: true }) : undefined
  const middleware = userVerification({
    store: metrics ? metrics.instrumentStores(stores) : stores,
    plans: { bench: 1e9 },
    dnsServers: [dns.server],
    logger: { warn() {}, error() {} }
  })
  await middleware.ready
  if (metrics)
    app.use((_req, res, next) => {
      const start = process.hrtime.bigint()
      res.once('finish', () => metrics.observeRequest(res.statusCode, Number(process.hrtime.bigint() - start) / 1e9))
      next()
    })
  app.use('/', middleware)
}
const server = app.listen(0, '127.0.0.1', () => {
  process.send?.({ port: (server.address() as AddressInfo).port, key })
})
process.on('SIGINT', () => process.exit(0))
