// The dashboard's JSON API without a browser: what is offered by default, admin-token handling, rate limits, sign-up rules, key ownership, log hygiene.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { addKey, createAccount, issueKey, userVerification } from '../../lib/index.js'
import { loggedPath } from '../../server/app.js'
import { adminTokenMatches, loadAdminToken } from '../../server/dashboard-auth.js'
import { createDashboard } from '../../server/dashboard.js'
import { mailDomain, startDashboardApp } from '../fixtures/dashboard-app.js'
import { memoryStores } from '../fixtures/create-api.js'
import { checkResponse } from '../fixtures/openapi-check.js'

const adminToken = 'api-test-admin-token-0123456789'

async function request(url: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: unknown } = {}) {
  const response = await fetch(url + path, {
    method: init.method ?? 'GET',
    headers: { ...(init.body === undefined ? {} : { 'content-type': 'application/json' }), ...init.headers },
    body: init.body === undefined ? undefined : JSON.stringify(init.body)
  })
  const text = await response.text()
  let body: any = text
  try {
    body = JSON.parse(text)
  } catch {}
  // The dashboard's JSON API is in the OpenAPI document too: every answer is checked against it.
  if (path.startsWith('/dashboard/api/'))
    checkResponse({ method: init.method ?? 'GET', path, scope: 'server' }, { status: response.status, headers: response.headers, body })
  return { status: response.status, headers: response.headers, body }
}

const admin = { authorization: `Bearer ${adminToken}` }

t.test('by default: no admin view and no sign-up, only the account view and plans', async (t) => {
  const app = await startDashboardApp(t)
  const config = await request(app.url, '/dashboard/api/config')
  t.match(config.body, {
    signup: false,
    admin: false,
    upgrade: null,
    plans: [{ name: 'free', limit: 25 }, { name: 'basic' }, { name: 'pro' }]
  })
  t.equal((await request(app.url, '/dashboard/api/admin/accounts', { headers: admin })).status, 404, 'no admin API without a token')
  t.equal((await request(app.url, '/dashboard/api/signup', { method: 'POST', body: { name: 'Jane Doe', email: 'j@x.com' } })).status, 404)
  const page = await fetch(`${app.url}/dashboard`)
  const csp = page.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.notMatch(csp, /unsafe-inline|unsafe-eval/)
  t.equal(page.headers.get('set-cookie'), null, 'no cookies')
  const chart = await fetch(`${app.url}/dashboard/vendor/uplot.js`)
  t.equal(chart.status, 200, 'the charting library is served from the package')
  t.match(await chart.text(), /uPlot/)
})

t.test('admin token: bearer only, compared in constant time, 401 otherwise; never logged', async (t) => {
  const app = await startDashboardApp(t, { adminToken })
  t.equal((await request(app.url, '/dashboard/api/config')).body.admin, true)
  const attempts: Array<Record<string, string>> = [
    {},
    { authorization: adminToken },
    { authorization: 'Bearer wrong' },
    { authorization: `Bearer ${adminToken}x` }
  ]
  for (const headers of attempts) {
    const reply = await request(app.url, '/dashboard/api/admin/accounts', { headers })
    t.equal(reply.status, 401, JSON.stringify(Object.keys(headers)))
    t.equal(reply.headers.get('www-authenticate'), 'Bearer')
  }
  t.equal((await request(app.url, '/dashboard/api/admin/accounts', { headers: admin })).status, 200)
  t.equal((await request(app.url, `/dashboard/api/admin/accounts?token=${adminToken}`)).status, 401, 'not from the query string')
  t.ok(adminTokenMatches('a'.repeat(20), 'a'.repeat(20)))
  t.notOk(adminTokenMatches('a'.repeat(20), 'a'.repeat(21)), 'different lengths compare without throwing')
  t.notOk(adminTokenMatches('', 'a'.repeat(20)))

  const created = await request(app.url, '/dashboard/api/admin/accounts', {
    method: 'POST',
    headers: admin,
    body: { name: 'Zed Zebra', email: 'Zed@Example.org', plan: 'pro' }
  })
  t.equal(created.status, 201)
  t.match(created.body, { account: { plan: 'pro', email: 'Zed@Example.org' }, key: { key: /^uv_/ } }, 'the address as typed')
  const again = await request(app.url, '/dashboard/api/admin/accounts', {
    method: 'POST',
    headers: admin,
    body: { name: 'Z', email: 'zed@example.org' }
  })
  t.equal(again.status, 409, 'one account per address')
  const badPlan = await request(app.url, `/dashboard/api/admin/accounts/${created.body.account.id}`, {
    method: 'PATCH',
    headers: admin,
    body: { plan: 'platinum' }
  })
  t.equal(badPlan.status, 400)
  // F2: names of Object.prototype members are no plans.
  for (const plan of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
    const patched = await request(app.url, `/dashboard/api/admin/accounts/${created.body.account.id}`, {
      method: 'PATCH',
      headers: admin,
      body: { plan }
    })
    t.equal(patched.status, 400, `PATCH plan "${plan}": 400`)
    const made = await request(app.url, '/dashboard/api/admin/accounts', {
      method: 'POST',
      headers: admin,
      body: { name: 'Proto', email: `proto-${plan}@example.org`, plan }
    })
    t.equal(made.status, 400, `POST plan "${plan}": 400`)
  }
  t.equal((await request(app.url, '/dashboard/api/admin/accounts/acct_000000000000', { headers: admin })).status, 404)
  t.equal(
    (await request(app.url, '/dashboard/api/admin/accounts', { method: 'POST', headers: { ...admin, 'content-type': 'application/json' } }))
      .status,
    400,
    'an empty body is a 400, not a 500'
  )
  for (const secret of [adminToken, created.body.key.key, 'zed@example.org', 'Zed Zebra'])
    t.notOk(
      app.logger.lines.some((line) => line.toLowerCase().includes(secret.toLowerCase())),
      'not logged'
    )
  t.match(app.audit(), [
    { actor: 'admin', action: 'account.create', account: created.body.account.id, key: created.body.key.id, plan: 'pro' }
  ])
})

t.test(
  'loadAdminToken: the file’s first line or UV_ADMIN_TOKEN; short tokens and unreadable files refused without echoing the token',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'uv-admin-'))
    t.teardown(() => rmSync(dir, { recursive: true, force: true }))
    const file = join(dir, 'token')
    writeFileSync(file, `${adminToken}\nsecond line\n`)
    t.equal(loadAdminToken(file, {}), adminToken)
    t.equal(loadAdminToken(undefined, { UV_ADMIN_TOKEN: adminToken }), adminToken)
    t.equal(loadAdminToken(file, { UV_ADMIN_TOKEN: 'other-token-other-token' }), adminToken, 'the file wins')
    t.equal(loadAdminToken(undefined, {}), undefined, 'no token: no admin view')
    writeFileSync(file, 'short-secret\n')
    t.throws(() => loadAdminToken(file, {}), /at least 16 characters/)
    try {
      loadAdminToken(file, {})
    } catch (error) {
      t.notMatch((error as Error).message, /short-secret/, 'the message never holds the token')
    }
    t.throws(() => loadAdminToken(join(dir, 'missing'), {}), /cannot read --admin-token-file .*ENOENT/)
    const middleware = userVerification({ store: memoryStores(), logger: { warn() {}, error() {} } })
    t.teardown(() => middleware.close())
    t.throws(() => createDashboard(middleware, { adminToken: 'too-short' }), { name: 'RangeError', code: 'ERR_UV_OPTIONS' })
    t.throws(() => createDashboard(middleware, { signup: true, signupPlan: 'gold' }), /sign-up plan "gold"/)
    t.throws(() => createDashboard(middleware, { signup: true, signupPlan: 'constructor' }), /sign-up plan "constructor"/)
  }
)

t.test('failed sign-ins are rate-limited per address; signed-in requests are not counted', async (t) => {
  const app = await startDashboardApp(t, { adminToken, rateLimit: { failedSignIns: 3, perIp: 1000 } })
  const { key } = await issueKey(app.stores.keys, 'free')
  for (let i = 0; i < 5; i++) t.equal((await request(app.url, '/dashboard/api/account', { headers: { 'x-api-token': key } })).status, 200)
  for (let i = 0; i < 3; i++)
    t.equal((await request(app.url, '/dashboard/api/account', { headers: { 'x-api-token': `uv_wrong${i}` } })).status, 401)
  const limited = await request(app.url, '/dashboard/api/account', { headers: { 'x-api-token': key } })
  t.equal(limited.status, 429, 'past the limit even a right key waits')
  t.ok(Number(limited.headers.get('retry-after')) > 0)
  t.equal((await request(app.url, '/dashboard/api/admin/accounts', { headers: admin })).status, 429, 'admin sign-in shares the limit')
})

t.test('the dashboard API is rate-limited per address like the API', async (t) => {
  const app = await startDashboardApp(t, { rateLimit: { perIp: 5 } })
  const statuses = await Promise.all(Array.from({ length: 12 }, () => request(app.url, '/dashboard/api/config').then((r) => r.status)))
  t.ok(statuses.filter((status) => status === 429).length >= 1, `some refused: ${statuses.join(',')}`)
  t.ok(statuses.filter((status) => status === 200).length <= 10, 'at most two windows of 5 pass')
})

t.test('sign-up: screened, one account per address (any case), rate-limited per address', async (t) => {
  const app = await startDashboardApp(t, { signup: true, rateLimit: { signups: 4 } })
  const signup = (name: string, email: string) => request(app.url, '/dashboard/api/signup', { method: 'POST', body: { name, email } })
  const first = await signup('Jane Doe', `jane@${mailDomain}`)
  t.equal(first.status, 201)
  t.match(first.body, { account: { plan: 'free' }, key: { key: /^uv_/, id: /^key_/ } })
  const duplicate = await signup('Jane Doe', `JANE@${mailDomain.toUpperCase()}`)
  t.strictSame([duplicate.status, duplicate.body.field], [409, 'email'], 'one account per address, whatever the case')
  const junk = await signup('asdfgh qwerty', `other@${mailDomain}`)
  t.strictSame([junk.status, junk.body.field], [422, 'name'])
  t.equal((await signup('', '')).status, 422)
  const limited = await signup('John Smith', `john@${mailDomain}`)
  t.equal(limited.status, 429, 'the fifth attempt from one address')
  t.equal((await request(app.url, '/dashboard/api/signup')).status, 405)
  t.notOk(
    app.logger.lines.some((line) => /jane|Doe|asdfgh/i.test(line)),
    'no email or name logged'
  )
})

t.test("a key acts only on its own account's keys; bad grace periods are refused", async (t) => {
  const app = await startDashboardApp(t)
  const mine = await issueKey(app.stores.keys, 'free')
  const account = await createAccount(app.stores.keys, { name: 'Other', plan: 'free' })
  const theirs = await addKey(app.stores.keys, account.id)
  const as = { 'x-api-token': mine.key }
  t.equal((await request(app.url, `/dashboard/api/keys/${theirs.id}/revoke`, { method: 'POST', headers: as })).status, 404)
  t.equal((await request(app.url, `/dashboard/api/keys/${theirs.id}/rotate`, { method: 'POST', headers: as, body: {} })).status, 404)
  t.equal(await app.call(theirs.key), 200, 'their key untouched')
  for (const grace of [-1, 1.5, '60', 31 * 86_400]) {
    const reply = await request(app.url, `/dashboard/api/keys/${mine.id}/rotate`, { method: 'POST', headers: as, body: { grace } })
    t.equal(reply.status, 400, `grace ${JSON.stringify(grace)}`)
  }
  const created = await request(app.url, '/dashboard/api/keys', { method: 'POST', headers: as, body: { label: '<b>staging</b>' } })
  t.strictSame([created.status, created.body.label], [201, '<b>staging</b>'], 'labels are stored as typed; the page escapes them')
  const revoked = await request(app.url, `/dashboard/api/keys/${created.body.id}/revoke`, { method: 'POST', headers: as })
  t.match(revoked.body, { id: created.body.id, active: false, revokedAt: /^\d{4}-/ })
  t.equal(await app.call(created.body.key), 401)
  for (const [body, status] of [
    ['{', 400],
    ['x'.repeat(5000), 413],
    ['{"label":"ok"}', 201]
  ] as const) {
    const response = await fetch(`${app.url}/dashboard/api/keys`, {
      method: 'POST',
      headers: { ...as, 'content-type': 'application/json' },
      body
    })
    t.equal(response.status, status, `body ${body.slice(0, 8)}`)
    const answer = (await response.json()) as { key?: string; detail?: string }
    t.type(status === 201 ? answer.key : answer.detail, 'string', 'a JSON answer')
  }
  // F8: the old key of a rotation verifies through its grace period but manages nothing.
  const rotated = await request(app.url, `/dashboard/api/keys/${mine.id}/rotate`, { method: 'POST', headers: as, body: { grace: 3600 } })
  t.equal(rotated.status, 201)
  t.equal(await app.call(mine.key), 200, 'the old key still verifies in its grace period')
  const retiring = await Promise.all([
    request(app.url, '/dashboard/api/keys', { method: 'POST', headers: as, body: { label: 'forever' } }),
    request(app.url, `/dashboard/api/keys/${rotated.body.id}/rotate`, { method: 'POST', headers: as, body: {} }),
    request(app.url, `/dashboard/api/keys/${rotated.body.id}/revoke`, { method: 'POST', headers: as })
  ])
  t.strictSame(
    retiring.map((reply) => reply.status),
    [403, 403, 403],
    'it cannot create, rotate or revoke keys'
  )
  t.equal(await app.call(rotated.body.key), 200, 'the new key untouched')
  t.equal((await request(app.url, '/dashboard/api/account', { headers: as })).status, 200, 'it may still read the account')
  const fresh = { 'x-api-token': rotated.body.key as string }
  t.equal((await request(app.url, '/dashboard/api/keys', { method: 'POST', headers: fresh, body: {} })).status, 201, 'the new key manages')
  const view = await request(app.url, '/dashboard/api/account', { headers: as })
  t.notOk(JSON.stringify(view.body).includes('hash'), 'no key digests in the answer')
  t.equal(view.headers.get('cache-control'), 'no-store')
})

t.test('F8: every dashboard body is a JSON object with members of their documented types; 400 and 413 are documented', async (t) => {
  const app = await startDashboardApp(t, { adminToken, signup: true, rateLimit: { perIp: 1000, signups: 1000 } })
  const mine = await issueKey(app.stores.keys, 'free')
  const target = await addKey(app.stores.keys, mine.account)
  const as = { 'x-api-token': mine.key }
  /** Sends `body` as it is and checks the answer against the OpenAPI document (an undocumented status fails). */
  async function raw(method: string, path: string, headers: Record<string, string>, body: string) {
    const response = await fetch(app.url + path, { method, headers: { ...headers, 'content-type': 'application/json' }, body })
    const answer = (await response.json()) as Record<string, unknown>
    checkResponse({ method, path, scope: 'server' }, { status: response.status, headers: response.headers, body: answer })
    return { status: response.status, body: answer }
  }
  const operations: Array<[string, string, Record<string, string>]> = [
    ['POST', '/dashboard/api/keys', as],
    ['POST', `/dashboard/api/keys/${target.id}/rotate`, as],
    ['POST', '/dashboard/api/signup', {}],
    ['POST', '/dashboard/api/admin/accounts', admin],
    ['PATCH', `/dashboard/api/admin/accounts/acct_000000000000`, admin]
  ]
  for (const [method, path, headers] of operations) {
    for (const [body, status] of [
      ['{', 400],
      ['[]', 400],
      ['"label"', 400],
      ['5', 400],
      ['null', 400],
      [JSON.stringify({ label: 'x'.repeat(5000) }), 413]
    ] as const) {
      const reply = await raw(method, path, headers, body)
      t.equal(reply.status, status, `${method} ${path.replace(/key_\w+/, ':id')} ${body.slice(0, 8)}: ${status}`)
    }
  }
  const keysOf = async () => (await app.stores.keys.listByAccount(target.account)).length
  const before = await keysOf()
  for (const label of [5, true, { a: 1 }, ['x']]) {
    const reply = await raw('POST', '/dashboard/api/keys', as, JSON.stringify({ label }))
    t.strictSame([reply.status, typeof reply.body.detail], [400, 'string'], `label ${JSON.stringify(label)}: 400`)
  }
  t.equal(await keysOf(), before, 'no key made for a refused body')
  t.equal((await raw('POST', '/dashboard/api/keys', as, JSON.stringify({ label: null }))).status, 201, 'a null label is no label')
  const bare = await fetch(`${app.url}/dashboard/api/keys`, { method: 'POST', headers: as })
  t.equal(bare.status, 201, 'no body at all is an empty object')
})

t.test('F4: one account per mailbox, whatever the spelling; the admin view checks the syntax as sign-up does', async (t) => {
  const app = await startDashboardApp(t, { adminToken, signup: true, rateLimit: { perIp: 1000, signups: 1000 } })
  const create = (email: string) =>
    request(app.url, '/dashboard/api/admin/accounts', { method: 'POST', headers: admin, body: { name: 'Sig Dup', email, plan: 'free' } })
  const signup = (email: string) => request(app.url, '/dashboard/api/signup', { method: 'POST', body: { name: 'Jane Doe', email } })
  for (const [first, others] of [
    ['"Sig.Dup"@Gmail.com', ['sig.dup@gmail.com', 'SIG.DUP@gmail.com', '"sig\\.dup"@gmail.com']],
    ['sig@bücher.com', ['sig@xn--bcher-kva.com', 'sig@bu\u0308cher.com', 'sig@BÜCHER.com']]
  ] as const) {
    const made = await create(first)
    t.equal(made.status, 201, first)
    t.equal(made.body.account.email, first, 'the address is kept as typed for display')
    for (const other of others) t.equal((await create(other)).status, 409, `${JSON.stringify(other)}: the same mailbox`)
  }
  t.equal((await create('sigdup@gmail.com')).status, 201, "Gmail's dots are not folded (deliberately)")
  t.equal((await create('sig.dup+news@gmail.com')).status, 201, '+tags are not folded (deliberately)')
  for (const bad of ['dup.user@gmail.com.', 'dup.user@gmail.com\u200b', 'dup.user\u00ad@gmail.com', 'not-an-email', 'a@b']) {
    const refused = await create(bad)
    t.strictSame([refused.status, refused.body], [422, { detail: 'This email address is not valid.', field: 'email' }], JSON.stringify(bad))
  }
  t.equal((await signup(`sig.dup@${mailDomain}`)).status, 201)
  for (const other of [`"sig.dup"@${mailDomain}`, `"sig\\.dup"@${mailDomain}`, `SIG.DUP@${mailDomain.toUpperCase()}`]) {
    const duplicate = await signup(other)
    t.strictSame([duplicate.status, duplicate.body.field], [409, 'email'], `sign-up ${JSON.stringify(other)}: the same mailbox`)
    t.equal((await create(other)).status, 409, `admin ${JSON.stringify(other)}: the same mailbox`)
  }
})

t.test('F3: a key create whose re-check of the signing key fails answers 503 and leaves no new active key', async (t) => {
  const app = await startDashboardApp(t)
  const mine = await issueKey(app.stores.keys, 'free')
  const keys = app.stores.keys as any
  const create = keys.create.bind(keys)
  let failNextRead = false
  keys.create = async (record: unknown) => {
    await create(record)
    failNextRead = true
  }
  for (const name of ['getKeyWithAccount', 'getByHash']) {
    if (typeof keys[name] !== 'function') continue
    const read = keys[name].bind(keys)
    keys[name] = async (...args: unknown[]) => {
      if (failNextRead) {
        failNextRead = false
        throw new Error('store went away')
      }
      return read(...args)
    }
  }
  const reply = await request(app.url, '/dashboard/api/keys', {
    method: 'POST',
    headers: { 'x-api-token': mine.key },
    body: { label: 'x' }
  })
  t.equal(reply.status, 503)
  const listed = await app.stores.keys.listByAccount(mine.account)
  t.equal(listed.length, 2, 'the key was written')
  t.same(
    listed.filter((key) => key.revokedAt === null).map((key) => key.id),
    [mine.id],
    'and withdrawn: only the signing key is active'
  )
})

t.test('request log: dashboard routes by shape with ids as :id, anything else (other)', async (t) => {
  t.equal(loggedPath('/dashboard/api/keys/key_0123456789ab/rotate'), '/dashboard/api/keys/:id/rotate')
  t.equal(loggedPath('/dashboard/api/admin/accounts/acct_0123456789ab'), '/dashboard/api/admin/accounts/:id')
  t.equal(loggedPath('/dashboard/api/account'), '/dashboard/api/account')
  t.equal(loggedPath('/dashboard/vendor/uplot.js'), '/dashboard/vendor/uplot.js')
  t.equal(loggedPath('/dashboard/api/jane@example.com'), '(other)')
  t.equal(loggedPath('/dashboard/api/keys/jane.doe/rotate'), '(other)')
})
