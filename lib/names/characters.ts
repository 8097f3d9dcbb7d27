// Code point facts for the name features: kind (letter, mark, digit…), script, case, vowel, NFC safety.

/** Code points of the trimmed value that are looked at; longer inputs add only a length feature. */
export const MAX_CHARS = 64

/** Writing-system groups the features and the per-script report use. */
export const SCRIPTS = [
  'Latin',
  'Greek',
  'Cyrillic',
  'Armenian',
  'Hebrew',
  'Arabic',
  'Thaana',
  'Indic',
  'Thai',
  'Georgian',
  'Hangul',
  'Kana',
  'Han',
  'OtherLetter'
] as const

/** One of {@link SCRIPTS}. */
export type ScriptName = (typeof SCRIPTS)[number]

// Character kinds, the low byte of classify()'s answer.
export const K_LETTER = 1
export const K_MARK = 2
export const K_DIGIT = 3
export const K_SPACE = 4
export const K_NAMEPUNCT = 5
export const K_SYMBOL = 6
export const K_EMOJI = 7
export const K_CONTROL = 8

// Script indices into SCRIPTS.
export const S_LATIN = 0
export const S_GREEK = 1
export const S_CYRILLIC = 2
export const S_ARMENIAN = 3
export const S_HEBREW = 4
export const S_ARABIC = 5
export const S_THAANA = 6
export const S_INDIC = 7
export const S_THAI = 8
export const S_GEORGIAN = 9
export const S_HANGUL = 10
export const S_KANA = 11
export const S_HAN = 12
export const S_OTHER = 13

// Flags above classify()'s 12 bits in the per-code-point info word.
export const F_UPPER = 1 << 12
export const F_LOWER = 1 << 13
export const F_VOWEL = 1 << 14
export const F_NFC_SAFE = 1 << 15
const F_KNOWN = 1 << 16

const LETTER_RE = /\p{L}/u
const MARK_RE = /\p{M}/u
const DIGIT_RE = /\p{Nd}/u
const SPACE_RE = /\s/u
const EMOJI_RE = /\p{Extended_Pictographic}/u

/** Script of a letter code point (by block), {@link S_OTHER} when none of ours. */
function scriptOf(c: number): number {
  if (c < 0x2b0) return S_LATIN
  if (c >= 0x2c60 && c < 0x2c80) return S_LATIN
  if (c >= 0xa720 && c < 0xa800) return S_LATIN
  if (c >= 0x1e00 && c < 0x1f00) return S_LATIN
  if (c >= 0x370 && c < 0x400) return S_GREEK
  if (c >= 0x1f00 && c < 0x2000) return S_GREEK
  if (c >= 0x400 && c < 0x530) return S_CYRILLIC
  if (c >= 0x530 && c < 0x590) return S_ARMENIAN
  if (c >= 0x590 && c < 0x600) return S_HEBREW
  if (c >= 0x600 && c < 0x780) return S_ARABIC
  if (c >= 0x8a0 && c < 0x900) return S_ARABIC
  if (c >= 0xfb50 && c < 0xfe00) return S_ARABIC
  if (c >= 0xfe70 && c < 0xff00) return S_ARABIC
  if (c >= 0x780 && c < 0x7c0) return S_THAANA
  if (c >= 0x900 && c < 0xe00) return S_INDIC
  if (c >= 0xe00 && c < 0xf00) return S_THAI
  if (c >= 0x10a0 && c < 0x1100) return S_GEORGIAN
  if (c >= 0x1100 && c < 0x1200) return S_HANGUL
  if (c >= 0x3130 && c < 0x3190) return S_HANGUL
  if (c >= 0xac00 && c < 0xd7b0) return S_HANGUL
  if (c >= 0x3040 && c < 0x3100) return S_KANA
  if (c >= 0x31f0 && c < 0x3200) return S_KANA
  if (c >= 0xff66 && c < 0xffa0) return S_KANA
  if (c >= 0x3400 && c < 0x4dc0) return S_HAN
  if (c >= 0x4e00 && c < 0xa000) return S_HAN
  if (c >= 0xf900 && c < 0xfb00) return S_HAN
  if (c >= 0x20000 && c < 0x32000) return S_HAN
  if (c === 0x3005) return S_HAN
  return S_OTHER
}

/** Kind and script of one code point, packed as `kind | script << 8` (no cache). */
function classifySlow(c: number): number {
  if (c < 0x80) {
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return K_LETTER
    if (c >= 0x30 && c <= 0x39) return K_DIGIT
    if (c === 0x20 || c === 0x09) return K_SPACE
    if (c < 0x20 || c === 0x7f) return K_CONTROL
    if (c === 0x2d || c === 0x27 || c === 0x2e || c === 0x60) return K_NAMEPUNCT
    return K_SYMBOL
  }
  if (c >= 0xd800 && c < 0xe000) return K_CONTROL
  if (c < 0xa0) return K_CONTROL
  if (c === 0x2019 || c === 0x2018 || c === 0x2bc || c === 0x2bb || c === 0x2010 || c === 0x2011 || c === 0xb7 || c === 0x30fb)
    return K_NAMEPUNCT
  if (c === 0x200c || c === 0x200d) return K_MARK | (S_OTHER << 8)
  const ch = String.fromCodePoint(c)
  if (LETTER_RE.test(ch)) return K_LETTER | (scriptOf(c) << 8)
  if (MARK_RE.test(ch)) return K_MARK | (scriptOf(c) << 8)
  if (DIGIT_RE.test(ch)) return K_DIGIT
  if (SPACE_RE.test(ch)) return K_SPACE
  if (EMOJI_RE.test(ch) || c === 0xfe0f || (c >= 0x1f000 && c < 0x1fc00)) return K_EMOJI
  if (c < 0x2000 || (c >= 0xe000 && c < 0xf900) || c >= 0xfff0) return c >= 0xe000 ? K_CONTROL : K_SYMBOL
  return K_SYMBOL
}

const VOWELS = new Set(
  Array.from(
    'aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿāăąēĕėęěīĭįıōŏőœūŭůűųơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ' +
      'аеёиоуыэюяіїєѐѝ' +
      'αεηιουωάέήίόύώϊϋΐΰ' +
      'աեէըիոօու'
  ).map((ch) => ch.codePointAt(0) as number)
)

// Per-code-point facts, filled on first sight: BMP in typed arrays, the rest in maps.
/** Info word per BMP code point, 0 until first seen (read through {@link infoOf} or directly on the hot path). */
export const INFO = new Int32Array(0x10000)
/** Lower case per BMP code point, valid once {@link INFO} is filled. */
export const LOWER = new Int32Array(0x10000)
const astralInfo = new Map<number, number>()
const astralLower = new Map<number, number>()

/** Lower case of one code point as one code point (first of a multi-character lower case); final sigma folds to σ. */
function lowerSlow(c: number): number {
  if (c === 0x3c2) return 0x3c3
  const l = String.fromCodePoint(c).toLowerCase().codePointAt(0) as number
  return l === 0x3c2 ? 0x3c3 : l
}

function infoSlow(c: number): number {
  const ch = String.fromCodePoint(c)
  let info = classifySlow(c) | F_KNOWN
  const kind = info & 0xff
  const lc = lowerSlow(c)
  if (kind === K_LETTER && ch.toLowerCase() !== ch) info |= F_UPPER
  if (kind === K_LETTER && ch.toUpperCase() !== ch) info |= F_LOWER
  if (VOWELS.has(lc)) info |= F_VOWEL
  // NFC leaves a string alone when every character is NFC on its own and none can join the one before
  // (combining marks, Hangul jamo); test/names/features.ts checks this rule over the whole BMP.
  if (
    c < 0x300 ||
    (c < 0x10000 &&
      !(c >= 0xd800 && c < 0xe000) &&
      ch.normalize('NFC') === ch &&
      !MARK_RE.test(ch) &&
      !(c >= 0x1100 && c < 0x1200) &&
      !(c >= 0xd7b0 && c < 0xd800) &&
      c !== 0x200c &&
      c !== 0x200d)
  )
    info |= F_NFC_SAFE
  return info
}

/** Info word of a code point (kind, script, case and vowel flags), computed on first sight. */
export function infoOf(c: number): number {
  if (c < 0x10000) {
    let i = INFO[c] as number
    if (i === 0) {
      i = infoSlow(c)
      INFO[c] = i
      LOWER[c] = lowerSlow(c)
    }
    return i
  }
  let i = astralInfo.get(c)
  if (i === undefined) {
    i = infoSlow(c)
    if (astralInfo.size < 50_000) {
      astralInfo.set(c, i)
      astralLower.set(c, lowerSlow(c))
    }
  }
  return i
}

/** Lower case of a code point as {@link lowerCodePoint} gives it, from the per-code-point cache. */
export function lowerOf(c: number): number {
  if (c < 0x10000) {
    if (INFO[c] === 0) infoOf(c)
    return LOWER[c] as number
  }
  return astralLower.get(c) ?? lowerSlow(c)
}

/** Lower case of one code point as the features see it (first code point of its lower case; ς → σ). */
export function lowerCodePoint(c: number): number {
  return lowerOf(c)
}

/**
 * Kind and script of one code point, packed as `kind | script << 8`.
 * Marks take the script of their block so that Indic, Thai and Arabic vowel signs count as letters.
 */
export function classify(c: number): number {
  return infoOf(c) & 0xfff
}

/** Whether NFC provably leaves a one-code-point string unchanged in any context (see infoSlow). */
export function nfcSafe(c: number): boolean {
  return (infoOf(c) & F_NFC_SAFE) !== 0
}

/** Script group of a script index: 0 alphabets, 1 abjads, 2 abugidas, 3 CJK, 4 other. */
export const SCRIPT_GROUP = [0, 0, 0, 0, 1, 1, 1, 2, 2, 0, 3, 3, 3, 4]

/** Script with the most letters in `value` (`None` when it has no letters); used for reports. */
export function dominantScript(value: string): ScriptName | 'None' {
  const counts = new Int32Array(14)
  for (const ch of value) {
    const cls = classify(ch.codePointAt(0) as number)
    const kind = cls & 0xff
    if (kind === K_LETTER || kind === K_MARK) counts[cls >> 8] = (counts[cls >> 8] as number) + 1
  }
  let best = -1
  let bestCount = 0
  for (let s = 0; s < 14; s++) {
    if ((counts[s] as number) > bestCount) {
      bestCount = counts[s] as number
      best = s
    }
  }
  return best < 0 ? 'None' : (SCRIPTS[best] as ScriptName)
}
