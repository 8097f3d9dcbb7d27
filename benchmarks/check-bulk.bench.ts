// `check --input/--output` throughput and peak memory: rows/s with a warm and a cold DNS cache, RSS on growing files.
// npm run build && npx tsx benchmarks/check-bulk.bench.ts   (BENCH_ROWS=100000, BENCH_BIG_ROWS=1000000; 0 skips the big file)
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs'
import { loadavg, cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startDnsServer, type Zone } from '../test/fixtures/dns-server.js'

const rows = Number(process.env.BENCH_ROWS ?? 100_000)
const bigRows = Number(process.env.BENCH_BIG_ROWS ?? 1_000_000)
const cli = fileURLToPath(new URL('../dist/server/cli.js', import.meta.url))
const dir = mkdtempSync(join(tmpdir(), 'uv-bench-check-'))
const firstnames = ['Maria', 'Jan', 'Aisha', 'Wei', 'Olga', 'Juan', 'Priya', 'Kofi', 'Sven', 'Yuki', 'asdf', 'Test']
const lastnames = ['Garcia', 'Kowalski', 'Khan', 'Chen', 'Ivanova', 'Lopez', 'Sharma', 'Mensah', 'Berg', 'Sato', 'qwerty', 'xxx']

/** Writes `count` rows whose emails spread over `domains` domains (`d<i>.bench-mail.com`). */
async function writeInput(path: string, count: number, domains: number): Promise<void> {
  const out = createWriteStream(path)
  out.write('id,email,first_name,last_name\n')
  for (let i = 0; i < count; i++) {
    const line = `${i},user${i}@d${i % domains}.bench-mail.com,${firstnames[i % 12]},${lastnames[(i * 7) % 12]}\n`
    if (!out.write(line)) await once(out, 'drain')
  }
  out.end()
  await once(out, 'close')
}

interface Run {
  rowsPerSecond: number
  peakRssMiB: number
  seconds: number
  queries: number
}

async function run(input: string, dnsServer: string, queries: () => number): Promise<Run> {
  const before = queries()
  const started = process.hrtime.bigint()
  const child = spawn(
    process.execPath,
    [cli, 'check', '--input', input, '--output', `${input}.out.csv`, '--overwrite', '--json', '--quiet', '--dns-servers', dnsServer],
    { stdio: ['ignore', 'pipe', 'inherit'] }
  )
  let stdout = ''
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk))
  const [code] = (await once(child, 'close')) as [number]
  if (code !== 0) throw new Error(`check exited with ${code}`)
  const summary = JSON.parse(stdout)
  const seconds = Number(process.hrtime.bigint() - started) / 1e9
  return { rowsPerSecond: Math.round(summary.rows / seconds), peakRssMiB: summary.peakRssMiB, seconds, queries: queries() - before }
}

const zone: Zone = {}
const distinct = rows
for (let i = 0; i < distinct; i++) zone[`d${i}.bench-mail.com`] = { mx: [{ priority: 10, exchange: `mx.d${i}.bench-mail.com` }] }
const dns = await startDnsServer(zone)
try {
  const load = loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
  console.log(`date ${new Date().toISOString()}, nproc ${cpus().length}, load average ${load}, Node ${process.version}`)
  const warmInput = join(dir, 'warm.csv')
  const coldInput = join(dir, 'cold.csv')
  await writeInput(warmInput, rows, 100)
  await writeInput(coldInput, rows, distinct)
  const queries = () => dns.queries.length
  console.log('\n| run | rows | distinct domains | DNS queries | seconds | rows/s | peak RSS MiB |\n|---|---|---|---|---|---|---|')
  for (const [name, input, domains] of [
    ['warm cache (100 domains)', warmInput, 100],
    ['cold cache (a domain per row)', coldInput, distinct]
  ] as const) {
    const result = await run(input, dns.server, queries)
    console.log(
      `| ${name} | ${rows} | ${domains} | ${result.queries} | ${result.seconds.toFixed(1)} | ${result.rowsPerSecond} | ${result.peakRssMiB} |`
    )
  }
  if (bigRows > 0) {
    // Memory on growing files, warm cache: flat means the peak does not grow with the row count.
    for (const count of [bigRows / 10, bigRows]) {
      const input = join(dir, `big-${count}.csv`)
      await writeInput(input, count, 100)
      const result = await run(input, dns.server, queries)
      console.log(
        `| memory, warm cache | ${count} (${(statSync(input).size / 2 ** 20).toFixed(0)} MiB) | 100 | ${result.queries} | ${result.seconds.toFixed(1)} | ${result.rowsPerSecond} | ${result.peakRssMiB} |`
      )
      rmSync(`${input}.out.csv`, { force: true })
      rmSync(input, { force: true })
    }
  }
} finally {
  await dns.close()
  rmSync(dir, { recursive: true, force: true })
}
