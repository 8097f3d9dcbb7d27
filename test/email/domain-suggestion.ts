// Measures the "did you mean" suggestion on committed typo and non-typo domains.
import t from 'tap'
import { readFileSync } from 'node:fs'
import { suggestDomain } from '../../lib/email/domain-suggestion.js'

const pairs = JSON.parse(readFileSync(new URL('../fixtures/email-typo-pairs.json', import.meta.url), 'utf8')) as {
  typos: Array<[string, string]>
  correct: string[]
}
const free = readFileSync(new URL('../../lib/data/free-domains.txt', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l !== '' && !l.startsWith('#'))

t.test('precision 1.0 on the committed pairs, recall reported', async (t) => {
  let truePositive = 0
  let wrong = 0
  for (const [typo, expected] of pairs.typos) {
    const s = suggestDomain(typo)
    if (s === expected) truePositive++
    else if (s !== null) wrong++
  }
  const falseOnCorrect = pairs.correct.filter((d) => suggestDomain(d) !== null)
  t.same(falseOnCorrect, [], 'no suggestion for a correct domain')
  t.equal(wrong, 0, 'no wrong suggestion for a typo')
  t.ok(truePositive / pairs.typos.length >= 0.95, `recall ${truePositive}/${pairs.typos.length}`)
})

t.test('never suggests for a free provider', async (t) => {
  t.same(
    free.filter((d) => suggestDomain(d) !== null),
    []
  )
})

t.test('the issue examples', async (t) => {
  for (const [typo, fix] of [
    ['gmial.com', 'gmail.com'],
    ['hotnail.com', 'hotmail.com'],
    ['yaho.com', 'yahoo.com'],
    ['outlok.com', 'outlook.com'],
    ['gmail.con', 'gmail.com']
  ]) {
    t.equal(suggestDomain(typo!), fix)
  }
  t.equal(suggestDomain(''), null)
  t.equal(suggestDomain('company.con'), null, 'only popular domains are suggested')
})
