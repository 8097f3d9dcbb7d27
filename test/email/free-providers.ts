// Tests free-provider detection.
import t from 'tap'
import { isFreeProvider } from '../../lib/email/free-providers.js'

t.test('free providers', async (t) => {
  for (const d of ['gmail.com', 'GMAIL.COM', 'outlook.com', 'yahoo.co.jp', 'proton.me', 'web.de', 'qq.com', 'naver.com', 'mail.ru'])
    t.ok(isFreeProvider(d), d)
  for (const d of ['google.com', 'company.com', 'harvard.edu', 'mailinator.com', 'sub.gmail.com', '']) t.notOk(isFreeProvider(d), d)
})
