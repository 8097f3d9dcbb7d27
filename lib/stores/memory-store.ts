// In-process key and quota stores: for tests and `memory://`; nothing survives the process.
import type { ConsumeResult, KeyRecord, KeyStore, QuotaStore } from '../types.js'
import { byCreation, checkExpiresAt, checkLimit, checkName, checkRecord, checkUnits, duplicateKeyError } from './store-args.js'

/** Options of the in-memory stores. */
export interface MemoryStoreOptions {
  /** Namespace reported as `prefix`. Defaults to `'uv'`. */
  prefix?: string
}

/**
 * Keys in a `Map`. `localKeys` is `true`: no other process sees them.
 * Records are copied in and out, so callers cannot change stored state by mutation.
 */
export class MemoryKeyStore implements KeyStore {
  readonly localKeys = true
  readonly prefix: string
  readonly #byId = new Map<string, KeyRecord>()
  readonly #idByHash = new Map<string, string>()

  constructor(options: MemoryStoreOptions = {}) {
    this.prefix = options.prefix ?? 'uv'
  }

  async getByHash(hash: string): Promise<KeyRecord | undefined> {
    const id = this.#idByHash.get(hash)
    return id === undefined ? undefined : this.getById(id)
  }

  async getById(id: string): Promise<KeyRecord | undefined> {
    const record = this.#byId.get(id)
    return record === undefined ? undefined : { ...record }
  }

  async create(record: KeyRecord): Promise<void> {
    const r = checkRecord(record)
    if (this.#byId.has(r.id)) throw duplicateKeyError('id', r.id)
    if (this.#idByHash.has(r.hash)) throw duplicateKeyError('hash', r.id)
    this.#byId.set(r.id, r)
    this.#idByHash.set(r.hash, r.id)
  }

  async update(id: string, patch: Partial<Pick<KeyRecord, 'plan' | 'revokedAt' | 'label'>>): Promise<KeyRecord | undefined> {
    const current = this.#byId.get(id)
    if (current === undefined) return undefined
    const next = checkRecord({ ...current, ...pickPatch(patch) })
    this.#byId.set(id, next)
    return { ...next }
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.#byId.values()].map((r) => ({ ...r })).sort(byCreation)
  }

  async close(): Promise<void> {}
}

/** Only the fields `update` may change; anything else in the patch is ignored. */
export function pickPatch(patch: Partial<Pick<KeyRecord, 'plan' | 'revokedAt' | 'label'>>): Partial<KeyRecord> {
  const out: Partial<KeyRecord> = {}
  if (patch.plan !== undefined) out.plan = patch.plan
  if (patch.revokedAt !== undefined) out.revokedAt = patch.revokedAt
  if (patch.label !== undefined) out.label = patch.label
  return out
}

interface Usage {
  used: number
  expiresAt: number
}

/**
 * Usage in a `Map`. Atomic because JavaScript runs one callback at a time; `localKeys` is
 * `true`, so the server refuses it with several workers. Expired periods are dropped when next
 * touched. `now` (ms since the epoch) is injectable; defaults to `Date.now`.
 */
export class MemoryQuotaStore implements QuotaStore {
  readonly localKeys = true
  readonly prefix: string
  readonly #usage = new Map<string, Usage>()
  readonly #now: () => number

  constructor(options: MemoryStoreOptions & { now?: () => number } = {}) {
    this.prefix = options.prefix ?? 'uv'
    this.#now = options.now ?? Date.now
  }

  #live(key: string): Usage | undefined {
    const usage = this.#usage.get(key)
    if (usage !== undefined && usage.expiresAt <= this.#now()) {
      this.#usage.delete(key)
      return undefined
    }
    return usage
  }

  async consume(keyId: string, period: string, amount: number, limit: number, expiresAt: number): Promise<ConsumeResult> {
    const key = slot(keyId, period)
    checkUnits('amount', amount)
    const max = checkLimit(limit)
    const expires = checkExpiresAt(expiresAt)
    const usage = this.#live(key)
    const used = usage?.used ?? 0
    if (used + amount > max) return { granted: false, used }
    this.#usage.set(key, { used: used + amount, expiresAt: Math.max(expires, usage?.expiresAt ?? 0) })
    return { granted: true, used: used + amount }
  }

  async refund(keyId: string, period: string, amount: number): Promise<void> {
    const key = slot(keyId, period)
    checkUnits('amount', amount)
    const usage = this.#live(key)
    if (usage !== undefined) usage.used = Math.max(0, usage.used - amount)
  }

  async get(keyId: string, period: string): Promise<number> {
    return this.#live(slot(keyId, period))?.used ?? 0
  }

  async close(): Promise<void> {}
}

function slot(keyId: string, period: string): string {
  return `${checkName('keyId', keyId)}\u0000${checkName('period', period)}`
}
