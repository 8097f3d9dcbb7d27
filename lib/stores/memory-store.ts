// In-process account, key and quota stores: for tests and `memory://`; nothing survives the process.
import type {
  Account,
  AccountPatch,
  ConsumeResult,
  DailyUsage,
  KeyChange,
  KeyPatch,
  KeyRecord,
  KeyStore,
  MonthlyUsage,
  QuotaStore
} from '../types.js'
import {
  byCreation,
  canonicalEmail,
  checkAccount,
  checkDay,
  checkExpiresAt,
  checkLimit,
  checkName,
  checkRecord,
  checkUnits,
  mergeKeyChange,
  daysBetween,
  duplicateAccountError,
  duplicateKeyError,
  monthsBetween,
  pickAccountPatch,
  pickKeyPatch,
  unknownAccountError
} from './store-args.js'

/** Options of the in-memory stores. */
export interface MemoryStoreOptions {
  /** Namespace reported as `prefix`. Defaults to `'uv'`. */
  prefix?: string
}

/**
 * Accounts and keys in `Map`s. `localKeys` is `true`: no other process sees them.
 * Records are copied in and out, so callers cannot change stored state by mutation.
 */
export class MemoryKeyStore implements KeyStore {
  readonly localKeys = true
  readonly prefix: string
  readonly #byId = new Map<string, KeyRecord>()
  readonly #idByHash = new Map<string, string>()
  readonly #accounts = new Map<string, Account>()
  readonly #accountByEmail = new Map<string, string>()

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
    if (!this.#accounts.has(r.accountId)) throw unknownAccountError(r.accountId)
    this.#byId.set(r.id, r)
    this.#idByHash.set(r.hash, r.id)
  }

  async update(id: string, patch: KeyPatch): Promise<KeyRecord | undefined> {
    const current = this.#byId.get(id)
    if (current === undefined) return undefined
    const next = checkRecord({ ...current, ...pickKeyPatch(patch) })
    this.#byId.set(id, next)
    return { ...next }
  }

  /** Synchronous between its read and its write, so nothing interleaves: see {@link KeyStore.updateKey}. */
  async updateKey(id: string, change: KeyChange): Promise<KeyRecord | undefined> {
    const current = this.#byId.get(id)
    if (current === undefined) return undefined
    const next = checkRecord(mergeKeyChange(current, change))
    this.#byId.set(id, next)
    return { ...next }
  }

  async list(): Promise<KeyRecord[]> {
    return [...this.#byId.values()].map((r) => ({ ...r })).sort(byCreation)
  }

  async listByAccount(accountId: string): Promise<KeyRecord[]> {
    return (await this.list()).filter((r) => r.accountId === accountId)
  }

  async getAccount(id: string): Promise<Account | undefined> {
    const account = this.#accounts.get(id)
    return account === undefined ? undefined : { ...account }
  }

  async getAccountByEmail(email: string): Promise<Account | undefined> {
    const id = this.#accountByEmail.get(canonicalEmail(email))
    return id === undefined ? undefined : this.getAccount(id)
  }

  async createAccount(account: Account): Promise<void> {
    const a = checkAccount(account)
    if (this.#accounts.has(a.id)) throw duplicateAccountError('id', a.id)
    const email = a.email === null ? null : canonicalEmail(a.email)
    if (email !== null && this.#accountByEmail.has(email)) throw duplicateAccountError('email', a.id)
    this.#accounts.set(a.id, a)
    if (email !== null) this.#accountByEmail.set(email, a.id)
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined> {
    const current = this.#accounts.get(id)
    if (current === undefined) return undefined
    const next = checkAccount({ ...current, ...pickAccountPatch(patch) })
    const before = current.email === null ? null : canonicalEmail(current.email)
    const after = next.email === null ? null : canonicalEmail(next.email)
    if (after !== before) {
      if (after !== null && this.#accountByEmail.has(after)) throw duplicateAccountError('email', id)
      if (before !== null) this.#accountByEmail.delete(before)
      if (after !== null) this.#accountByEmail.set(after, id)
    }
    this.#accounts.set(id, next)
    return { ...next }
  }

  async listAccounts(): Promise<Account[]> {
    return [...this.#accounts.values()].map((a) => ({ ...a })).sort(byCreation)
  }

  async close(): Promise<void> {}
}

interface Usage {
  used: number
  expiresAt: number
}

/**
 * Usage in a `Map`: month totals and days. Atomic because JavaScript runs one callback at a
 * time; `localKeys` is `true`, so the server refuses it with several workers. Expired entries
 * are dropped when next touched or purged. `now` (ms since the epoch) is injectable; defaults
 * to `Date.now`.
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

  #add(key: string, amount: number, expiresAt: number): number {
    const usage = this.#live(key)
    const used = (usage?.used ?? 0) + amount
    this.#usage.set(key, { used, expiresAt: Math.max(expiresAt, usage?.expiresAt ?? 0) })
    return used
  }

  #take(key: string, amount: number): void {
    const usage = this.#live(key)
    if (usage !== undefined) usage.used = Math.max(0, usage.used - amount)
  }

  async consume(
    accountId: string,
    period: string,
    amount: number,
    limit: number,
    expiresAt: number,
    _operation?: string,
    day?: string
  ): Promise<ConsumeResult> {
    const key = slot(accountId, period)
    checkUnits('amount', amount)
    const max = checkLimit(limit)
    const expires = checkExpiresAt(expiresAt)
    if (day !== undefined) checkDay(day, period)
    const used = this.#live(key)?.used ?? 0
    if (used + amount > max) return { granted: false, used }
    const total = this.#add(key, amount, expires)
    if (day !== undefined) this.#add(slot(accountId, day), amount, expires)
    return { granted: true, used: total }
  }

  async refund(accountId: string, period: string, amount: number, day?: string): Promise<void> {
    const key = slot(accountId, period)
    checkUnits('amount', amount)
    if (day !== undefined) checkDay(day, period)
    this.#take(key, amount)
    if (day !== undefined) this.#take(slot(accountId, day), amount)
  }

  async get(accountId: string, period: string): Promise<number> {
    return this.#live(slot(accountId, period))?.used ?? 0
  }

  async daily(accountId: string, from: string, to: string): Promise<DailyUsage[]> {
    return daysBetween(from, to).flatMap((day) => {
      const units = this.#live(slot(accountId, day))?.used ?? 0
      return units > 0 ? [{ day, units }] : []
    })
  }

  async monthly(accountId: string, from: string, to: string): Promise<MonthlyUsage[]> {
    return monthsBetween(from, to).flatMap((period) => {
      const units = this.#live(slot(accountId, period))?.used ?? 0
      return units > 0 ? [{ period, units }] : []
    })
  }

  async purge(now: number): Promise<void> {
    for (const [key, usage] of this.#usage) if (usage.expiresAt <= now) this.#usage.delete(key)
  }

  async close(): Promise<void> {}
}

function slot(accountId: string, when: string): string {
  return `${checkName('accountId', accountId)}\u0000${checkName('period', when)}`
}
