// Error classes with stable codes, and the exact HTTP error bodies of the API contract.

/** Codes carried by thrown errors and log lines; documented in the README's error table. */
export const errorCodes = {
  ERR_UV_OPTIONS: 'An option has an impossible value; the message says which and how to fix it.',
  ERR_UV_STORE: 'The key or quota store failed; the request was answered 503 and nothing was consumed.',
  ERR_UV_VERIFIER: 'A verifier (name model or email check) failed; the request was answered 503 and no unit was consumed.',
  ERR_UV_MODEL_LOAD: 'The name model could not be loaded; requests with names get 503 until it loads.',
  ERR_UV_STORE_TIMEOUT: 'A store call took longer than its bound (commandTimeout); it was abandoned and the request answered 503.',
  ERR_UV_DUPLICATE_KEY: 'A key with the same id or digest already exists in the key store.',
  ERR_UV_DUPLICATE_ACCOUNT: 'An account with the same id or email already exists in the key store.',
  ERR_UV_UNKNOWN_ACCOUNT: 'No account with this id: a key was created for it, or a command named it.',
  ERR_UV_UNKNOWN_KEY: 'No key with this id (rotate, revoke).',
  ERR_UV_KEY_INACTIVE: 'The key is revoked or expired, so it cannot be rotated; create a new key instead.',
  ERR_UV_STORE_DRIVER: 'The store URL needs a driver package that is not installed (or a newer Node); the message names it.',
  ERR_UV_REFUND:
    'Giving back the units of a request whose client left before its answer failed; the usage may be too high by that request.',
  WRN_UV_UNKNOWN_OPTION: 'An option key is not known; it is ignored (check its spelling).',
  WRN_UV_UNKNOWN_PLAN: 'An account names a plan that the plans option does not define; it is treated as a limit of 0.',
  WRN_UV_REDIS_NOT_DURABLE: 'The Redis server keeps no append-only file, so acknowledged usage can be lost if Redis itself restarts.',
  WRN_UV_HOST_PARSER:
    'A body parser runs before the middleware mounted on a Router; mount it on the application (app.use) or the parser after it.',
  WRN_UV_DNS_TIMEOUT: 'dnsTimeout is very short; most real lookups will answer Unknown.',
  WRN_UV_CONNECTIONS: 'The server reached its cap on open connections (--max-connections); new connections are dropped until some close.',
  WRN_UV_CONNECTIONS_PER_ADDRESS:
    'One client address (IPv6: its /56) reached its cap on open connections (--max-connections-per-address); its new connections are closed until some of its own close.',
  WRN_UV_PIPELINING:
    'A connection had more than 32 pipelined requests waiting for the answers before theirs; it was closed (none of them was charged).',
  WRN_UV_REFUNDED:
    'Units consumed for requests whose client left before their answer were given back (at most one line a minute, with the count).',
  WRN_UV_PURGE: 'Deleting expired quota rows failed; the store keeps working and the next purge retries.',
  WRN_UV_RATE_LIMIT: 'The rate limiter reported a configuration problem or could not reach its counters; the message says which.'
} as const

/** Every error and warning code of the package. */
export type ErrorCode = keyof typeof errorCodes

/**
 * Base class of the package's errors: `code` is stable, the message may change. Option errors
 * stay `TypeError`/`RangeError` (Node's own convention, `instanceof TypeError` holds) and are
 * instances of this class too: `instanceof UserVerificationError` holds for every error the
 * package throws with one of its codes.
 */
export class UserVerificationError extends Error {
  readonly code: ErrorCode
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message.startsWith('user-verification: ') ? message : `user-verification: ${message}`, options)
    this.name = 'UserVerificationError'
    this.code = code
  }

  static [Symbol.hasInstance](value: unknown): boolean {
    // `this` is the class being asked (a subclass too), so it cannot be spelled by name here.
    // biome-ignore lint/complexity/noThisInStatic: the receiver is the constructor `instanceof` consults
    if (Function.prototype[Symbol.hasInstance].call(this, value)) return true
    // biome-ignore lint/complexity/noThisInStatic: as above
    return this === UserVerificationError && (value instanceof OptionsTypeError || value instanceof OptionsRangeError)
  }
}

/** The one shape of an option error: `\`<option>\` must be <expectation>, got <value>. <fix>`, code `ERR_UV_OPTIONS`. */
function optionMessage(option: string, expectation: string, got: unknown, fix: string): string {
  let shown: string
  try {
    shown = typeof got === 'function' ? 'a function' : (JSON.stringify(got) ?? String(got))
  } catch {
    shown = String(got)
  }
  return `user-verification: \`${option}\` must be ${expectation}, got ${shown}.${fix ? ` ${fix}` : ''}`
}

/** A wrong type of option value; `code` is always `ERR_UV_OPTIONS`. */
export class OptionsTypeError extends TypeError {
  readonly code = 'ERR_UV_OPTIONS' as const
}

/** An option value out of its range; `code` is always `ERR_UV_OPTIONS`. */
export class OptionsRangeError extends RangeError {
  readonly code = 'ERR_UV_OPTIONS' as const
}

/**
 * The package's one option-error helper: a `TypeError` (wrong type) or `RangeError` (out of
 * range) with `code: 'ERR_UV_OPTIONS'` and a message that names the option, what it must be,
 * what it got and how to fix it. `expectation` may be a whole sentence when `option` is `''`.
 */
export function optionError(kind: 'type' | 'range', option: string, expectation: string, got?: unknown, fix = ''): TypeError | RangeError {
  const message = option === '' ? `user-verification: ${expectation}` : optionMessage(option, expectation, got, fix)
  return kind === 'type' ? new OptionsTypeError(message) : new OptionsRangeError(message)
}

const warned = new Set<string>(
  // A --workers primary passes the codes it warned about, so each warning shows once per server.
  (typeof process === 'object' ? (process.env.UV_WARNED_CODES ?? '') : '').split(',').filter(Boolean)
)

/**
 * Logs a warning once per process and code (lru-cache's rule), as every log line of the package
 * carries its code: `logger.warn('user-verification: <message>', { code, ...fields })`.
 */
export function warnOnce(
  logger: { warn(message: string, fields?: Record<string, unknown>): void },
  code: ErrorCode & `WRN_${string}`,
  message: string,
  fields: Record<string, unknown> = {}
): void {
  if (warned.has(code)) return
  warned.add(code)
  logger.warn(`user-verification: ${message}`, { code, ...fields })
}

/**
 * For warnings that repeat per event (not per process): logs the first line at once, then at
 * most one line per `everyMs` carrying how many events it stands for (`count`), so a burst of
 * events cannot flood the log. Returns the function to call per event.
 */
export function throttledWarning(
  logger: { warn(message: string, fields?: Record<string, unknown>): void },
  code: ErrorCode & `WRN_${string}`,
  everyMs = 60_000,
  now: () => number = Date.now
): (message: string, fields?: Record<string, unknown>) => void {
  let last = Number.NEGATIVE_INFINITY
  let count = 0
  return (message, fields = {}) => {
    count++
    if (now() - last < everyMs) return
    last = now()
    logger.warn(`user-verification: ${message}`, { code, count, ...fields })
    count = 0
  }
}

/** A key or quota store call failed (unreachable, timed out, corrupt). */
export class StoreError extends UserVerificationError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_UV_STORE', message, options)
    this.name = 'StoreError'
  }
}

/** A verifier threw or could not be loaded. */
export class VerifierError extends UserVerificationError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('ERR_UV_VERIFIER', message, options)
    this.name = 'VerifierError'
  }
}

/** The message of anything thrown, without the package's `user-verification: ` prefix (for a line that has its own). */
export function withoutPrefix(thrown: unknown): string {
  return toError(thrown).message.replace(/^(?:user-verification: )+/, '')
}

/** Wraps anything thrown into an Error, so callers can rely on `.message`. */
export function toError(thrown: unknown): Error {
  return thrown instanceof Error ? thrown : new Error(String(thrown))
}

/** One entry of a FastAPI/pydantic-v2 style 422 `detail` array. */
export interface ValidationIssue {
  type: 'missing' | 'json_invalid' | 'model_attributes_type' | 'string_type'
  loc: Array<string | number>
  msg: string
  input: unknown
  ctx?: Record<string, unknown>
}

/** The `detail` strings of the API's non-422 errors, defined once. */
export const details = {
  invalidToken: 'Invalid API token',
  invalidTool: 'Invalid Tool name',
  noData: 'No valid data provided for verification',
  upgrade: 'You have to upgrade your plan',
  unavailable: 'Tool service unavailable',
  notFound: 'Not Found',
  methodNotAllowed: 'Method Not Allowed',
  tooLarge: 'Request body too large',
  badEncoding: 'Unsupported request body encoding',
  badBody: 'Invalid request body',
  tooManyRequests: 'Too Many Requests'
} as const
