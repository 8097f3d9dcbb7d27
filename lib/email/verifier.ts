// The email verifier of CONTRIBUTING.md#email-semantics: split, syntax, DNS (one deadline), disposable (lists + MX), suggestion, role, free.
import { LRUCache } from 'lru-cache'
import type { EmailVerification, EmailVerifier, ResolverLike } from '../types.js'
import { splitEmail } from './split.js'
import { checkEmailSyntax, MAX_LOCAL_OCTETS } from './syntax.js'
import { MAX_DOMAIN_OCTETS, toAsciiDomain } from './domain.js'
import { createDnsCheck, resolveDnsOptions, type DnsOutcome, type ResolvedDnsOptions } from './dns-check.js'
import { DisposableDomains } from './disposable-domains.js'
import { DisposableMx } from './disposable-mx.js'
import { suggestDomain } from './domain-suggestion.js'
import { isRoleAccount } from './role-accounts.js'
import { isFreeProvider } from './free-providers.js'
import { booleanOption, objectOption, stringArrayOption } from './options.js'

/** What the domain lists say of one domain. */
interface DomainFacts {
  /** The checked ASCII form, or `null` when the domain is no valid mail hostname. */
  ascii: string | null
  /** The listed name the domain is disposable through (itself or a parent), or `null`. */
  listedAs: string | null
  allowed: boolean
  free: boolean
}

/** Options of {@link createEmailVerifier}; `undefined` always means "the default". */
export interface EmailVerifierOptions {
  /** DNS servers to query: `ip` or `ip:port`, IPv6 as `[::1]:53`. Defaults to the system's resolvers. */
  dnsServers?: string[]
  /** A resolver shaped like `dns.promises.Resolver`, used instead of building one (tests). Defaults to none. */
  resolver?: ResolverLike
  /** Deadline of the whole DNS check of one address in ms, retries and A/AAAA fallback included. Defaults to 3000. */
  dnsTimeout?: number
  /** Attempts per DNS query; 2 means one retry. Defaults to 2. */
  dnsTries?: number
  /** DNS result cache: `max` entries (defaults to 10000); TTLs in ms of `Pass` (`positiveTtl`, defaults to 3600000), `Fail` (`negativeTtl`, defaults to 300000) and `Unknown` (`unknownTtl`, defaults to 30000). */
  dnsCache?: { max?: number; positiveTtl?: number; negativeTtl?: number; unknownTtl?: number }
  /** Extra domains: `allow` never flagged, `block` always flagged (subdomains included). Defaults to none. */
  disposable?: { allow?: string[]; block?: string[] }
  /** Learn mail hosts of disposable services from listed domains' MX answers and flag unlisted domains that use them. Defaults to true. */
  learnMx?: boolean
  /** Clock for cache TTLs, in ms since the epoch. Defaults to `Date.now`. */
  now?: () => number
}

/** Extra time past `dnsTimeout` before `verify` gives up on DNS itself, in ms. */
const DEADLINE_SLACK_MS = 25

/**
 * Builds an email verifier. `verify(address)` trims the address and answers the full
 * `EmailVerification` (spec fields plus `suggestion`, `role`, `free`); it never rejects for a
 * bad address or DNS trouble (`dnsCheck: "Unknown"`) and settles within `dnsTimeout` plus a
 * few ms whatever the resolver does. Options are checked here and throw a `TypeError` or
 * `RangeError` with `code: 'ERR_UV_OPTIONS'`. The shipped lists are loaded once, here.
 */
export function createEmailVerifier(options: EmailVerifierOptions = {}): EmailVerifier & { close(): void } {
  return emailVerifierFrom(resolveEmailOptions(options))
}

/** The email verifier's options checked and with their defaults: what {@link resolveEmailOptions} returns. */
export interface ResolvedEmailOptions {
  dns: ResolvedDnsOptions
  allow: string[]
  block: string[]
  learnMx: boolean
}

/**
 * Checks the email verifier's options once and fills in their defaults; throws an
 * `ERR_UV_OPTIONS` TypeError/RangeError naming the option. `dns` passes DNS settings already
 * resolved (the middleware's configuration), so they are not resolved again.
 */
export function resolveEmailOptions(options: EmailVerifierOptions = {}, dns?: ResolvedDnsOptions): ResolvedEmailOptions {
  const opts = objectOption('options', options) as EmailVerifierOptions
  // The DNS options are checked in one place, resolveDnsOptions.
  const resolvedDns =
    dns ??
    resolveDnsOptions({
      resolver: opts.resolver,
      servers: opts.dnsServers,
      timeout: opts.dnsTimeout,
      tries: opts.dnsTries,
      cache: opts.dnsCache,
      now: opts.now
    })
  const disposableOpts = objectOption('disposable', opts.disposable)
  const listFix = 'Give domain names such as ["example-temp-mail.com"].'
  const allow = stringArrayOption('disposable.allow', disposableOpts.allow, listFix)
  const block = stringArrayOption('disposable.block', disposableOpts.block, listFix)
  const learnMx = booleanOption('learnMx', opts.learnMx, true)
  return { dns: resolvedDns, allow, block, learnMx }
}

/** Builds the email verifier of {@link createEmailVerifier} from options already resolved. */
export function emailVerifierFrom(options: ResolvedEmailOptions): EmailVerifier & { close(): void } {
  const { allow, block, learnMx } = options
  const dns = createDnsCheck(options.dns)
  const dnsTimeout = dns.timeout
  const disposable = new DisposableDomains({ allow, block })
  const mx = new DisposableMx({ isListed: (d) => disposable.isDisposable(d), isAllowed: (d) => disposable.isAllowed(d) })
  // Pending deadlines, so that close() can answer them at once instead of leaving them hanging.
  const pending = new Set<(outcome: DnsOutcome) => void>()

  function dnsWithDeadline(domain: string): Promise<DnsOutcome> {
    return new Promise((resolve) => {
      const done = (outcome: DnsOutcome): void => {
        if (!pending.delete(done)) return
        clearTimeout(timer)
        resolve(outcome)
      }
      const timer = setTimeout(done, dnsTimeout + DEADLINE_SLACK_MS, { result: 'Unknown', reason: 'timeout', mx: [] })
      timer.unref()
      pending.add(done)
      dns.check(domain).then(done, () => done({ result: 'Unknown', reason: 'error', mx: [] }))
    })
  }

  // What the lists say of a domain never changes for this verifier (the learned MX hosts, which
  // do, are asked per request): remembered per valid domain, as forms repeat a few domains.
  const facts = new LRUCache<string, DomainFacts>({ max: 10_000 })
  function factsOf(domain: string): DomainFacts {
    const known = facts.get(domain)
    if (known !== undefined) return known
    const ascii = domain === '' ? null : toAsciiDomain(domain)
    // Only a valid domain (<= 253 octets) is looked up, walked, hashed or remembered: a crafted
    // 16 KB domain must cost no more than a normal one (issue 10, item 2).
    if (ascii === null) return { ascii, listedAs: null, allowed: false, free: false }
    const found = { ascii, listedAs: disposable.match(ascii), allowed: disposable.isAllowed(ascii), free: isFreeProvider(ascii) }
    facts.set(domain, found)
    return found
  }

  async function verify(input: string): Promise<EmailVerification> {
    const emailAddress = String(input ?? '').trim()
    const { username, domain } = splitEmail(emailAddress)
    const syntexCheck = checkEmailSyntax(emailAddress)
    const { ascii, listedAs, allowed, free } = factsOf(domain)
    let isDisposable = listedAs !== null
    let dnsCheck: EmailVerification['dnsCheck'] = 'Fail'
    if (ascii !== null) {
      // A cached answer needs no deadline timer: most requests repeat a domain seen minutes ago.
      const outcome = dns.known(ascii) ?? (await dnsWithDeadline(ascii))
      dnsCheck = outcome.result
      if (learnMx && outcome.mx.length > 0) {
        // Only a domain listed in its own name teaches (never one listed through a parent).
        if (isDisposable) {
          if (listedAs === ascii) mx.observe(ascii, outcome.mx)
        } else if (!allowed && mx.isDisposableMxSet(outcome.mx, ascii)) isDisposable = true
      }
    }
    // A dotless typo (gmailcom) fails syntax but may still get a suggestion, within the same bound.
    const typed = ascii ?? (domain.length <= MAX_DOMAIN_OCTETS && /^[a-z0-9.-]+$/.test(domain) ? domain : null)
    const suggested = typed !== null && username !== '' ? suggestDomain(typed) : null
    return {
      emailAddress,
      'the service': isDisposable,
      disposable: isDisposable,
      username,
      domain,
      dnsCheck,
      syntexCheck,
      suggestion: suggested === null ? null : `${username}@${suggested}`,
      role: domain !== '' && username.length <= MAX_LOCAL_OCTETS && isRoleAccount(username),
      free
    }
  }

  return {
    verify,
    close() {
      for (const done of [...pending]) done({ result: 'Unknown', reason: 'timeout', mx: [] })
      dns.close()
    }
  }
}
