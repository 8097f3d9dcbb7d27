// Slow clients (slowloris headers and bodies, idle sockets) against `serve` as users run it: cut off by the header/request timeouts while others are served.
import { existsSync } from 'node:fs'
import t from 'tap'
import { buildRequest, rawRequest, slowSend, targetOf, type SlowResult } from '../fixtures/raw-http.js'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

if (!existsSync(cliPath)) {
  t.plan(0, `${cliPath} is missing: run \`npm run build\` first (npm test does)`)
  process.exit(0)
}

// Short timeouts so the test takes seconds; the defaults (10 s / 30 s) work the same way.
const headersTimeout = 1000
const requestTimeout = 3000
// Node enforces both timeouts from a periodic sweep (`connectionsCheckingInterval`), so a cut
// can come up to one sweep late; the server must sweep often enough for that to stay small.
const slack = 2000

const { dnsServers } = await testVerifiers(t)
const store = `sqlite://${t.testdir()}/uv.sqlite`
const created = await runCli(['keys', 'create', '--plan', 'pro', '--store', store, '--json'])
const { key } = JSON.parse(created.stdout) as { key: string }
const server = await startServe([
  '--store',
  store,
  '--no-demo-key',
  '--quiet',
  '--dns-servers',
  dnsServers.join(','),
  '--headers-timeout',
  String(headersTimeout),
  '--request-timeout',
  String(requestTimeout)
])
t.teardown(() => server.stop('SIGKILL'))
const target = targetOf(server.url)
const good = '{"model":"user_verification","email":"jane@acme-mail.com","firstname":"Jane","lastname":"Doe"}'
const goodRequest = (token = key) =>
  buildRequest(
    'POST',
    '/api/v1',
    [
      ['Host', 'x'],
      ['Content-Type', 'application/json'],
      ['X-API-Token', token],
      ['Content-Length', String(Buffer.byteLength(good))]
    ],
    good
  )

t.test('slowloris: headers byte by byte, bodies drop by drop and idle sockets are cut off while a normal client is served', async (t) => {
  const attackMs = headersTimeout + requestTimeout + 3 * slack
  // Headers that never end: one byte every 100 ms, a new padding header after another.
  const slowHeaders = Array.from({ length: 60 }, () =>
    slowSend(target, Buffer.from('POST /api/v1 HTTP/1.1\r\nHost: x\r\n'), {
      intervalMs: 100,
      chunkSize: 1,
      maxMs: attackMs,
      loop: Buffer.from('X-Pad: a\r\n')
    })
  )
  // Complete headers announcing 8 KiB, then 16 bytes every 100 ms: well within the body limit, far too slow.
  const bodyHead = buildRequest('POST', '/api/v1', [
    ['Host', 'x'],
    ['Content-Type', 'application/json'],
    ['X-API-Token', key],
    ['Content-Length', '8192']
  ])
  const slowBodies = Array.from({ length: 30 }, () =>
    slowSend(target, Buffer.from('{"model":"user_verification","email":"'), {
      head: bodyHead,
      intervalMs: 100,
      chunkSize: 16,
      maxMs: attackMs,
      loop: Buffer.from('aaaaaaaaaaaaaaaa')
    })
  )
  // Connected, never a byte.
  const idle = Array.from({ length: 10 }, () => slowSend(target, Buffer.alloc(0), { intervalMs: 1000, maxMs: attackMs }))

  // Meanwhile a normal client keeps being served, quickly.
  const latencies: number[] = []
  const statuses: number[] = []
  const normalUntil = Date.now() + headersTimeout + slack
  while (Date.now() < normalUntil && statuses.length < 200) {
    const sentAt = Date.now()
    const response = await rawRequest(target, goodRequest(), 5000)
    latencies.push(Date.now() - sentAt)
    statuses.push(response.status ?? 0)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  t.ok(statuses.length >= 5, `${statuses.length} normal requests during the attack`)
  t.ok(
    statuses.every((status) => status === 200),
    `all answered 200 (statuses ${[...new Set(statuses)].join(',')})`
  )
  t.ok(Math.max(...latencies) < 1000, `slowest normal request ${Math.max(...latencies)} ms (< 1000 ms)`)

  const report = (results: SlowResult[], limit: number, what: string) => {
    const closed = results.map((r) => r.closedAfterMs)
    const open = closed.filter((ms) => ms === undefined).length
    const worst = Math.max(...closed.map((ms) => ms ?? Infinity))
    t.equal(open, 0, `${what}: every socket was closed by the server (${open} of ${results.length} still open after ${attackMs} ms)`)
    t.ok(worst <= limit, `${what}: cut off within ${limit} ms (slowest ${worst} ms)`)
    return results
  }
  const headerResults = report(await Promise.all(slowHeaders), headersTimeout + slack, 'slow headers')
  t.ok(
    headerResults.every((r) => r.sent < 200),
    'a slow-header client got fewer than 200 bytes in'
  )
  report(await Promise.all(slowBodies), requestTimeout + slack, 'slow bodies')
  report(await Promise.all(idle), headersTimeout + slack, 'idle sockets')
  t.equal(server.child.exitCode, null, 'the server process is alive')
  t.equal((await rawRequest(target, goodRequest())).status, 200, 'and serves after the attack')
})

t.test('a slow but honest client within the request timeout is still served', async (t) => {
  const head = buildRequest('POST', '/api/v1', [
    ['Host', 'x'],
    ['Content-Type', 'application/json'],
    ['X-API-Token', key],
    ['Content-Length', String(Buffer.byteLength(good))]
  ])
  const body = Buffer.from(good)
  // Headers at once, the body in 10 pieces over about half the request timeout.
  const result = await slowSend(target, body, {
    head,
    intervalMs: Math.floor(requestTimeout / 2 / 10),
    chunkSize: Math.ceil(body.length / 10),
    maxMs: requestTimeout + slack
  })
  t.match(result.response, /^HTTP\/1\.1 200 /, `answered 200 (got ${JSON.stringify(result.response.slice(0, 40))})`)
  t.ok(result.closedAfterMs === undefined || result.closedAfterMs >= requestTimeout / 2 - 200, 'the body really was sent slowly')
})

t.test('a body announced above the limit is refused at once, without waiting for it', async (t) => {
  const head = buildRequest('POST', '/api/v1', [
    ['Host', 'x'],
    ['Content-Type', 'application/json'],
    ['X-API-Token', key],
    ['Content-Length', String(10 * 1024 * 1024)]
  ])
  const sentAt = Date.now()
  const result = await slowSend(target, Buffer.alloc(0), {
    head,
    intervalMs: 10,
    chunkSize: 1024,
    maxMs: 2000,
    loop: Buffer.from('a'.repeat(1024))
  })
  t.match(result.response, /^HTTP\/1\.1 413 /, '413')
  t.match(result.response, /\{"detail":"Request body too large"\}/)
  t.ok((result.closedAfterMs ?? Date.now() - sentAt) < 1000, 'answered within 1 s')
})

t.test("errors from Node's HTTP parser answer JSON with a detail too", async (t) => {
  for (const [name, bytes] of [
    [
      'a control character in a header',
      buildRequest(
        'POST',
        '/api/v1',
        [
          ['Host', 'x'],
          ['X-API-Token', 'a\x01b'],
          ['Content-Length', '2']
        ],
        '{}'
      )
    ],
    [
      'Content-Length and Transfer-Encoding together',
      buildRequest(
        'POST',
        '/api/v1',
        [
          ['Host', 'x'],
          ['Content-Length', '2'],
          ['Transfer-Encoding', 'chunked']
        ],
        '0\r\n\r\n'
      )
    ],
    [
      'headers over 16 KiB',
      buildRequest(
        'POST',
        '/api/v1',
        [
          ['Host', 'x'],
          ['X-Big', 'b'.repeat(20_000)]
        ],
        ''
      )
    ]
  ] as const) {
    const response = await rawRequest(target, bytes, 3000, true)
    t.ok(response.status !== undefined && response.status >= 400 && response.status < 500, `${name}: a 4xx (${response.status})`)
    let detail: unknown
    try {
      detail = (JSON.parse(response.body) as { detail?: unknown }).detail
    } catch {}
    t.type(detail, 'string', `${name}: JSON body with a detail (got ${JSON.stringify(response.body)})`)
  }
  t.equal(server.child.exitCode, null, 'the server process is alive')
})
