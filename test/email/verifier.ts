// Tests createEmailVerifier end to end against a loopback DNS server: fields, deadline, options, MX learning.
import t from 'tap'
import { createEmailVerifier } from '../../lib/email/verifier.js'
import { startDnsServer, type Zone } from '../fixtures/dns-server.js'

const zone: Zone = {
  'company.com': { mx: [{ priority: 10, exchange: 'mx.company.com' }] },
  'xn--bcher-kva.de': { mx: [{ priority: 10, exchange: 'mx.xn--bcher-kva.de' }] },
  'silent.com': { silent: true },
  // Two listed disposable domains (from different registrable domains) share one mail host...
  'mailinator.com': { mx: [{ priority: 10, exchange: 'inbound.tempmail-host.net' }] },
  'guerrillamail.com': { mx: [{ priority: 10, exchange: 'inbound.tempmail-host.net' }] },
  // ...a new domain on no list uses that host; another uses Google's MX, and one a host inside a listed domain.
  'brand-new-temp.xyz': { mx: [{ priority: 10, exchange: 'inbound.tempmail-host.net' }] },
  'startup-on-google.com': { mx: [{ priority: 1, exchange: 'aspmx.l.google.com' }] },
  'fresh-temp.xyz': { mx: [{ priority: 10, exchange: 'mx1.mailinator.com' }] }
}

t.test('full result, trimmed input, IDN queried as punycode', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const v = createEmailVerifier({ dnsServers: [dns.server], dnsTimeout: 500 })
  t.teardown(() => v.close())
  t.same(await v.verify('  Info@Company.COM \n'), {
    emailAddress: 'Info@Company.COM',
    'the service': false,
    disposable: false,
    username: 'Info',
    domain: 'company.com',
    dnsCheck: 'Pass',
    syntexCheck: 'Pass',
    suggestion: null,
    role: true,
    free: false
  })
  const idn = await v.verify('anna@Bücher.de')
  t.match(idn, { domain: 'bücher.de', dnsCheck: 'Pass', syntexCheck: 'Pass' })
  t.equal(dns.count('xn--bcher-kva.de', 'MX'), 1)
  t.match(await v.verify('john@gmial.com'), { suggestion: 'john@gmail.com' })
  t.match(await v.verify('jane@gmail.com'), { free: true, disposable: false, suggestion: null })
  t.match(await v.verify('x@mailinator.com'), { 'the service': true, disposable: true })
  t.match(await v.verify('x@sub.mailinator.com'), { disposable: true }, 'subdomain of a listed domain')
})

t.test('no @ and invalid domains fail DNS without a query', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const v = createEmailVerifier({ dnsServers: [dns.server], dnsTimeout: 300 })
  t.teardown(() => v.close())
  t.match(await v.verify('nobody'), { username: 'nobody', domain: '', dnsCheck: 'Fail', syntexCheck: 'Fail', role: false })
  t.match(await v.verify('a@b'), { dnsCheck: 'Fail' })
  t.match(await v.verify('a@[1.2.3.4]'), { dnsCheck: 'Fail', syntexCheck: 'Fail' })
  t.match(await v.verify('a@localhost.localhost'), { dnsCheck: 'Fail' })
  t.match(await v.verify('bad..local@company.com'), { syntexCheck: 'Fail', dnsCheck: 'Pass' }, 'domain still checked')
  t.equal(dns.queries.length, 1)
})

t.test('a silent or hanging resolver never holds verify past the deadline', async (t) => {
  const keep = setInterval(() => {}, 1000)
  t.teardown(() => clearInterval(keep))
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const v = createEmailVerifier({ dnsServers: [dns.server], dnsTimeout: 200 })
  t.teardown(() => v.close())
  let started = Date.now()
  t.match(await v.verify('a@silent.com'), { dnsCheck: 'Unknown', syntexCheck: 'Pass', disposable: false, username: 'a' })
  t.ok(Date.now() - started < 260, 'silent server')
  const never = new Promise<never>(() => {})
  const hang = createEmailVerifier({ resolver: { resolveMx: () => never, resolve4: () => never, resolve6: () => never }, dnsTimeout: 100 })
  started = Date.now()
  const results = await Promise.all([hang.verify('a@x-one.com'), hang.verify('b@mailinator.com')])
  t.ok(Date.now() - started < 160, 'hanging resolver')
  t.same(
    results.map((r) => [r.dnsCheck, r.disposable]),
    [
      ['Unknown', false],
      ['Unknown', true]
    ]
  )
  const rejecting = createEmailVerifier({
    resolver: {
      resolveMx: async () => {
        throw new Error('boom')
      },
      resolve4: async () => [],
      resolve6: async () => []
    }
  })
  t.match(await rejecting.verify('a@company.com'), { dnsCheck: 'Unknown' })
  hang.close()
  rejecting.close()
})

t.test('MX learning flags a new domain on a disposable mail host, never a shared platform', async (t) => {
  const dns = await startDnsServer(zone)
  t.teardown(() => dns.close())
  const v = createEmailVerifier({ dnsServers: [dns.server], dnsTimeout: 500 })
  t.teardown(() => v.close())
  t.match(await v.verify('a@brand-new-temp.xyz'), { disposable: false }, 'not yet learned')
  await v.verify('a@mailinator.com')
  t.match(await v.verify('a@startup-on-google.com'), { disposable: false })
  await v.verify('a@guerrillamail.com')
  // brand-new-temp.xyz is cached in DNS; learning uses the cached MX answer too.
  t.match(await v.verify('b@brand-new-temp.xyz'), { disposable: true, 'the service': true }, 'learned after two listed domains')
  t.match(await v.verify('a@fresh-temp.xyz'), { disposable: true }, 'MX host inside a listed domain')
  t.match(await v.verify('a@startup-on-google.com'), { disposable: false }, 'Google MX is never disposable')
  const off = createEmailVerifier({ dnsServers: [dns.server], dnsTimeout: 500, learnMx: false })
  t.match(await off.verify('a@fresh-temp.xyz'), { disposable: false }, 'learnMx: false')
  off.close()
})

t.test('disposable allow and block options', async (t) => {
  const v = createEmailVerifier({
    resolver: { resolveMx: async () => [{ exchange: 'mx.x.com', priority: 1 }], resolve4: async () => [], resolve6: async () => [] },
    disposable: { allow: ['mailinator.com'], block: ['Evil-Temp.com', 'com'] }
  })
  t.match(await v.verify('a@mailinator.com'), { disposable: false })
  t.match(await v.verify('a@x.evil-temp.com'), { disposable: true })
  t.match(await v.verify('a@company.com'), { disposable: false }, 'a public suffix is never blocked')
  v.close()
})

t.test('option checks', async (t) => {
  for (const o of [{}, { dnsTimeout: undefined }, Object.create(null)]) t.doesNotThrow(() => createEmailVerifier(o).close())
  const bad: unknown[] = [
    { dnsTimeout: 0 },
    { dnsTimeout: '3000' },
    { dnsTimeout: Infinity },
    { dnsTries: 1.5 },
    { dnsTries: 0 },
    { dnsServers: [] },
    { dnsServers: ['dns.google'] },
    { dnsServers: ['1.1.1.1:99999'] },
    { dnsServers: '1.1.1.1' },
    { resolver: {} },
    { dnsCache: { max: 0 } },
    { dnsCache: { positiveTtl: -1 } },
    { dnsCache: 5 },
    { disposable: { allow: 'x.com' } },
    { disposable: { block: [1] } },
    { learnMx: 'yes' },
    { now: 5 },
    { resolver: { resolveMx() {}, resolve4() {}, resolve6() {} }, dnsServers: ['1.1.1.1'] }
  ]
  for (const o of bad) {
    // @ts-expect-error deliberately wrong option types
    t.throws(() => createEmailVerifier(o), /^user-verification: `[^`]+` must be .+, got .+\. .+/, JSON.stringify(o))
  }
  t.doesNotThrow(() => createEmailVerifier({ dnsServers: ['1.1.1.1', '127.0.0.1:5353', '[::1]:53', '::1'] }).close())
})
