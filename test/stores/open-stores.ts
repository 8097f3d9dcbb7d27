// openStores URL handling and the structural checks for user-supplied stores.
import t from 'tap'
import { MemoryKeyStore, MemoryQuotaStore } from '../../lib/stores/memory-store.js'
import { assertKeyStore, assertQuotaStore, openStores } from '../../lib/stores/open-stores.js'

t.test('an unknown scheme is a TypeError that names the accepted ones', async (t) => {
  for (const url of ['mysql://localhost/db', 'file:./x.sqlite', './x.sqlite', '', 'http://redis:6379']) {
    await t.rejects(
      openStores(url),
      {
        name: 'TypeError',
        message: /^user-verification: `store` must be a sqlite:\/\/, redis:\/\/, postgres:\/\/ or memory:\/\/ URL, got "/
      },
      JSON.stringify(url)
    )
  }
  // @ts-expect-error a non-string store URL
  await t.rejects(openStores(42), TypeError)
})

t.test('a bad namespace or timeout is refused', async (t) => {
  for (const namespace of ['', 'Has-Caps', 'a:b', '1abc', 'x'.repeat(41)]) {
    await t.rejects(openStores('memory://', { namespace }), TypeError, JSON.stringify(namespace))
  }
  await t.rejects(openStores('memory://', { commandTimeout: 0 }), RangeError)
  await t.rejects(openStores('memory://', { connectTimeout: -5 }), RangeError)
})

t.test('scheme is case-insensitive; memory:// opens memory stores', async (t) => {
  const stores = await openStores('MEMORY://')
  t.ok(stores.keys instanceof MemoryKeyStore)
  t.ok(stores.quota instanceof MemoryQuotaStore)
  await stores.close()
})

t.test('assertKeyStore / assertQuotaStore name each missing member', async (t) => {
  t.doesNotThrow(() => assertKeyStore(new MemoryKeyStore()))
  t.doesNotThrow(() => assertQuotaStore(new MemoryQuotaStore()))
  t.throws(() => assertKeyStore({ localKeys: false, prefix: 'x', getById() {}, create() {} }), {
    name: 'TypeError',
    message:
      'user-verification: the key store is missing getByHash(), update(), updateKey(), list(), listByAccount(), getAccount(), getAccountByEmail(), createAccount(), updateAccount(), listAccounts(). Implement the KeyStore interface, or pass a store URL instead.'
  })
  t.throws(() => assertQuotaStore({ consume() {} }), {
    name: 'TypeError',
    message: /missing refund\(\), get\(\), daily\(\), monthly\(\), localKeys \(boolean\), prefix \(string\)/
  })
  t.throws(
    () =>
      assertQuotaStore({
        ...new MemoryQuotaStore(),
        consume() {},
        refund() {},
        get() {},
        daily() {},
        monthly() {},
        localKeys: true,
        prefix: '',
        close: 'yes'
      }),
    /close\(\) \(optional, but not a function here\)/
  )
  t.throws(() => assertKeyStore(null), TypeError)
  t.throws(() => assertQuotaStore('redis://x'), TypeError)
})
