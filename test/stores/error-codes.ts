// Every error the stores throw is a UserVerificationError with a documented code, keeping its TypeError/RangeError kind.
import t from 'tap'
import { errorCodes, throttledWarning, UserVerificationError } from '../../lib/errors.js'
import { rotateKey } from '../../lib/quota/api-keys.js'
import { MemoryKeyStore } from '../../lib/stores/memory-store.js'
import { assertKeyStore, assertQuotaStore, openStores } from '../../lib/stores/open-stores.js'
import { PostgresQuotaStore } from '../../lib/stores/postgres-quota-store.js'
import { RedisQuotaStore } from '../../lib/stores/redis-quota-store.js'
import { SqliteKeyvAdapter } from '../../lib/stores/sqlite-keyv-adapter.js'
import { SqliteQuotaStore } from '../../lib/stores/sqlite-quota-store.js'
import { checkAccount, checkDay, checkExpiresAt, checkName, checkRecord, checkUnits, daysBetween } from '../../lib/stores/store-args.js'
import { mapOrdered } from '../../lib/verify-many.js'

type Kind = typeof TypeError | typeof RangeError | undefined
const cases: Array<[string, () => unknown, string, Kind]> = [
  ['checkUnits(-1)', () => checkUnits('amount', -1), 'ERR_UV_OPTIONS', RangeError],
  ['checkExpiresAt(NaN)', () => checkExpiresAt(Number.NaN), 'ERR_UV_OPTIONS', RangeError],
  ['checkName("")', () => checkName('keyId', ''), 'ERR_UV_OPTIONS', TypeError],
  ['checkRecord(null)', () => checkRecord(null), 'ERR_UV_OPTIONS', TypeError],
  ['checkRecord({ id: 1 })', () => checkRecord({ id: 1 }), 'ERR_UV_OPTIONS', TypeError],
  ['checkAccount(7)', () => checkAccount(7), 'ERR_UV_OPTIONS', TypeError],
  ['checkAccount({ id: "" })', () => checkAccount({ id: '' }), 'ERR_UV_OPTIONS', TypeError],
  ['checkDay outside its period', () => checkDay('2026-02-01', '2026-01'), 'ERR_UV_OPTIONS', RangeError],
  ['daysBetween over 800 days', () => daysBetween('2020-01-01', '2026-01-01'), 'ERR_UV_OPTIONS', RangeError],
  ['SqliteQuotaStore without path', () => new SqliteQuotaStore({ path: '' }), 'ERR_UV_OPTIONS', TypeError],
  ['SqliteQuotaStore bad table', () => new SqliteQuotaStore({ path: ':memory:', table: 'a-b' }), 'ERR_UV_OPTIONS', TypeError],
  ['SqliteKeyvAdapter bad table', () => new SqliteKeyvAdapter({ path: ':memory:', table: 'a;b' }), 'ERR_UV_OPTIONS', TypeError],
  ['PostgresQuotaStore without pool', () => new PostgresQuotaStore({} as never), 'ERR_UV_OPTIONS', TypeError],
  ['RedisQuotaStore without sendCommand', () => new RedisQuotaStore({} as never), 'ERR_UV_OPTIONS', TypeError],
  ['assertKeyStore({})', () => assertKeyStore({}), 'ERR_UV_OPTIONS', TypeError],
  ['assertQuotaStore(null)', () => assertQuotaStore(null), 'ERR_UV_OPTIONS', TypeError],
  ['openStores(42)', () => openStores(42 as never), 'ERR_UV_OPTIONS', TypeError],
  ['openStores("ftp://x")', () => openStores('ftp://x'), 'ERR_UV_OPTIONS', TypeError],
  ['openStores("sqlite://")', () => openStores('sqlite://'), 'ERR_UV_OPTIONS', TypeError],
  ['openStores sqlite in a missing directory', () => openStores('sqlite:///nonexistent-dir-uv/x/store.sqlite'), 'ERR_UV_STORE', undefined],
  [
    'openStores unreachable Redis',
    () => openStores('redis://127.0.0.1:1', { connectTimeout: 500, logger: silent() }),
    'ERR_UV_STORE',
    undefined
  ],
  [
    'openStores unreachable PostgreSQL',
    () => openStores('postgres://postgres@127.0.0.1:1/x', { connectTimeout: 500, logger: silent() }),
    'ERR_UV_STORE',
    undefined
  ],
  [
    'a closed SQLite quota store',
    async () => {
      const quota = new SqliteQuotaStore({ path: ':memory:' })
      await quota.init()
      await quota.close()
      return quota.get('k', '2026-01')
    },
    'ERR_UV_STORE',
    undefined
  ],
  ['rotateKey with a negative grace', () => rotateKey(new MemoryKeyStore(), 'k', -1), 'ERR_UV_OPTIONS', RangeError],
  ['mapOrdered with concurrency 0', () => mapOrdered([1], 0, async (x) => x).next(), 'ERR_UV_OPTIONS', RangeError]
]

function silent() {
  return { info() {}, warn() {}, error() {} }
}

for (const [name, call, code, kind] of cases) {
  t.test(name, async (t) => {
    let thrown: unknown
    try {
      await call()
    } catch (error) {
      thrown = error
    }
    t.ok(thrown instanceof UserVerificationError, 'is a UserVerificationError')
    t.equal((thrown as { code?: unknown }).code, code)
    t.ok(code in errorCodes, 'the code is documented')
    if (kind !== undefined) t.ok(thrown instanceof kind, `is a ${kind.name}`)
  })
}

t.test('throttledWarning: the first event at once, then one line per interval with the count', async (t) => {
  const lines: Array<Record<string, unknown>> = []
  let now = 0
  const warn = throttledWarning({ warn: (_message, fields) => lines.push(fields ?? {}) }, 'WRN_UV_REFUNDED', 60_000, () => now)
  warn('a')
  warn('b')
  warn('c')
  t.same(lines, [{ code: 'WRN_UV_REFUNDED', count: 1 }])
  now = 60_000
  warn('d')
  t.same(lines[1], { code: 'WRN_UV_REFUNDED', count: 3 })
  t.equal(lines.length, 2)
})
