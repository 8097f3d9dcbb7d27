// Builds lib/data/name-lexicon.json, the junk lexicons of the name verifier's rules: profanity from npm lists
// (naughty-words, leo-profanity, @2toad/profanity; devDependencies, read here only) and the hand-written placeholder,
// role, phrase and code lists (tools/name-data/junk-lexicon.ts), minus the real names they collide with.
import { writeFileSync } from 'node:fs'
import { latinReading } from '../../lib/names/latin.js'
import { lexiconKey } from '../../lib/names/lexicon.js'
import { NAME_LEXICON_FORMAT, type NameLexiconFile } from '../../lib/names/rules.js'
import { ALWAYS_PROFANE } from './dataset.js'
import { CODE_WORDS, INSULTS, NAME_ALLOW, PHRASES, PLACEHOLDER_WORDS, ROLE_WORDS } from './junk-lexicon.js'
import { PLACEHOLDERS, PROFANITY_NAME_ALLOW, loadProfanity } from './lexicon.js'
import { loadFakerNames, loadUsBabyNames } from './sources.js'

const OUT = new URL(process.env.NAME_LEXICON_OUT ?? '../../lib/data/name-lexicon.json', import.meta.url)
const key = (w: string): string => lexiconKey(w.normalize('NFC').toLowerCase())

/** Profanity words of leo-profanity (en, fr, ru) and @2toad/profanity (en, de, es, it: its other lists are machine-made). */
async function npmProfanity(): Promise<{ words: string[]; sources: Record<string, number> }> {
  const sources: Record<string, number> = {}
  const words: string[] = []
  const leo = (await import('leo-profanity')).default as { loadDictionary(d: string): void; list(): string[] }
  for (const d of ['en', 'fr', 'ru']) {
    leo.loadDictionary(d)
    const l = leo.list()
    sources[`leo-profanity ${d}`] = l.length
    words.push(...l)
  }
  const toad = (await import('@2toad/profanity')) as unknown as { profaneWords: Map<string, string[]> }
  for (const d of ['en', 'de', 'es', 'it']) {
    const l = toad.profaneWords.get(d) ?? []
    sources[`@2toad/profanity ${d}`] = l.length
    words.push(...l)
  }
  sources['hand-written insults (tools/name-data/junk-lexicon.ts)'] = INSULTS.length
  words.push(...INSULTS)
  const nw = loadProfanity()
  sources['naughty-words (every language)'] = nw.length
  words.push(...nw)
  return { words, sources }
}

async function main(): Promise<void> {
  const { words, sources } = await npmProfanity()
  // A word a curated name list holds (SSA baby names, faker) is a name unless it is always profane; so is the allow list.
  const curated = new Set([...(await loadUsBabyNames()), ...loadFakerNames()].map((s) => key(s.value)))
  const allow = new Set([...NAME_ALLOW, ...PROFANITY_NAME_ALLOW].map(key))
  const keep = (k: string): boolean => k.length >= 3 && !allow.has(k) && !/^\d+$/.test(k)
  const profanity = new Set<string>()
  let savedByNames = 0
  for (const w of words) {
    const k = key(w)
    if (!keep(k)) continue
    if (curated.has(k) && !ALWAYS_PROFANE.has(k)) {
      savedByNames++
      continue
    }
    profanity.add(k)
    // Also the key of its Latin reading (scheiße is typed scheisse), for Latin-script words.
    if (/^[\p{Script=Latin}\p{M}\d]+$/u.test(k)) profanity.add(lexiconKey(latinReading(k)))
  }
  const list = (xs: readonly string[]): string[] => [...new Set(xs.map(key).filter((k) => k.length > 0 && !allow.has(k)))].sort()
  const file: NameLexiconFile = {
    format: NAME_LEXICON_FORMAT,
    sources: {
      ...sources,
      'hand-written (tools/name-data/junk-lexicon.ts, lexicon.ts)':
        PLACEHOLDER_WORDS.length + ROLE_WORDS.length + PHRASES.length + CODE_WORDS.length + PLACEHOLDERS.length
    },
    placeholder: list([...PLACEHOLDERS, ...PLACEHOLDER_WORDS, ...ROLE_WORDS]),
    phrase: list(PHRASES),
    code: list(CODE_WORDS),
    profanity: [...profanity].sort(),
    allow: [...allow].sort()
  }
  writeFileSync(OUT, `${JSON.stringify(file)}\n`)
  process.stderr.write(
    `name lexicon: ${file.placeholder.length} placeholder, ${file.phrase.length} phrase, ${file.code.length} code, ${file.profanity.length} profanity keys (${savedByNames} profanity words kept as names), ${file.allow.length} allowed names -> ${OUT.pathname}\n`
  )
}

await main()
