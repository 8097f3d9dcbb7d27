// Merges the maintained open disposable-domain lists (npm packages) into lib/data/disposable-domains.txt plus provenance.
// Run: npm run data:disposable (= npx tsx tools/build-disposable.ts). No network: every source is an installed package.
import { readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { domainToASCII } from 'node:url'
import { getPublicSuffix } from 'tldts'

const require = createRequire(import.meta.url)
const dataDir = new URL('../lib/data/', import.meta.url)

interface Source {
  name: string
  version: string
  file: string
  domains: string[]
}

function version(pkg: string): string {
  return (require(`${pkg}/package.json`) as { version: string }).version
}

function lines(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

function loadSources(): Source[] {
  const fakefilter = require('fakefilter/json/data.json') as { domains: Record<string, unknown> }
  const mailchecker = require('mailchecker/platform/node') as { blacklist(): Set<string> }
  return [
    {
      name: 'disposable-email-domains',
      version: version('disposable-email-domains'),
      file: 'index.json',
      domains: require('disposable-email-domains/index.json') as string[]
    },
    {
      name: 'disposable-email-domains',
      version: version('disposable-email-domains'),
      file: 'wildcard.json',
      domains: require('disposable-email-domains/wildcard.json') as string[]
    },
    {
      name: 'disposable-email-domains-js',
      version: version('disposable-email-domains-js'),
      file: 'dist/dict/disposable_email_blocklist.json',
      domains: require('disposable-email-domains-js/dist/dict/disposable_email_blocklist.json') as string[]
    },
    { name: 'mailchecker', version: version('mailchecker'), file: 'platform/node (blacklist())', domains: [...mailchecker.blacklist()] },
    { name: 'fakefilter', version: version('fakefilter'), file: 'json/data.json', domains: Object.keys(fakefilter.domains) },
    {
      name: 'burner-email-providers',
      version: version('burner-email-providers'),
      file: 'emails.txt',
      domains: lines(readFileSync(require.resolve('burner-email-providers/emails.txt'), 'utf8'))
    }
  ]
}

const LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** Lower-case ASCII (punycode) form of a list entry, or `null` when it is no usable domain. */
function normalise(entry: string): string | null {
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

function parents(domain: string): string[] {
  const out: string[] = []
  let d = domain
  for (;;) {
    out.push(d)
    const dot = d.indexOf('.')
    if (dot === -1) return out
    d = d.slice(dot + 1)
  }
}

const allow = new Set(['allow-domains.txt', 'free-domains.txt'].flatMap((f) => lines(readFileSync(new URL(f, dataDir), 'utf8'))))
const sources = loadSources()
const merged = new Set<string>()
const perSource: Array<Record<string, string | number>> = []
const dropped = { invalid: 0, publicSuffix: 0, allowListed: 0 }
const droppedAllowListed = new Set<string>()
const droppedPublicSuffix = new Set<string>()

for (const source of sources) {
  let kept = 0
  const before = merged.size
  for (const entry of source.domains) {
    const d = normalise(entry)
    if (d === null) {
      dropped.invalid++
      continue
    }
    // An entry that is itself a public suffix (ICANN or private, e.g. a dynamic-DNS zone) would
    // flag every customer below it: drop it.
    if (getPublicSuffix(d, { allowPrivateDomains: true }) === d) {
      dropped.publicSuffix++
      droppedPublicSuffix.add(d)
      continue
    }
    if (parents(d).some((p) => allow.has(p))) {
      dropped.allowListed++
      droppedAllowListed.add(d)
      continue
    }
    kept++
    merged.add(d)
  }
  perSource.push({
    source: source.name,
    version: source.version,
    file: source.file,
    entries: source.domains.length,
    kept,
    newDistinct: merged.size - before
  })
}

const sorted = [...merged].sort()
writeFileSync(new URL('disposable-domains.txt', dataDir), sorted.join('\n') + '\n')
const provenance = {
  description:
    'Merged disposable email domains: lower-case ASCII (punycode), de-duplicated, public suffixes and allow-listed domains removed. Built by tools/build-disposable.ts.',
  date: new Date().toISOString().slice(0, 10),
  total: sorted.length,
  sources: perSource,
  dropped: { ...dropped, allowListedDomains: [...droppedAllowListed].sort(), publicSuffixDomains: [...droppedPublicSuffix].sort() },
  psl: { library: 'tldts', version: version('tldts'), allowPrivateDomains: true }
}
writeFileSync(new URL('disposable-provenance.json', dataDir), JSON.stringify(provenance, null, 2) + '\n')
console.log(`wrote ${sorted.length} domains; dropped ${JSON.stringify(dropped)}`)
for (const s of perSource) console.log(`  ${s.source}@${s.version} ${s.file}: ${s.entries} entries, ${s.kept} kept, ${s.newDistinct} new`)
