// Character features of a name candidate, shared by training (tools/) and inference (lib/).

/** Code points of the trimmed value that are looked at; longer inputs add only a length feature. */
export const MAX_CHARS = 64

/** Writing-system groups the features and the per-script report use. */
export const SCRIPTS = [
  'Latin', 'Greek', 'Cyrillic', 'Armenian', 'Hebrew', 'Arabic', 'Thaana', 'Indic', 'Thai',
  'Georgian', 'Hangul', 'Kana', 'Han', 'OtherLetter',
] as const

/** One of {@link SCRIPTS}. */
export type ScriptName = (typeof SCRIPTS)[number]

// Character kinds, the low byte of classify()'s answer.
const K_LETTER = 1
const K_MARK = 2
const K_DIGIT = 3
const K_SPACE = 4
const K_NAMEPUNCT = 5
const K_SYMBOL = 6
const K_EMOJI = 7
const K_CONTROL = 8

const S_LATIN = 0
const S_GREEK = 1
const S_CYRILLIC = 2
const S_ARMENIAN = 3
const S_HEBREW = 4
const S_ARABIC = 5
const S_THAANA = 6
const S_INDIC = 7
const S_THAI = 8
const S_GEORGIAN = 9
const S_HANGUL = 10
const S_KANA = 11
const S_HAN = 12
const S_OTHER = 13

const LETTER_RE = /\p{L}/u
const MARK_RE = /\p{M}/u
const DIGIT_RE = /\p{Nd}/u
const SPACE_RE = /\s/u
const EMOJI_RE = /\p{Extended_Pictographic}/u

/** Script of a letter code point (by block), {@link S_OTHER} when none of ours. */
function scriptOf (c: number): number {
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

const classCache = new Map<number, number>()

/**
 * Kind and script of one code point, packed as `kind | script << 8`.
 * Marks take the script of their block so that Indic, Thai and Arabic vowel signs count as letters.
 */
export function classify (c: number): number {
  if (c < 0x80) {
    if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) return K_LETTER
    if (c >= 0x30 && c <= 0x39) return K_DIGIT
    if (c === 0x20 || c === 0x09) return K_SPACE
    if (c < 0x20 || c === 0x7f) return K_CONTROL
    if (c === 0x2d || c === 0x27 || c === 0x2e || c === 0x60) return K_NAMEPUNCT
    return K_SYMBOL
  }
  const hit = classCache.get(c)
  if (hit !== undefined) return hit
  let k: number
  if (c >= 0xd800 && c < 0xe000) k = K_CONTROL
  else if (c < 0xa0) k = K_CONTROL
  else if (c === 0x2019 || c === 0x2018 || c === 0x2bc || c === 0x2bb || c === 0x2010 || c === 0x2011 || c === 0xb7 || c === 0x30fb) k = K_NAMEPUNCT
  else if (c === 0x200c || c === 0x200d) k = K_MARK | (S_OTHER << 8)
  else {
    const ch = String.fromCodePoint(c)
    if (LETTER_RE.test(ch)) k = K_LETTER | (scriptOf(c) << 8)
    else if (MARK_RE.test(ch)) k = K_MARK | (scriptOf(c) << 8)
    else if (DIGIT_RE.test(ch)) k = K_DIGIT
    else if (SPACE_RE.test(ch)) k = K_SPACE
    else if (EMOJI_RE.test(ch) || c === 0xfe0f || (c >= 0x1f000 && c < 0x1fc00)) k = K_EMOJI
    else if (c < 0x2000 || (c >= 0xe000 && c < 0xf900) || c >= 0xfff0) k = c >= 0xe000 ? K_CONTROL : K_SYMBOL
    else k = K_SYMBOL
  }
  if (classCache.size < 50_000) classCache.set(c, k)
  return k
}

/** Script group of a script index: 0 alphabets, 1 abjads, 2 abugidas, 3 CJK, 4 other. */
const SCRIPT_GROUP = [0, 0, 0, 0, 1, 1, 1, 2, 2, 0, 3, 3, 3, 4]

const VOWELS = new Set(Array.from(
  'aeiouyàáâãäåæèéêëìíîïòóôõöøùúûüýÿāăąēĕėęěīĭįıōŏőœūŭůűųơưạảấầẩẫậắằẳẵặẹẻẽếềểễệỉịọỏốồổỗộớờởỡợụủứừửữựỳỵỷỹ' +
  'аеёиоуыэюяіїєѐѝ' + 'αεηιουωάέήίόύώϊϋΐΰ' + 'աեէըիոօու',
).map((ch) => ch.codePointAt(0) as number))

// Keyboard neighbour pairs (same row +-1, or stacked) for QWERTY, AZERTY, QWERTZ and ЙЦУКЕН.
const KEY_ROWS = [
  ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['1234567890', 'azertyuiop', 'qsdfghjklm', 'wxcvbn'],
  ['1234567890', 'qwertzuiopü', 'asdfghjklöä', 'yxcvbnm'],
  ['1234567890', 'йцукенгшщзхъ', 'фывапролджэ', 'ячсмитьбю'],
]
const KEY_ADJ = new Set<number>()
for (const layout of KEY_ROWS) {
  for (let r = 0; r < layout.length; r++) {
    const row = Array.from(layout[r] as string)
    for (let i = 0; i < row.length; i++) {
      const a = (row[i] as string).codePointAt(0) as number
      const next = row[i + 1]
      if (next !== undefined) {
        const b = next.codePointAt(0) as number
        KEY_ADJ.add(a * 0x10000 + b)
        KEY_ADJ.add(b * 0x10000 + a)
      }
      const below = layout[r + 1]
      if (below !== undefined) {
        // Rows are staggered: key i sits over keys i-1 and i of the next row.
        for (const j of [i - 1, i]) {
          const bc = Array.from(below)[j]
          if (bc === undefined) continue
          const b = bc.codePointAt(0) as number
          KEY_ADJ.add(a * 0x10000 + b)
          KEY_ADJ.add(b * 0x10000 + a)
        }
      }
    }
  }
}

/** Counts of a character n-gram model over lower-cased names, with `^`/`$` word boundaries. */
export interface NgramTables {
  /** Symbol ids: 0 boundary, 1 unknown character, 2 digit, 3 other non-letter; letters from 4 on. */
  alphabet: Map<number, number>
  /** Number of symbol ids (letters + 4). */
  size: number
  uni: Float64Array
  uniTotal: number
  bi: Map<number, number>
  /** Count of each bigram as the context of a trigram. */
  biCtx: Map<number, number>
  tri: Map<number, number>
}

const PRIOR_UNI = 0.5
const PRIOR_BI = 4
const PRIOR_TRI = 4

/** Symbol ids of one lower-cased, NFC string: boundaries around each word, digits and symbols pooled. */
export function symbolIds (text: string, alphabet: Map<number, number>): number[] {
  const ids = [0]
  let prevBoundary = true
  for (const ch of text) {
    const c = ch.codePointAt(0) as number
    const kind = classify(c) & 0xff
    if (kind === K_SPACE) {
      if (!prevBoundary) ids.push(0)
      prevBoundary = true
      continue
    }
    prevBoundary = false
    if (kind === K_LETTER || kind === K_MARK || kind === K_NAMEPUNCT) ids.push(alphabet.get(c) ?? 1)
    else if (kind === K_DIGIT) ids.push(2)
    else ids.push(3)
  }
  if (!prevBoundary) ids.push(0)
  return ids
}

/** Adds the n-grams of one id sequence to `counts` (keyed like the tables), times `weight`. */
export function countNgrams (ids: number[], size: number, counts: Map<number, number>, weight = 1): void {
  for (let i = 0; i < ids.length; i++) {
    const c = ids[i] as number
    add(counts, -1 - c, weight)
    if (i >= 1) {
      const b = ids[i - 1] as number
      add(counts, b * size + c, weight)
      if (i >= 2) {
        const a = ids[i - 2] as number
        add(counts, OFFSET3 + (a * size + b) * size + c, weight)
      }
    }
  }
}

// Trigram keys live above every bigram key; unigrams use negative keys (only in `countNgrams` output).
const OFFSET3 = 2 ** 40

function add (m: Map<number, number>, k: number, w: number): void {
  m.set(k, (m.get(k) ?? 0) + w)
}

/** Per-string scores of the n-gram model (see {@link ngramScores}). */
export interface NgramScores {
  meanLogProb: number
  minLogProb: number
  unseenTri: number
  unseenBi: number
  unknownChars: number
}

/**
 * Scores an id sequence under the n-gram model, with Dirichlet-smoothed interpolation of
 * tri-, bi- and unigram estimates. `exclude` (training only) holds the sequence's own counts,
 * which are subtracted so that training names are scored as if unseen (leave-one-out).
 */
export function ngramScores (ids: number[], t: NgramTables, exclude?: Map<number, number>): NgramScores {
  const size = t.size
  let sum = 0
  let min = 0
  let unseenTri = 0
  let unseenBi = 0
  let unknown = 0
  let n = 0
  const vocab = size
  let total = t.uniTotal
  if (exclude !== undefined) for (const [k, v] of exclude) if (k < 0) total -= v
  for (let i = 1; i < ids.length; i++) {
    const c = ids[i] as number
    const b = ids[i - 1] as number
    let cu = t.uni[c] ?? 0
    if (exclude !== undefined) cu -= exclude.get(-1 - c) ?? 0
    if (cu <= 0 && c !== 0) unknown++
    const p1 = (Math.max(cu, 0) + PRIOR_UNI) / (total + PRIOR_UNI * vocab)
    const kb = b * size + c
    let cbi = t.bi.get(kb) ?? 0
    let cb = t.uni[b] ?? 0
    if (exclude !== undefined) {
      cbi -= exclude.get(kb) ?? 0
      cb -= exclude.get(-1 - b) ?? 0
    }
    if (cbi <= 0) unseenBi++
    const p2 = (Math.max(cbi, 0) + PRIOR_BI * p1) / (Math.max(cb, 0) + PRIOR_BI)
    let p = p2
    if (i >= 2) {
      const a = ids[i - 2] as number
      const kt = OFFSET3 + (a * size + b) * size + c
      let ctri = t.tri.get(kt) ?? 0
      let cctx = t.biCtx.get(a * size + b) ?? 0
      if (exclude !== undefined) {
        const own = exclude.get(kt) ?? 0
        ctri -= own
        // The context count drops by every trigram of this string that starts with a,b.
        cctx -= exclude.get(OFFSET3 * 2 + a * size + b) ?? 0
      }
      if (ctri <= 0) unseenTri++
      p = (Math.max(ctri, 0) + PRIOR_TRI * p2) / (Math.max(cctx, 0) + PRIOR_TRI)
    }
    const lp = Math.log(p)
    sum += lp
    if (lp < min) min = lp
    n++
  }
  if (n === 0) return { meanLogProb: 0, minLogProb: 0, unseenTri: 0, unseenBi: 0, unknownChars: 0 }
  return {
    meanLogProb: sum / n,
    minLogProb: min,
    unseenTri: unseenTri / Math.max(1, n - 1),
    unseenBi: unseenBi / n,
    unknownChars: unknown / n,
  }
}

/** Own counts of an id sequence in the form {@link ngramScores} subtracts (training only). */
export function ownCounts (ids: number[], size: number): Map<number, number> {
  const m = new Map<number, number>()
  countNgrams(ids, size, m)
  for (let i = 2; i < ids.length; i++) add(m, OFFSET3 * 2 + (ids[i - 2] as number) * size + (ids[i - 1] as number), 1)
  return m
}

/** Splits `countNgrams` output into tables (training builds with this; the model file stores the parts). */
export function tablesFromCounts (alphabet: Map<number, number>, counts: Map<number, number>): NgramTables {
  const size = alphabet.size + 4
  const uni = new Float64Array(size)
  const bi = new Map<number, number>()
  const tri = new Map<number, number>()
  for (const [k, v] of counts) {
    if (k < 0) uni[-1 - k] = v
    else if (k >= OFFSET3) tri.set(k, v)
    else bi.set(k, v)
  }
  return finishTables(alphabet, uni, bi, tri)
}

/** Derives totals and trigram-context counts. */
export function finishTables (alphabet: Map<number, number>, uni: Float64Array, bi: Map<number, number>, tri: Map<number, number>): NgramTables {
  const size = alphabet.size + 4
  let uniTotal = 0
  for (const v of uni) uniTotal += v
  const biCtx = new Map<number, number>()
  for (const [k, v] of tri) {
    const ab = Math.floor((k - OFFSET3) / size)
    biCtx.set(ab, (biCtx.get(ab) ?? 0) + v)
  }
  return { alphabet, size, uni, uniTotal, bi, biCtx, tri }
}

/** The {@link OFFSET3} trigram key base, for serialising tables. */
export const TRIGRAM_KEY_OFFSET = OFFSET3

/** Words that mark a placeholder or profanity, compared after {@link lexiconKey}. */
export interface Lexicon {
  placeholder: Set<string>
  profanity: Set<string>
}

/** Lower-cased letters and digits only: `N/A` → `na`, `Your Name` → `yourname`. */
export function lexiconKey (lower: string): string {
  let out = ''
  for (const ch of lower) {
    const kind = classify(ch.codePointAt(0) as number) & 0xff
    if (kind === K_LETTER || kind === K_DIGIT || kind === K_MARK) out += ch
  }
  return out
}

function lexiconHit (lex: Lexicon, k: string): boolean {
  return k.length > 1 && (lex.placeholder.has(k) || lex.profanity.has(k))
}

/** `fuuuuck` → `fuck`, `testtt` → `test`: runs of one character cut to one. */
function squeezeRepeats (k: string): string {
  let out = ''
  let prev = ''
  for (const ch of k) {
    if (ch !== prev) out += ch
    prev = ch
  }
  return out
}

const STEM_AFFIXES = ['you', 'off', 'face', 'head', 'er', 's', 'ed', 'ing', 'yourself', 'big', 'mr', 'ur', 'the', 'u', 'my', 'ya']

/** Lexicon hit after removing one common insult affix (`fuckyou`, `bigtest`), for words of >= 3 letters. */
function stemHit (lex: Lexicon, k: string): boolean {
  for (const a of STEM_AFFIXES) {
    if (k.length - a.length >= 3) {
      if (k.endsWith(a) && lexiconHit(lex, k.slice(0, k.length - a.length))) return true
      if (k.startsWith(a) && lexiconHit(lex, k.slice(a.length))) return true
    }
  }
  return false
}

/** Names of the feature vector's entries, in order (the model file records them). */
export const FEATURE_NAMES = [
  'len', 'logLen', 'truncated', 'letterShare', 'digitShare', 'spaceShare', 'namePunctShare', 'symbolShare',
  'emojiShare', 'controlShare', 'words', 'maxWordLen', 'scriptCount', 'mixedInWord',
  'grpAlphabet', 'grpAbjad', 'grpAbugida', 'grpCjk', 'grpOther', 'grpNone',
  'vowelRatio', 'maxConsRun', 'maxVowelRun', 'maxSameRun', 'distinctRatio', 'periodic', 'repeatUnits',
  'keyAdjShare', 'keyRun', 'allUpper', 'allLower', 'titleCase', 'innerCaps',
  'ngMean', 'ngMin', 'ngUnseenTri', 'ngUnseenBi', 'ngUnknown',
  'lexPlaceholder', 'lexProfanity', 'lexWord', 'lexStem', 'emailUrl', 'digitInWord', 'codeChars', 'punctEdge', 'punctRun',
  'singleLetter',
] as const

/** Length of the feature vector. */
export const FEATURE_COUNT = FEATURE_NAMES.length

/** What the feature extractor needs from a trained model. */
export interface FeatureContext {
  tables: NgramTables
  lexicon: Lexicon
}

/** Trimmed value and the normalised text the features look at. */
export interface Prepared {
  value: string
  /** NFC, at most {@link MAX_CHARS} code points. */
  text: string
  /** Code points of the whole trimmed value. */
  length: number
}

/** Trims, caps and NFC-normalises; never throws (lone surrogates pass through as they are). */
export function prepare (raw: string): Prepared {
  const value = raw.trim()
  let text = value
  let length = value.length
  if (value.length > MAX_CHARS) {
    const cps = Array.from(value)
    length = cps.length
    text = cps.slice(0, MAX_CHARS).join('')
  } else {
    let surrogates = 0
    for (let i = 0; i < value.length; i++) {
      const u = value.charCodeAt(i)
      if (u >= 0xdc00 && u < 0xe000) surrogates++
    }
    length = value.length - surrogates
  }
  // normalize() is costly; only text with non-ASCII characters can change under NFC.
  let ascii = true
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7f) { ascii = false; break }
  if (!ascii) {
    const nfc = text.normalize('NFC')
    // Composing accents shortens the text; the length feature counts composed characters.
    if (length <= MAX_CHARS && nfc.length !== text.length) length -= text.length - nfc.length
    text = nfc
  }
  return { value, text, length }
}

/**
 * Fills `out` (length {@link FEATURE_COUNT}) with the features of a prepared value.
 * `exclude` is for training only (leave-one-out n-gram scores).
 */
export function extractFeatures (p: Prepared, ctx: FeatureContext, out: Float64Array, exclude?: Map<number, number>): Float64Array {
  const text = p.text
  const lower = text.toLowerCase()
  let n = 0
  let letters = 0
  let digits = 0
  let spaces = 0
  let namePunct = 0
  let symbols = 0
  let emoji = 0
  let control = 0
  let words = 0
  let wordLen = 0
  let maxWordLen = 0
  let scriptMask = 0
  let wordScriptMask = 0
  let mixedInWord = 0
  const scriptCounts = new Int32Array(14)
  let vowels = 0
  let consonants = 0
  let consRun = 0
  let maxConsRun = 0
  let vowelRun = 0
  let maxVowelRun = 0
  let sameRun = 0
  let maxSameRun = 0
  let prev = -1
  let prevLowerCp = -1
  let keyPairs = 0
  let keyAdj = 0
  let keyRun = 0
  let maxKeyRun = 0
  let upper = 0
  let lowerCount = 0
  let titleWords = 0
  let innerCaps = 0
  let posInWord = 0
  let digitWordMix = 0
  let wordHasDigit = false
  let wordHasLetter = false
  let codeChars = 0
  let at = false
  let punctRun = 0
  let maxPunctRun = 0
  const lowerCps: number[] = []
  const lowerIter = lower[Symbol.iterator]()
  for (const ch of text) {
    const lch = lowerIter.next().value as string | undefined
    const c = ch.codePointAt(0) as number
    const lc = lch === undefined ? c : (lch.codePointAt(0) as number)
    const cls = classify(c)
    const kind = cls & 0xff
    n++
    lowerCps.push(lc)
    if (lc === prev) sameRun++
    else sameRun = 1
    if (sameRun > maxSameRun) maxSameRun = sameRun
    prev = lc
    if (kind === K_SPACE) {
      spaces++
      if (posInWord > 0) {
        if (wordHasDigit && wordHasLetter) digitWordMix++
        if ((wordScriptMask & (wordScriptMask - 1)) !== 0) mixedInWord = 1
      }
      posInWord = 0
      wordScriptMask = 0
      wordHasDigit = false
      wordHasLetter = false
      consRun = 0
      vowelRun = 0
      punctRun = 0
      prevLowerCp = -1
      continue
    }
    if (posInWord === 0) {
      words++
      wordLen = 0
    }
    wordLen++
    if (wordLen > maxWordLen) maxWordLen = wordLen
    if (kind === K_LETTER || kind === K_MARK) {
      letters++
      wordHasLetter = true
      punctRun = 0
      const s = cls >> 8
      if (kind === K_LETTER || s !== S_OTHER) {
        scriptMask |= 1 << s
        wordScriptMask |= 1 << s
        scriptCounts[s] = (scriptCounts[s] as number) + 1
      }
      if (kind === K_LETTER && lc !== c) {
        upper++
        if (posInWord === 0) titleWords++
        else innerCaps++
      } else if (kind === K_LETTER && ch.toUpperCase() !== ch) {
        lowerCount++
      }
      if (s <= S_CYRILLIC || s === S_ARMENIAN) {
        if (VOWELS.has(lc)) {
          vowels++
          vowelRun++
          consRun = 0
          if (vowelRun > maxVowelRun) maxVowelRun = vowelRun
        } else if (kind === K_LETTER) {
          consonants++
          consRun++
          vowelRun = 0
          if (consRun > maxConsRun) maxConsRun = consRun
        }
      }
    } else {
      consRun = 0
      vowelRun = 0
      if (kind === K_DIGIT) {
        digits++
        wordHasDigit = true
        punctRun = 0
      } else if (kind === K_NAMEPUNCT) {
        namePunct++
        punctRun++
      } else if (kind === K_EMOJI) {
        emoji++
        punctRun++
      } else if (kind === K_CONTROL) {
        control++
        punctRun++
      } else {
        symbols++
        punctRun++
        if (c === 0x40) at = true
        if (c === 0x3c || c === 0x3e || c === 0x3b || c === 0x3d || c === 0x28 || c === 0x29 || c === 0x7b || c === 0x7d || c === 0x22 || c === 0x5c || c === 0x2f || c === 0x25 || c === 0x24) codeChars++
      }
      if (punctRun > maxPunctRun) maxPunctRun = punctRun
    }
    if (prevLowerCp >= 0) {
      if (prevLowerCp < 0x500 && lc < 0x500 && lc !== prevLowerCp) {
        keyPairs++
        if (KEY_ADJ.has(prevLowerCp * 0x10000 + lc)) {
          keyAdj++
          keyRun++
          if (keyRun > maxKeyRun) maxKeyRun = keyRun
        } else keyRun = 0
      } else keyRun = 0
    }
    prevLowerCp = lc
    posInWord++
  }
  if (posInWord > 0) {
    if (wordHasDigit && wordHasLetter) digitWordMix++
    if ((wordScriptMask & (wordScriptMask - 1)) !== 0) mixedInWord = 1
  }

  // Dominant script group among letters.
  let best = -1
  let bestCount = 0
  let scriptCount = 0
  for (let s = 0; s < 14; s++) {
    const k = scriptCounts[s] as number
    if (k > 0) scriptCount++
    if (k > bestCount) {
      bestCount = k
      best = s
    }
  }
  const group = best < 0 ? 5 : (SCRIPT_GROUP[best] as number)

  // Distinct characters, by a quadratic scan: cheaper than a Set for name-sized input.
  let distinct = 0
  for (let i = 0; i < lowerCps.length; i++) {
    const c = lowerCps[i]
    let j = 0
    while (j < i && lowerCps[j] !== c) j++
    if (j === i) distinct++
  }

  // Periodicity: best share of positions equal to the one p back, p = 1..4.
  let periodic = 0
  let repeatUnits = 0
  const L = lowerCps.length
  for (let per = 1; per <= 4 && per < L; per++) {
    let eq = 0
    for (let i = per; i < L; i++) if (lowerCps[i] === lowerCps[i - per]) eq++
    const share = eq / L
    if (share > periodic) periodic = share
    if (eq === L - per && L >= 2 * per) {
      const units = L / per
      if (units > repeatUnits) repeatUnits = units
    }
  }

  const ids = symbolIds(lower, ctx.tables.alphabet)
  const ng = ngramScores(ids, ctx.tables, exclude)
  const key = lexiconKey(lower)
  let lexWord = 0
  if (words > 1) {
    for (const w of lower.split(/\s+/)) {
      const k = lexiconKey(w)
      if (k.length > 0 && (ctx.lexicon.placeholder.has(k) || ctx.lexicon.profanity.has(k))) lexWord = 1
    }
  }
  const lexStem = lexiconHit(ctx.lexicon, squeezeRepeats(key)) || stemHit(ctx.lexicon, key) ? 1 : 0
  const emailUrl = at || lower.includes('://') || lower.includes('www.') || /\.(com|net|org|ru|de|io|co|info|uk|fr|cn)\b/.test(lower) ? 1 : 0
  const first = text.codePointAt(0) ?? 0
  const lastCp = text.codePointAt(text.length - 1) ?? 0
  const firstKind = classify(first) & 0xff
  const lastKind = classify(lastCp) & 0xff
  const punctEdge = (firstKind !== K_LETTER && firstKind !== K_MARK ? 0.5 : 0) + (lastKind !== K_LETTER && lastKind !== K_MARK && lastCp !== 0x2e ? 0.5 : 0)
  const inv = n > 0 ? 1 / n : 0
  const cased = upper + lowerCount
  const alpha = vowels + consonants

  let i = 0
  out[i++] = Math.min(p.length, 64) / 32
  out[i++] = Math.log2(1 + p.length) / 6
  out[i++] = p.length > MAX_CHARS ? 1 : 0
  out[i++] = letters * inv
  out[i++] = digits * inv
  out[i++] = spaces * inv * 4
  out[i++] = namePunct * inv * 4
  out[i++] = symbols * inv
  out[i++] = emoji * inv
  out[i++] = control * inv
  out[i++] = Math.min(words, 6) / 3
  out[i++] = Math.min(maxWordLen, 30) / 15
  out[i++] = Math.min(scriptCount, 3) / 2
  out[i++] = mixedInWord
  for (let g = 0; g < 6; g++) out[i++] = g === group ? 1 : 0
  out[i++] = alpha > 0 ? vowels / alpha : 0.4
  out[i++] = Math.min(maxConsRun, 8) / 4
  out[i++] = Math.min(maxVowelRun, 6) / 3
  out[i++] = Math.min(maxSameRun, 6) / 3
  out[i++] = n > 0 ? distinct / n : 0
  out[i++] = periodic
  out[i++] = Math.min(repeatUnits, 6) / 3
  out[i++] = keyPairs > 0 ? keyAdj / keyPairs : 0
  out[i++] = Math.min(maxKeyRun, 10) / 5
  out[i++] = cased > 1 && lowerCount === 0 ? 1 : 0
  out[i++] = cased > 0 && upper === 0 ? 1 : 0
  out[i++] = words > 0 && titleWords === words && innerCaps === 0 ? 1 : 0
  out[i++] = Math.min(innerCaps, 4) / 2 * (lowerCount > 0 ? 1 : 0)
  out[i++] = Math.max(-16, ng.meanLogProb) / -8
  out[i++] = Math.max(-20, ng.minLogProb) / -10
  out[i++] = ng.unseenTri
  out[i++] = ng.unseenBi
  out[i++] = ng.unknownChars
  out[i++] = ctx.lexicon.placeholder.has(key) ? 1 : 0
  out[i++] = ctx.lexicon.profanity.has(key) ? 1 : 0
  out[i++] = lexWord
  out[i++] = lexStem
  out[i++] = emailUrl
  out[i++] = Math.min(digitWordMix, 2) / 2
  out[i++] = Math.min(codeChars, 6) / 3
  out[i++] = punctEdge
  out[i++] = Math.min(maxPunctRun, 6) / 3
  out[i++] = letters === 1 && n === 1 ? 1 : 0
  return out
}

/** Script with the most letters in `value` (`None` when it has no letters); used for reports. */
export function dominantScript (value: string): ScriptName | 'None' {
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
  return best < 0 ? 'None' : SCRIPTS[best] as ScriptName
}
