// What every dashboard endpoint shares: JSON answers, bounded store calls, the body reader, the audit log.
import express, { type NextFunction, type Request, type Response } from 'express'
import { Serial, type Stores, type UserVerificationMiddleware } from '../lib/index.js'

/** A store that does not answer within this time is treated as unavailable. */
const storeTimeout = 5000
/** Seconds a client should wait after a 503. */
const retryAfter = '5'

/** One action taken in the dashboard, as the audit log records it: ids only, never key material, emails or names. */
export interface AuditEvent {
  /** `admin`, `signup`, or the id of the key that was signed in (`key_…`). */
  actor: string
  /** What was done, e.g. `key.create`, `key.rotate`, `key.revoke`, `account.create`, `account.plan`, `account.disable`. */
  action: string
  /** The account acted on. */
  account: string
  /** The key acted on or created, when there is one. */
  key?: string
  /** The previous key of a rotation. */
  previous?: string
  /** The new plan of a plan change or a new account. */
  plan?: string
}

/** Receives one {@link AuditEvent} per admin or key action. */
export type AuditLog = (event: AuditEvent) => void

/** Answers `{ detail }` with `status`, never cached (answers hold usage and keys). */
export function sendDetail(res: Response, status: number, detail: string): void {
  res.set('Cache-Control', 'no-store').status(status).json({ detail })
}

/** Answers a JSON body, never cached. */
export function sendJson(res: Response, status: number, body: unknown): void {
  res.set('Cache-Control', 'no-store').status(status).json(body)
}

/** The store failed or did not answer in time: 503 with `Retry-After`, as the API answers. */
export function unavailable(res: Response): void {
  res.set('Retry-After', retryAfter)
  sendDetail(res, 503, 'Tool service unavailable')
}

/** Rejects when `promise` takes longer than {@link storeTimeout}. */
export async function bounded<T>(promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error('store timeout')), storeTimeout)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

/** The open stores, waiting for the middleware's first open if needed; `undefined` when they cannot be opened. */
export async function storesOf(middleware: UserVerificationMiddleware): Promise<Stores | undefined> {
  const open = middleware.stores()
  if (open) return open
  try {
    await bounded(middleware.ready)
  } catch {
    return undefined
  }
  return middleware.stores()
}

/**
 * The dashboard's changes to one key (a create or rotation signed in with it, its rotation, its
 * revocation) run one at a time per key id in this process, each as one step: check the key as
 * it is now, write, check again. Concurrent rotations of one key then give one 201 and refusals
 * (attacker findings F2, F3), and no rollback meets a revocation of this process half-way (F1).
 * Other processes are covered by the check after the write and the store's merged `updateKey`.
 */
export const keyTurns = new Serial()

/** Largest body a dashboard endpoint reads (413 above it). */
export const dashboardBodyLimit = 4096

const parseJson = express.json({ limit: dashboardBodyLimit, type: () => true, strict: false })

/**
 * Reads a small JSON object body whatever the content type says: malformed JSON answers 400 and
 * an oversized body 413 in {@link dashboardErrors}; a body that is JSON but not an object (`[]`,
 * a string, a number) answers 400 here (attacker finding F8: `[]` made a key). No body at all is
 * an empty object.
 */
export function readJson(req: Request, res: Response, next: NextFunction): void {
  parseJson(req, res, (error?: unknown) => {
    if (error !== undefined) return next(error)
    const body: unknown = req.body
    if (body !== undefined && (typeof body !== 'object' || body === null || Array.isArray(body)))
      return sendDetail(res, 400, 'The body must be a JSON object')
    next()
  })
}

/** The body as an object with string keys, `{}` for anything else. */
export function bodyOf(req: Request): Record<string, unknown> {
  const body: unknown = req.body
  return typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
}

/** A trimmed string member of the body, `undefined` when absent, empty or not a string. */
export function text(body: Record<string, unknown>, name: string, max = 200): string | undefined {
  const value = body[name]
  if (typeof value !== 'string') return undefined
  const trimmed = value.trim()
  return trimmed === '' ? undefined : trimmed.slice(0, max)
}

/** The dashboard API's last handler: body errors answer 400, anything else (a failed store) 503, never an HTML page. */
export function dashboardErrors(error: unknown, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(error)
  const status = (error as { status?: unknown } | null)?.status
  if (status === 413) return sendDetail(res, 413, 'Request body too large')
  if (typeof status === 'number' && status >= 400 && status < 500) return sendDetail(res, 400, 'Bad Request')
  unavailable(res)
}

/**
 * Whether a store refused an account because its id or email is taken (`ERR_UV_DUPLICATE_ACCOUNT`):
 * the loser of two creates for one address, which answers 409 like the check before it would have
 * (attacker finding F5: it fell through to the 503 of a failed store).
 */
export function isDuplicateAccount(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_UV_DUPLICATE_ACCOUNT'
}

/** The current month's days as `YYYY-MM-DD` bounds: the first of the month and today (UTC). */
export function monthToDate(now: number): { from: string; to: string } {
  const today = new Date(now).toISOString().slice(0, 10)
  return { from: `${today.slice(0, 7)}-01`, to: today }
}

/** The 13 months up to `now`'s, as `YYYY-MM` bounds. */
export function lastMonths(now: number, count = 13): { from: string; to: string } {
  const date = new Date(now)
  const from = new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth() - (count - 1), 1))
  return { from: from.toISOString().slice(0, 7), to: date.toISOString().slice(0, 7) }
}
