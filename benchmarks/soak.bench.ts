// Soak: a fixed request rate for minutes against 2 instances on one Redis, restarted once mid-run; errors, lost units, latency, RSS.
// Run: npm run build && npx tsx benchmarks/soak.bench.ts   (SOAK_SECONDS=180 SOAK_RATE=100 by default)
import { readFileSync } from 'node:fs'
import { cpus } from 'node:os'
import { startDnsServer } from '../test/fixtures/dns-server.js'
import { byStatus, createKey, grantedUnits, mixedBodies, percentile, runLoad, usageOf } from '../test/fixtures/load.js'
import { startPrivateRedis } from '../test/fixtures/private-redis.js'
import { startServe } from '../test/fixtures/spawn-cli.js'
import { testZone } from '../test/fixtures/test-verifiers.js'

const seconds = Number(process.env.SOAK_SECONDS ?? 180)
const rate = Number(process.env.SOAK_RATE ?? 100)
const outageMs = Number(process.env.SOAK_OUTAGE_MS ?? 2000)

function rssMiB(pid: number | undefined): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1]) / 1024
}

const dns = await startDnsServer(structuredClone(testZone))
const redis = await startPrivateRedis({ appendfsync: 'everysec' })
const args = ['--store', redis.url, '--dns-servers', dns.server, '--no-demo-key', '--quiet']
const servers = await Promise.all([startServe(args), startServe(args)])
try {
  const pro = await createKey(redis.url, 'pro')
  // Warm-up (DNS cache, JIT) so the start RSS is the steady state's, not the cold process's.
  const warmKey = await createKey(redis.url, 'pro')
  await runLoad({
    url: (i) => servers[i % 2]!.url,
    token: warmKey.key,
    bodies: mixedBodies,
    concurrency: 8,
    maxRequests: 400,
    durationMs: 10_000
  })
  const rssStart = servers.map((s) => rssMiB(s.child.pid))

  let downAt = 0
  let upAt = 0
  const load = runLoad({
    url: (i) => servers[i % 2]!.url,
    token: pro.key,
    bodies: mixedBodies,
    rate,
    concurrency: 64,
    maxRequests: rate * seconds + 10,
    durationMs: seconds * 1000,
    timeoutMs: 10_000
  })
  const restart = (async () => {
    await new Promise((resolve) => setTimeout(resolve, (seconds * 1000) / 2))
    downAt = performance.now()
    await redis.stop('SIGTERM')
    await new Promise((resolve) => setTimeout(resolve, outageMs))
    await redis.start()
    upAt = performance.now()
  })()
  const [shots] = await Promise.all([load, restart])
  const rssEnd = servers.map((s) => rssMiB(s.child.pid))

  const outside = shots.filter((s) => s.start + s.ms < downAt || s.start > upAt + 1000)
  const errorsOutside = outside.filter((s) => s.status !== 200).length
  const during = shots.filter((s) => !outside.includes(s))
  const units = grantedUnits(shots)
  const used = await usageOf(redis.url, pro.id)
  const ok = shots.filter((s) => s.status === 200).map((s) => s.ms)
  const round = (n: number) => n.toFixed(1)
  console.log(
    `## Soak: ${seconds} s at ${rate} req/s, 2 instances on one Redis (appendfsync everysec), Redis stopped (SIGTERM) for ${outageMs} ms at mid-run\n`
  )
  console.log(
    `Date ${new Date().toISOString()}; ${cpus().length} cores (${cpus()[0]?.model}); Node ${process.version}; machine shared with other engineers' tests and a model training.\n`
  )
  console.log('| figure | value |')
  console.log('|---|---|')
  console.log(`| requests sent | ${shots.length} (${JSON.stringify(byStatus(shots))}) |`)
  console.log(
    `| outside the outage window (store down .. up + 1 s) | ${outside.length} requests, ${errorsOutside} errors (error rate ${round((100 * errorsOutside) / Math.max(1, outside.length))} %) |`
  )
  console.log(`| during the window | ${during.length} requests: ${JSON.stringify(byStatus(during))} |`)
  console.log(`| store down for | ${Math.round(upAt - downAt)} ms |`)
  console.log(
    `| units of the 200s / recorded in Redis | ${units} / ${used} (lost ${Math.max(0, units - used)}, counted without a 200 ${Math.max(0, used - units)}) |`
  )
  console.log(
    `| latency of 200s p50 / p99 / max | ${round(percentile(ok, 50))} / ${round(percentile(ok, 99))} / ${round(Math.max(...ok))} ms |`
  )
  console.log(`| RSS instance 1 start → end | ${round(rssStart[0]!)} → ${round(rssEnd[0]!)} MiB |`)
  console.log(`| RSS instance 2 start → end | ${round(rssStart[1]!)} → ${round(rssEnd[1]!)} MiB |`)
} finally {
  await Promise.all(servers.map((s) => s.stop('SIGKILL')))
  await redis.close()
  await dns.close()
}
