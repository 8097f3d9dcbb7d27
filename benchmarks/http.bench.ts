// Throughput and latency of the full endpoint (3 fields, warm DNS cache, SQLite store) vs a bare Express
// JSON echo, both sent the same 512 varied bodies (benchmarks/http-traffic.ts).
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { cpus } from 'node:os'
import autocannon from 'autocannon'
import { benchBodies } from './http-traffic.js'

if (!existsSync(new URL('../dist/lib/index.js', import.meta.url)))
  throw new Error('benchmarks/http.bench.ts measures the build: run `npm run build` first')
const duration = Number(process.env.BENCH_SECONDS ?? 10)
const rounds = Number(process.env.BENCH_ROUNDS ?? 2)
const connections = 32
// Optional A/B: another checkout (e.g. a worktree of the previous commit, with its node_modules) whose
// endpoint is measured in every round too, next to this one's, so both share the machine's load.
const baseline = process.env.BENCH_BASELINE
// Optional: the servers on another Node than the load generator (e.g. the client on a faster Node,
// so the echo is not limited by the client).
const serverNode = process.env.BENCH_SERVER_NODE ?? process.execPath
// 512 different bodies, sent in turn on each connection (the same ones to the echo).
const requests = benchBodies(512).map((body) => ({ method: 'POST' as const, body }))

async function start(mode: string, root?: string): Promise<{ child: ChildProcess; port: number; key: string }> {
  const server = root === undefined ? new URL('./http-server.ts', import.meta.url) : `${root}/benchmarks/http-server.ts`
  const child = fork(server, [mode], { execArgv: ['--import', 'tsx'], cwd: root, execPath: serverNode })
  const [message] = (await once(child, 'message')) as [{ port: number; key: string }]
  return { child, ...message }
}

async function measure(mode: string, root?: string) {
  const { child, port, key } = await start(mode, root)
  const url = `http://127.0.0.1:${port}/`
  const headers = { 'content-type': 'application/json', 'x-api-token': key }
  // Warm-up: fills the DNS cache and JIT-compiles the hot path.
  await autocannon({ url, headers, requests, connections: 8, duration: 2 })
  const result = await autocannon({ url, headers, requests, connections, duration })
  child.kill()
  const non2xx = result.non2xx + result.errors + result.timeouts
  return { mode, rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99, non2xx, total: result.requests.total }
}

const rows = []
for (let round = 1; round <= rounds; round++) {
  const echo = await measure('echo')
  // With a baseline, odd rounds measure it after this endpoint and even rounds before, so neither
  // side always gets the later (or earlier) slice of a changing load.
  const early = baseline !== undefined && round % 2 === 0 ? await measure('full', baseline) : undefined
  const full = await measure('full')
  const before = baseline === undefined ? undefined : (early ?? (await measure('full', baseline)))
  rows.push({ round, echo, full, ratio: full.rps / echo.rps, before })
}

const serverVersion = execFileSync(serverNode, ['--version'], { encoding: 'utf8' }).trim()
console.log(
  `# HTTP throughput (${new Date().toISOString()}, ${cpus().length} cores, ${cpus()[0]?.model}, load generator on node ${process.version}, servers on node ${serverVersion})`
)
console.log(`autocannon, ${connections} connections, ${duration} s per run after a 2 s warm-up; each server in its own process.\n`)
console.log('| round | echo req/s | echo p99 ms | endpoint req/s | endpoint p50 ms | endpoint p99 ms | endpoint non-2xx | ratio |')
console.log('|---|---|---|---|---|---|---|---|')
for (const { round, echo, full, ratio } of rows) {
  console.log(
    `| ${round} | ${echo.rps.toFixed(0)} | ${echo.p99} | ${full.rps.toFixed(0)} | ${full.p50} | ${full.p99} | ${full.non2xx} | ${(ratio * 100).toFixed(1)}% |`
  )
}
if (baseline !== undefined) {
  console.log(`\nA/B against ${baseline} (its endpoint measured after this one's in odd rounds, before it in even rounds):\n`)
  console.log('| round | this endpoint req/s | baseline endpoint req/s | this / baseline |')
  console.log('|---|---|---|---|')
  for (const { round, full, before } of rows)
    console.log(`| ${round} | ${full.rps.toFixed(0)} | ${before!.rps.toFixed(0)} | ${((full.rps / before!.rps) * 100).toFixed(1)}% |`)
  const ab = rows.map((r) => r.full.rps / r.before!.rps).sort((a, b) => a - b)[Math.floor(rows.length / 2)] ?? 0
  console.log(`\nMedian this / baseline: ${(ab * 100).toFixed(1)}%.`)
}
const median = rows.map((r) => r.ratio).sort((a, b) => a - b)[Math.floor(rows.length / 2)] ?? 0
console.log(`\nEndpoint throughput as a share of the bare echo: ${(median * 100).toFixed(1)}% (target >= 80%).`)
if (rows.some((r) => r.full.non2xx > 0)) {
  console.log('FAIL: the endpoint answered non-2xx during the run')
  process.exitCode = 1
}
if (median < 0.8) process.exitCode = 1
