// CONTRIBUTING.md#accounts-keys-and-quota: per-plan monthly quota over HTTP — the edges, all-or-nothing, month rollover, plan changes.
import t from 'tap'
import { startApi, memoryStores } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'
import { periodOf, planTable } from '../../lib/quota/plans.js'

const verifiers = await testVerifiers(t)
let clock = Date.UTC(2026, 10, 30, 23, 59, 0)
const now = () => clock
const api = await startApi({ ...verifiers, now, store: memoryStores(now) })
t.teardown(() => api.close())
const one = { model: 'user_verification', firstname: 'Jane' }
const three = { model: 'user_verification', firstname: 'Jane', lastname: 'Doe', email: 'jane@acme-mail.com' }

t.test('Free: the 25th unit succeeds, the 26th gets 402', async (t) => {
  const { key } = await api.key('free')
  for (let i = 1; i <= 25; i++) {
    const reply = await api.post(one, { token: key })
    if (reply.status !== 200) t.fail(`request ${i} got ${reply.status}`)
    if (i === 25) t.equal(reply.headers.get('x-quota-remaining'), '0')
  }
  const refused = await api.post(one, { token: key })
  t.equal(refused.status, 402)
  t.strictSame(refused.body, { detail: 'You have to upgrade your plan' })
})

t.test('all-or-nothing: 3 fields with 2 units left get 402 and consume nothing', async (t) => {
  const { key, account } = await api.key('free')
  for (let i = 0; i < 23; i++) await api.post(one, { token: key })
  t.equal(await api.stores.quota.get(account, periodOf(clock).id), 23)
  t.equal((await api.post(three, { token: key })).status, 402)
  t.equal(await api.stores.quota.get(account, periodOf(clock).id), 23, 'nothing consumed by the 402')
  const two = await api.post({ model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }, { token: key })
  t.equal(two.status, 200)
  t.equal(two.headers.get('x-quota-remaining'), '0')
})

t.test('a new month (UTC) starts from zero', async (t) => {
  const { key } = await api.key('free')
  for (let i = 0; i < 8; i++) t.equal((await api.post(three, { token: key })).status, 200)
  t.equal((await api.post(three, { token: key })).status, 402, '24 used, 3 more would pass 25')
  clock = Date.UTC(2026, 11, 1, 0, 0, 1)
  const fresh = await api.post(three, { token: key })
  t.equal(fresh.status, 200)
  t.equal(fresh.headers.get('x-quota-remaining'), '22')
  t.equal(fresh.headers.get('x-quota-reset'), '2027-01-01T00:00:00.000Z')
})

t.test('a plan change takes effect on the next request', async (t) => {
  const { key, account } = await api.key('free')
  for (let i = 0; i < 25; i++) await api.post(one, { token: key })
  t.equal((await api.post(one, { token: key })).status, 402)
  await api.stores.keys.updateAccount(account, { plan: 'basic' })
  const upgraded = await api.post(one, { token: key })
  t.equal(upgraded.status, 200)
  t.equal(upgraded.headers.get('x-quota-limit'), '30000')
  await api.stores.keys.updateAccount(account, { plan: 'free' })
  t.equal((await api.post(one, { token: key })).status, 402, 'and a downgrade too')
})

t.test('plans are configurable; an unknown plan gets 402 and a coded warning', async (t) => {
  const custom = await startApi({ ...verifiers, plans: { tiny: 2 } })
  t.teardown(() => custom.close())
  const tiny = await custom.key('tiny')
  t.equal((await custom.post({ ...one, lastname: 'Doe' }, { token: tiny.key })).status, 200)
  t.equal((await custom.post(one, { token: tiny.key })).status, 402)
  const stray = await custom.key('free')
  t.equal((await custom.post(one, { token: stray.key })).status, 402)
  t.ok(custom.logger.lines.some((line) => line.includes('WRN_UV_UNKNOWN_PLAN')))
})

t.test('F2: a plan named after an Object.prototype member is an unknown plan (402), never a 503', async (t) => {
  for (const plan of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
    const stray = await api.key(plan)
    const reply = await api.post(one, { token: stray.key })
    t.equal(reply.status, 402, `plan "${plan}": 402`)
  }
  t.notOk(
    api.logger.lines.some((line) => line.includes('ERR_UV_STORE')),
    'no store error logged'
  )
  t.equal(planTable({ free: 25 }).constructor, undefined, 'the resolved plans hold nothing but the plans')
})

t.test('concurrent requests on one key never pass the limit; usage equals the sum granted', async (t) => {
  const { key, account } = await api.key('free')
  const bodies = Array.from({ length: 60 }, (_, i) => (i % 3 === 0 ? three : i % 3 === 1 ? one : { ...one, lastname: 'Doe' }))
  const replies = await Promise.all(bodies.map((body) => api.post(body, { token: key })))
  const granted = replies.filter((r) => r.status === 200).reduce((sum, r) => sum + r.body.request_count, 0)
  t.ok(replies.every((r) => r.status === 200 || r.status === 402))
  t.ok(granted <= 25)
  t.ok(granted >= 23, `a free key under load still gets (nearly) all of its 25 units, got ${granted}`)
  t.equal(await api.stores.quota.get(account, periodOf(clock).id), granted)
})
