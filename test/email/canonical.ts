// canonicalEmail (attacker finding F4): the key under which stores keep one account per mailbox.
import t from 'tap'
import { canonicalEmail } from '../../lib/index.js'

t.test('spellings of one mailbox have one canonical form', async (t) => {
  const groups = [
    [
      'sig.dup@gmail.com',
      'SIG.DUP@GMAIL.COM',
      '"sig.dup"@gmail.com',
      '"sig\\.dup"@gmail.com',
      '"\\s\\i\\g.dup"@Gmail.com',
      ' sig.dup@gmail.com'
    ],
    ['sig@bücher.com', 'sig@xn--bcher-kva.com', 'sig@bu\u0308cher.com', 'sig@BÜCHER.com', 'SIG@XN--BCHER-KVA.COM'],
    ['josé@example.org', 'jose\u0301@example.org', 'JOSÉ@example.org']
  ]
  for (const group of groups) {
    const forms = new Set(group.map(canonicalEmail))
    t.equal(forms.size, 1, `${group[0]}: ${[...forms].join(' | ')}`)
  }
  t.equal(canonicalEmail('"Sig.Dup"@Gmail.com'), 'sig.dup@gmail.com')
  t.equal(canonicalEmail('sig@bücher.com'), 'sig@xn--bcher-kva.com')
})

t.test('different mailboxes keep different forms; provider aliases are not folded', async (t) => {
  const distinct = [
    'sig.dup@gmail.com',
    'sigdup@gmail.com',
    'sig.dup+news@gmail.com',
    '"sig dup"@gmail.com',
    '"sig..dup"@gmail.com',
    '".sig"@gmail.com',
    '"sig\\"dup"@gmail.com',
    'sig.dup@googlemail.com'
  ]
  t.equal(new Set(distinct.map(canonicalEmail)).size, distinct.length, distinct.map(canonicalEmail).join(' | '))
  t.equal(canonicalEmail('"sig dup"@Gmail.com'), '"sig dup"@gmail.com', 'a quoted part that is no dot-atom stays quoted')
  t.equal(canonicalEmail('not-an-email'), 'not-an-email', 'no @: lower-cased only')
})
