// Cached key records on SQLite: most requests skip the key read, yet a revocation or plan change
// made by another process (the CLI) applies to the very next request.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { hashKey, issueKey } from '../../lib/quota/api-keys.js'
import { periodOf } from '../../lib/quota/plans.js'
import { cachedKeyReader } from '../../lib/index.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { createServerMetrics } from '../../server/metrics.js'
import { startApi } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-keycache-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const verifiers = await testVerifiers(t)
const one = { model: 'user_verification', firstname: 'Jane' }

async function setup(t: { teardown(fn: () => unknown): void }, name: string) {
  const url = `sqlite://${join(dir, `${name}.sqlite`)}`
  const server = await openStores(url)
  // A second, independent handle on the same file: what the CLI in another process does.
  const cli = await openStores(url)
  t.teardown(async () => {
    await cli.close()
    await server.close()
  })
  // Key reads the cache asks for (a combined key-and-account read counts once).
  let reads = 0
  let inside = false
  const getByHash = server.keys.getByHash.bind(server.keys)
  server.keys.getByHash = async (hash) => {
    if (!inside) reads++
    return getByHash(hash)
  }
  const getKeyWithAccount = server.keys.getKeyWithAccount?.bind(server.keys)
  if (getKeyWithAccount !== undefined)
    server.keys.getKeyWithAccount = async (hash) => {
      reads++
      inside = true
      try {
        return await getKeyWithAccount(hash)
      } finally {
        inside = false
      }
    }
  const api = await startApi({ ...verifiers, store: server })
  t.teardown(() => api.close())
  return { api, cli, reads: () => reads }
}

t.test('after the first request, the key is not read again while nothing changes', async (t) => {
  const { api, cli, reads } = await setup(t, 'reads')
  const { key } = await issueKey(cli.keys, 'pro')
  t.equal((await api.post(one, { token: key })).status, 200)
  const afterFirst = reads()
  for (let i = 0; i < 20; i++) t.equal((await api.post(one, { token: key })).status, 200)
  t.equal(reads(), afterFirst, 'no key reads for 20 more requests')
  t.equal(afterFirst, 1)
})

t.test('a revocation by another process applies to the next request', async (t) => {
  const { api, cli } = await setup(t, 'revoke')
  const issued = await issueKey(cli.keys, 'pro')
  t.equal((await api.post(one, { token: issued.key })).status, 200)
  t.equal((await api.post(one, { token: issued.key })).status, 200)
  await cli.keys.update(issued.id, { revokedAt: new Date().toISOString() })
  t.strictSame((await api.post(one, { token: issued.key })).body, { detail: 'Invalid API token' })
  t.equal(await cli.quota.get(issued.account, periodOf(Date.now()).id), 2, 'the refused request left no unit behind')
})

t.test('plan changes by another process apply to the next request, both ways, with exact usage', async (t) => {
  const { api, cli } = await setup(t, 'plan')
  const issued = await issueKey(cli.keys, 'free')
  for (let i = 0; i < 25; i++) await api.post(one, { token: issued.key })
  t.equal((await api.post(one, { token: issued.key })).status, 402)
  await cli.keys.updateAccount(issued.account, { plan: 'basic' })
  const upgraded = await api.post(one, { token: issued.key })
  t.equal(upgraded.status, 200)
  t.equal(upgraded.headers.get('x-quota-limit'), '30000')
  await cli.keys.updateAccount(issued.account, { plan: 'free' })
  t.equal((await api.post(one, { token: issued.key })).status, 402, 'the downgrade too')
  t.equal(await cli.quota.get(issued.account, periodOf(Date.now()).id), 26, 'no unit kept by the retried consumes')
})

t.test('another key changing does not disturb the answer, only costs a re-read', async (t) => {
  const { api, cli, reads } = await setup(t, 'other')
  const mine = await issueKey(cli.keys, 'pro')
  t.equal((await api.post(one, { token: mine.key })).status, 200)
  const before = reads()
  await issueKey(cli.keys, 'free')
  const reply = await api.post(one, { token: mine.key })
  t.equal(reply.status, 200)
  t.equal(reads(), before + 1)
  t.equal(await cli.quota.get(mine.account, periodOf(Date.now()).id), 2)
})

t.test('unknown and revoked keys take the same path to 401: the same store calls per request', async (t) => {
  const url = `sqlite://${join(dir, 'same-path.sqlite')}`
  const server = await openStores(url)
  t.teardown(() => server.close())
  // The calls the cache makes; inside the key store each combined read is one backend round trip
  // (a get for a digest it has never resolved, a getMany of key and account after that).
  const calls: string[] = []
  const keys = server.keys as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>
  let inside = false
  for (const name of ['getByHash', 'getAccount', 'getKeyWithAccount']) {
    const inner = keys[name]!.bind(server.keys)
    keys[name] = async (...args) => {
      if (inside) return inner(...args)
      calls.push(name)
      inside = name === 'getKeyWithAccount'
      try {
        return await inner(...args)
      } finally {
        inside = false
      }
    }
  }
  const keysVersion = server.quota.keysVersion!.bind(server.quota)
  server.quota.keysVersion = async () => {
    calls.push('keysVersion')
    return keysVersion()
  }
  const api = await startApi({ ...verifiers, store: server })
  t.teardown(() => api.close())
  const revoked = await issueKey(server.keys, 'pro')
  await server.keys.update(revoked.id, { revokedAt: new Date().toISOString() })
  const unknown = `uv_${'x'.repeat(43)}`
  // The first sight of a digest may read more (the store learns the key's account); then compare.
  for (const token of [revoked.key, unknown]) t.equal((await api.post(one, { token })).status, 401)
  const pathOf = async (token: string) => {
    calls.length = 0
    for (let i = 0; i < 5; i++) t.equal((await api.post(one, { token })).status, 401)
    return [...calls]
  }
  const revokedPath = await pathOf(revoked.key)
  const unknownPath = await pathOf(unknown)
  t.ok(revokedPath.length > 0, `the store is asked every time (${revokedPath.length / 5} calls a request)`)
  t.strictSame(revokedPath, unknownPath, 'the same calls, in the same order, for a revoked and an unknown key')
})

t.test("SQLite's readKey: a cached key is answered at once, the same record, without a read or a promise", async (t) => {
  const url = `sqlite://${join(dir, 'read-key.sqlite')}`
  const stores = await openStores(url)
  t.teardown(() => stores.close())
  const readKey = stores.readKey!.bind(stores)
  const issued = await issueKey(stores.keys, 'pro')
  const hash = hashKey(issued.key)
  const now = Date.now()
  const first = readKey(hash, now)
  t.ok(first instanceof Promise, 'the first read goes to the store')
  const read = await first
  t.equal(read.record?.id, issued.id)
  t.equal(read.account?.id, issued.account)
  t.equal(read.version, await stores.quota.keysVersion!(), 'read under the current version')
  // The SQLite key store reads a key and its account in one call.
  let reads = 0
  const getKeyWithAccount = stores.keys.getKeyWithAccount!.bind(stores.keys)
  stores.keys.getKeyWithAccount = (hash) => {
    reads++
    return getKeyWithAccount(hash)
  }
  t.equal(readKey(hash, now), read, 'the second read: the same record, not a promise')
  t.equal(reads, 0)
  for (let i = 0; i < 2; i++) {
    const unknown = readKey(hashKey('uv_unknown'), now)
    t.ok(unknown instanceof Promise, 'an unknown key is read every time (never cached)')
    t.equal((await unknown).record, undefined)
  }
  t.equal(reads, 2)
})

t.test("SQLite's readKey with a held record: itself while current, a fresh read after another process's write", async (t) => {
  const url = `sqlite://${join(dir, 'read-key-held.sqlite')}`
  const stores = await openStores(url)
  const cli = await openStores(url)
  t.teardown(async () => {
    await cli.close()
    await stores.close()
  })
  const issued = await issueKey(cli.keys, 'free')
  const hash = hashKey(issued.key)
  const now = Date.now()
  const held = await stores.readKey!(hash, now)
  t.equal(await stores.readKey!(hash, now, held), held, 'nothing changed: the held record')
  await cli.keys.updateAccount(issued.account, { plan: 'pro' })
  t.equal(stores.readKey!(hash, now), held, 'without asking, the cache still answers (the consume will tell)')
  const current = await stores.readKey!(hash, now, held)
  t.not(current, held)
  t.equal(current.account?.plan, 'pro', 'read afresh')
  t.ok(current.version! > held.version!, 'under the newer version')
  t.equal(stores.readKey!(hash, now), current, 'and cached from then on')
  // Before a fresh read, a consume reports the newer version: that is how the middleware learns it.
  await cli.keys.update(issued.id, { revokedAt: new Date(now).toISOString() })
  const consumed = await stores.quota.consume(issued.account, periodOf(now).id, 1, 10, now + 86_400_000)
  t.ok(consumed.keysVersion! > current.version!, 'the consume reports the revocation by its version')
  const revoked = await stores.readKey!(hash, now, current)
  t.not(revoked.record?.revokedAt, null, 'the held record is replaced by the revoked one')
  const again = stores.readKey!(hash, now)
  t.ok(again instanceof Promise, 'a revoked key is not cached')
  t.not((await again).record?.revokedAt, null)
})

t.test("readKey reads through the stores it is called on: the server's timed stores still time every key read", async (t) => {
  const stores = await openStores(`sqlite://${join(dir, 'read-key-timed.sqlite')}`)
  t.teardown(() => stores.close())
  const metrics = createServerMetrics({ metrics: () => ({ responses: {}, aborted: 0, inFlight: 0, unitsConsumed: 0, unitsRefunded: 0 }) })
  t.teardown(() => metrics.close())
  const timed = metrics.instrumentStores(stores)
  const issued = await issueKey(stores.keys, 'pro')
  const read = await timed.readKey!(hashKey(issued.key), Date.now())
  t.equal(read.record?.id, issued.id)
  const text = await metrics.render()
  for (const call of ['store="quota",call="keysVersion"', 'store="keys",call="getKeyWithAccount"'])
    t.match(text, `uv_store_call_duration_seconds_count{${call}} 1`, `${call} is timed`)
})

t.test('a hand-built store pair with keysVersion gets the same cache from the public cachedKeyReader', async (t) => {
  const opened = await openStores(`sqlite://${join(dir, 'hand-built.sqlite')}`)
  t.teardown(() => opened.close())
  let reads = 0
  const getKeyWithAccount = opened.keys.getKeyWithAccount!.bind(opened.keys)
  opened.keys.getKeyWithAccount = (hash) => {
    reads++
    return getKeyWithAccount(hash)
  }
  const stores = { keys: opened.keys, quota: opened.quota, close: async () => {}, readKey: cachedKeyReader() }
  const api = await startApi({ ...verifiers, store: stores })
  t.teardown(() => api.close())
  const issued = await issueKey(stores.keys, 'pro')
  for (let i = 0; i < 5; i++) t.equal((await api.post(one, { token: issued.key })).status, 200)
  t.equal(reads, 1, 'the key was read once for 5 requests')
  await stores.keys.update(issued.id, { revokedAt: new Date().toISOString() })
  t.equal((await api.post(one, { token: issued.key })).status, 401, 'and a revocation still applies to the next request')
})
