// PostgreSQL stores: the shared contract on UV_TEST_POSTGRES_URL, plus refusal, shared-pool and outage behaviour.
import { createServer, type Server, type Socket } from 'node:net'
import pg from 'pg'
import t from 'tap'
import { openStores } from '../../lib/stores/open-stores.js'
import { makeAccount, makeRecord, storeContract, uniqueNamespace } from '../fixtures/store-contract.js'
import { legacyPostgres } from './fixtures/legacy.js'

const url = process.env.UV_TEST_POSTGRES_URL
const skip =
  url === undefined || url === ''
    ? 'UV_TEST_POSTGRES_URL is not set: set it (e.g. postgres://postgres@127.0.0.1:5432/test) to run the PostgreSQL store tests'
    : false
const quiet = { warn() {}, error() {}, info() {} }

/** Drops the tables of every namespace this file created; touches nothing else on the shared server. */
const namespaces: string[] = []
async function cleanup(): Promise<void> {
  if (namespaces.length === 0 || url === undefined) return
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  for (const ns of namespaces.splice(0))
    await client.query(`DROP TABLE IF EXISTS ${ns}_keys, ${ns}_quota, ${ns}_quota_ops, ${ns}_quota_daily, ${ns}_quota_meta`)
  await client.end()
}

t.test('PostgreSQL store contract', { skip }, async (t) => {
  t.teardown(cleanup)
  storeContract(
    t,
    async () => {
      const namespace = uniqueNamespace()
      namespaces.push(namespace)
      return openStores(url!, { namespace, logger: quiet })
    },
    {
      cancel: true,
      keysVersion: false,
      keyWithAccount: true,
      twin: async () => {
        const namespace = uniqueNamespace()
        namespaces.push(namespace)
        return [await openStores(url!, { namespace, logger: quiet }), await openStores(url!, { namespace, logger: quiet })]
      },
      legacy: async () => {
        const namespace = uniqueNamespace()
        namespaces.push(namespace)
        return legacyPostgres(url!, namespace)
      }
    }
  )
})

t.test('two store sets in one process keep working when one closes', { skip }, async (t) => {
  t.teardown(cleanup)
  // @keyv/postgres keeps one module-global pool; closing one store used to end the other's.
  const a = await openStores(url!, { namespace: push(uniqueNamespace()), logger: quiet })
  const b = await openStores(url!, { namespace: push(uniqueNamespace()), logger: quiet })
  t.teardown(() => b.close())
  const account = makeAccount()
  await b.keys.createAccount(account)
  const record = makeRecord(account.id)
  await b.keys.create(record)
  await a.close()
  t.same(await b.keys.getByHash(record.hash), record)
  t.same(await b.quota.consume(account.id, '2031-05', 1, 1, Date.UTC(2031, 5, 1)), { granted: true, used: 1 })
  t.equal(b.quota.localKeys, false)
  t.equal(b.keys.localKeys, false)
})

t.test('an unreachable PostgreSQL is refused quickly with a clear error', async (t) => {
  const port = await freePort()
  const started = Date.now()
  await t.rejects(openStores(`postgres://uv:secret@127.0.0.1:${port}/nope`, { logger: quiet }), {
    message: /^user-verification: cannot use the PostgreSQL store at postgres:\/\/uv:\*\*\*@127\.0\.0\.1:\d+\/nope: (?!.*secret)/
  })
  t.ok(Date.now() - started < 3000, 'within 3 s')
})

t.test('outage: statements reject within the command timeout and the pool recovers', { skip }, async (t) => {
  t.teardown(cleanup)
  // A TCP proxy we can freeze (hung server) and cut (dead server) in front of the shared PostgreSQL.
  const target = new URL(url!)
  const proxy = await startProxy(target.hostname, Number(target.port || 5432))
  t.teardown(() => proxy.close())
  const proxied = new URL(url!)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(proxy.port)
  const stores = await openStores(proxied.toString(), {
    namespace: push(uniqueNamespace()),
    logger: quiet,
    commandTimeout: 300,
    connectTimeout: 500
  })
  t.teardown(() => stores.close())
  const expiresAt = Date.UTC(2031, 5, 1)
  t.same(await stores.quota.consume('key_o', 'p', 1, 100, expiresAt), { granted: true, used: 1 })

  proxy.freeze(true)
  let started = Date.now()
  await t.rejects(stores.quota.consume('key_o', 'p', 1, 100, expiresAt), 'a hung server: the statement times out')
  await t.rejects(stores.keys.getByHash(makeRecord('acct_x').hash), 'key lookups reject too, never "no such key"')
  t.ok(Date.now() - started < 4000, `rejected after ${Date.now() - started} ms`)
  proxy.freeze(false)
  proxy.cut()
  proxy.refuse(true)
  started = Date.now()
  await t.rejects(stores.quota.consume('key_o', 'p', 1, 100, expiresAt), 'a stopped server')
  t.ok(Date.now() - started < 2000, `rejected after ${Date.now() - started} ms`)

  proxy.refuse(false)
  started = Date.now()
  let result
  while (Date.now() - started < 5000) {
    try {
      result = await stores.quota.consume('key_o', 'p', 1, 100, expiresAt)
      break
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
  }
  t.ok(result?.granted, `recovered ${Date.now() - started} ms after the server came back`)
  t.ok(result !== undefined && result.used >= 2, 'usage from before the outage is still there')
})

t.test('a consume held up by a hung server and cancelled meanwhile never commits later', { skip }, async (t) => {
  t.teardown(cleanup)
  const target = new URL(url!)
  const proxy = await startProxy(target.hostname, Number(target.port || 5432))
  t.teardown(() => proxy.close())
  const proxied = new URL(url!)
  proxied.hostname = '127.0.0.1'
  proxied.port = String(proxy.port)
  const namespace = push(uniqueNamespace())
  const hung = await openStores(proxied.toString(), { namespace, logger: quiet, commandTimeout: 300, connectTimeout: 500 })
  t.teardown(() => hung.close())
  const direct = await openStores(url!, { namespace, logger: quiet })
  t.teardown(() => direct.close())
  const expiresAt = Date.UTC(2031, 5, 1)

  proxy.freeze(true)
  await t.rejects(hung.quota.consume('key_late', 'p', 2, 100, expiresAt, 'op-held'), 'the consume times out on the hung server')
  // The middleware's compensation cancels on another connection, before the held statement has run.
  t.equal(await direct.quota.cancel!('op-held', 'key_late', 'p', 2), false, 'nothing to undo yet')
  proxy.freeze(false)
  // Now the server gets the held statement: it must not add the units.
  await new Promise((resolve) => setTimeout(resolve, 700))
  t.equal(await direct.quota.get('key_late', 'p'), 0, 'the late consume did not commit')
  t.same(await direct.quota.consume('key_late', 'p', 1, 100, expiresAt, 'op-next'), { granted: true, used: 1 }, 'the key works on')
})

function push(namespace: string): string {
  namespaces.push(namespace)
  return namespace
}

interface Proxy {
  port: number
  freeze: (on: boolean) => void
  cut: () => void
  refuse: (on: boolean) => void
  close: () => Promise<void>
}

async function startProxy(host: string, port: number): Promise<Proxy> {
  const sockets = new Set<Socket>()
  let frozen = false
  let refusing = false
  const thawed = async (): Promise<void> => {
    while (frozen) await new Promise((resolve) => setTimeout(resolve, 20))
  }
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy()
      return
    }
    const upstream = new (client.constructor as typeof Socket)()
    upstream.connect(port, host)
    for (const s of [client, upstream]) {
      sockets.add(s)
      s.on('close', () => sockets.delete(s))
      s.on('error', () => {})
    }
    // While frozen, bytes are held back (not dropped), as a stopped server would; a side that
    // closes meanwhile still gets its bytes delivered, then the close, as by a kernel buffer.
    const pipe = (from: Socket, to: Socket): void => {
      let chain = Promise.resolve()
      from.on('data', (chunk: Buffer) => {
        if (!frozen && held === 0) {
          to.write(chunk)
          return
        }
        held++
        chain = chain.then(thawed).then(() => {
          held--
          if (!to.destroyed) to.write(chunk)
        })
      })
      from.on('close', () => {
        chain = chain.then(thawed).then(() => {
          to.end()
        })
      })
    }
    let held = 0
    pipe(client, upstream)
    pipe(upstream, client)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  return {
    port: typeof address === 'object' && address !== null ? address.port : 0,
    freeze: (on) => {
      frozen = on
    },
    cut: () => {
      for (const s of sockets) s.destroy()
    },
    refuse: (on) => {
      refusing = on
    },
    close: async () => {
      for (const s of sockets) s.destroy()
      await new Promise((resolve) => server.close(resolve))
    }
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))))
    })
  })
}
