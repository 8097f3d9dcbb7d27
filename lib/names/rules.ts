// Rules the name verifier applies around the network: junk that is junk by construction (e-mail, markup, digits,
// lexicon words, keyboard walks on many layouts, loose marks and jamo), the `reason` of every rejection, and the
// particles and initials a multi-word name may hold.
import { K_DIGIT, K_EMOJI, K_LETTER, K_MARK, K_NAMEPUNCT, K_SPACE, S_HAN, S_HANGUL, S_KANA, S_LATIN, classify } from './characters.js'
import { latinReading } from './latin.js'
import { lexiconKey } from './lexicon.js'
import type { NameJunkReason } from '../types.js'
import { UserVerificationError } from '../errors.js'

/** Why a value is not a name (`reason` of a `LABEL_0` prediction). */
export type { NameJunkReason }

/** `format` of lib/data/name-lexicon.json. */
export const NAME_LEXICON_FORMAT = 'user-verification/name-lexicon@1'

/** The junk lexicon file: lexicon keys (see {@link lexiconKey}) per class, and names that are never junk words. */
export interface NameLexiconFile {
  format: string
  /** Where the words came from and how many each gave (informational). */
  sources: Record<string, number>
  placeholder: string[]
  phrase: string[]
  code: string[]
  profanity: string[]
  allow: string[]
}

/** The lexicon as sets. */
export interface NameLexicon {
  placeholder: Set<string>
  phrase: Set<string>
  code: Set<string>
  profanity: Set<string>
  allow: Set<string>
}

/** Checks and indexes a parsed lexicon file. */
export function compileLexicon(file: unknown, where = 'lexicon'): NameLexicon {
  const f = file as Partial<NameLexiconFile> | null
  if (f === null || typeof f !== 'object' || f.format !== NAME_LEXICON_FORMAT)
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `user-verification: name ${where}: format must be "${NAME_LEXICON_FORMAT}"; rebuild with \`npm run data:names\``
    )
  const set = (k: keyof NameLexicon): Set<string> => {
    const v = f[k]
    if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
      throw new UserVerificationError('ERR_UV_MODEL_LOAD', `user-verification: name ${where}: ${k} must be an array of strings`)
    return new Set(v)
  }
  return { placeholder: set('placeholder'), phrase: set('phrase'), code: set('code'), profanity: set('profanity'), allow: set('allow') }
}

/** Longer values are not names (the longest real full names run to about 100 characters). */
export const MAX_NAME_CHARS = 128

// Keyboard rows of the common layouts of the most used languages: a mash or walk stays on one layout, mostly on one row.
const LAYOUTS: readonly (readonly string[])[] = [
  ['qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['azertyuiop', 'qsdfghjklm', 'wxcvbn'],
  ['qwertzuiopü', 'asdfghjklöä', 'yxcvbnm'],
  ['pyfgcrl', 'aoeuidhtns', 'qjkxbmwvz'], // Dvorak
  ['йцукенгшщзхъ', 'фывапролджэ', 'ячсмитьбю'],
  ['ςερτυθιοπ', 'ασδφγηξκλ', 'ζχψωβνμ'],
  ['קראטוןםפ', 'שדגכעיחלךף', 'זסבהנמצתץ'],
  ['ضصثقفغعهخحجد', 'شسيبلاتنمكط', 'ئءؤرلاىةوزظ'],
  ['ضصثقفغعهخحجچ', 'شسیبلاتنمکگ', 'ظطزرذدپو'], // Persian
  ['ๅภถุึคตจขช', 'ๆไำพะัีรนยบลฃ', 'ฟหกดเ้่าสวง', 'ผปแอิืทมใฝ'] // Thai Kedmanee
]
/** Layout, row and position of every key letter (a letter can sit on several layouts). */
const KEY_POS = new Map<number, Array<[number, number, number]>>()
LAYOUTS.forEach((rows, l) => {
  rows.forEach((row, r) => {
    Array.from(row).forEach((ch, i) => {
      const c = ch.codePointAt(0) as number
      const list = KEY_POS.get(c) ?? []
      list.push([l, r, i])
      KEY_POS.set(c, list)
    })
  })
})

/** For a pair of keys (a * 65536 + b), a bit per layout where they sit side by side on one row. */
const PAIR_LAYOUTS = new Map<number, number>()
LAYOUTS.forEach((rows, l) => {
  for (const row of rows) {
    const keys = Array.from(row, (ch) => ch.codePointAt(0) as number)
    for (let i = 1; i < keys.length; i++) {
      for (const [x, y] of [
        [keys[i - 1] as number, keys[i] as number],
        [keys[i] as number, keys[i - 1] as number]
      ] as const) {
        PAIR_LAYOUTS.set(x * 65536 + y, (PAIR_LAYOUTS.get(x * 65536 + y) ?? 0) | (1 << l))
      }
    }
  }
})

/** Steps between different keys and, for the layout that explains most of them, how many go to a row neighbour. */
function walkSteps(cps: readonly number[]): { steps: number; near: number } {
  let steps = 0
  const near = new Int32Array(LAYOUTS.length)
  for (let i = 1; i < cps.length; i++) {
    const x = cps[i - 1] as number
    const y = cps[i] as number
    if (x === y) continue
    steps++
    const mask = PAIR_LAYOUTS.get(x * 65536 + y) ?? 0
    if (mask !== 0) for (let l = 0; l < LAYOUTS.length; l++) if ((mask & (1 << l)) !== 0) near[l] = (near[l] as number) + 1
  }
  let best = 0
  for (const v of near) if (v > best) best = v
  return { steps, near: best }
}

/**
 * Whether a word is a keyboard walk: all keys of the layouts above, at least 3 distinct keys, and its steps between
 * different keys go to a row neighbour on one layout (asdfgh, йцукен, ضصثقف, ฟหกดเ; other scripts may break once).
 */
export function keyboardWalk(word: string): boolean {
  const n = word.length
  if (n < 4) return false
  const lower = word.toLowerCase()
  // Most names fail on their first step between different keys: check it before anything is allocated.
  const c0 = lower.charCodeAt(0)
  let j = 1
  while (j < n && lower.charCodeAt(j) === c0) j++
  if (c0 < 0x530 && j < n && !PAIR_LAYOUTS.has(c0 * 65536 + lower.charCodeAt(j))) return false
  const cps = Array.from(lower, (ch) => ch.codePointAt(0) as number)
  for (let i = 0; i < cps.length; i++) if (!KEY_POS.has(cps[i] as number)) return false
  if (new Set(cps).size < 3) return false
  const { steps, near } = walkSteps(cps)
  // Names are full of row neighbours (Erez, Crewe, Wertz on AZERTY, QWERTY and QWERTZ; Bilal on the Arabic layout):
  // a Latin or Cyrillic walk must be unbroken over at least 6 keys, another layout's over 5 keys with one break at most.
  // Over the 269,518 names of the training sources, two (Euertz, Ewertz) are walks by this rule.
  const alphabetic = (cps[0] as number) < 0x530
  return alphabetic ? near >= 5 && near === steps : near >= 4 && near >= 0.8 * steps
}

/** Whether the letters of a value (spaces ignored) are one unit of 1–3 letters repeated 3 times or more: aaa, hahaha, lololol; not Nana, Chacha or Dandan. */
export function repeatedUnit(text: string): boolean {
  const s = Array.from(text.toLowerCase().replace(/[\s\-'.]/g, ''))
  const n = s.length
  if (n < 3) return false
  for (let u = 1; u <= 3; u++) {
    const reps = n / u
    if (reps < 3) continue
    let ok = true
    for (let i = u; i < n && ok; i++) if (s[i] !== s[i - u]) ok = false
    if (ok) return true
  }
  return false
}

const EMAIL_URL =
  /@|:\/\/|\bwww\.|\b[\p{L}\d-]+\.(?:com|net|org|edu|gov|io|co|me|ru|de|uk|fr|it|es|nl|pl|br|cn|jp|in|info|biz|ly|tr|ua|us|ca|au|app|dev)\b|\bat\b.*\bdot\b/iu
const CODE_CHARS = /[<>{}$%=;\\|]|\w\(.*\)|^\s*(?:javascript|data):|--|\/\*|\*\//u

/** Reason of a rule that rejects the value outright, or null when the network should judge it. */
export function ruleReason(text: string, length: number, lex: NameLexicon): NameJunkReason | null {
  if (length > MAX_NAME_CHARS) return 'too_long'
  // One pass over the value: character kinds, scripts per word, marks with nothing to sit on, loose jamo, and which
  // ASCII characters the e-mail and markup patterns need (the patterns run only when one is present).
  let letters = 0
  let marks = 0
  let digits = 0
  let other = 0
  let words = 0
  let inWord = false
  let wordScripts = 0
  let mixed = false
  let prevAttach = false
  let looseMark = false
  let jamo = false
  let ascii = true
  let nonLatin = false
  let space = false
  let emailish = false
  let codeish = false
  const n = text.length
  for (let i = 0; i < n; i++) {
    let c = text.charCodeAt(i)
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d < 0xe000) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
        i++
      }
    }
    if (c < 0x80) {
      if (c === 0x40 || c === 0x2e || c === 0x3a) emailish = true
      if (c === 0x3c || c === 0x3e || c === 0x7b || c === 0x7d || c === 0x24 || c === 0x25 || c === 0x3d || c === 0x3b) codeish = true
      else if (c === 0x5c || c === 0x7c || c === 0x28 || c === 0x3a || c === 0x2d || c === 0x2f || c === 0x2a) codeish = true
    } else ascii = false
    const cls = classify(c)
    const kind = cls & 0xff
    if (kind === K_SPACE) {
      inWord = false
      prevAttach = false
      space = true
      continue
    }
    if (!inWord) {
      inWord = true
      words++
      wordScripts = 0
    }
    if (kind === K_LETTER) {
      letters++
      const sc = cls >> 8
      if (sc !== S_LATIN) nonLatin = true
      // Han with kana or Hangul is how Japanese and Korean names are written; any other pair in one word is not.
      const bit = sc === S_KANA || sc === S_HANGUL ? 1 << S_HAN : 1 << sc
      if (wordScripts !== 0 && (wordScripts & bit) === 0) mixed = true
      wordScripts |= bit
      if ((c >= 0x3131 && c <= 0x318e) || (c >= 0x1100 && c <= 0x11ff)) jamo = true
      prevAttach = true
    } else if (kind === K_MARK) {
      marks++
      if (!prevAttach && c !== 0x200c && c !== 0x200d) looseMark = true
    } else {
      prevAttach = false
      if (kind === K_DIGIT) digits++
      // The Tibetan tsheg separates the syllables of a word, as a hyphen would.
      else if (kind !== K_NAMEPUNCT && c !== 0xf0b && c !== 0xf0c) other++
    }
  }
  // No letter, mark or digit: symbols, emoji, punctuation (@@@ and {} included).
  if (letters + marks + digits === 0) return 'symbols'
  if ((emailish || space) && EMAIL_URL.test(text)) return 'email_or_url'
  if (codeish && CODE_CHARS.test(text)) return 'markup_or_code'
  const lower = text.toLowerCase()
  const key = lexiconKey(lower)
  if (key.length > 0 && !lex.allow.has(key)) {
    if (lex.code.has(key) && !space) return 'markup_or_code'
    // Latin letters with diacritics are also looked up without them (scheiße is typed scheisse).
    if (lex.profanity.has(key) || (!ascii && !nonLatin && lex.profanity.has(lexiconKey(latinReading(lower))))) return 'profanity'
    if (lex.placeholder.has(key)) return 'placeholder'
    if (lex.phrase.has(key)) return 'phrase'
    // Stretched profanity (fuuuuck, shiiiit): a run of 3 or more of one letter, which names do not have, squeezed to one.
    if (/(\p{L})\1\1/u.test(key)) {
      const squeezed = key.replace(/(\p{L})\1+/gu, '$1')
      if (lex.profanity.has(squeezed) && !lex.allow.has(squeezed)) return 'profanity'
    }
  }
  if (digits > 0) return 'digits'
  if (letters === 0 && looseMark && other === 0) return 'keyboard'
  if (letters === 0 || other > 0) return 'symbols'
  if (mixed) return 'mixed_scripts'
  if (words === 1 ? keyboardWalk(lower) : lower.split(/\s+/u).some(keyboardWalk)) return 'keyboard'
  // A repeat starts with its first letter again within 3 letters; other values skip the full check.
  const f = lower.charCodeAt(0)
  if ((f === lower.charCodeAt(1) || f === lower.charCodeAt(2) || f === lower.charCodeAt(3)) && repeatedUnit(text)) return 'repeated'
  // Loose Hangul jamo and vowel signs with no letter to sit on are what a mash on a Korean, Thai or Indic layout types.
  if (jamo || looseMark) return 'keyboard'
  // Profanity as one word of several (hijo de puta, fuck you), when the word is not also a name.
  if (words > 1) {
    for (const w of lower.split(/\s+/u)) {
      const k = lexiconKey(w)
      if (k.length >= 4 && lex.profanity.has(k) && !lex.allow.has(k)) return 'profanity'
    }
  }
  return null
}

/** Reason for a value the network rejected and no rule named: the kind of junk its shape suggests. */
export function shapeReason(text: string): NameJunkReason {
  const words = text.trim().split(/\s+/u)
  const { steps, near } = walkSteps(Array.from(words.join('').toLowerCase(), (ch) => ch.codePointAt(0) as number))
  if (steps > 0 && near / steps >= 0.7) return 'keyboard'
  for (const ch of text) if ((classify(ch.codePointAt(0) as number) & 0xff) === K_EMOJI) return 'symbols'
  if (words.length >= 3) return 'phrase'
  return 'random'
}

/** Particles and connectors of naming traditions, lower case: they are judged as part of the name, not as a name. */
const PARTICLES = new Set([
  'de',
  'del',
  'della',
  'dei',
  'degli',
  'di',
  'da',
  'das',
  'do',
  'dos',
  'du',
  'des',
  'la',
  'las',
  'le',
  'les',
  'los',
  'lo',
  'y',
  'e',
  'i',
  'van',
  'von',
  'vom',
  'zu',
  'zum',
  'zur',
  'der',
  'den',
  'ter',
  'ten',
  "'t",
  'bin',
  'binti',
  'bint',
  'ibn',
  'ben',
  'bat',
  'bar',
  'al',
  'el',
  'ul',
  'ud',
  'ad',
  'as',
  'ash',
  'abu',
  'umm',
  'abd',
  'ó',
  'o',
  'ní',
  'nic',
  'mac',
  'mc',
  'uí',
  'ui',
  'ap',
  'ab',
  'ferch',
  'verch',
  'an',
  'af',
  'av',
  'st',
  'st.',
  'san',
  'santa',
  'dem',
  'jr',
  'jr.',
  'sr',
  'sr.',
  'ii',
  'iii',
  'iv',
  'bte',
  'bt',
  'a/l',
  'a/p',
  'thi',
  'văn',
  'van',
  "de'",
  "d'",
  "o'",
  "l'",
  'dela',
  'dalla'
])

/**
 * The words of a multi-word value the network should judge one by one: particles and initials (J., A.P.) dropped,
 * hyphenated words split, an O'/D'/L' prefix taken off. `structured` tells whether the value had any of those (a
 * particle, an initial, a hyphen, an apostrophe prefix): only such values are judged word by word, since a run of
 * ordinary words is as likely a sentence as a name.
 */
export function nameWords(text: string): { words: string[]; structured: boolean } {
  const out: string[] = []
  let structured = false
  for (const raw of text.split(/\s+/u)) {
    if (raw.length === 0) continue
    const w = raw.toLowerCase()
    if (PARTICLES.has(w)) {
      structured = true
      continue
    }
    // Initials: one letter, with or without a period (J. / J), or several joined by periods (A.P.J.).
    if ((/^\p{L}\.?$/u.test(raw) && raw !== 'I') || /^(?:\p{L}\.){2,}$/u.test(raw)) {
      structured = true
      continue
    }
    const parts = raw.split(/[-‐‑]/u)
    if (parts.length > 1) structured = true
    for (const part of parts) {
      if (part.length === 0 || PARTICLES.has(part.toLowerCase()) || Array.from(part).length === 1) continue
      const m = /^(?:[OoDdLlNnMm]|[Dd]e|[Dd]ell)['’](.+)$/u.exec(part)
      if (m !== null && Array.from(m[1] as string).length >= 2) {
        structured = true
        out.push(m[1] as string)
      } else out.push(part)
    }
  }
  return { words: out, structured }
}

/** Whether a word is in a junk lexicon (and not an allowed name): such a word never makes a name. */
export function junkWord(word: string, lex: NameLexicon): boolean {
  const k = lexiconKey(word.toLowerCase())
  if (k.length === 0 || lex.allow.has(k)) return false
  return lex.profanity.has(k) || lex.placeholder.has(k) || lex.phrase.has(k) || lex.code.has(k)
}
