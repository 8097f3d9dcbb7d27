// Issue 12: the built disposable list never flags real organisations, reserved names or contested providers, and carries its provenance.
import t from 'tap'
import { readFileSync, existsSync } from 'node:fs'
import { DisposableDomains, isDisposableDomain } from '../../lib/email/disposable-domains.js'
import { isPublicSectorDomain } from '../../lib/email/disposable-public-sector.js'

const read = (p: string): string => readFileSync(new URL(p, import.meta.url), 'utf8')
const lines = (p: string): string[] =>
  read(p)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))

t.test('public-sector namespaces are never on the list', async (t) => {
  for (const d of [
    'dallas.gov',
    'army.gov',
    'x.gov.uk',
    'ox.ac.uk',
    'x.gouv.fr',
    'x.gov.in',
    'x.edu.au',
    'x.go.jp',
    'ci.dallas.tx.us',
    'x.mil',
    'x.edu'
  ])
    t.ok(isPublicSectorDomain(d), `${d} is public sector`)
  for (const d of ['mailinator.com', 'google.co.uk', 'go.com', 'ac.me', 'foo.us']) t.notOk(isPublicSectorDomain(d), `${d} is not`)
  const listed = lines('../../lib/data/disposable-domains.txt')
  t.same(
    listed.filter((d) => isPublicSectorDomain(d)),
    [],
    'no shipped entry lies in a public-sector namespace'
  )
  t.notOk(isDisposableDomain('dallas.gov'), 'the city of Dallas (flagged before issue 12)')
})

t.test('reserved names and contested providers are not disposable; real services still are', async (t) => {
  for (const d of ['example.com', 'mail.example.org', 'x.test', 'a.invalid']) t.notOk(isDisposableDomain(d), d)
  const contested = JSON.parse(read('../../lib/data/disposable-contested.json')) as {
    decisions: Array<{ domain: string; decision: string }>
  }
  t.ok(contested.decisions.length >= 10)
  for (const c of contested.decisions) t.equal(isDisposableDomain(c.domain), c.decision === 'disposable', `${c.domain}: ${c.decision}`)
  for (const d of ['mailinator.com', 'guerrillamail.com', 'yopmail.com', '10minutemail.com', 'x.mailinator.com'])
    t.ok(isDisposableDomain(d), d)
  const user = new DisposableDomains({ block: ['duck.com'] })
  t.ok(user.isDisposable('duck.com'), 'a user can still block a contested provider')
})

t.test('independent legitimate set: zero flagged', async (t) => {
  const d = new DisposableDomains()
  const legit = lines('../fixtures/legit-domains-independent.txt')
  t.ok(legit.length > 25000, `${legit.length} domains`)
  t.same(
    legit.filter((x) => d.isDisposable(x)),
    []
  )
})

t.test('provenance names every source with repo@commit:path, licence and date, and the snapshots are committed', async (t) => {
  const meta = JSON.parse(read('../../tools/disposable-sources/sources.json')) as {
    sources: Array<{ repo: string; commit: string; path: string; file: string; licence: string; committed: string }>
  }
  for (const s of meta.sources) {
    t.match(s.commit, /^[0-9a-f]{40}$/, `${s.repo} commit`)
    t.ok(s.licence !== '' && s.committed !== '' && s.path !== '', `${s.repo} licence and date`)
    t.ok(existsSync(new URL(`../../tools/disposable-sources/${s.file}`, import.meta.url)), `${s.file} committed`)
  }
  const prov = JSON.parse(read('../../lib/data/disposable-provenance.json')) as {
    total: number
    sources: Array<{ origin: string; entries: number }>
    familyOverlaps: Record<string, Record<string, number>>
  }
  t.equal(prov.total, lines('../../lib/data/disposable-domains.txt').length)
  t.ok(prov.sources.every((s) => /@/.test(s.origin) && s.entries > 0))
  t.ok(Object.keys(prov.familyOverlaps).length >= 8, 'overlaps recorded between the list families')
})
