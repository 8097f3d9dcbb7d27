// The account view's API: signed in with any active key of the account, it reads the plan, usage and keys and creates, rotates and revokes keys.
import express from 'express'
import { addKey, isKeyActive, periodOf, rotateKey, type Account, type KeyRecord, type QuotaStore, type Stores } from '../lib/index.js'
import { readKey, requireKey, signedIn } from './dashboard-auth.js'
import {
  bodyOf,
  bounded,
  keyTurns,
  lastMonths,
  monthToDate,
  readJson,
  sendDetail,
  sendJson,
  storesOf,
  text,
  unavailable,
  type AuditLog
} from './dashboard-http.js'
import type { UserVerificationMiddleware } from '../lib/index.js'

/** A key as the dashboard shows it: never its digest. */
export interface KeyView {
  id: string
  label: string | null
  createdAt: string
  revokedAt: string | null
  /** End of a rotation's grace period. */
  expiresAt: string | null
  active: boolean
}

export function keyView(key: KeyRecord, account: Account, now: number): KeyView {
  return {
    id: key.id,
    label: key.label,
    createdAt: key.createdAt,
    revokedAt: key.revokedAt,
    expiresAt: key.expiresAt,
    active: isKeyActive(key, account, now)
  }
}

/** An account's plan, this month's usage, this month's days and the last 13 months: what both views chart. */
export async function accountUsage(quota: QuotaStore, account: Account, plans: Readonly<Record<string, number>>, now: number) {
  const period = periodOf(now)
  const days = monthToDate(now)
  const months = lastMonths(now)
  const [used, daily, monthly] = await Promise.all([
    bounded(quota.get(account.id, period.id)),
    bounded(quota.daily(account.id, days.from, days.to)),
    bounded(quota.monthly(account.id, months.from, months.to))
  ])
  const limit = plans[account.plan] ?? 0
  return {
    usage: {
      period: period.id,
      /** Today (UTC) by the server's clock, the chart's last day. */
      today: new Date(now).toISOString().slice(0, 10),
      used,
      limit,
      remaining: Math.max(0, limit - used),
      reset: new Date(period.end).toISOString()
    },
    daily,
    months: monthly
  }
}

/**
 * Revokes key `id` in its turn ({@link keyTurns}), merged in the store: whatever ran before it
 * for this key, the revocation stays (attacker finding F1). `before` is the key as it was just
 * before (its `revokedAt` is `null` when this call revoked it), `updated` as written.
 */
export async function revokeKey(open: Stores, id: string, now: () => number) {
  return keyTurns.run(id, async () => {
    const before = await bounded(open.keys.getById(id))
    const time = now()
    const updated =
      before === undefined || before.revokedAt !== null
        ? before
        : await bounded(open.keys.updateKey(id, { revokedAt: new Date(time).toISOString() }))
    return { before, updated, time }
  })
}

/** Longest grace period a rotation may give the old key: 30 days, in seconds. */
export const maxGraceSeconds = 30 * 86_400

/** The routes under `/dashboard/api` that a key signs in to. */
export function accountRoutes(
  middleware: UserVerificationMiddleware,
  settings: { plans: Readonly<Record<string, number>>; now: () => number; audit: AuditLog }
): express.Router {
  const { plans, now, audit } = settings
  const router = express.Router({ strict: true })
  const signIn = requireKey(middleware, now)
  const retiring = 'This key is being retired after a rotation: sign in with the new key to manage keys'
  const inactiveTarget = 'This key is revoked or expired; create a new key instead'

  /**
   * Managing keys needs a key that is not being retired: a rotation's old key keeps verifying for
   * its grace period, but if it leaked (the usual reason to rotate) it must not mint a permanent
   * key, rotate or revoke the new one (attacker finding F8). It may still read the account.
   */
  function managing(_req: express.Request, res: express.Response, next: express.NextFunction): void {
    if (signedIn(res).key.expiresAt !== null) return sendDetail(res, 403, retiring)
    next()
  }

  /**
   * The signing-in key as the store holds it now, checked before and again after this request
   * writes a key (attacker finding F3): the sign-in check ran earlier, so a revocation (or a
   * disabled account, or a rotation into grace) committed since would otherwise leave a key
   * minted by a key no longer allowed to mint. In this process, {@link keyTurns} makes the check,
   * the write and the re-check one step; the re-check after the write covers other processes and
   * instances: whichever revocation committed before this read is seen. `ownGrace` is the grace
   * end this request gave the signing-in key itself (a rotation of itself), which does not count
   * as retiring it. Returns the refusal to answer (401: no longer active; 403: being retired), or
   * `undefined`.
   */
  async function refusal(res: express.Response, open: Stores, ownGrace: string | null = null, undo?: () => Promise<void>) {
    const { key } = signedIn(res)
    let read: Awaited<ReturnType<typeof readKey>>
    try {
      read = await readKey(open, key.hash)
    } catch (error) {
      // The check could not be made (503): what this request wrote, never shown, is taken back rather than left active.
      await undo?.().catch(() => {})
      throw error
    }
    const { record, account } = read
    // Its own end does not count: with grace 0, a self-rotation has just expired the key itself (attacker finding F3).
    const own = ownGrace !== null && record?.expiresAt === ownGrace
    if (!isKeyActive(own ? { ...record!, expiresAt: null } : record, account, now())) return { status: 401, detail: 'Invalid API token' }
    if (record!.expiresAt !== null && record!.expiresAt !== ownGrace) return { status: 403, detail: retiring }
    return undefined
  }

  /** Revokes a key this request wrote but may not hand out. */
  async function withdraw(open: Stores, id: string): Promise<void> {
    await bounded(open.keys.updateKey(id, { revokedAt: new Date(now()).toISOString() }))
  }

  /** The stores (already opened by the sign-in), or a 503 answered. */
  async function stores(res: express.Response): Promise<Stores | undefined> {
    const open = await storesOf(middleware)
    if (!open) unavailable(res)
    return open
  }

  router.get('/account', signIn, async (_req, res) => {
    const { key, account } = signedIn(res)
    const open = await stores(res)
    if (!open) return
    const time = now()
    const [history, keys] = await Promise.all([
      accountUsage(open.quota, account, plans, time),
      bounded(open.keys.listByAccount(account.id))
    ])
    sendJson(res, 200, {
      key: key.id,
      account: { id: account.id, name: account.name, plan: account.plan, createdAt: account.createdAt },
      ...history,
      keys: keys.map((record) => keyView(record, account, time))
    })
  })

  router.post('/keys', signIn, managing, readJson, async (req, res) => {
    const { key, account } = signedIn(res)
    const open = await stores(res)
    if (!open) return
    const label = bodyOf(req).label
    // F8: a label that is not a string was dropped silently and the key made anyway.
    if (label !== undefined && label !== null && typeof label !== 'string') return sendDetail(res, 400, 'label must be a string')
    const issued = await keyTurns.run(key.id, async () => {
      const before = await refusal(res, open)
      if (before) return before
      const issued = await bounded(addKey(open.keys, account.id, text(bodyOf(req), 'label', 60) ?? null, now()))
      const after = await refusal(res, open, null, () => withdraw(open, issued.id))
      if (after) await withdraw(open, issued.id)
      return after ?? issued
    })
    if ('status' in issued) return sendDetail(res, issued.status, issued.detail)
    audit({ actor: key.id, action: 'key.create', account: account.id, key: issued.id })
    sendJson(res, 201, { id: issued.id, key: issued.key, label: issued.label })
  })

  /** The key `:id` when it belongs to the signed-in account; answers 404 otherwise (another account's key is not there for you). */
  async function ownKey(req: express.Request, res: express.Response, open: Stores): Promise<KeyRecord | undefined> {
    const { account } = signedIn(res)
    const id = String(req.params.id)
    const target = await bounded(open.keys.getById(id))
    if (target === undefined || target.accountId !== account.id) {
      sendDetail(res, 404, 'Not Found')
      return undefined
    }
    return target
  }

  router.post('/keys/:id/rotate', signIn, managing, readJson, async (req, res) => {
    const { key, account } = signedIn(res)
    const open = await stores(res)
    if (!open) return
    const target = await ownKey(req, res, open)
    if (!target) return
    const grace = bodyOf(req).grace ?? 0
    if (typeof grace !== 'number' || !Number.isInteger(grace) || grace < 0 || grace > maxGraceSeconds) {
      return sendDetail(res, 400, `grace must be a whole number of seconds from 0 to ${maxGraceSeconds}`)
    }
    const answer = await keyTurns.runAll([key.id, target.id], async () => {
      const before = await refusal(res, open)
      if (before) return before
      // Both keys as they are now: a rotation or revocation that finished while this one waited counts.
      const current = await bounded(open.keys.getById(target.id))
      const time = now()
      if (!isKeyActive(current, account, time)) return { status: 409, detail: inactiveTarget }
      let rotated: Awaited<ReturnType<typeof rotateKey>>
      try {
        rotated = await bounded(rotateKey(open.keys, target.id, grace * 1000, time))
      } catch (error) {
        // Another process retired the key between our read and rotateKey's: a refusal, not a 503 (attacker finding F3).
        if ((error as { code?: unknown } | null)?.code === 'ERR_UV_KEY_INACTIVE') return { status: 409, detail: inactiveTarget }
        throw error
      }
      const ours = new Date(time + grace * 1000).toISOString()
      // The rotation does not count: the new key is withdrawn, and the old one loses the end this
      // rotation gave it, merged in the store: a revocation or another end written meanwhile stays (F1).
      const undo = async () => {
        await withdraw(open, rotated.id)
        if (current!.expiresAt !== ours)
          await bounded(open.keys.updateKey(target.id, { restoreEnd: { from: ours, to: current!.expiresAt } }))
      }
      const after = await refusal(res, open, target.id === key.id ? rotated.previous.expiresAt : null, undo)
      if (after) {
        await undo()
        return after
      }
      return { rotated, time }
    })
    if ('status' in answer) return sendDetail(res, answer.status, answer.detail)
    const { rotated, time } = answer
    audit({ actor: key.id, action: 'key.rotate', account: account.id, key: rotated.id, previous: target.id })
    sendJson(res, 201, { id: rotated.id, key: rotated.key, label: rotated.label, previous: keyView(rotated.previous, account, time) })
  })

  router.post('/keys/:id/revoke', signIn, managing, async (req, res) => {
    const { key, account } = signedIn(res)
    const open = await stores(res)
    if (!open) return
    const target = await ownKey(req, res, open)
    if (!target) return
    const { before, updated, time } = await revokeKey(open, target.id, now)
    if (before?.revokedAt === null) audit({ actor: key.id, action: 'key.revoke', account: account.id, key: target.id })
    sendJson(res, 200, keyView(updated ?? target, account, time))
  })

  return router
}
