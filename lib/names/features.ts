// The feature vector of a name candidate, shared by training (tools/) and inference (lib/).
import {
  F_LOWER,
  F_NFC_SAFE,
  F_UPPER,
  F_VOWEL,
  INFO,
  K_CONTROL,
  K_DIGIT,
  K_EMOJI,
  K_LETTER,
  K_MARK,
  K_NAMEPUNCT,
  K_SPACE,
  LOWER,
  MAX_CHARS,
  SCRIPT_GROUP,
  S_ARMENIAN,
  S_CYRILLIC,
  S_GEORGIAN,
  S_GREEK,
  S_OTHER,
  classify,
  infoOf,
  lowerOf
} from './characters.js'
import { KEY_ADJ, KEY_INDEX, KEY_LIMIT, KEY_STRIDE } from './keyboard.js'
import { anyWordHit, lexiconHit, lexiconKey, maxKeyLength, squeezeRepeats, stemHit, type Lexicon } from './lexicon.js'
import { NG, scoreFast, type NgramScorer, type NgramTables } from './ngrams.js'

const DOMAIN_RE = /\.(com|net|org|ru|de|io|co|info|uk|fr|cn)\b/

/** Names of the feature vector's entries, in order (the model file records them). */
export const FEATURE_NAMES = [
  'len',
  'logLen',
  'truncated',
  'letterShare',
  'digitShare',
  'spaceShare',
  'namePunctShare',
  'symbolShare',
  'emojiShare',
  'controlShare',
  'words',
  'maxWordLen',
  'scriptCount',
  'mixedInWord',
  'grpAlphabet',
  'grpAbjad',
  'grpAbugida',
  'grpCjk',
  'grpOther',
  'grpNone',
  'vowelRatio',
  'maxConsRun',
  'maxVowelRun',
  'maxSameRun',
  'distinctRatio',
  'periodic',
  'repeatUnits',
  'keyAdjShare',
  'keyRun',
  'allUpper',
  'allLower',
  'titleCase',
  'innerCaps',
  'ngMean',
  'ngMin',
  'ngUnseenTri',
  'ngUnseenBi',
  'ngUnknown',
  'ng4Mean',
  'ng4Min',
  'ngUnseen4',
  'ngLlr',
  'ngLowShare',
  'ng4Rel',
  'ngLlrRel',
  'lexPlaceholder',
  'lexProfanity',
  'lexWord',
  'lexStem',
  'emailUrl',
  'digitInWord',
  'codeChars',
  'punctEdge',
  'punctRun',
  'singleLetter',
  'trMean4',
  'trLlr'
] as const

/** Length of the feature vector. */
export const FEATURE_COUNT = FEATURE_NAMES.length

/** What the feature extractor needs from a trained model. */
export interface FeatureContext {
  tables: NgramTables
  lexicon: Lexicon
  /**
   * Mean 4-gram log probability per transition of the training names of each script (leave-one-out), by
   * {@link SCRIPTS} index: names of scripts with few examples score low everywhere, so the model also sees
   * the score relative to its script's norm.
   */
  scriptMean: Float64Array
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
export function prepare(raw: string): Prepared {
  const value = raw.trim()
  let text = value
  // Count code points (a lone low surrogate counts as one) and find where the MAX_CHARS-th ends.
  let length = 0
  let cut = value.length
  let safe = true
  for (let i = 0; i < value.length; i++) {
    let c = value.charCodeAt(i)
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < value.length) {
      const d = value.charCodeAt(i + 1)
      if (d >= 0xdc00 && d < 0xe000) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
        i++
      }
    }
    length++
    if (length <= MAX_CHARS) {
      // NFC is costly; skip it when every character is provably left alone by it.
      if (safe && c >= 0x300 && (infoOf(c) & F_NFC_SAFE) === 0) safe = false
      if (length === MAX_CHARS) cut = i + 1
    }
  }
  if (length > MAX_CHARS) text = value.slice(0, cut)
  if (!safe) {
    const nfc = text.normalize('NFC')
    // Composing accents shortens the text; the length feature counts composed characters.
    if (length <= MAX_CHARS && nfc.length !== text.length) length -= text.length - nfc.length
    text = nfc
  }
  return { value, text, length }
}

// Scratch buffers of extractFeatures (inference is synchronous, so one set per process is enough).
// NFC can expand a character into up to 3 code points, so the buffers allow 4 per kept character.
const CP_CAP = MAX_CHARS * 4
const CPS = new Int32Array(CP_CAP)
const IDS = new Int32Array(CP_CAP + 4)
const SEEN = new Uint32Array(0x10000)
const SCRIPT_COUNTS = new Int32Array(14)
const TIDS = new Int32Array((CP_CAP + 4) * 4)
let seenStamp = 0

/**
 * Fills `out` (length {@link FEATURE_COUNT}) with the features of a prepared value.
 * `scorer` is for training only (leave-one-out n-gram scores). Allocation-free for plain names.
 */
export function extractFeatures(p: Prepared, ctx: FeatureContext, out: Float64Array, scorer: NgramScorer = scoreFast): Float64Array {
  const text = p.text
  const tables = ctx.tables
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
  let wordScriptMask = 0
  let mixedInWord = 0
  const scriptCounts = SCRIPT_COUNTS
  scriptCounts.fill(0)
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
  let dotOrColon = false
  let onlyKeyChars = true
  let punctRun = 0
  let maxPunctRun = 0
  let distinct = 0
  let nIds = 1
  IDS[0] = 0
  let prevBoundary = true
  if (++seenStamp === 0xffffffff) {
    SEEN.fill(0)
    seenStamp = 1
  }
  const stamp = seenStamp
  const len = text.length
  for (let i = 0; i < len && n < CP_CAP; i++) {
    let c = text.charCodeAt(i)
    if (c >= 0xd800 && c < 0xdc00 && i + 1 < len) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d < 0xe000) {
        c = ((c - 0xd800) << 10) + (d - 0xdc00) + 0x10000
        i++
      }
    }
    let info: number
    let lc: number
    if (c < 0x10000) {
      info = INFO[c] as number
      if (info === 0) info = infoOf(c)
      lc = LOWER[c] as number
    } else {
      info = infoOf(c)
      lc = lowerOf(c)
    }
    const kind = info & 0xff
    CPS[n] = lc
    n++
    // Distinct characters: a stamp per BMP code point; astral ones by a scan of the earlier ones.
    if (lc < 0x10000) {
      if (SEEN[lc] !== stamp) {
        SEEN[lc] = stamp
        distinct++
      }
    } else {
      let j = 0
      while (j < n - 1 && CPS[j] !== lc) j++
      if (j === n - 1) distinct++
    }
    if (lc === prev) sameRun++
    else sameRun = 1
    if (sameRun > maxSameRun) maxSameRun = sameRun
    prev = lc
    if (kind === K_SPACE) {
      spaces++
      onlyKeyChars = false
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
      if (!prevBoundary) IDS[nIds++] = 0
      prevBoundary = true
      continue
    }
    prevBoundary = false
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
      const s = (info >> 8) & 0xf
      if (kind === K_LETTER || s !== S_OTHER) {
        wordScriptMask |= 1 << s
        scriptCounts[s] = (scriptCounts[s] as number) + 1
      }
      if ((info & F_UPPER) !== 0) {
        upper++
        if (posInWord === 0) titleWords++
        else innerCaps++
      } else if ((info & F_LOWER) !== 0) {
        lowerCount++
      }
      if (s <= S_CYRILLIC || s === S_ARMENIAN) {
        if ((info & F_VOWEL) !== 0) {
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
      const id = lc < 0x10000 ? (tables.idOf[lc] as number) : (tables.alphabet.get(lc) ?? 0)
      IDS[nIds++] = id === 0 ? 1 : id
    } else {
      consRun = 0
      vowelRun = 0
      onlyKeyChars = false
      if (kind === K_DIGIT) {
        digits++
        wordHasDigit = true
        punctRun = 0
        IDS[nIds++] = 2
      } else if (kind === K_NAMEPUNCT) {
        namePunct++
        punctRun++
        if (c === 0x2e) dotOrColon = true
        const id = lc < 0x10000 ? (tables.idOf[lc] as number) : 0
        IDS[nIds++] = id === 0 ? 1 : id
      } else {
        IDS[nIds++] = 3
        punctRun++
        if (kind === K_EMOJI) emoji++
        else if (kind === K_CONTROL) control++
        else {
          symbols++
          if (c === 0x40) at = true
          else if (c === 0x3a) dotOrColon = true
          if (
            c === 0x3c ||
            c === 0x3e ||
            c === 0x3b ||
            c === 0x3d ||
            c === 0x28 ||
            c === 0x29 ||
            c === 0x7b ||
            c === 0x7d ||
            c === 0x22 ||
            c === 0x5c ||
            c === 0x2f ||
            c === 0x25 ||
            c === 0x24
          )
            codeChars++
        }
      }
      if (punctRun > maxPunctRun) maxPunctRun = punctRun
    }
    if (prevLowerCp >= 0) {
      if (prevLowerCp < KEY_LIMIT && lc < KEY_LIMIT && lc !== prevLowerCp) {
        keyPairs++
        const ka = KEY_INDEX[prevLowerCp] as number
        const kb = KEY_INDEX[lc] as number
        if (ka !== 0 && kb !== 0 && KEY_ADJ[ka * KEY_STRIDE + kb] === 1) {
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
  if (!prevBoundary) IDS[nIds++] = 0

  // Dominant script group among letters (the first script wins ties).
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

  // Periodicity: best share of positions equal to the one p back, p = 1..4.
  let periodic = 0
  let repeatUnits = 0
  const L = n
  for (let per = 1; per <= 4 && per < L; per++) {
    let eq = 0
    for (let i = per; i < L; i++) if (CPS[i] === CPS[i - per]) eq++
    const share = eq / L
    if (share > periodic) periodic = share
    if (eq === L - per && L >= 2 * per) {
      const units = L / per
      if (units > repeatUnits) repeatUnits = units
    }
  }

  scorer(IDS, nIds, tables)

  // Lexicon and e-mail checks work on the lower-cased string; a value of letters only is its own key.
  const lower = text.toLowerCase()
  const lex = ctx.lexicon
  const max = maxKeyLength(lex)
  const key = onlyKeyChars ? lower : lexiconKey(lower)
  const lexWord = words > 1 && anyWordHit(lex, lower, max) ? 1 : 0
  const short = key.length <= max
  const lexPlaceholder = short && lex.placeholder.has(key) ? 1 : 0
  const lexProfanity = short && lex.profanity.has(key) ? 1 : 0
  const squeezed = maxSameRun > 1 || !onlyKeyChars ? squeezeRepeats(key, max) : key
  const lexStem =
    (squeezed === key ? key.length > 1 && lexPlaceholder + lexProfanity > 0 : lexiconHit(lex, squeezed, max)) || stemHit(lex, key, max)
      ? 1
      : 0
  const emailUrl = at || (dotOrColon && (lower.includes('://') || lower.includes('www.') || DOMAIN_RE.test(lower))) ? 1 : 0
  let firstKind = 0
  let lastKind = 0
  let lastCp = 0
  if (len > 0) {
    firstKind = classify(text.codePointAt(0) as number) & 0xff
    lastCp = text.codePointAt(len - 1) as number
    if (lastCp >= 0xdc00 && lastCp < 0xe000 && len >= 2) {
      const hi = text.charCodeAt(len - 2)
      if (hi >= 0xd800 && hi < 0xdc00) lastCp = text.codePointAt(len - 2) as number
    }
    lastKind = classify(lastCp) & 0xff
  } else {
    firstKind = classify(0) & 0xff
    lastKind = firstKind
  }
  const punctEdge =
    (firstKind !== K_LETTER && firstKind !== K_MARK ? 0.5 : 0) + (lastKind !== K_LETTER && lastKind !== K_MARK && lastCp !== 0x2e ? 0.5 : 0)
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
  out[i++] = (Math.min(innerCaps, 4) / 2) * (lowerCount > 0 ? 1 : 0)
  out[i++] = Math.max(-16, NG[0] as number) / -8
  out[i++] = Math.max(-20, NG[1] as number) / -10
  out[i++] = NG[4] as number
  out[i++] = NG[5] as number
  out[i++] = NG[7] as number
  out[i++] = Math.max(-16, NG[2] as number) / -8
  out[i++] = Math.max(-20, NG[3] as number) / -10
  out[i++] = NG[6] as number
  out[i++] = Math.min(Math.max(NG[8] as number, -40), 40) / 10
  out[i++] = NG[9] as number
  const base = best < 0 ? 0 : (ctx.scriptMean[best] as number)
  const rel = best < 0 ? 0 : (NG[2] as number) - base
  out[i++] = Math.min(Math.max(rel, -8), 4) / 4
  out[i++] = Math.min(Math.max(rel * (NG[10] as number), -40), 20) / 10
  out[i++] = lexPlaceholder
  out[i++] = lexProfanity
  out[i++] = lexWord
  out[i++] = lexStem
  out[i++] = emailUrl
  out[i++] = Math.min(digitWordMix, 2) / 2
  out[i++] = Math.min(codeChars, 6) / 3
  out[i++] = punctEdge
  out[i++] = Math.min(maxPunctRun, 6) / 3
  out[i++] = letters === 1 && n === 1 ? 1 : 0
  // The Latin reading of a Greek, Cyrillic, Armenian or Georgian value; any other value keeps its own score.
  if (best === S_GREEK || best === S_CYRILLIC || best === S_ARMENIAN || best === S_GEORGIAN)
    scoreFast(TIDS, transliterate(IDS, nIds, tables), tables)
  out[i++] = Math.max(-16, NG[2] as number) / -8
  out[i++] = Math.min(Math.max(NG[8] as number, -40), 40) / 10
  return out
}

/** Writes the Latin reading of symbol ids into {@link TIDS} and returns its length. */
function transliterate(ids: Int32Array, len: number, t: NgramTables): number {
  let k = 0
  for (let j = 0; j < len; j++) {
    const id = ids[j] as number
    const latin = t.translit[id]
    if (latin === undefined) TIDS[k++] = id
    else for (let m = 0; m < latin.length; m++) TIDS[k++] = latin[m] as number
  }
  return k
}
