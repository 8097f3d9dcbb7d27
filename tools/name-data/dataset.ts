// Builds the labelled name dataset (real names and junk) and splits it by distinct value.
import { dominantScript, type ScriptName } from '../../lib/names/characters.js'
import { lexiconKey } from '../../lib/names/lexicon.js'
import { JUNK_CATEGORIES, generateJunk, type JunkCategory } from './junk.js'
import { PLACEHOLDERS, PROFANITY_NAME_ALLOW, loadProfanity } from './lexicon.js'
import { hashUnit, mulberry32, pick, type Rng } from './prng.js'
import { loadFakerNames, loadHumannames, loadUsBabyNames, loadWords, type SourceName } from './sources.js'

/** Split of an example: train (fit), calib (calibration and early stopping), test (never tuned on). */
export type Split = 'train' | 'calib' | 'test'

/** One labelled example. */
export interface Example {
  value: string
  label: 0 | 1
  /** For real names the kind (`first`, `last`, `any`, `compound`, `combo`); for junk its category. */
  category: string
  script: ScriptName | 'None'
  split: Split
  source: string
  /** Real names: the source names it was built from (itself for a source name); training excludes their n-gram counts. */
  parts?: string[]
}

/** The dataset plus the lexicons the model ships. */
export interface Dataset {
  examples: Example[]
  placeholderKeys: string[]
  profanityKeys: string[]
  /** Source entries dropped because they collide with a placeholder or profanity word. */
  droppedCollisions: number
  /** Profanity-list words kept as real names (hand allow-list or a curated name list holds them). */
  profanityAsNames: string[]
}

/** Comparison key of a value: trimmed, NFC, lower case. Values with one key are one distinct value. */
export function valueKey(s: string): string {
  return s.trim().normalize('NFC').toLowerCase()
}

function splitOf(key: string, seed: number, small = false): Split {
  const u = hashUnit(key, seed)
  // Scripts with few source names give the test split a larger share so that it can hold >= 50 names.
  const train = small ? 0.6 : 0.8
  return u < train ? 'train' : u < train + 0.1 ? 'calib' : 'test'
}

/** Profanity that stays junk even where a name list holds it. */
export const ALWAYS_PROFANE = new Set([
  'fuck',
  'shit',
  'cunt',
  'asshole',
  'motherfucker',
  'bitch',
  'whore',
  'slut',
  'nigger',
  'faggot',
  'bastard',
  'wanker',
  'sex',
  'porn',
  'penis',
  'vagina'
])

const PARTICLES = [
  'van',
  'van der',
  'van den',
  'van de',
  'de',
  'de la',
  'del',
  'della',
  'di',
  'da',
  'dos',
  'das',
  'du',
  'le',
  'la',
  'von',
  'von der',
  'bin',
  'ibn',
  'ben',
  'abu',
  'ter',
  'ten',
  'st.',
  'mac',
  'al',
  'el',
  'bint'
]
const CJK_ORDER = new Set(['zh_CN', 'zh_TW', 'ja', 'ko'])

/** Typing variants: ALL CAPS, lower case, stray surrounding spaces. */
function typed(rng: Rng, s: string): string {
  const r = rng()
  let v = s
  if (r < 0.1) v = s.toUpperCase()
  else if (r < 0.2) v = s.toLowerCase()
  if (rng() < 0.05) v = ` ${v}${rng() < 0.5 ? ' ' : ''}`
  return v
}

/** Loads every source, generates compounds, combos and junk, and splits by distinct value. */
export async function buildDataset(
  seed: number,
  opts: { junkPerCategory?: number; extraTrainJunk?: Partial<Record<JunkCategory, number>>; log?: (m: string) => void } = {}
): Promise<Dataset> {
  const log = opts.log ?? (() => {})
  const rng = mulberry32(seed)
  const profanityAll = loadProfanity()
  const allow = new Set(PROFANITY_NAME_ALLOW)
  // Leave-one-source-out runs (NAME_EXCLUDE_SOURCES=@faker-js/faker:th,…) train without whole sources.
  const excluded = new Set((process.env.NAME_EXCLUDE_SOURCES ?? '').split(',').filter((x) => x.length > 0))
  const sources: SourceName[] = [...loadHumannames(), ...(await loadUsBabyNames()), ...loadFakerNames()].filter(
    (s) => !excluded.has(s.source)
  )
  if (excluded.size > 0) log(`left out: ${[...excluded].join(', ')}`)
  // A profanity word that a curated name list (SSA baby names, faker) holds is a real name (Pinto, Fanny);
  // scraped humannames entries do not count, and the hand-written always-junk words never yield.
  const curated = new Set(sources.filter((s) => s.source !== 'humannames').map((s) => lexiconKey(valueKey(s.value))))
  const profanityWords = profanityAll.filter(
    (w) => !allow.has(w) && (ALWAYS_PROFANE.has(w) || !curated.has(lexiconKey(w.normalize('NFC'))))
  )
  const profanityKeys = [...new Set(profanityWords.map((w) => lexiconKey(w.normalize('NFC'))).filter((k) => k.length > 1))].sort()
  const placeholderKeys = [
    ...new Set(PLACEHOLDERS.map((w) => lexiconKey(w.normalize('NFC').toLowerCase())).filter((k) => k.length > 0))
  ].sort()
  const blocked = new Set([...profanityKeys, ...placeholderKeys])
  log(`sources: ${sources.length} entries`)
  const byKey = new Map<string, SourceName & { key: string }>()
  let droppedCollisions = 0
  for (const s of sources) {
    const key = valueKey(s.value)
    if (blocked.has(lexiconKey(key))) {
      droppedCollisions++
      continue
    }
    // A single Latin letter is an initial, not a name.
    if (Array.from(key).length === 1 && dominantScript(key) === 'Latin') continue
    const old = byKey.get(key)
    if (old === undefined) byKey.set(key, { ...s, key })
    else if (old.kind === 'any' && s.kind !== 'any') byKey.set(key, { ...s, key, source: `${old.source}+${s.source}` })
  }
  const examples: Example[] = []
  const taken = new Map<string, Split>()
  const push = (value: string, label: 0 | 1, category: string, source: string, split: Split, parts?: string[]): void => {
    const key = valueKey(value)
    if (key.length === 0) return
    const had = taken.get(key)
    if (had !== undefined) return
    taken.set(key, split)
    examples.push({ value, label, category, script: dominantScript(value), split, source, ...(parts === undefined ? {} : { parts }) })
  }

  // Base names.
  const bySplit: Record<Split, Array<SourceName & { key: string }>> = { train: [], calib: [], test: [] }
  const perScript = new Map<string, number>()
  for (const s of byKey.values()) perScript.set(dominantScript(s.key), (perScript.get(dominantScript(s.key)) ?? 0) + 1)
  for (const s of byKey.values()) bySplit[splitOf(s.key, seed, (perScript.get(dominantScript(s.key)) ?? 0) < 500)].push(s)
  for (const split of ['train', 'calib', 'test'] as const) {
    for (const s of bySplit[split]) push(typed(rng, s.value), 1, s.kind, s.source, split, [s.value])
  }

  // Compounds and combos, built only from components of the same split.
  for (const split of ['train', 'calib', 'test'] as const) {
    const names = bySplit[split]
    const scale = split === 'train' ? 8 : 1
    const latin = names.filter((s) => dominantScript(s.value) === 'Latin' && /^[A-Z]/.test(s.value))
    const firsts = latin.filter((s) => s.kind === 'first')
    const lasts = latin.filter((s) => s.kind !== 'first')
    const cap = (s: string): string => s
    for (let i = 0; i < 400 * scale; i++) {
      const r = rng()
      let v: string
      const a = pick(rng, r < 0.25 || r >= 0.9 ? firsts : lasts).value
      const b = pick(rng, r < 0.25 || r >= 0.9 ? firsts : lasts).value
      let parts = [a, b]
      if (r < 0.45) v = `${a}-${b}`
      else if (r < 0.75) {
        const p = pick(rng, PARTICLES)
        v =
          p === 'al' || p === 'el'
            ? `${rng() < 0.5 ? p : p.charAt(0).toUpperCase() + p.slice(1)}-${a}`
            : `${rng() < 0.6 ? p : p.charAt(0).toUpperCase() + p.slice(1)} ${a}`
        parts = [a]
      } else if (r < 0.9) {
        v = `${pick(rng, ["O'", "D'", 'O’', "d'", "L'", 'Mc', 'Mac'])}${cap(a)}`
        parts = [a]
      } else v = `${a} ${b}`
      push(typed(rng, v), 1, 'compound', 'generated', split, parts)
    }
    // Non-Latin and Vietnamese locales: first + last (CJK: last + first, no space).
    const byLocale = new Map<string, { first: string[]; last: string[] }>()
    for (const s of names) {
      if (s.locale === undefined) continue
      const e = byLocale.get(s.locale) ?? { first: [], last: [] }
      ;(s.kind === 'last' ? e.last : e.first).push(s.value)
      byLocale.set(s.locale, e)
    }
    for (const [locale, e] of [...byLocale.entries()].sort((a, b) => a[0].localeCompare(b[0]))) {
      if (e.first.length === 0 || e.last.length === 0) continue
      const script = dominantScript(e.first[0] as string)
      if (script === 'Latin' && locale !== 'vi') continue
      const n = Math.min(e.first.length * e.last.length, (CJK_ORDER.has(locale) ? 160 : 60) * scale)
      for (let i = 0; i < n; i++) {
        const f = pick(rng, e.first)
        const l = pick(rng, e.last)
        push(CJK_ORDER.has(locale) ? `${l}${f}` : `${f} ${l}`, 1, 'combo', `@faker-js/faker:${locale}`, split, [f, l])
      }
    }
  }
  const nameKeys = new Set(taken.keys())
  log(`real names: ${examples.length}`)

  // Junk, split by its own distinct value; values that are real names are not junk.
  const latinNames = [...byKey.values()]
    .filter((s) => dominantScript(s.value) === 'Latin' && s.value.length >= 3)
    .map((s) => s.value)
    .sort()
  const inputs = { names: latinNames, words: loadWords(), placeholders: PLACEHOLDERS, profanity: profanityWords }
  const per = opts.junkPerCategory ?? 6000
  for (const category of JUNK_CATEGORIES) {
    const crng = mulberry32(seed ^ hashCategory(category))
    let made = 0
    for (let tries = 0; made < per && tries < per * 6; tries++) {
      const v = generateJunk(crng, category as JunkCategory, inputs)
      const key = valueKey(v)
      if (key.length === 0 || nameKeys.has(key) || taken.has(key)) continue
      push(v, 0, category, 'generated', splitOf(key, seed))
      made++
    }
  }
  // Extra training junk for hard categories: drawn from another stream and kept only where the value hashes
  // to the training split, so the calibration and test splits stay exactly as they are.
  for (const category of JUNK_CATEGORIES) {
    const extra = opts.extraTrainJunk?.[category] ?? 0
    const crng = mulberry32((seed ^ hashCategory(category)) + 1)
    let made = 0
    for (let tries = 0; made < extra && tries < extra * 20; tries++) {
      const v = generateJunk(crng, category, inputs)
      const key = valueKey(v)
      if (key.length === 0 || nameKeys.has(key) || taken.has(key) || splitOf(key, seed) !== 'train') continue
      push(v, 0, category, 'generated', 'train')
      made++
    }
  }
  log(`total examples: ${examples.length}`)
  return {
    examples,
    placeholderKeys,
    profanityKeys,
    droppedCollisions,
    profanityAsNames: profanityAll.filter((w) => !profanityWords.includes(w))
  }
}

function hashCategory(c: string): number {
  return Math.floor(hashUnit(c, 7) * 0x7fffffff)
}
