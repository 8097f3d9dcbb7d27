// Metrics for the name model: accuracy, ROC AUC, per-group rates and the reliability table.

/** One scored example. */
export interface Scored {
  label: 0 | 1
  /** Calibrated P(real name). */
  p: number
  group: string
}

/** Share of correct decisions: real name where p >= threshold. */
export function accuracy(xs: Scored[], threshold = 0.5): number {
  let ok = 0
  for (const x of xs) if ((x.p >= threshold ? 1 : 0) === x.label) ok++
  return xs.length === 0 ? NaN : ok / xs.length
}

/** ROC AUC by the rank-sum (Mann–Whitney) formula, ties averaged. */
export function rocAuc(xs: Scored[]): number {
  const s = [...xs].sort((a, b) => a.p - b.p)
  let pos = 0
  let rankSum = 0
  let i = 0
  while (i < s.length) {
    let j = i
    while (j + 1 < s.length && (s[j + 1] as Scored).p === (s[i] as Scored).p) j++
    const rank = (i + j) / 2 + 1
    for (let k = i; k <= j; k++)
      if ((s[k] as Scored).label === 1) {
        pos++
        rankSum += rank
      }
    i = j + 1
  }
  const neg = s.length - pos
  return (rankSum - (pos * (pos + 1)) / 2) / (pos * neg)
}

/** Correct-decision rate per group (`label:group`), with counts. */
export function perGroup(xs: Scored[], threshold = 0.5): Array<{ group: string; n: number; rate: number }> {
  const m = new Map<string, { n: number; ok: number }>()
  for (const x of xs) {
    const e = m.get(x.group) ?? { n: 0, ok: 0 }
    e.n++
    if ((x.p >= threshold ? 1 : 0) === x.label) e.ok++
    m.set(x.group, e)
  }
  return [...m.entries()].sort((a, b) => a[0].localeCompare(b[0])).map(([group, e]) => ({ group, n: e.n, rate: e.ok / e.n }))
}

/** One row of the reliability table. */
export interface ReliabilityRow {
  bin: number
  n: number
  meanConfidence: number
  accuracy: number
  gap: number
}

/**
 * Reliability by confidence decile: examples sorted by the confidence the verifier reports for its
 * label (p or 1-p, never below 0.5, as lib/names/verifier.ts does) and cut into ten equal-count bins.
 */
export function reliability(xs: Scored[], bins = 10, threshold = 0.5): ReliabilityRow[] {
  const s = xs
    .map((x) => {
      const real = x.p >= threshold
      return { conf: Math.max(0.5, real ? x.p : 1 - x.p), ok: (real ? 1 : 0) === x.label ? 1 : 0 }
    })
    .sort((a, b) => a.conf - b.conf)
  const rows: ReliabilityRow[] = []
  for (let b = 0; b < bins; b++) {
    const part = s.slice(Math.floor((b * s.length) / bins), Math.floor(((b + 1) * s.length) / bins))
    const mc = part.reduce((a, x) => a + x.conf, 0) / part.length
    const acc = part.reduce((a, x) => a + x.ok, 0) / part.length
    rows.push({ bin: b + 1, n: part.length, meanConfidence: mc, accuracy: acc, gap: Math.abs(mc - acc) })
  }
  return rows
}

/**
 * The decision threshold for equal priors: Platt scaling makes P(real name) right for the mix of the split it
 * was fitted on (share `pi` of real names); deciding "real" where P >= pi is deciding where a name and junk
 * are equally likely before the value is seen, so the decision does not depend on how much junk the dataset
 * happens to hold. Rounded to two decimals.
 */
export function equalPriorThreshold(labels: ReadonlyArray<0 | 1>): number {
  if (labels.length === 0) throw new Error('equalPriorThreshold: no labels')
  let real = 0
  for (const l of labels) real += l
  return Math.round((100 * real) / labels.length) / 100
}

/** The group with the lowest correct-decision rate at `threshold` among groups with >= `minN` examples, `skip` left out. */
export function worstGroup(
  xs: Scored[],
  threshold: number,
  opts: { minN: number; skip: (group: string) => boolean }
): { group: string; rate: number } {
  let worst = { group: '', rate: Infinity }
  for (const g of perGroup(xs, threshold)) {
    if (g.n >= opts.minN && !opts.skip(g.group) && g.rate < worst.rate) worst = { group: g.group, rate: g.rate }
  }
  return worst
}

/** Fits Platt scaling P = sigmoid(a*z + b) to logits z by Newton's method on the log loss. */
export function fitPlatt(z: number[], y: number[]): { a: number; b: number } {
  let a = 1
  let b = 0
  for (let it = 0; it < 50; it++) {
    let ga = 0,
      gb = 0,
      haa = 0,
      hab = 0,
      hbb = 0
    for (let i = 0; i < z.length; i++) {
      const zi = z[i] as number
      const p = 1 / (1 + Math.exp(-(a * zi + b)))
      const d = p - (y[i] as number)
      const w = Math.max(p * (1 - p), 1e-12)
      ga += d * zi
      gb += d
      haa += w * zi * zi
      hab += w * zi
      hbb += w
    }
    haa += 1e-6
    hbb += 1e-6
    const det = haa * hbb - hab * hab
    const da = (hbb * ga - hab * gb) / det
    const db = (haa * gb - hab * ga) / det
    a -= da
    b -= db
    if (Math.abs(da) + Math.abs(db) < 1e-9) break
  }
  return { a, b }
}

/** Percent with two decimals. */
export function pct(x: number): string {
  return Number.isNaN(x) ? 'n/a' : `${(100 * x).toFixed(2)}%`
}

/** One verifier answer for {@link weightedReliability}: the confidence it reported, whether it was right, a weight. */
export interface WeightedAnswer {
  confidence: number
  correct: boolean
  weight: number
}

/**
 * Reliability of reported confidences in equal-count deciles, each answer weighted: with junk weighted by
 * (names / junk), the accuracy is the one expected when a name and junk are equally likely, the prior the
 * verifier's probability is calibrated for.
 */
export function weightedReliability(xs: WeightedAnswer[], bins = 10): ReliabilityRow[] {
  const s = [...xs].sort((a, b) => a.confidence - b.confidence)
  const rows: ReliabilityRow[] = []
  for (let b = 0; b < bins; b++) {
    const part = s.slice(Math.floor((b * s.length) / bins), Math.floor(((b + 1) * s.length) / bins))
    const w = part.reduce((a, x) => a + x.weight, 0)
    const mc = part.reduce((a, x) => a + x.weight * x.confidence, 0) / w
    const acc = part.reduce((a, x) => a + (x.correct ? x.weight : 0), 0) / w
    rows.push({ bin: b + 1, n: part.length, meanConfidence: mc, accuracy: acc, gap: Math.abs(mc - acc) })
  }
  return rows
}
