// Fault: kill -9 while most requests wait for DNS. Units are consumed after the verification, so only requests between commit and response write can be on record without a 200.
import t, { type Test } from 'tap'
import { startDnsServer, type Zone } from '../fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, runLoad, usageOf } from '../fixtures/load.js'
import { startPrivatePostgres } from '../fixtures/private-postgres.js'
import { postgresSkipReason, redisSkipReason, startPrivateRedis } from '../fixtures/private-redis.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

// Slow domains, each answering after its own delay, so requests spend most of their time in the DNS
// check and do not move in lock-step.
const slowDomains = Array.from({ length: 8 }, (_, i) => [`slow${i}-mail.com`, 150 + 50 * i] as const)
const zone: Zone = { ...structuredClone(testZone) }
for (const [domain, delay] of slowDomains) zone[domain] = { mx: [{ priority: 10, exchange: 'mx.acme-mail.com' }], delay }
// Three servers started and killed, each under load: more than the default 120 s on a busy machine.
t.setTimeout(300_000)
const dns = await startDnsServer(zone)
t.teardown(() => dns.close())

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
