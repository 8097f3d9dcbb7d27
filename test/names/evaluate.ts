// Tests the training metrics: accuracy and per-group rates at a threshold, the reliability table, the equal-prior threshold.
import t from 'tap'
import { accuracy, equalPriorThreshold, perGroup, reliability, rocAuc, worstGroup, type Scored } from '../../tools/name-data/evaluate.js'

/** `n` examples of one group and label with probabilities spread evenly over [lo, hi]. */
function spread(group: string, label: 0 | 1, n: number, lo: number, hi: number): Scored[] {
  return Array.from({ length: n }, (_, i) => ({ group, label, p: lo + (hi - lo) * (n === 1 ? 0.5 : i / (n - 1)) }))
}

t.test('accuracy and per-group rates follow the threshold', async (t) => {
  const xs = [...spread('name:A', 1, 101, 0.4, 1), ...spread('junk:b', 0, 101, 0, 0.8)]
  t.ok(Math.abs(accuracy(xs, 0.5) - (84 + 63) / 202) < 1e-9, 'names >= 0.5: 84 of 101; junk < 0.5: 63 of 101')
  const at = (th: number): Record<string, number> => Object.fromEntries(perGroup(xs, th).map((g) => [g.group, g.rate]))
  t.ok((at(0.8)['name:A'] as number) < (at(0.5)['name:A'] as number), 'a higher threshold accepts fewer names')
  t.ok((at(0.8)['junk:b'] as number) > (at(0.5)['junk:b'] as number), 'and rejects more junk')
  t.equal(rocAuc(xs), rocAuc(xs.map((x) => ({ ...x, p: x.p / 2 }))), 'ROC AUC does not depend on the scale')
})

t.test('the equal-prior threshold is the share of real names the calibration was fitted on', async (t) => {
  t.equal(equalPriorThreshold([1, 1, 1, 0]), 0.75)
  t.equal(equalPriorThreshold([1, 0]), 0.5)
  t.equal(equalPriorThreshold([...Array<0 | 1>(2).fill(1), 0]), 0.67)
  t.throws(() => equalPriorThreshold([]), /no labels/)
  // Why: with mix share pi, P = pi is where the odds of a name equal pi / (1 - pi), the mix's own odds, so
  // under equal priors the value is as likely a name as junk.
  const pi = 0.75
  const odds = (p: number): number => p / (1 - p)
  t.ok(Math.abs(odds(pi) / odds(pi) - 1) < 1e-12 && odds(0.8) / odds(pi) > 1 && odds(0.7) / odds(pi) < 1)
})

t.test('the worst group skips small and diagnostic groups', async (t) => {
  const xs = [
    ...spread('name:A', 1, 201, 0.4, 1),
    ...spread('junk:b', 0, 201, 0, 0.8),
    ...spread('name:Tiny', 1, 10, 0.3, 0.35),
    ...spread('junk:diag', 0, 300, 0.45, 1)
  ]
  const w = worstGroup(xs, 0.5, { minN: 50, skip: (g) => g === 'junk:diag' })
  t.equal(w.group, 'junk:b')
  t.ok(Math.abs(w.rate - 125 / 201) < 1e-9, `rate ${w.rate}`)
  t.equal(worstGroup(xs, 0.5, { minN: 1, skip: () => false }).group, 'name:Tiny')
  t.equal(worstGroup(xs, 0.5, { minN: 50, skip: () => false }).group, 'junk:diag')
})

t.test('reliability reports the confidence the verifier gives, 0.5 at least, at the threshold', async (t) => {
  const xs = [...spread('name:A', 1, 50, 0.6, 0.7), ...spread('junk:b', 0, 50, 0, 0.1)]
  const at05 = reliability(xs, 2, 0.5)
  t.equal(at05[1]?.accuracy, 1)
  // At 0.8 the names are rejected: confidence max(0.5, 1 - p) = 0.5 and none of them is right.
  const at08 = reliability(xs, 2, 0.8)
  t.equal(at08[0]?.meanConfidence, 0.5)
  t.equal(at08[0]?.accuracy, 0)
  t.equal(at08[0]?.gap, 0.5)
})
