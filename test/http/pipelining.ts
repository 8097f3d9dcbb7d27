// Pipelined requests (attacker findings of 2026-11-25): Node parses every request a client
// pipelines and queues their answers; an answer queued for a connection that closed is dropped
// without a 'close' event. Before the fix the middleware worked on every queued request at once,
// charged each, and never gave the units of the dropped answers back (999 units for 1,000
// requests of a client that read nothing), and ten such connections kept /healthz from answering.
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import t from 'tap'
import { periodOf } from '../../lib/quota/plans.js'
import { startApi } from '../fixtures/create-api.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { targetOf, verificationRequest, type Target } from '../fixtures/raw-http.js'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { testVerifiers, testZone } from '../fixtures/test-verifiers.js'

const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Sends `bytes` (`times` over, as fast as the socket takes them) on a new connection; reports what came back. */
function pipeline(to: Target, bytes: Buffer, times = 1) {
  let sent = 0
  const pump = (): void => {
    while (sent < times && !socket.destroyed && socket.write(bytes)) sent++
    if (sent < times && !socket.destroyed) socket.once('drain', pump)
  }
  const socket = connect(to, pump)
  socket.on('error', () => {})
  let received = ''
  let closedByServer = false
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  socket.on('end', () => (closedByServer = true))
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  return {
    socket,
    closed,
    answers: () => received.match(/HTTP\/1\.1 200 /g)?.length ?? 0,
    closedByServer: () => closedByServer || (socket.destroyed && received.length === 0)
  }
}

t.test('in the middleware: queued requests of a client that left are neither worked on nor charged', async (t) => {
  const dns = await startDnsServer({
    ...structuredClone(testZone),
    'slow-mail.com': { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }], delay: 600 }
  })
  t.teardown(() => dns.close())
  const api = await startApi({ dnsServers: [dns.server], dnsTimeout: 3000 })
  t.teardown(() => api.close())
  const { key, account } = await api.key('pro')
  const body = JSON.stringify({ model: 'user_verification', email: 'jane@slow-mail.com', firstname: 'Jane' })
  // 20 requests in one write; the client leaves while the first one's DNS lookup runs.
  const client = pipeline(targetOf(api.url), Buffer.concat(Array.from({ length: 20 }, () => verificationRequest(key, body))))
  await settle(200)
  client.socket.destroy()
  await settle(1200)
  t.equal(client.answers(), 0, 'the client got no answer')
  t.equal(await api.stores.quota.get(account, periodOf(Date.now()).id), 0, 'nothing charged (was 38: 19 queued requests, 2 units each)')
  t.match(api.middleware.metrics(), { unitsConsumed: 0, aborted: 20, inFlight: 0 }, 'the 19 queued requests count as aborted, not as work')
  t.equal(dns.count('slow-mail.com'), 1, 'one lookup: the queued requests never ran')

  // A pipelining client that reads gets every answer, in order, and pays for each.
  const reader = pipeline(targetOf(api.url), Buffer.concat(Array.from({ length: 5 }, () => verificationRequest(key, body))))
  for (let i = 0; i < 100 && reader.answers() < 5; i++) await settle(20)
  t.equal(reader.answers(), 5, 'five pipelined requests, five answers')
  reader.socket.destroy()
  t.equal(await api.stores.quota.get(account, periodOf(Date.now()).id), 10, 'and 10 units charged for them')
})

if (!existsSync(cliPath)) {
  t.test('serve: pipelining cap', { skip: `needs ${cliPath} (npm run build)` }, async () => {})
} else {
  t.test(
    'serve: ten connections pipelining 10,000 requests each are closed; nothing is charged without its answer; /healthz answers meanwhile',
    async (t) => {
      const { dnsServers } = await testVerifiers(t)
      const store = `sqlite://${t.testdir()}/uv.sqlite`
      const created = JSON.parse((await runCli(['keys', 'create', '--plan', 'pro', '--store', store, '--json'])).stdout) as {
        key: string
        account: string
      }
      const server = await startServe(['--store', store, '--no-demo-key', '--quiet', '--dns-servers', dnsServers.join(',')])
      t.teardown(() => server.stop('SIGKILL'))
      const target = targetOf(server.url)
      const one = verificationRequest(created.key, '{"model":"user_verification","firstname":"Ann"}')
      // Each client would send 10,000 requests, 200 at a time, and reads nothing.
      const flood = Buffer.concat(Array.from({ length: 200 }, () => one))
      const clients = Array.from({ length: 10 }, () => pipeline(target, flood, 50))
      const started = Date.now()
      const health: number[] = []
      await settle(1000)
      for (let i = 0; i < 5; i++) {
        const asked = Date.now()
        const response = await fetch(new URL('/healthz', server.url), { signal: AbortSignal.timeout(3000) })
        t.equal(response.status, 200)
        health.push(Date.now() - asked)
        await settle(100)
      }
      const closedAll = await Promise.race([Promise.all(clients.map((c) => c.closed)).then(() => true), settle(3000).then(() => false)])
      t.ok(closedAll, `every flooding connection was closed by the server (${Date.now() - started} ms)`)
      t.ok(Math.max(...health) < 1000, `/healthz answered in ${Math.max(...health)} ms at worst during the flood`)
      for (const c of clients) c.socket.destroy()
      await settle(500)
      const answered = clients.reduce((sum, c) => sum + c.answers(), 0)
      const metrics = await (await fetch(new URL('/metrics', server.url))).text()
      const counter = (name: string) => Number(new RegExp(`^${name} (\\d+)`, 'm').exec(metrics)?.[1] ?? 0)
      const usage = JSON.parse((await runCli(['usage', created.account, '--store', store, '--json'])).stdout) as {
        used?: number
        months?: Array<{ used: number }>
      }
      const used = usage.used ?? usage.months?.at(-1)?.used ?? -1
      t.ok(answered <= 32, `at most one pipelining window answered per connection in all (${answered})`)
      t.equal(
        counter('uv_units_consumed_total') - counter('uv_units_refunded_total'),
        counter('uv_responses_total\\{status="200"\\}'),
        'units kept = 200s written'
      )
      t.equal(
        used,
        counter('uv_responses_total\\{status="200"\\}'),
        `the store's usage (${used}) is the 200s written, not the 100,000 requests sent`
      )
      t.equal(server.stdout().match(/WRN_UV_PIPELINING/g)?.length, 1, 'logged once for the flood')
    }
  )
}
