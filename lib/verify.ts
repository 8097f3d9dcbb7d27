// The library core: verify an email and names with no HTTP, keys or quota.
import { createEmailVerifier, type EmailVerifierOptions } from './email/verifier.js'
import { nameModelChannel, type NameModelMessage } from './diagnostics.js'
import { UserVerificationError, VerifierError, toError } from './errors.js'
import { loadNameModel } from './names/verifier.js'
import type { EmailVerifier, NameVerification, NameVerifier, VerifyInput, VerifyResult } from './types.js'

/** Options of {@link createVerifier}: the email verifier's options plus replaceable verifiers. */
export interface VerifierOptions extends EmailVerifierOptions {
  /** Replaces the email verifier. Defaults to one built from the other options. */
  emailVerifier?: EmailVerifier
  /** Replaces the name model. Defaults to the model shipped in the package. */
  nameVerifier?: NameVerifier
}

/** The fields of a request that hold a value, trimmed; empty and whitespace-only ones are left out. */
export interface PresentFields {
  email?: string
  firstname?: string
  lastname?: string
  /** How many of the three hold a value: the units the request costs. */
  count: number
}

/** Trims the three fields and keeps the non-empty ones. */
export function presentFields(input: VerifyInput): PresentFields {
  const fields: PresentFields = { count: 0 }
  for (const name of ['email', 'firstname', 'lastname'] as const) {
    const value = input[name]
    if (typeof value !== 'string') continue
    const trimmed = value.trim()
    if (trimmed === '') continue
    fields[name] = trimmed
    fields.count++
  }
  return fields
}

/** A ready verifier; `close` releases the DNS cache timers. */
export interface Verifier {
  /** The reason the name model is unavailable, or `undefined` when it loaded. */
  readonly nameModelError: Error | undefined
  verify(input: VerifyInput): Promise<VerifyResult>
  /** Checks already-trimmed fields (the middleware's path). Rejects with VerifierError. */
  verifyFields(fields: PresentFields): Promise<VerifyResult>
  close(): void
}

/** Builds the email verifier and loads the name model once. */
export function createVerifier(options: VerifierOptions = {}): Verifier {
  const { emailVerifier, nameVerifier, ...emailOptions } = options
  const email = emailVerifier ?? createEmailVerifier(emailOptions)
  let names: NameVerifier | undefined = nameVerifier
  let nameModelError: Error | undefined
  if (names === undefined) {
    try {
      names = loadNameModel()
    } catch (error) {
      nameModelError = new UserVerificationError(
        'ERR_UV_MODEL_LOAD',
        `the name model could not be loaded: ${toError(error).message.replace(/^user-verification: /, '')}`,
        { cause: error }
      )
    }
  }

  function predictNames(fields: PresentFields): NameVerification | undefined {
    if (fields.firstname === undefined && fields.lastname === undefined) return undefined
    if (names === undefined) throw new VerifierError('the name model is not loaded', { cause: nameModelError })
    const result: NameVerification = {}
    // Timed only when someone listens (the server's metrics): the clock reads are not free.
    const start = nameModelChannel.hasSubscribers ? process.hrtime.bigint() : undefined
    try {
      if (fields.firstname !== undefined) result.firstname = names.predict(fields.firstname)
      if (fields.lastname !== undefined) result.lastname = names.predict(fields.lastname)
      if (start !== undefined)
        nameModelChannel.publish({ seconds: Number(process.hrtime.bigint() - start) / 1e9 } satisfies NameModelMessage)
    } catch (error) {
      throw new VerifierError('the name model failed', { cause: error })
    }
    return result
  }

  async function verifyFields(fields: PresentFields): Promise<VerifyResult> {
    // Names first: they are synchronous, so a broken model fails before any DNS work starts.
    const nameVerification = predictNames(fields)
    const result: VerifyResult = { request_count: fields.count }
    if (fields.email !== undefined) {
      try {
        result.email_verification = await email.verify(fields.email)
      } catch (error) {
        throw new VerifierError('the email verifier failed', { cause: error })
      }
    }
    if (nameVerification !== undefined) result.name_verification = nameVerification
    return result
  }

  return {
    nameModelError,
    verifyFields,
    verify: (input) => verifyFields(presentFields(input)),
    close: () => email.close?.()
  }
}

let shared: Verifier | undefined

/**
 * Verifies an email and/or names with the default settings (system DNS, shipped model).
 * Rejects only when a verifier itself fails; bad input is a result, not an error.
 */
export function verify(input: VerifyInput): Promise<VerifyResult> {
  shared ??= createVerifier()
  return shared.verify(input)
}
