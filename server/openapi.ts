// The standalone server's OpenAPI document: the API plus health and dashboard path groups; and the routes serving it with /docs.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import express, { type Request, type Response } from 'express'
import { detailSchema, jsonResponse, openApiDocument, type OpenApiDocument, type PathGroup } from '../lib/index.js'
import { maxGraceSeconds } from './dashboard-account.js'

const object = (description: string, properties: Record<string, unknown> = {}, required: string[] = []) => ({
  type: 'object',
  description,
  properties,
  ...(required.length > 0 ? { required } : {})
})

/** `/healthz`, `/readyz`, `/metrics` and the document itself. */
export function healthGroup(): PathGroup {
  const readiness = object(
    'Readiness: the store answered within 2 s and the name model is loaded.',
    { ready: { type: 'boolean' }, store: { type: 'boolean' }, model: { type: 'boolean' } },
    ['ready', 'store', 'model']
  )
  return {
    tag: { name: 'operations', description: 'Health, readiness, metrics and this document.' },
    paths: {
      '/healthz': {
        get: {
          operationId: 'health',
          tags: ['operations'],
          summary: 'Liveness',
          responses: {
            '200': jsonResponse('The process answers.', {
              type: 'object',
              required: ['status'],
              additionalProperties: false,
              properties: { status: { type: 'string', const: 'ok' } }
            })
          }
        }
      },
      '/readyz': {
        get: {
          operationId: 'readiness',
          tags: ['operations'],
          summary: 'Readiness',
          responses: { '200': jsonResponse('Ready.', readiness), '503': jsonResponse('Not ready (see which part).', readiness) }
        }
      },
      '/metrics': {
        get: {
          operationId: 'metrics',
          tags: ['operations'],
          summary: 'Prometheus metrics',
          responses: {
            '200': { description: 'Prometheus text format 0.0.4.', content: { 'text/plain': { schema: { type: 'string' } } } },
            '404': jsonResponse('Metrics are served on a listener of their own (`--metrics-port`), not on this port.', {
              $ref: '#/components/schemas/NotFound'
            })
          }
        }
      },
      '/openapi.json': {
        get: {
          operationId: 'openapi',
          tags: ['operations'],
          summary: 'This document',
          responses: {
            '200': jsonResponse('The OpenAPI 3.1 document.', {
              type: 'object',
              required: ['openapi', 'info', 'servers', 'tags', 'paths', 'components'],
              additionalProperties: false,
              properties: {
                openapi: { type: 'string', const: '3.1.0' },
                info: {
                  type: 'object',
                  required: ['title', 'version'],
                  properties: { title: { type: 'string' }, version: { type: 'string' } }
                },
                servers: { type: 'array', items: { type: 'object', required: ['url'], properties: { url: { type: 'string' } } } },
                tags: { type: 'array', items: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } },
                paths: { type: 'object' },
                components: { type: 'object' }
              }
            })
          }
        }
      }
    }
  }
}

/**
 * The dashboard's JSON API under `/dashboard/api` (server/dashboard*.ts). Bodies are described by
 * their main members; errors are `{ detail }` (sign-up adds `field`).
 */
export function dashboardGroup(): PathGroup {
  const tag = 'dashboard'
  const error = { $ref: '#/components/schemas/DashboardError' }
  const errors = (statuses: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(statuses).map(([status, description]) => [
        status,
        jsonResponse(description, error, status === '503' || status === '429' ? ['Retry-After'] : [])
      ])
    )
  const keyAuth = { security: [{ ApiToken: [] }] }
  const adminAuth = { security: [{ AdminToken: [] }] }
  const idParam = { name: 'id', in: 'path', required: true, schema: { type: 'string' } }
  // Answer bodies are closed: every member the server writes is listed and required, no other member appears.
  const closed = (description: string, properties: Record<string, unknown>) => ({
    ...object(description, properties, Object.keys(properties)),
    additionalProperties: false
  })
  const text = { type: 'string' }
  const nullableText = { type: ['string', 'null'] }
  const time = { type: 'string', format: 'date-time' }
  const nullableTime = { type: ['string', 'null'], format: 'date-time' }
  const units = { type: 'integer', minimum: 0 }
  const keyView = closed('A key as the dashboard shows it (never the key itself).', {
    id: text,
    label: nullableText,
    createdAt: time,
    revokedAt: nullableTime,
    expiresAt: { ...nullableTime, description: 'End of a rotation’s grace period.' },
    active: { type: 'boolean' }
  })
  const issued = closed('A new key: shown this once.', { id: text, key: text, label: nullableText })
  const account = closed('An account.', {
    id: text,
    name: text,
    email: nullableText,
    plan: text,
    createdAt: time,
    disabledAt: nullableTime
  })
  // What both views chart (server/dashboard-account.ts accountUsage): this month, its days, the last 13 months.
  const history = {
    usage: closed('This month’s usage against the plan.', {
      period: { ...text, description: '`YYYY-MM` (UTC).' },
      today: { ...text, description: 'Today (UTC) by the server’s clock, `YYYY-MM-DD`.' },
      used: units,
      limit: units,
      remaining: units,
      reset: time
    }),
    daily: { type: 'array', items: closed('Units of one UTC day (days with units only).', { day: text, units }) },
    months: { type: 'array', items: closed('Units of one month (months with units only).', { period: text, units }) }
  }
  const keys = { type: 'array', items: keyView }
  const signedInErrors = errors({ '401': 'No active key in X-API-Token.', '429': 'Too many failed sign-ins.', '503': 'The store failed.' })
  const adminErrors = errors({ '401': 'Not the admin token.', '429': 'Too many failed sign-ins.', '503': 'The store failed.' })
  // A refused admin token names the scheme to use (server/dashboard-auth.ts).
  adminErrors['401'] = { ...adminErrors['401'], headers: { 'WWW-Authenticate': { $ref: '#/components/headers/WWW-Authenticate' } } }
  const body = (schema: Record<string, unknown>) => ({ required: true, content: { 'application/json': { schema } } })
  // Every dashboard API path sits behind the per-address limit; admin and sign-up paths exist only when turned on.
  const perIp = errors({ '429': 'Too many requests from this address.' })
  const optional = errors({ '404': 'This part of the dashboard is turned off on this server.' })
  // Every operation that reads a body (server/dashboard-http.ts readJson) may answer these; an operation's own 400 says more.
  const bodyErrors = errors({
    '400': 'The body is not JSON, or not a JSON object, or a member has the wrong type.',
    '413': 'The body is larger than 4 KiB.'
  })
  // A path parameter that is not valid percent-encoding (`%E0%A4%A`) cannot be decoded: Express answers 400.
  const badPath = errors({ '400': 'The path is not valid percent-encoding.' })
  const op = (operationId: string, summary: string, extra: { responses: Record<string, unknown> } & Record<string, unknown>) => {
    const off = operationId.startsWith('admin') || operationId === 'dashboardSignup'
    const reads = extra.requestBody !== undefined ? bodyErrors : {}
    const params = extra.parameters !== undefined ? badPath : {}
    const responses: Record<string, unknown> = { ...perIp, ...(off ? optional : {}), ...params, ...reads, ...extra.responses }
    // Every dashboard API answer (server/dashboard-http.ts sendJson/sendDetail) forbids caching: it holds account data.
    for (const [status, response] of Object.entries(responses)) {
      const { headers = {}, ...rest } = response as { headers?: Record<string, unknown> }
      responses[status] = { ...rest, headers: { 'Cache-Control': { $ref: '#/components/headers/Cache-Control' }, ...headers } }
    }
    return { operationId, tags: [tag], summary, ...extra, responses }
  }
  return {
    tag: { name: tag, description: 'The usage dashboard’s API: an account view (signed in with a key) and an admin view.' },
    schemas: {
      DashboardError: {
        type: 'object',
        required: ['detail'],
        additionalProperties: false,
        properties: {
          detail: { type: 'string' },
          field: { type: 'string', description: 'The form field at fault (sign-up; the admin create’s email).' }
        }
      },
      DashboardNotFound: detailSchema('No such path.', 'Not Found')
    },
    headers: {
      'Cache-Control': {
        description: 'Dashboard answers are never stored by browsers or proxies.',
        required: true,
        schema: { type: 'string', const: 'no-store' }
      },
      'WWW-Authenticate': {
        description: 'The scheme the admin token goes in.',
        required: true,
        schema: { type: 'string', const: 'Bearer' }
      }
    },
    securitySchemes: {
      AdminToken: { type: 'http', scheme: 'bearer', description: 'The operator’s admin token (`--admin-token-file`/`UV_ADMIN_TOKEN`).' }
    },
    paths: {
      '/dashboard/api/config': {
        get: op('dashboardConfig', 'Plans and the features this server offers', {
          responses: {
            '200': jsonResponse(
              'Plans, whether sign-up and the admin view are on, the upgrade offer and the API path.',
              closed('Dashboard configuration.', {
                plans: { type: 'array', items: closed('A plan.', { name: text, limit: units }) },
                signup: { type: 'boolean' },
                admin: { type: 'boolean' },
                upgrade: {
                  description: 'The upgrade offer (`--upgrade-url`): a link for a web or mail URL, text otherwise; null when none.',
                  oneOf: [{ type: 'null' }, closed('The offer.', { text, url: nullableText })]
                },
                api: { ...text, description: 'The API’s path relative to the server’s root, e.g. `api/v1`.' }
              })
            )
          }
        })
      },
      '/dashboard/api/usage': {
        get: op('dashboardUsage', 'This month’s usage of the signed-in key’s account', {
          ...keyAuth,
          responses: {
            '200': jsonResponse(
              'Usage against the plan.',
              closed('Usage report.', {
                id: text,
                account: text,
                plan: text,
                period: text,
                used: units,
                limit: units,
                remaining: units,
                reset: time
              })
            ),
            ...signedInErrors
          }
        })
      },
      '/dashboard/api/account': {
        get: op('dashboardAccount', 'The signed-in account: plan, usage by day and month, keys', {
          ...keyAuth,
          responses: {
            '200': jsonResponse(
              'The account view.',
              closed('Account, usage history and keys.', {
                key: { ...text, description: 'The id of the key that signed in.' },
                account: closed('The account.', { id: text, name: text, plan: text, createdAt: time }),
                ...history,
                keys
              })
            ),
            ...signedInErrors
          }
        })
      },
      '/dashboard/api/keys': {
        post: op('dashboardCreateKey', 'Add a key to the signed-in account', {
          ...keyAuth,
          requestBody: {
            required: false,
            content: { 'application/json': { schema: object('Optional label.', { label: { type: 'string' } }) } }
          },
          responses: {
            '201': jsonResponse('The new key (shown once).', issued),
            ...errors({ '403': 'The signing-in key is being retired after a rotation (it may verify and read, not manage keys).' }),
            ...signedInErrors
          }
        })
      },
      '/dashboard/api/keys/{id}/rotate': {
        post: op('dashboardRotateKey', 'Rotate a key of the signed-in account', {
          ...keyAuth,
          parameters: [idParam],
          requestBody: body(object('Grace period of the old key.', { grace: { type: 'integer', minimum: 0, maximum: maxGraceSeconds } })),
          responses: {
            '201': jsonResponse(
              'The new key, and the old one with its expiry.',
              closed('The new key (shown once) and the old one.', { id: text, key: text, label: nullableText, previous: keyView })
            ),
            ...errors({
              '400': 'Bad grace.',
              '403': 'The signing-in key is being retired after a rotation (it may verify and read, not manage keys).',
              '404': 'No such key in this account.',
              '409': 'The key is revoked or expired.'
            }),
            ...signedInErrors
          }
        })
      },
      '/dashboard/api/keys/{id}/revoke': {
        post: op('dashboardRevokeKey', 'Revoke a key of the signed-in account', {
          ...keyAuth,
          parameters: [idParam],
          responses: {
            '200': jsonResponse('The revoked key.', keyView),
            ...errors({
              '403': 'The signing-in key is being retired after a rotation (it may verify and read, not manage keys).',
              '404': 'No such key in this account.'
            }),
            ...signedInErrors
          }
        })
      },
      '/dashboard/api/signup': {
        post: op('dashboardSignup', 'Self-serve sign-up (when enabled), screened by the product’s own verification', {
          requestBody: body(object('Name and email address.', { name: { type: 'string' }, email: { type: 'string' } }, ['name', 'email'])),
          responses: {
            '201': jsonResponse(
              'The new account and its first key (shown once).',
              closed('Account and key.', { account: closed('The new account.', { id: text, plan: text }), key: issued })
            ),
            ...errors({
              '409': 'The email address (in any spelling of the same mailbox) has an account.',
              '422': 'A field was refused.',
              '429': 'Too many sign-ups.',
              '503': 'The store failed.'
            })
          }
        })
      },
      '/dashboard/api/admin/accounts': {
        get: op('adminListAccounts', 'All accounts with this month’s usage (admin)', {
          ...adminAuth,
          parameters: [
            {
              name: 'q',
              in: 'query',
              required: false,
              description: 'Shows only accounts whose id, name, email or plan contains this text (case-insensitive).',
              schema: { type: 'string' }
            }
          ],
          responses: {
            '200': jsonResponse(
              'Accounts (those matching `q`, when given) with this month’s usage.',
              closed('Accounts page.', {
                period: text,
                total: { ...units, description: 'Units used this month across every account, whatever `q` shows.' },
                accounts: {
                  type: 'array',
                  items: closed('An account with this month’s usage.', {
                    id: text,
                    name: text,
                    email: nullableText,
                    plan: text,
                    limit: units,
                    used: units,
                    createdAt: time,
                    disabledAt: nullableTime
                  })
                }
              })
            ),
            ...adminErrors
          }
        }),
        post: op('adminCreateAccount', 'Create an account with its first key (admin)', {
          ...adminAuth,
          requestBody: body(
            object('The account.', { name: { type: 'string' }, email: { type: 'string' }, plan: { type: 'string' } }, ['name'])
          ),
          responses: {
            '201': jsonResponse('The account and its key (shown once).', closed('Account and key.', { account, key: issued })),
            ...errors({
              '400': 'A bad field.',
              '409': 'The email address (in any spelling of the same mailbox) has an account.',
              '422': 'The email address is not valid (the syntax check sign-up applies); `field` is `email`.'
            }),
            ...adminErrors
          }
        })
      },
      '/dashboard/api/admin/daily': {
        get: op('adminDaily', 'Units per day across accounts (admin)', {
          ...adminAuth,
          responses: {
            '200': jsonResponse('Days.', closed('Daily totals.', { today: text, daily: history.daily })),
            ...adminErrors
          }
        })
      },
      '/dashboard/api/admin/accounts/{id}': {
        get: op('adminGetAccount', 'One account with usage and keys (admin)', {
          ...adminAuth,
          parameters: [idParam],
          responses: {
            '200': jsonResponse('The account.', closed('Account view.', { account, ...history, keys })),
            ...errors({ '404': 'No such account.' }),
            ...adminErrors
          }
        }),
        patch: op('adminUpdateAccount', 'Change an account’s plan or disable/enable it (admin)', {
          ...adminAuth,
          parameters: [idParam],
          requestBody: body(object('What to change.', { plan: { type: 'string' }, disabled: { type: 'boolean' } })),
          responses: {
            '200': jsonResponse('The account.', account),
            ...errors({ '400': 'Nothing or something impossible to change.', '404': 'No such account.' }),
            ...adminErrors
          }
        })
      },
      '/dashboard/api/admin/keys/{id}/revoke': {
        post: op('adminRevokeKey', 'Revoke any key (admin)', {
          ...adminAuth,
          parameters: [idParam],
          responses: {
            '200': jsonResponse('The revoked key (only its id and revocation time when its account is gone).', {
              oneOf: [keyView, closed('A key whose account is gone.', { id: text, revokedAt: nullableTime })]
            }),
            ...errors({ '404': 'No such key.' }),
            ...adminErrors
          }
        })
      }
    }
  }
}

/** The standalone server's document: the API at `/api/v1`, operations, and the dashboard. */
export function serverDocument(serverUrl = '/'): OpenApiDocument {
  const document = openApiDocument({ serverUrl, groups: [healthGroup(), dashboardGroup()] })
  // `serve` itself answers an Expect header other than 100-continue, on every path (server/serve.ts).
  const expectationFailed = jsonResponse(
    'An Expect header other than 100-continue.',
    detailSchema('Expectation Failed', 'Expectation Failed')
  )
  for (const item of Object.values(document.paths)) {
    for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
      const operation = item[method] as { responses: Record<string, unknown> } | undefined
      if (operation !== undefined) operation.responses['417'] ??= expectationFailed
    }
  }
  return document
}

/**
 * The docs page's policy: only its own files (Swagger UI from the installed swagger-ui-dist
 * package, no CDN), same-origin requests only. Inline styles are allowed because Swagger UI
 * injects some; scripts are not.
 */
const docsPolicy = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'"
].join('; ')

/**
 * Where Swagger UI's files are: copied into the package by the build (public/swagger-ui/, with
 * its licence), so users install no swagger-ui-dist (whose dependency runs an install script);
 * from the devDependency itself when running from the sources.
 */
function swaggerUiDir(): string {
  const shipped = fileURLToPath(new URL('./public/swagger-ui/', import.meta.url))
  if (existsSync(join(shipped, 'swagger-ui-bundle.js'))) return shipped
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
}

/** `GET /openapi.json` and the interactive docs at `GET /docs`. */
export function createDocsRouter(document: OpenApiDocument = serverDocument()): express.Router {
  const dist = swaggerUiDir()
  const own = (file: string) => readFileSync(new URL(`./public/${file}`, import.meta.url))
  const files: Record<string, { body: Buffer; type: string }> = {
    'swagger-ui.css': { body: readFileSync(join(dist, 'swagger-ui.css')), type: 'text/css; charset=utf-8' },
    'swagger-ui-bundle.js': { body: readFileSync(join(dist, 'swagger-ui-bundle.js')), type: 'text/javascript; charset=utf-8' },
    'docs.js': { body: own('docs.js'), type: 'text/javascript; charset=utf-8' },
    'docs.css': { body: own('docs.css'), type: 'text/css; charset=utf-8' }
  }
  const page = own('docs.html')
  const text = JSON.stringify(document)
  const router = express.Router({ strict: true })
  router.get('/openapi.json', (_req: Request, res: Response) => {
    res
      .set({ 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-cache', 'Access-Control-Allow-Origin': '*' })
      .send(text)
  })
  router.get('/docs', (_req, res) => {
    res.set({ 'Content-Security-Policy': docsPolicy, 'Content-Type': 'text/html; charset=utf-8', 'Cache-Control': 'no-cache' }).send(page)
  })
  for (const [name, file] of Object.entries(files)) {
    router.get(`/docs/${name}`, (_req, res) => void res.set({ 'Content-Type': file.type, 'Cache-Control': 'no-cache' }).send(file.body))
  }
  return router
}
