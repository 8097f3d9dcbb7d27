// `serve --admin-token-file --signup --upgrade-url` (and UV_SIGNUP) as users start it: the dashboard's settings, audit lines with --quiet, bad tokens refused at start-up.
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t, { type Test } from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { cliPath, startServe } from '../fixtures/spawn-cli.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const token = 'serve-test-admin-token-0123456789'

function tempDir(t: Test) {
  const dir = mkdtempSync(join(tmpdir(), 'uv-dash-serve-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** `serve` on a new SQLite store, with `--admin-token-file` (a file holding `token`) and `args`; stopped at the end of `t`. */
async function serveWithTokenFile(t: Test, args: string[], env: Record<string, string> = {}) {
  const dir = tempDir(t)
  const file = join(dir, 'admin-token')
  writeFileSync(file, `${token}\n`, { mode: 0o600 })
  const server = await startServe(
    ['--store', `sqlite://${join(dir, 'store.sqlite')}`, '--quiet', '--no-demo-key', '--admin-token-file', file, ...args],
    env
  )
  t.teardown(() => server.stop())
  return { server, origin: new URL(server.url).origin }
}

t.test('the flags switch on the admin view, sign-up and the upgrade link; admin actions are audited even with --quiet', async (t) => {
  const { server, origin } = await serveWithTokenFile(t, ['--signup', '--upgrade-url', 'https://billing.example.com/upgrade'])
  const config = await (await checkedFetch(`${origin}/dashboard/api/config`)).json()
  t.match(config, { admin: true, signup: true, upgrade: { url: 'https://billing.example.com/upgrade' } })
  const created = await checkedFetch(`${origin}/dashboard/api/admin/accounts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ops Person', email: 'ops@example.org', plan: 'free' })
  })
  t.equal(created.status, 201)
  const body = (await created.json()) as { account: { id: string }; key: { id: string; key: string } }
  await new Promise((resolve) => setTimeout(resolve, 200))
  const audit = server
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"audit"'))
    .map((line) => JSON.parse(line))
  t.match(audit, [{ msg: 'audit', actor: 'admin', action: 'account.create', account: body.account.id, key: body.key.id, plan: 'free' }])

  // On SQLite the middleware caches key and account records; a plan change must still lift a 402 on the next request.
  const call = async () =>
    (
      await checkedFetch(`${origin}/api/v1`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': body.key.key },
        body: JSON.stringify({ model: 'user_verification', firstname: 'Ada' })
      })
    ).status
  let granted = 0
  while ((await call()) === 200) granted++
  t.equal(granted, 25, 'the free plan’s 25 units')
  t.equal(await call(), 402)
  const changed = await checkedFetch(`${origin}/dashboard/api/admin/accounts/${body.account.id}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ plan: 'basic' })
  })
  t.equal(changed.status, 200)
  t.equal(await call(), 200, 'the 402 lifts on the next request')
  t.notOk(server.stdout().includes('"request"'), '--quiet still drops the per-request lines')
  for (const secret of [token, body.key.key, 'ops@example.org', 'Ops Person'])
    t.notOk(server.stdout().includes(secret) || server.stderr().includes(secret), 'never logged or printed')
})

t.test('without a token there is no admin view; UV_ADMIN_TOKEN gives one; a short token stops the server at start-up', async (t) => {
  const dir = tempDir(t)
  const plain = await startServe(['--store', `sqlite://${join(dir, 'a.sqlite')}`, '--quiet', '--no-demo-key'], {
    UV_ADMIN_TOKEN: '',
    UV_SIGNUP: '0'
  })
  t.teardown(() => plain.stop())
  const origin = new URL(plain.url).origin
  t.match(await (await checkedFetch(`${origin}/dashboard/api/config`)).json(), { admin: false, signup: false, upgrade: null })
  t.equal((await checkedFetch(`${origin}/dashboard/api/admin/accounts`, { headers: { authorization: `Bearer ${token}` } })).status, 404)

  const fromEnv = await startServe(['--store', `sqlite://${join(dir, 'b.sqlite')}`, '--quiet', '--no-demo-key'], { UV_ADMIN_TOKEN: token })
  t.teardown(() => fromEnv.stop())
  const envOrigin = new URL(fromEnv.url).origin
  t.equal((await checkedFetch(`${envOrigin}/dashboard/api/admin/accounts`, { headers: { authorization: `Bearer ${token}` } })).status, 200)

  const file = join(dir, 'short')
  writeFileSync(file, 'tiny-secret\n')
  const refused = spawnSync(process.execPath, [cliPath, 'serve', '--port', '0', '--store', 'memory://', '--admin-token-file', file], {
    encoding: 'utf8',
    timeout: 20_000
  })
  t.equal(refused.status, 2)
  t.match(refused.stderr, /admin token must be at least 16 characters/)
  t.notMatch(refused.stderr, /tiny-secret/, 'the message never holds the token')
})

t.test(
  'F5: UV_SIGNUP=1 turns sign-up on as --signup does, with the admin token from --admin-token-file; a bad value exits 2',
  async (t) => {
    const { dnsServers } = await testVerifiers(t)
    const { origin } = await serveWithTokenFile(t, ['--dns-servers', dnsServers.join(',')], { UV_SIGNUP: 'true', UV_ADMIN_TOKEN: '' })
    t.match(await (await checkedFetch(`${origin}/dashboard/api/config`)).json(), { admin: true, signup: true })
    const signedUp = await checkedFetch(`${origin}/dashboard/api/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ada Lovelace', email: 'ada@acme-mail.com' })
    })
    t.equal(signedUp.status, 201, 'a visitor signs up')
    const { key } = (await signedUp.json()) as { key: { key: string } }
    const verified = await checkedFetch(`${origin}/api/v1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': key.key },
      body: JSON.stringify({ model: 'user_verification', firstname: 'Ada' })
    })
    t.equal(verified.status, 200, 'and the key it got verifies')
    t.equal((await checkedFetch(`${origin}/dashboard/api/admin/accounts`, { headers: { authorization: `Bearer ${token}` } })).status, 200)

    // commander's own env support would read UV_SIGNUP=0 as on: only yes/no words are taken.
    const refused = spawnSync(process.execPath, [cliPath, 'serve', '--port', '0', '--store', 'memory://', '--no-demo-key'], {
      encoding: 'utf8',
      timeout: 20_000,
      env: { ...process.env, UV_SIGNUP: 'maybe' }
    })
    t.equal(refused.status, 2)
    t.match(refused.stderr, /^user-verification: UV_SIGNUP must be 1, true, yes or on \(or 0, false, no, off\), got "maybe"\n/)
  }
)
