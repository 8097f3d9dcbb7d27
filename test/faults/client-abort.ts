// Fault: clients that leave before their answer, and exhausted keys: a unit is charged only for a 200 that was written.
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { periodOf } from '../../lib/quota/plans.js'
import type { Stores } from '../../lib/types.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { memoryStores, startApi } from '../fixtures/create-api.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dns = await startDnsServer({
  ...structuredClone(testZone),
  'slow-mail.com': { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }], delay: 1500 }
})
t.teardown(() => dns.close())
const period = () => periodOf(Date.now()).id

/** POSTs and gives up after `ms`; resolves with the status, or 0 when the client left first. */
async function postAndLeave(url: string, key: string, body: unknown, ms: number): Promise<number> {
  try {
    const response = await checkedFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(ms)
    })
    return response.status
  } catch (error) {
    // An answer that arrived is checked against the OpenAPI document; only the client's own leaving is 0.
    if (/OpenAPI mismatch/.test((error as Error).message)) throw error
    return 0
  }
}

t.test('12 clients leave while their slow DNS check runs: no answer, no unit charged', async (t) => {
  const api = await startApi({ dnsServers: [dns.server], dnsTimeout: 3000 })
  t.teardown(() => api.close())
  const { key, account: id } = await api.key('free')
  const body = { model: 'user_verification', email: 'jane@slow-mail.com', firstname: 'Jane' }
  const statuses = await Promise.all(Array.from({ length: 12 }, () => postAndLeave(api.endpoint, key, body, 200)))
  t.strictSame([...new Set(statuses)], [0], 'every client gave up before its answer')
  // Let the DNS answers arrive and the abandoned requests finish on the server.
  await new Promise((resolve) => setTimeout(resolve, 1800))
  t.ok(dns.count('slow-mail.com') > 0, 'the slow lookup really ran')
  t.equal(await api.stores.quota.get(id, period()), 0, 'usage is 0: nothing charged without a 200 (was 24)')
  const served = await api.post(body, { token: key })
  t.equal(served.status, 200, 'an honest client gets its answer (from the warm cache)')
  t.equal(await api.stores.quota.get(id, period()), 2, 'and pays exactly its 2 units')
  // F7: a client that left is no 200 in the metrics.
  t.match(api.middleware.metrics(), { responses: { 200: 1 }, aborted: 12 }, 'one 200 counted, 12 aborted')
})

t.test('a client that leaves while its units are being consumed gets them back', async (t) => {
  const base = memoryStores()
  let slow = false
  const stores: Stores = {
    ...base,
    quota: {
      localKeys: true,
      prefix: 'uv',
      get: (...args) => base.quota.get(...args),
      daily: (...args) => base.quota.daily(...args),
      monthly: (...args) => base.quota.monthly(...args),
      refund: (...args) => base.quota.refund(...args),
      async consume(...args) {
        if (slow) await new Promise((resolve) => setTimeout(resolve, 300))
        return base.quota.consume(...args)
      }
    }
  }
  const api = await startApi({ store: stores, dnsServers: [dns.server] })
  t.teardown(() => api.close())
  const { key, account: id } = await api.key('free')
  slow = true
  const status = await postAndLeave(api.endpoint, key, { model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }, 100)
  t.equal(status, 0, 'the client left during the consume')
  await new Promise((resolve) => setTimeout(resolve, 400))
  t.equal(await api.stores.quota.get(id, period()), 0, 'the 2 units consumed for it were given back')
  t.match(api.middleware.metrics(), { unitsConsumed: 2, unitsRefunded: 2, aborted: 1 })
  t.equal(api.middleware.metrics().responses[200], undefined, 'the refunded request is not counted as a 200')
  slow = false
  t.equal((await api.post({ model: 'user_verification', firstname: 'Jane' }, { token: key })).status, 200)
  t.equal(api.middleware.metrics().responses[200], 1)
  t.equal(await api.stores.quota.get(id, period()), 1, 'a client that stays pays')
})

t.test('an exhausted key is answered 402 without running a verifier, and the order of answers stays', async (t) => {
  let verified = 0
  const api = await startApi({
    dnsServers: [dns.server],
    emailVerifier: {
      async verify(address) {
        verified++
        const domain = address.slice(address.lastIndexOf('@') + 1)
        return {
          emailAddress: address,
          'the service': false,
          disposable: false,
          username: 'x',
          domain,
          dnsCheck: 'Pass',
          syntexCheck: 'Pass',
          suggestion: null,
          role: false,
          free: false
        }
      }
    }
  })
  t.teardown(() => api.close())
  const { key, account: id } = await api.key('free')
  const one = { model: 'user_verification', email: 'jane@acme-mail.com' }
  for (let i = 0; i < 25; i++) t.equal((await api.post(one, { token: key })).status, 200)
  t.equal(verified, 25)
  for (let i = 0; i < 20; i++) t.equal((await api.post(one, { token: key })).status, 402)
  t.equal(verified, 25, 'none of the 20 402s ran the verifier')
  t.equal(await api.stores.quota.get(id, period()), 25)
  // A request too big for any plan costs nothing either, and 401/400 still come before 402.
  t.equal((await api.post({ ...one, firstname: 'A', lastname: 'B' }, { token: key })).status, 402)
  t.equal((await api.post(one, { token: 'uv_nope' })).status, 401)
  t.equal((await api.post({ ...one, model: 'other' }, { token: key })).status, 400)
  t.equal((await api.post({ model: 'user_verification', email: ' ' }, { token: key })).status, 400)
  t.equal(verified, 25)
})

t.test('a key on an unknown plan gets 402 at once, and usage another process freed is seen', async (t) => {
  const api = await startApi({ dnsServers: [dns.server], plans: { free: 2 } })
  t.teardown(() => api.close())
  const { key, account: id } = await api.key('free')
  const one = { model: 'user_verification', firstname: 'Jane' }
  t.equal((await api.post(one, { token: key })).status, 200)
  t.equal((await api.post(one, { token: key })).status, 200)
  t.equal((await api.post(one, { token: key })).status, 402)
  // Units given back elsewhere (another instance's refund): the pre-check asks the store, not its memory.
  await api.stores.quota.refund(id, period(), 1)
  t.equal((await api.post(one, { token: key })).status, 200, 'the freed unit is usable at once')
  t.equal(await api.stores.quota.get(id, period()), 2)
  const odd = await api.key('gold')
  t.equal((await api.post(one, { token: odd.key })).status, 402)
})
