// Fault: the DNS resolver is down (nothing listens) or silent (never answers); email says dnsCheck "Unknown" in time, the rest is unaffected.
import { createSocket } from 'node:dgram'
import { once } from 'node:events'
import t, { type Test } from 'tap'
import { startDnsServer } from '../fixtures/dns-server.js'
import { createKey, grantedUnits, percentile, runLoad, shoot, usageOf } from '../fixtures/load.js'
import { sparePort } from '../fixtures/private-redis.js'
import { startServe } from '../fixtures/spawn-cli.js'

const dnsTimeout = 800
const three = { model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' }
const namesOnly = { model: 'user_verification', firstname: 'Amélie', lastname: 'Durand' }

async function checkResolverFault(t: Test, dnsServer: string): Promise<void> {
  const store = `sqlite://${t.testdir()}/store.sqlite`
  const server = await startServe([
    '--store',
    store,
    '--dns-servers',
    dnsServer,
    '--dns-timeout',
    String(dnsTimeout),
    '--no-demo-key',
    '--quiet'
  ])
  t.teardown(() => server.stop('SIGKILL'))
  const { key, id } = await createKey(store, 'pro')

  // Distinct domains, so every request meets the fault instead of a cached Unknown.
  const emails = Array.from({ length: 12 }, (_, i) => ({ ...three, email: `jane.doe@acme-mail-${i}.com` }))
  const [emailShots, nameShots] = await Promise.all([
    runLoad({ url: server.url, token: key, bodies: emails, concurrency: 6, maxRequests: 12, durationMs: 20_000, keepBodies: true }),
    runLoad({ url: server.url, token: key, bodies: [namesOnly], concurrency: 2, maxRequests: 400, durationMs: 1500, keepBodies: true })
  ])
  t.ok(
    emailShots.every((s) => s.status === 200),
    'every request with an email still gets 200'
  )
  const results = emailShots.map((s) => s.body?.email_verification)
  t.ok(
    results.every((r) => r?.dnsCheck === 'Unknown'),
    'dnsCheck is "Unknown" for all of them'
  )
  t.ok(
    results.every((r) => r?.syntexCheck === 'Pass' && r?.username === 'jane.doe' && /^acme-mail-\d+\.com$/.test(r?.domain)),
    'syntax check and split are unaffected'
  )
  t.ok(
    emailShots.every((s) => s.body?.name_verification?.firstname?.prediction === 'LABEL_1'),
    'names in the same requests are still verified'
  )
  const slowest = Math.max(...emailShots.map((s) => s.ms))
  t.ok(slowest < dnsTimeout + 700, `answered within the DNS deadline (${dnsTimeout} ms) plus overhead: slowest ${slowest.toFixed(0)} ms`)

  t.ok(nameShots.length > 10 && nameShots.every((s) => s.status === 200), `name-only requests meanwhile: ${nameShots.length}, all 200`)
  const p99 = percentile(
    nameShots.map((s) => s.ms),
    99
  )
  t.ok(p99 < 500, `and not slowed by the stalled lookups: p99 ${p99.toFixed(0)} ms`)
  t.equal(await usageOf(store, id), grantedUnits([...emailShots, ...nameShots]), 'units are charged as usual')

  // A lone request after the burst, on a new domain, too.
  const lone = await shoot(server.url, key, { model: 'user_verification', email: 'x@acme-mail-lone.com' }, 10_000, true)
  t.equal(lone.body?.email_verification?.dnsCheck, 'Unknown')
}

t.test('resolver down: nothing listens on the DNS port', async (t) => {
  await checkResolverFault(t, `127.0.0.1:${await sparePort()}`)
})

t.test('resolver silent: a DNS server that takes queries and never answers', async (t) => {
  const silent = createSocket('udp4')
  let queries = 0
  silent.on('message', () => queries++)
  silent.bind(0, '127.0.0.1')
  await once(silent, 'listening')
  t.teardown(() => silent.close())
  await checkResolverFault(t, `127.0.0.1:${silent.address().port}`)
  t.ok(queries > 0, `the silent server did receive the queries (${queries})`)
})

t.test('one silent zone among answering ones: only that domain is Unknown', async (t) => {
  const dns = await startDnsServer({
    'acme-mail.com': { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }] },
    'stalled-mail.com': { silent: true }
  })
  t.teardown(() => dns.close())
  const store = `sqlite://${t.testdir()}/store.sqlite`
  const server = await startServe([
    '--store',
    store,
    '--dns-servers',
    dns.server,
    '--dns-timeout',
    String(dnsTimeout),
    '--no-demo-key',
    '--quiet'
  ])
  t.teardown(() => server.stop('SIGKILL'))
  const { key } = await createKey(store, 'pro')
  const [stalled, fine] = await Promise.all([
    shoot(server.url, key, { ...three, email: 'a@stalled-mail.com' }, 10_000, true),
    shoot(server.url, key, three, 10_000, true)
  ])
  t.equal(stalled.body?.email_verification?.dnsCheck, 'Unknown')
  t.ok(stalled.ms < dnsTimeout + 700, `within the deadline (${stalled.ms.toFixed(0)} ms)`)
  t.equal(fine.body?.email_verification?.dnsCheck, 'Pass', 'the answering zone still passes')
  t.ok(fine.ms < 500, `and is not held up by the stalled one (${fine.ms.toFixed(0)} ms)`)
})
