// A consume that rejected is undone once the store answers again, and given up (logged) only after the bound.
import t from 'tap'
import { QuotaCompensation } from '../../lib/quota/compensation.js'
import { MemoryQuotaStore } from '../../lib/stores/memory-store.js'
import type { QuotaStore } from '../../lib/types.js'
import { captureLogger } from '../fixtures/create-api.js'

/** A memory quota store that remembers named consumes and whose `cancel` fails while `down`. */
function flakyStore() {
  const inner = new MemoryQuotaStore()
  const applied = new Map<string, number>()
  const state = { down: true, cancels: 0 }
  const quota: QuotaStore = {
    localKeys: true,
    prefix: 'test',
    async consume(keyId, period, amount, limit, expiresAt, operation) {
      const result = await inner.consume(keyId, period, amount, limit, expiresAt)
      if (result.granted && operation) applied.set(operation, amount)
      return result
    },
    refund: (keyId, period, amount) => inner.refund(keyId, period, amount),
    get: (keyId, period) => inner.get(keyId, period),
    daily: (...args) => inner.daily(...args),
    monthly: (...args) => inner.monthly(...args),
    async cancel(operation, keyId, period, amount) {
      state.cancels++
      if (state.down) throw new Error('store down')
      if (!applied.delete(operation)) return false
      await inner.refund(keyId, period, amount)
      return true
    }
  }
  return { quota, state }
}

// No test waits for the retry timer: each pass is driven with flush(), and the give-up bound runs on an injected clock.
const manual = 3_600_000

t.test('retries until the store is back, then gives the units back exactly once', async (t) => {
  const { quota, state } = flakyStore()
  const logger = captureLogger()
  const compensation = new QuotaCompensation({ logger, interval: manual })
  t.teardown(() => compensation.close())
  // The store applied this consume, but the caller saw a rejection (reply lost).
  await quota.consume('k', '2026-11', 3, 25, Date.now() + 1e6, 'op-1')
  compensation.add(quota, 'op-1', 'k', '2026-11', 3)
  await compensation.flush()
  await compensation.flush()
  await compensation.flush()
  t.equal(state.cancels, 3, 'tried at once, then once per pass while down')
  t.equal(compensation.size, 1)
  t.equal(await quota.get('k', '2026-11'), 3)
  state.down = false
  await compensation.flush()
  t.equal(compensation.size, 0, 'nothing pending once the store answered')
  t.equal(await quota.get('k', '2026-11'), 0, 'the units came back')
  t.ok(logger.lines.some((line) => line.includes('gave back 3 units')))
  await compensation.flush()
  t.equal(state.cancels, 4, 'and it is not tried again')
})

t.test('a consume that never reached the store is dropped without touching usage', async (t) => {
  const { quota, state } = flakyStore()
  state.down = false
  const compensation = new QuotaCompensation({ logger: captureLogger(), interval: manual })
  t.teardown(() => compensation.close())
  await quota.consume('k', '2026-11', 2, 25, Date.now() + 1e6)
  compensation.add(quota, 'op-lost', 'k', '2026-11', 4)
  await compensation.flush()
  t.equal(compensation.size, 0)
  t.equal(await quota.get('k', '2026-11'), 2)
})

t.test('gives up after the bound with ERR_UV_REFUND; close() never hangs on a dead store', async (t) => {
  const { quota } = flakyStore()
  const logger = captureLogger()
  let clock = Date.UTC(2026, 10, 22)
  const compensation = new QuotaCompensation({ logger, interval: manual, giveUpAfter: 30_000, now: () => clock })
  compensation.add(quota, 'op-2', 'k', '2026-11', 1)
  clock += 29_999
  await compensation.flush()
  t.equal(compensation.size, 1, 'still retried just before the bound')
  t.notOk(logger.lines.some((line) => line.includes('ERR_UV_REFUND')))
  clock += 1
  await compensation.flush()
  t.equal(compensation.size, 0, 'given up at the bound')
  t.ok(logger.lines.some((line) => line.includes('ERR_UV_REFUND')))
  const hanging = new QuotaCompensation({ logger, interval: manual })
  hanging.add({ ...quota, cancel: () => new Promise<boolean>(() => {}) }, 'op-3', 'k', '2026-11', 1)
  const started = Date.now()
  await hanging.close(100)
  t.ok(Date.now() - started < 1000, 'close() returned within its deadline')
})

t.test('stores without cancel are left alone', async (t) => {
  const compensation = new QuotaCompensation({ logger: captureLogger() })
  compensation.add(new MemoryQuotaStore(), 'op', 'k', '2026-11', 1)
  t.equal(compensation.size, 0)
})
