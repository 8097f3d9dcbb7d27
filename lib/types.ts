// Public types: verification results, the pluggable verifier and store contracts, and options.

/** Outcome of the DNS check of an email's domain. `Unknown` means our resolver could not tell. */
export type DnsCheck = 'Pass' | 'Fail' | 'Unknown'

/** Outcome of the syntax check of an email address. */
export type SyntaxCheck = 'Pass' | 'Fail'

/** The `email_verification` object of a 200 response (CONTRIBUTING.md#the-200-body, plus documented extras). */
export interface EmailVerification {
  /** The trimmed address that was checked. */
  emailAddress: string
  /** The spec's name for the disposable flag: `true` = disposable/temporary address. */
  'the service': boolean
  /** Same value as `"the service"`, under a self-explaining name. */
  disposable: boolean
  /** Text before the last `@` (the whole value when there is no `@`). */
  username: string
  /** Text after the last `@`, lower-cased (`""` when there is no `@`). */
  domain: string
  dnsCheck: DnsCheck
  /** Spelled as the spec spells it. */
  syntexCheck: SyntaxCheck
  /** A "did you mean" address for a typo of a popular domain, or `null`. */
  suggestion: string | null
  /** `true` for role accounts such as `admin@`, `info@`, `noreply@`. */
  role: boolean
  /** `true` for free mail providers (gmail.com, outlook.com, …). */
  free: boolean
}

/** Label of a name prediction: `LABEL_1` a real name, `LABEL_0` junk. */
export type NameLabel = 'LABEL_1' | 'LABEL_0'

/** One entry of `name_verification`. */
export interface NamePrediction {
  /** The trimmed name that was evaluated. */
  value: string
  prediction: NameLabel
  /** Probability of the predicted label, in [0.5, 1], rounded to 4 decimals. */
  confidence: number
  /**
   * Beyond the spec: for `LABEL_0`, which kind of junk the value is, so a form can say what to fix; `null` for
   * `LABEL_1`. The built-in name verifier always sets it; a custom {@link NameVerifier} may leave it out.
   */
  reason?: NameJunkReason | null
}

/** Kinds of junk a rejected name is (see README, "Name verification"). */
export type NameJunkReason =
  | 'keyboard'
  | 'random'
  | 'repeated'
  | 'placeholder'
  | 'profanity'
  | 'phrase'
  | 'digits'
  | 'symbols'
  | 'email_or_url'
  | 'markup_or_code'
  | 'mixed_scripts'
  | 'too_long'

/** The `name_verification` object: a key per non-empty name. */
export interface NameVerification {
  firstname?: NamePrediction
  lastname?: NamePrediction
}

/** Input of the library core; `null`, `undefined`, `""` and whitespace all mean "not provided". */
export interface VerifyInput {
  email?: string | null
  firstname?: string | null
  lastname?: string | null
}

/** Result of the library core. */
export interface VerifyResult {
  /** Number of non-empty fields, i.e. the units a request consumes. */
  request_count: number
  email_verification?: EmailVerification
  name_verification?: NameVerification
}

/**
 * Checks one email address. Required: `verify`, which must never reject for a bad address
 * (bad input is a result, not an error); it rejects only when the verifier itself failed.
 * Optional: `close`, which releases timers and sockets.
 */
export interface EmailVerifier {
  verify(address: string): Promise<EmailVerification>
  close?(): void
}

/**
 * Classifies one name. Required: `predict`, synchronous and pure; it throws only when the
 * model itself is broken (the middleware answers 503 and gives the units back).
 */
export interface NameVerifier {
  predict(value: string): NamePrediction
}

/**
 * An account: it owns the plan and the usage, and holds any number of keys (CONTRIBUTING.md#accounts-keys-and-quota).
 * Names and emails are personal data: never log them.
 */
export interface Account {
  /** Public id (`acct_` + hex), safe to print and log; quota and history are counted per account. */
  id: string
  /** Display name. */
  name: string
  /** Contact address as typed, or `null`; unique across accounts in its `canonicalEmail()` form. */
  email: string | null
  /** Plan name, a key of the `plans` option; a change applies to the next request. */
  plan: string
  /** ISO 8601 creation time. */
  createdAt: string
  /** ISO 8601 time the account was disabled (its keys answer 401), or `null`. */
  disabledAt: string | null
}

/** The fields of an {@link Account} that `updateAccount` may change. */
export type AccountPatch = Partial<Pick<Account, 'name' | 'email' | 'plan' | 'disabledAt'>>

/** An API key as stored. The key itself is never stored, only its SHA-256 digest. */
export interface KeyRecord {
  /** Short public id (`key_` + 12 hex), safe to print and log. */
  id: string
  /** Lower-case hex SHA-256 digest of the full key. */
  hash: string
  /** The account whose plan and usage this key draws on. */
  accountId: string
  label: string | null
  /** ISO 8601 creation time. */
  createdAt: string
  /** ISO 8601 revocation time, or `null` while the key is not revoked. */
  revokedAt: string | null
  /** ISO 8601 time after which the key answers 401 (the grace period of a rotation), or `null`. */
  expiresAt: string | null
}

/** The fields of a {@link KeyRecord} that `update` may change. */
export type KeyPatch = Partial<Pick<KeyRecord, 'label' | 'revokedAt' | 'expiresAt'>>

/**
 * What {@link KeyStore.updateKey} applies to a key as the store holds it at that moment. It only
 * ever retires a key further: a revocation already there stays (with its time), an end already
 * earlier stays. `restoreEnd` is the one way back: it undoes an end the caller set itself (the
 * end goes back to `to` only while it is still `from`), so it never undoes anyone else's.
 */
export interface KeyChange {
  /** Revokes the key at this time; a key already revoked keeps its own time. */
  revokedAt?: string
  /** The key stops working at this time, unless it already stops earlier. */
  expiresAt?: string
  /** Puts back the end a key had before the caller set `from`; nothing happens if the end is no longer `from`. */
  restoreEnd?: { from: string; to: string | null }
}

/**
 * Where accounts and their API keys live. Every method is required except `init` and `close`.
 * Failures must reject: a store error must never look like "no such key".
 * `init` is awaited once before the first request (and upgrades a store written by release
 * 0.1.0 in place); `close` releases connections.
 */
export interface KeyStore {
  /** `true` when the data lives in this process only (no other process sees it). */
  readonly localKeys: boolean
  /** Namespace that separates this store's entries from other users of the same backend. */
  readonly prefix: string
  init?(): Promise<void>
  /** The key whose `hash` is this digest, or `undefined` when there is none. */
  getByHash(hash: string): Promise<KeyRecord | undefined>
  /**
   * Optional: the key with this digest and its account, read together (one round trip where the
   * backend allows it); what the middleware calls on every request when present. Both `undefined`
   * when there is no such key.
   */
  getKeyWithAccount?(hash: string): Promise<{ record: KeyRecord | undefined; account: Account | undefined }>
  /** The key with this id, or `undefined`. */
  getById(id: string): Promise<KeyRecord | undefined>
  /** Adds a key; rejects when its id or hash already exists or its account does not. */
  create(record: KeyRecord): Promise<void>
  /** Changes label, revocation and/or expiry; resolves to the updated key, `undefined` if unknown id. */
  update(id: string, patch: KeyPatch): Promise<KeyRecord | undefined>
  /**
   * Revokes or ends a key, merged with the record as it is at the write ({@link KeyChange}):
   * never clears a revocation, never moves an end later (except `restoreEnd`'s own), and two
   * calls for one key through one store instance never interleave their read and write. Resolves
   * to the key as written, `undefined` for an unknown id. What the dashboard and `rotateKey` use.
   */
  updateKey(id: string, change: KeyChange): Promise<KeyRecord | undefined>
  /** All keys, oldest first. */
  list(): Promise<KeyRecord[]>
  /** The keys of one account, oldest first (`[]` for an unknown account). */
  listByAccount(accountId: string): Promise<KeyRecord[]>
  /** The account with this id, or `undefined`. */
  getAccount(id: string): Promise<Account | undefined>
  /** The account with this email (compared in `canonicalEmail()` form: any spelling of the mailbox), or `undefined`. */
  getAccountByEmail(email: string): Promise<Account | undefined>
  /** Adds an account; rejects when its id or email is taken. */
  createAccount(account: Account): Promise<void>
  /** Changes name, email, plan and/or disabledAt; resolves to the updated account, `undefined` if unknown id. */
  updateAccount(id: string, patch: AccountPatch): Promise<Account | undefined>
  /** All accounts, oldest first. */
  listAccounts(): Promise<Account[]>
  close?(): Promise<void>
}

/** Answer of {@link QuotaStore.consume}. */
export interface ConsumeResult {
  /** `true` when the units were added; `false` when adding them would pass the limit. */
  granted: boolean
  /** Usage of the period after this call (unchanged when not granted). */
  used: number
  /** Stores with {@link QuotaStore.keysVersion}: the key-records version, read atomically with this call. */
  keysVersion?: number
}

/** Units of one account on one UTC day. */
export interface DailyUsage {
  /** `YYYY-MM-DD` (UTC). */
  day: string
  units: number
}

/** Units of one account in one calendar month (UTC). */
export interface MonthlyUsage {
  /** `YYYY-MM` (UTC). */
  period: string
  units: number
}

/**
 * Where usage lives, per account. Every method is required except `init`, `close`, `cancel`,
 * `keysVersion` and `purge`.
 * `consume` is atomic and conditional: it adds `amount` to the account's month only if
 * `used + amount <= limit`, all-or-nothing, and concurrent calls (from any process sharing the
 * store, unless `localKeys` is `true`) never together pass the limit. When `day` is given the
 * same units are added to that day's history in the same atomic step (one round trip).
 * A resolved `consume` is durable: a process crash after it resolves does not lose the units.
 * Month totals and days may be dropped after `expiresAt` (ms since the epoch); the middleware
 * keeps them at least 13 months.
 */
export interface QuotaStore {
  /** `true` when atomicity holds only inside this process; such a store is refused with workers. */
  readonly localKeys: boolean
  readonly prefix: string
  /** Prepares the store and upgrades usage written by release 0.1.0 (per key) in place. */
  init?(): Promise<void>
  /**
   * `operation` (optional) names this call so that {@link QuotaStore.cancel} can undo it when the
   * call rejected after the store may already have applied it (a reply lost to an outage).
   * `day` (`YYYY-MM-DD`, inside `period`) is where the units go in the daily history.
   */
  consume(
    accountId: string,
    period: string,
    amount: number,
    limit: number,
    expiresAt: number,
    operation?: string,
    day?: string
  ): Promise<ConsumeResult>
  /** Gives back units consumed by a request that then failed (month and `day`); never goes below zero. */
  refund(accountId: string, period: string, amount: number, day?: string): Promise<void>
  /**
   * Optional, for stores whose replies can be lost (network stores): undoes the consume named
   * `operation` (month and day) if the store applied it and it was not cancelled before, and
   * otherwise fences the name off so that the consume, if a hung server still runs it later, is
   * refused; resolves
   * `true` when units were given back, `false` when there was nothing to undo. Idempotent. The
   * middleware calls it, retrying until the store answers, for every consume that rejected.
   */
  cancel?(operation: string, accountId: string, period: string, amount: number, day?: string): Promise<boolean>
  /**
   * Optional: a number that changes whenever an account or key record is created or changed (the
   * key store of the same backend bumps it after each write). A store that has it also returns
   * it from `consume`, in the same atomic step, which lets its {@link Stores.readKey} cache key
   * and account records and still see every revocation, plan change or disabling on the very
   * next request.
   */
  keysVersion?(): Promise<number>
  /** Usage of `accountId` in `period` (0 when none). */
  get(accountId: string, period: string): Promise<number>
  /** Units per day from `from` to `to` (`YYYY-MM-DD`, inclusive, at most 800 days), days with units only, oldest first. */
  daily(accountId: string, from: string, to: string): Promise<DailyUsage[]>
  /** Month totals from `from` to `to` (`YYYY-MM`, inclusive, at most 120 months), months with units only, oldest first. */
  monthly(accountId: string, from: string, to: string): Promise<MonthlyUsage[]>
  /** Optional: drops usage whose `expiresAt` is at or before `now` now (stores that expire by themselves need none). */
  purge?(now: number): Promise<void>
  close?(): Promise<void>
}

/** A key and its account as the request path reads them (see {@link Stores.readKey}). */
export interface KeyRead {
  record: KeyRecord | undefined
  account: Account | undefined
  /**
   * The key-records version the read was made under, for stores with {@link QuotaStore.keysVersion}
   * (absent otherwise). A consume that reports another version ran after the key or its account
   * may have changed.
   */
  version?: number
}

/** A key store and a quota store that belong together. */
export interface Stores {
  keys: KeyStore
  quota: QuotaStore
  /**
   * Optional: how the request path reads a key and its account, for stores that can do better
   * than asking the key store every time (SQLite's exact cache, `lib/stores/key-cache.ts`). It
   * may answer without a promise (a cached record: most requests). Its answers carry the
   * `version` they were read under; the quota store's `consume` reports the version it ran under,
   * in the same atomic step, and the middleware undoes a consume that ran under another version.
   * `held`, an earlier answer for this digest, asks whether it is still current: `held` itself
   * when it is, else a fresh read (before a refusal decided without a consume, and after a consume
   * under another version). Without it, the middleware reads the key store on every request.
   */
  readKey?(hash: string, now: number, held?: KeyRead): KeyRead | Promise<KeyRead>
  /** Closes both (and any connection they share). */
  close(): Promise<void>
}

/**
 * Stores opened by `openStores('redis://…')`: they also carry the shared connection's raw
 * command, which the rate-limit counters use to count where the quota counts. A capability of
 * Redis stores only (see `isRedisStores`), so the generic {@link Stores} does not mention it.
 */
export interface RedisStores extends Stores {
  /** Sends one raw command on the shared connection, bounded by the store's command timeout. */
  sendCommand(args: string[]): Promise<unknown>
}

/** Anything with `warn` and `error` (and optionally `info`), such as `console` or a pino logger. */
export interface Logger {
  info?(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

/** The subset of `dns.promises.Resolver` the DNS check uses; inject one in unit tests. */
export interface ResolverLike {
  resolveMx(hostname: string): Promise<Array<{ exchange: string; priority: number }>>
  resolve4(hostname: string): Promise<string[]>
  resolve6(hostname: string): Promise<string[]>
  cancel?(): void
  setServers?(servers: string[]): void
}
