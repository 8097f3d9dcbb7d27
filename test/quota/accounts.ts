// CONTRIBUTING.md#accounts-keys-and-quota over HTTP: several keys share one account's allowance; rotation, expiry and disabling answer 401; history per day.
import t from 'tap'
import { addKey, rotateKey } from '../../lib/quota/api-keys.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { periodOf } from '../../lib/quota/plans.js'
import { startApi, memoryStores } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const verifiers = await testVerifiers(t)
let clock = Date.UTC(2026, 10, 30, 23, 59, 0)
const now = () => clock
const api = await startApi({ ...verifiers, now, store: memoryStores(now) })
t.teardown(() => api.close())
const one = { model: 'user_verification', firstname: 'Jane' }
const two = { model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }
const invalid = { detail: 'Invalid API token' }

t.test('keys of one account draw on one allowance', async (t) => {
  const prod = await api.key('free')
  const staging = await addKey(api.stores.keys, prod.account, 'staging', clock)
  for (let i = 0; i < 12; i++) t.equal((await api.post(two, { token: i % 2 === 0 ? prod.key : staging.key })).status, 200)
  const last = await api.post(one, { token: staging.key })
  t.equal(last.status, 200, 'the 25th unit, through the second key')
  t.equal(last.headers.get('x-quota-remaining'), '0')
  t.equal((await api.post(one, { token: prod.key })).status, 402, 'the first key sees the same exhausted month')
  t.equal(await api.stores.quota.get(prod.account, periodOf(clock).id), 25)
  const other = await api.key('free')
  t.equal((await api.post(one, { token: other.key })).status, 200, 'another account is not affected')
})

t.test('rotation: the old key works until the grace ends, then 401; usage is untouched', async (t) => {
  const old = await api.key('free')
  t.equal((await api.post(two, { token: old.key })).status, 200)
  const rotated = await rotateKey(api.stores.keys, old.id, 60_000, clock)
  t.equal(rotated.account, old.account, 'same account')
  t.not(rotated.key, old.key)
  t.equal(rotated.previous.expiresAt, new Date(clock + 60_000).toISOString())
  t.equal((await api.post(one, { token: old.key })).status, 200, 'inside the grace')
  const fresh = await api.post(one, { token: rotated.key })
  t.equal(fresh.status, 200, 'the new key works at once')
  t.equal(fresh.headers.get('x-quota-remaining'), String(25 - 4), 'and continues the same count')
  clock += 60_000
  t.strictSame((await api.post(one, { token: old.key })).body, invalid, 'at the end of the grace: 401')
  t.equal((await api.post(one, { token: rotated.key })).status, 200)
  await t.rejects(rotateKey(api.stores.keys, old.id, 0, clock), { code: 'ERR_UV_KEY_INACTIVE' }, 'an expired key cannot be rotated')
  const immediate = await rotateKey(api.stores.keys, rotated.id, 0, clock)
  t.strictSame((await api.post(one, { token: rotated.key })).body, invalid, 'no grace: 401 at once')
  t.equal((await api.post(one, { token: immediate.key })).status, 200)
})

t.test('a disabled account answers 401 on every key; enabling restores them', async (t) => {
  const a = await api.key('pro')
  const b = await addKey(api.stores.keys, a.account, null, clock)
  t.equal((await api.post(one, { token: a.key })).status, 200)
  await api.stores.keys.updateAccount(a.account, { disabledAt: new Date(clock).toISOString() })
  t.strictSame((await api.post(one, { token: a.key })).body, invalid)
  t.strictSame((await api.post(one, { token: b.key })).body, invalid)
  await api.stores.keys.updateAccount(a.account, { disabledAt: null })
  t.equal((await api.post(one, { token: b.key })).status, 200)
})

t.test('each 200 lands on its UTC day, in the month it was charged to; a failed request leaves none', async (t) => {
  clock = Date.UTC(2027, 0, 31, 23, 59, 59)
  const { key, account } = await api.key('basic')
  t.equal((await api.post(two, { token: key })).status, 200)
  clock = Date.UTC(2027, 1, 1, 0, 0, 1)
  t.equal((await api.post(one, { token: key })).status, 200)
  t.equal((await api.post({ model: 'nope', firstname: 'Jane' }, { token: key })).status, 400)
  t.same(await api.stores.quota.daily(account, '2027-01-01', '2027-02-28'), [
    { day: '2027-01-31', units: 2 },
    { day: '2027-02-01', units: 1 }
  ])
  t.same(await api.stores.quota.monthly(account, '2027-01', '2027-02'), [
    { period: '2027-01', units: 2 },
    { period: '2027-02', units: 1 }
  ])
  // Kept at least 13 months: the middleware keeps a month and its days 400 days past the month's end.
  clock = Date.UTC(2028, 1, 29, 23, 59)
  t.same(await api.stores.quota.daily(account, '2027-01-31', '2027-01-31'), [{ day: '2027-01-31', units: 2 }], '13 months later')
  t.same(await api.stores.quota.monthly(account, '2027-01', '2027-01'), [{ period: '2027-01', units: 2 }])
  clock = Date.UTC(2027, 1, 1) + 400 * 86_400_000
  t.same(await api.stores.quota.daily(account, '2027-01-31', '2027-01-31'), [], 'gone 400 days after its month ended')
  t.same(await api.stores.quota.daily(account, '2027-02-01', '2027-02-01'), [{ day: '2027-02-01', units: 1 }], 'February is still kept')
})

t.test('SQLite: the key cache sees disabling, re-enabling and rotation expiry on the next request', async (t) => {
  const dir = t.testdir()
  let time = Date.UTC(2026, 10, 15)
  const server = await openStores(`sqlite://${dir}/cache.sqlite`)
  const cli = await openStores(`sqlite://${dir}/cache.sqlite`)
  t.teardown(async () => {
    await cli.close()
  })
  const sqliteApi = await startApi({ ...verifiers, now: () => time, store: server })
  t.teardown(() => sqliteApi.close())
  const issued = await sqliteApi.key('free')
  t.equal((await sqliteApi.post(one, { token: issued.key })).status, 200)
  await cli.keys.updateAccount(issued.account, { disabledAt: new Date(time).toISOString() })
  t.strictSame((await sqliteApi.post(one, { token: issued.key })).body, invalid, 'disabled by another process')
  await cli.keys.updateAccount(issued.account, { disabledAt: null })
  t.equal((await sqliteApi.post(one, { token: issued.key })).status, 200, 'enabled again')
  const rotated = await rotateKey(cli.keys, issued.id, 1000, time)
  t.equal((await sqliteApi.post(one, { token: issued.key })).status, 200, 'inside the grace (cached record, fresh clock)')
  time += 1000
  t.strictSame((await sqliteApi.post(one, { token: issued.key })).body, invalid, 'grace over')
  t.equal((await sqliteApi.post(one, { token: rotated.key })).status, 200)
  t.equal(await cli.quota.get(issued.account, periodOf(time).id), 4, 'exactly the 200s were counted')
})
