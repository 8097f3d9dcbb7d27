// Lookup speed and memory of our disposable list beside mailchecker's and disposable-email-domains' own lookups.
// Run: node --expose-gc --import tsx benchmarks/disposable.bench.ts   (without --expose-gc memory is not measured)
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { DisposableDomains } from '../lib/email/disposable-domains.js'

const require = createRequire(import.meta.url)
const gc = (globalThis as { gc?: () => void }).gc

function heap(): number {
  gc?.()
  gc?.()
  return process.memoryUsage().heapUsed
}

function measure(load: () => unknown): { value: unknown; bytes: number; ms: number } {
  const before = heap()
  const started = performance.now()
  const value = load()
  const ms = performance.now() - started
  return { value, bytes: heap() - before, ms }
}

const ours = measure(() => new DisposableDomains())
const mc = measure(() => require('mailchecker/platform/node') as { isValid(email: string): boolean; blacklist(): Set<string> })
const ded = measure(() => new Set(require('disposable-email-domains/index.json') as string[]))
const d = ours.value as DisposableDomains
const mailchecker = mc.value as { isValid(email: string): boolean }
const dedSet = ded.value as Set<string>

// Mixed workload: half listed domains, a quarter their subdomains, a quarter real domains.
const listed = readFileSync(new URL('../lib/data/disposable-domains.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter(Boolean)
const legit = readFileSync(new URL('../test/fixtures/legit-domains.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))
const domains: string[] = []
for (let i = 0; i < 20000; i++) {
  const r = i % 4
  domains.push(
    r < 2 ? listed[(i * 7919) % listed.length]! : r === 2 ? `mx.${listed[(i * 104729) % listed.length]!}` : legit[i % legit.length]!
  )
}
const emails = domains.map((x) => `user@${x}`)

function rate(fn: () => void, n: number): number {
  for (let i = 0; i < 3; i++) fn()
  let count = 0
  const started = performance.now()
  while (performance.now() - started < 500) {
    fn()
    count += n
  }
  return count / ((performance.now() - started) / 1000)
}

let sink = 0
const rows: Array<[string, number, number, number, number]> = [
  [
    'user-verification DisposableDomains.isDisposable (domain + parents, allow-list)',
    d.size,
    rate(() => {
      for (const x of domains) sink += d.isDisposable(x) ? 1 : 0
    }, domains.length),
    ours.bytes,
    ours.ms
  ],
  [
    'mailchecker isValid (email; parents, plus syntax)',
    (mc.value as { blacklist(): Set<string> }).blacklist().size,
    rate(() => {
      for (const e of emails) sink += mailchecker.isValid(e) ? 0 : 1
    }, emails.length),
    mc.bytes,
    mc.ms
  ],
  [
    'disposable-email-domains index.json in a Set (exact domain only)',
    dedSet.size,
    rate(() => {
      for (const x of domains) sink += dedSet.has(x) ? 1 : 0
    }, domains.length),
    ded.bytes,
    ded.ms
  ]
]
const caught = (f: (x: string) => boolean): number => domains.filter(f).length
console.log(
  `Workload: ${domains.length} domains (50% listed, 25% subdomains of listed, 25% legitimate). Memory ${gc === undefined ? 'not measured (run with --expose-gc)' : 'is the heap growth of loading the list'}.\n`
)
console.log('| lookup | domains | lookups/s | heap (MiB) | load (ms) |')
console.log('|---|---|---|---|---|')
for (const [name, size, perSecond, bytes, ms] of rows) {
  console.log(
    `| ${name} | ${size.toLocaleString('en-US')} | ${Math.round(perSecond).toLocaleString('en-US')} | ${gc === undefined ? 'n/a' : (bytes / 2 ** 20).toFixed(1)} | ${ms.toFixed(0)} |`
  )
}
console.log(
  `\nFlagged in the workload: ours ${caught((x) => d.isDisposable(x))}, mailchecker ${caught((x) => !mailchecker.isValid(`user@${x}`))}, disposable-email-domains ${caught((x) => dedSet.has(x))} (of ${(domains.length * 3) / 4} listed or subdomain-of-listed).`
)
if (sink < 0) console.log(sink)
