// Tests the DNS check against a real DNS server on loopback, counting the queries it receives.
import t from 'tap'
import { createServer } from 'node:net'
import { createDnsCheck, isGlobalAddress } from '../../lib/email/dns-check.js'
import { isSpecialUseDomain } from '../../lib/email/special-use-domains.js'
import { startDnsServer, type Zone } from '../fixtures/dns-server.js'

const zone: Zone = {
  'mx.test-mail.com': {
    mx: [
      { priority: 20, exchange: 'mx2.test-mail.com' },
      { priority: 10, exchange: 'MX1.test-mail.com.' }
    ]
  },
  'nullmx.com': { mx: [{ priority: 0, exchange: '.' }], a: ['93.184.216.34'] },
  'aonly.com': { a: ['93.184.216.34'] },
  'aaaaonly.com': { aaaa: ['2606:2800:220:1:248:1893:25c8:1946'] },
  'private.com': { a: ['10.1.2.3', '127.0.0.1'], aaaa: ['::1', 'fe80::1'] },
  'empty.com': {},
  'servfail.com': { rcode: 'SERVFAIL' },
  'refused.com': { rcode: 'REFUSED' },
  'silent.com': { silent: true },
  'slow.com': { mx: [{ priority: 10, exchange: 'mx.slow.com' }], delay: 150 }
}

t.test('answers by RFC, with the number of queries each case costs', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const check = createDnsCheck({ servers: [dns.server], timeout: 600, tries: 2 })
  t.teardown(() => check.close())

  t.same(await check.check('mx.test-mail.com'), { result: 'Pass', reason: 'mx', mx: ['mx1.test-mail.com', 'mx2.test-mail.com'] })
  t.equal(dns.count('mx.test-mail.com'), 1, 'one MX query, no fallback')

  t.match(await check.check('nullmx.com'), { result: 'Fail', reason: 'null-mx' })
  t.equal(dns.count('nullmx.com', 'A'), 0, 'null MX is final: no A fallback')

  t.match(await check.check('aonly.com'), { result: 'Pass', reason: 'implicit-mx' })
  t.equal(dns.count('aonly.com', 'MX'), 1)
  t.equal(dns.count('aonly.com', 'A'), 1)
  t.match(await check.check('aaaaonly.com'), { result: 'Pass', reason: 'implicit-mx' })
  t.match(await check.check('private.com'), { result: 'Fail', reason: 'no-routable-address' })
  t.match(await check.check('empty.com'), { result: 'Fail', reason: 'no-records' })

  t.match(await check.check('missing.com'), { result: 'Fail', reason: 'nxdomain' })
  t.equal(dns.count('missing.com'), 1, 'NXDOMAIN: one query, no retry, no fallback')

  t.match(await check.check('servfail.com'), { result: 'Unknown', reason: 'servfail' })
  t.equal(dns.count('servfail.com', 'MX'), 2, 'SERVFAIL is retried once')
  t.match(await check.check('refused.com'), { result: 'Unknown', reason: 'refused' })
  t.equal(dns.count('refused.com', 'MX'), 2)

  const started = Date.now()
  t.match(await check.check('silent.com'), { result: 'Unknown', reason: 'timeout' })
  const took = Date.now() - started
  t.ok(took < 700, `silent server answered Unknown within the deadline (${took} ms)`)
  t.equal(dns.count('silent.com', 'MX'), 2, 'timeout is retried once')

  t.match(await check.check('slow.com'), { result: 'Pass' }, 'an answer inside one attempt still counts')
})

t.test('special-use names fail without a query', async (t) => {
  const dns = await startDnsServer({})
  t.teardown(() => dns.close())
  const check = createDnsCheck({ servers: [dns.server], timeout: 300 })
  for (const d of [
    'localhost',
    'a.localhost',
    'x.test',
    'x.example',
    'x.invalid',
    'x.local',
    'x.onion',
    'example.com',
    'a.example.org',
    'x.home.arpa',
    'x.internal'
  ]) {
    t.match(await check.check(d), { result: 'Fail', reason: 'special-use' }, d)
  }
  t.equal(dns.queries.length, 0)
  t.notOk(isSpecialUseDomain('example.co'))
  t.notOk(isSpecialUseDomain('testing.com'))
  check.close()
})

t.test('cache: positive, negative and Unknown TTLs with an injected clock', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  let clock = 1_000_000
  const check = createDnsCheck({
    servers: [dns.server],
    timeout: 300,
    tries: 1,
    now: () => clock,
    cache: { positiveTtl: 1000, negativeTtl: 500, unknownTtl: 100 }
  })
  t.teardown(() => check.close())
  await check.check('mx.test-mail.com')
  await check.check('missing.com')
  await check.check('servfail.com')
  clock += 99
  await Promise.all([check.check('mx.test-mail.com'), check.check('missing.com'), check.check('servfail.com')])
  t.same([dns.count('mx.test-mail.com'), dns.count('missing.com'), dns.count('servfail.com')], [1, 1, 1], 'all cached')
  clock += 2
  await Promise.all([check.check('mx.test-mail.com'), check.check('missing.com'), check.check('servfail.com')])
  t.same([dns.count('mx.test-mail.com'), dns.count('missing.com'), dns.count('servfail.com')], [1, 1, 2], 'Unknown expired after 100 ms')
  clock += 400
  await Promise.all([check.check('mx.test-mail.com'), check.check('missing.com')])
  t.same([dns.count('mx.test-mail.com'), dns.count('missing.com')], [1, 2], 'Fail expired after 500 ms')
  clock += 500
  await check.check('mx.test-mail.com')
  t.equal(dns.count('mx.test-mail.com'), 2, 'Pass expired after 1000 ms')
})

t.test('concurrent checks of one domain share one query; the cache is bounded', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const check = createDnsCheck({ servers: [dns.server], timeout: 600, cache: { max: 3 } })
  t.teardown(() => check.close())
  const results = await Promise.all(Array.from({ length: 20 }, () => check.check('slow.com')))
  t.equal(new Set(results.map((r) => r.result)).size, 1)
  t.equal(dns.count('slow.com'), 1, '20 concurrent checks, one query')
  for (const d of ['aonly.com', 'aaaaonly.com', 'empty.com', 'private.com']) await check.check(d)
  t.equal(check.cacheSize, 3)
})

t.test('a resolver that is down answers Unknown quickly', async (t) => {
  // A port with nothing listening: UDP answers ICMP unreachable, so no query ever succeeds.
  const probe = createServer().listen(0, '127.0.0.1')
  await new Promise((resolve) => probe.once('listening', resolve))
  const port = (probe.address() as { port: number }).port
  await new Promise((resolve) => probe.close(resolve))
  const check = createDnsCheck({ servers: [`127.0.0.1:${port}`], timeout: 400 })
  const started = Date.now()
  const outcome = await check.check('anything.com')
  t.equal(outcome.result, 'Unknown')
  t.ok(Date.now() - started < 500)
  check.close()
})

t.test('an injected resolver that never settles is cut off at the deadline', async (t) => {
  // Our timers are unref()ed; keep the loop alive as a server would.
  const keep = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(keep))
  const never = new Promise<never>(() => {})
  const check = createDnsCheck({ resolver: { resolveMx: () => never, resolve4: () => never, resolve6: () => never }, timeout: 120 })
  const started = Date.now()
  t.match(await check.check('hang.com'), { result: 'Unknown', reason: 'timeout' })
  t.ok(Date.now() - started < 200)
})

t.test('isGlobalAddress', async (t) => {
  for (const ip of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) t.ok(isGlobalAddress(ip), ip)
  for (const ip of [
    '10.0.0.1',
    '127.0.0.1',
    '169.254.1.1',
    '192.168.1.1',
    '172.16.0.1',
    '100.64.0.1',
    '0.0.0.0',
    '::',
    '::1',
    'fe80::1',
    'fd00::1',
    '2001:db8::1',
    '::ffff:127.0.0.1'
  ])
    t.notOk(isGlobalAddress(ip), ip)
})
