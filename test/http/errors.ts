// CONTRIBUTING.md#the-http-contract steps 2-6 and the other answers: 401, 400, 402, 503, 404, 405, 413 — bodies and order.
import t from 'tap'
import { startApi } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const verifiers = await testVerifiers(t)
const api = await startApi(verifiers)
t.teardown(() => api.close())
const { key, account } = await api.key('pro')
const ok = { model: 'user_verification', firstname: 'Jane' }

t.test('401 for a present but unknown, empty or revoked token', async (t) => {
  for (const token of ['uv_unknown', '', ' ', `${key}x`, key.toUpperCase()]) {
    const reply = await api.post(ok, { token })
    t.equal(reply.status, 401, JSON.stringify(token))
    t.strictSame(reply.body, { detail: 'Invalid API token' })
  }
  const revoked = await api.key('pro')
  t.equal((await api.post(ok, { token: revoked.key })).status, 200)
  await api.stores.keys.update(revoked.id, { revokedAt: new Date().toISOString() })
  t.strictSame((await api.post(ok, { token: revoked.key })).body, { detail: 'Invalid API token' })
})

t.test('401 wins over a bad model and over no data', async (t) => {
  t.equal((await api.post({ model: 'gpt', email: '' }, { token: 'uv_nope' })).status, 401)
})

t.test('400 Invalid Tool name for any model but user_verification, before the no-data check', async (t) => {
  for (const model of ['', 'User_Verification', 'user_verification ', 'gpt-4', 'user-verification']) {
    const reply = await api.post({ model, email: '' }, { token: key })
    t.equal(reply.status, 400, JSON.stringify(model))
    t.strictSame(reply.body, { detail: 'Invalid Tool name' })
  }
})

t.test('400 No valid data when every field is empty, whitespace, null or absent', async (t) => {
  const bodies = [
    { model: 'user_verification' },
    { model: 'user_verification', email: '', firstname: '', lastname: '' },
    { model: 'user_verification', email: '   ', firstname: '\t', lastname: '\n ' },
    { model: 'user_verification', email: null, firstname: null, lastname: null }
  ]
  const before = await api.stores.quota.get(account, currentPeriod())
  for (const body of bodies) {
    const reply = await api.post(body, { token: key })
    t.equal(reply.status, 400, JSON.stringify(body))
    t.strictSame(reply.body, { detail: 'No valid data provided for verification' })
  }
  t.equal(await api.stores.quota.get(account, currentPeriod()), before, 'nothing consumed')
})

t.test('404, 405 and 413 answer JSON', async (t) => {
  const notFound = await api.request('POST', '/api/v1/nope', { headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(notFound.status, 404)
  t.strictSame(notFound.body, { detail: 'Not Found' })
  for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
    const reply = await api.request(method, '/api/v1')
    t.equal(reply.status, 405, method)
    t.strictSame(reply.body, { detail: 'Method Not Allowed' })
    t.equal(reply.headers.get('allow'), 'POST')
  }
  const big = { model: 'user_verification', firstname: 'x'.repeat(17 * 1024) }
  const tooLarge = await api.post(big, { token: key })
  t.equal(tooLarge.status, 413)
  t.strictSame(tooLarge.body, { detail: 'Request body too large' })
})

t.test('413 also when the host app parsed the body already', async (t) => {
  const host = await startApi({ ...verifiers, hostJson: true })
  t.teardown(() => host.close())
  const hostKey = await host.key('pro')
  const reply = await host.post({ model: 'user_verification', firstname: 'x'.repeat(20 * 1024) }, { token: hostKey.key })
  t.equal(reply.status, 413)
  t.strictSame(reply.body, { detail: 'Request body too large' })
})

t.test('503 with Retry-After when the name model throws; units given back; email-only still works', async (t) => {
  const broken = await startApi({
    ...verifiers,
    nameVerifier: {
      predict: () => {
        throw new Error('model exploded')
      }
    }
  })
  t.teardown(() => broken.close())
  const issued = await broken.key('free')
  const reply = await broken.post({ model: 'user_verification', email: 'jane@acme-mail.com', firstname: 'Jane' }, { token: issued.key })
  t.equal(reply.status, 503)
  t.strictSame(reply.body, { detail: 'Tool service unavailable' })
  t.ok(Number(reply.headers.get('retry-after')) > 0)
  t.equal(await broken.stores.quota.get(issued.account, currentPeriod()), 0, 'the 2 units were given back')
  const emailOnly = await broken.post({ model: 'user_verification', email: 'jane@acme-mail.com' }, { token: issued.key })
  t.equal(emailOnly.status, 200)
  t.equal(await broken.stores.quota.get(issued.account, currentPeriod()), 1)
  t.ok(broken.logger.lines.some((line) => line.includes('ERR_UV_VERIFIER')))
})

t.test('503 when the quota store fails, and nothing consumed', async (t) => {
  const failing = await startApi(verifiers)
  t.teardown(() => failing.close())
  const issued = await failing.key('free')
  const consume = failing.stores.quota.consume.bind(failing.stores.quota)
  failing.stores.quota.consume = async () => {
    throw new Error('connection lost')
  }
  const reply = await failing.post(ok, { token: issued.key })
  t.equal(reply.status, 503)
  t.equal(reply.headers.get('retry-after'), '5')
  failing.stores.quota.consume = consume
  t.equal((await failing.post(ok, { token: issued.key })).status, 200, 'recovers when the store does')
})

t.test('503 when the key store fails (never a 401 that looks like a bad key)', async (t) => {
  const failing = await startApi(verifiers)
  t.teardown(() => failing.close())
  const issued = await failing.key('free')
  failing.stores.keys.getByHash = async () => {
    throw new Error('timeout')
  }
  const reply = await failing.post(ok, { token: issued.key })
  t.equal(reply.status, 503)
  t.strictSame(reply.body, { detail: 'Tool service unavailable' })
})

t.test('works under any mount path of a host app', async (t) => {
  const mounted = await startApi({ ...verifiers, mount: '/verify' })
  t.teardown(() => mounted.close())
  const issued = await mounted.key('free')
  t.equal((await mounted.post(ok, { token: issued.key })).status, 200)
  t.equal((await mounted.post(ok, { token: issued.key, path: '/' })).status, 200)
})

t.test('app.use(userVerification) without calling it is refused with the fix', async (t) => {
  const { userVerification } = await import('../../lib/http/middleware.js')
  const request = { method: 'POST', url: '/', headers: {} }
  t.throws(() => userVerification(request as never), /Call the factory/)
})

function currentPeriod(): string {
  return new Date().toISOString().slice(0, 7)
}
