// Tests the merged disposable list: size, coverage of each source, parent matching, and no flags on real domains.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { DisposableDomains, isDisposableDomain } from '../../lib/email/disposable-domains.js'
import { DisposableMx } from '../../lib/email/disposable-mx.js'

const require = createRequire(import.meta.url)
const provenance = JSON.parse(readFileSync(new URL('../../lib/data/disposable-provenance.json', import.meta.url), 'utf8')) as {
  total: number
  sources: Array<{ id: string; entries: number; valid: number }>
  dropped: Record<string, { count: number; domains: string[] }>
}
const legit = readFileSync(new URL('../fixtures/legit-domains.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))

function stride<T>(items: T[], n: number): T[] {
  const step = Math.max(1, Math.floor(items.length / n))
  return items.filter((_, i) => i % step === 0).slice(0, n)
}

t.test('the list holds >= 100,000 domains and its provenance adds up', async (t) => {
  const d = new DisposableDomains()
  t.ok(d.size >= 100_000, `${d.size} domains`)
  t.equal(d.size, provenance.total)
  t.ok(provenance.sources.length >= 5)
  t.ok(readFileSync(new URL('../../lib/data/disposable-domains.txt', import.meta.url)).length < 8 * 1024 * 1024)
})

t.test('0 flags on >= 1,000 legitimate domains', async (t) => {
  t.ok(legit.length >= 1000, `${legit.length} legitimate domains`)
  t.same(
    legit.filter((x) => isDisposableDomain(x)),
    []
  )
  t.same(
    legit.filter((x) => isDisposableDomain(`mail.${x}`)),
    [],
    'nor their subdomains'
  )
})

t.test('a sample of each source is flagged (1,000 per large source)', async (t) => {
  // Entries the build removed on purpose (public suffix, public sector, allow-lists, contested).
  const dropped = new Set(Object.values(provenance.dropped).flatMap((x) => x.domains))
  const mailchecker = require('mailchecker/platform/node') as { blacklist(): Set<string> }
  const samples: Record<string, string[]> = {
    'disposable-email-domains': stride(require('disposable-email-domains/index.json') as string[], 1000),
    'disposable-email-domains wildcard': require('disposable-email-domains/wildcard.json') as string[],
    'disposable-email-domains-js': stride(
      require('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json') as string[],
      1000
    ),
    mailchecker: stride([...mailchecker.blacklist()], 1000),
    fakefilter: stride(Object.keys((require('fakefilter/json/data.json') as { domains: object }).domains), 1000),
    'burner-email-providers': stride(
      readFileSync(require.resolve('burner-email-providers/emails.txt'), 'utf8')
        .split('\n')
        .filter((l) => l.includes('.')),
      1000
    )
  }
  // The ivolo package (disposable-email-domains) is a noisy source: its entries need a second
  // family, so a few of a sample may be left out by the consensus rule.
  const noisy = new Set(['disposable-email-domains', 'disposable-email-domains wildcard'])
  for (const [name, sample] of Object.entries(samples)) {
    const missed = sample.map((s) => s.trim().toLowerCase()).filter((s) => !dropped.has(s) && !isDisposableDomain(s))
    if (noisy.has(name)) t.ok(missed.length <= sample.length * 0.01, `${name}: ${missed.length} of ${sample.length} left out by consensus`)
    else t.same(missed, [], `${name}: ${sample.length} sampled`)
  }
})

t.test('matching covers parents above the public suffix, and the allow-list wins', async (t) => {
  const d = new DisposableDomains({ allow: ['mailinator.com'], block: ['temp.example-block.net', 'co.uk', 'github.io'] })
  t.equal(isDisposableDomain('a.b.mailinator.com'), true)
  t.equal(isDisposableDomain('MAILINATOR.COM.'), true)
  t.equal(d.isDisposable('mailinator.com'), false, 'extra allow')
  t.equal(d.match('x.temp.example-block.net'), 'temp.example-block.net')
  t.equal(d.isDisposable('bbc.co.uk'), false, 'a public suffix cannot be blocked')
  t.equal(d.isDisposable('someone.github.io'), false, 'nor a private one')
  t.equal(isDisposableDomain('gmail.com'), false)
  t.equal(isDisposableDomain('mail.google.com'), false)
  t.equal(isDisposableDomain('com'), false)
})

t.test('MX learning needs two registrable domains and skips shared platforms', async (t) => {
  const mx = new DisposableMx({ isListed: (x) => x === 'listed-one.com' })
  mx.observe('a.temp-one.com', ['mx.shared-temp.net'])
  mx.observe('b.temp-one.com', ['mx.shared-temp.net'])
  t.notOk(mx.isDisposableHost('mx.shared-temp.net'), 'subdomains are no evidence (anyone may create them)')
  mx.observe('temp-one.com', ['mx.shared-temp.net'])
  t.notOk(mx.isDisposableHost('mx.shared-temp.net'), 'one registrable domain is not enough')
  mx.observe('temp-two.org', ['MX.shared-temp.net.'])
  t.ok(mx.isDisposableHost('mx.shared-temp.net'))
  t.ok(mx.isDisposableMxSet(['mx.shared-temp.net']))
  for (let i = 0; i < 5; i++)
    mx.observe(`temp-${i}.com`, ['aspmx.l.google.com', 'x.mail.protection.outlook.com', 'route1.mx.cloudflare.net'])
  t.notOk(mx.isDisposableHost('aspmx.l.google.com'))
  t.notOk(mx.isDisposableMxSet(['mx.shared-temp.net', 'aspmx.l.google.com']), 'a shared platform in the set vetoes')
  t.ok(mx.isDisposableHost('mx.listed-one.com'), 'host inside a listed domain')
  t.notOk(mx.isDisposableMxSet([]))
})
