// Memory stores: the shared contract, plus what only the in-process store does.
import t from 'tap'
import { MemoryQuotaStore } from '../../lib/stores/memory-store.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { storeContract } from '../fixtures/store-contract.js'

storeContract(t, () => openStores('memory://'), { cancel: false, keysVersion: false, keyWithAccount: false })

t.test('memory stores are local to the process', async (t) => {
  const stores = await openStores('memory://', { namespace: 'tenant_a' })
  t.equal(stores.keys.localKeys, true)
  t.equal(stores.quota.localKeys, true)
  t.equal(stores.quota.prefix, 'tenant_a')
})

t.test('usage is dropped once its period expired, without a purge', async (t) => {
  let now = 1_000
  const quota = new MemoryQuotaStore({ now: () => now })
  t.same(await quota.consume('acct_a', '1970-01', 5, 5, 2_000, undefined, '1970-01-01'), { granted: true, used: 5 })
  now = 1_999
  t.equal(await quota.get('acct_a', '1970-01'), 5)
  t.same(await quota.daily('acct_a', '1970-01-01', '1970-01-01'), [{ day: '1970-01-01', units: 5 }])
  now = 2_000
  t.equal(await quota.get('acct_a', '1970-01'), 0)
  t.same(await quota.daily('acct_a', '1970-01-01', '1970-01-01'), [])
  t.same(await quota.consume('acct_a', '1970-01', 1, 5, 3_000), { granted: true, used: 1 })
})
