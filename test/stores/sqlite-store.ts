// SQLite stores: the shared contract, plus cross-process atomicity, kill -9 durability and refusal of bad paths.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { openStores } from '../../lib/stores/open-stores.js'
import { SqliteQuotaStore } from '../../lib/stores/sqlite-quota-store.js'
import { makeAccount, makeRecord, storeContract, uniqueNamespace } from '../fixtures/store-contract.js'
import { legacySqlite } from './fixtures/legacy.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-sqlite-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const file = join(dir, 'contract.sqlite')

storeContract(t, () => openStores(`sqlite://${file}`, { namespace: uniqueNamespace() }), {
  cancel: false,
  keysVersion: true,
  keyWithAccount: true,
  twin: async () => {
    const namespace = uniqueNamespace()
    return [await openStores(`sqlite://${file}`, { namespace }), await openStores(`sqlite://${file}`, { namespace })]
  },
  legacy: async () => legacySqlite(dir)
})

const consumer = fileURLToPath(new URL('./fixtures/sqlite-consumer.ts', import.meta.url))

function child(args: string[]): {
  lines: string[]
  done: Promise<number | null>
  kill: () => void
  onLine: (fn: (line: string) => void) => void
} {
  const proc = spawn(process.execPath, ['--import', 'tsx', consumer, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
  const lines: string[] = []
  const listeners: Array<(line: string) => void> = []
  let buffer = ''
  proc.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk
    let i
    while ((i = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, i)
      buffer = buffer.slice(i + 1)
      lines.push(line)
      for (const fn of listeners) fn(line)
    }
  })
  return {
    lines,
    // 'close', not 'exit': every line the child wrote has been read by then.
    done: new Promise((resolve) => proc.on('close', (code) => resolve(code))),
    kill: () => proc.kill('SIGKILL'),
    onLine: (fn) => listeners.push(fn)
  }
}

t.test('two OS processes consuming one key never overshoot', async (t) => {
  const shared = join(dir, 'two-processes.sqlite')
  const limit = 500
  const startAt = String(Date.now() + 2500)
  const a = child([shared, 'key_shared', '400', String(limit), '8', startAt])
  const b = child([shared, 'key_shared', '400', String(limit), '8', startAt])
  t.same(await Promise.all([a.done, b.done]), [0, 0], 'both children exit cleanly')
  const granted = [a, b].map((c) => Number(c.lines.find((l) => l.startsWith('total '))?.split(' ')[1]))
  t.equal(granted[0]! + granted[1]!, limit, `exactly ${limit} granted across processes (${granted.join(' + ')})`)
  // SQLite's write lock is not fair between processes (a waiter sleeps and retries while the holder
  // commits batch after batch), so the split can be as uneven as 400 + 100; both must still get a share.
  t.ok(granted[0]! >= 50 && granted[1]! >= 50, 'both processes got units while the other was consuming')
  const stores = await openStores(`sqlite://${shared}`)
  t.teardown(() => stores.close())
  t.equal(await stores.quota.get('key_shared', '2031-05'), limit)
})

t.test('a consume that resolved survives kill -9 of the process that made it', async (t) => {
  const crashed = join(dir, 'kill-9.sqlite')
  const proc = child([crashed, 'key_crash', '100000', '1000000', '1'])
  let acknowledged = 0
  await new Promise<void>((resolve) => {
    proc.onLine((line) => {
      const [word, used] = line.split(' ')
      if (word !== 'granted') return
      acknowledged = Number(used)
      if (acknowledged >= 300) {
        proc.kill()
        resolve()
      }
    })
  })
  await proc.done
  // The child runs ahead of our reading: it may have acknowledged more before the signal landed.
  const written = Math.max(...proc.lines.filter((l) => l.startsWith('granted ')).map((l) => Number(l.split(' ')[1])))
  const stores = await openStores(`sqlite://${crashed}`)
  t.teardown(() => stores.close())
  const used = await stores.quota.get('key_crash', '2031-05')
  t.ok(used >= written, `every acknowledged unit is there (acknowledged ${written}, the parent had read ${acknowledged}, stored ${used})`)
  // At most the consume in flight when the signal landed (one, sequential child) may also have committed.
  t.ok(used <= written + 1, 'and nothing was counted twice')
})

t.test('keys and usage survive close and reopen', async (t) => {
  const path = join(dir, 'reopen.sqlite')
  const first = await openStores(`sqlite://${path}`)
  const account = makeAccount()
  await first.keys.createAccount(account)
  const record = makeRecord(account.id)
  await first.keys.create(record)
  await first.quota.consume(account.id, '2031-05', 7, 25, Date.UTC(2031, 5, 1), undefined, '2031-05-03')
  await first.close()
  const second = await openStores(`sqlite://${path}`)
  t.teardown(() => second.close())
  t.same(await second.keys.getByHash(record.hash), record)
  t.same(await second.keys.getAccount(account.id), account)
  t.equal(await second.quota.get(account.id, '2031-05'), 7)
  t.same(await second.quota.daily(account.id, '2031-05-01', '2031-05-31'), [{ day: '2031-05-03', units: 7 }])
})

t.test('a file store is shared across processes; :memory: is not', async (t) => {
  const onFile = await openStores(`sqlite://${join(dir, 'flags.sqlite')}`)
  t.teardown(() => onFile.close())
  t.equal(onFile.quota.localKeys, false)
  t.equal(onFile.keys.localKeys, false)
  const inMemory = await openStores('sqlite://:memory:')
  t.teardown(() => inMemory.close())
  t.equal(inMemory.quota.localKeys, true)
  t.equal(inMemory.keys.localKeys, true)
  t.match(await inMemory.quota.consume('key_m', 'p', 2, 2, Date.now() + 60_000), { granted: true, used: 2 })
})

t.test('the store refuses a path it cannot open or use', async (t) => {
  await t.rejects(
    openStores(`sqlite://${join(dir, 'no', 'such', 'dir', 'x.sqlite')}`),
    /user-verification: cannot open the SQLite store at .*directory exists/
  )
  const garbage = join(dir, 'not-a-database.sqlite')
  writeFileSync(garbage, 'this is not a SQLite database, just text that is long enough to have a header '.repeat(20))
  await t.rejects(openStores(`sqlite://${garbage}`), /user-verification: .*SQLite store .*not usable/)
  const directory = join(dir, 'a-directory')
  mkdirSync(directory)
  await t.rejects(openStores(`sqlite://${directory}`), /user-verification: cannot open the SQLite store/)
  await t.rejects(openStores('sqlite://'), TypeError)
})

t.test("consume waits for another connection's write lock instead of failing", async (t) => {
  const path = join(dir, 'busy.sqlite')
  const a = new SqliteQuotaStore({ path })
  const b = new SqliteQuotaStore({ path, busyTimeout: 5000 })
  t.teardown(async () => {
    await a.close()
    await b.close()
  })
  await a.init()
  await b.init()
  const results = await Promise.all(
    Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).consume('key_busy', 'p', 1, 150, Date.now() + 60_000))
  )
  t.equal(results.filter((r) => r.granted).length, 150)
  t.equal(await a.get('key_busy', 'p'), 150)
})

t.test('group commit: consumes sent together are applied in arrival order, each all-or-nothing', async (t) => {
  const dir = t.testdir()
  const stores = await openStores(`sqlite://${dir}/batch.sqlite`)
  t.teardown(() => stores.close())
  const later = Date.now() + 60_000
  // Fired in one tick: the first goes alone, the rest queue behind it and share one statement.
  const amounts = [3, 3, 3, 3, 1, 2]
  const results = await Promise.all(amounts.map((amount) => stores.quota.consume('key_batch', 'p', amount, 10, later)))
  t.strictSame(
    results.map((r) => r.granted),
    [true, true, true, false, true, false]
  )
  t.strictSame(
    results.filter((r) => r.granted).map((r) => r.used),
    [3, 6, 9, 10],
    'each granted consume sees the ones before it'
  )
  t.equal(await stores.quota.get('key_batch', 'p'), 10)
  const other = await Promise.all([stores.quota.consume('key_x', 'p', 5, 5, later), stores.quota.consume('key_y', 'p', 6, 5, later)])
  t.strictSame(
    other.map((r) => r.granted),
    [true, false],
    'rows of different keys in one batch do not affect each other'
  )
})

t.test(
  'F4: accounts indexed by the lower-cased address (before canonical emails) still block every spelling of their mailbox',
  async (t) => {
    const namespace = uniqueNamespace()
    const path = join(dir, 'canonical.sqlite')
    // A store as the previous release left it: schema 2, accounts under `email:<lower-cased address>`.
    await (await openStores(`sqlite://${path}`, { namespace })).close()
    const { default: Keyv } = await import('keyv')
    const { SqliteKeyvAdapter } = await import('../../lib/stores/sqlite-keyv-adapter.js')
    const adapter = new SqliteKeyvAdapter({ path, table: `${namespace}_keys` })
    const keyv = new Keyv({ store: adapter, namespace: `${namespace}-keys`, throwOnErrors: true })
    const old = [
      makeAccount(Date.UTC(2030, 0, 1), { email: 'sig@bücher.com' }),
      makeAccount(Date.UTC(2030, 0, 2), { email: '"sig.dup"@gmail.com' })
    ]
    for (const account of old) {
      await keyv.set(`account:${account.id}`, account)
      await keyv.set(`email:${account.email}`, account.id)
    }
    await keyv.set('meta:schema', 2)
    await adapter.disconnect()

    const stores = await openStores(`sqlite://${path}`, { namespace })
    t.teardown(() => stores.close())
    for (const [spelling, account] of [
      ['sig@xn--bcher-kva.com', old[0]!],
      ['sig@bu\u0308cher.com', old[0]!],
      ['SIG@BÜCHER.COM', old[0]!],
      ['sig.dup@gmail.com', old[1]!],
      ['"sig\\.dup"@gmail.com', old[1]!]
    ] as const) {
      t.equal((await stores.keys.getAccountByEmail(spelling))?.id, account.id, `${spelling} finds the old account`)
      await t.rejects(
        stores.keys.createAccount(makeAccount(Date.now(), { email: spelling })),
        { code: 'ERR_UV_DUPLICATE_ACCOUNT' },
        `${spelling} is taken`
      )
    }
    t.equal((await stores.keys.listAccounts()).length, 2, 'no account added')
  }
)
