// The independent name evaluation set (test/fixtures/name-independent/): hand-written real names of 60+ cultures and
// scripts, names with rude substrings, particle names and junk of every `reason` class, cut into an evaluation part
// and a separate development part. Never used by training; tuning may look at the development part only.
import { readFileSync } from 'node:fs'

/** Junk classes of the name verifier's `reason`, in report order. */
export const REASONS = [
  'keyboard',
  'random',
  'repeated',
  'placeholder',
  'profanity',
  'phrase',
  'digits',
  'symbols',
  'email_or_url',
  'markup_or_code',
  'mixed_scripts',
  'too_long'
] as const

/** One of {@link REASONS}. */
export type JunkReason = (typeof REASONS)[number]

/** One value of the set. */
export interface IndependentItem {
  value: string
  /** 1 real name, 0 junk. */
  label: 0 | 1
  /** `name:<culture>`, `name:rude substrings`, `name:particles`, or `junk:<class>` (`junk:role` holds role and system words). */
  group: string
  /** The reason a junk value should get (role words: `placeholder`), null for names. */
  reason: JunkReason | null
  /** Script of the culture's names as the training report groups them (informational). */
  script?: string
  split: 'eval' | 'dev'
}

interface Culture {
  group: string
  script: string
  /** gs: given surname; sg: surname given; sg0: surname given without a space; none: no full names. */
  order: 'gs' | 'sg' | 'sg0' | 'none'
  given: string[]
  surnames: string[]
}

const DIR = new URL('../../test/fixtures/name-independent/', import.meta.url)
const read = <T>(f: string): T => JSON.parse(readFileSync(new URL(f, DIR), 'utf8')) as T

/** Every fifth entry of a hand-written list (from the third) is development data; the rest is evaluation data. */
const splitOf = (i: number): 'eval' | 'dev' => (i % 5 === 2 ? 'dev' : 'eval')

/** Full names per culture and split: given name i with surname (7i+3) mod n, within one split only. */
const COMBOS = { eval: 20, dev: 6 }

const SCRIPT_RES = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Thaana',
  'Devanagari',
  'Bengali',
  'Tamil',
  'Telugu',
  'Kannada',
  'Malayalam',
  'Gujarati',
  'Gurmukhi',
  'Oriya',
  'Sinhala',
  'Thai',
  'Lao',
  'Khmer',
  'Myanmar',
  'Tibetan',
  'Ethiopic',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul'
].map((name) => [name, new RegExp(`\\p{Script=${name}}`, 'u')] as const)

/** Unicode script of a value's first letter (Han, Hiragana and Katakana count as one: Japanese names mix them). */
function scriptKey(v: string): string {
  for (const ch of v) {
    for (const [name, re] of SCRIPT_RES) if (re.test(ch)) return name === 'Hiragana' || name === 'Katakana' ? 'Han' : name
  }
  return 'other'
}

/** Values over 128 code points, built from ordinary text so that only their length is wrong. */
function tooLong(): string[] {
  const out: string[] = []
  const bits = [
    'Maria',
    'Jean-Pierre',
    'Müller',
    'Иван',
    'محمد',
    '王伟',
    'Lorem ipsum dolor sit amet',
    'please call me back tomorrow',
    'asdf',
    'Nguyễn Thị',
    'de la Cruz',
    'Oluwaseun'
  ]
  for (let i = 0; i < 40; i++) {
    const a = bits[i % bits.length] as string
    const b = bits[(i * 5 + 3) % bits.length] as string
    let s = ''
    while (Array.from(s).length <= 128 + (i % 7) * 20) s += (i % 2 === 0 ? `${a} ${b} ` : `${a}${b}`).repeat(1)
    out.push(s.trim())
  }
  return out
}

/** The whole set, both splits. Values are unique; a value in both splits is kept in evaluation only. */
export function loadIndependentSet(): IndependentItem[] {
  const items: IndependentItem[] = []
  for (const f of ['names-a.json', 'names-b.json', 'names-c.json', 'names-d.json']) {
    for (const c of read<{ cultures: Culture[] }>(f).cultures) {
      const group = `name:${c.group}`
      c.given.forEach((v, i) => items.push({ value: v, label: 1, group, reason: null, script: c.script, split: splitOf(i) }))
      c.surnames.forEach((v, i) => items.push({ value: v, label: 1, group, reason: null, script: c.script, split: splitOf(i) }))
      if (c.order === 'none') continue
      for (const split of ['eval', 'dev'] as const) {
        const g = c.given.filter((_, i) => splitOf(i) === split)
        const s = c.surnames.filter((_, i) => splitOf(i) === split)
        for (let i = 0; i < COMBOS[split] && g.length > 0 && s.length > 0; i++) {
          const given = g[i % g.length] as string
          // A surname of the given name's script (groups such as "Telugu and Kannada" hold two scripts).
          let j = (7 * i + 3) % s.length
          for (let k = 0; k < s.length && scriptKey(s[j] as string) !== scriptKey(given); k++) j = (j + 1) % s.length
          const surname = s[j] as string
          if (scriptKey(surname) !== scriptKey(given)) continue
          const value = c.order === 'gs' ? `${given} ${surname}` : c.order === 'sg' ? `${surname} ${given}` : `${surname}${given}`
          items.push({ value, label: 1, group, reason: null, script: c.script, split })
        }
      }
    }
  }
  const special = read<{ rude_substrings: string[]; particles: string[] }>('special.json')
  special.rude_substrings.forEach((v, i) =>
    items.push({ value: v, label: 1, group: 'name:rude substrings', reason: null, split: splitOf(i) })
  )
  special.particles.forEach((v, i) => items.push({ value: v, label: 1, group: 'name:particles', reason: null, split: splitOf(i) }))
  const junk = read<{ classes: Record<string, string[]> }>('junk.json').classes
  junk.too_long = tooLong()
  for (const [cls, values] of Object.entries(junk)) {
    const reason = (cls === 'role' ? 'placeholder' : cls) as JunkReason
    if (!REASONS.includes(reason)) throw new Error(`independent set: unknown junk class ${cls}`)
    values.forEach((v, i) => items.push({ value: v, label: 0, group: `junk:${cls}`, reason, split: splitOf(i) }))
  }
  // One entry per value: the first wins, and evaluation beats development.
  const seen = new Map<string, IndependentItem>()
  for (const it of items) {
    const prev = seen.get(it.value)
    if (prev === undefined) seen.set(it.value, it)
    else if (prev.label !== it.label) throw new Error(`independent set: ${JSON.stringify(it.value)} is both a name and junk`)
    else if (prev.split === 'dev' && it.split === 'eval') seen.set(it.value, it)
  }
  return [...seen.values()]
}
