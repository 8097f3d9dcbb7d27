// Options: defaults for {}, undefined members and null-prototype objects; bad values throw ERR_UV_OPTIONS with the fix; warnings once per process and code.
import t from 'tap'
import { createDnsCheck } from '../../lib/email/dns-check.js'
import { createEmailVerifier, type EmailVerifierOptions } from '../../lib/email/verifier.js'
import { errorCodes, UserVerificationError } from '../../lib/errors.js'
import { resolveOptions, type Options } from '../../lib/http/options.js'
import { issueKey } from '../../lib/quota/api-keys.js'
import { defaultPlans } from '../../lib/quota/plans.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { captureLogger } from '../fixtures/create-api.js'

t.test('{}, { key: undefined } and Object.create(null) all give the defaults', async (t) => {
  for (const input of [undefined, {}, { plans: undefined, bodyLimit: undefined, dnsTimeout: undefined }, Object.create(null)]) {
    const config = resolveOptions(input)
    t.equal(config.store, 'sqlite://./user-verification.sqlite')
    t.strictSame({ ...config.plans }, defaultPlans, 'the default plans (in a null-prototype table)')
    t.equal(config.bodyLimit, 16384)
    t.equal(config.retryAfter, 5)
    t.equal(config.maxInFlight, 1024)
    t.equal(config.dns.timeout, 3000, 'the DNS settings are resolved with the rest')
    t.equal(config.dns.tries, 2)
    t.strictSame(config.dns.ttl, { Pass: 3_600_000, Fail: 300_000, Unknown: 30_000 })
    t.equal(config.rateLimit, undefined)
  }
  t.strictSame(resolveOptions({ rateLimit: { perKey: 5 } }).rateLimit, { perKey: 5, perIp: 0 }, 'rate limits resolved too')
})

t.test('one resolved configuration: the email settings are resolved with the rest and share its DNS settings', async (t) => {
  const now = () => 1_700_000_000_000
  const config = resolveOptions({ now, disposable: { block: ['x.example'] }, learnMx: false, dnsTimeout: 1000 })
  t.equal(config.email?.dns, config.dns, 'the DNS settings are resolved once and reused')
  t.equal(config.dns.now, now, 'the DNS cache follows the middleware clock')
  t.strictSame(config.email?.block, ['x.example'])
  t.equal(config.email?.learnMx, false)
  // A replaced email verifier needs no built-in settings, and its options are not checked (as before).
  const replaced = resolveOptions({ emailVerifier: { verify: async () => ({}) as never }, learnMx: 'no' as never })
  t.equal(replaced.email, undefined)
  t.throws(() => resolveOptions({ learnMx: 'no' as never }), { name: 'TypeError', code: 'ERR_UV_OPTIONS' })
})

type Bad = [options: Partial<Options>, message: RegExp, kind: typeof TypeError | typeof RangeError]

// Each row is one value; wrong types carry @ts-expect-error, so the types reject them too.
const badMiddlewareOptions: Bad[] = [
  // @ts-expect-error: a number of bytes
  [{ bodyLimit: 'big' }, /`bodyLimit` must be an integer, got "big"/, TypeError],
  [{ bodyLimit: 10 }, /`bodyLimit` must be >= 64, got 10/, RangeError],
  [{ plans: {} }, /`plans` must be/, TypeError],
  [{ plans: { free: -1 } }, /`plans.free` must be >= 0/, RangeError],
  [{ plans: { free: 2.5 } }, /`plans.free` must be an integer/, TypeError],
  [{ retryAfter: -1 }, /`retryAfter`/, RangeError],
  [{ maxInFlight: 1.5 }, /`maxInFlight`/, TypeError],
  // @ts-expect-error: a clock function
  [{ now: 123 }, /`now` must be a function/, TypeError],
  // @ts-expect-error: error() is missing
  [{ logger: { warn() {} } }, /`logger` must be an object with warn\(\) and error\(\)/, TypeError],
  // @ts-expect-error: a URL or stores
  [{ store: 42 }, /`store` must be a store URL/, TypeError],
  // @ts-expect-error: verify() is missing
  [{ emailVerifier: {} }, /`emailVerifier`/, TypeError],
  // @ts-expect-error: predict must be a function
  [{ nameVerifier: { predict: 1 } }, /`nameVerifier`/, TypeError],
  [{ dnsTimeout: -1 }, /`dnsTimeout` must be a number from 1 to 60000, got -1/, RangeError],
  [{ dnsTimeout: 0 }, /`dnsTimeout`/, RangeError],
  // @ts-expect-error: ms as a number
  [{ dnsTimeout: '3000' }, /`dnsTimeout`/, TypeError],
  [{ dnsTries: 0 }, /`dnsTries` must be an integer from 1 to 10/, RangeError],
  [{ dnsCache: { max: 0 } }, /`dnsCache.max`/, RangeError],
  [{ dnsCache: { positiveTtl: -5 } }, /`dnsCache.positiveTtl`/, RangeError],
  [{ dnsServers: ['dns.google'] }, /`dnsServers` must be a non-empty array/, TypeError],
  [
    { dnsServers: ['1.1.1.1'], resolver: { resolveMx: async () => [], resolve4: async () => [], resolve6: async () => [] } },
    /`dnsServers` must be left out when `resolver` is given/,
    TypeError
  ],
  // @ts-expect-error: a whole number per second
  [{ rateLimit: { perKey: '10' } }, /`rateLimit.perKey` must be a whole number/, TypeError],
  [{ rateLimit: { perIp: -1 } }, /`rateLimit.perIp` must be >= 0/, RangeError]
]

t.test('impossible middleware options: one throw per value, TypeError/RangeError naming the option, code ERR_UV_OPTIONS', async (t) => {
  for (const [options, message, kind] of badMiddlewareOptions) {
    const name = JSON.stringify(options)
    t.throws(() => resolveOptions(options), { name: kind.name, message, code: 'ERR_UV_OPTIONS' }, name)
  }
  // @ts-expect-error: options must be an object
  t.throws(() => resolveOptions('fast'), { name: 'TypeError', code: 'ERR_UV_OPTIONS' })
})

const badVerifierOptions: Array<[EmailVerifierOptions, RegExp, typeof TypeError | typeof RangeError]> = [
  [{ dnsTimeout: -1 }, /`dnsTimeout` must be a number from 1 to 60000, got -1/, RangeError],
  [{ dnsTimeout: Number.POSITIVE_INFINITY }, /`dnsTimeout`/, RangeError],
  // @ts-expect-error: ms as a number
  [{ dnsTimeout: null }, /`dnsTimeout`/, TypeError],
  [{ dnsTries: 11 }, /`dnsTries`/, RangeError],
  // @ts-expect-error: an array of domains
  [{ disposable: { block: 'mailinator.com' } }, /`disposable.block` must be an array of strings/, TypeError],
  // @ts-expect-error: a boolean
  [{ learnMx: 'yes' }, /`learnMx` must be a boolean/, TypeError]
]

t.test('createEmailVerifier and createDnsCheck: the same checks, the same code', async (t) => {
  for (const [options, message, kind] of badVerifierOptions) {
    t.throws(() => createEmailVerifier(options), { name: kind.name, message, code: 'ERR_UV_OPTIONS' }, JSON.stringify(options))
  }
  t.throws(() => createDnsCheck({ timeout: -1 }), { name: 'RangeError', message: /`dnsTimeout`/, code: 'ERR_UV_OPTIONS' })
  const verifier = createEmailVerifier({})
  t.teardown(() => verifier.close())
  const check = createDnsCheck(Object.create(null))
  t.equal(check.timeout, 3000, 'Object.create(null) gives the defaults')
  check.close()
})

t.test('a request passed as options: the factory was not called', async (t) => {
  t.throws(() => resolveOptions({ method: 'POST', url: '/', headers: {} } as never), {
    message: /Call the factory/,
    code: 'ERR_UV_OPTIONS'
  })
})

t.test('every thrown error is a UserVerificationError with a documented code', async (t) => {
  let optionsError: unknown
  try {
    createEmailVerifier({ dnsTimeout: -1 })
  } catch (error) {
    optionsError = error
  }
  t.ok(optionsError instanceof UserVerificationError, 'an option error is a UserVerificationError')
  t.ok(optionsError instanceof RangeError, 'and still a RangeError')
  t.notOk(new RangeError('x') instanceof UserVerificationError, 'a plain RangeError is not')

  const stores = await openStores('memory://')
  t.teardown(() => stores.close())
  await issueKey(stores.keys, 'free', null)
  const [record] = await stores.keys.list()
  const duplicate = await stores.keys.create(record!).then(
    () => undefined,
    (error: unknown) => error
  )
  t.ok(duplicate instanceof UserVerificationError, 'a duplicate key throws a UserVerificationError')
  t.equal((duplicate as UserVerificationError).code, 'ERR_UV_DUPLICATE_KEY')
  t.ok((duplicate as UserVerificationError).code in errorCodes, 'a documented code')
})

t.test('warnings: once per process and code, with the code as a field; none for a value that throws', async (t) => {
  const logger = captureLogger()
  t.throws(() => resolveOptions({ logger, dnsTimeout: -1 }), RangeError)
  t.equal(logger.lines.length, 0, 'no WRN_UV_DNS_TIMEOUT right before the RangeError')

  resolveOptions({ logger, bodyLimt: 100, dnsTimeout: 50 } as never)
  const codes = logger.lines.map((line) => JSON.parse(line) as { level: string; message: string; code: string })
  t.match(codes, [
    { level: 'warn', code: 'WRN_UV_UNKNOWN_OPTION', message: /^user-verification: unknown option `bodyLimt`/ },
    { level: 'warn', code: 'WRN_UV_DNS_TIMEOUT', message: /^user-verification: dnsTimeout is 50 ms/ }
  ])
  resolveOptions({ logger, bodyLimt: 100, colour: 'red', dnsTimeout: 20 } as never)
  t.equal(logger.lines.length, 2, 'each code once per process, whatever the value')
  const quiet = captureLogger()
  resolveOptions({ logger: quiet, dnsTimeout: 3000 })
  t.equal(quiet.lines.length, 0)
})
