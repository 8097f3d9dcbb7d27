// Options: defaults for {}, undefined members and null-prototype objects; bad values throw with the fix; coded warnings.
import t from 'tap'
import { resolveOptions } from '../../lib/http/options.js'
import { defaultPlans } from '../../lib/quota/plans.js'
import { captureLogger } from '../fixtures/create-api.js'

t.test('{}, { key: undefined } and Object.create(null) all give the defaults', async (t) => {
  for (const input of [undefined, {}, { plans: undefined, bodyLimit: undefined }, Object.create(null)]) {
    const config = resolveOptions(input)
    t.equal(config.store, 'sqlite://./user-verification.sqlite')
    t.strictSame(config.plans, defaultPlans)
    t.equal(config.bodyLimit, 16384)
    t.equal(config.retryAfter, 5)
    t.equal(config.maxInFlight, 1024)
  }
})

t.test('impossible values throw TypeError/RangeError naming the option, with code ERR_UV_OPTIONS', async (t) => {
  const bad: Array<[Record<string, unknown>, RegExp, ErrorConstructor]> = [
    [{ bodyLimit: 'big' }, /`bodyLimit` must be an integer, got "big"/, TypeError],
    [{ bodyLimit: 10 }, /`bodyLimit` must be >= 64, got 10/, RangeError],
    [{ plans: {} }, /`plans` must be/, TypeError],
    [{ plans: { free: -1 } }, /`plans.free` must be >= 0/, RangeError],
    [{ plans: { free: 2.5 } }, /`plans.free` must be an integer/, TypeError],
    [{ retryAfter: -1 }, /`retryAfter`/, RangeError],
    [{ maxInFlight: 1.5 }, /`maxInFlight`/, TypeError],
    [{ now: 123 }, /`now` must be a function/, TypeError],
    [{ logger: { warn() {} } }, /`logger` must be an object with warn\(\) and error\(\)/, TypeError],
    [{ store: 42 }, /`store` must be a store URL/, TypeError],
    [{ emailVerifier: {} }, /`emailVerifier`/, TypeError],
    [{ nameVerifier: { predict: 1 } }, /`nameVerifier`/, TypeError]
  ]
  for (const [input, message, kind] of bad) {
    t.throws(() => resolveOptions(input as never), { message, code: 'ERR_UV_OPTIONS' }, JSON.stringify(input))
    try {
      resolveOptions(input as never)
    } catch (error) {
      t.type(error, kind)
    }
  }
  // @ts-expect-error: options must be an object
  t.throws(() => resolveOptions('fast'), TypeError)
})

t.test('a request passed as options: the factory was not called', async (t) => {
  t.throws(() => resolveOptions({ method: 'POST', url: '/', headers: {} } as never), /Call the factory/)
})

t.test('coded warnings: unknown keys and a very short DNS timeout', async (t) => {
  const logger = captureLogger()
  resolveOptions({ logger, bodyLimt: 100, dnsTimeout: 50 } as never)
  t.ok(logger.lines.some((line) => line.includes('WRN_UV_UNKNOWN_OPTION') && line.includes('bodyLimt')))
  t.ok(logger.lines.some((line) => line.includes('WRN_UV_DNS_TIMEOUT')))
  const quiet = captureLogger()
  resolveOptions({ logger: quiet, dnsTimeout: 3000 })
  t.equal(quiet.lines.length, 0)
})
