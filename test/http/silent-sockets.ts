// Silent and one-byte sockets against `serve`: closed at the headers timeout (descriptors freed), a cap on open connections, normal clients served.
import { existsSync, readdirSync, readlinkSync } from 'node:fs'
import { connect } from 'node:net'
import t from 'tap'
import { buildRequest, rawRequest, targetOf, verificationRequest, type Target } from '../fixtures/raw-http.js'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

if (!existsSync(cliPath) || !existsSync('/proc/self/fd')) {
  t.plan(0, `needs ${cliPath} (npm run build) and /proc to count the server's sockets`)
  process.exit(0)
}

const headersTimeout = 1000
const maxConnections = 150
// Node sweeps its timeouts every second here; a cut may come up to one sweep (and a busy machine) late.
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
  '3000',
  '--max-connections',
  String(maxConnections),
  // The global cap is tested from one address here; the per-address cap in connections-per-address.ts.
  '--max-connections-per-address',
  String(maxConnections)
])
t.teardown(() => server.stop('SIGKILL'))
const target = targetOf(server.url)
const good = '{"model":"user_verification","email":"jane@acme-mail.com","firstname":"Jane","lastname":"Doe"}'
const goodRequest = verificationRequest(key, good)

/** Sockets the server process holds open now, counted from its descriptor table. */
function serverSockets(): number {
  const dir = `/proc/${server.child.pid}/fd`
  let count = 0
  for (const fd of readdirSync(dir)) {
    try {
      if (readlinkSync(`${dir}/${fd}`).startsWith('socket:')) count++
    } catch {
      // Closed while we looked.
    }
  }
  return count
}

/** A hostile client: connects, writes `bytes` (maybe nothing), then neither sends more nor closes its side. */
function hold(where: Target, bytes: string) {
  const socket = connect({ ...where, allowHalfOpen: true })
  socket.on('error', () => {})
  const opened = Date.now()
  let endedAfter: number | undefined
  let answer = ''
  socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')))
  socket.on('connect', () => {
    if (bytes !== '') socket.write(bytes)
  })
  // The server's FIN (or reset): with allowHalfOpen the client itself never closes.
  const mark = () => (endedAfter ??= Date.now() - opened)
  socket.on('end', mark)
  socket.on('close', mark)
  return {
    endedAfter: () => endedAfter,
    answer: () => answer,
    destroy: () => socket.destroy()
  }
}

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

t.test('silent, one-byte and half-sent sockets are closed at the headers timeout and free their descriptors', async (t) => {
  const before = serverSockets()
  const kinds = { silent: '', 'one byte': 'P', 'a blank line': '\r\n', 'half a head': 'POST /api/v1 HTTP/1.1\r\nHost: x\r\n' }
  const held = Object.entries(kinds).flatMap(([kind, bytes]) => Array.from({ length: 25 }, () => ({ kind, client: hold(target, bytes) })))
  t.teardown(() => held.forEach(({ client }) => client.destroy()))
  await settle(200)
  const during = serverSockets()
  t.ok(during >= before + 90, `the server holds the hostile sockets at first (${during - before} more sockets)`)

  // A normal client keeps being served, quickly, all the while.
  const latencies: number[] = []
  const statuses: number[] = []
  const until = Date.now() + headersTimeout + slack
  while (Date.now() < until) {
    const sentAt = Date.now()
    statuses.push((await rawRequest(target, goodRequest, 5000)).status ?? 0)
    latencies.push(Date.now() - sentAt)
    await settle(50)
  }
  t.ok(
    statuses.length >= 5 && statuses.every((status) => status === 200),
    `${statuses.length} normal requests, all 200 (${[...new Set(statuses)]})`
  )
  t.ok(Math.max(...latencies) < 1000, `slowest normal request ${Math.max(...latencies)} ms`)

  for (const kind of Object.keys(kinds)) {
    const ends = held.filter((h) => h.kind === kind).map((h) => h.client.endedAfter())
    const open = ends.filter((ms) => ms === undefined).length
    t.equal(open, 0, `${kind}: the server closed every socket (${open} of ${ends.length} not)`)
    t.ok(Math.max(...ends.map((ms) => ms ?? Infinity)) <= headersTimeout + slack, `${kind}: within ${headersTimeout + slack} ms`)
  }
  const answered = held.filter((h) => h.client.answer() !== '')
  t.ok(
    answered.every((h) => /^HTTP\/1\.1 408 [\s\S]*\r\n\r\n\{"detail":"Request Timeout"\}$/.test(h.client.answer())),
    `those answered got a JSON 408 (${answered.length})`
  )
  // The descriptors themselves are gone, not just half-closed: the clients never closed their side.
  const after = serverSockets()
  t.ok(after <= before + 2, `the server's sockets are back to ${after} (${before} before the attack)`)
})

t.test('past --max-connections new connections are dropped at once; the server stays up and serves again', async (t) => {
  const before = serverSockets()
  const flood = Array.from({ length: maxConnections + 100 }, () => hold(target, ''))
  t.teardown(() => flood.forEach((client) => client.destroy()))
  await settle(500)
  const during = serverSockets()
  t.ok(during <= before + maxConnections + 2, `the server holds at most the cap (${during - before} more sockets, cap ${maxConnections})`)
  const dropped = flood.filter((client) => client.endedAfter() !== undefined && client.endedAfter()! < 500)
  t.ok(dropped.length >= 95, `the connections past the cap were closed at once (${dropped.length})`)
  await settle(headersTimeout + slack)
  t.ok(
    flood.every((client) => client.endedAfter() !== undefined),
    'the held ones were closed at the headers timeout'
  )
  t.ok(serverSockets() <= before + 2, 'and their descriptors freed')
  t.equal(server.child.exitCode, null, 'the server process is alive')
  t.equal((await rawRequest(target, goodRequest)).status, 200, 'and serves normal clients again')
  t.match(server.stdout(), /WRN_UV_CONNECTIONS/, 'the cap is logged')
  t.equal(server.stdout().match(/WRN_UV_CONNECTIONS/g)?.length, 1, 'once for the burst, not per dropped connection')
})

t.test(
  "answers Node would send empty are JSON with a detail: no Host, an unknown Expect, a malformed request line, /dashboard/'s redirect",
  async (t) => {
    const cases: Array<[string, Buffer, number]> = [
      ['no Host header', Buffer.from('POST /api/v1 HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}'), 400],
      [
        'Expect: 200-ok',
        buildRequest(
          'POST',
          '/api/v1',
          [
            ['Host', 'x'],
            ['Expect', '200-ok'],
            ['Content-Length', '2']
          ],
          '{}'
        ),
        417
      ],
      ['a malformed request line', Buffer.from('GET /api/v1 HTTP/1.1 extra\r\nHost: x\r\n\r\n'), 400],
      // llhttp reads this as HTTP/0.9: it reaches the API, which answers its own 422.
      ['a request line without a version', Buffer.from('POST /api/v1\r\nHost: x\r\n\r\n'), 422],
      ['a space in the target', Buffer.from('GET /a b HTTP/1.1\r\nHost: x\r\n\r\n'), 400],
      ['/dashboard/', buildRequest('GET', '/dashboard/', [['Host', 'x']]), 301],
      // F3: Node hands CONNECT to a 'connect' listener, or closes the socket without a byte.
      ['CONNECT', Buffer.from('CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n'), 405]
    ]
    for (const [name, bytes, status] of cases) {
      const response = await rawRequest(target, bytes, 3000, true)
      t.equal(response.status, status, `${name}: ${status}`)
      t.match(response.headers['content-type'] ?? '', /^application\/json/, `${name}: JSON`)
      let detail: unknown
      try {
        detail = (JSON.parse(response.body) as { detail?: unknown }).detail
      } catch {}
      t.ok(detail !== undefined && detail !== null, `${name}: a detail (got ${JSON.stringify(response.body)})`)
    }
    const http10 = await rawRequest(target, Buffer.from('GET /healthz HTTP/1.0\r\n\r\n'), 3000, true)
    t.equal(http10.status, 200, 'HTTP/1.0 needs no Host and is served')
    t.equal(server.child.exitCode, null, 'the server process is alive')
  }
)
