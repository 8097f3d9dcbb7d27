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
  let reads = 0
  const getByHash = server.keys.getByHash.bind(server.keys)
  server.keys.getByHash = async (hash) => {
    reads++
    return getByHash(hash)
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
