// The OpenAPI 3.1 document of the verification API, assembled from path groups so a host app can add its own.
import { verificationSchemas, type Schema } from './schemas.js'
import { optionError } from '../errors.js'

/** An OpenAPI 3.1 document (plain JSON). */
export type OpenApiDocument = Record<string, unknown> & {
  openapi: string
  paths: Record<string, Record<string, unknown>>
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, unknown>; headers: Record<string, unknown> }
}

/** A set of paths with the tag, schemas and security schemes they use: the unit the document is built from. */
export interface PathGroup {
  tag: { name: string; description: string }
  paths: Record<string, Record<string, unknown>>
  schemas?: Record<string, Schema>
  securitySchemes?: Record<string, unknown>
  /** Response header components its responses refer to (`#/components/headers/<name>`). */
  headers?: Record<string, unknown>
}

/** Options of {@link openApiDocument}. */
export interface OpenApiOptions {
  /** The server's base URL, e.g. `https://verify.example.com`. Defaults to `/` (the origin the document is served from). */
  serverUrl?: string
  /** Where the middleware is mounted. Defaults to `/api/v1`. */
  mount?: string
  /** More path groups (the standalone server adds health and dashboard). Defaults to none. */
  groups?: PathGroup[]
  /** `info.version`. Defaults to the interface version of the spec, `1.0.0`. */
  version?: string
}

const json = (schema: Schema) => ({ 'application/json': { schema } })
const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` })
const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` })

/** A response whose JSON body is the component `schema`, with `headers` (component names) required. */
export function jsonResponse(description: string, schema: string | Schema, headers: string[] = []): Record<string, unknown> {
  const response: Record<string, unknown> = { description, content: json(typeof schema === 'string' ? ref(schema) : schema) }
  if (headers.length > 0) response.headers = Object.fromEntries(headers.map((name) => [name, headerRef(name)]))
  return response
}

/** Response headers the API sets, as components (every one is required where it is listed). */
export const responseHeaders = {
  'X-Quota-Limit': { description: 'Units per month of the account’s plan.', required: true, schema: { type: 'integer', minimum: 0 } },
  'X-Quota-Remaining': {
    description: 'Units left this month after this request.',
    required: true,
    schema: { type: 'integer', minimum: 0 }
  },
  'X-Quota-Reset': {
    description: 'Start of the next period (ISO 8601, UTC), when usage goes back to 0.',
    required: true,
    schema: { type: 'string', format: 'date-time' }
  },
  'Retry-After': { description: 'Seconds to wait before trying again.', required: true, schema: { type: 'integer', minimum: 1 } },
  Allow: { description: 'The methods the path answers.', required: true, schema: { type: 'string' } }
} as const

/** The verification endpoint at `mount`: request, the 200 body, every error with its exact body, headers and security. */
export function verificationGroup(mount = '/api/v1'): PathGroup {
  const operation = {
    operationId: 'verify',
    tags: ['verification'],
    summary: 'Verify an email address, a first name and/or a last name',
    description:
      'Consumes `request_count` units (the number of non-empty fields) of the account’s monthly plan, only when answered 200. Checks run in this order and the first failing one answers: 422, 401, 400, 402, 503.',
    security: [{ ApiToken: [] }],
    parameters: [
      {
        name: 'X-API-Token',
        in: 'header',
        required: true,
        description: 'An API key of the account (`uv_…`). Absent: 422; not an active key: 401.',
        schema: { type: 'string' }
      }
    ],
    requestBody: { required: true, content: json(ref('VerificationRequest')) },
    responses: {
      '200': jsonResponse(
        'Verified. `email_verification` and `name_verification` appear for the fields that held a value.',
        'VerificationResponse',
        ['X-Quota-Limit', 'X-Quota-Remaining', 'X-Quota-Reset']
      ),
      '400': jsonResponse('Unknown model, no field with a value, or a body that could not be decoded.', 'BadRequest'),
      '401': jsonResponse('The X-API-Token header holds no active key.', 'InvalidToken'),
      '402': jsonResponse('The plan’s month cannot hold this request’s units.', 'UpgradeRequired'),
      '413': jsonResponse('The body is too large.', 'TooLarge'),
      '422': jsonResponse('The header or body failed validation; every problem is listed.', 'ValidationError'),
      '429': jsonResponse('A rate limit was reached (only when rate limits are configured).', 'TooManyRequests', ['Retry-After']),
      '503': jsonResponse('A verifier or the store failed; nothing was consumed.', 'Unavailable', ['Retry-After'])
    }
  }
  return {
    tag: { name: 'verification', description: 'The verification API (one operation).' },
    paths: { [mount]: { post: operation } },
    schemas: verificationSchemas(),
    securitySchemes: {
      ApiToken: { type: 'apiKey', in: 'header', name: 'X-API-Token', description: 'An API key (`uv_…`) issued to the account.' }
    }
  }
}

/**
 * The OpenAPI 3.1 document of the verification API, for host apps that mount the middleware:
 * `app.get('/openapi.json', (_req, res) => res.json(openApiDocument({ serverUrl: 'https://verify.example.com' })))`.
 * Its request schema is the one the middleware validates with; its error bodies use the same strings.
 */
export function openApiDocument(options: OpenApiOptions = {}): OpenApiDocument {
  const { serverUrl = '/', mount = '/api/v1', groups = [], version = '1.0.0' } = options
  const all = [verificationGroup(mount), ...groups]
  const document: OpenApiDocument = {
    openapi: '3.1.0',
    info: {
      title: 'User verification API',
      version,
      description:
        'Screens sign-up and contact forms: email syntax, DNS/MX, disposable, role and free-provider checks, typo suggestions, and a name model that tells real names from junk. Every error body is JSON with `detail`.',
      license: { name: 'MIT', identifier: 'MIT' }
    },
    servers: [{ url: serverUrl }],
    tags: all.map((group) => group.tag),
    paths: {},
    components: { schemas: {}, securitySchemes: {}, headers: { ...responseHeaders } }
  }
  for (const group of all) {
    for (const [path, item] of Object.entries(group.paths)) {
      if (path in document.paths) throw optionError('range', '', `two path groups describe ${path}`)
      document.paths[path] = item
    }
    Object.assign(document.components.schemas, group.schemas)
    Object.assign(document.components.securitySchemes, group.securitySchemes)
    Object.assign(document.components.headers, group.headers)
  }
  return document
}
