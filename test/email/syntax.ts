// Tests the syntax check against the public-suite corpus and the rules of CONTRIBUTING.md#email-semantics one by one.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { checkEmailSyntax } from '../../lib/email/syntax.js'
import { splitEmail } from '../../lib/email/split.js'
import { toAsciiDomain } from '../../lib/email/domain.js'

interface Case {
  address: string
  expected: 'Pass' | 'Fail'
  source: string
}
const corpus = JSON.parse(readFileSync(new URL('../fixtures/email-syntax-corpus.json', import.meta.url), 'utf8')) as { cases: Case[] }

t.test('every corpus case gets its expected verdict', async (t) => {
  t.ok(corpus.cases.length >= 300, 'corpus has >= 300 cases')
  const wrong = corpus.cases
    .filter((c) => checkEmailSyntax(c.address) !== c.expected)
    .map((c) => `${JSON.stringify(c.address)} expected ${c.expected} (${c.source})`)
  t.same(wrong, [])
})

t.test('rules', async (t) => {
  const pass = [
    'a@b.co',
    '"john doe"@example.com',
    '"a\\"b"@example.com',
    'üser@bücher.de',
    'user@xn--bcher-kva.de',
    'user@EXAMPLE.COM',
    'x@sub.domain.example.co.uk',
    `${'a'.repeat(64)}@example.com`,
    'a@123.com',
    'a@a-b.com'
  ]
  for (const a of pass) t.equal(checkEmailSyntax(a), 'Pass', a)
  const fail = [
    '',
    'plain',
    '@example.com',
    'a@',
    'a@b',
    'a@b.c',
    'a@1.2.3.4',
    'a@[1.2.3.4]',
    'a@b.123',
    'a(c)@b.com',
    'a @b.com',
    ' a@b.com',
    'a@b.com ',
    'a\t@b.com',
    'a..b@c.com',
    '.a@b.com',
    'a.@b.com',
    'a@-b.com',
    'a@b-.com',
    'a@b_c.com',
    'a@b..com',
    'a@b.com.',
    `${'a'.repeat(65)}@example.com`,
    `${'é'.repeat(33)}@example.com`,
    'a@xn--0.com',
    'a@ab--cd.com',
    'a\u200b@b.com',
    'a@b\u200b.com',
    'a\u202e@b.com',
    '"a\nb"@c.com',
    '""@b.com',
    'a@b.com\u00a9',
    `a@${'b'.repeat(64)}.com`,
    `a@${Array.from({ length: 5 }, () => 'b'.repeat(60)).join('.')}.com`
  ]
  for (const a of fail) t.equal(checkEmailSyntax(a), 'Fail', JSON.stringify(a))
})

t.test('octets, not characters, count toward the limits', async (t) => {
  t.equal(checkEmailSyntax(`${'é'.repeat(32)}@example.com`), 'Pass', '64 octets')
  t.equal(checkEmailSyntax(`${'é'.repeat(32)}a@example.com`), 'Fail', '65 octets')
  const local = 'a'.repeat(64)
  const domain = `${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(57)}.com`
  t.equal(`${local}@${domain}`.length, 254)
  t.equal(checkEmailSyntax(`${local}@${domain}`), 'Pass', '254 octets')
  t.equal(checkEmailSyntax(`${local}@${domain.replace('com', 'coms')}`), 'Fail', '255 octets')
})

t.test('Unicode is compared in NFC', async (t) => {
  const composed = 'jos\u00e9@example.com'
  const decomposed = 'jose\u0301@example.com'
  t.equal(checkEmailSyntax(composed), 'Pass')
  t.equal(checkEmailSyntax(decomposed), 'Pass')
  t.equal(checkEmailSyntax('a@jose\u0301.com'), 'Pass')
  t.equal(toAsciiDomain('jose\u0301.com'), toAsciiDomain('jos\u00e9.com'))
})

t.test('toAsciiDomain maps IDN with UTS-46 and refuses invalid IDNA', async (t) => {
  t.equal(toAsciiDomain('Bücher.DE'), 'xn--bcher-kva.de')
  t.equal(toAsciiDomain('ｇｍａｉｌ.com'), 'gmail.com')
  t.equal(toAsciiDomain('臺網中心.tw'), 'xn--fiqq24b10vi0d.tw')
  t.equal(toAsciiDomain('xn--0.tld'), null)
  t.equal(toAsciiDomain('⒈wouldbeinvalid.com'), null)
  t.equal(toAsciiDomain('i❤.ws'), null, 'symbols are not IDNA2008')
  t.equal(toAsciiDomain('localhost'), null)
})

t.test('splitEmail splits at the last @ and lower-cases the domain', async (t) => {
  t.same(splitEmail('Jo@Example.COM'), { username: 'Jo', domain: 'example.com' })
  t.same(splitEmail('"a@b"@X.org'), { username: '"a@b"', domain: 'x.org' })
  t.same(splitEmail('no-at-sign'), { username: 'no-at-sign', domain: '' })
  t.same(splitEmail('trailing@'), { username: 'trailing', domain: '' })
})
