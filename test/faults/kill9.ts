// Fault: kill -9 under load. After a restart every unit of every 200 is still on record (SQLite, Redis), and nothing is counted twice.
import t, { type Test } from 'tap'
import { startDnsServer, type Zone } from '../fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, mixedBodies, runLoad, shoot, usageOf } from '../fixtures/load.js'
import { startPrivatePostgres } from '../fixtures/private-postgres.js'
import { postgresSkipReason, redisSkipReason, startPrivateRedis, type PrivateRedis } from '../fixtures/private-redis.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

// Slow domains, each answering after its own delay, so requests spend most of their time in the DNS
// check and do not move in lock-step.
const slowDomains = Array.from({ length: 8 }, (_, i) => [`slow${i}-mail.com`, 150 + 50 * i] as const)
const zone: Zone = { ...structuredClone(testZone) }
for (const [domain, delay] of slowDomains) zone[domain] = { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }], delay }
const dns = await startDnsServer(zone)
t.teardown(() => dns.close())
const concurrency = 8

/** Bodies whose email is on a slow domain; the DNS cache is off in the server, so every request waits for it. */
const slowBodies = slowDomains.map(([domain], i) => ({
  model: 'user_verification',
  email: `user${i}@${domain}`,
  firstname: 'Jane',
  lastname: 'Doe'
}))

/**
 * Kills a server while most requests wait for DNS, restarts, and returns how many units were
 * recorded beyond the 200s. Units are consumed only after the verification, so only a request
 * between the store's commit and its response write when the signal lands can be on record
 * without its 200 (it was +64 units when consumes came first).
 */
async function killDuringLookups(t: Test, store: string): Promise<number> {
  const args = ['--store', store, '--dns-servers', dns.server, '--dns-positive-ttl', '1', '--no-demo-key', '--quiet']
  const server = await startServe(args)
  t.teardown(() => server.stop('SIGKILL'))
  const { key, id } = await createKey(store, 'pro')
  const load = runLoad({
    url: server.url,
    token: key,
    bodies: slowBodies,
    concurrency: 24,
    maxRequests: 20_000,
    durationMs: 3000,
    timeoutMs: 10_000,
    stopWhen: (s) => s.status === 0
  })
  await new Promise((resolve) => setTimeout(resolve, 1500))
  await server.stop('SIGKILL')
  const shots = await load
  const counts = byStatus(shots)
  t.ok((counts[200] ?? 0) > 20, `the load got through before the crash (${JSON.stringify(counts)})`)
  t.ok((counts[0] ?? 0) >= 12, `and the crash cut off requests waiting for DNS (${counts[0]})`)
  const units = grantedUnits(shots)
  const used = await usageOf(store, id)
  t.ok(used >= units, `every unit of every 200 is on record: usage ${used} >= ${units}`)
  return used - units
}

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

// The measured bound: units on record beyond the 200s after kill -9, with 24 requests in flight.
for (const name of ['SQLite', 'Redis', 'PostgreSQL'] as const) {
  const skip = name === 'Redis' ? redisSkipReason() : name === 'PostgreSQL' ? postgresSkipReason() : undefined
  t.test(`kill -9 with DNS lookups in flight (${name}): nothing is charged for the requests cut off`, { skip }, async (t) => {
    let url = `sqlite://${t.testdir()}/slow.sqlite`
    if (name === 'Redis') {
      const redis = await startPrivateRedis({ appendfsync: 'always' })
      t.teardown(() => redis.close())
      url = redis.url
    } else if (name === 'PostgreSQL') {
      const pg = await startPrivatePostgres()
      t.teardown(() => pg.close())
      url = pg.url
    }
    const excess = await killDuringLookups(t, url)
    // Only requests between the commit and the response write can be on record without a 200. The
    // consume takes a millisecond or two of a request's 150-500 ms; the three requests on one domain
    // share its DNS answer and so reach the consume together. Measured over 8 runs: 0 seven times, 6 once (PostgreSQL).
    t.ok(excess <= 3 * 3, `at most one group's units beyond the 200s (measured ${excess}; 24 requests of 3 units were in flight)`)
  })
}
