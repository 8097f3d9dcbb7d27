// The admin view's API, behind the operator's admin token: every account with its usage, accounts and keys to create, change and revoke.
import express from 'express'
import {
  addKey,
  checkEmailSyntax,
  createAccount,
  periodOf,
  type Account,
  type Stores,
  type UserVerificationMiddleware
} from '../lib/index.js'
import { accountUsage, keyView, revokeKey } from './dashboard-account.js'
import { requireAdmin } from './dashboard-auth.js'
import {
  bodyOf,
  bounded,
  isDuplicateAccount,
  monthToDate,
  readJson,
  sendDetail,
  sendJson,
  storesOf,
  text,
  unavailable,
  type AuditLog
} from './dashboard-http.js'

/** The routes under `/dashboard/api/admin`, each behind the admin token. */
export function adminRoutes(
  middleware: UserVerificationMiddleware,
  settings: { token: string; plans: Readonly<Record<string, number>>; now: () => number; audit: AuditLog }
): express.Router {
  const { plans, now, audit } = settings
  const router = express.Router({ strict: true })
  router.use(requireAdmin(settings.token))

  async function stores(res: express.Response): Promise<Stores | undefined> {
    const open = await storesOf(middleware)
    if (!open) unavailable(res)
    return open
  }

  async function findAccount(res: express.Response, open: Stores, id: string): Promise<Account | undefined> {
    const account = await bounded(open.keys.getAccount(id))
    if (account === undefined) sendDetail(res, 404, 'Not Found')
    return account
  }

  router.get('/accounts', async (req, res) => {
    const open = await stores(res)
    if (!open) return
    const period = periodOf(now())
    const query = typeof req.query.q === 'string' ? req.query.q.trim().toLowerCase() : ''
    const accounts = await bounded(open.keys.listAccounts())
    const used = await Promise.all(accounts.map((account) => bounded(open.quota.get(account.id, period.id))))
    const rows = accounts.map((account, index) => ({
      id: account.id,
      name: account.name,
      email: account.email,
      plan: account.plan,
      limit: plans[account.plan] ?? 0,
      used: used[index] ?? 0,
      createdAt: account.createdAt,
      disabledAt: account.disabledAt
    }))
    const matches =
      query === ''
        ? rows
        : rows.filter((row) => [row.id, row.name, row.email ?? '', row.plan].some((field) => field.toLowerCase().includes(query)))
    sendJson(res, 200, {
      period: period.id,
      // The total covers every account, whatever the search shows.
      total: rows.reduce((sum, row) => sum + row.used, 0),
      accounts: matches
    })
  })

  router.get('/daily', async (_req, res) => {
    const open = await stores(res)
    if (!open) return
    const days = monthToDate(now())
    const accounts = await bounded(open.keys.listAccounts())
    const series = await Promise.all(accounts.map((account) => bounded(open.quota.daily(account.id, days.from, days.to))))
    const totals = new Map<string, number>()
    for (const entry of series.flat()) totals.set(entry.day, (totals.get(entry.day) ?? 0) + entry.units)
    const daily = [...totals].sort(([a], [b]) => (a < b ? -1 : 1)).map(([day, units]) => ({ day, units }))
    sendJson(res, 200, { today: days.to, daily })
  })

  router.post('/accounts', readJson, async (req, res) => {
    const open = await stores(res)
    if (!open) return
    const body = bodyOf(req)
    const name = text(body, 'name', 120)
    const email = text(body, 'email', 254)
    const plan = text(body, 'plan', 40) ?? 'free'
    if (name === undefined) return sendDetail(res, 400, 'name is required')
    if (!(plan in plans)) return sendDetail(res, 400, `plan must be one of ${Object.keys(plans).join(', ')}`)
    // The library's syntax check, as sign-up applies it (attacker finding F4: a loose shape let in a
    // trailing dot, a zero-width space or a soft hyphen, i.e. second accounts for one mailbox).
    if (email !== undefined && checkEmailSyntax(email) !== 'Pass')
      return sendJson(res, 422, { detail: 'This email address is not valid.', field: 'email' })
    if (email !== undefined && (await bounded(open.keys.getAccountByEmail(email))) !== undefined) {
      return sendDetail(res, 409, 'An account with this email address exists already')
    }
    const time = now()
    let account: Account
    try {
      account = await bounded(createAccount(open.keys, { name, email: email ?? null, plan }, time))
    } catch (error) {
      // Two creates for one address at once: the store's unique email decides, the loser gets 409.
      if (isDuplicateAccount(error)) return sendDetail(res, 409, 'An account with this email address exists already')
      throw error
    }
    const issued = await bounded(addKey(open.keys, account.id, text(body, 'label', 60) ?? null, time))
    audit({ actor: 'admin', action: 'account.create', account: account.id, key: issued.id, plan })
    sendJson(res, 201, { account, key: { id: issued.id, key: issued.key, label: issued.label } })
  })

  router.get('/accounts/:id', async (req, res) => {
    const open = await stores(res)
    if (!open) return
    const account = await findAccount(res, open, String(req.params.id))
    if (!account) return
    const time = now()
    const [history, keys] = await Promise.all([
      accountUsage(open.quota, account, plans, time),
      bounded(open.keys.listByAccount(account.id))
    ])
    sendJson(res, 200, { account, ...history, keys: keys.map((key) => keyView(key, account, time)) })
  })

  router.patch('/accounts/:id', readJson, async (req, res) => {
    const open = await stores(res)
    if (!open) return
    const account = await findAccount(res, open, String(req.params.id))
    if (!account) return
    const body = bodyOf(req)
    const plan = body.plan
    const disabled = body.disabled
    if (plan !== undefined && (typeof plan !== 'string' || !(plan in plans))) {
      return sendDetail(res, 400, `plan must be one of ${Object.keys(plans).join(', ')}`)
    }
    if (disabled !== undefined && typeof disabled !== 'boolean') return sendDetail(res, 400, 'disabled must be true or false')
    if (plan === undefined && disabled === undefined) return sendDetail(res, 400, 'nothing to change: send plan and/or disabled')
    const patch: { plan?: string; disabledAt?: string | null } = {}
    if (plan !== undefined && plan !== account.plan) patch.plan = plan
    if (disabled === true && account.disabledAt === null) patch.disabledAt = new Date(now()).toISOString()
    if (disabled === false && account.disabledAt !== null) patch.disabledAt = null
    const updated = Object.keys(patch).length === 0 ? account : await bounded(open.keys.updateAccount(account.id, patch))
    if (patch.plan !== undefined) audit({ actor: 'admin', action: 'account.plan', account: account.id, plan: patch.plan })
    if (patch.disabledAt !== undefined)
      audit({ actor: 'admin', action: patch.disabledAt === null ? 'account.enable' : 'account.disable', account: account.id })
    sendJson(res, 200, updated ?? account)
  })

  router.post('/keys/:id/revoke', async (req, res) => {
    const open = await stores(res)
    if (!open) return
    const key = await bounded(open.keys.getById(String(req.params.id)))
    if (key === undefined) return sendDetail(res, 404, 'Not Found')
    const account = await bounded(open.keys.getAccount(key.accountId))
    const { before, updated, time } = await revokeKey(open, key.id, now)
    if (before?.revokedAt === null) audit({ actor: 'admin', action: 'key.revoke', account: key.accountId, key: key.id })
    sendJson(res, 200, account ? keyView(updated ?? key, account, time) : { id: key.id, revokedAt: (updated ?? key).revokedAt })
  })

  return router
}
