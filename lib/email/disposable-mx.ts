// MX-based disposable detection: mail hosts of known disposable services, learned from listed domains' MX answers.
import { getDomain } from 'tldts'
import { LRUCache } from 'lru-cache'
import { domainAndParents } from './domain-lists.js'

// Shared mail platforms that host real and throwaway domains alike: never evidence of anything.
const SHARED_PLATFORMS = [
  'google.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'microsoft.com',
  'office365.com',
  'cloudflare.net',
  'zoho.com',
  'zoho.eu',
  'zoho.in',
  'zohomail.com',
  'yahoodns.net',
  'yahoo.com',
  'icloud.com',
  'me.com',
  'apple.com',
  'messagingengine.com',
  'fastmail.com',
  'protonmail.ch',
  'proton.me',
  'amazonaws.com',
  'amazonses.com',
  'mailgun.org',
  'sendgrid.net',
  'secureserver.net',
  'emailsrvr.com',
  'mimecast.com',
  'pphosted.com',
  'ppe-hosted.com',
  'barracudanetworks.com',
  'messagelabs.com',
  'mailcontrol.com',
  'yandex.net',
  'yandex.ru',
  'mail.ru',
  'qq.com',
  'netease.com',
  '163.com',
  'aliyun.com',
  'gmx.net',
  'web.de',
  'ionos.com',
  'kundenserver.de',
  'ovh.net',
  'gandi.net',
  'privateemail.com',
  'registrar-servers.com',
  'hostinger.com',
  'titan.email',
  'improvmx.com',
  'forwardemail.net',
  'migadu.com',
  'mailbox.org',
  'mxroute.com',
  'dreamhost.com',
  'websitewelcome.com',
  'hostgator.com',
  'bluehost.com',
  'one.com',
  'namecheaphosting.com',
  'mailchannels.net',
  'sparkpostmail.com',
  'postmarkapp.com',
  'mailjet.com',
  'icloud.com.cn',
  'larksuite.com',
  'feishu.cn',
  'hey.com',
  'tutanota.de',
  'runbox.com',
  'posteo.de'
]
const SHARED = new Set(SHARED_PLATFORMS)
// An MX answer can carry many hosts; real services use a handful. Bounds the work per answer.
const MAX_HOSTS_PER_ANSWER = 10
// Distinct domains counted per host, for and against it: enough to outweigh a poisoner's few.
const MAX_DOMAINS_PER_HOST = 32

/** Options of {@link DisposableMx}. */
export interface DisposableMxOptions {
  /** Distinct listed registrable domains that must point at a host before it is learned. Defaults to 2. */
  minEvidence?: number
  /** Most candidate hosts tracked while gathering evidence (LRU). Defaults to 5000. */
  maxCandidates?: number
  /** Most learned hosts kept (least recently used evicted first; seeded hosts are kept apart). Defaults to 10000. */
  maxLearned?: number
  /** Hosts known disposable from the start. Defaults to none. */
  seed?: string[]
  /** Tells whether a domain is on the disposable list; used to trust hosts named inside listed domains. Its answers are remembered per host: it must not change them. */
  isListed?: (domain: string) => boolean
  /** Tells whether a domain is allow-listed; allow-listed hosts are never disposable. Its answers are remembered per host: it must not change them. */
  isAllowed?: (domain: string) => boolean
}

/** What the fixed lists say of one mail host. */
interface HostFacts {
  shared: boolean
  listed: boolean
}

function addCapped<T>(set: Set<T>, value: T): void {
  if (set.size < MAX_DOMAINS_PER_HOST) set.add(value)
}

/** 32-bit FNV-1a of a string's UTF-16 units: a compact stand-in for a domain in a count. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193)
  return hash >>> 0
}

function normaliseHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '')
}

/**
 * Knows mail hosts of disposable services. A host counts as disposable when it was seeded,
 * learned (the MX of listed domains from at least `minEvidence` distinct registrable domains,
 * and of more of them than the unlisted domains seen using it), or lies inside a listed
 * disposable domain (`mx.mailinator.com`); never when it belongs to a shared mail platform or to
 * an allow-listed domain.
 *
 * The unlisted domains are the counterweight to poisoning: anyone can re-register a few expired
 * listed throwaway domains and point their MX at a small company's mail host. Each customer of
 * that host the verifier then sees counts against the host before its own answer is decided, so
 * `n` listed domains can flag at most `n - 1` distinct customers, and only until more customers
 * than that have been seen (attacker finding F6: before, two listed domains flagged every
 * customer for good). A disposable service's own new domains still count as disposable for as
 * long as its listed domains seen outnumber them.
 */
export class DisposableMx {
  readonly #minEvidence: number
  readonly #seeded = new Set<string>()
  /** Learned hosts, with the listed registrable domains seen pointing at them. */
  readonly #known: LRUCache<string, Set<string>>
  /** Candidate hosts, with the listed registrable domains seen pointing at them so far. */
  readonly #evidence: LRUCache<string, Set<string>>
  /** Unlisted registrable domains seen using a host (32-bit hashes: only their number matters). */
  readonly #served: LRUCache<string, Set<number>>
  readonly #isListed: (domain: string) => boolean
  readonly #isAllowed: (domain: string) => boolean
  readonly #hostFacts = new LRUCache<string, HostFacts>({ max: 10_000 })

  constructor(options: DisposableMxOptions = {}) {
    this.#minEvidence = Math.max(2, options.minEvidence ?? 2)
    this.#evidence = new LRUCache({ max: options.maxCandidates ?? 5000 })
    this.#known = new LRUCache({ max: options.maxLearned ?? 10000 })
    this.#served = new LRUCache({ max: 10_000 })
    this.#isListed = options.isListed ?? (() => false)
    this.#isAllowed = options.isAllowed ?? (() => false)
    for (const host of options.seed ?? []) this.#seeded.add(normaliseHost(host))
  }

  /** `true` when `host` belongs to a shared mail platform or an allow-listed domain. */
  isShared(host: string): boolean {
    return this.#listsSay(normaliseHost(host)).shared
  }

  /**
   * What the fixed lists say of a host (shared platform or allow-listed; inside a listed
   * domain). Only the learned hosts change, so this is remembered: every request with an email
   * asks it for each MX host of its domain.
   */
  #listsSay(h: string): HostFacts {
    let facts = this.#hostFacts.get(h)
    if (facts === undefined) {
      const names = domainAndParents(h)
      facts = { shared: names.some((d) => SHARED.has(d) || this.#isAllowed(d)), listed: names.some((d) => this.#isListed(d)) }
      this.#hostFacts.set(h, facts)
    }
    return facts
  }

  /** Hosts learned or seeded so far. */
  get known(): string[] {
    return [...this.#seeded, ...this.#known.keys()]
  }

  /**
   * Records the MX hosts of a domain that is itself on the disposable list. A host is learned
   * once `minEvidence` distinct listed registrable domains point at it. Only a registrable
   * domain teaches: a subdomain of a listed parent (`anything.mooo.com`, `x.us.to`) is a name
   * anyone can create under a dynamic-DNS or shared zone and point at any mail host, so it
   * would let a stranger make a real company's mail host "disposable" (issue 10, item 3).
   */
  observe(listedDomain: string, mxHosts: string[]): void {
    const domain = normaliseHost(listedDomain)
    // Registrable under the ICANN rules and not under a private-section suffix (github.io,
    // dynamic-DNS zones the Public Suffix List knows): both readings must give the name itself.
    if (getDomain(domain) !== domain || getDomain(domain, { allowPrivateDomains: true }) !== domain) return
    const registrable = domain
    for (const raw of mxHosts.slice(0, MAX_HOSTS_PER_ANSWER)) {
      const host = normaliseHost(raw)
      if (host === '' || host.length > 253 || this.#seeded.has(host) || this.isShared(host)) continue
      // A host inside the very domain that names it proves nothing about other domains.
      if (host === domain || host.endsWith(`.${domain}`)) continue
      const learned = this.#known.get(host)
      if (learned !== undefined) {
        addCapped(learned, registrable)
        continue
      }
      let seen = this.#evidence.get(host)
      if (seen === undefined) {
        seen = new Set()
        this.#evidence.set(host, seen)
      }
      seen.add(registrable)
      if (seen.size >= this.#minEvidence) {
        this.#known.set(host, seen)
        this.#evidence.delete(host)
      }
    }
  }

  /** `true` when `host` is a known disposable mail host (see the class description). */
  isDisposableHost(host: string): boolean {
    const h = normaliseHost(host)
    const facts = this.#listsSay(h)
    if (facts.shared) return false
    // A host inside a listed domain (mx.mailinator.com, or mailinator.com itself) is that service's.
    if (this.#seeded.has(h) || facts.listed) return true
    const listed = this.#known.get(h)
    return listed !== undefined && (this.#served.get(h)?.size ?? 0) < listed.size
  }

  /**
   * `true` when the MX set of an unlisted domain marks it disposable: at least one host is a
   * known disposable host and none belongs to a shared platform. `domain`, the unlisted domain
   * itself, is first counted against the learned or candidate hosts it uses (see the class).
   */
  isDisposableMxSet(mxHosts: string[], domain?: string): boolean {
    if (mxHosts.length === 0) return false
    if (mxHosts.some((h) => this.isShared(h))) return false
    if (domain !== undefined) this.#countServed(domain, mxHosts)
    return mxHosts.some((h) => this.isDisposableHost(h))
  }

  // Every host is counted, not only candidates: a customer seen before the attack must count too.
  #countServed(domain: string, mxHosts: string[]): void {
    const name = normaliseHost(domain)
    const registrable = fnv1a(getDomain(name, { allowPrivateDomains: true }) ?? name)
    for (const raw of mxHosts.slice(0, MAX_HOSTS_PER_ANSWER)) {
      const host = normaliseHost(raw)
      let served = this.#served.get(host)
      if (served === undefined) {
        served = new Set()
        this.#served.set(host, served)
      }
      addCapped(served, registrable)
    }
  }
}
