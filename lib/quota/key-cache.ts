// Caches key and account records between requests without ever serving a stale plan, a revoked key or a disabled account.
import { LRUCache } from 'lru-cache'
import { isKeyActive } from './api-keys.js'
import type { Account, ConsumeResult, KeyRecord, Stores } from '../types.js'

/** A key record, its account, and the key-records version they were read under (`undefined`: the store has no versions). */
export interface KeyEntry {
  record: KeyRecord | undefined
  account: Account | undefined
  version: number | undefined
}

/**
 * Saves the key-store read on most requests. Works only with quota stores that have
 * `keysVersion` (SQLite): a cached record is used for the consume, and the consume returns the
 * current version in the same atomic step; when it moved on, the caller undoes the consume and
 * retries with a fresh record. So a revocation or plan change still applies to the next request.
 */
export class KeyCache {
  readonly #entries: LRUCache<string, { record: KeyRecord; account: Account; version: number }>

  /** `max`: records kept (least recently used dropped first). */
  constructor(max = 10_000) {
    this.#entries = new LRUCache({ max })
  }

  /**
   * The record for a key digest and its account, from the cache or the store. Only active
   * entries are cached, and a cached entry that is no longer active at `now` (its grace ended)
   * is read again: a 401 is always decided on fresh records, so re-enabling shows at once too.
   */
  /** The cached entry of an active key (see {@link KeyCache.lookup}), without a promise: most requests end here. */
  cached(stores: Stores, hash: string, now: number = Date.now()): KeyEntry | undefined {
    if (stores.quota.keysVersion === undefined) return undefined
    const cached = this.#entries.get(hash)
    return cached !== undefined && isKeyActive(cached.record, cached.account, now) ? cached : undefined
  }

  async lookup(stores: Stores, hash: string, now: number = Date.now()): Promise<KeyEntry> {
    if (stores.quota.keysVersion === undefined) return { ...(await readKey(stores, hash)), version: undefined }
    const cached = this.#entries.get(hash)
    if (cached !== undefined) {
      if (isKeyActive(cached.record, cached.account, now)) return cached
      this.#entries.delete(hash)
    }
    // The version is read before the records: a change in between shows up as a newer version.
    const version = await stores.quota.keysVersion()
    const { record, account } = await readKey(stores, hash)
    // An expiring key is cached too: its `expiresAt` is checked against the clock on every request.
    if (record !== undefined && account !== undefined && isKeyActive(record, account, now))
      this.#entries.set(hash, { record, account, version })
    return { record, account, version }
  }

  /**
   * `entry` itself when it is still current, else the record read afresh. For answers decided
   * without a consume (the 402 pre-check), which cannot compare versions atomically.
   */
  async revalidate(stores: Stores, hash: string, entry: KeyEntry, now: number = Date.now()): Promise<KeyEntry> {
    if (entry.version === undefined || stores.quota.keysVersion === undefined) return entry
    if ((await stores.quota.keysVersion()) === entry.version) return entry
    this.#entries.delete(hash)
    return this.lookup(stores, hash, now)
  }

  /** Whether `entry` was still current when `consumed` ran; drops it from the cache when not. */
  confirm(hash: string, entry: KeyEntry, consumed: ConsumeResult): boolean {
    if (entry.version === undefined || consumed.keysVersion === undefined || consumed.keysVersion === entry.version) return true
    this.#entries.delete(hash)
    return false
  }
}

/**
 * A key and its account as they are now. Unknown, revoked and disabled keys take this same path
 * (one combined read where the store has one), so a 401 does not tell them apart by its timing.
 */
async function readKey(stores: Stores, hash: string): Promise<{ record: KeyRecord | undefined; account: Account | undefined }> {
  if (stores.keys.getKeyWithAccount !== undefined) return stores.keys.getKeyWithAccount(hash)
  const record = await stores.keys.getByHash(hash)
  return { record, account: record === undefined ? undefined : await stores.keys.getAccount(record.accountId) }
}
