// Issue 5, scale-out: several `serve` processes (or --workers) on one Redis/PostgreSQL share the monthly quota exactly.
import t, { type Test } from 'tap'
import { startDnsServer } from '../fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, mixedBodies, runLoad, usageOf, type Shot } from '../fixtures/load.js'
import { startPrivatePostgres } from '../fixtures/private-postgres.js'
import { postgresSkipReason, redisSkipReason, startPrivateRedis } from '../fixtures/private-redis.js'
import { startServe, type RunningServer } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

// Several server processes and real stores on a shared 2-core machine: more than tap's default 120 s under contention.
t.setTimeout(300_000)
const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())
const serveArgs = (store: string) => ['--store', store, '--dns-servers', dns.server, '--dns-timeout', '1000', '--no-demo-key', '--quiet']

// One field per request, so a Free key's 25 units are used up exactly; the values vary, the cost does not.
const singleFieldBodies = [
  { model: 'user_verification', email: 'jane.doe@acme-mail.com' },
  { model: 'user_verification', firstname: 'Jane' },
  { model: 'user_verification', lastname: 'Okafor' }
]

async function startInstances(t: Test, store: string, count: number, extra: string[] = []): Promise<RunningServer[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => startServe([...serveArgs(store), ...extra])))
  t.teardown(() => Promise.all(servers.map((s) => s.stop('SIGKILL'))))
  return servers
}

function perInstance(servers: RunningServer[], shots: Array<Shot & { i?: number }>): number[] {
  return servers.map((_s, n) => shots.filter((s) => s.i === n && s.status === 200).length)
}

/** The three quota claims of the issue against `count` instances (or one instance with workers) on `store`. */
async function sharedQuota(t: Test, store: string, servers: RunningServer[]): Promise<void> {
  const urls = servers.map((s) => s.url)
  const pick = (i: number) => urls[i % urls.length]!

  await t.test('one Free key hammered on every instance at once: exactly 25 units granted, the rest 402', async (t) => {
    const free = await createKey(store, 'free')
    const shots = await runLoad({
      url: pick,
      token: free.key,
      bodies: singleFieldBodies,
      concurrency: 24,
      maxRequests: 120,
      durationMs: 20_000
    })
    t.equal(shots.length, 120, 'every request answered')
    t.strictSame(byStatus(shots), { 200: 25, 402: 95 }, 'exactly 25 successes, every other answer 402')
    t.equal(grantedUnits(shots), 25)
    t.equal(await usageOf(store, free.id), 25, 'the store records 25 used')
    t.ok(
      shots.filter((s) => s.status === 402).every((s) => s.detail === 'You have to upgrade your plan'),
      '402 bodies as the spec says'
    )
  })

  await t.test('mixed 1–3 field requests on one Free key: never past 25, and all-or-nothing to the last unit', async (t) => {
    const free = await createKey(store, 'free')
    const storm = await runLoad({ url: pick, token: free.key, bodies: mixedBodies, concurrency: 24, maxRequests: 60, durationMs: 20_000 })
    const stormUnits = grantedUnits(storm)
    t.ok(stormUnits <= 25 && stormUnits >= 23, `the storm got ${stormUnits} units: at most 25, and no more than 2 left unused`)
    t.ok(
      storm.every((s) => s.status === 200 || s.status === 402),
      'only 200 and 402 answers'
    )
    t.equal(await usageOf(store, free.id), stormUnits, 'recorded usage equals the units of the 200s')
    // Single fields use up the rest; together exactly 25.
    const rest = await runLoad({
      url: pick,
      token: free.key,
      bodies: singleFieldBodies,
      concurrency: 4,
      maxRequests: 20,
      durationMs: 10_000
    })
    t.equal(stormUnits + grantedUnits(rest), 25, 'exactly 25 in total')
    t.equal(await usageOf(store, free.id), 25)
  })

  await t.test('a Pro key under sustained load: recorded usage equals the sum of request_count of the 200s', async (t) => {
    const pro = await createKey(store, 'pro')
    // A fixed number of requests, not a time window: on a loaded machine 1.5 s held fewer than 100.
    const shots = await runLoad({ url: pick, token: pro.key, bodies: mixedBodies, concurrency: 16, maxRequests: 400, durationMs: 60_000 })
    const counts = byStatus(shots)
    t.equal(counts[200], shots.length, `all ${shots.length} requests succeeded (${JSON.stringify(counts)})`)
    t.equal(shots.length, 400, 'all 400 requests of the load were sent')
    const units = grantedUnits(shots)
    t.equal(await usageOf(store, pro.id), units, `usage = ${units}, the sum of request_count of all 200 responses`)
  })
}

t.test('two instances on one Redis', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.close())
  const servers = await startInstances(t, redis.url, 2)
  await sharedQuota(t, redis.url, servers)
  t.test('both instances served the load', async (t) => {
    const free = await createKey(redis.url, 'free')
    const tagged: Array<Shot & { i?: number }> = []
    await Promise.all(
      servers.map(async (s, n) => {
        const shots = await runLoad({
          url: s.url,
          token: free.key,
          bodies: singleFieldBodies,
          concurrency: 6,
          maxRequests: 40,
          durationMs: 10_000
        })
        tagged.push(...shots.map((shot) => ({ ...shot, i: n })))
      })
    )
    const wins = perInstance(servers, tagged)
    t.equal(wins[0]! + wins[1]!, 25, `25 in total (${wins.join(' + ')})`)
    t.ok(wins[0]! > 0 && wins[1]! > 0, 'each instance granted some of them')
  })
  t.test('SIGTERM stops both cleanly', async (t) => {
    t.same(await Promise.all(servers.map((s) => s.stop('SIGTERM'))), [0, 0])
  })
})

t.test('three instances on one PostgreSQL', { skip: postgresSkipReason() }, async (t) => {
  const pg = await startPrivatePostgres()
  t.teardown(() => pg.close())
  // The first instance creates the tables; start the others after it so the test is about quota, not DDL races.
  const first = await startInstances(t, pg.url, 1)
  const others = await startInstances(t, pg.url, 2)
  await sharedQuota(t, pg.url, [...first, ...others])
})

t.test('serve --workers 2 on Redis: the workers share the quota exactly', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.close())
  const [primary] = await startInstances(t, redis.url, 1, ['--workers', '2'])
  t.match(primary!.stderr(), /\(2 workers\)/, 'the primary reports two workers')
  await sharedQuota(t, redis.url, [primary!])
  t.test('SIGTERM to the primary stops it and its workers with exit 0', async (t) => {
    t.equal(await primary!.stop('SIGTERM'), 0)
  })
})

t.test('serve --workers 2 on memory:// is refused with exit code 2 and a message', async (t) => {
  const refused = startServe(['--store', 'memory://', '--workers', '2', '--no-demo-key', '--quiet'])
  await t.rejects(refused, /serve exited with 2 before listening: .*--workers 2 needs a store shared by all processes/s)
})

t.test("serve --workers 2 on sqlite://:memory: is refused too (one process's memory)", async (t) => {
  const refused = startServe(['--store', 'sqlite://:memory:', '--workers', '2', '--no-demo-key', '--quiet'])
  await t.rejects(refused, /serve exited with 2 before listening: .*needs a store shared by all processes/s)
})
