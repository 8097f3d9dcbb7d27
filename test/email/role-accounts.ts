// Tests role-account detection.
import t from 'tap'
import { isRoleAccount } from '../../lib/email/role-accounts.js'

t.test('role accounts', async (t) => {
  for (const u of [
    'admin',
    'Info',
    'support',
    'noreply',
    'no-reply',
    'no_reply',
    'No.Reply',
    'postmaster',
    'sales+eu',
    '"webmaster"',
    'mailer-daemon'
  ])
    t.ok(isRoleAccount(u), u)
  for (const u of ['john', 'jane.doe', 'admin.smith', 'information.tech', 'infos', 'sales-rep-joe', '']) t.notOk(isRoleAccount(u), u)
})
