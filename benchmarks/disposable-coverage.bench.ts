// Coverage of the disposable list against each public list (in-sample and leave-one-source-out), consensus vs union, and the legitimate sets.
// Run: npx tsx benchmarks/disposable-coverage.bench.ts   (offline: committed snapshots + installed npm packages)
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { DisposableDomains } from '../lib/email/disposable-domains.js'
import { build, flagged, lines, loadSources, normalise, type Source } from '../tools/disposable-build-lib.js'

const sources = loadSources()
const shipped = new DisposableDomains()
const blockFamilies = new Map<string, Set<string>>()
for (const s of sources) {
  if (s.tier !== 'curated' && s.tier !== 'noisy') continue
  let f = blockFamilies.get(s.family)
  if (f === undefined) {
    f = new Set()
    blockFamilies.set(s.family, f)
  }
  for (const e of s.domains) {
    const d = normalise(e)
    if (d !== null) f.add(d)
  }
}
// A family counts as curated when any of its blocklists is curated (the allow-lists of a family aside).
const tierOf = new Map<string, string>()
for (const s of sources) if (s.tier === 'noisy' && !tierOf.has(s.family)) tierOf.set(s.family, 'noisy')
for (const s of sources) if (s.tier === 'curated') tierOf.set(s.family, 'curated')
const pct = (n: number, of: number): string => `${((100 * n) / of).toFixed(2)}%`
const share = (set: Iterable<string>, test: (d: string) => boolean): [number, number] => {
  let n = 0
  let of = 0
  for (const d of set) {
    of++
    if (test(d)) n++
  }
  return [n, of]
}

// Today's list (before this build rule), read from git so both are measured in one run.
const baseRev = process.env.BASE_REV ?? 'a613c82'
const before = new Set(
  lines(execFileSync('git', ['show', `${baseRev}:lib/data/disposable-domains.txt`], { encoding: 'utf8', maxBuffer: 1 << 28 }))
)

console.log(`families: ${[...blockFamilies.keys()].join(', ')}; shipped ${shipped.size}, before (${baseRev}) ${before.size}`)
console.log('\n| list (family) | tier | domains | before: flagged | shipped, in-sample | leave-one-source-out |')
console.log('|---|---|---|---|---|---|')
for (const [family, set] of blockFamilies) {
  const loo = build(sources, new Set([family])).domains
  const [b] = share(set, (d) => flagged(before, d))
  const [i] = share(set, (d) => shipped.isDisposable(d))
  const [l] = share(set, (d) => flagged(loo, d))
  console.log(`| ${family} | ${tierOf.get(family)} | ${set.size} | ${pct(b, set.size)} | ${pct(i, set.size)} | ${pct(l, set.size)} |`)
}
const strict = sources.find((s) => s.id === 'disposable-aggregator-strict') as Source
const strictSet = new Set(strict.domains.map(normalise).filter((d): d is string => d !== null))
const [si] = share(strictSet, (d) => shipped.isDisposable(d))
const [sb] = share(strictSet, (d) => flagged(before, d))
console.log(
  `| disposable strict (eval only; a superset of its domains.txt) | eval | ${strictSet.size} | ${pct(sb, strictSet.size)} | ${pct(si, strictSet.size)} | n/a |`
)

// Domains on >= k independent families.
const count = new Map<string, number>()
for (const set of blockFamilies.values()) for (const d of set) count.set(d, (count.get(d) ?? 0) + 1)
for (const k of [2, 4]) {
  const onK = [...count].filter(([, c]) => c >= k).map(([d]) => d)
  const [b] = share(onK, (d) => flagged(before, d))
  const [i] = share(onK, (d) => shipped.isDisposable(d))
  console.log(`domains on >= ${k} families: ${onK.length}; before ${pct(b, onK.length)}, shipped (in-sample) ${pct(i, onK.length)}`)
}

// What consensus costs and buys: the same rule with every noisy source counted alone (union).
const union = build(sources.map((s) => (s.tier === 'noisy' ? { ...s, tier: 'curated' as const } : s))).domains
const legitFiles = ['legit-domains-independent.txt', 'legit-domains.txt']
console.log(`\nconsensus list ${shipped.size} vs union ${union.size} (+${union.size - shipped.size})`)
for (const [family, set] of blockFamilies) {
  if (tierOf.get(family) !== 'noisy') continue
  const [u] = share(set, (d) => flagged(union, d))
  const [c] = share(set, (d) => shipped.isDisposable(d))
  console.log(`  ${family}: union flags ${pct(u, set.size)}, consensus ${pct(c, set.size)}`)
}
for (const f of legitFiles) {
  const set = lines(readFileSync(new URL(`../test/fixtures/${f}`, import.meta.url), 'utf8'))
  const ours = set.filter((d) => shipped.isDisposable(d))
  const u = set.filter((d) => flagged(union, d))
  const b = set.filter((d) => flagged(before, d))
  console.log(
    `legit ${f} (${set.length}): shipped flags ${ours.length} [${ours.slice(0, 10).join(' ')}]; union rule ${u.length} [${u.slice(0, 10).join(' ')}]; before ${b.length} [${b.slice(0, 10).join(' ')}]`
  )
}
