// Tests the training metrics: accuracy and per-group rates at a threshold, the reliability table, the worst-group threshold.
import t from 'tap'
import { accuracy, perGroup, reliability, rocAuc, worstGroupThreshold, type Scored } from '../tools/name-data/evaluate.js'

/** `n` examples of one group and label with probabilities spread evenly over [lo, hi]. */
function spread (group: string, label: 0 | 1, n: number, lo: number, hi: number): Scored[] {
  return Array.from({ length: n }, (_, i) => ({ group, label, p: lo + (hi - lo) * (n === 1 ? 0.5 : i / (n - 1)) }))
}

t.test('accuracy and per-group rates follow the threshold', async (t) => {
  const xs = [...spread('name:A', 1, 101, 0.4, 1), ...spread('junk:b', 0, 101, 0, 0.8)]
  t.ok(Math.abs(accuracy(xs, 0.5) - (84 + 63) / 202) < 1e-9, 'names >= 0.5: 84 of 101; junk < 0.5: 63 of 101')
  const at = (th: number): Record<string, number> => Object.fromEntries(perGroup(xs, th).map((g) => [g.group, g.rate]))
  t.ok(at(0.8)['name:A'] as number < (at(0.5)['name:A'] as number), 'a higher threshold accepts fewer names')
  t.ok(at(0.8)['junk:b'] as number > (at(0.5)['junk:b'] as number), 'and rejects more junk')
  t.equal(rocAuc(xs), rocAuc(xs.map((x) => ({ ...x, p: x.p / 2 }))), 'ROC AUC does not depend on the scale')
})

t.test('the worst-group threshold balances the weakest groups, skips small and diagnostic groups', async (t) => {
  // Names spread over [0.4, 1], junk over [0, 0.8]: (1 - t) / 0.6 = t / 0.8 where t = 4/7, both rates 5/7.
  const xs = [
    ...spread('name:A', 1, 201, 0.4, 1), ...spread('junk:b', 0, 201, 0, 0.8),
    // Too small to count, and a diagnostic group that would pull the threshold up.
    ...spread('name:Tiny', 1, 10, 0.3, 0.35), ...spread('junk:diag', 0, 300, 0.5, 1),
  ]
  const op = worstGroupThreshold(xs, { minN: 50, skip: (g) => g === 'junk:diag' })
  t.equal(op.threshold, 0.57)
  t.ok(Math.abs(op.worst - 5 / 7) < 0.01, `worst rate ${op.worst}`)
  const all = worstGroupThreshold(xs, { minN: 1, skip: () => false })
  t.not(all.threshold, 0.57, 'counting the small and diagnostic groups moves it')
  // Equal worst rates over a range: the threshold nearest 0.5 wins.
  const flat = [...spread('name:A', 1, 100, 0.99, 1), ...spread('junk:b', 0, 100, 0, 0.01)]
  t.equal(worstGroupThreshold(flat, { minN: 50, skip: () => false }).threshold, 0.5)
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
