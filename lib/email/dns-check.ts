// DNS check of a mail domain (CONTRIBUTING.md#email-semantics): MX, implicit MX via A/AAAA, null MX, one deadline, cache and de-duplication.
import { Resolver } from 'node:dns/promises'
import { BlockList, isIPv4 } from 'node:net'
import { LRUCache } from 'lru-cache'
import { type DnsCheckMessage, dnsCheckChannel } from '../diagnostics.js'
import type { DnsCheck, ResolverLike } from '../types.js'
import { optionError } from '../errors.js'
import { hasPublicSuffix, isSpecialUseDomain } from './special-use-domains.js'
import { dnsServersOption, functionOption, numberOption, objectOption, resolverOption } from './options.js'

/** Why a DNS check answered as it did (kept in the library result, not in the HTTP body). */
export type DnsReason =
  | 'mx'
  | 'implicit-mx'
  | 'null-mx'
  | 'nxdomain'
  | 'no-records'
  | 'no-routable-address'
  | 'invalid-domain'
  | 'special-use'
  | 'no-public-suffix'
  | 'timeout'
  | 'servfail'
  | 'refused'
  | 'error'

/** Outcome of one DNS check. */
export interface DnsOutcome {
  result: DnsCheck
  reason: DnsReason
  /** MX hosts (lower-case, no trailing dot), best priority first; empty without MX records. */
  mx: string[]
}

/** Options of {@link createDnsCheck}. */
export interface DnsCheckOptions {
  /** Resolver to query instead of building one. Defaults to a `dns.promises.Resolver`. */
  resolver?: ResolverLike
  /** DNS servers (`ip`, `ip:port`, `[v6]:port`) of the resolver built here. Defaults to the system's. */
  servers?: string[]
  /** Deadline of one whole check in ms, retries and A/AAAA fallback included. Defaults to 3000. */
  timeout?: number
  /** Attempts per query (2 = one retry). Defaults to 2. */
  tries?: number
  /** Result cache. Sizes in entries, TTLs in ms; a TTL of 0 disables caching of that kind. */
  cache?: {
    /** Defaults to 10000 entries. */
    max?: number
    /** TTL of `Pass`. Defaults to 3600000 (1 h). */
    positiveTtl?: number
    /** TTL of `Fail`. Defaults to 300000 (5 min). */
    negativeTtl?: number
    /** TTL of `Unknown`. Defaults to 30000 (30 s). */
    unknownTtl?: number
  }
  /** Clock for cache TTLs, in ms. Defaults to `Date.now`. */
  now?: () => number
}

/** A DNS checker; `check` never rejects. */
export interface DnsChecker {
  /** Checks a lower-case ASCII (punycode) domain that already passed the hostname rules. */
  check(domain: string): Promise<DnsOutcome>
  /**
   * The outcome `check` would give at once (a name that is never looked up, or a fresh cached
   * result), or `undefined` when it would have to ask the resolver. Lets a caller skip the
   * promise and deadline timer of `check` on the common, cached path.
   */
  known(domain: string): DnsOutcome | undefined
  /** Number of cached results. */
  readonly cacheSize: number
  /** Cancels the built resolver's queries and empties the cache. */
  close(): void
}

type Attempt<T> = { kind: 'ok'; value: T } | { kind: 'nodata' } | { kind: 'nxdomain' } | { kind: 'error'; reason: DnsReason }

// IPv4-mapped IPv6 (::ffff:0:0/96) is unwrapped in isGlobalAddress: BlockList would match it against every IPv4 address.
const NON_GLOBAL = new BlockList()
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4]
] as const)
  NON_GLOBAL.addSubnet(net, prefix, 'ipv4')
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b:1::', 48],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8]
] as const)
  NON_GLOBAL.addSubnet(net, prefix, 'ipv6')

/** `true` for a globally routable unicast address (RFC 6890 special-purpose ranges excluded). */
export function isGlobalAddress(ip: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped !== null) return !NON_GLOBAL.check(mapped[1]!, 'ipv4')
  return !NON_GLOBAL.check(ip, isIPv4(ip) ? 'ipv4' : 'ipv6')
}

function classify(err: unknown): Attempt<never> {
  const code = (err as { code?: unknown } | null)?.code
  switch (code) {
    case 'ENODATA':
      return { kind: 'nodata' }
    case 'ENOTFOUND':
      return { kind: 'nxdomain' }
    case 'ESERVFAIL':
      return { kind: 'error', reason: 'servfail' }
    case 'EREFUSED':
    case 'ECONNREFUSED':
      return { kind: 'error', reason: 'refused' }
    case 'ETIMEOUT':
    case 'ETIMEDOUT':
      return { kind: 'error', reason: 'timeout' }
    default:
      return { kind: 'error', reason: 'error' }
  }
}

const TIMED_OUT = Symbol('timeout')

/** Resolves to `TIMED_OUT` after `ms` unless `promise` settles first; the timer never holds the process. */
function race<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(resolve, ms, TIMED_OUT)
    timer.unref()
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/** DNS options checked and with their defaults: what {@link resolveDnsOptions} returns. */
export interface ResolvedDnsOptions {
  resolver: ResolverLike | undefined
  servers: string[] | undefined
  timeout: number
  tries: number
  max: number
  ttl: Record<DnsCheck, number>
  now: () => number
}

/**
 * Checks the DNS options once and fills in their defaults; throws an `ERR_UV_OPTIONS`
 * TypeError/RangeError naming the option. The middleware's options, the email verifier and
 * the DNS check all resolve through here, so each value is checked in one place.
 */
export function resolveDnsOptions(options: DnsCheckOptions | ResolvedDnsOptions = {}): ResolvedDnsOptions {
  if (isResolved(options)) return options
  const opts = objectOption('dnsCheck options', options) as DnsCheckOptions
  const timeout = numberOption(
    'dnsTimeout',
    opts.timeout,
    3000,
    1,
    60000,
    false,
    'Give the deadline of one DNS check in milliseconds, e.g. 3000.'
  )
  const tries = numberOption('dnsTries', opts.tries, 2, 1, 10, true, 'Give the number of attempts per query, e.g. 2 (one retry).')
  const cacheOpts = objectOption('dnsCache', opts.cache)
  const max = numberOption('dnsCache.max', cacheOpts.max, 10000, 1, 10_000_000, true, 'Give the number of cached domains, e.g. 10000.')
  const ttlFix = 'Give a time in milliseconds, or 0 to not cache that outcome.'
  const ttl: Record<DnsCheck, number> = {
    Pass: numberOption('dnsCache.positiveTtl', cacheOpts.positiveTtl, 3_600_000, 0, 2 ** 31 - 1, false, ttlFix),
    Fail: numberOption('dnsCache.negativeTtl', cacheOpts.negativeTtl, 300_000, 0, 2 ** 31 - 1, false, ttlFix),
    Unknown: numberOption('dnsCache.unknownTtl', cacheOpts.unknownTtl, 30_000, 0, 2 ** 31 - 1, false, ttlFix)
  }
  const now = functionOption<() => number>('now', opts.now, Date.now)
  const servers = dnsServersOption('dnsServers', opts.servers)
  const resolver = resolverOption<ResolverLike>('resolver', opts.resolver, ['resolveMx', 'resolve4', 'resolve6'])
  if (resolver !== undefined && servers !== undefined) {
    throw optionError(
      'type',
      'dnsServers',
      'left out when `resolver` is given',
      servers,
      'Either pass a resolver or DNS servers (but not both).'
    )
  }
  return Object.defineProperty({ resolver, servers, timeout, tries, max, ttl, now }, resolvedMark, { value: true })
}

const resolvedMark = Symbol('resolved DNS options')

function isResolved(options: unknown): options is ResolvedDnsOptions {
  return typeof options === 'object' && options !== null && resolvedMark in options
}

/**
 * Builds a DNS checker for mail domains. `check(domain)`: special-use names and names under no public suffix → `Fail` with no
 * query; MX records → `Pass` unless the only one is a null MX (RFC 7505) → `Fail`; no MX
 * (NODATA) → A/AAAA with a globally routable address → `Pass` (RFC 5321 implicit MX), else
 * `Fail`; NXDOMAIN → `Fail`; SERVFAIL, REFUSED, timeouts and other errors (after `tries`
 * attempts) → `Unknown`. The whole check ends within `timeout` ms. Results are cached per
 * domain with TTLs by outcome, and concurrent checks of one domain share one lookup.
 */
export function createDnsCheck(options: DnsCheckOptions | ResolvedDnsOptions = {}): DnsChecker & { readonly timeout: number } {
  const { resolver: injected, servers, timeout, tries, max, ttl, now } = resolveDnsOptions(options)
  const attemptMs = Math.max(1, Math.floor(timeout / tries))
  let resolver: ResolverLike
  if (injected !== undefined) {
    resolver = injected
  } else {
    // c-ares gives up on its own after one attempt of attemptMs; our timers still bound every call.
    const built = new Resolver({ timeout: attemptMs, tries: 1 })
    if (servers !== undefined) built.setServers(servers)
    resolver = built
  }

  const cache = new LRUCache<string, { outcome: DnsOutcome; expires: number }>({ max })
  const inflight = new Map<string, Promise<DnsOutcome>>()

  async function attempt<T>(query: (name: string) => Promise<T>, name: string, deadline: number): Promise<Attempt<T>> {
    let last: Attempt<T> = { kind: 'error', reason: 'timeout' }
    for (let i = 0; i < tries; i++) {
      const remaining = deadline - Date.now()
      if (remaining <= 0) return { kind: 'error', reason: 'timeout' }
      try {
        const value = await race(query(name), Math.min(remaining, attemptMs))
        if (value === TIMED_OUT) {
          last = { kind: 'error', reason: 'timeout' }
          continue
        }
        return { kind: 'ok', value }
      } catch (err) {
        last = classify(err)
        if (last.kind !== 'error') return last
      }
    }
    return last
  }

  async function lookup(domain: string): Promise<DnsOutcome> {
    const deadline = Date.now() + timeout
    const mx = await attempt((n) => resolver.resolveMx(n), domain, deadline)
    if (mx.kind === 'error') return { result: 'Unknown', reason: mx.reason, mx: [] }
    if (mx.kind === 'nxdomain') return { result: 'Fail', reason: 'nxdomain', mx: [] }
    if (mx.kind === 'ok' && mx.value.length > 0) {
      const hosts = [...mx.value]
        .sort((x, y) => x.priority - y.priority)
        .map((r) => r.exchange.toLowerCase().replace(/\.$/, ''))
        .filter((h) => h !== '')
      if (hosts.length === 0) return { result: 'Fail', reason: 'null-mx', mx: [] }
      return { result: 'Pass', reason: 'mx', mx: [...new Set(hosts)] }
    }
    const [a, aaaa] = await Promise.all([
      attempt((n) => resolver.resolve4(n), domain, deadline),
      attempt((n) => resolver.resolve6(n), domain, deadline)
    ])
    const addresses = [a, aaaa].flatMap((r) => (r.kind === 'ok' ? r.value : []))
    if (addresses.some(isGlobalAddress)) return { result: 'Pass', reason: 'implicit-mx', mx: [] }
    const error = [a, aaaa].find((r): r is { kind: 'error'; reason: DnsReason } => r.kind === 'error')
    if (error !== undefined) return { result: 'Unknown', reason: error.reason, mx: [] }
    return { result: 'Fail', reason: addresses.length > 0 ? 'no-routable-address' : 'no-records', mx: [] }
  }

  /** Tells the `user-verification:dns` channel's listeners (metrics), if any. */
  function publish(outcome: DnsOutcome, source: DnsCheckMessage['source']): DnsOutcome {
    if (dnsCheckChannel.hasSubscribers) dnsCheckChannel.publish({ outcome: outcome.result, source } satisfies DnsCheckMessage)
    return outcome
  }

  function known(domain: string): DnsOutcome | undefined {
    // Only names that passed the two checks below were ever looked up, so the cache comes first.
    const hit = cache.get(domain)
    if (hit !== undefined) {
      if (hit.expires > now()) return publish(hit.outcome, 'cache')
      cache.delete(domain)
    }
    if (isSpecialUseDomain(domain)) return publish({ result: 'Fail', reason: 'special-use', mx: [] }, 'special-use')
    // A name under no public suffix (db.corp, router.lan) can only exist on a private resolver:
    // asking would make dnsCheck an oracle of the internal zone (issue 10, item 6).
    if (!hasPublicSuffix(domain)) return publish({ result: 'Fail', reason: 'no-public-suffix', mx: [] }, 'no-public-suffix')
    return undefined
  }

  function check(domain: string): Promise<DnsOutcome> {
    const answer = known(domain)
    if (answer !== undefined) return Promise.resolve(answer)
    const pending = inflight.get(domain)
    if (pending !== undefined) return pending.then((outcome) => publish(outcome, 'shared'))
    const run = race(
      lookup(domain).catch((): DnsOutcome => ({ result: 'Unknown', reason: 'error', mx: [] })),
      timeout
    )
      .then((outcome): DnsOutcome => {
        const final: DnsOutcome = outcome === TIMED_OUT ? { result: 'Unknown', reason: 'timeout', mx: [] } : outcome
        const life = ttl[final.result]
        if (life > 0) cache.set(domain, { outcome: final, expires: now() + life })
        return final
      })
      .finally(() => inflight.delete(domain))
    inflight.set(domain, run)
    return run.then((outcome) => publish(outcome, 'lookup'))
  }

  return {
    check,
    known,
    timeout,
    get cacheSize() {
      return cache.size
    },
    close() {
      if (injected === undefined) resolver.cancel?.()
      cache.clear()
    }
  }
}
