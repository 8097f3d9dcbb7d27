// Accounts and API keys: key generation (256 random bits), SHA-256 digests, issuing, rotating, and when a key is active.
import { createHash, randomBytes } from 'node:crypto'
import { UserVerificationError, OptionsRangeError } from '../errors.js'
import type { Account, KeyRead, KeyRecord, KeyStore } from '../types.js'

/** Prefix of every API key, so leaked keys are easy to recognise and scan for. */
export const keyPrefix = 'uv_'

/** A new API key: `uv_` + 256 random bits in base64url (43 characters). */
export function generateKey(): string {
  return keyPrefix + randomBytes(32).toString('base64url')
}

/** Lower-case hex SHA-256 digest of a key: the only form in which keys are stored. */
export function hashKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex')
}

/** A new public key id (`key_` + 12 hex characters). */
export function generateKeyId(): string {
  return `key_${randomBytes(6).toString('hex')}`
}

/** A new public account id (`acct_` + 12 hex characters). */
export function generateAccountId(): string {
  return `acct_${randomBytes(6).toString('hex')}`
}

/**
 * Whether a key may be used at `now` (ms since the epoch): not revoked, not past its
 * `expiresAt` (a rotation's grace period), and its account exists and is not disabled.
 */
export function isKeyActive(key: KeyRecord | undefined, account: Account | undefined, now: number): boolean {
  if (key === undefined || account === undefined || key.accountId !== account.id) return false
  if (key.revokedAt !== null || account.disabledAt !== null) return false
  return key.expiresAt === null || Date.parse(key.expiresAt) > now
}

/**
 * A key and its account as they are now. Unknown, revoked and disabled keys take this same path
 * (one combined read where the store has one), so a 401 does not tell them apart by its timing.
 */
export async function readKeyWithAccount(keys: KeyStore, hash: string): Promise<KeyRead> {
  if (keys.getKeyWithAccount !== undefined) return keys.getKeyWithAccount(hash)
  const record = await keys.getByHash(hash)
  return { record, account: record === undefined ? undefined : await keys.getAccount(record.accountId) }
}

/** What the key-issuing functions return: the only time the key itself is seen. */
export interface IssuedKey {
  id: string
  key: string
  /** The account's plan. */
  plan: string
  label: string | null
  /** The account the key belongs to. */
  account: string
}

/** What {@link createAccount} takes. */
export interface NewAccount {
  name: string
  email?: string | null
  plan: string
}

/** Creates an account (no key yet). Rejects with `ERR_UV_DUPLICATE_ACCOUNT` when the email is taken. */
export async function createAccount(store: KeyStore, fields: NewAccount, now: number = Date.now()): Promise<Account> {
  const account: Account = {
    id: generateAccountId(),
    name: fields.name,
    email: fields.email ?? null,
    plan: fields.plan,
    createdAt: new Date(now).toISOString(),
    disabledAt: null
  }
  await store.createAccount(account)
  return account
}

/** Adds a new key to an existing account and returns it once. */
export async function addKey(
  store: KeyStore,
  accountId: string,
  label: string | null = null,
  now: number = Date.now()
): Promise<IssuedKey> {
  const account = await store.getAccount(accountId)
  if (account === undefined) throw new UserVerificationError('ERR_UV_UNKNOWN_ACCOUNT', `no account with id ${accountId}.`)
  const key = generateKey()
  const record: KeyRecord = {
    id: generateKeyId(),
    hash: hashKey(key),
    accountId,
    label,
    createdAt: new Date(now).toISOString(),
    revokedAt: null,
    expiresAt: null
  }
  await store.create(record)
  return { id: record.id, key, plan: account.plan, label, account: accountId }
}

/**
 * Creates an account on `plan` with its first key (what `keys create --plan` does) and returns
 * the key once. The account is named after the label (or its id when there is none).
 */
export async function issueKey(store: KeyStore, plan: string, label: string | null = null, now: number = Date.now()): Promise<IssuedKey> {
  const account = await createAccount(store, { name: label ?? '', plan }, now)
  if (label === null) await store.updateAccount(account.id, { name: account.id })
  return addKey(store, account.id, label, now)
}

/**
 * Rotation: a new key for the same account (same label), and the old key stops working `grace`
 * ms after `now` (0: at once). Usage is untouched, since it belongs to the account.
 * Rejects for an unknown, revoked or already expired key.
 */
export async function rotateKey(
  store: KeyStore,
  keyId: string,
  grace = 0,
  now: number = Date.now()
): Promise<IssuedKey & { previous: KeyRecord }> {
  if (!Number.isFinite(grace) || grace < 0)
    throw new OptionsRangeError(`user-verification: the grace period must be >= 0 ms, got ${grace}.`)
  const old = await store.getById(keyId)
  if (old === undefined) throw new UserVerificationError('ERR_UV_UNKNOWN_KEY', `no key with id ${keyId}.`)
  if (old.revokedAt !== null || (old.expiresAt !== null && Date.parse(old.expiresAt) <= now)) {
    throw new UserVerificationError('ERR_UV_KEY_INACTIVE', `key ${keyId} is revoked or expired; create a new key instead of rotating it.`)
  }
  const issued = await addKey(store, old.accountId, old.label, now)
  const ends = now + grace
  // A key already due to expire sooner keeps its earlier end.
  const expiresAt = old.expiresAt !== null && Date.parse(old.expiresAt) < ends ? old.expiresAt : new Date(ends).toISOString()
  // Merged in the store: a revocation or an earlier end written since `old` was read stays (attacker finding F1).
  const previous = (await store.updateKey(old.id, { expiresAt })) ?? { ...old, expiresAt }
  return { ...issued, previous }
}
