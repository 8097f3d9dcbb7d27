// Training-only n-gram code: flat counts, leave-one-out scoring (a name's own counts subtracted), tables from counts.
import { K_DIGIT, K_LETTER, K_MARK, K_NAMEPUNCT, K_SPACE, classify, lowerCodePoint } from '../../lib/names/characters.js'
import {
  LOW_PROB,
  PRIOR_BI,
  PRIOR_QUAD,
  PRIOR_TRI,
  PRIOR_UNI,
  finishScores,
  finishTables,
  ngramScores,
  type NgramScorer,
  type NgramScores,
  type NgramTables
} from '../../lib/names/ngrams.js'

// Key ranges of countNgrams' flat map: unigrams negative, bigrams below 2^40, trigrams at 2^40, trigram
// contexts at 2^41, 4-grams at 2^50, 4-gram contexts at 2^51 (all exact in a double while size^4 < 2^50).
export const OFFSET3 = 2 ** 40
const OFFSET3_CTX = 2 ** 41
export const OFFSET4 = 2 ** 50
const OFFSET4_CTX = 2 ** 51

/** Symbol id of one lower-cased code point of a given kind (see NgramTables.alphabet). */
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
    ids.push(symbolOf(lowerCodePoint(c), kind, t))
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

/** Leave-one-out scorer (training): flat count maps with the string's own counts subtracted. Fills the features' NG scratch. */
export function scoreExcluding(ids: ArrayLike<number>, len: number, t: NgramTables, exclude: Map<number, number>): void {
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

/** The leave-one-out scorer for one excluded set of counts, in the form extractFeatures takes. */
export function excludingScorer(exclude: Map<number, number>): NgramScorer {
  return (ids, len, t) => scoreExcluding(ids, len, t, exclude)
}

/** {@link ngramScores} with a string's own counts ({@link ownCounts}) subtracted, so a training name scores as unseen. */
export function ngramScoresExcluding(ids: ArrayLike<number>, t: NgramTables, exclude: Map<number, number>): NgramScores {
  return ngramScores(ids, t, excludingScorer(exclude))
}
