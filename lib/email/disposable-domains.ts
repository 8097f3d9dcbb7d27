// Disposable-domain matching: the merged list, extra block/allow entries, and every parent above the public suffix.
import { domainToASCII } from 'node:url'
import { getPublicSuffix } from 'tldts'
import { allowList, disposableList, domainAndParents } from './domain-lists.js'
import { MAX_DOMAIN_OCTETS } from './domain.js'
import { isSpecialUseDomain } from './special-use-domains.js'
import { isPublicSectorDomain } from './disposable-public-sector.js'

/** Extra entries of {@link DisposableDomains}. */
export interface DisposableDomainsOptions {
  /** Domains never flagged (with their subdomains), beside the shipped allow-list. Defaults to none. */
  allow?: string[]
  /** Domains flagged (with their subdomains), beside the shipped list. Defaults to none. */
  block?: string[]
}

function toAscii(domain: string): string {
  const d = domain.trim().toLowerCase().replace(/\.$/, '')
  return /^[\x00-\x7F]*$/.test(d) ? d : domainToASCII(d)
}

/**
 * The disposable list with the allow-list applied. A domain is disposable when it or a parent
 * above its public suffix is listed (or blocked) and neither it nor a parent is allowed.
 * Lookups cost one hash probe per label. The shipped data is loaded at first construction.
 */
export class DisposableDomains {
  readonly #listed: ReadonlySet<string>
  readonly #block: ReadonlySet<string>
  readonly #allow: ReadonlySet<string>
  readonly #extraAllow: ReadonlySet<string>

  constructor(options: DisposableDomainsOptions = {}) {
    this.#listed = disposableList()
    this.#allow = allowList()
    this.#extraAllow = new Set((options.allow ?? []).map(toAscii).filter((d) => d !== ''))
    // A public suffix (`com`, `co.uk`, `github.io`) would flag everyone under it: never block one.
    this.#block = new Set(
      (options.block ?? []).map(toAscii).filter((d) => d !== '' && getPublicSuffix(d, { allowPrivateDomains: true }) !== d)
    )
  }

  /** Number of domains on the shipped list. */
  get size(): number {
    return this.#listed.size
  }

  /** `true` when `domain` or a parent is on the allow-list (shipped or extra), or `domain` lies in a public-sector namespace. */
  isAllowed(domain: string): boolean {
    if (domain.length > MAX_DOMAIN_OCTETS * 4) return false
    const ascii = toAscii(domain)
    if (ascii.length > MAX_DOMAIN_OCTETS) return false
    // Government, military and education namespaces are real organisations: MX learning never flags them.
    if (isPublicSectorDomain(ascii)) return true
    for (const d of domainAndParents(ascii)) {
      if (this.#allow.has(d) || this.#extraAllow.has(d)) return true
    }
    return false
  }

  /**
   * The listed entry that makes `domain` disposable (the domain itself or a parent), or `null`.
   * `domain` may be Unicode or punycode, any case.
   */
  match(domain: string): string | null {
    // Longer than any hostname: never walk or hash it (a crafted domain must stay cheap).
    if (domain.length > MAX_DOMAIN_OCTETS * 4) return null
    const ascii = toAscii(domain)
    if (ascii.length > MAX_DOMAIN_OCTETS) return null
    // Reserved names (example.com, *.test) are not a service of any kind.
    if (isSpecialUseDomain(ascii)) return null
    const parents = domainAndParents(ascii)
    let hit: string | null = null
    for (const d of parents) {
      if (this.#allow.has(d) || this.#extraAllow.has(d)) return null
      if (hit === null && (this.#listed.has(d) || this.#block.has(d))) hit = d
    }
    return hit
  }

  /** `true` when {@link match} finds an entry. */
  isDisposable(domain: string): boolean {
    return this.match(domain) !== null
  }
}

let shared: DisposableDomains | undefined

/** `true` when `domain` is disposable by the shipped list and allow-list (no extra entries). */
export function isDisposableDomain(domain: string): boolean {
  shared ??= new DisposableDomains()
  return shared.isDisposable(domain)
}
