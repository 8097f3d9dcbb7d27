// Fault: the name model fails to load or throws; requests with names get 503 and their units back, email-only ones still succeed.
import { spawn } from 'node:child_process'
import { cpSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { startApi } from '../fixtures/create-api.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { byStatus, grantedUnits, runLoad, shoot } from '../fixtures/load.js'
import { runCli } from '../fixtures/spawn-cli.js'
import { testVerifiers, testZone } from '../fixtures/test-verifiers.js'
import { periodOf } from '../../lib/quota/plans.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const emailOnly = { model: 'user_verification', email: 'jane.doe@acme-mail.com' }
const withNames = { model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' }
const nameOnly = { model: 'user_verification', lastname: 'Doe' }

t.test('the shipped model file is corrupt: the server starts, names get 503 with units back, email-only works', async (t) => {
  // A copy of the built package whose model fails its checksum, run as a user would run it.
  const dir = t.testdir()
  cpSync(join(root, 'dist'), join(dir, 'dist'), { recursive: true })
  symlinkSync(join(root, 'node_modules'), join(dir, 'node_modules'), 'dir')
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ type: 'module' }))
  writeFileSync(join(dir, 'dist/lib/data/name-model.json'), '{"format":"user-verification/name-model","version":1,"checksum":"0"}')
  const cli = join(dir, 'dist/server/cli.js')
  const store = `sqlite://${join(dir, 'store.sqlite')}`
  const dns = await startDnsServer(structuredClone(testZone))
  t.teardown(() => dns.close())

  const child = spawn(
    process.execPath,
    [cli, 'serve', '--port', '0', '--store', store, '--dns-servers', dns.server, '--no-demo-key', '--quiet'],
    { stdio: ['ignore', 'pipe', 'pipe'] }
  )
  t.teardown(() => child.kill('SIGKILL'))
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no URL after 20 s: ${stderr}`)), 20_000)
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk
      const match = /listening on (http:\/\/\S+)/.exec(stderr)
      if (match?.[1]) {
        clearTimeout(timer)
        resolve(match[1])
      }
    })
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${stderr}`)))
  })
  t.match(stdout, /ERR_UV_MODEL_LOAD/, 'the load failure is logged with its code')

  const created = await runCli(['keys', 'create', '--plan', 'pro', '--store', store, '--json'])
  const { id, key } = JSON.parse(created.stdout) as { id: string; key: string }

  const named = await shoot(url, key, withNames)
  t.equal(named.status, 503, 'a request with names gets 503')
  t.equal(named.detail, 'Tool service unavailable')
  t.ok(Number(named.retryAfter) > 0, 'with Retry-After')
  t.equal((await shoot(url, key, nameOnly)).status, 503, 'a name-only request too')
  const plain = await shoot(url, key, emailOnly, 10_000, true)
  t.equal(plain.status, 200, 'an email-only request succeeds')
  t.equal(plain.body?.email_verification?.dnsCheck, 'Pass')

  const shots = await runLoad({
    url,
    token: key,
    bodies: [withNames, emailOnly, nameOnly, emailOnly],
    concurrency: 8,
    maxRequests: 200,
    durationMs: 3000
  })
  const counts = byStatus(shots)
  t.equal((counts[200] ?? 0) + (counts[503] ?? 0), shots.length, `only 200 and 503 under load (${JSON.stringify(counts)})`)
  // Bodies go out in turn, so the odd-numbered requests are the email-only ones.
  t.equal(counts[200], Math.floor(shots.length / 2), 'exactly the email-only requests succeed')
  const usage = await runCli(['usage', id, '--store', store, '--json'])
  t.equal(JSON.parse(usage.stdout).used, grantedUnits(shots) + 1, 'usage holds only the units of the 200s: every 503 gave its units back')

  const ready = await checkedFetch(url.replace(/\/api\/v1$/, '/readyz'))
  t.equal(ready.status, 503, '/readyz says not ready')
  t.match(await ready.json(), { model: false, store: true })
})

t.test('the model throws on some names: 503 for those, nothing charged, the quota stays exact', async (t) => {
  let calls = 0
  const flaky = {
    predict(value: string) {
      calls++
      if (value.startsWith('Boom')) throw new Error('model exploded')
      return { value, prediction: 'LABEL_1' as const, confidence: 0.9 }
    }
  }
  const api = await startApi({ ...(await testVerifiers(t)), nameVerifier: flaky })
  t.teardown(() => api.close())
  const { key, account } = await api.key('free')
  const period = periodOf(Date.now()).id

  const boom = await api.post({ model: 'user_verification', email: 'a@acme-mail.com', firstname: 'Boom', lastname: 'Doe' }, { token: key })
  t.equal(boom.status, 503)
  t.equal(boom.headers.get('retry-after'), '5')
  t.equal(await api.stores.quota.get(account, period), 0, 'the 3 units were never charged')
  t.ok(calls > 0, 'the model was really called')

  // 22 units of good requests, then failures must not eat the last 3.
  for (let i = 0; i < 11; i++)
    t.equal((await api.post({ model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }, { token: key })).status, 200)
  for (let i = 0; i < 5; i++)
    t.equal(
      (await api.post({ model: 'user_verification', email: 'a@acme-mail.com', firstname: 'Boom', lastname: 'X' }, { token: key })).status,
      503
    )
  t.equal(await api.stores.quota.get(account, period), 22)
  t.equal(
    (await api.post({ model: 'user_verification', email: 'a@acme-mail.com', firstname: 'Ann', lastname: 'Lee' }, { token: key })).status,
    200,
    'the last 3 units are still there'
  )
  t.equal((await api.post({ model: 'user_verification', email: 'a@acme-mail.com' }, { token: key })).status, 402)
  // Verification runs before the consume: the 18 units of the 503s were never taken, so none had to come back.
  t.match(api.middleware.metrics(), { unitsConsumed: 25, unitsRefunded: 0 })
  t.ok(
    api.logger.lines.some((l) => l.includes('ERR_UV_VERIFIER')),
    'the failure is logged with its code'
  )
  t.notOk(
    api.logger.lines.some((l) => l.includes('Boom') || l.includes(key)),
    'without the name or the key'
  )
})
