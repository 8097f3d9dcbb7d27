// Cached key records on SQLite: most requests skip the key read, yet a revocation or plan change
// made by another process (the CLI) applies to the very next request.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { issueKey } from '../../lib/quota/api-keys.js'
import { periodOf } from '../../lib/quota/plans.js'
import { openStores } from '../../lib/stores/open-stores.js'
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
