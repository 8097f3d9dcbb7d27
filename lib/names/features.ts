// Character features of a name candidate, shared by training (tools/) and inference (lib/).

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

// Flags above classify()'s 12 bits in the per-code-point info word.
const F_UPPER = 1 << 12
const F_LOWER = 1 << 13
const F_VOWEL = 1 << 14
const F_NFC_SAFE = 1 << 15
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
const INFO = new Int32Array(0x10000)
const LOWER = new Int32Array(0x10000)
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

function infoOf(c: number): number {
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

function lowerOf(c: number): number {
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
const SCRIPT_GROUP = [0, 0, 0, 0, 1, 1, 1, 2, 2, 0, 3, 3, 3, 4]

// Keyboard neighbour pairs (same row +-1, or stacked) for QWERTY, AZERTY, QWERTZ and ЙЦУКЕН,
// as a small index per key and an adjacency matrix of those indices.
const KEY_ROWS = [
  ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['1234567890', 'azertyuiop', 'qsdfghjklm', 'wxcvbn'],
  ['1234567890', 'qwertzuiopü', 'asdfghjklöä', 'yxcvbnm'],
  ['1234567890', 'йцукенгшщзхъ', 'фывапролджэ', 'ячсмитьбю']
]
const KEY_LIMIT = 0x500
const KEY_INDEX = new Int16Array(KEY_LIMIT)
let keyCount = 0
for (const layout of KEY_ROWS) {
  for (const row of layout) {
    for (const ch of row) {
      const c = ch.codePointAt(0) as number
      if (KEY_INDEX[c] === 0) KEY_INDEX[c] = ++keyCount
    }
  }
}
const KEY_ADJ = new Uint8Array((keyCount + 1) * (keyCount + 1))
function keyPair(a: string, b: string): void {
  const i = KEY_INDEX[a.codePointAt(0) as number] as number
  const j = KEY_INDEX[b.codePointAt(0) as number] as number
  KEY_ADJ[i * (keyCount + 1) + j] = 1
  KEY_ADJ[j * (keyCount + 1) + i] = 1
}
for (const layout of KEY_ROWS) {
  for (let r = 0; r < layout.length; r++) {
    const row = Array.from(layout[r] as string)
    const below = layout[r + 1] === undefined ? undefined : Array.from(layout[r + 1] as string)
    for (let i = 0; i < row.length; i++) {
      const next = row[i + 1]
      if (next !== undefined) keyPair(row[i] as string, next)
      // Rows are staggered: key i sits over keys i-1 and i of the next row.
      if (below !== undefined) {
        for (const j of [i - 1, i]) {
          const bc = below[j]
          if (bc !== undefined) keyPair(row[i] as string, bc)
        }
      }
    }
  }
}

/**
 * Integer-keyed open-addressing table. A slot is `[key, count]`, or `[key, count, ctx, 0]` when context counts
 * are kept, side by side in one Int32Array so that one probe touches one cache line; the table is sized
 * for a load of at most 0.7. Counts are whole numbers of training names.
 */
export class NgramIndex {
  /** Slots; key -1 marks an empty one. */
  readonly slots: Int32Array
  /** Int32s per slot: 2, or 4 with the context count at offset 2. */
  readonly stride: number
  private readonly mask: number
  private readonly shift: number
  private free: number

  constructor(entries: number, withCtx = true) {
    let cap = 16
    while (cap * 0.7 < entries) cap *= 2
    this.stride = withCtx ? 4 : 2
    this.shift = this.stride === 4 ? 2 : 1
    this.slots = new Int32Array(cap * this.stride)
    for (let i = 0; i < this.slots.length; i += this.stride) this.slots[i] = -1
    this.mask = cap - 1
    this.free = cap - 1
  }

  /** Slot of `key`, or -1. */
  find(key: number): number {
    const mask = this.mask
    const slots = this.slots
    const shift = this.shift
    let s = (Math.imul(key, 0x9e3779b1) >>> 11) & mask
    for (;;) {
      const k = slots[s << shift] as number
      if (k === key) return s
      if (k === -1) return -1
      s = (s + 1) & mask
    }
  }

  /** Count in a slot. */
  count(slot: number): number {
    return this.slots[(slot << this.shift) + 1] as number
  }

  /** Context count in a slot (tables built with context counts only). */
  ctx(slot: number): number {
    return this.slots[(slot << 2) + 2] as number
  }

  /** Adds to the count (and context count) of `key`, inserting it if new; returns its slot. */
  add(key: number, count: number, ctx = 0): number {
    if (key < 0 || key > 0x7fffffff || !Number.isInteger(count) || !Number.isInteger(ctx))
      throw new Error(`name model: n-gram key ${key} or count ${count} out of range`)
    const mask = this.mask
    const slots = this.slots
    const shift = this.shift
    let s = (Math.imul(key, 0x9e3779b1) >>> 11) & mask
    for (;;) {
      const k = slots[s << shift] as number
      if (k === -1) {
        if (this.free-- <= 0) throw new Error('name model: n-gram table is full (inconsistent counts)')
        slots[s << shift] = key
      }
      if (k === -1 || k === key) {
        slots[(s << shift) + 1] = (slots[(s << shift) + 1] as number) + count
        if (ctx !== 0) slots[(s << shift) + 2] = (slots[(s << shift) + 2] as number) + ctx
        return s
      }
      s = (s + 1) & mask
    }
  }
}

/**
 * Counts of a character n-gram model (up to 4-grams) over lower-cased names, with `^`/`$` word boundaries.
 * Inference uses `bi`/`tri`/`quad` (integer-keyed, each n-gram keyed by its prefix's slot); training's
 * leave-one-out scoring also needs `maps` (counts keyed like {@link countNgrams}).
 */
export interface NgramTables {
  /** Symbol ids: 0 boundary, 1 unknown character, 2 digit, 3 other non-letter; letters from 4 on. */
  alphabet: Map<number, number>
  /** Symbol id of each BMP code point (0 = not a letter of the alphabet). */
  idOf: Int32Array
  /** Latin symbol ids of each transliterable letter's symbol id (see {@link TRANSLIT}), else undefined. */
  translit: Array<Int32Array | undefined>
  /** Number of symbol ids (letters + 4). */
  size: number
  uni: Float64Array
  uniTotal: number
  /** Bigrams keyed `b * size + c`; ctx = count as a trigram context. */
  bi: NgramIndex
  /** Trigrams keyed `slot(a,b) * size + c`; ctx = count as a 4-gram context. */
  tri: NgramIndex
  /** 4-grams keyed `slot(z,a,b) * size + c`. */
  quad: NgramIndex
  maps?: Map<number, number>
}

const PRIOR_UNI = 0.5
const PRIOR_BI = 4
const PRIOR_TRI = 4
const PRIOR_QUAD = 4
/** A transition less likely than this counts as surprising. */
const LOW_PROB = Math.exp(-4)
/** Log of a uniform 30-letter alphabet, the "random letters" side of the likelihood ratio. */
const LOG_UNIFORM = Math.log(30)

// Key ranges of countNgrams' flat map: unigrams negative, bigrams below 2^40, trigrams at 2^40, trigram
// contexts at 2^41, 4-grams at 2^50, 4-gram contexts at 2^51 (all exact in a double while size^4 < 2^50).
const OFFSET3 = 2 ** 40
const OFFSET3_CTX = 2 ** 41
const OFFSET4 = 2 ** 50
const OFFSET4_CTX = 2 ** 51

function symbolOf(lc: number, kind: number, t: { alphabet: Map<number, number>; idOf?: Int32Array }): number {
  if (kind === K_LETTER || kind === K_MARK || kind === K_NAMEPUNCT) {
    const id = lc < 0x10000 && t.idOf !== undefined ? (t.idOf[lc] as number) : (t.alphabet.get(lc) ?? 0)
    return id === 0 ? 1 : id
  }
  return kind === K_DIGIT ? 2 : 3
}

/** Symbol ids of one NFC string (lower-cased here, code point by code point): boundaries around each word, digits and symbols pooled. */
export function symbolIds(text: string, alphabet: Map<number, number>): number[] {
  const ids = [0]
  let prevBoundary = true
  const t = { alphabet }
  for (const ch of text) {
    const c = ch.codePointAt(0) as number
    const kind = classify(c) & 0xff
    if (kind === K_SPACE) {
      if (!prevBoundary) ids.push(0)
      prevBoundary = true
      continue
    }
    prevBoundary = false
    ids.push(symbolOf(lowerOf(c), kind, t))
  }
  if (!prevBoundary) ids.push(0)
  return ids
}

/** Adds the n-grams of one id sequence to `counts` (keyed as described at OFFSET3), times `weight`. */
export function countNgrams(ids: ArrayLike<number>, size: number, counts: Map<number, number>, weight = 1): void {
  if (size ** 4 >= 2 ** 50) throw new Error('name model: alphabet too large for 4-gram keys')
  for (let i = 0; i < ids.length; i++) {
    const c = ids[i] as number
    add(counts, -1 - c, weight)
    if (i >= 1) {
      const b = ids[i - 1] as number
      add(counts, b * size + c, weight)
      if (i >= 2) {
        const a = ids[i - 2] as number
        add(counts, OFFSET3 + (a * size + b) * size + c, weight)
        if (i >= 3) {
          const z = ids[i - 3] as number
          add(counts, OFFSET4 + ((z * size + a) * size + b) * size + c, weight)
        }
      }
    }
  }
}

function add(m: Map<number, number>, k: number, w: number): void {
  m.set(k, (m.get(k) ?? 0) + w)
}

/** Per-string scores of the n-gram model (see {@link ngramScores}). */
export interface NgramScores {
  /** Mean and minimum log probability per transition, trigram model. */
  meanLogProb: number
  minLogProb: number
  /** The same with 4-gram interpolation. */
  meanLogProb4: number
  minLogProb4: number
  unseenTri: number
  unseenBi: number
  unseenQuad: number
  unknownChars: number
  /** Sum over transitions of log p4 + log 30: the log-likelihood ratio of real name vs uniform random letters. */
  llr: number
  /** Share of transitions with p4 below {@link LOW_PROB}. */
  lowShare: number
}

// Scratch result of the scorers: mean3, min3, mean4, min4, unseenTri, unseenBi, unseenQuad, unknown, llr, lowShare, transitions.
const NG = new Float64Array(11)
// Probe results of scoreFast per position (longer id lists, from ngramScores only, get their own arrays).
const SLOT_CAP = MAX_CHARS * 4 + 4
const SLOT_BI = new Int32Array(SLOT_CAP)
const SLOT_TRI = new Int32Array(SLOT_CAP)
const SLOT_QUAD = new Int32Array(SLOT_CAP)

function finishScores(
  n: number,
  sum3: number,
  min3: number,
  sum4: number,
  min4: number,
  uTri: number,
  uBi: number,
  uQuad: number,
  unknown: number,
  low: number
): void {
  if (n === 0) {
    NG.fill(0)
    return
  }
  NG[0] = sum3 / n
  NG[1] = min3
  NG[2] = sum4 / n
  NG[3] = min4
  NG[4] = uTri / Math.max(1, n - 1)
  NG[5] = uBi / n
  NG[6] = uQuad / Math.max(1, n - 2)
  NG[7] = unknown / n
  NG[8] = sum4 + n * LOG_UNIFORM
  NG[9] = low / n
  NG[10] = n
}

/** Fast path: integer-keyed tables, no allocation. Fills {@link NG}. */
function scoreFast(ids: Int32Array, len: number, t: NgramTables): void {
  const size = t.size
  const uni = t.uni
  const denom1 = t.uniTotal + PRIOR_UNI * size
  const bi = t.bi
  const tri = t.tri
  const quad = t.quad
  // Logs are the costly part: multiply probabilities and take a log only when the product gets small.
  let sum3 = 0
  let prod3 = 1
  let minP3 = 1
  let sum4 = 0
  let prod4 = 1
  let minP4 = 1
  let uTri = 0
  let uBi = 0
  let uQuad = 0
  let unknown = 0
  let low = 0
  // Table probes first, one order at a time: probes of one order do not depend on each other, so their
  // cache misses overlap instead of queueing behind the arithmetic. A trigram whose last bigram is unseen
  // is unseen too (and so on up), so those probes are skipped.
  const big = len > SLOT_CAP
  const SB = big ? new Int32Array(len) : SLOT_BI
  const ST = big ? new Int32Array(len) : SLOT_TRI
  const SQ = big ? new Int32Array(len) : SLOT_QUAD
  SB[0] = -1
  ST[0] = -1
  ST[1] = -1
  SQ[0] = -1
  SQ[1] = -1
  SQ[2] = -1
  for (let i = 1; i < len; i++) SB[i] = bi.find((ids[i - 1] as number) * size + (ids[i] as number))
  for (let i = 2; i < len; i++) {
    const prev = SB[i - 1] as number
    ST[i] = prev >= 0 && (SB[i] as number) >= 0 ? tri.find(prev * size + (ids[i] as number)) : -1
  }
  for (let i = 3; i < len; i++) {
    const prev = ST[i - 1] as number
    SQ[i] = prev >= 0 && (ST[i] as number) >= 0 ? quad.find(prev * size + (ids[i] as number)) : -1
  }
  for (let i = 1; i < len; i++) {
    const c = ids[i] as number
    const b = ids[i - 1] as number
    const cu = uni[c] as number
    if (cu <= 0 && c !== 0) unknown++
    const p1 = (cu + PRIOR_UNI) / denom1
    const sb = SB[i] as number
    const cbi = sb < 0 ? 0 : bi.count(sb)
    if (cbi <= 0) uBi++
    const p2 = (cbi + PRIOR_BI * p1) / ((uni[b] as number) + PRIOR_BI)
    let p3 = p2
    if (i >= 2) {
      const prevBi = SB[i - 1] as number
      const st = ST[i] as number
      const ctri = st >= 0 ? tri.count(st) : 0
      if (prevBi >= 0) p3 = (ctri + PRIOR_TRI * p2) / (bi.ctx(prevBi) + PRIOR_TRI)
      if (ctri <= 0) uTri++
    }
    let p4 = p3
    if (i >= 3) {
      const prevTri = ST[i - 1] as number
      const sq = SQ[i] as number
      const cq = sq >= 0 ? quad.count(sq) : 0
      if (prevTri >= 0) p4 = (cq + PRIOR_QUAD * p3) / (tri.ctx(prevTri) + PRIOR_QUAD)
      if (cq <= 0) uQuad++
    }
    prod3 *= p3
    prod4 *= p4
    if (prod3 < 1e-200) {
      sum3 += Math.log(prod3)
      prod3 = 1
    }
    if (prod4 < 1e-200) {
      sum4 += Math.log(prod4)
      prod4 = 1
    }
    if (p3 < minP3) minP3 = p3
    if (p4 < minP4) minP4 = p4
    if (p4 < LOW_PROB) low++
  }
  sum3 += Math.log(prod3)
  sum4 += Math.log(prod4)
  finishScores(len - 1, sum3, Math.log(minP3), sum4, Math.log(minP4), uTri, uBi, uQuad, unknown, low)
}

/** Leave-one-out path (training): flat count maps with the string's own counts subtracted. Fills {@link NG}. */
function scoreExcluding(ids: ArrayLike<number>, len: number, t: NgramTables, exclude: Map<number, number>): void {
  const m = t.maps
  if (m === undefined) throw new Error('name model: leave-one-out scoring needs tables built by tablesFromCounts')
  const size = t.size
  const get = (k: number): number => (m.get(k) ?? 0) - (exclude.get(k) ?? 0)
  let total = t.uniTotal
  for (const [k, v] of exclude) if (k < 0) total -= v
  let sum3 = 0
  let prod3 = 1
  let minP3 = 1
  let sum4 = 0
  let prod4 = 1
  let minP4 = 1
  let uTri = 0
  let uBi = 0
  let uQuad = 0
  let unknown = 0
  let low = 0
  for (let i = 1; i < len; i++) {
    const c = ids[i] as number
    const b = ids[i - 1] as number
    const cu = get(-1 - c)
    if (cu <= 0 && c !== 0) unknown++
    const p1 = (Math.max(cu, 0) + PRIOR_UNI) / (total + PRIOR_UNI * size)
    const cbi = get(b * size + c)
    if (cbi <= 0) uBi++
    const p2 = (Math.max(cbi, 0) + PRIOR_BI * p1) / (Math.max(get(-1 - b), 0) + PRIOR_BI)
    let p3 = p2
    if (i >= 2) {
      const a = ids[i - 2] as number
      const ctri = get(OFFSET3 + (a * size + b) * size + c)
      if (ctri <= 0) uTri++
      const cctx = get(OFFSET3_CTX + a * size + b)
      if (cctx > 0) p3 = (Math.max(ctri, 0) + PRIOR_TRI * p2) / (cctx + PRIOR_TRI)
    }
    let p4 = p3
    if (i >= 3) {
      const a = ids[i - 2] as number
      const z = ids[i - 3] as number
      const cq = get(OFFSET4 + ((z * size + a) * size + b) * size + c)
      if (cq <= 0) uQuad++
      const cctx = get(OFFSET4_CTX + (z * size + a) * size + b)
      if (cctx > 0) p4 = (Math.max(cq, 0) + PRIOR_QUAD * p3) / (cctx + PRIOR_QUAD)
    }
    prod3 *= p3
    prod4 *= p4
    if (prod3 < 1e-200) {
      sum3 += Math.log(prod3)
      prod3 = 1
    }
    if (prod4 < 1e-200) {
      sum4 += Math.log(prod4)
      prod4 = 1
    }
    if (p3 < minP3) minP3 = p3
    if (p4 < minP4) minP4 = p4
    if (p4 < LOW_PROB) low++
  }
  sum3 += Math.log(prod3)
  sum4 += Math.log(prod4)
  finishScores(len - 1, sum3, Math.log(minP3), sum4, Math.log(minP4), uTri, uBi, uQuad, unknown, low)
}

/**
 * Scores an id sequence under the n-gram model, with Dirichlet-smoothed interpolation of
 * 4-, tri-, bi- and unigram estimates. `exclude` (training only) holds the sequence's own counts
 * ({@link ownCounts}), which are subtracted so that training names are scored as if unseen (leave-one-out).
 */
export function ngramScores(ids: ArrayLike<number>, t: NgramTables, exclude?: Map<number, number>): NgramScores {
  if (exclude !== undefined) scoreExcluding(ids, ids.length, t, exclude)
  else scoreFast(Int32Array.from(ids), ids.length, t)
  return {
    meanLogProb: NG[0] as number,
    minLogProb: NG[1] as number,
    meanLogProb4: NG[2] as number,
    minLogProb4: NG[3] as number,
    unseenTri: NG[4] as number,
    unseenBi: NG[5] as number,
    unseenQuad: NG[6] as number,
    unknownChars: NG[7] as number,
    llr: NG[8] as number,
    lowShare: NG[9] as number
  }
}

/** Own counts of an id sequence in the form {@link ngramScores} subtracts (training only). */
export function ownCounts(ids: number[], size: number): Map<number, number> {
  const m = new Map<number, number>()
  countNgrams(ids, size, m)
  for (let i = 2; i < ids.length; i++) add(m, OFFSET3_CTX + (ids[i - 2] as number) * size + (ids[i - 1] as number), 1)
  for (let i = 3; i < ids.length; i++)
    add(m, OFFSET4_CTX + ((ids[i - 3] as number) * size + (ids[i - 2] as number)) * size + (ids[i - 1] as number), 1)
  return m
}

/** Splits `countNgrams` output into tables, keeping the flat map for leave-one-out scoring (training). */
export function tablesFromCounts(alphabet: Map<number, number>, counts: Map<number, number>): NgramTables {
  const size = alphabet.size + 4
  const uni = new Float64Array(size)
  const bi: Array<[number, number]> = []
  const tri: Array<[number, number]> = []
  const quad: Array<[number, number]> = []
  for (const [k, v] of counts) {
    if (k < 0) uni[-1 - k] = v
    else if (k >= OFFSET4) quad.push([k - OFFSET4, v])
    else if (k >= OFFSET3) tri.push([k - OFFSET3, v])
    else bi.push([k, v])
  }
  const byKey = (a: [number, number], b: [number, number]): number => a[0] - b[0]
  const t = finishTables(alphabet, uni, bi.sort(byKey), tri.sort(byKey), quad.sort(byKey))
  const maps = new Map(counts)
  for (const [k, v] of tri) add(maps, OFFSET3_CTX + Math.floor(k / size), v)
  for (const [k, v] of quad) add(maps, OFFSET4_CTX + Math.floor(k / size), v)
  t.maps = maps
  return t
}

/**
 * Builds the integer-keyed tables from (flat key, count) lists: bigram keys `b*size+c`, trigram keys
 * `(a*size+b)*size+c`, 4-gram keys `((z*size+a)*size+b)*size+c`.
 */
export function finishTables(
  alphabet: Map<number, number>,
  uni: Float64Array,
  bi: Iterable<[number, number]>,
  tri: Iterable<[number, number]>,
  quad: Iterable<[number, number]>,
  counts?: { bi: number; tri: number; quad: number }
): NgramTables {
  const size = alphabet.size + 4
  let uniTotal = 0
  for (const v of uni) uniTotal += v
  const biList = counts === undefined ? [...bi] : bi
  const triList = counts === undefined ? [...tri] : tri
  const quadList = counts === undefined ? [...quad] : quad
  const nBi = counts?.bi ?? (biList as unknown[]).length
  const nTri = counts?.tri ?? (triList as unknown[]).length
  const nQuad = counts?.quad ?? (quadList as unknown[]).length
  // Every trigram's prefix is a bigram and every 4-gram's a trigram, so each table holds its own list only.
  const biT = new NgramIndex(nBi)
  const triT = new NgramIndex(nTri)
  const quadT = new NgramIndex(nQuad, false)
  for (const [k, v] of biList) biT.add(k, v)
  for (const [k, v] of triList) {
    const ab = Math.floor(k / size)
    triT.add(biT.add(ab, 0, v) * size + (k - ab * size), v)
  }
  for (const [k, v] of quadList) {
    const zab = Math.floor(k / size)
    const ab = Math.floor(zab / size)
    quadT.add(triT.add(biT.add(ab, 0) * size + (zab - ab * size), 0, v) * size + (k - zab * size), v)
  }
  const idOf = new Int32Array(0x10000)
  for (const [c, id] of alphabet) if (c < 0x10000) idOf[c] = id
  const translit = new Array<Int32Array | undefined>(size)
  for (const [c, latin] of TRANSLIT) {
    const id = c < 0x10000 ? (idOf[c] as number) : 0
    if (id !== 0) translit[id] = Int32Array.from(latin, (ch) => (idOf[ch.codePointAt(0) as number] as number) || 1)
  }
  return { alphabet, idOf, translit, size, uni, uniTotal, bi: biT, tri: triT, quad: quadT }
}

/**
 * Lower-case Greek, Cyrillic, Armenian and Georgian letters in a plain Latin transliteration. Names cross
 * scripts (Ζερβός is Zervos, Аркадий is Arkadiy), so a value in one of these scripts is also scored by the
 * far larger Latin part of the n-gram model; random letters of these scripts stay random in Latin.
 */
const TRANSLIT: ReadonlyMap<number, string> = new Map(
  Object.entries({
    // Greek (monotonic accents included).
    α: 'a',
    β: 'v',
    γ: 'g',
    δ: 'd',
    ε: 'e',
    ζ: 'z',
    η: 'i',
    θ: 'th',
    ι: 'i',
    κ: 'k',
    λ: 'l',
    μ: 'm',
    ν: 'n',
    ξ: 'x',
    ο: 'o',
    π: 'p',
    ρ: 'r',
    σ: 's',
    ς: 's',
    τ: 't',
    υ: 'y',
    φ: 'f',
    χ: 'ch',
    ψ: 'ps',
    ω: 'o',
    ά: 'a',
    έ: 'e',
    ή: 'i',
    ί: 'i',
    ό: 'o',
    ύ: 'y',
    ώ: 'o',
    ϊ: 'i',
    ϋ: 'y',
    ΐ: 'i',
    ΰ: 'y',
    // Cyrillic: Russian, Ukrainian, Belarusian, Serbian, Macedonian, Bulgarian.
    а: 'a',
    б: 'b',
    в: 'v',
    г: 'g',
    д: 'd',
    е: 'e',
    ё: 'e',
    ж: 'zh',
    з: 'z',
    и: 'i',
    й: 'y',
    к: 'k',
    л: 'l',
    м: 'm',
    н: 'n',
    о: 'o',
    п: 'p',
    р: 'r',
    с: 's',
    т: 't',
    у: 'u',
    ф: 'f',
    х: 'kh',
    ц: 'ts',
    ч: 'ch',
    ш: 'sh',
    щ: 'shch',
    ъ: '',
    ы: 'y',
    ь: '',
    э: 'e',
    ю: 'yu',
    я: 'ya',
    і: 'i',
    ї: 'yi',
    є: 'ye',
    ґ: 'g',
    ў: 'u',
    ј: 'j',
    љ: 'lj',
    њ: 'nj',
    ћ: 'c',
    ђ: 'dj',
    џ: 'dz',
    ѓ: 'gj',
    ќ: 'kj',
    ѕ: 'dz',
    // Armenian.
    ա: 'a',
    բ: 'b',
    գ: 'g',
    դ: 'd',
    ե: 'e',
    զ: 'z',
    է: 'e',
    ը: 'e',
    թ: 't',
    ժ: 'zh',
    ի: 'i',
    լ: 'l',
    խ: 'kh',
    ծ: 'ts',
    կ: 'k',
    հ: 'h',
    ձ: 'dz',
    ղ: 'gh',
    ճ: 'ch',
    մ: 'm',
    յ: 'y',
    ն: 'n',
    շ: 'sh',
    ո: 'o',
    չ: 'ch',
    պ: 'p',
    ջ: 'j',
    ռ: 'r',
    ս: 's',
    վ: 'v',
    տ: 't',
    ր: 'r',
    ց: 'ts',
    ւ: 'v',
    փ: 'p',
    ք: 'k',
    օ: 'o',
    ֆ: 'f',
    և: 'ev',
    // Georgian (Mkhedruli).
    ა: 'a',
    ბ: 'b',
    გ: 'g',
    დ: 'd',
    ე: 'e',
    ვ: 'v',
    ზ: 'z',
    თ: 't',
    ი: 'i',
    კ: 'k',
    ლ: 'l',
    მ: 'm',
    ნ: 'n',
    ო: 'o',
    პ: 'p',
    ჟ: 'zh',
    რ: 'r',
    ს: 's',
    ტ: 't',
    უ: 'u',
    ფ: 'p',
    ქ: 'k',
    ღ: 'gh',
    ყ: 'q',
    შ: 'sh',
    ჩ: 'ch',
    ც: 'ts',
    ძ: 'dz',
    წ: 'ts',
    ჭ: 'ch',
    ხ: 'kh',
    ჯ: 'j',
    ჰ: 'h'
  }).map(([ch, latin]) => [ch.codePointAt(0) as number, latin])
)

/** The trigram and 4-gram key bases of {@link countNgrams}, for serialising tables. */
export const TRIGRAM_KEY_OFFSET = OFFSET3
export const QUADGRAM_KEY_OFFSET = OFFSET4

/** Words that mark a placeholder or profanity, compared after {@link lexiconKey}. */
export interface Lexicon {
  placeholder: Set<string>
  profanity: Set<string>
}

/** Lower-cased letters and digits only: `N/A` → `na`, `Your Name` → `yourname`. */
export function lexiconKey(lower: string): string {
  let out = ''
  let run = 0
  let i = 0
  // Runs of kept characters are appended as slices; a string of kept characters only is returned as is.
  for (const ch of lower) {
    const kind = classify(ch.codePointAt(0) as number) & 0xff
    if (kind !== K_LETTER && kind !== K_DIGIT && kind !== K_MARK) {
      if (i > run) out += lower.slice(run, i)
      run = i + ch.length
    }
    i += ch.length
  }
  return run === 0 ? lower : out + lower.slice(run, i)
}

// Longest key of each lexicon: longer strings cannot hit, so long inputs skip hashing and slicing.
const lexiconMax = new WeakMap<Lexicon, number>()

function maxKeyLength(lex: Lexicon): number {
  let m = lexiconMax.get(lex)
  if (m === undefined) {
    m = 0
    for (const k of lex.placeholder) if (k.length > m) m = k.length
    for (const k of lex.profanity) if (k.length > m) m = k.length
    lexiconMax.set(lex, m)
  }
  return m
}

function lexiconHit(lex: Lexicon, k: string, max: number): boolean {
  return k.length > 1 && k.length <= max && (lex.placeholder.has(k) || lex.profanity.has(k))
}

/** `fuuuuck` → `fuck`, `testtt` → `test`: runs of one character cut to one; '' once longer than `max` (no hit possible). */
function squeezeRepeats(k: string, max: number): string {
  let out = ''
  let prev = ''
  for (const ch of k) {
    if (ch !== prev) {
      out += ch
      if (out.length > max) return ''
    }
    prev = ch
  }
  return out
}

const STEM_AFFIXES = ['you', 'off', 'face', 'head', 'er', 's', 'ed', 'ing', 'yourself', 'big', 'mr', 'ur', 'the', 'u', 'my', 'ya']

/** Lexicon hit after removing one common insult affix (`fuckyou`, `bigtest`), for words of >= 3 letters. */
function stemHit(lex: Lexicon, k: string, max: number): boolean {
  for (const a of STEM_AFFIXES) {
    const rest = k.length - a.length
    if (rest >= 3 && rest <= max) {
      if (k.endsWith(a) && lexiconHit(lex, k.slice(0, rest), max)) return true
      if (k.startsWith(a) && lexiconHit(lex, k.slice(a.length), max)) return true
    }
  }
  return false
}

/** Whether any whitespace-separated word of `lower` (as `split(/\s+/)` cuts it) is a lexicon key. */
function anyWordHit(lex: Lexicon, lower: string, max: number): boolean {
  let start = 0
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0x20
    const space = c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0xa0 && (classify(c) & 0xff) === K_SPACE)
    if (space) {
      if (i > start) {
        const k = lexiconKey(lower.slice(start, i))
        if (k.length > 0 && k.length <= max && (lex.placeholder.has(k) || lex.profanity.has(k))) return true
      }
      start = i + 1
    }
  }
  return false
}

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
 * `exclude` is for training only (leave-one-out n-gram scores). Allocation-free for plain names.
 */
export function extractFeatures(p: Prepared, ctx: FeatureContext, out: Float64Array, exclude?: Map<number, number>): Float64Array {
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
        if (ka !== 0 && kb !== 0 && KEY_ADJ[ka * (keyCount + 1) + kb] === 1) {
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

  if (exclude !== undefined) scoreExcluding(IDS, nIds, tables, exclude)
  else scoreFast(IDS, nIds, tables)

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
