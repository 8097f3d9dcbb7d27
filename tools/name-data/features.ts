// The feature context of a set of training names (n-gram tables, script norms, lexicon) and the features of an
// example with leave-one-out n-gram scores, shared by tools/train-names.ts and benchmarks/name-rnn.bench.ts.
import { SCRIPTS, dominantScript, lowerCodePoint, type ScriptName } from '../../lib/names/characters.js'
import { FEATURE_COUNT, extractFeatures, prepare, type FeatureContext } from '../../lib/names/features.js'
import { countNgrams, excludingScorer, ngramScoresExcluding, ownCounts, symbolIds, tablesFromCounts } from './ngram-counts.js'
import type { Example } from './dataset.js'

/** A feature context with what it was built from: the alphabet (code point → symbol id) and the flat n-gram counts. */
export interface TrainedContext {
  ctx: FeatureContext
  alphabet: Map<number, number>
  /** Alphabet code points in symbol-id order (id = index + 4). */
  alphabetChars: number[]
  counts: Map<number, number>
}

const same = (x: number): number => x

/**
 * Builds the context from real names. N-grams are counted once per distinct source name (compounds and combos
 * add nothing new); the per-script norm is the mean leave-one-out 4-gram score of those names. `round` is
 * applied to the norms (the model file stores them rounded, so training must see what inference will).
 */
export function buildFeatureContext(
  names: Example[],
  lexicon: { placeholder: string[]; profanity: string[] },
  round = same
): TrainedContext {
  const letters = new Set<number>()
  for (const e of names) for (const ch of prepare(e.value).text) letters.add(lowerCodePoint(ch.codePointAt(0) as number))
  const probe = new Map<number, number>()
  const alphabetChars = [...letters]
    .sort((a, b) => a - b)
    .filter((c) => {
      // Only characters symbolIds would look up (letters, marks, name punctuation).
      probe.clear()
      probe.set(c, 4)
      return symbolIds(String.fromCodePoint(c), probe)[1] === 4
    })
  const alphabet = new Map<number, number>(alphabetChars.map((c, i) => [c, i + 4]))
  const size = alphabet.size + 4
  // symbolIds lower-cases code point by code point, the way inference does.
  const bases = new Set<string>()
  for (const e of names) for (const part of e.parts ?? [e.value]) bases.add(prepare(part).text)
  const sorted = [...bases].sort()
  const counts = new Map<number, number>()
  for (const b of sorted) countNgrams(symbolIds(b, alphabet), size, counts)
  const tables = tablesFromCounts(alphabet, counts)
  const sum = new Float64Array(SCRIPTS.length)
  const n = new Float64Array(SCRIPTS.length)
  for (const b of sorted) {
    const s = SCRIPTS.indexOf(dominantScript(b) as ScriptName)
    if (s < 0) continue
    const ids = symbolIds(b, alphabet)
    sum[s] = (sum[s] as number) + ngramScoresExcluding(ids, tables, ownCounts(ids, size)).meanLogProb4
    n[s] = (n[s] as number) + 1
  }
  const overall =
    sum.reduce((a, b) => a + b, 0) /
    Math.max(
      1,
      n.reduce((a, b) => a + b, 0)
    )
  const scriptMean = Float64Array.from(sum, (v, s) => round((n[s] as number) >= 20 ? v / (n[s] as number) : overall))
  const lex = { placeholder: new Set(lexicon.placeholder), profanity: new Set(lexicon.profanity) }
  return { ctx: { tables, lexicon: lex, scriptMean }, alphabet, alphabetChars, counts }
}

/**
 * Features of one example. With `loo`, a real name's n-gram scores leave out the counts of the source names it
 * was built from (a compound does not see its own parts), so training names look like unseen ones.
 */
export function exampleFeatures(e: Pick<Example, 'value' | 'label' | 'parts'>, t: TrainedContext, loo: boolean): Float64Array {
  let exclude: Map<number, number> | undefined
  if (loo && e.label === 1) {
    exclude = new Map()
    for (const part of new Set((e.parts ?? [e.value]).map((p) => prepare(p).text))) {
      for (const [k, v] of ownCounts(symbolIds(part, t.alphabet), t.alphabet.size + 4)) exclude.set(k, (exclude.get(k) ?? 0) + v)
    }
  }
  return extractFeatures(
    prepare(e.value),
    t.ctx,
    new Float64Array(FEATURE_COUNT),
    exclude === undefined ? undefined : excludingScorer(exclude)
  )
}

/** Per-feature mean and standard deviation (at least 1e-3) over rows, each passed through `round`. */
export function featureStats(rows: ReadonlyArray<ArrayLike<number>>, round = same): { mean: number[]; std: number[] } {
  const mean = new Array<number>(FEATURE_COUNT).fill(0)
  const std = new Array<number>(FEATURE_COUNT).fill(0)
  for (const x of rows) for (let i = 0; i < FEATURE_COUNT; i++) mean[i] = (mean[i] as number) + (x[i] as number) / rows.length
  for (const x of rows)
    for (let i = 0; i < FEATURE_COUNT; i++) std[i] = (std[i] as number) + ((x[i] as number) - (mean[i] as number)) ** 2 / rows.length
  for (let i = 0; i < FEATURE_COUNT; i++) {
    mean[i] = round(mean[i] as number)
    std[i] = round(Math.max(Math.sqrt(std[i] as number), 1e-3))
  }
  return { mean, std }
}
