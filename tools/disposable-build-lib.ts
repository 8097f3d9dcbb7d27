// The disposable-list build rule, shared by tools/build-disposable.ts and the coverage benchmark (leave-one-source-out).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { domainToASCII } from 'node:url'
import { getPublicSuffix } from 'tldts'
import { isPublicSectorDomain } from '../lib/email/disposable-public-sector.js'
import { isSpecialUseDomain } from '../lib/email/special-use-domains.js'

const require = createRequire(import.meta.url)
const snapshotDir = new URL('./disposable-sources/', import.meta.url)
const dataDir = new URL('../lib/data/', import.meta.url)

/** How much one source's word counts: see lib/data/disposable-card.md. */
export type Tier = 'curated' | 'noisy' | 'allow' | 'greylist' | 'eval'

/** One list with its provenance. */
export interface Source {
  id: string
  family: string
  tier: Tier
  origin: string
  licence: string
  date: string
  domains: string[]
}

/** Lines of a list file without blanks and comments. */
export function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#') && !l.startsWith('//'))
}

function version(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version
}

interface SnapshotEntry {
  id: string
  family: string
  tier: Tier
  repo: string
  commit: string
  committed: string
  path: string
  file: string
  licence: string
}

/** Every source: the committed GitHub snapshots plus the installed npm packages. */
export function loadSources(): Source[] {
  const meta = JSON.parse(readFileSync(new URL('sources.json', snapshotDir), 'utf8')) as { sources: SnapshotEntry[] }
  const snapshots: Source[] = meta.sources.map((s) => ({
    id: s.id,
    family: s.family,
    tier: s.tier,
    origin: `${s.repo}@${s.commit}:${s.path}`,
    licence: s.licence,
    date: s.committed.slice(0, 10),
    domains: lines(readFileSync(new URL(s.file, snapshotDir), 'utf8'))
  }))
  const fakefilter = require('fakefilter/json/data.json') as { domains: Record<string, unknown> }
  const mailchecker = require('mailchecker/platform/node') as { blacklist(): Set<string> }
  const npm = (pkg: string, file: string, id: string, family: string, tier: Tier, licence: string, domains: string[]): Source => ({
    id,
    family,
    tier,
    origin: `npm:${pkg}@${version(pkg)}/${file}`,
    licence,
    date: 'package',
    domains
  })
  return [
    ...snapshots,
    npm(
      'disposable-email-domains',
      'index.json',
      'ivolo-index',
      'ivolo',
      'noisy',
      'MIT',
      require('disposable-email-domains/index.json') as string[]
    ),
    npm(
      'disposable-email-domains',
      'wildcard.json',
      'ivolo-wildcard',
      'ivolo',
      'noisy',
      'MIT',
      require('disposable-email-domains/wildcard.json') as string[]
    ),
    npm(
      'disposable-email-domains-js',
      'dist/dict/disposable_email_blocklist.json',
      'cc0-npm',
      'disposable-email-domains',
      'curated',
      'CC0-1.0',
      require('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json') as string[]
    ),
    npm('mailchecker', 'platform/node blacklist()', 'mailchecker-npm', 'mailchecker', 'curated', 'MIT', [...mailchecker.blacklist()]),
    npm('fakefilter', 'json/data.json', 'fakefilter-npm', 'fakefilter', 'curated', 'MIT', Object.keys(fakefilter.domains)),
    npm(
      'burner-email-providers',
      'emails.txt',
      'burner-npm',
      'burner-email-providers',
      'curated',
      'MIT',
      lines(readFileSync(require.resolve('burner-email-providers/emails.txt'), 'utf8'))
    )
  ]
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Lower-case ASCII (punycode) form of a list entry, or `null` when it is no usable domain. */
export function normalise(entry: string): string | null {
  let d = entry
    .trim()
    .toLowerCase()
    .replace(/^\*\./, '')
    .replace(/^\.+|\.+$/g, '')
  if (/[^\x00-\x7F]/.test(d)) d = domainToASCII(d)
  if (d === '' || d.length > 253) return null
  const labels = d.split('.')
  if (labels.length < 2 || !labels.every((l) => LABEL.test(l))) return null
  return d
}

/** `domain` and every parent, longest first. */
export function parents(domain: string): string[] {
  const out: string[] = []
  let d = domain
  for (;;) {
    out.push(d)
    const dot = d.indexOf('.')
    if (dot === -1) return out
    d = d.slice(dot + 1)
  }
}

/** Hand-decided contested providers (lib/data/disposable-contested.json). */
export interface Contested {
  domain: string
  decision: 'not-disposable' | 'disposable'
  reason: string
}

export function loadContested(): Contested[] {
  return (JSON.parse(readFileSync(new URL('disposable-contested.json', dataDir), 'utf8')) as { decisions: Contested[] }).decisions
}

/** Our own allow-list: free providers plus allow-domains.txt. */
export function loadOwnAllow(): Set<string> {
  return new Set(['allow-domains.txt', 'free-domains.txt'].flatMap((f) => lines(readFileSync(new URL(f, dataDir), 'utf8'))))
}

/** Result of {@link build}. */
export interface Built {
  domains: Set<string>
  /** Why each candidate was dropped, with the domains. */
  dropped: Record<string, string[]>
  /** Noisy-only candidates kept by agreement of a second family, and dropped for lack of it. */
  consensus: { keptBySecondFamily: number; droppedSingleNoisy: number }
  /** Normalised domains per source id. */
  perSource: Map<string, Set<string>>
}

/**
 * The rule (lib/data/disposable-card.md): a domain is listed when a curated source lists it, or
 * noisy sources of at least two families do (or one noisy family and a curated one); never
 * when it is a public suffix, a reserved name, in a public-sector namespace, on our allow-list,
 * on a maintained allow-list or greylist, or decided not-disposable in the contested table.
 * `exclude` leaves out whole families (leave-one-source-out evaluation).
 */
export function build(sources: Source[], exclude: ReadonlySet<string> = new Set()): Built {
  const ownAllow = loadOwnAllow()
  const contested = loadContested()
  const notDisposable = new Set(contested.filter((c) => c.decision === 'not-disposable').map((c) => c.domain))
  const forced = new Set(contested.filter((c) => c.decision === 'disposable').map((c) => c.domain))
  const perSource = new Map<string, Set<string>>()
  for (const s of sources) {
    const set = new Set<string>()
    for (const e of s.domains) {
      const d = normalise(e)
      if (d !== null) set.add(d)
    }
    perSource.set(s.id, set)
  }
  // Maintained allow-lists and the greylist are evidence a provider is real, whatever the family.
  const maintainedAllow = new Set<string>()
  for (const s of sources) if (s.tier === 'allow' || s.tier === 'greylist') for (const d of perSource.get(s.id)!) maintainedAllow.add(d)
  const curated = new Set<string>()
  const noisyFamilies = new Map<string, Set<string>>()
  for (const s of sources) {
    if (exclude.has(s.family)) continue
    const set = perSource.get(s.id)!
    if (s.tier === 'curated') for (const d of set) curated.add(d)
    else if (s.tier === 'noisy')
      for (const d of set) {
        let f = noisyFamilies.get(d)
        if (f === undefined) {
          f = new Set()
          noisyFamilies.set(d, f)
        }
        f.add(s.family)
      }
  }
  const dropped: Record<string, string[]> = {
    publicSuffix: [],
    specialUse: [],
    publicSector: [],
    ownAllowList: [],
    maintainedAllowList: [],
    contested: []
  }
  const consensus = { keptBySecondFamily: 0, droppedSingleNoisy: 0 }
  const candidates = new Set<string>(curated)
  for (const [d, fams] of noisyFamilies) {
    if (curated.has(d)) continue
    if (fams.size >= 2) {
      candidates.add(d)
      consensus.keptBySecondFamily++
    } else consensus.droppedSingleNoisy++
  }
  const domains = new Set<string>()
  for (const d of candidates) {
    const ps = parents(d)
    if (getPublicSuffix(d, { allowPrivateDomains: true }) === d) dropped.publicSuffix!.push(d)
    else if (isSpecialUseDomain(d)) dropped.specialUse!.push(d)
    else if (isPublicSectorDomain(d)) dropped.publicSector!.push(d)
    else if (ps.some((p) => ownAllow.has(p))) dropped.ownAllowList!.push(d)
    else if (ps.some((p) => notDisposable.has(p))) dropped.contested!.push(d)
    else if (!forced.has(d) && maintainedAllow.has(d)) dropped.maintainedAllowList!.push(d)
    else domains.add(d)
  }
  for (const k of Object.keys(dropped)) dropped[k]!.sort()
  return { domains, dropped, consensus, perSource }
}

/** `true` when `domain` or a parent is in `list` (the lookup rule of DisposableDomains, allow-list aside). */
export function flagged(list: ReadonlySet<string>, domain: string): boolean {
  return parents(domain).some((p) => list.has(p))
}
