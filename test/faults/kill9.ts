// Fault: kill -9 under load. After a restart every unit of every 200 is still on record (SQLite, Redis), and nothing is counted twice.
import t, { type Test } from 'tap'
import { startDnsServer } from '../fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, mixedBodies, runLoad, shoot, usageOf } from '../fixtures/load.js'
import { redisSkipReason, startPrivateRedis, type PrivateRedis } from '../fixtures/private-redis.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())
const concurrency = 8

/** Loads one server, kills it (and, with `redis`, the Redis server too) with SIGKILL mid-load, restarts, and checks the books. */
async function killUnderLoad(t: Test, store: string, redis?: PrivateRedis): Promise<void> {
  const args = ['--store', store, '--dns-servers', dns.server, '--no-demo-key', '--quiet']
  const server = await startServe(args)
  t.teardown(() => server.stop('SIGKILL'))
  const { key, id } = await createKey(store, 'pro')
  const load = runLoad({
    url: server.url,
    token: key,
    bodies: mixedBodies,
    concurrency,
    maxRequests: 20_000,
    durationMs: 2500,
    timeoutMs: 10_000,
    stopWhen: (s) => s.status === 0
  })
  await new Promise((resolve) => setTimeout(resolve, 1200))
  await Promise.all([server.stop('SIGKILL'), redis?.stop('SIGKILL')])
  const shots = await load
  const counts = byStatus(shots)
  t.comment(`answers: ${JSON.stringify(counts)}`)
  t.ok((counts[200] ?? 0) > 20, 'the load got through before the crash')
  t.ok((counts[0] ?? 0) > 0, 'and the crash cut requests off')

  await redis?.start()
  const restarted = await startServe(args)
  t.teardown(() => restarted.stop('SIGKILL'))
  const units = grantedUnits(shots)
  const used = await usageOf(store, id)
  t.ok(used >= units, `every unit of every 200 is on record after the restart: usage ${used} >= ${units}`)
  // Requests cut off mid-way may have consumed before the crash; no more than were in flight.
  t.ok(used <= units + concurrency * 3, `and at most the in-flight requests' units on top (${used - units})`)
  t.equal((await shoot(restarted.url, key, mixedBodies[1]!)).status, 200, 'the restarted server serves the same key')
}

t.test('kill -9 of the server on SQLite', async (t) => {
  await killUnderLoad(t, `sqlite://${t.testdir()}/store.sqlite`)
})

t.test('kill -9 of the server on Redis', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis({ appendfsync: 'everysec' })
  t.teardown(() => redis.close())
  await killUnderLoad(t, redis.url)
})

t.test('kill -9 of the server and of Redis itself (appendfsync always)', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis({ appendfsync: 'always' })
  t.teardown(() => redis.close())
  await killUnderLoad(t, redis.url, redis)
})
