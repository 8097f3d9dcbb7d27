// SQLite's exact key-record cache: the stores' readKey, which answers most requests without a read or a promise and never serves a stale plan, a revoked key or a disabled account.
import { LRUCache } from 'lru-cache'
import { isKeyActive, readKeyWithAccount } from '../quota/api-keys.js'
import type { KeyRead, Stores } from '../types.js'

/** A read made under a known key-records version. */
type VersionedRead = KeyRead & { version: number }

/** The stores a {@link cachedKeyReader} is called on: their quota store keeps a key-records version. */
type VersionedStores = Stores & { quota: { keysVersion(): Promise<number> } }

/**
 * A {@link Stores.readKey} for stores whose quota store has `keysVersion` (SQLite) and returns it
 * from every consume in the same atomic step. A cached record is used for the consume; when the
 * consume's version moved on, the middleware undoes it and asks again with the record it held,
 * which is then read afresh. So a revocation or plan change made by any process writing the same
 * file applies to the very next request.
 *
 * Only active entries are cached, and a cached entry that is no longer active at `now` (its grace
 * ended) is read again: a 401 is always decided on fresh records, so re-enabling shows at once
 * too. It reads through the `keys` and `quota` of the stores it is called on, so a wrapper that
 * times those (server/metrics.ts) still sees every read. `max`: records kept (least recently
 * used dropped first).
 */
export function cachedKeyReader(
  max = 10_000
): (this: VersionedStores, hash: string, now: number, held?: KeyRead) => KeyRead | Promise<KeyRead> {
  const entries = new LRUCache<string, VersionedRead>({ max })

  /** The records as they are now, under the version read before them (`known`, when already read). */
  async function fresh(stores: VersionedStores, hash: string, now: number, known?: number): Promise<VersionedRead> {
    // The version is read before the records: a change in between shows up as a newer version.
    const version = known ?? (await stores.quota.keysVersion())
    const { record, account } = await readKeyWithAccount(stores.keys, hash)
    const read = { record, account, version }
    // An expiring key is cached too: its `expiresAt` is checked against the clock on every request.
    if (isKeyActive(record, account, now)) entries.set(hash, read)
    return read
  }

  /** `held` itself while the version it was read under is still the store's, else a fresh read. */
  async function current(stores: VersionedStores, hash: string, now: number, held: KeyRead): Promise<KeyRead> {
    const version = await stores.quota.keysVersion()
    if (version === held.version) return held
    entries.delete(hash)
    return fresh(stores, hash, now, version)
  }

  return function readKey(this: VersionedStores, hash: string, now: number, held?: KeyRead): KeyRead | Promise<KeyRead> {
    if (held !== undefined) return current(this, hash, now, held)
    const cached = entries.get(hash)
    if (cached !== undefined) {
      // Most requests end here: no read, no promise.
      if (isKeyActive(cached.record, cached.account, now)) return cached
      entries.delete(hash)
    }
    return fresh(this, hash, now)
  }
}
