// Public types: verification results, the pluggable verifier and store contracts, and options.

/** Outcome of the DNS check of an email's domain. `Unknown` means our resolver could not tell. */
export type DnsCheck = 'Pass' | 'Fail' | 'Unknown'

/** Outcome of the syntax check of an email address. */
export type SyntaxCheck = 'Pass' | 'Fail'

/** The `email_verification` object of a 200 response (DESIGN §2.2, plus documented extras). */
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
}

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

/** An API key as stored. The key itself is never stored, only its SHA-256 digest. */
export interface KeyRecord {
  /** Short public id (`key_` + 12 hex), safe to print and log; quota is counted per id. */
  id: string
  /** Lower-case hex SHA-256 digest of the full key. */
  hash: string
  /** Plan name, a key of the `plans` option. */
  plan: string
  label: string | null
  /** ISO 8601 creation time. */
  createdAt: string
  /** ISO 8601 revocation time, or `null` while the key is active. */
  revokedAt: string | null
}

/**
 * Where API keys live. Every method is required except `init` and `close`.
 * Failures must reject: a store error must never look like "no such key".
 * `init` is awaited once before the first request; `close` releases connections.
 */
export interface KeyStore {
  /** `true` when the data lives in this process only (no other process sees it). */
  readonly localKeys: boolean
  /** Namespace that separates this store's entries from other users of the same backend. */
  readonly prefix: string
  init?(): Promise<void>
  /** The record whose `hash` is this digest, or `undefined` when there is none. */
  getByHash(hash: string): Promise<KeyRecord | undefined>
  /** The record with this id, or `undefined`. */
  getById(id: string): Promise<KeyRecord | undefined>
  /** Adds a record; rejects when its id or hash already exists. */
  create(record: KeyRecord): Promise<void>
  /** Changes plan and/or revocation; resolves to the updated record, `undefined` if unknown id. */
  update(id: string, patch: Partial<Pick<KeyRecord, 'plan' | 'revokedAt' | 'label'>>): Promise<KeyRecord | undefined>
  /** All records, oldest first. */
  list(): Promise<KeyRecord[]>
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

/**
 * Where monthly usage lives. Every method is required except `init` and `close`.
 * `consume` is atomic and conditional: it adds `amount` only if `used + amount <= limit`,
 * all-or-nothing, and concurrent calls (from any process sharing the store, unless
 * `localKeys` is `true`) never together pass the limit. A resolved `consume` is durable:
 * a process crash after it resolves does not lose the units.
 * Usage of a period may be dropped after `expiresAt` (ms since the epoch).
 */
export interface QuotaStore {
  /** `true` when atomicity holds only inside this process; such a store is refused with workers. */
  readonly localKeys: boolean
  readonly prefix: string
  init?(): Promise<void>
  /**
   * `operation` (optional) names this call so that {@link QuotaStore.cancel} can undo it when the
   * call rejected after the store may already have applied it (a reply lost to an outage).
   */
  consume(keyId: string, period: string, amount: number, limit: number, expiresAt: number, operation?: string): Promise<ConsumeResult>
  /** Gives back units consumed by a request that then failed; never goes below zero. */
  refund(keyId: string, period: string, amount: number): Promise<void>
  /**
   * Optional, for stores whose replies can be lost (network stores): undoes the consume named
   * `operation` if the store applied it and it was not cancelled before, and otherwise fences the
   * name off so that the consume, if a hung server still runs it later, is refused; resolves
   * `true` when units were given back, `false` when there was nothing to undo. Idempotent. The
   * middleware calls it, retrying until the store answers, for every consume that rejected.
   */
  cancel?(operation: string, keyId: string, period: string, amount: number): Promise<boolean>
  /**
   * Optional: a number that changes whenever a key record is created or changed (the key store
   * of the same backend bumps it after each write). A store that has it also returns it from
   * `consume`, in the same atomic step, which lets the middleware cache key records and still
   * see every revocation or plan change on the very next request.
   */
  keysVersion?(): Promise<number>
  /** Usage of `keyId` in `period` (0 when none). */
  get(keyId: string, period: string): Promise<number>
  close?(): Promise<void>
}

/** A key store and a quota store that belong together. */
export interface Stores {
  keys: KeyStore
  quota: QuotaStore
  /** Closes both (and any connection they share). */
  close(): Promise<void>
  /** Redis stores only: sends one raw command on the shared connection (the rate-limit counters use it). */
  sendCommand?: (args: string[]) => Promise<unknown>
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
