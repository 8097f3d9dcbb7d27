// Quota consume throughput and latency per store (memory, SQLite, Redis, PostgreSQL) vs. a plain @keyv/sqlite set.
import { mkdtempSync, rmSync } from 'node:fs'
import { cpus, tmpdir } from 'node:os'
import { join } from 'node:path'
import { KeyvSqlite } from '@keyv/sqlite'
import Keyv from 'keyv'
import { openStores } from '../lib/stores/open-stores.js'
import type { SqliteDriverName } from '../lib/stores/sqlite-driver.js'
import { SqliteQuotaStore } from '../lib/stores/sqlite-quota-store.js'
import type { Stores } from '../lib/types.js'
import { makeAccount, makeRecord, uniqueNamespace } from '../test/fixtures/store-contract.js'

const usage = `Usage: npx tsx benchmarks/quota-store.bench.ts [ops per run, default 4000]
Env: UV_TEST_REDIS_URL / UV_TEST_POSTGRES_URL add the Redis / PostgreSQL rows.`
const ops = Number(process.argv[2] ?? 4000)
if (!Number.isInteger(ops) || ops < 100) {
  console.error(usage)
  process.exit(2)
}
console.error(usage)

interface Row {
  store: string
  concurrency: number
  perSecond: number
  p50: number
  p99: number
}

async function measure(name: string, concurrency: number, n: number, op: (i: number) => Promise<unknown>): Promise<Row> {
  for (let i = 0; i < Math.min(200, n); i++) await op(i) // warm-up
  const latencies = new Float64Array(n)
  let next = 0
  const started = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        const i = next++
        const t0 = performance.now()
        await op(i)
        latencies[i] = performance.now() - t0
      }
    })
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort()
  return { store: name, concurrency, perSecond: n / seconds, p50: latencies[Math.floor(n * 0.5)]!, p99: latencies[Math.floor(n * 0.99)]! }
}

const dir = mkdtempSync(join(tmpdir(), 'uv-bench-'))
const rows: Row[] = []
const listRows: Array<{ store: string; ms: number }> = []
const expiresAt = Date.now() + 3_600_000
const quiet = { warn() {}, error() {}, info() {} }
const cleanups: Array<() => Promise<void>> = []

try {
  // Baseline: what a quota built on Keyv get/set would pay per write (and it would not even be atomic).
  const keyvFile = join(dir, 'keyv-baseline.sqlite')
  const keyv = new Keyv({ store: new KeyvSqlite({ uri: `sqlite://${keyvFile}` }), namespace: 'bench', throwOnErrors: true })
  for (const c of [1, 32])
    rows.push(await measure('@keyv/sqlite set (baseline)', c, Math.min(ops, 2000), async (i) => keyv.set(`k${i % 100}`, i)))
  await keyv.disconnect()

  const targets: Array<[string, () => Promise<Stores>]> = [
    ['memory', async () => openStores('memory://')],
    ['SQLite (file, WAL)', async () => openStores(`sqlite://${join(dir, 'quota.sqlite')}`, { namespace: uniqueNamespace('bench') })]
  ]
  // The quota store on each SQLite driver this Node can load (node:sqlite needs Node >= 22.13; sqlite3 is the optional fallback).
  for (const driver of ['node:sqlite', 'sqlite3'] as SqliteDriverName[]) {
    const quota = new SqliteQuotaStore({ path: join(dir, `driver-${driver.replace(':', '-')}.sqlite`), driver })
    try {
      await quota.init()
    } catch {
      continue
    }
    targets.push([`SQLite quota on ${driver}`, async () => ({ keys: undefined as never, quota, close: () => quota.close() })])
  }
  if (process.env.UV_TEST_REDIS_URL) {
    const namespace = uniqueNamespace('bench')
    targets.push(['Redis', async () => openStores(process.env.UV_TEST_REDIS_URL!, { namespace, logger: quiet })])
    cleanups.push(async () => {
      const { createClient } = await import('@keyv/redis')
      const client = createClient({ url: process.env.UV_TEST_REDIS_URL })
      await client.connect()
      for (const pattern of [`${namespace}-keys::*`, `${namespace}-quota:*`]) {
        for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 500 })) if (keys.length > 0) await client.unlink(keys)
      }
      await client.close()
    })
  }
  if (process.env.UV_TEST_POSTGRES_URL) {
    const namespace = uniqueNamespace('bench')
    targets.push(['PostgreSQL', async () => openStores(process.env.UV_TEST_POSTGRES_URL!, { namespace, logger: quiet })])
    cleanups.push(async () => {
      const { default: pg } = await import('pg')
      const client = new pg.Client({ connectionString: process.env.UV_TEST_POSTGRES_URL })
      await client.connect()
      await client.query(
        `DROP TABLE IF EXISTS ${namespace}_keys, ${namespace}_quota, ${namespace}_quota_ops, ${namespace}_quota_daily, ${namespace}_quota_meta`
      )
      await client.end()
    })
  }
  for (const [name, open] of targets) {
    const stores = await open()
    // Each store twice per concurrency, interleaved: the month total alone, and with the day's
    // history written in the same atomic step (what the middleware does), on other accounts.
    const period = new Date().toISOString().slice(0, 7)
    const day = new Date().toISOString().slice(0, 10)
    for (const c of [1, 32]) {
      const n = name === 'memory' ? ops * 10 : ops
      rows.push(await measure(name, c, n, async (i) => stores.quota.consume(`acct_m${c}_${i % 100}`, period, 1, 1e12, expiresAt)))
      rows.push(
        await measure(`${name} + day history`, c, n, async (i) =>
          stores.quota.consume(`acct_d${c}_${i % 100}`, period, 1, 1e12, expiresAt, undefined, day)
        )
      )
    }
    if (name !== 'memory' && !name.startsWith('SQLite quota on')) {
      const account = makeAccount()
      await stores.keys.createAccount(account)
      for (let i = 0; i < 1000; i++) await stores.keys.create(makeRecord(account.id, Date.UTC(2030, 0, 1) + i))
      const t0 = performance.now()
      const listed = await stores.keys.list()
      listRows.push({ store: `${name} (${listed.length} keys)`, ms: performance.now() - t0 })
    }
    await stores.close()
  }
} finally {
  // Leave nothing behind on the shared servers (their namespaces only; nothing is flushed).
  for (const cleanup of cleanups) await cleanup().catch((error: unknown) => console.error('cleanup failed:', error))
  rmSync(dir, { recursive: true, force: true })
}

const baseline = rows.filter((r) => r.store.startsWith('@keyv/sqlite'))
const fmt = (n: number, d = 0): string => n.toLocaleString('en-US', { maximumFractionDigits: d, minimumFractionDigits: d })
console.log(
  `\nQuota consume, ${ops} ops per run (memory: ${ops * 10}), ${cpus().length} CPUs, Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`
)
console.log('| store | concurrency | consumes/s | p50 ms | p99 ms | vs. @keyv/sqlite set |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const r of rows) {
  const base = baseline.find((b) => b.concurrency === r.concurrency)!
  console.log(
    `| ${r.store} | ${r.concurrency} | ${fmt(r.perSecond)} | ${fmt(r.p50, 3)} | ${fmt(r.p99, 3)} | ${fmt(r.perSecond / base.perSecond, 1)}x |`
  )
}
console.log('\n| key store list() | ms |')
console.log('|---|---:|')
for (const r of listRows) console.log(`| ${r.store} | ${fmt(r.ms, 1)} |`)
