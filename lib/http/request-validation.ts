// Turns a raw request (token header + body text) into the API's 422 entries or a typed request.
import { Ajv, type ErrorObject } from 'ajv'
import type { ValidationIssue } from '../errors.js'

/** The body members the API reads, in the order pydantic reports them. */
const fields = ['model', 'email', 'firstname', 'lastname'] as const
type Field = (typeof fields)[number]

/** A request body that passed validation: `model` a string, the rest strings or absent/null. */
export interface RequestBody {
  model: string
  email?: string | null
  firstname?: string | null
  lastname?: string | null
  [extra: string]: unknown
}

const optionalString = (description: string, example: string) => ({ type: ['string', 'null'], description, examples: [example] }) as const

/**
 * The JSON Schema of the request body: the middleware validates with it, and the OpenAPI
 * document (lib/openapi/) publishes it as is, so the two cannot drift.
 */
export const requestBodySchema = {
  type: 'object',
  required: ['model'],
  description:
    'At least one of email, firstname and lastname must hold a non-empty value (values are trimmed; "" and null mean "not provided"). Unknown members are ignored.',
  properties: {
    model: {
      type: 'string',
      description: 'The verification model; only `user_verification` is accepted (400 otherwise).',
      examples: ['user_verification']
    },
    email: optionalString('Email address to verify.', 'jane.doe@example.com'),
    firstname: optionalString('First name to verify.', 'Jane'),
    lastname: optionalString('Last name to verify.', 'Doe')
  }
} as const

const ajv = new Ajv({ allErrors: true, strict: true })
const validateBody = ajv.compile<RequestBody>(requestBodySchema)

const missingHeader: ValidationIssue = { type: 'missing', loc: ['header', 'X-API-Token'], msg: 'Field required', input: null }

/** Outcome of {@link validateRequest}: either the 422 entries or the token and parsed body. */
export type ValidationOutcome = { ok: false; issues: ValidationIssue[] } | { ok: true; token: string; body: RequestBody }

/**
 * Whether a `Content-Type` asks for JSON: none at all, `application/json` or `application/*+json`
 * (as FastAPI decides; any other type's body is not parsed, so it is no object: CONTRIBUTING.md#the-http-contract).
 */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return true
  const type = contentType.split(';')[0]!.trim().toLowerCase()
  return type === 'application/json' || /^application\/[^/\s]+\+json$/.test(type)
}

/**
 * Validates the token header and the body. `body` is the raw text when we read the stream
 * ourselves, or whatever the host app's body parser left in `req.body`. A body sent with a
 * non-JSON `Content-Type` is not parsed: it is the raw text, so a 422 `model_attributes_type`.
 */
export function validateRequest(token: string | undefined, body: unknown, contentType?: string): ValidationOutcome {
  const issues: ValidationIssue[] = []
  if (token === undefined) issues.push(missingHeader)
  if (!isJsonContentType(contentType) && body !== undefined && body !== null && body !== '') {
    issues.push({
      type: 'model_attributes_type',
      loc: ['body'],
      msg: 'Input should be a valid dictionary or object to extract fields from',
      input: typeof body === 'string' ? body : JSON.stringify(body)
    })
    return { ok: false, issues }
  }
  const parsed = typeof body === 'string' ? parseJson(body) : { value: body }
  if ('issue' in parsed) return { ok: false, issues: [...issues, parsed.issue] }
  issues.push(...bodyIssues(parsed.value))
  if (issues.length > 0 || token === undefined) return { ok: false, issues }
  return { ok: true, token, body: parsed.value as RequestBody }
}

function parseJson(text: string): { value: unknown } | { issue: ValidationIssue } {
  if (text.length === 0) return { value: undefined }
  try {
    return { value: JSON.parse(text) }
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error)
    return {
      issue: {
        type: 'json_invalid',
        loc: ['body', errorOffset(message, text)],
        msg: 'JSON decode error',
        input: {},
        ctx: { error: describeJsonError(message) }
      }
    }
  }
}

/** V8 says "at position N" for most errors, nothing for "Unexpected end"/"Unexpected token". */
function errorOffset(message: string, text: string): number {
  const position = /at position (\d+)/.exec(message)
  if (position?.[1] !== undefined) return Number(position[1])
  if (message.startsWith('Unexpected end')) return text.length
  return text.length - text.trimStart().length
}

function describeJsonError(message: string): string {
  if (message.startsWith('Unexpected end')) return 'Expecting value'
  if (message.startsWith('Unexpected token')) return 'Expecting value'
  return message.replace(/ in JSON at position \d+.*$/s, '')
}

function bodyIssues(body: unknown): ValidationIssue[] {
  // JSON `null` and no body at all are the same to FastAPI: the required body is missing.
  if (body === undefined || body === null) return [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }]
  if (typeof body !== 'object' || Array.isArray(body)) {
    return [
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: body
      }
    ]
  }
  if (validateBody(body)) return []
  const byField = new Map<Field, ValidationIssue>()
  for (const error of validateBody.errors ?? []) {
    const issue = toIssue(error, body as Record<string, unknown>)
    if (issue !== undefined && !byField.has(issue.field)) byField.set(issue.field, issue.issue)
  }
  return fields.flatMap((field) => byField.get(field) ?? [])
}

function toIssue(error: ErrorObject, body: Record<string, unknown>): { field: Field; issue: ValidationIssue } | undefined {
  if (error.keyword === 'required') {
    return { field: 'model', issue: { type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: body } }
  }
  const field = error.instancePath.slice(1) as Field
  if (!fields.includes(field)) return undefined
  return { field, issue: { type: 'string_type', loc: ['body', field], msg: 'Input should be a valid string', input: body[field] } }
}
