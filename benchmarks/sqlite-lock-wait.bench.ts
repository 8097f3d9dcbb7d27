// Event-loop delay while another process holds the SQLite write lock: node:sqlite's own busy handler (sleeps on the loop) vs our timer retries.
import { fork } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { openSqliteDatabase } from '../lib/stores/sqlite-driver.js'

const usage = `Usage: npx tsx benchmarks/sqlite-lock-wait.bench.ts (Node >= 22.13: node:sqlite)
A child process takes the write lock for HOLD_MS (default 20) every 2 x HOLD_MS for LOCK_SECONDS (default 5);
meanwhile this process writes in a loop and a 1 ms timer measures the event loop's delay.`

// @types/node 20 knows neither node:sqlite nor getBuiltinModule: the little we use, typed here.
interface StatementSync {
  run(...params: unknown[]): unknown
}
interface NodeSqlite {
  DatabaseSync: new (
    path: string,
    options?: { timeout?: number }
  ) => { exec(sql: string): void; prepare(sql: string): StatementSync; close(): void }
}
const builtin = (process as { getBuiltinModule?: (id: string) => unknown }).getBuiltinModule
const nodeSqlite = builtin?.call(process, 'node:sqlite') as NodeSqlite | undefined

const holdMs = Number(process.env.HOLD_MS ?? 20)
const seconds = Number(process.env.LOCK_SECONDS ?? 5)

if (process.argv[2] === 'holder') {
  // The other process: holds the write lock, lets go, takes it again.
  const db = new nodeSqlite!.DatabaseSync(process.argv[3]!, { timeout: 10_000 })
  const until = Date.now() + seconds * 1000
  const sleep = (ms: number): void => {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms)
  }
  while (Date.now() < until) {
    db.exec('BEGIN IMMEDIATE')
    db.exec('UPDATE t SET n = n + 1 WHERE id = 0')
    sleep(holdMs)
    db.exec('COMMIT')
    sleep(holdMs)
  }
  db.close()
  process.exit(0)
}

console.error(usage)
if (nodeSqlite === undefined) {
  console.error('This Node has no node:sqlite; nothing to compare.')
  process.exit(2)
}
const { DatabaseSync } = nodeSqlite
const dir = mkdtempSync(join(tmpdir(), 'uv-lockwait-'))
const rows: string[] = []
try {
  for (const mode of ['SQLite busy handler (timeout 5000)', 'timer retries (this package)'] as const) {
    const file = join(dir, `${mode.length}.sqlite`)
    const setup = new DatabaseSync(file)
    setup.exec('PRAGMA journal_mode=WAL; CREATE TABLE t (id INTEGER PRIMARY KEY, n INTEGER); INSERT INTO t VALUES (0, 0), (1, 0)')
    setup.close()
    let write: () => Promise<unknown>
    let close: () => Promise<void>
    if (mode.startsWith('SQLite')) {
      const db = new DatabaseSync(file, { timeout: 5000 })
      const statement = db.prepare('UPDATE t SET n = n + 1 WHERE id = 1')
      write = async () => statement.run()
      close = async () => db.close()
    } else {
      const db = await openSqliteDatabase(file, { busyTimeout: 5000 })
      const statement = await db.prepare('UPDATE t SET n = n + 1 WHERE id = 1')
      write = async () => statement.all()
      close = () => db.close()
    }
    const holder = fork(fileURLToPath(import.meta.url), ['holder', file], { execArgv: process.execArgv })
    await new Promise((resolve) => setTimeout(resolve, 200))
    const histogram = monitorEventLoopDelay({ resolution: 1 })
    histogram.enable()
    const until = Date.now() + (seconds - 1) * 1000
    let writes = 0
    // Writes in a loop, as requests would; a 5 ms timer stands for everything else the process serves.
    let ticks = 0
    const started = Date.now()
    const ticker = setInterval(() => ticks++, 5)
    while (Date.now() < until) {
      await write()
      writes++
      await new Promise((resolve) => setImmediate(resolve))
    }
    clearInterval(ticker)
    const tickShare = ticks / ((Date.now() - started) / 5)
    histogram.disable()
    await new Promise((resolve) => holder.on('exit', resolve))
    await close()
    const ms = (ns: number): string => (ns / 1e6).toFixed(1)
    rows.push(
      `| ${mode} | ${(writes / (seconds - 1)).toFixed(0)} | ${(tickShare * 100).toFixed(0)}% | ${ms(histogram.percentile(50))} | ${ms(histogram.percentile(99))} | ${ms(histogram.max)} |`
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
console.log(
  `\nWrites while another process holds the lock ${holdMs} ms of every ${2 * holdMs} ms, Node ${process.version}, ${new Date().toISOString()}\n`
)
console.log('| busy handling | writes/s | 5 ms timer ticks delivered | loop delay p50 ms | p99 ms | max ms |')
console.log('|---|---:|---:|---:|---:|---:|')
for (const row of rows) console.log(row)
