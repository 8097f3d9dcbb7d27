// Public entry: re-exports only. Each export says why it is public.

// The Express middleware, the product's main entry point.
export { userVerification, userVerification as default, modelName } from './http/middleware.js'
export type { UserVerificationMiddleware, MiddlewareMetrics } from './http/middleware.js'
export { dnsCheckChannel, nameModelChannel, type DnsCheckMessage, type NameModelMessage } from './diagnostics.js'
export type { Options } from './http/options.js'
// The library core, for checks without HTTP, keys or quota.
export { verify, createVerifier, presentFields } from './verify.js'
export type { Verifier, VerifierOptions, PresentFields } from './verify.js'
// Many rows at once (files, queues, database cursors), in order, with bounded concurrency.
export { verifyMany } from './verify-many.js'
export type { VerifyManyOptions, VerifyManyItem } from './verify-many.js'
// The verifiers on their own, to reuse or to wrap in a custom verifier.
export { createEmailVerifier } from './email/verifier.js'
export type { EmailVerifierOptions } from './email/verifier.js'
export { loadNameModel } from './names/verifier.js'
// The email syntax check alone (no DNS), for forms that take an address without verifying it (the dashboard's admin view).
export { checkEmailSyntax } from './email/syntax.js'
// The form in which stores compare addresses (one account per mailbox), for custom stores that must pass the store contract.
export { canonicalEmail } from './email/canonical.js'
// Accounts, keys, plans and stores, for the CLI, the dashboard and apps that manage keys themselves.
export { issueKey, addKey, createAccount, rotateKey, isKeyActive, generateKey, hashKey } from './quota/api-keys.js'
export type { IssuedKey, NewAccount } from './quota/api-keys.js'
export { defaultPlans, periodOf, planTable } from './quota/plans.js'
export type { Period } from './quota/plans.js'
export { openStores, assertKeyStore, assertQuotaStore } from './stores/open-stores.js'
// The exact key-record cache SQLite's stores use, for a custom store pair with `keysVersion`: `readKey: cachedKeyReader()`.
export { cachedKeyReader } from './stores/key-cache.js'
// One task at a time per name in this process (what the Keyv store orders its own writes with), for the dashboard's key changes.
export { Serial } from './stores/serial.js'
// Rate-limit counters that live where the API's do (Redis when the store is Redis), for the dashboard's routes.
export { sharedCounterStore } from './http/rate-limit.js'
// The OpenAPI 3.1 document of the API, for host apps that serve it (and path groups to extend it).
export { openApiDocument, verificationGroup, jsonResponse, responseHeaders } from './openapi/document.js'
export type { OpenApiDocument, OpenApiOptions, PathGroup } from './openapi/document.js'
export { detailSchema, verificationSchemas } from './openapi/schemas.js'
export type { Schema } from './openapi/schemas.js'
// Errors users can match on by class and code.
export { UserVerificationError, StoreError, VerifierError, errorCodes } from './errors.js'
export type { ErrorCode, ValidationIssue } from './errors.js'
export type * from './types.js'
