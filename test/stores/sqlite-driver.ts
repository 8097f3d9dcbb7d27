// The SQLite driver choice (node:sqlite, else sqlite3, else one clear error), lock waits off the event loop, and @keyv/sqlite files read unchanged.
import { join } from 'node:path'
import { KeyvSqlite } from '@keyv/sqlite'
import Keyv from 'keyv'
import t from 'tap'
import { openStores } from '../../lib/stores/open-stores.js'
import { NO_DRIVER_MESSAGE, openSqliteDatabase } from '../../lib/stores/sqlite-driver.js'
import { makeAccount, makeRecord } from '../fixtures/store-contract.js'

const [major = 0, minor = 0] = process.versions.node.split('.').map(Number)
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13)

t.test('node:sqlite where Node has it, the sqlite3 package otherwise', async (t) => {
  const db = await openSqliteDatabase(':memory:', { busyTimeout: 100 })
  t.teardown(() => db.close())
  t.equal(db.driver, hasNodeSqlite ? 'node:sqlite' : 'sqlite3')
  t.equal((await db.all<{ n: number }>('SELECT 1 + ?1 AS n', [41]))[0]?.n, 42)
  const forced = await openSqliteDatabase(':memory:', { busyTimeout: 100, driver: 'sqlite3' })
  t.teardown(() => forced.close())
  t.equal(forced.driver, 'sqlite3', 'the optional driver can be chosen')
})

t.test('with neither driver, one line naming the package to install', async (t) => {
  const missing = async (name: string): Promise<never> => {
    throw Object.assign(new Error(`Cannot find module '${name}'`), {
      code: name.startsWith('node:') ? 'ERR_UNKNOWN_BUILTIN_MODULE' : 'MODULE_NOT_FOUND'
    })
  }
  await t.rejects(openSqliteDatabase('x.sqlite', { busyTimeout: 100 }, missing), {
    code: 'ERR_UV_STORE_DRIVER',
    message: NO_DRIVER_MESSAGE
  })
  t.notMatch(NO_DRIVER_MESSAGE, /\n/, 'one line')
  t.match(NO_DRIVER_MESSAGE, /npm install sqlite3/)
  t.match(NO_DRIVER_MESSAGE, /Node >= 22\.13/)
  const broken = async (): Promise<never> => {
    throw new Error('the binding crashed')
  }
  await t.rejects(openSqliteDatabase('x.sqlite', { busyTimeout: 100 }, broken), /the binding crashed/, 'other load errors are not hidden')
})

t.test(
  'node:sqlite: a write waiting for another connection leaves the event loop free',
  { skip: !hasNodeSqlite && 'Node < 22.13' },
  async (t) => {
    const file = join(t.testdir(), 'locked.sqlite')
    const holder = await openSqliteDatabase(file, { busyTimeout: 2000 })
    const waiter = await openSqliteDatabase(file, { busyTimeout: 2000 })
    t.teardown(async () => {
      await holder.close()
      await waiter.close()
    })
    await holder.all('PRAGMA journal_mode=WAL')
    await holder.all('CREATE TABLE t (n INTEGER)')
    await holder.all('BEGIN IMMEDIATE')
    let ticks = 0
    const ticker = setInterval(() => ticks++, 5)
    const released = new Promise<void>((resolve) =>
      setTimeout(() => {
        void holder.all('COMMIT').then(() => resolve())
      }, 150)
    )
    const started = Date.now()
    await waiter.all('INSERT INTO t VALUES (1)')
    const waited = Date.now() - started
    clearInterval(ticker)
    await released
    t.ok(waited >= 140, `the write waited for the lock (${waited} ms)`)
    t.ok(ticks >= 10, `timers kept firing meanwhile (${ticks} ticks of 5 ms)`)
    t.same(
      (await holder.all<{ n: number }>('SELECT n FROM t')).map((r) => r.n),
      [1]
    )

    await holder.all('BEGIN IMMEDIATE')
    const short = await openSqliteDatabase(file, { busyTimeout: 100 })
    t.teardown(() => short.close())
    const t0 = Date.now()
    await t.rejects(short.all('INSERT INTO t VALUES (2)'), { message: /database is locked/ }, 'past busyTimeout it rejects')
    t.ok(Date.now() - t0 >= 90, 'after waiting about busyTimeout')
    await holder.all('ROLLBACK')
  }
)

t.test('keys written through @keyv/sqlite (releases up to 0.1.x) read unchanged through the new adapter', async (t) => {
  const file = join(t.testdir(), 'keyv-written.sqlite')
  const keyvStores = await openStores(`sqlite://${file}`)
  const account = makeAccount(Date.UTC(2030, 0, 1))
  await keyvStores.keys.createAccount(account)
  await keyvStores.close()
  // Written the way @keyv/sqlite writes: Keyv-serialised values in its table, keys `<namespace>:<key>`.
  const old = new Keyv({ store: new KeyvSqlite({ uri: `sqlite://${file}`, table: 'uv_keys' }), namespace: 'uv-keys', throwOnErrors: true })
  const record = makeRecord(account.id, Date.UTC(2030, 0, 2), { label: 'written by @keyv/sqlite' })
  await old.set(`id:${record.id}`, record.hash)
  await old.set(`hash:${record.hash}`, record)
  await old.disconnect()
  const stores = await openStores(`sqlite://${file}`)
  t.teardown(() => stores.close())
  t.same(await stores.keys.getByHash(record.hash), record)
  t.same(await stores.keys.getById(record.id), record)
  t.same(await stores.keys.list(), [record])
})
