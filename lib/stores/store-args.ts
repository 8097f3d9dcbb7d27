// Argument and record checks shared by every store, so all of them refuse the same bad input.
import { UserVerificationError, OptionsTypeError, OptionsRangeError } from '../errors.js'
import type { Account, AccountPatch, KeyChange, KeyPatch, KeyRecord } from '../types.js'
import { canonicalEmail } from '../email/canonical.js'

export { canonicalEmail }

/** Keeps a consume/refund argument honest: a non-negative safe integer (units). */
export function checkUnits(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new OptionsRangeError(
      `user-verification: quota \`${name}\` must be a non-negative integer, got ${JSON.stringify(value)}. Pass a whole number of units.`
    )
  }
  return value
}

/** A limit may be `Infinity` (an unlimited plan); stores keep it as the largest safe integer. */
export function checkLimit(value: unknown): number {
  if (value === Number.POSITIVE_INFINITY) return Number.MAX_SAFE_INTEGER
  return checkUnits('limit', value)
}

/** `expiresAt` is ms since the epoch. */
export function checkExpiresAt(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new OptionsRangeError(
      `user-verification: quota \`expiresAt\` must be a time in ms since the epoch, got ${JSON.stringify(value)}.`
    )
  }
  return Math.floor(value)
}

/** Key ids and periods become parts of store keys; they must be non-empty strings. */
export function checkName(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new OptionsTypeError(
      `user-verification: quota \`${name}\` must be a non-empty string of at most 200 characters, got ${JSON.stringify(value)}.`
    )
  }
  return value
}

/** Validates a key record before it is stored, so a store never holds a half-formed key. */
export function checkRecord(record: unknown): KeyRecord {
  const r = record as Partial<KeyRecord> | null
  const bad = (field: string, expected: string): never => {
    throw new OptionsTypeError(
      `user-verification: key record \`${field}\` must be ${expected}, got ${JSON.stringify(r?.[field as keyof KeyRecord])}.`
    )
  }
  if (r === null || typeof r !== 'object')
    throw new OptionsTypeError(`user-verification: a key record must be an object, got ${JSON.stringify(record)}.`)
  if (typeof r.id !== 'string' || r.id.length === 0) bad('id', 'a non-empty string')
  if (typeof r.hash !== 'string' || !/^[0-9a-f]{64}$/.test(r.hash)) bad('hash', 'a lower-case hex SHA-256 digest')
  if (typeof r.accountId !== 'string' || r.accountId.length === 0) bad('accountId', 'a non-empty string')
  if (r.label !== null && typeof r.label !== 'string') bad('label', 'a string or null')
  if (typeof r.createdAt !== 'string') bad('createdAt', 'an ISO 8601 string')
  if (r.revokedAt !== null && typeof r.revokedAt !== 'string') bad('revokedAt', 'an ISO 8601 string or null')
  if (r.expiresAt !== undefined && r.expiresAt !== null && typeof r.expiresAt !== 'string') bad('expiresAt', 'an ISO 8601 string or null')
  return {
    id: r.id!,
    hash: r.hash!,
    accountId: r.accountId!,
    label: r.label ?? null,
    createdAt: r.createdAt!,
    revokedAt: r.revokedAt ?? null,
    expiresAt: r.expiresAt ?? null
  }
}

/** Validates an account before it is stored; the email is kept as typed (stores compare it by {@link canonicalEmail}). */
export function checkAccount(account: unknown): Account {
  const a = account as Partial<Account> | null
  const bad = (field: string, expected: string): never => {
    throw new OptionsTypeError(
      `user-verification: account \`${field}\` must be ${expected}, got ${JSON.stringify(a?.[field as keyof Account])}.`
    )
  }
  if (a === null || typeof a !== 'object')
    throw new OptionsTypeError(`user-verification: an account must be an object, got ${JSON.stringify(account)}.`)
  if (typeof a.id !== 'string' || a.id.length === 0) bad('id', 'a non-empty string')
  if (typeof a.name !== 'string') bad('name', 'a string')
  if (a.email !== null && (typeof a.email !== 'string' || a.email.length === 0)) bad('email', 'a non-empty string or null')
  if (typeof a.plan !== 'string' || a.plan.length === 0) bad('plan', 'a non-empty string')
  if (typeof a.createdAt !== 'string') bad('createdAt', 'an ISO 8601 string')
  if (a.disabledAt !== null && typeof a.disabledAt !== 'string') bad('disabledAt', 'an ISO 8601 string or null')
  return {
    id: a.id!,
    name: a.name!,
    email: a.email ?? null,
    plan: a.plan!,
    createdAt: a.createdAt!,
    disabledAt: a.disabledAt ?? null
  }
}

/** Only the fields `update` may change; anything else in the patch is ignored. */
export function pickKeyPatch(patch: KeyPatch): KeyPatch {
  const out: KeyPatch = {}
  if (patch.label !== undefined) out.label = patch.label
  if (patch.revokedAt !== undefined) out.revokedAt = patch.revokedAt
  if (patch.expiresAt !== undefined) out.expiresAt = patch.expiresAt
  return out
}

/** `current` with `change` applied as {@link KeyChange} says: a revocation stays, the earlier end wins, `restoreEnd` only undoes its own end. */
export function mergeKeyChange(current: KeyRecord, change: KeyChange): KeyRecord {
  let { revokedAt, expiresAt } = current
  if (change.restoreEnd !== undefined && expiresAt === change.restoreEnd.from) expiresAt = change.restoreEnd.to
  if (change.revokedAt !== undefined && revokedAt === null) revokedAt = change.revokedAt
  if (change.expiresAt !== undefined && (expiresAt === null || Date.parse(change.expiresAt) < Date.parse(expiresAt)))
    expiresAt = change.expiresAt
  return { ...current, revokedAt, expiresAt }
}

/** Only the fields `updateAccount` may change; anything else in the patch is ignored. */
export function pickAccountPatch(patch: AccountPatch): AccountPatch {
  const out: AccountPatch = {}
  if (patch.name !== undefined) out.name = patch.name
  if (patch.email !== undefined) out.email = patch.email
  if (patch.plan !== undefined) out.plan = patch.plan
  if (patch.disabledAt !== undefined) out.disabledAt = patch.disabledAt
  return out
}

/** A `YYYY-MM-DD` day; when `period` is given the day must lie in it. */
export function checkDay(value: unknown, period?: string): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value) || (period !== undefined && value.slice(0, 7) !== period)) {
    throw new OptionsRangeError(
      `user-verification: quota \`day\` must be a YYYY-MM-DD day${period === undefined ? '' : ` inside the period ${period}`}, got ${JSON.stringify(value)}.`
    )
  }
  return value
}

/** Every day from `from` to `to` (inclusive, `YYYY-MM-DD`); at most 800, so a range cannot run away. */
export function daysBetween(from: string, to: string): string[] {
  const start = Date.parse(`${checkDay(from)}T00:00:00Z`)
  const end = Date.parse(`${checkDay(to)}T00:00:00Z`)
  const count = Math.floor((end - start) / 86_400_000) + 1
  if (!Number.isFinite(count) || count > 800)
    throw new OptionsRangeError(`user-verification: a daily range holds at most 800 days, got ${from}..${to}.`)
  return Array.from({ length: Math.max(0, count) }, (_, i) => new Date(start + i * 86_400_000).toISOString().slice(0, 10))
}

/** Every month from `from` to `to` (inclusive, `YYYY-MM`); at most 120. */
export function monthsBetween(from: string, to: string): string[] {
  const parse = (p: string): number => {
    if (typeof p !== 'string' || !/^\d{4}-\d{2}$/.test(p))
      throw new OptionsRangeError(`user-verification: a month must be YYYY-MM, got ${JSON.stringify(p)}.`)
    return Number(p.slice(0, 4)) * 12 + Number(p.slice(5, 7)) - 1
  }
  const start = parse(from)
  const count = parse(to) - start + 1
  if (count > 120) throw new OptionsRangeError(`user-verification: a monthly range holds at most 120 months, got ${from}..${to}.`)
  return Array.from(
    { length: Math.max(0, count) },
    (_, i) => `${Math.floor((start + i) / 12)}-${String(((start + i) % 12) + 1).padStart(2, '0')}`
  )
}

/** Oldest first; ties (same millisecond) by id so the order is stable across stores. */
export function byCreation(a: { createdAt: string; id: string }, b: { createdAt: string; id: string }): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** Error thrown by `create` for an id or hash that already exists. */
export function duplicateKeyError(what: 'id' | 'hash', id: string): Error {
  return new UserVerificationError('ERR_UV_DUPLICATE_KEY', `a key with this ${what} already exists (id ${id}). Generate a new key.`)
}

/** Error thrown by `createAccount` for an id or email that is taken (the email itself is not in the message). */
export function duplicateAccountError(what: 'id' | 'email', id: string): Error {
  return new UserVerificationError('ERR_UV_DUPLICATE_ACCOUNT', `an account with this ${what} already exists (new account ${id}).`)
}

/** Error thrown by `create` for a key whose account does not exist. */
export function unknownAccountError(accountId: string): Error {
  return new UserVerificationError('ERR_UV_UNKNOWN_ACCOUNT', `no account with id ${accountId}. Create the account first.`)
}
