// `user-verification check`: one-off values and whole CSV/JSON Lines files, DNS from a loopback server.
import { existsSync, readFileSync, writeFileSync, mkdtempSync, rmSync, truncateSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { parse } from 'csv-parse/sync'
import t from 'tap'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { startDnsServer, type Zone } from '../fixtures/dns-server.js'
import { startApi } from '../fixtures/create-api.js'
import { startCheckingProxy } from '../fixtures/checking-proxy.js'
import { verifyMany } from '../../lib/verify-many.js'

const zone: Zone = {
  'acme-mail.com': { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }] },
  'gmail.com': { mx: [{ priority: 5, exchange: 'gmail-smtp-in.l.google.com' }] },
  'mailinator.com': { mx: [{ priority: 10, exchange: 'mail.mailinator.com' }] },
  'flaky-mail.com': { rcode: 'SERVFAIL' }
}
const dns = await startDnsServer(structuredClone(zone))
t.teardown(() => dns.close())
const dir = mkdtempSync(join(tmpdir(), 'uv-check-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dnsArgs = ['--dns-servers', dns.server, '--dns-timeout', '1000', '--dns-tries', '1']
let n = 0
const file = (name: string) => join(dir, `${++n}-${name}`)

t.test('one value: readable lines, and --json is the API 200 body without received_data', async (t) => {
  const human = await runCli(['check', 'info@acme-mail.com', '--firstname', 'Jane', '--lastname', 'Qwzxkvbn', ...dnsArgs])
  t.equal(human.code, 0, human.stderr)
  t.match(human.stdout, /syntax\s+Pass/)
  t.match(human.stdout, /dns\s+Pass/)
  t.match(human.stdout, /disposable\s+no/)
  t.match(human.stdout, /role\s+yes/)
  t.match(human.stdout, /free\s+no/)
  t.match(human.stdout, /firstname\s+Jane: looks like a real name \(LABEL_1, confidence 0\.\d+/)
  t.match(human.stdout, /lastname\s+Qwzxkvbn: looks like junk \(LABEL_0, confidence [\d.]+, reason [a-z_]+\)/)

  const typo = await runCli(['check', 'ann@gmial.com', ...dnsArgs])
  t.match(typo.stdout, /suggestion\s+ann@gmail\.com/)

  const api = await startApi({ dnsServers: [dns.server], dnsTimeout: 1000, dnsTries: 1 })
  t.teardown(() => api.close())
  const { key } = await api.key('pro')
  for (const fields of [
    { email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' },
    { email: 'x@mailinator.com' },
    { firstname: 'asdfgh' },
    { email: 'bob@flaky-mail.com', lastname: 'Nguyen' }
  ]) {
    const args = ['check', ...(fields.email ? [fields.email] : [])]
    if (fields.firstname) args.push('--firstname', fields.firstname)
    if (fields.lastname) args.push('--lastname', fields.lastname)
    const cli = await runCli([...args, '--json', ...dnsArgs])
    t.equal(cli.code, 0, cli.stderr)
    const reply = await api.post({ model: 'user_verification', ...fields }, { token: key })
    t.equal(reply.status, 200)
    const { received_data: _received, ...expected } = reply.body
    t.strictSame(JSON.parse(cli.stdout), expected, `same object as the API for ${Object.keys(fields).join('+')}`)
  }

  const none = await runCli(['check', '--json'])
  t.equal(none.code, 2)
  t.match(none.stderr, /give an email address/)
})

const header = 'id,email,first_name,last_name,plan'
const rows = [
  '1,jane.doe@acme-mail.com,Jane,Doe,pro',
  '2,sales@acme-mail.com,Kofi,Mensah,free',
  '3,someone@mailinator.com,asdfgh,qwerty,free',
  '4,bob@flaky-mail.com,Bob,Nguyen,basic',
  '5,ann@gmial.com,Ann,Lee,free',
  '6,surplus@acme-mail.com,Ann,Lee,free,two,extra cells',
  '7,no-domain-at-all,,,free',
  `8,${'a'.repeat(1200)}@acme-mail.com,Ann,Lee,free`,
  '9,short-row@acme-mail.com',
  '10,carol@gmail.com,"Carol, Jr",Smith,pro',
  '11,dave@nomail-here.com,Dave,Jones,pro'
]

t.test('a CSV file: every input column plus the verification columns, bad rows reported by line, one lookup per domain', async (t) => {
  const input = file('signups.csv')
  const output = file('checked.csv')
  writeFileSync(input, `${[header, ...rows].join('\n')}\n`)
  const before = dns.queries.length
  const run = await runCli(['check', '--input', input, '--output', output, '--json', '--concurrency', '8', ...dnsArgs])
  t.equal(run.code, 0, run.stderr)
  const summary = JSON.parse(run.stdout)
  const out = parse(readFileSync(output), { columns: true }) as Array<Record<string, string>>
  t.equal(out.length, 10, 'every readable row is written; the unreadable line is not')
  t.strictSame(Object.keys(out[0]!).slice(0, 5), ['id', 'email', 'first_name', 'last_name', 'plan'])
  t.ok(Object.keys(out[0]!).includes('uv_email_dns'))
  t.strictSame(
    out.map((row) => row.id),
    ['1', '2', '3', '4', '5', '7', '8', '9', '10', '11'],
    'input order kept'
  )
  const byId = new Map(out.map((row) => [row.id, row]))
  t.match(byId.get('1'), {
    uv_email_syntax: 'Pass',
    uv_email_dns: 'Pass',
    uv_firstname_label: 'LABEL_1',
    uv_lastname_label: 'LABEL_1',
    uv_error: ''
  })
  t.match(byId.get('2'), { uv_email_role: 'true' })
  t.match(byId.get('3'), { uv_email_disposable: 'true', uv_firstname_label: 'LABEL_0' })
  t.match(byId.get('4'), { uv_email_dns: 'Unknown' })
  t.match(byId.get('5'), { uv_email_suggestion: 'ann@gmail.com' })
  t.match(byId.get('7'), { uv_email_syntax: 'Fail', uv_firstname_label: '' })
  t.match(byId.get('8'), { uv_error: /1214 characters long/, uv_email_syntax: '' })
  t.match(byId.get('9'), { uv_error: /missing column "first_name"/ })
  t.match(byId.get('10'), { first_name: 'Carol, Jr', uv_email_free: 'true', uv_email_dns: 'Pass' })
  t.match(byId.get('11'), { uv_email_dns: 'Fail' })

  t.match(summary, {
    rows: 10,
    resumed: 0,
    checkedThisRun: 10,
    email: { checked: 8, syntaxFail: 1, dnsFail: 3, dnsUnknown: 1, disposable: 2, role: 1, free: 1, suggestions: 1 },
    rowErrors: 2,
    badRows: { count: 3 }
  })
  // mailinator.com and the typo domain gmial.com are both on the disposable list; asdfgh and qwerty at least are junk.
  t.ok(summary.names.rejected >= 2)
  t.equal(
    summary.names.rejected,
    Object.values(summary.names.rejectedByReason as Record<string, number>).reduce((a, b) => a + b, 0)
  )
  t.strictSame(
    summary.badRows.list.map((bad: { line: number }) => bad.line).sort((a: number, b: number) => a - b),
    [7, 9, 10],
    'the bad rows by their line numbers'
  )
  t.notOk(run.stderr.includes('jane.doe'), 'bad-row reports carry no values')
  // One MX query per distinct domain that reached DNS (gmial.com, nomail-here.com and the others), however many rows share it.
  const mx = dns.queries.slice(before).filter((q) => q.type === 'MX')
  t.equal(mx.filter((q) => q.name === 'acme-mail.com').length, 1, 'acme-mail.com looked up once for three rows')
  t.equal(new Set(mx.map((q) => q.name)).size, mx.length, 'no domain queried twice')

  const human = await runCli(['check', '--input', input, '--output', file('again.csv'), '--quiet', ...dnsArgs])
  t.match(human.stdout, /rows\s+10/)
  t.match(human.stdout, /DNS Fail 3, DNS Unknown 1/)
  t.match(human.stdout, new RegExp(`names\\s+\\d+ checked, ${summary.names.rejected} rejected`))
  t.equal(human.stderr, '', 'nothing on stderr with --quiet')
})

t.test('JSON Lines with column mapping; unparseable lines and non-objects are reported and skipped', async (t) => {
  const input = file('people.jsonl')
  const output = file('people-out.jsonl')
  writeFileSync(
    input,
    [
      JSON.stringify({ mail: 'jane.doe@acme-mail.com', given: 'Jane', family: 'Doe', extra: { nested: true } }),
      '{not json',
      '[1,2]',
      JSON.stringify({ mail: 'x@mailinator.com', given: 'zzzzzz', family: null }),
      '',
      JSON.stringify({ given: 'Ann', family: 'Lee' })
    ].join('\n')
  )
  const run = await runCli([
    'check',
    '--input',
    input,
    '--output',
    output,
    '--email-column',
    'mail',
    '--firstname-column',
    'given',
    '--lastname-column',
    'family',
    '--json',
    ...dnsArgs
  ])
  t.equal(run.code, 0, run.stderr)
  const out = readFileSync(output, 'utf8')
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line))
  t.equal(out.length, 3)
  t.match(out[0], {
    mail: 'jane.doe@acme-mail.com',
    extra: { nested: true },
    uv_email_dns: 'Pass',
    uv_email_disposable: false,
    uv_lastname_label: 'LABEL_1'
  })
  t.match(out[1], { uv_email_disposable: true, uv_firstname_label: 'LABEL_0', uv_lastname_label: null })
  t.match(out[2], { uv_error: 'missing column "mail"' })
  const summary = JSON.parse(run.stdout)
  t.strictSame(
    summary.badRows.list.map((bad: { line: number; problem: string }) => [bad.line, bad.problem]),
    [
      [2, 'not valid JSON'],
      [3, 'not a JSON object'],
      [6, 'missing column "mail"']
    ]
  )
  const wrong = await runCli(['check', '--input', input, '--output', file('x.jsonl'), '--email-column', 'nope'])
  t.equal(wrong.code, 2)
  t.match(wrong.stderr, /column "nope"/)
})

t.test('resumable: a re-run with the same output skips rows already written, a half-written last row included', async (t) => {
  const input = file('many.csv')
  const lines = [header]
  const domains = ['acme-mail.com', 'gmail.com', 'mailinator.com', 'nomail-here.com']
  for (let i = 0; i < 400; i++) lines.push(`${i},user${i}@${domains[i % 4]},Maria,Garcia,free`)
  writeFileSync(input, `${lines.join('\n')}\n`)
  const full = file('full.csv')
  t.equal((await runCli(['check', '--input', input, '--output', full, '--quiet', ...dnsArgs])).code, 0)
  const complete = readFileSync(full, 'utf8')

  const partial = file('partial.csv')
  const cut = complete.split('\n').slice(0, 151).join('\n').length + 1 + 17 // header + 150 rows + a torn 151st row
  writeFileSync(partial, complete.slice(0, cut))
  const resumed = await runCli(['check', '--input', input, '--output', partial, '--json', '--quiet', ...dnsArgs])
  t.equal(resumed.code, 0, resumed.stderr)
  const summary = JSON.parse(resumed.stdout)
  t.equal(summary.resumed, 150)
  t.equal(summary.checkedThisRun, 250)
  t.equal(summary.rows, 400)
  t.equal(summary.email.checked, 400, 'the summary covers the rows of the earlier run too')
  t.equal(readFileSync(partial, 'utf8'), complete, 'the resumed output is byte-identical to one full run')

  const again = JSON.parse((await runCli(['check', '--input', input, '--output', partial, '--json', '--quiet', ...dnsArgs])).stdout)
  t.equal(again.checkedThisRun, 0, 'a finished output is left as it is')
  const over = JSON.parse(
    (await runCli(['check', '--input', input, '--output', partial, '--json', '--quiet', '--overwrite', ...dnsArgs])).stdout
  )
  t.equal(over.checkedThisRun, 400)
})

t.test('progress: plain lines when stderr is not a terminal, a bar with rows/s and ETA on a terminal', async (t) => {
  const slow = await startDnsServer({ 'slow-mail.com': { mx: [{ priority: 1, exchange: 'mx.slow-mail.com' }], delay: 120 } })
  t.teardown(() => slow.close())
  const input = file('slow.csv')
  const lines = ['email']
  // Distinct local parts on distinct subdomain-free domains would be cached; vary the domain so each row waits.
  for (let i = 0; i < 30; i++) lines.push(`p${i}@slow-mail.com`)
  writeFileSync(input, `${lines.join('\n')}\n`)
  const slowArgs = ['--dns-servers', slow.server, '--dns-timeout', '2000', '--dns-unknown-ttl', '1', '--dns-positive-ttl', '1']
  const plain = await runCli([
    'check',
    '--input',
    input,
    '--output',
    file('slow.csv'),
    '--concurrency',
    '1',
    '--progress-interval',
    '1',
    ...slowArgs
  ])
  t.equal(plain.code, 0, plain.stderr)
  t.match(plain.stderr, /check: \d+ rows, \d+% of the input, \d+ rows\/s/)

  // `script` gives the command a pseudo-terminal; spawned asynchronously so this process's DNS server keeps answering.
  const command = `${process.execPath} ${cliPath} check --input ${input} --output ${file('tty.csv')} --concurrency 1 ${slowArgs.join(' ')}`
  const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['ignore', 'pipe', 'pipe'] })
  let ttyOut = ''
  child.stdout.on('data', (chunk: Buffer) => (ttyOut += chunk))
  const [status] = (await once(child, 'close')) as [number | null]
  const tty = { status, stdout: ttyOut }
  t.equal(tty.status, 0)
  t.match(tty.stdout, /\d+% \| \d+ rows \| \d+ rows\/s \| ETA/, 'the bar shows rows, rows/s and ETA')
})

/** `check --input --output --server --key --concurrency --json --quiet`. */
const serverCheck = (input: string, output: string, url: string, key: string, concurrency: number) =>
  runCli([
    'check',
    '--input',
    input,
    '--output',
    output,
    '--server',
    url,
    '--key',
    key,
    '--concurrency',
    String(concurrency),
    '--json',
    '--quiet'
  ])

t.test('--server: rows go through a running server; a 402 stops cleanly with the count and how to resume', async (t) => {
  const server = await startServe(['--store', `sqlite://${file('store.sqlite')}`, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => server.stop())
  t.ok(server.demoKey)
  // The CLI's requests go through a proxy that checks each answer against the OpenAPI document.
  const proxy = await startCheckingProxy(new URL(server.url).origin)
  t.teardown(() => proxy.close())
  const input = file('quota.csv')
  const lines = ['email,firstname']
  for (let i = 0; i < 20; i++) lines.push(`user${i}@acme-mail.com,Maria`)
  writeFileSync(input, `${lines.join('\n')}\n`)
  const output = file('quota-out.csv')
  const run = await serverCheck(input, output, proxy.url, server.demoKey!, 1)
  t.equal(run.code, 3, 'exit 3: stopped early, resumable')
  const summary = JSON.parse(run.stdout)
  t.equal(summary.rows, 12, 'the free plan (25 units) holds 12 two-field rows')
  t.match(summary.stopped, { status: 402, reason: /402 You have to upgrade your plan after 12 rows/, resume: /run the same command again/ })
  const out = parse(readFileSync(output), { columns: true }) as Array<Record<string, string>>
  t.equal(out.length, 12)
  t.match(out[0], { email: 'user0@acme-mail.com', uv_email_dns: 'Pass', uv_firstname_label: 'LABEL_1' })

  const badKey = await runCli([
    'check',
    '--input',
    input,
    '--output',
    output,
    '--server',
    proxy.url,
    '--key',
    'uv_nope',
    '--json',
    '--quiet'
  ])
  t.equal(badKey.code, 3)
  t.match(JSON.parse(badKey.stdout).stopped, { status: 401 })
  t.equal(statSync(output).size > 0, true)
  const statuses = proxy.answers.map((answer) => answer.status)
  t.same(statuses.slice(0, 13), [...Array(12).fill(200), 402], 'the proxy saw the 200s and the 402 (concurrency 1)')
  t.ok(statuses.length > 13 && statuses.slice(13).every((status) => status === 401), 'then only 401s for the bad key')
  t.strictSame(proxy.mismatches, [], 'every answer the CLI received matches the OpenAPI document')
})

t.test('verifyMany: an async iterable in input order, one verifier for all rows', async (t) => {
  async function* source() {
    for (let i = 0; i < 50; i++) yield { email: `u${i}@acme-mail.com`, firstname: i % 2 ? 'Jane' : undefined, id: i }
  }
  const before = dns.count('acme-mail.com', 'MX')
  const seen: number[] = []
  for await (const item of verifyMany(source(), { dnsServers: [dns.server], concurrency: 10, dnsCache: { positiveTtl: 60_000 } })) {
    seen.push(item.input.id)
    t.equal(item.result?.email_verification?.dnsCheck, 'Pass')
    t.equal(item.result?.request_count, item.input.id % 2 ? 2 : 1)
  }
  t.strictSame(
    seen,
    Array.from({ length: 50 }, (_, i) => i)
  )
  t.equal(dns.count('acme-mail.com', 'MX') - before, 1, 'one MX query for 50 rows of one domain')
})

t.test('a damaged resumed file is refused instead of mixing columns', async (t) => {
  const input = file('cols.csv')
  writeFileSync(input, 'email\nx@acme-mail.com\n')
  const output = file('cols-out.csv')
  writeFileSync(output, 'something,else\n1,2\n')
  const run = await runCli(['check', '--input', input, '--output', output])
  t.equal(run.code, 2)
  t.match(run.stderr, /other columns than this input produces; give --overwrite/)
  truncateSync(output, 0)
  t.equal((await runCli(['check', '--input', input, '--output', output, '--quiet', ...dnsArgs])).code, 0)
})

t.test(
  '--server resumed after a 402 at concurrency 4 charges no row twice: every 200 received is kept (double charge on resume)',
  async (t) => {
    // Row 1 costs 3 units and its email's domain answers DNS after 1200 ms (the server's DNS deadline is 3000 ms); rows 2-4 cost 1 unit each and answer at once.
    // On a 5-unit plan rows 2-4 take 3 units while row 1 waits for DNS, so row 1 gets 402 with rows 2-4 charged (200).
    const slowDns = await startDnsServer({
      ...structuredClone(zone),
      'slow-mail.com': { mx: [{ priority: 10, exchange: 'mx.slow-mail.com' }], delay: 1200 }
    })
    t.teardown(() => slowDns.close())
    const store = `sqlite://${file('charge.sqlite')}`
    const server = await startServe(['--store', store, '--plans', 'free=5,basic=100', '--dns-servers', slowDns.server, '--quiet'])
    t.teardown(() => server.stop())
    // The CLI's requests go through a proxy that checks each answer against the OpenAPI document and counts the 200s.
    const proxy = await startCheckingProxy(new URL(server.url).origin)
    t.teardown(() => proxy.close())
    const input = file('charge.csv')
    const rows = ['email,firstname,lastname', 'ann@slow-mail.com,Ann,Lee']
    for (let i = 0; i < 7; i++) rows.push(`,${['Maria', 'Jonas', 'Priya', 'Kenji', 'Olga', 'Amara', 'Lucas'][i]},`)
    writeFileSync(input, `${rows.join('\n')}\n`)
    const units = 3 + 7
    const output = file('charge-out.csv')
    const check = () => serverCheck(input, output, proxy.url, server.demoKey!, 4)

    const first = await check()
    t.equal(first.code, 3, `stopped by the 402 (${first.stderr})`)
    const stopped = JSON.parse(first.stdout)
    t.match(stopped.stopped, { status: 402 })
    const charged = proxy.answers.filter((answer) => answer.status === 200).length
    t.equal(charged, 3, 'rows 2-4 were answered 200 (charged) while row 1 got its 402')
    t.match(
      stopped.stopped.reason,
      /3 rows after it in the input were answered and are kept/,
      'the summary says the answered rows are kept'
    )
    const kept = readFileSync(`${output}.answered`, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line))
    t.strictSame(
      kept.map((answer) => [answer.index, answer.fields.firstname, answer.columns.uv_firstname_label]),
      [
        [1, 'Maria', 'LABEL_1'],
        [2, 'Jonas', 'LABEL_1'],
        [3, 'Priya', 'LABEL_1']
      ],
      'the three charged rows are kept with their results before the run exits'
    )

    t.equal((await runCli(['keys', 'plan', server.demoKeyId!, 'basic', '--store', store])).code, 0)
    const second = await check()
    t.equal(second.code, 0, second.stderr)
    const out = parse(readFileSync(output), { columns: true }) as Array<Record<string, string>>
    t.strictSame(
      out.map((row) => row.firstname),
      ['Ann', 'Maria', 'Jonas', 'Priya', 'Kenji', 'Olga', 'Amara', 'Lucas'],
      'every row once, in input order'
    )
    t.ok(
      out.every((row) => row.uv_firstname_label === 'LABEL_1'),
      'the rows kept from the first run carry their results'
    )
    const answered = proxy.answers.filter((answer) => answer.status === 200).length
    t.equal(answered, 8, 'each row was answered 200 once over both runs: none was sent again')
    const usage = JSON.parse((await runCli(['usage', server.demoKeyId!, '--store', store, '--json'])).stdout)
    t.equal(usage.used, units, 'the account was charged each row’s units once')
    t.strictSame(proxy.mismatches, [], 'every answer the CLI received matches the OpenAPI document')
    t.equal(existsSync(`${output}.answered`), false, 'the kept answers are gone once written')
  }
)
