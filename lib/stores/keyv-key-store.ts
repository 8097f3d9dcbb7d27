// Account and key store over any Keyv instance (SQLite, Redis, PostgreSQL adapters): a record per digest, per account, and id/email indexes.
import { OptionsTypeError, StoreError } from '../errors.js'
import type Keyv from 'keyv'
import { LRUCache } from 'lru-cache'
import type { Account, AccountPatch, KeyChange, KeyPatch, KeyRecord, KeyStore, Logger } from '../types.js'
import {
  byCreation,
  canonicalEmail,
  checkAccount,
  checkRecord,
  duplicateAccountError,
  mergeKeyChange,
  duplicateKeyError,
  pickAccountPatch,
  pickKeyPatch,
  unknownAccountError
} from './store-args.js'
import { Serial } from './serial.js'
import { throttled } from './throttled-log.js'
import { withTimeout } from './with-timeout.js'

/** Options of {@link KeyvKeyStore}. */
export interface KeyvKeyStoreOptions {
  /** Receives the Keyv instance's `'error'` events. Defaults to `console`. */
  logger?: Logger
  /** `true` when the Keyv backend lives in this process only (a Map, `sqlite://:memory:`). Defaults to `false`. */
  localKeys?: boolean
  /** Namespace reported as `prefix`. Defaults to the Keyv namespace (or its adapter's). */
  prefix?: string
  /** Longest time one Keyv call may take before it rejects, in ms (`list()` gets ten times this). Defaults to no limit. */
  timeout?: number
  /** Called by `close()` instead of `keyv.disconnect()`, when the caller owns a shared connection. */
  close?: () => Promise<void>
  /** Called after every successful create or update (e.g. to bump a quota store's `keysVersion`). */
  onChange?: () => Promise<void>
}

const ID = 'id:'
const HASH = 'hash:'
const ACCOUNT = 'account:'
const EMAIL = 'email:'
/** Marks a namespace whose records have the account layout (written at creation, or once the upgrade from 0.1.0 ran). */
const SCHEMA = 'meta:schema'
/** 2: accounts (release 0.2); 3: the email index keyed by {@link canonicalEmail} instead of the lower-cased address. */
const SCHEMA_VERSION = 3

/** The account a release 0.1.0 key becomes: same hex as the key id, so the quota stores can move usage without the key store. */
export function legacyAccountId(keyId: string): string {
  return `acct_${keyId.replace(/^key_/, '')}`
}

/**
 * Stores each {@link KeyRecord} under `hash:<digest>` and an index entry `id:<id>` → digest in one
 * Keyv namespace, so the per-request lookup by digest is a single read (and the account one
 * more; the SQLite store caches both); the CLI's lookups by id take two. Each {@link Account}
 * lives under `account:<id>`, with `email:<address>` → id. `list()`, `listByAccount()` and
 * `listAccounts()` walk the Keyv iterator (SQLite, Redis and PostgreSQL adapters have one) and
 * sort oldest first.
 *
 * `init()` upgrades a namespace written by release 0.1.0 (keys carrying their plan) in place:
 * each key becomes the only key of its own account (`acct_` + the key id's hex, on the key's
 * plan, named after its label or id). Accounts are written before their keys and with fixed ids,
 * so an interrupted or concurrent upgrade is finished by the next `init()` with the same result.
 *
 * The Keyv instance must be built with `throwOnErrors: true`: otherwise Keyv 5 turns a failed
 * read into `undefined`, which would make an outage look like "no such key" (401 instead of 503).
 * `create` checks for duplicates before writing; Keyv has no insert-if-absent, so two processes
 * creating the same id at the same instant could both succeed (ids and hashes are random, so
 * this needs a 2^-48 / 2^-192 collision).
 */
export class KeyvKeyStore implements KeyStore {
  readonly localKeys: boolean
  readonly prefix: string
  readonly #keyv: Keyv
  readonly #close: (() => Promise<void>) | undefined
  readonly #timeout: number | undefined
  readonly #onChange: (() => Promise<void>) | undefined
  /** Orders this instance's claims of one address (`email:<address>`) and its writes of one key (`id:<id>`); see #claimingEmail. */
  readonly #serial = new Serial()
  /** Digest → account id of keys seen; a key never changes account, so this never goes stale. */
  readonly #accountOf = new LRUCache<string, string>({ max: 10_000 })

  constructor(keyv: Keyv, options: KeyvKeyStoreOptions = {}) {
    if (keyv === null || typeof keyv !== 'object' || typeof keyv.get !== 'function' || typeof keyv.set !== 'function') {
      throw new OptionsTypeError(
        "user-verification: KeyvKeyStore needs a Keyv instance, e.g. `new Keyv({ store, namespace: 'uv-keys', throwOnErrors: true })`."
      )
    }
    if (keyv.throwOnErrors !== true) {
      throw new OptionsTypeError(
        'user-verification: the Keyv instance of the key store must be created with `throwOnErrors: true`; otherwise a store outage reads as "no such key". Pass `{ throwOnErrors: true }` to `new Keyv(...)`.'
      )
    }
    if (typeof keyv.iterator !== 'function') {
      throw new OptionsTypeError(
        'user-verification: the Keyv adapter of the key store has no iterator, so keys cannot be listed. Use @keyv/sqlite, @keyv/redis, @keyv/postgres or a Map.'
      )
    }
    this.#keyv = keyv
    this.localKeys = options.localKeys ?? false
    this.prefix = options.prefix ?? keyv.namespace ?? (keyv.store as { namespace?: string }).namespace ?? ''
    this.#close = options.close
    this.#timeout = options.timeout
    this.#onChange = options.onChange
    // Keyv emits 'error' for every failed call, and in an outage every request fails one (each
    // answered 503 and logged by the middleware's own throttle): one line per cause per 10 s.
    const log = throttled(options.logger ?? console)
    keyv.on('error', (error: unknown) => {
      log('error', 'user-verification: key store error', {
        prefix: this.prefix,
        error: error instanceof Error ? error.message : String(error)
      })
    })
  }

  /** Reads once (an unreachable or unusable backend is refused at start-up, not on the first request), then upgrades a 0.1.0 namespace. */
  async init(): Promise<void> {
    const schema = await this.#bounded(this.#keyv.get<number>(SCHEMA))
    if (schema === SCHEMA_VERSION) return
    const upgraded = await this.#bounded(this.#upgrade(), 10)
    await this.#bounded(this.#reindexEmails(), 10)
    await this.#mustSet(SCHEMA, SCHEMA_VERSION)
    if (upgraded > 0) await this.#onChange?.()
  }

  /** Turns every 0.1.0 key record (one with a `plan`, no `accountId`) into an account and its key; returns how many. */
  async #upgrade(): Promise<number> {
    const legacy: Array<{ id: string; hash: string; plan: string; label: string | null; createdAt: string; revokedAt: string | null }> = []
    for await (const [key, value] of this.#entries()) {
      if (!key.startsWith(HASH) || value === null || typeof value !== 'object') continue
      const r = value as Record<string, unknown>
      if (typeof r.accountId !== 'string' && typeof r.plan === 'string') legacy.push(r as never)
    }
    for (const old of legacy) {
      const accountId = legacyAccountId(old.id)
      if ((await this.#keyv.get(ACCOUNT + accountId)) === undefined) {
        const account = checkAccount({
          id: accountId,
          name: old.label ?? old.id,
          email: null,
          plan: old.plan,
          createdAt: old.createdAt,
          disabledAt: null
        })
        await this.#mustSet(ACCOUNT + accountId, account)
      }
      const record = checkRecord({ ...old, accountId, expiresAt: null })
      await this.#mustSet(HASH + record.hash, record)
    }
    return legacy.length
  }

  /**
   * Writes `email:<canonical form>` for every account that has an address (attacker finding F4:
   * earlier stores indexed the lower-cased address, so `"a.b"@x` or `a@bücher.de` could not find
   * `a.b@x` or `a@xn--bcher-kva.de`). Oldest account first; an entry already there is left, so two
   * old accounts that turn out to be one mailbox keep the older on the index (both remain). The
   * old entries stay: a process of the previous release still finds its accounts through them.
   */
  async #reindexEmails(): Promise<void> {
    for (const account of await this.#listAccounts()) {
      if (account.email === null) continue
      const key = EMAIL + canonicalEmail(account.email)
      if ((await this.#keyv.get(key)) === undefined) await this.#mustSet(key, account.id)
    }
  }

  async getByHash(hash: string): Promise<KeyRecord | undefined> {
    const value = await this.#bounded(this.#keyv.get<KeyRecord>(HASH + hash))
    if (value === undefined || value === null) return undefined
    const record = checkRecord(value)
    return record.hash === hash ? record : undefined
  }

  /**
   * The key and its account. The first lookup of a digest reads the key, then its account; later
   * ones read both in one `getMany` (one MGET on Redis, one SELECT on PostgreSQL), since the key's
   * account id is remembered and never changes.
   */
  async getKeyWithAccount(hash: string): Promise<{ record: KeyRecord | undefined; account: Account | undefined }> {
    const accountId = this.#accountOf.get(hash)
    // Keyv falls back to one get per key when the adapter has no getMany, and then swallows their
    // errors (an outage would read as "no such key"): use getMany only where the adapter has it.
    if (accountId !== undefined && typeof (this.#keyv.store as { getMany?: unknown }).getMany === 'function') {
      const [rawRecord, rawAccount] = await this.#bounded(this.#keyv.getMany<unknown>([HASH + hash, ACCOUNT + accountId]))
      const record = rawRecord === undefined || rawRecord === null ? undefined : checkRecord(rawRecord)
      if (record !== undefined && record.hash === hash && record.accountId === accountId) {
        const account = rawAccount === undefined || rawAccount === null ? undefined : checkAccount(rawAccount)
        return { record, account: account?.id === accountId ? account : undefined }
      }
    }
    const record = await this.getByHash(hash)
    if (record === undefined) return { record, account: undefined }
    this.#accountOf.set(hash, record.accountId)
    return { record, account: await this.getAccount(record.accountId) }
  }

  async getById(id: string): Promise<KeyRecord | undefined> {
    const hash = await this.#bounded(this.#keyv.get<string>(ID + id))
    if (typeof hash !== 'string') return undefined
    const record = await this.getByHash(hash)
    // An index entry left by an interrupted create must not resolve to another key.
    return record?.id === id ? record : undefined
  }

  async create(record: KeyRecord): Promise<void> {
    const r = checkRecord(record)
    const [idTaken, hashTaken, accountExists] = await this.#bounded(
      Promise.all([this.#keyv.has(ID + r.id), this.#keyv.has(HASH + r.hash), this.#keyv.has(ACCOUNT + r.accountId)])
    )
    if (idTaken) throw duplicateKeyError('id', r.id)
    if (hashTaken) throw duplicateKeyError('hash', r.id)
    if (!accountExists) throw unknownAccountError(r.accountId)
    // Index first, record second: a crash in between leaves an id that resolves to nothing and
    // a key that was never shown, never a usable key that cannot be listed or revoked.
    await this.#mustSet(ID + r.id, r.hash)
    await this.#mustSet(HASH + r.hash, r)
    await this.#onChange?.()
  }

  async update(id: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    return this.#rewrite(id, (current) => ({ ...current, ...pickKeyPatch(patch) }))
  }

  /**
   * Re-reads the key and applies `change` to what it holds now (an existing revocation stays, the
   * earlier end wins), one write at a time per key id through this instance: a revocation is never
   * lost to another request's read-modify-write of the same key (attacker finding F1). Keyv has no
   * conditional write, so another process writing the same key between this read and this write
   * can still lose one of the two (CONTRIBUTING.md#accounts-keys-and-quota).
   */
  async updateKey(id: string, change: KeyChange): Promise<KeyRecord | undefined> {
    return this.#rewrite(id, (current) => mergeKeyChange(current, change))
  }

  async #rewrite(id: string, next: (current: KeyRecord) => KeyRecord): Promise<KeyRecord | undefined> {
    const written = await this.#serial.run(ID + id, async () => {
      const current = await this.getById(id)
      if (current === undefined) return undefined
      const record = checkRecord(next(current))
      await this.#mustSet(HASH + current.hash, record)
      return record
    })
    // After the write: whoever sees the new version re-reads and finds the new record.
    if (written !== undefined) await this.#onChange?.()
    return written
  }

  async list(): Promise<KeyRecord[]> {
    return this.#bounded(this.#list(), 10)
  }

  async #list(): Promise<KeyRecord[]> {
    const records: KeyRecord[] = []
    for await (const [key, value] of this.#entries()) {
      if (key.startsWith(HASH) && value !== null && typeof value === 'object') records.push(checkRecord(value))
    }
    return records.sort(byCreation)
  }

  async listByAccount(accountId: string): Promise<KeyRecord[]> {
    return (await this.list()).filter((r) => r.accountId === accountId)
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const value = await this.#bounded(this.#keyv.get<Account>(ACCOUNT + id))
    if (value === undefined || value === null) return undefined
    const account = checkAccount(value)
    return account.id === id ? account : undefined
  }

  async getAccountByEmail(email: string): Promise<Account | undefined> {
    const canonical = canonicalEmail(email)
    // The canonical entry; then the lower-cased one a process of the previous release may have written since the upgrade.
    for (const key of new Set([canonical, String(email).toLowerCase()])) {
      const id = await this.#bounded(this.#keyv.get<string>(EMAIL + key))
      if (typeof id !== 'string') continue
      const account = await this.getAccount(id)
      // An index entry left behind by an email change or an interrupted create must not match.
      if (account?.email !== null && account?.email !== undefined && canonicalEmail(account.email) === canonical) return account
    }
    return undefined
  }

  async createAccount(account: Account): Promise<void> {
    const a = checkAccount(account)
    const email = a.email === null ? null : canonicalEmail(a.email)
    await this.#claimingEmail(email, async () => {
      if (await this.#bounded(this.#keyv.has(ACCOUNT + a.id))) throw duplicateAccountError('id', a.id)
      if (a.email !== null && (await this.getAccountByEmail(a.email)) !== undefined) throw duplicateAccountError('email', a.id)
      if (email === null) return this.#mustSet(ACCOUNT + a.id, a)
      if (this.#setIfAbsent() === undefined) {
        // Email index first: a crash in between leaves an index entry that resolves to nothing.
        await this.#mustSet(EMAIL + email, a.id)
        return this.#mustSet(ACCOUNT + a.id, a)
      }
      // With set-if-absent the account comes first, so whoever finds the index taken sees the
      // holder's account (F5: two processes creating one address at once both won).
      await this.#mustSet(ACCOUNT + a.id, a)
      try {
        await this.#claimIndex(email, a.id)
      } catch (error) {
        await this.#bounded(this.#keyv.delete(ACCOUNT + a.id))
        throw error
      }
    })
    await this.#onChange?.()
  }

  /** The adapter's atomic set-if-absent (SQLite, PostgreSQL and Redis as opened by `openStores` have one), or `undefined`. */
  #setIfAbsent(): ((key: string, value: unknown) => Promise<boolean>) | undefined {
    const store = this.#keyv.store as { setIfAbsent?: (key: string, value: unknown) => Promise<boolean> }
    return typeof store.setIfAbsent === 'function' ? store.setIfAbsent.bind(store) : undefined
  }

  /**
   * Points `email:<email>` at `id` only if no other account holds it, atomically across processes
   * where the adapter can set-if-absent. An entry left by an interrupted create or an address
   * since changed (its account missing or no longer holding the address) is replaced.
   */
  async #claimIndex(email: string, id: string): Promise<void> {
    const setIfAbsent = this.#setIfAbsent()
    if (setIfAbsent !== undefined) {
      const raw = await this.#keyv.serializeData({ value: id, expires: undefined })
      if (await this.#bounded(setIfAbsent(this.#keyv._getKeyPrefix(EMAIL + email), raw))) return
      const holder = await this.getAccountByEmail(email)
      if (holder !== undefined && holder.id !== id) throw duplicateAccountError('email', id)
    }
    await this.#mustSet(EMAIL + email, id)
  }

  /**
   * Runs `claim` after any other claim of the same address through this store has finished:
   * Keyv has no set-if-absent, so the check and the write of the email index would otherwise
   * interleave and two sign-ups at once would both get an account. Processes sharing the store
   * are not serialised by this (see CONTRIBUTING.md#accounts-and-quota).
   */
  async #claimingEmail<T>(email: string | null, claim: () => Promise<T>): Promise<T> {
    return email === null ? claim() : this.#serial.run(EMAIL + email, claim)
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    const current = await this.getAccount(id)
    if (current === undefined) return undefined
    const next = checkAccount({ ...current, ...pickAccountPatch(patch) })
    const before = current.email === null ? null : canonicalEmail(current.email)
    const after = next.email === null ? null : canonicalEmail(next.email)
    await this.#claimingEmail(after !== before ? after : null, async () => {
      if (after !== before && after !== null) {
        if ((await this.getAccountByEmail(next.email!)) !== undefined) throw duplicateAccountError('email', id)
        await this.#claimIndex(after, id)
      }
      await this.#mustSet(ACCOUNT + id, next)
    })
    if (before !== null && after !== before) {
      await this.#bounded(this.#keyv.delete(EMAIL + before))
      // The lower-cased entry an earlier release wrote, if it differs.
      if (current.email!.toLowerCase() !== before) await this.#bounded(this.#keyv.delete(EMAIL + current.email!.toLowerCase()))
    }
    await this.#onChange?.()
    return next
  }

  async listAccounts(): Promise<Account[]> {
    return this.#bounded(this.#listAccounts(), 10)
  }

  async #listAccounts(): Promise<Account[]> {
    const accounts: Account[] = []
    for await (const [key, value] of this.#entries()) {
      if (key.startsWith(ACCOUNT) && value !== null && typeof value === 'object') accounts.push(checkAccount(value))
    }
    return accounts.sort(byCreation)
  }

  async *#entries(): AsyncGenerator<[string, unknown]> {
    const iterator = this.#keyv.iterator
    if (iterator === undefined) return
    for await (const [key, value] of iterator(undefined) as AsyncGenerator<[string, unknown]>) {
      if (typeof key === 'string') yield [key, value]
    }
  }

  async close(): Promise<void> {
    if (this.#close !== undefined) await this.#close()
    else await this.#keyv.disconnect()
  }

  async #bounded<T>(promise: Promise<T>, factor = 1): Promise<T> {
    return this.#timeout === undefined ? promise : withTimeout(promise, this.#timeout * factor, `the key store (${this.prefix})`)
  }

  async #mustSet(key: string, value: unknown): Promise<void> {
    // Keyv reports some adapter failures as `false` rather than throwing.
    if ((await this.#bounded(this.#keyv.set(key, value))) === false) {
      throw new StoreError(
        `user-verification: the key store did not accept a write (${this.prefix}). Check that the store is reachable and writable.`
      )
    }
  }
}
