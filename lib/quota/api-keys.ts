// API keys: generation (256 random bits), SHA-256 digests, and issuing a key into a key store.
import { createHash, randomBytes } from 'node:crypto'
import type { KeyRecord, KeyStore } from '../types.js'

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
  return 'key_' + randomBytes(6).toString('hex')
}

/** What {@link issueKey} returns: the only time the key itself is seen. */
export interface IssuedKey {
  id: string
  key: string
  plan: string
  label: string | null
}

/** Creates a key on `plan`, stores its digest and returns the key once. */
export async function issueKey(store: KeyStore, plan: string, label: string | null = null, now: number = Date.now()): Promise<IssuedKey> {
  const key = generateKey()
  const record: KeyRecord = {
    id: generateKeyId(),
    hash: hashKey(key),
    plan,
    label,
    createdAt: new Date(now).toISOString(),
    revokedAt: null
  }
  await store.create(record)
  return { id: record.id, key, plan, label }
}
