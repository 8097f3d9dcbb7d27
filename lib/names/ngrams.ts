// The character n-gram model of real names: its integer-keyed tables and the inference-time scorer.
import { MAX_CHARS } from './characters.js'
import { TRANSLIT } from './transliteration.js'
import { UserVerificationError } from '../errors.js'

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
      throw new UserVerificationError('ERR_UV_MODEL_LOAD', `name model: n-gram key ${key} or count ${count} out of range`)
    const mask = this.mask
    const slots = this.slots
    const shift = this.shift
    let s = (Math.imul(key, 0x9e3779b1) >>> 11) & mask
    for (;;) {
      const k = slots[s << shift] as number
      if (k === -1) {
        if (this.free-- <= 0) throw new UserVerificationError('ERR_UV_MODEL_LOAD', 'name model: n-gram table is full (inconsistent counts)')
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
  /** Flat counts for leave-one-out scoring; set by training's tablesFromCounts (tools/name-data/ngram-counts.ts) only. */
  maps?: Map<number, number>
}

/** Dirichlet priors of the interpolated estimates (unigram, then each order's weight on the lower one). */
export const PRIOR_UNI = 0.5
export const PRIOR_BI = 4
export const PRIOR_TRI = 4
export const PRIOR_QUAD = 4
/** A transition less likely than this counts as surprising. */
export const LOW_PROB = Math.exp(-4)
/** Log of a uniform 30-letter alphabet, the "random letters" side of the likelihood ratio. */
export const LOG_UNIFORM = Math.log(30)

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

/**
 * Scratch result of the scorers: mean3, min3, mean4, min4, unseenTri, unseenBi, unseenQuad, unknown, llr, lowShare,
 * transitions. Written by {@link finishScores}; read by the features right after a scorer ran.
 */
export const NG = new Float64Array(11)
// Probe results of scoreFast per position (longer id lists, from ngramScores only, get their own arrays).
const SLOT_CAP = MAX_CHARS * 4 + 4
const SLOT_BI = new Int32Array(SLOT_CAP)
const SLOT_TRI = new Int32Array(SLOT_CAP)
const SLOT_QUAD = new Int32Array(SLOT_CAP)

/** Writes one scored string's totals into {@link NG} (shared by the fast scorer and training's leave-one-out one). */
export function finishScores(
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
export function scoreFast(ids: Int32Array, len: number, t: NgramTables): void {
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

/** A scorer of an id sequence: fills {@link NG} (the fast one, or training's leave-one-out one). */
export type NgramScorer = (ids: Int32Array, len: number, t: NgramTables) => void

/**
 * Scores an id sequence under the n-gram model, with Dirichlet-smoothed interpolation of
 * 4-, tri-, bi- and unigram estimates; `scorer` defaults to the inference one.
 */
export function ngramScores(ids: ArrayLike<number>, t: NgramTables, scorer: NgramScorer = scoreFast): NgramScores {
  scorer(Int32Array.from(ids), ids.length, t)
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
