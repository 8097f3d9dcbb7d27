// Fault: kill -9 under load. After a restart every unit of every 200 is still on record (SQLite, Redis), and nothing is counted twice.
// With --workers, kill -9 of the primary leaves the workers to finish what they hold: usage equals the 200s exactly.
import { once } from 'node:events'
import t, { type Test } from 'tap'
import { startDnsServer } from '../fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, mixedBodies, runLoad, type Shot, shoot, usageOf } from '../fixtures/load.js'
import { redisSkipReason, startPrivateRedis, type PrivateRedis } from '../fixtures/private-redis.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())
const concurrency = 8

/** Mixed load from `clients` closed-loop clients until one finds no server; `crash` runs 1.2 s in. */
async function loadUntilCrash(
  t: Test,
  url: string,
  key: string,
  clients: number,
  crash: () => Promise<unknown>
): Promise<{ shots: Shot[]; counts: Record<number, number>; crashedAt: number }> {
  const load = runLoad({
    url,
    token: key,
    bodies: mixedBodies,
    concurrency: clients,
    maxRequests: 20_000,
    durationMs: 2500,
    timeoutMs: 10_000,
    stopWhen: (s) => s.status === 0
  })
  await new Promise((resolve) => setTimeout(resolve, 1200))
  await crash()
  const crashedAt = performance.now()
  const shots = await load
  const counts = byStatus(shots)
  t.comment(`answers: ${JSON.stringify(counts)}`)
  t.ok((counts[200] ?? 0) > 20, 'the load got through before the crash')
  t.ok((counts[0] ?? 0) > 0, 'and the crash cut requests off')
  return { shots, counts, crashedAt }
}

/** Loads one server, kills it (and, with `redis`, the Redis server too) with SIGKILL mid-load, restarts, and checks the books. */
async function killUnderLoad(t: Test, store: string, redis?: PrivateRedis): Promise<void> {
  const args = ['--store', store, '--dns-servers', dns.server, '--no-demo-key', '--quiet']
  const server = await startServe(args)
  t.teardown(() => server.stop('SIGKILL'))
  const { key, id } = await createKey(store, 'pro')
  const { shots } = await loadUntilCrash(t, server.url, key, concurrency, () =>
    Promise.all([server.stop('SIGKILL'), redis?.stop('SIGKILL')])
  )

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

// Attacker finding F6: kill -9 of the primary of `--workers 2` under load charged 32–44 units with
// no 200 (1234 acknowledged, 1278 on record). Node's cluster code in a worker exits at once when
// the primary's IPC channel drops, cutting off requests whose consume had committed. The workers
// own the client sockets, so they can and must finish every request they hold: the books balance
// exactly, and the workers exit by themselves afterwards, within the shutdown bound.
t.test('kill -9 of the primary of --workers 2 on SQLite (attacker finding F6)', async (t) => {
  const store = `sqlite://${t.testdir()}/store.sqlite`
  const args = ['--store', store, '--dns-servers', dns.server, '--no-demo-key', '--quiet', '--workers', '2']
  const server = await startServe(args)
  // The workers hold the stdio pipes too: 'close' comes only once they have all exited.
  const closed = once(server.child, 'close').then(() => performance.now())
  t.teardown(() => server.stop('SIGKILL'))
  const { key, id } = await createKey(store, 'pro')
  // More clients than the single-process cases: more requests in flight when the primary dies.
  const { shots, counts, crashedAt } = await loadUntilCrash(t, server.url, key, 32, () => server.stop('SIGKILL'))
  t.ok(
    Object.keys(counts).every((status) => status === '200' || status === '0'),
    'every answer is a 200; the rest found no server (no 5xx, nothing half-done)'
  )

  const exitedMs =
    (await Promise.race([closed, new Promise<number>((resolve) => setTimeout(() => resolve(Number.NaN), 15_000))])) - crashedAt
  t.ok(exitedMs < 11_000, `the orphaned workers exit by themselves within the 10 s shutdown bound (${exitedMs.toFixed(0)} ms)`)
  const shutdowns = server
    .stdout()
    .split('\n')
    .filter((line) => line.includes('"shutting down"') && line.includes('"primary gone"')).length
  t.equal(shutdowns, 2, 'each worker logs a graceful shutdown for the lost primary')

  const units = grantedUnits(shots)
  const used = await usageOf(store, id)
  t.equal(used, units, `units on record (${used}) equal the request_count of the 200s received (${units}) exactly`)
  const restarted = await startServe(args)
  t.teardown(() => restarted.stop('SIGKILL'))
  t.equal((await shoot(restarted.url, key, mixedBodies[1]!)).status, 200, 'the restarted server serves the same key')
})
