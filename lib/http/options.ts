// The middleware's public options, their defaults, and the checks that run once at construction.
import { resolveEmailOptions, type EmailVerifierOptions, type ResolvedEmailOptions } from '../email/verifier.js'
import { optionError, warnOnce } from '../errors.js'
import { defaultPlans, planTable } from '../quota/plans.js'
import { resolveRateLimit, type RateLimitOptions } from './rate-limit.js'
import { resolveDnsOptions, type ResolvedDnsOptions } from '../email/dns-check.js'
import type { EmailVerifier, Logger, NameVerifier, Stores } from '../types.js'

/** Options of {@link userVerification}; every field is optional and `undefined` means the default. */
export interface Options extends EmailVerifierOptions {
  /**
   * Where keys and usage live: a store URL (`sqlite://path`, `redis://…`, `postgres://…`,
   * `memory://`) or ready {@link Stores} (you own their connections then).
   * Defaults to `sqlite://./user-verification.sqlite`.
   */
  store: string | Stores
  /** Units per calendar month (UTC) for each plan name. Defaults to `{ free: 25, basic: 30000, pro: 65000 }`. */
  plans: Record<string, number>
  /** Largest accepted request body, in bytes. Defaults to `16384`. */
  bodyLimit: number
  /** Replaces the email verifier (tests, custom checks). Defaults to one built from the DNS options. */
  emailVerifier: EmailVerifier
  /** Replaces the name model. Defaults to the model shipped in the package. */
  nameVerifier: NameVerifier
  /** The clock, in ms since the epoch; quota periods follow it. Defaults to `Date.now`. */
  now: () => number
  /** Where warnings and errors go (never with keys, emails or names). Defaults to `console`. */
  logger: Logger
  /** Seconds sent in `Retry-After` with a 503. Defaults to `5`. */
  retryAfter: number
  /** Requests in progress above which new ones are shed with 503; `0` turns it off. Defaults to `1024`. */
  maxInFlight: number
  /** Event-loop delay (ms) above which new requests are shed with 503; `0` turns it off. Defaults to `0`. */
  maxEventLoopDelay: number
  /**
   * Requests per second per API key (`perKey`) and per client address (`perIp`), answered 429
   * with `Retry-After` above it; counted in Redis when the store is Redis. Defaults to off.
   */
  rateLimit: Partial<RateLimitOptions>
}

/** Options with every default filled in; internal. */
export interface Configuration extends Omit<Options, 'emailVerifier' | 'nameVerifier' | 'rateLimit'> {
  rateLimit: RateLimitOptions | undefined
  /** The DNS settings, checked and with their defaults. */
  dns: ResolvedDnsOptions
  /** The built-in email verifier's settings, checked (DNS ones are `dns`); undefined when `emailVerifier` replaces it. */
  email: ResolvedEmailOptions | undefined
  emailVerifier: EmailVerifier | undefined
  nameVerifier: NameVerifier | undefined
}

const defaults = {
  store: 'sqlite://./user-verification.sqlite',
  plans: defaultPlans,
  bodyLimit: 16 * 1024,
  now: Date.now,
  logger: console,
  retryAfter: 5,
  maxInFlight: 1024,
  maxEventLoopDelay: 0
} satisfies Partial<Options>

// Typed over `keyof Options`, so the compiler keeps this list in step with the interface.
const knownKeys: Record<keyof Options, true> = {
  store: true,
  plans: true,
  bodyLimit: true,
  emailVerifier: true,
  nameVerifier: true,
  now: true,
  logger: true,
  retryAfter: true,
  maxInFlight: true,
  maxEventLoopDelay: true,
  dnsServers: true,
  resolver: true,
  dnsTimeout: true,
  dnsTries: true,
  dnsCache: true,
  disposable: true,
  learnMx: true,
  rateLimit: true
}

/** The option error of the package (lib/errors.ts), re-exported where 0.1.0 had it. */
export { optionError }

function wholeNumber(option: string, value: unknown, min: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw optionError('type', option, 'an integer', value)
  if (value < min) throw optionError('range', option, `>= ${min}`, value)
  return value
}

/** Fills in defaults and checks every option; throws on impossible values. */
export function resolveOptions(input: Readonly<Partial<Options>> | undefined): Configuration {
  if (input !== undefined && (typeof input !== 'object' || input === null)) throw optionError('type', 'options', 'an object', input)
  if (input && 'method' in input && 'headers' in input && 'url' in input) {
    throw optionError(
      'type',
      '',
      "the options look like a request. Call the factory: `app.use('/api/v1', userVerification())`, not `app.use(userVerification)`."
    )
  }
  const given = Object.fromEntries(Object.entries(input ?? {}).filter(([, value]) => value !== undefined)) as Partial<Options>
  const logger = given.logger ?? defaults.logger
  for (const key of Object.keys(given)) {
    if (!(key in knownKeys))
      warnOnce(logger, 'WRN_UV_UNKNOWN_OPTION', `unknown option \`${key}\` is ignored; check its spelling`, { option: key })
  }
  const config: Configuration = {
    ...defaults,
    ...given,
    emailVerifier: given.emailVerifier,
    nameVerifier: given.nameVerifier,
    rateLimit: undefined,
    dns: undefined as unknown as ResolvedDnsOptions,
    email: undefined,
    logger
  }
  config.rateLimit = given.rateLimit as RateLimitOptions | undefined

  if (typeof config.store !== 'string' && (typeof config.store !== 'object' || config.store === null)) {
    throw optionError('type', 'store', 'a store URL or a { keys, quota, close } object', config.store)
  }
  if (typeof config.plans !== 'object' || config.plans === null || Object.keys(config.plans).length === 0) {
    throw optionError('type', 'plans', 'an object of plan name to units per month', config.plans)
  }
  for (const [plan, units] of Object.entries(config.plans)) wholeNumber(`plans.${plan}`, units, 0)
  config.plans = planTable(config.plans)
  wholeNumber('bodyLimit', config.bodyLimit, 64)
  wholeNumber('retryAfter', config.retryAfter, 0)
  wholeNumber('maxInFlight', config.maxInFlight, 0)
  wholeNumber('maxEventLoopDelay', config.maxEventLoopDelay, 0)
  if (typeof config.now !== 'function') throw optionError('type', 'now', 'a function returning ms since the epoch', config.now)
  if (typeof logger.warn !== 'function' || typeof logger.error !== 'function') {
    throw optionError('type', 'logger', 'an object with warn() and error()', Object.keys(logger))
  }
  // The DNS options are checked here, once, by the DNS check's own resolver (the verifier built later reuses the result).
  config.dns = resolveDnsOptions({
    servers: config.dnsServers,
    resolver: config.resolver,
    timeout: config.dnsTimeout,
    tries: config.dnsTries,
    cache: config.dnsCache,
    now: config.now
  })
  config.rateLimit = config.rateLimit === undefined ? undefined : resolveRateLimit(config.rateLimit)
  // Only a valid timeout can be "very short": an impossible one has thrown above.
  if (config.dns.timeout < 200) {
    warnOnce(logger, 'WRN_UV_DNS_TIMEOUT', `dnsTimeout is ${config.dns.timeout} ms; most real lookups will answer Unknown`)
  }
  if (config.emailVerifier !== undefined && typeof config.emailVerifier.verify !== 'function') {
    throw optionError('type', 'emailVerifier', 'an object with verify(address)', Object.keys(config.emailVerifier))
  }
  if (config.nameVerifier !== undefined && typeof config.nameVerifier.predict !== 'function') {
    throw optionError('type', 'nameVerifier', 'an object with predict(value)', Object.keys(config.nameVerifier))
  }
  // The built-in email verifier's own settings, checked only when it is used (as before); its DNS settings are `dns`.
  if (config.emailVerifier === undefined) {
    config.email = resolveEmailOptions({ disposable: config.disposable, learnMx: config.learnMx }, config.dns)
  }
  return config
}
