// The CLI as users and scripts run it: keys, usage, serve with its demo key, shutdown and crash safety.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { runCli, startServe } from '../fixtures/spawn-cli.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-cli-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())
let n = 0
const freshStore = () => `sqlite://${join(dir, `store-${++n}.sqlite`)}`
const body = JSON.stringify({ model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' })

async function post(url: string, key: string, payload = body) {
  const response = await checkedFetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': key },
    body: payload
  })
  return { status: response.status, body: (await response.json()) as any }
}

t.test('keys create --json prints {"id","key","plan","label","account"} on one line; list/plan/revoke/usage', async (t) => {
  const store = freshStore()
  const created = await runCli(['keys', 'create', '--plan', 'pro', '--label', 'ci bot', '--store', store, '--json'])
  t.equal(created.code, 0, created.stderr)
  t.equal(created.stdout.trim().split('\n').length, 1)
  const issued = JSON.parse(created.stdout)
  t.strictSame(Object.keys(issued), ['id', 'key', 'plan', 'label', 'account'])
  t.match(issued.account, /^acct_[0-9a-f]{12}$/)
  t.match(issued.key, /^uv_[A-Za-z0-9_-]{43}$/)
  t.match(issued.id, /^key_[0-9a-f]{12}$/)
  t.equal(issued.plan, 'pro')
  t.equal(issued.label, 'ci bot')

  const listed = JSON.parse((await runCli(['keys', 'list', '--store', store, '--json'])).stdout)
  t.equal(listed.length, 1)
  t.equal(listed[0].id, issued.id)
  t.notOk(JSON.stringify(listed).includes(issued.key), 'the key is never shown again')
  t.notOk('hash' in listed[0])

  const human = await runCli(['keys', 'list', '--store', store])
  t.match(human.stdout, issued.id)
  t.match(human.stdout, /active/)

  const planned = await runCli(['keys', 'plan', issued.id, 'basic', '--store', store, '--json'])
  t.strictSame(JSON.parse(planned.stdout), { id: issued.id, account: issued.account, plan: 'basic' })
  const usage = JSON.parse((await runCli(['usage', issued.id, '--store', store, '--json'])).stdout)
  t.match(usage, { id: issued.id, account: issued.account, plan: 'basic', used: 0, limit: 30000, remaining: 30000 })
  t.match(usage.period, /^\d{4}-\d{2}$/)

  const revoked = await runCli(['keys', 'revoke', issued.id, '--store', store, '--json'])
  t.equal(JSON.parse(revoked.stdout).id, issued.id)
  t.type(JSON.parse(revoked.stdout).revokedAt, 'string')
  const afterRevoke = JSON.parse((await runCli(['keys', 'list', '--store', store, '--json'])).stdout)
  t.type(afterRevoke[0].revokedAt, 'string')
})

t.test('mistakes: clear messages and exit codes', async (t) => {
  const store = freshStore()
  const badPlan = await runCli(['keys', 'create', '--plan', 'gold', '--store', store])
  t.equal(badPlan.code, 1)
  t.match(badPlan.stderr, /unknown plan "gold"/)
  const noId = await runCli(['keys', 'revoke', 'key_000000000000', '--store', store])
  t.equal(noId.code, 1)
  t.match(noId.stderr, /no key with id/)
  const unknown = await runCli(['frobnicate'])
  t.equal(unknown.code, 2)
  t.match(unknown.stderr, /Usage:/)
  const badFlag = await runCli(['keys', 'list', '--bogus'])
  t.equal(badFlag.code, 2)
  const badStore = await runCli(['keys', 'list', '--store', 'ftp://nowhere'])
  t.equal(badStore.code, 1)
  t.match(badStore.stderr, /sqlite:\/\//)
})

t.test('serve prints its URL and a working demo key once; SIGTERM exits 0', async (t) => {
  const store = freshStore()
  const server = await startServe(['--store', store, '--dns-servers', dns.server])
  t.teardown(() => server.stop('SIGKILL'))
  t.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/api\/v1$/)
  t.ok(server.demoKey, 'a demo key is printed')
  const reply = await post(server.url, server.demoKey!)
  t.equal(reply.status, 200)
  t.equal(reply.body.request_count, 3)
  t.equal(reply.body.email_verification.dnsCheck, 'Pass')
  const health = await checkedFetch(server.url.replace('/api/v1', '/healthz'))
  t.equal(health.status, 200)
  const ready = await checkedFetch(server.url.replace('/api/v1', '/readyz'))
  t.strictSame(await ready.json(), { ready: true, store: true, model: true })
  const metrics = await (await checkedFetch(server.url.replace('/api/v1', '/metrics'))).text()
  t.match(metrics, /uv_responses_total\{status="200"\} 1/)
  const missing = await checkedFetch(server.url.replace('/api/v1', '/nothing'))
  t.strictSame(await missing.json(), { detail: 'Not Found' })
  t.equal(await server.stop('SIGTERM'), 0)
  for (const secret of [server.demoKey!, 'jane.doe@acme-mail.com', 'Jane', 'Doe']) {
    t.notOk(server.stdout().includes(secret), 'the JSON logs hold no keys, emails or names')
  }
  t.ok(
    server
      .stdout()
      .split('\n')
      .filter(Boolean)
      .every((line) => JSON.parse(line).msg !== undefined),
    'logs are JSON lines'
  )

  const again = await startServe(['--store', store, '--dns-servers', dns.server])
  t.teardown(() => again.stop('SIGKILL'))
  t.equal(again.demoKey, undefined, 'no second demo key on a store that has keys')
  t.equal(await again.stop('SIGINT'), 0)
  const none = await startServe(['--store', freshStore(), '--no-demo-key'])
  t.teardown(() => none.stop('SIGKILL'))
  t.equal(none.demoKey, undefined)
  await none.stop()
})

t.test('kill -9 right after a 200: the units are still counted after restart', async (t) => {
  const store = freshStore()
  const server = await startServe(['--store', store, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => server.stop('SIGKILL'))
  const reply = await post(server.url, server.demoKey!)
  t.equal(reply.status, 200)
  await server.stop('SIGKILL')
  const usage = JSON.parse((await runCli(['usage', server.demoKeyId!, '--store', store, '--json'])).stdout)
  t.equal(usage.used, 3)
})

t.test('env variables configure serve', async (t) => {
  const store = freshStore()
  const server = await startServe(['--no-demo-key'], { UV_STORE: store, HOST: '127.0.0.1', UV_DNS_SERVERS: dns.server })
  t.teardown(() => server.stop('SIGKILL'))
  const created = JSON.parse((await runCli(['keys', 'create', '--plan', 'free', '--json'], { UV_STORE: store })).stdout)
  const reply = await post(server.url, created.key)
  t.equal(reply.status, 200)
  t.equal(reply.body.email_verification.dnsCheck, 'Pass', 'UV_DNS_SERVERS was used')
  await server.stop()
})

t.test('DNS cache flags reach the cache: --dns-positive-ttl 1 re-queries, the default does not', async (t) => {
  const store = freshStore()
  const queries = () => dns.count('acme-mail.com', 'MX')
  const cached = await startServe(['--store', store, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => cached.stop('SIGKILL'))
  const before = queries()
  for (let i = 0; i < 2; i++)
    t.equal((await post(cached.url, cached.demoKey!, JSON.stringify({ model: 'user_verification', email: 'a@acme-mail.com' }))).status, 200)
  t.equal(queries() - before, 1, 'one MX query for two checks with the default TTLs')
  await cached.stop()

  const uncached = await startServe([
    '--store',
    freshStore(),
    '--dns-servers',
    dns.server,
    '--dns-positive-ttl',
    '1',
    '--dns-cache-size',
    '10',
    '--quiet'
  ])
  t.teardown(() => uncached.stop('SIGKILL'))
  const start = queries()
  for (let i = 0; i < 2; i++) {
    t.equal(
      (await post(uncached.url, uncached.demoKey!, JSON.stringify({ model: 'user_verification', email: 'a@acme-mail.com' }))).status,
      200
    )
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  t.equal(queries() - start, 2, 'a 1 ms positive TTL re-queries')
  const bad = await runCli(['serve', '--dns-unknown-ttl', '0'])
  t.equal(bad.code, 2)
  t.match(bad.stderr, /^user-verification: --dns-unknown-ttl must be an integer from 1 to 2147483647, got "0"\n/)
})
