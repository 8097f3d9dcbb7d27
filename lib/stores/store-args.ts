// Argument and record checks shared by every store, so all of them refuse the same bad input.
import type { KeyRecord } from '../types.js'

/** Keeps a consume/refund argument honest: a non-negative safe integer (units). */
export function checkUnits(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(
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
    throw new RangeError(`user-verification: quota \`expiresAt\` must be a time in ms since the epoch, got ${JSON.stringify(value)}.`)
  }
  return Math.floor(value)
}

/** Key ids and periods become parts of store keys; they must be non-empty strings. */
export function checkName(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0 || value.length > 200) {
    throw new TypeError(
      `user-verification: quota \`${name}\` must be a non-empty string of at most 200 characters, got ${JSON.stringify(value)}.`
    )
  }
  return value
}

/** Validates a record before it is stored, so a store never holds a half-formed key. */
export function checkRecord(record: unknown): KeyRecord {
  const r = record as Partial<KeyRecord> | null
  const bad = (field: string, expected: string): never => {
    throw new TypeError(
      `user-verification: key record \`${field}\` must be ${expected}, got ${JSON.stringify(r?.[field as keyof KeyRecord])}.`
    )
  }
  if (r === null || typeof r !== 'object')
    throw new TypeError(`user-verification: a key record must be an object, got ${JSON.stringify(record)}.`)
  if (typeof r.id !== 'string' || r.id.length === 0) bad('id', 'a non-empty string')
  if (typeof r.hash !== 'string' || !/^[0-9a-f]{64}$/.test(r.hash)) bad('hash', 'a lower-case hex SHA-256 digest')
  if (typeof r.plan !== 'string' || r.plan.length === 0) bad('plan', 'a non-empty string')
  if (r.label !== null && typeof r.label !== 'string') bad('label', 'a string or null')
  if (typeof r.createdAt !== 'string') bad('createdAt', 'an ISO 8601 string')
  if (r.revokedAt !== null && typeof r.revokedAt !== 'string') bad('revokedAt', 'an ISO 8601 string or null')
  return { id: r.id!, hash: r.hash!, plan: r.plan!, label: r.label ?? null, createdAt: r.createdAt!, revokedAt: r.revokedAt ?? null }
}

/** Oldest first; ties (same millisecond) by id so the order is stable across stores. */
export function byCreation(a: KeyRecord, b: KeyRecord): number {
  if (a.createdAt !== b.createdAt) return a.createdAt < b.createdAt ? -1 : 1
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0
}

/** Error thrown by `create` for an id or hash that already exists. */
export function duplicateKeyError(what: 'id' | 'hash', id: string): Error {
  const error = new Error(`user-verification: a key with this ${what} already exists (id ${id}). Generate a new key.`)
  ;(error as Error & { code: string }).code = 'ERR_UV_DUPLICATE_KEY'
  return error
}
