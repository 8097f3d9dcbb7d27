// Fault: overload. Past maxInFlight or maxEventLoopDelay the API sheds with 503 + Retry-After, keeps accepted latency bounded and recovers.
import t, { type Test } from 'tap'
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { byStatus, grantedUnits, percentile, runLoad, type Shot } from '../fixtures/load.js'

const emailOnly = { model: 'user_verification', email: 'jane.doe@acme-mail.com' }
const nameOnly = { model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }
const serverScript = fileURLToPath(new URL('../fixtures/overload-server.ts', import.meta.url))

interface Child {
  endpoint: string
  key: string
  used(): Promise<number>
}

/** The API in its own process (see fixtures/overload-server.ts), so measured latency is the server's, not the load loop's. */
async function startChild(t: Test, options: { maxInFlight: number; maxEventLoopDelay?: number }): Promise<Child> {
  const child = spawn(process.execPath, ['--import', 'tsx', serverScript, JSON.stringify(options)], { stdio: ['pipe', 'pipe', 'inherit'] })
  t.teardown(() => child.kill('SIGKILL'))
  const lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]()
  const first = await lines.next()
  const { endpoint, key } = JSON.parse(first.value as string) as { endpoint: string; key: string }
  return {
    endpoint,
    key,
    async used() {
      child.stdin!.write('usage\n')
      return (JSON.parse((await lines.next()).value as string) as { used: number }).used
    }
  }
}

async function overloadRun(t: Test, maxInFlight: number): Promise<Shot[]> {
  const api = await startChild(t, { maxInFlight })
  const shots = await runLoad({
    url: api.endpoint,
    token: api.key,
    bodies: [emailOnly],
    concurrency: 32,
    maxRequests: 3000,
    durationMs: 3000
  })
  const recovery = await runLoad({
    url: api.endpoint,
    token: api.key,
    bodies: [emailOnly],
    concurrency: 2,
    maxRequests: 20,
    durationMs: 5000
  })
  t.strictSame(byStatus(recovery), { 200: 20 }, 'once the burst is over every request succeeds again')
  t.equal(await api.used(), grantedUnits(shots) + 20, 'a shed request consumes nothing: usage equals the 200s')
  return shots
}

t.test('maxInFlight: shed with 503 + Retry-After, accepted p99 stays bounded; without it latency grows with the queue', async (t) => {
  const shed = await overloadRun(t, 4)
  const unbounded = await overloadRun(t, 0)
  const counts = byStatus(shed)
  t.ok(
    (counts[503] ?? 0) > 0 && (counts[200] ?? 0) > 0,
    `with maxInFlight 4 some requests are shed, some served (${JSON.stringify(counts)})`
  )
  t.equal((counts[200] ?? 0) + (counts[503] ?? 0), shed.length, 'only 200 and 503')
  const rejected = shed.filter((s) => s.status === 503)
  t.ok(
    rejected.every((s) => s.retryAfter === '5' && s.detail === 'Tool service unavailable'),
    'every shed request says Tool service unavailable with Retry-After'
  )
  const p99Shed = percentile(
    rejected.map((s) => s.ms),
    99
  )
  t.ok(p99Shed < 1000, `shedding is quick: p99 of 503s ${p99Shed.toFixed(0)} ms`)

  const accepted = percentile(
    shed.filter((s) => s.status === 200).map((s) => s.ms),
    99
  )
  const queued = percentile(
    unbounded.filter((s) => s.status === 200).map((s) => s.ms),
    99
  )
  t.comment(
    `accepted p99: ${accepted.toFixed(0)} ms with maxInFlight 4, ${queued.toFixed(0)} ms with shedding off (32 clients, 100 ms serial downstream)`
  )
  t.ok(
    accepted < 1500,
    `accepted p99 is bounded: ${accepted.toFixed(0)} ms (4 in flight x 100 ms + overhead; generous for a shared 2-core machine)`
  )
  t.ok(queued > 2 * accepted, `and without shedding it is not (${queued.toFixed(0)} ms): the bound is what keeps it down`)
  t.strictSame(byStatus(unbounded), { 200: unbounded.length }, 'with shedding off nothing is refused, everything queues')
})

t.test('maxEventLoopDelay: a blocked event loop sheds, then recovers', async (t) => {
  const api = await startChild(t, { maxEventLoopDelay: 40, maxInFlight: 0 })
  const shots = await runLoad({
    url: api.endpoint,
    token: api.key,
    bodies: [nameOnly],
    concurrency: 24,
    maxRequests: 2000,
    durationMs: 2500
  })
  const counts = byStatus(shots)
  t.ok((counts[503] ?? 0) > 0, `requests are shed while the loop is blocked (${JSON.stringify(counts)})`)
  t.ok((counts[200] ?? 0) > 0, 'and some are still served')
  t.ok(
    shots.filter((s) => s.status === 503).every((s) => s.retryAfter === '5'),
    'with Retry-After'
  )
  // The delay is sampled over 500 ms windows: give it two windows to see the idle loop.
  await new Promise((resolve) => setTimeout(resolve, 1200))
  const recovery = await runLoad({
    url: api.endpoint,
    token: api.key,
    bodies: [emailOnly],
    concurrency: 1,
    maxRequests: 10,
    durationMs: 5000
  })
  t.strictSame(byStatus(recovery), { 200: 10 }, 'after the load the instance serves again')
  t.equal(await api.used(), grantedUnits([...shots, ...recovery]), 'shed requests consumed nothing')
})
