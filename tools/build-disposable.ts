// Builds lib/data/disposable-domains.txt and its provenance from the committed list snapshots and the npm packages, offline.
// Run: npm run data:disposable (= npx tsx tools/build-disposable.ts). The rule is in tools/disposable-build-lib.ts and lib/data/disposable-card.md.
import { writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { build, loadContested, loadSources } from './disposable-build-lib.js'

const require = createRequire(import.meta.url)
const dataDir = new URL('../lib/data/', import.meta.url)
const sources = loadSources()
const built = build(sources)
const sorted = [...built.domains].sort()
writeFileSync(new URL('disposable-domains.txt', dataDir), `${sorted.join('\n')}\n`)

// Overlaps between the blocklist families (allow-lists and the evaluation-only strict list aside).
const families = new Map<string, Set<string>>()
for (const s of sources) {
  if (s.tier !== 'curated' && s.tier !== 'noisy') continue
  let f = families.get(s.family)
  if (f === undefined) {
    f = new Set()
    families.set(s.family, f)
  }
  for (const d of built.perSource.get(s.id)!) f.add(d)
}
const names = [...families.keys()].sort()
const overlaps: Record<string, Record<string, number>> = {}
for (const a of names) {
  overlaps[a] = {}
  for (const b of names) {
    let n = 0
    const [small, big] =
      families.get(a)!.size < families.get(b)!.size ? [families.get(a)!, families.get(b)!] : [families.get(b)!, families.get(a)!]
    for (const d of small) if (big.has(d)) n++
    overlaps[a]![b] = n
  }
}
const provenance = {
  description:
    'Disposable email domains: lower-case ASCII (punycode), de-duplicated. Curated sources count alone; noisy sources need a second family; public suffixes, reserved names, public-sector namespaces, allow-listed and contested providers removed. Built by tools/build-disposable.ts; rule in lib/data/disposable-card.md.',
  date: new Date().toISOString().slice(0, 10),
  total: sorted.length,
  sources: sources.map((s) => ({
    id: s.id,
    family: s.family,
    tier: s.tier,
    origin: s.origin,
    licence: s.licence,
    date: s.date,
    entries: s.domains.length,
    valid: built.perSource.get(s.id)!.size,
    inShippedList: [...built.perSource.get(s.id)!].filter((d) => built.domains.has(d)).length
  })),
  familyOverlaps: overlaps,
  consensus: built.consensus,
  dropped: Object.fromEntries(
    Object.entries(built.dropped).map(([k, v]) => [k, { count: v.length, domains: v.length <= 2000 ? v : v.slice(0, 2000) }])
  ),
  contested: loadContested(),
  psl: { library: 'tldts', version: (require('tldts/package.json') as { version: string }).version, allowPrivateDomains: true }
}
writeFileSync(new URL('disposable-provenance.json', dataDir), `${JSON.stringify(provenance, null, 2)}\n`)
console.log(`wrote ${sorted.length} domains; consensus ${JSON.stringify(built.consensus)}`)
for (const [k, v] of Object.entries(built.dropped)) console.log(`  dropped ${k}: ${v.length}`)
for (const s of provenance.sources)
  console.log(`  ${s.id} [${s.tier}] ${s.origin}: ${s.entries} entries, ${s.valid} valid, ${s.inShippedList} shipped`)
