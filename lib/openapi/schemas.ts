// JSON Schemas (2020-12, as OpenAPI 3.1 uses) of the verification API's bodies, built from the code's own definitions.
import { details } from '../errors.js'
import { requestBodySchema } from '../http/request-validation.js'
import type { NameJunkReason } from '../types.js'

/** Every junk class of a `LABEL_0` (README.md#name_verification); the compiler checks it lists exactly `NameJunkReason`. */
const nameJunkReasons = [
  'keyboard',
  'random',
  'repeated',
  'placeholder',
  'profanity',
  'phrase',
  'digits',
  'symbols',
  'email_or_url',
  'markup_or_code',
  'mixed_scripts',
  'too_long'
] as const satisfies readonly NameJunkReason[]
const everyReasonListed: Exclude<NameJunkReason, (typeof nameJunkReasons)[number]> extends never ? true : false = true
void everyReasonListed

/** A JSON Schema object, as OpenAPI 3.1 embeds it. */
export type Schema = Record<string, unknown>

const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` })

/** `{ "detail": <one of these strings> }`, the shape of every non-422 error. */
export function detailSchema(description: string, ...values: string[]): Schema {
  return {
    type: 'object',
    description,
    required: ['detail'],
    additionalProperties: false,
    properties: { detail: values.length === 1 ? { type: 'string', const: values[0] } : { type: 'string', enum: values } }
  }
}

/** One 422 entry per kind of problem, with the exact `msg` each carries (CONTRIBUTING.md#the-http-contract). */
const issueKinds: Array<{ type: string; msg: string; description: string; ctx?: boolean }> = [
  { type: 'missing', msg: 'Field required', description: 'A required part is absent: the X-API-Token header, the body, or body.model.' },
  { type: 'json_invalid', msg: 'JSON decode error', description: 'The body is not JSON; loc[1] is the character offset.', ctx: true },
  {
    type: 'model_attributes_type',
    msg: 'Input should be a valid dictionary or object to extract fields from',
    description: 'The body is JSON but not an object.'
  },
  { type: 'string_type', msg: 'Input should be a valid string', description: 'model, email, firstname or lastname is not a string.' }
]

/** The component schemas of the verification API, keyed by name. */
export function verificationSchemas(): Record<string, Schema> {
  const emailVerification: Schema = {
    type: 'object',
    description: 'Result of the email checks (present only when a non-empty email was sent).',
    required: ['emailAddress', 'the service', 'disposable', 'username', 'domain', 'dnsCheck', 'syntexCheck', 'suggestion', 'role', 'free'],
    additionalProperties: false,
    properties: {
      emailAddress: { type: 'string', description: 'The trimmed address that was checked.' },
      'the service': { type: 'boolean', description: 'The spec’s name for the disposable flag: `true` = disposable/temporary address.' },
      disposable: { type: 'boolean', description: 'Same value as `the service`, under a self-explaining name (extra).' },
      username: { type: 'string', description: 'Text before the last `@` (the whole value when there is none).' },
      domain: { type: 'string', description: 'Text after the last `@`, lower-cased (`""` when there is none).' },
      dnsCheck: {
        type: 'string',
        enum: ['Pass', 'Fail', 'Unknown'],
        description: 'MX (or a routable A/AAAA) found: Pass; NXDOMAIN, null MX or no records: Fail; resolver trouble or timeout: Unknown.'
      },
      syntexCheck: {
        type: 'string',
        enum: ['Pass', 'Fail'],
        description: 'Mailbox syntax (RFC 5321/5322/6531); spelled as the spec spells it.'
      },
      suggestion: { type: ['string', 'null'], description: 'A "did you mean" address for a typo of a popular domain, or null (extra).' },
      role: { type: 'boolean', description: '`true` for role accounts such as admin@, info@, noreply@ (extra).' },
      free: { type: 'boolean', description: '`true` for free mail providers such as gmail.com (extra).' }
    }
  }
  const namePrediction: Schema = {
    type: 'object',
    required: ['value', 'prediction', 'confidence'],
    additionalProperties: false,
    properties: {
      value: { type: 'string', description: 'The trimmed name that was evaluated.' },
      prediction: { type: 'string', enum: ['LABEL_1', 'LABEL_0'], description: '`LABEL_1` a real name, `LABEL_0` junk.' },
      confidence: { type: 'number', minimum: 0.5, maximum: 1, description: 'Probability of the predicted label, 4 decimals.' },
      reason: {
        type: ['string', 'null'],
        enum: [...nameJunkReasons, null],
        description: 'For `LABEL_0`, the junk class; null for `LABEL_1` (extra; the built-in model always sets it).'
      }
    }
  }
  const receivedString = { type: ['string', 'null'] }
  const issueSchemas = issueKinds.map(({ type, msg, description, ctx }) => ({
    type: 'object',
    description,
    required: ['type', 'loc', 'msg', 'input', ...(ctx ? ['ctx'] : [])],
    additionalProperties: false,
    properties: {
      type: { type: 'string', const: type },
      loc: {
        type: 'array',
        minItems: 1,
        items: { type: ['string', 'integer'] },
        description: 'Where: ["header", "X-API-Token"], ["body"], ["body", <field>] or ["body", <offset>].'
      },
      msg: { type: 'string', const: msg },
      input: { description: 'The offending input as received: null for a missing header or body, the body object for a missing model.' },
      ...(ctx ? { ctx: { type: 'object', required: ['error'], properties: { error: { type: 'string' } } } } : {})
    }
  }))
  return {
    VerificationRequest: requestBodySchema as unknown as Schema,
    VerificationResponse: {
      type: 'object',
      required: ['status', 'received_data', 'request_count'],
      additionalProperties: false,
      properties: {
        status: { type: 'string', const: 'success' },
        received_data: ref('ReceivedData'),
        request_count: { type: 'integer', minimum: 1, maximum: 3, description: 'Non-empty fields: the units this request consumed.' },
        email_verification: ref('EmailVerification'),
        name_verification: ref('NameVerification')
      }
    },
    ReceivedData: {
      type: 'object',
      description: 'The four request members as received (omitted ones as null, "" as "").',
      required: ['model', 'email', 'firstname', 'lastname'],
      additionalProperties: false,
      properties: { model: { type: 'string' }, email: receivedString, firstname: receivedString, lastname: receivedString }
    },
    EmailVerification: emailVerification,
    NameVerification: {
      type: 'object',
      description: 'A key per non-empty name.',
      additionalProperties: false,
      minProperties: 1,
      properties: { firstname: ref('NamePrediction'), lastname: ref('NamePrediction') }
    },
    NamePrediction: namePrediction,
    ValidationError: {
      type: 'object',
      description: 'FastAPI/pydantic-v2 style: every problem of the request, header entries first.',
      required: ['detail'],
      additionalProperties: false,
      properties: { detail: { type: 'array', minItems: 1, items: ref('ValidationIssue') } }
    },
    ValidationIssue: { oneOf: issueSchemas },
    BadRequest: detailSchema(
      'The model is not `user_verification`, no field holds a value, the body could not be decoded, or the HTTP request itself was malformed (`Bad Request`).',
      details.invalidTool,
      details.noData,
      details.badEncoding,
      details.badBody,
      'Bad Request'
    ),
    InvalidToken: detailSchema('The X-API-Token header is not an active key.', details.invalidToken),
    UpgradeRequired: detailSchema('The request’s units do not fit in the rest of the plan’s month; nothing was consumed.', details.upgrade),
    NotFound: detailSchema('No such path.', details.notFound),
    MethodNotAllowed: detailSchema('The path exists, the method does not; `Allow` lists the methods.', details.methodNotAllowed),
    TooLarge: detailSchema('The body is larger than the limit (16 KiB by default).', details.tooLarge),
    TooManyRequests: detailSchema('A rate limit (per key or per address) was reached.', details.tooManyRequests),
    Unavailable: detailSchema('A verifier or the store failed, or the server is shedding load; nothing was consumed.', details.unavailable)
  }
}
