// Redis stores: the shared contract on UV_TEST_REDIS_URL, plus expiry, refusal and outage/recovery on a private redis-server.
import { spawnSync } from 'node:child_process'
import { createClient } from '@keyv/redis'
import t from 'tap'
import { openStores } from '../../lib/stores/open-stores.js'
import { sparePort, startPrivateRedis } from '../fixtures/private-redis.js'
import { makeAccount, makeRecord, storeContract, uniqueNamespace } from '../fixtures/store-contract.js'
import { legacyRedis } from './fixtures/legacy.js'

const url = process.env.UV_TEST_REDIS_URL
const skip =
  url === undefined || url === ''
    ? 'UV_TEST_REDIS_URL is not set: set it (e.g. redis://127.0.0.1:6379) to run the Redis store tests'
    : false
const quiet = { warn() {}, error() {}, info() {} }

/** Deletes every key of the namespaces this file created; never flushes the shared server. */
const namespaces: string[] = []
async function cleanup(): Promise<void> {
  if (namespaces.length === 0 || url === undefined) return
  const client = createClient({ url })
  await client.connect()
  for (const ns of namespaces) {
    for (const pattern of [`${ns}-keys::*`, `${ns}-quota:*`]) {
      for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 500 })) {
        if (keys.length > 0) await client.unlink(keys)
      }
    }
  }
  await client.close()
}

t.test('Redis store contract', { skip }, async (t) => {
  t.teardown(cleanup)
  storeContract(
    t,
    async () => {
      const namespace = uniqueNamespace()
      namespaces.push(namespace)
      return openStores(url!, { namespace, logger: quiet })
    },
    {
      cancel: true,
      keysVersion: false,
      keyWithAccount: true,
      twin: async () => {
        const namespace = uniqueNamespace()
        namespaces.push(namespace)
        return [await openStores(url!, { namespace, logger: quiet }), await openStores(url!, { namespace, logger: quiet })]
      },
      legacy: async () => {
        const namespace = uniqueNamespace()
        namespaces.push(namespace)
        return legacyRedis(url!, namespace)
      }
    }
  )
})

t.test('usage keys expire at the period end; records live under the namespace', { skip }, async (t) => {
  t.teardown(cleanup)
  const namespace = uniqueNamespace()
  namespaces.push(namespace)
  const stores = await openStores(url!, { namespace, logger: quiet })
  t.teardown(() => stores.close())
  t.equal(stores.quota.localKeys, false)
  t.equal(stores.keys.localKeys, false)
  const expiresAt = Date.now() + 3_600_000
  await stores.quota.consume('key_ttl', '2031-05', 1, 5, expiresAt)
  const account = makeAccount()
  await stores.keys.createAccount(account)
  const record = makeRecord(account.id)
  await stores.keys.create(record)
  const client = createClient({ url: url! })
  await client.connect()
  t.teardown(() => client.close())
  t.equal(Number(await client.sendCommand(['PEXPIRETIME', `${namespace}-quota:key_ttl:2031-05`])), expiresAt)
  t.ok(await client.exists(`${namespace}-keys::id:${record.id}`), 'record key')
  t.ok(await client.exists(`${namespace}-keys::hash:${record.hash}`), 'hash index key')
  await stores.quota.refund('key_ttl', '2031-05', 1)
  t.equal(Number(await client.sendCommand(['PEXPIRETIME', `${namespace}-quota:key_ttl:2031-05`])), expiresAt, 'refund keeps the expiry')
})

t.test('an unreachable Redis is refused quickly with a clear error', async (t) => {
  const port = await sparePort()
  const started = Date.now()
  await t.rejects(
    openStores(`redis://127.0.0.1:${port}`, { logger: quiet }),
    /user-verification: cannot reach the Redis store at redis:\/\/127\.0\.0\.1:\d+/
  )
  t.ok(Date.now() - started < 3000, 'within 3 s')
  await t.rejects(
    openStores(`redis://user:secret@127.0.0.1:${port}`, { logger: quiet }),
    { message: /^(?!.*secret)/ },
    'the password never appears in the message'
  )
})

const haveRedisServer = spawnSync('redis-server', ['--version']).status === 0

t.test(
  'outage: commands reject fast while Redis is down or hung, and recover by themselves',
  { skip: haveRedisServer ? false : 'redis-server is not installed: the private-server outage test needs it' },
  async (t) => {
    const redis = await startPrivateRedis()
    t.teardown(() => redis.close())
    const stores = await openStores(redis.url, { logger: quiet, commandTimeout: 300, namespace: 'outage' })
    t.teardown(() => stores.close())
    const expiresAt = Date.now() + 60_000
    t.same(await stores.quota.consume('key_o', 'p', 1, 100, expiresAt), { granted: true, used: 1 })

    redis.pause()
    let started = Date.now()
    await t.rejects(stores.quota.consume('key_o', 'p', 1, 100, expiresAt), 'a hung server: the command times out')
    t.ok(Date.now() - started < 1500, `rejected after ${Date.now() - started} ms (command timeout 300 ms)`)
    await redis.stop('SIGKILL')

    started = Date.now()
    await t.rejects(stores.quota.consume('key_o', 'p', 1, 100, expiresAt), 'a stopped server')
    await t.rejects(stores.keys.getByHash(makeRecord('acct_x').hash), 'key lookups reject too, never "no such key"')
    t.ok(Date.now() - started < 1000, `both rejected after ${Date.now() - started} ms`)

    await redis.start()
    started = Date.now()
    let result
    while (Date.now() - started < 5000) {
      try {
        result = await stores.quota.consume('key_o', 'p', 1, 100, expiresAt)
        break
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
    }
    // The restarted server is empty (no persistence) and has no scripts: NOSCRIPT → EVAL.
    t.same(result, { granted: true, used: 1 }, `recovered ${Date.now() - started} ms after the restart`)
  }
)

t.test(
  'F4: accounts indexed by the lower-cased address (before canonical emails) still block every spelling of their mailbox',
  { skip },
  async (t) => {
    t.teardown(cleanup)
    const namespace = uniqueNamespace()
    namespaces.push(namespace)
    await (await openStores(url!, { namespace, logger: quiet })).close()
    // A namespace as the previous release left it: schema 2, accounts under `email:<lower-cased address>`.
    const { default: KeyvRedis } = await import('@keyv/redis')
    const { default: Keyv } = await import('keyv')
    const client = createClient({ url: url! })
    await client.connect()
    const keyv = new Keyv(new KeyvRedis(client as never, { namespace: `${namespace}-keys` }), {
      namespace: `${namespace}-keys`,
      useKeyPrefix: false,
      throwOnErrors: true
    })
    const old = makeAccount(Date.UTC(2030, 0, 1), { email: '"sig.dup"@bücher.com' })
    await keyv.set(`account:${old.id}`, old)
    await keyv.set(`email:${old.email}`, old.id)
    await keyv.set('meta:schema', 2)
    await client.close()

    const stores = await openStores(url!, { namespace, logger: quiet })
    t.teardown(() => stores.close())
    for (const spelling of ['sig.dup@xn--bcher-kva.com', '"sig\\.dup"@BU\u0308CHER.com', '"sig.dup"@bücher.com']) {
      t.equal((await stores.keys.getAccountByEmail(spelling))?.id, old.id, `${spelling} finds the old account`)
      await t.rejects(
        stores.keys.createAccount(makeAccount(Date.now(), { email: spelling })),
        { code: 'ERR_UV_DUPLICATE_ACCOUNT' },
        `${spelling} is taken`
      )
    }
    t.equal((await stores.keys.listAccounts()).length, 1, 'no account added')
  }
)
