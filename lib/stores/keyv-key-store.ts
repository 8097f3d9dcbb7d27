// Key store over any Keyv instance (SQLite, Redis, PostgreSQL adapters): a record per digest plus an id → digest index.
import type Keyv from 'keyv'
import type { KeyRecord, KeyStore, Logger } from '../types.js'
import { pickPatch } from './memory-store.js'
import { byCreation, checkRecord, duplicateKeyError } from './store-args.js'
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

/**
 * Stores each {@link KeyRecord} under `hash:<digest>` and an index entry `id:<id>` → digest in one
 * Keyv namespace, so the per-request lookup by digest is a single read; the CLI's lookups by id
 * take two. `list()` walks the Keyv iterator (SQLite, Redis and PostgreSQL adapters have one)
 * and sorts oldest first.
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

  constructor(keyv: Keyv, options: KeyvKeyStoreOptions = {}) {
    if (keyv === null || typeof keyv !== 'object' || typeof keyv.get !== 'function' || typeof keyv.set !== 'function') {
      throw new TypeError(
        "user-verification: KeyvKeyStore needs a Keyv instance, e.g. `new Keyv({ store, namespace: 'uv-keys', throwOnErrors: true })`."
      )
    }
    if (keyv.throwOnErrors !== true) {
      throw new TypeError(
        'user-verification: the Keyv instance of the key store must be created with `throwOnErrors: true`; otherwise a store outage reads as "no such key". Pass `{ throwOnErrors: true }` to `new Keyv(...)`.'
      )
    }
    if (typeof keyv.iterator !== 'function') {
      throw new TypeError(
        'user-verification: the Keyv adapter of the key store has no iterator, so keys cannot be listed. Use @keyv/sqlite, @keyv/redis, @keyv/postgres or a Map.'
      )
    }
    this.#keyv = keyv
    this.localKeys = options.localKeys ?? false
    this.prefix = options.prefix ?? keyv.namespace ?? (keyv.store as { namespace?: string }).namespace ?? ''
    this.#close = options.close
    this.#timeout = options.timeout
    this.#onChange = options.onChange
    const logger = options.logger ?? console
    keyv.on('error', (error: unknown) => {
      logger.error('user-verification: key store error', {
        prefix: this.prefix,
        error: error instanceof Error ? error.message : String(error)
      })
    })
  }

  /** Reads once, so an unreachable or unusable backend is refused at start-up rather than on the first request. */
  async init(): Promise<void> {
    await this.#bounded(this.#keyv.get(ID + '__uv_probe__'))
  }

  async getByHash(hash: string): Promise<KeyRecord | undefined> {
    const value = await this.#bounded(this.#keyv.get<KeyRecord>(HASH + hash))
    if (value === undefined || value === null) return undefined
    const record = checkRecord(value)
    return record.hash === hash ? record : undefined
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
    const [idTaken, hashTaken] = await this.#bounded(Promise.all([this.#keyv.has(ID + r.id), this.#keyv.has(HASH + r.hash)]))
    if (idTaken) throw duplicateKeyError('id', r.id)
    if (hashTaken) throw duplicateKeyError('hash', r.id)
    // Index first, record second: a crash in between leaves an id that resolves to nothing and
    // a key that was never shown, never a usable key that cannot be listed or revoked.
    await this.#mustSet(ID + r.id, r.hash)
    await this.#mustSet(HASH + r.hash, r)
    await this.#onChange?.()
  }

  async update(id: string, patch: Partial<Pick<KeyRecord, 'plan' | 'revokedAt' | 'label'>>): Promise<KeyRecord | undefined> {
    const current = await this.getById(id)
    if (current === undefined) return undefined
    const next = checkRecord({ ...current, ...pickPatch(patch) })
    await this.#mustSet(HASH + current.hash, next)
    // After the write: whoever sees the new version re-reads and finds the new record.
    await this.#onChange?.()
    return next
  }

  async list(): Promise<KeyRecord[]> {
    return this.#bounded(this.#list(), 10)
  }

  async #list(): Promise<KeyRecord[]> {
    const iterator = this.#keyv.iterator
    if (iterator === undefined) return []
    const records: KeyRecord[] = []
    for await (const [key, value] of iterator(undefined) as AsyncGenerator<[string, unknown]>) {
      if (typeof key === 'string' && key.startsWith(HASH) && value !== null && typeof value === 'object') {
        records.push(checkRecord(value))
      }
    }
    return records.sort(byCreation)
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
      throw new Error(
        `user-verification: the key store did not accept a write (${this.prefix}). Check that the store is reachable and writable.`
      )
    }
  }
}
