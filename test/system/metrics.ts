// /metrics of a real multi-worker server: one scrape sums every worker (prom-client's cluster aggregation), on the API port or --metrics-port.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { createServerMetrics } from '../../server/metrics.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-metrics-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dns = await startDnsServer({
  ...structuredClone(testZone),
  // Answers after 1.5 s: a client can leave while its request is being verified.
  'slow-mail.com': { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }], delay: 1500 }
})
t.teardown(() => dns.close())
const body = JSON.stringify({ model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' })

/** The value of one sample (`name{labels}`), or undefined when the scrape has none. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `))
  return line === undefined ? undefined : Number(line.slice(series.length + 1))
}

async function post(url: string, key: string) {
  // A new connection each time, so the primary hands requests to the workers in turn.
  const response = await checkedFetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': key, connection: 'close' },
    body
  })
  await response.arrayBuffer()
  return response.status
}

t.test('--workers 2: every scrape shows the whole server, on the API port', async (t) => {
  const server = await startServe([
    '--store',
    `sqlite://${join(dir, 'a.sqlite')}`,
    '--dns-servers',
    dns.server,
    '--workers',
    '2',
    '--quiet'
  ])
  t.teardown(() => server.stop('SIGKILL'))
  const statuses: number[] = []
  for (let i = 0; i < 9; i++) statuses.push(await post(server.url, server.demoKey!))
  statuses.push(await post(server.url, 'uv_not-a-key'))
  t.strictSame(statuses, [200, 200, 200, 200, 200, 200, 200, 200, 402, 401], '25 free units: 8 requests of 3, then 402')
  const metricsUrl = server.url.replace('/api/v1', '/metrics')
  // Several scrapes on new connections land on both workers; each must show all ten requests.
  for (let i = 0; i < 4; i++) {
    const response = await checkedFetch(metricsUrl, { headers: { connection: 'close' } })
    t.equal(response.status, 200)
    t.match(response.headers.get('content-type'), /^text\/plain; version=0\.0\.4/)
    const text = await response.text()
    t.equal(sample(text, 'uv_responses_total{status="200"}'), 8, `scrape ${i}: 200s of both workers`)
    t.equal(sample(text, 'uv_responses_total{status="402"}'), 1)
    t.equal(sample(text, 'uv_responses_total{status="401"}'), 1)
    t.equal(sample(text, 'uv_responses_total{status="429"}'), 0, 'present before any 429')
    t.equal(sample(text, 'uv_responses_total{status="503"}'), 0)
    t.equal(sample(text, 'uv_units_consumed_total'), 24)
    t.equal(sample(text, 'uv_http_request_duration_seconds_count{status_class="2xx"}'), 8)
    t.equal(sample(text, 'uv_http_request_duration_seconds_count{status_class="4xx"}'), 2)
    t.equal(sample(text, 'uv_http_request_duration_seconds_bucket{le="+Inf",status_class="2xx"}'), 8)
    const lookups = sample(text, 'uv_dns_checks_total{outcome="Pass",source="lookup"}') ?? 0
    const hits = sample(text, 'uv_dns_checks_total{outcome="Pass",source="cache"}') ?? 0
    t.ok(lookups >= 1 && lookups <= 2, `one lookup per worker at most (${lookups})`)
    t.ok(lookups + hits + (sample(text, 'uv_dns_checks_total{outcome="Pass",source="shared"}') ?? 0) >= 8, 'every 200 had its DNS check')
    t.ok((sample(text, 'uv_name_model_duration_seconds_count') ?? 0) >= 8, 'the name model was timed')
    t.ok((sample(text, 'uv_store_call_duration_seconds_count{store="quota",call="consume"}') ?? 0) >= 8, 'quota consume calls are timed')
    t.match(text, /^process_resident_memory_bytes \d+/m)
  }
  t.equal(await server.stop('SIGTERM'), 0)
})

t.test('--metrics-port: metrics on their own listener (summed over workers), none on the public port', async (t) => {
  const server = await startServe([
    '--store',
    `sqlite://${join(dir, 'b.sqlite')}`,
    '--dns-servers',
    dns.server,
    '--workers',
    '2',
    '--metrics-port',
    '0',
    '--quiet'
  ])
  t.teardown(() => server.stop('SIGKILL'))
  const metricsUrl = /metrics on (http:\/\/\S+\/metrics)/.exec(server.stderr())?.[1]
  t.ok(metricsUrl, 'the metrics URL is printed')
  for (let i = 0; i < 4; i++) t.equal(await post(server.url, server.demoKey!), 200)
  const publicScrape = await checkedFetch(server.url.replace('/api/v1', '/metrics'))
  t.equal(publicScrape.status, 404)
  const text = await (await checkedFetch(metricsUrl!)).text()
  t.equal(sample(text, 'uv_responses_total{status="200"}'), 4)
  t.equal(sample(text, 'uv_units_consumed_total'), 12)
  t.equal((await checkedFetch(metricsUrl!.replace('/metrics', '/other'))).status, 404)
  t.equal(await server.stop('SIGTERM'), 0)
})

t.test('F7: a request whose client left before its answer is counted as aborted, not as a 200', async (t) => {
  const server = await startServe(['--store', `sqlite://${join(dir, 'c.sqlite')}`, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => server.stop('SIGKILL'))
  const outcome = await checkedFetch(server.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': server.demoKey! },
    body: JSON.stringify({ model: 'user_verification', email: 'jane@slow-mail.com', firstname: 'Jane' }),
    signal: AbortSignal.timeout(200)
  }).then(
    () => 'answered',
    () => 'left'
  )
  t.equal(outcome, 'left', 'the client left while the DNS check ran')
  // The slow answer arrives and the abandoned request ends on the server.
  await new Promise((resolve) => setTimeout(resolve, 1800))
  t.equal(await post(server.url, server.demoKey!), 200, 'a client that stays is answered')
  const text = await (await checkedFetch(server.url.replace('/api/v1', '/metrics'))).text()
  t.equal(sample(text, 'uv_responses_total{status="200"}'), 1, 'only the 200 that was delivered')
  t.equal(sample(text, 'uv_requests_aborted_total'), 1, 'the abandoned request on its own counter')
  t.equal(await server.stop('SIGTERM'), 0)
})

t.test('store calls that fail are counted by store and call', async (t) => {
  const stores = await openStores('memory://')
  t.teardown(() => stores.close())
  const metrics = createServerMetrics({ metrics: () => ({ responses: {}, aborted: 0, inFlight: 0, unitsConsumed: 0, unitsRefunded: 0 }) })
  t.teardown(() => metrics.close())
  const timed = metrics.instrumentStores(stores)
  t.equal(await timed.quota.get('acct_1', '2026-11'), 0)
  ;(stores.quota as unknown as Record<string, unknown>).get = async () => {
    throw new Error('connection refused')
  }
  await t.rejects(metrics.instrumentStores(stores).quota.get('acct_1', '2026-11'), /connection refused/)
  const text = await metrics.render()
  t.equal(sample(text, 'uv_store_errors_total{store="quota",call="get"}'), 1)
  t.equal(sample(text, 'uv_store_call_duration_seconds_count{store="quota",call="get"}'), 2)
})
