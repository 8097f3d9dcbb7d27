// The OpenAPI document and /docs: valid OpenAPI 3.1, served as built, drift-proof, and usable in headless Chromium.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { request as httpRequest } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Validator } from '@seriousme/openapi-schema-validator'
import { chromium } from 'playwright-core'
import t from 'tap'
import { openApiDocument } from '../../lib/index.js'
import { requestBodySchema } from '../../lib/http/request-validation.js'
import { details } from '../../lib/errors.js'
import { serverDocument } from '../../server/openapi.js'
import { checkAnswer, checkedFetch, checkResponse, checked } from '../fixtures/openapi-check.js'
import { startServe } from '../fixtures/spawn-cli.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { testZone } from '../fixtures/test-verifiers.js'

const chromiumPath = process.env.UV_TEST_CHROMIUM ?? '/usr/bin/chromium'
const skipBrowser =
  process.env.UV_TEST_CHROMIUM === undefined && !existsSync(chromiumPath)
    ? `no Chromium at ${chromiumPath}: install it (apt-get install chromium) or set UV_TEST_CHROMIUM`
    : false

t.test('the documents validate against the OpenAPI 3.1 schema', async (t) => {
  for (const [name, document] of [
    ['server', serverDocument()],
    ['host app', openApiDocument({ serverUrl: 'https://verify.example.com', mount: '/verify' })]
  ] as const) {
    const result = await new Validator().validate(document as unknown as Record<string, unknown>)
    t.ok(result.valid, `${name}: ${JSON.stringify(result.errors)}`)
    t.equal(
      (await new Validator().validate({ ...document, paths: { '/x': { get: { responses: 7 } } } } as unknown as Record<string, unknown>))
        .valid,
      false,
      'the validator can fail'
    )
  }
  const hosted = openApiDocument({ serverUrl: 'https://verify.example.com', mount: '/verify' })
  t.strictSame(hosted.servers, [{ url: 'https://verify.example.com' }])
  t.ok(hosted.paths['/verify']?.post)
})

t.test('built from the middleware’s own schema and error strings', async (t) => {
  const document = serverDocument()
  t.equal(document.components.schemas.VerificationRequest, requestBodySchema, 'the very object ajv compiles in the middleware')
  const schemas = JSON.stringify(document.components.schemas)
  for (const detail of Object.values(details)) t.ok(schemas.includes(JSON.stringify(detail)), `"${detail}" is documented`)
  const operation = document.paths['/api/v1']?.post as { responses: Record<string, unknown>; security: unknown }
  t.strictSame(Object.keys(operation.responses).sort(), ['200', '400', '401', '402', '413', '417', '422', '429', '503'])
  t.strictSame(operation.security, [{ ApiToken: [] }])
  t.strictSame(document.components.securitySchemes.ApiToken, {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Token',
    description: 'An API key (`uv_…`) issued to the account.'
  })
  for (const path of ['/healthz', '/readyz', '/metrics', '/dashboard/api/usage', '/dashboard/api/account']) t.ok(document.paths[path], path)
})

t.test('the response check fails on answers the document does not allow', async (t) => {
  const request = { method: 'POST', path: '/api/v1', scope: 'api' as const }
  const headers = {
    'content-type': 'application/json',
    'x-quota-limit': '25',
    'x-quota-remaining': '24',
    'x-quota-reset': '2026-12-01T00:00:00.000Z'
  }
  const ok = {
    status: 'success',
    received_data: { model: 'user_verification', email: null, firstname: 'Jane', lastname: null },
    request_count: 1
  }
  const before = checked.count
  t.doesNotThrow(() => checkResponse(request, { status: 200, headers, body: ok }))
  t.equal(checked.count, before + 1)
  t.throws(() => checkResponse(request, { status: 200, headers, body: { ...ok, request_count: undefined } }), /request_count/)
  t.throws(
    () => checkResponse(request, { status: 200, headers: { ...headers, 'x-quota-reset': undefined as unknown as string }, body: ok }),
    /X-Quota-Reset/
  )
  t.throws(
    () => checkResponse(request, { status: 200, headers: { ...headers, 'x-quota-remaining': 'many' }, body: ok }),
    /X-Quota-Remaining/
  )
  t.throws(() => checkResponse(request, { status: 402, headers, body: { detail: 'Payment Required' } }), /402/)
  t.throws(() => checkResponse(request, { status: 503, headers, body: { detail: 'Tool service unavailable' } }), /Retry-After/)
  t.throws(() => checkResponse(request, { status: 500, headers, body: { detail: 'x' } }), /not documented/)
  t.throws(
    () =>
      checkResponse(request, {
        status: 422,
        headers,
        body: { detail: [{ type: 'missing', loc: ['body'], msg: 'Required', input: null }] }
      }),
    /422/
  )
  t.throws(() => checkResponse({ ...request, path: '/api/v1/other' }, { status: 200, headers, body: ok }), /404/)
})

const dir = mkdtempSync(join(tmpdir(), 'uv-docs-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())

t.test('the built server serves /openapi.json and /docs from installed packages under a strict CSP', async (t) => {
  const server = await startServe(['--store', `sqlite://${join(dir, 'a.sqlite')}`, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => server.stop())
  const response = await checkedFetch(new URL('/openapi.json', server.url))
  t.equal(response.status, 200)
  t.match(response.headers.get('content-type'), /^application\/json/)
  t.strictSame(
    await response.json(),
    JSON.parse(JSON.stringify(serverDocument())),
    'the served document is the one the tests check against'
  )
  // /docs and its assets are pages, not API answers: checkedFetch leaves them unchecked on purpose.
  const page = await checkedFetch(new URL('/docs', server.url))
  t.equal(page.status, 200)
  const policy = page.headers.get('content-security-policy') ?? ''
  t.match(policy, /script-src 'self'(;|$)/)
  t.match(policy, /connect-src 'self'/)
  const html = await page.text()
  t.notOk(/https?:\/\//.test(html), 'no external URL in the page')
  for (const asset of ['docs/swagger-ui-bundle.js', 'docs/swagger-ui.css', 'docs/docs.js']) {
    const file = await checkedFetch(new URL(`/${asset}`, server.url))
    t.equal(file.status, 200, asset)
    t.ok((await file.arrayBuffer()).byteLength > 0)
  }
})

t.test(
  'answers the server gives on any path are in the document: 417, 400 for a bad path, the grace bound (attack pass of 2026-11-25)',
  async (t) => {
    const adminToken = 'admintoken-0123456789abcdef'
    writeFileSync(join(dir, 'admin.tok'), adminToken)
    const server = await startServe([
      '--store',
      `sqlite://${join(dir, 'c.sqlite')}`,
      '--dns-servers',
      dns.server,
      '--quiet',
      '--admin-token-file',
      join(dir, 'admin.tok')
    ])
    t.teardown(() => server.stop())
    const key = server.demoKey ?? ''
    // fetch cannot send an Expect header: node:http can.
    const expect = await new Promise<{ status: number; headers: Record<string, string>; body: string }>((resolve, reject) => {
      const request = httpRequest(new URL('/api/v1', server.url), { method: 'POST', headers: { Expect: 'weird' } }, (response) => {
        let body = ''
        response.on('data', (chunk: Buffer) => (body += chunk))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers as Record<string, string>, body }))
      })
      request.on('error', reject)
      request.end()
    })
    t.equal(expect.status, 417)
    checkAnswer({ method: 'POST', path: '/api/v1' }, expect.status, expect.headers, expect.body)
    const badAdmin = await checkedFetch(new URL('/dashboard/api/admin/accounts/%E0%A4%A', server.url), {
      headers: { authorization: `Bearer ${adminToken}` }
    })
    t.equal(badAdmin.status, 400, 'an undecodable path parameter: 400, as documented')
    const badKey = await checkedFetch(new URL('/dashboard/api/keys/%E0%A4%A/revoke', server.url), {
      method: 'POST',
      headers: { 'x-api-token': key }
    })
    t.equal(badKey.status, 400)
    const keys = (await (
      await checkedFetch(new URL('/dashboard/api/account', server.url), { headers: { 'x-api-token': key } })
    ).json()) as {
      keys: Array<{ id: string }>
    }
    const tooLong = await checkedFetch(new URL(`/dashboard/api/keys/${keys.keys[0]?.id}/rotate`, server.url), {
      method: 'POST',
      headers: { 'x-api-token': key, 'content-type': 'application/json' },
      body: JSON.stringify({ grace: 2_592_001 })
    })
    t.equal(tooLong.status, 400, 'a grace past 30 days is refused')
    const rotate = serverDocument().paths['/dashboard/api/keys/{id}/rotate']?.post as {
      requestBody: { content: { 'application/json': { schema: { properties: { grace: { maximum?: number } } } } } }
    }
    t.equal(
      rotate.requestBody.content['application/json'].schema.properties.grace.maximum,
      2_592_000,
      'and the document says where it ends'
    )
  }
)

t.test('in headless Chromium, offline: paste a key, try the endpoint, get a 200', { skip: skipBrowser }, async (t) => {
  const server = await startServe(['--store', `sqlite://${join(dir, 'b.sqlite')}`, '--dns-servers', dns.server, '--quiet'])
  t.teardown(() => server.stop())
  t.ok(server.demoKey)
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run']
  })
  t.teardown(() => browser.close())
  const context = await browser.newContext()
  const origin = new URL(server.url).origin
  const foreign: string[] = []
  // Offline: anything not from this server is refused and recorded.
  await context.route('**/*', (route) => {
    if (new URL(route.request().url()).origin === origin) return route.continue()
    foreign.push(route.request().url())
    return route.abort()
  })
  const page = await context.newPage()
  const violations: string[] = []
  page.on('console', (message) => {
    if (/Content Security Policy|Refused to/i.test(message.text())) violations.push(message.text())
  })
  page.on('pageerror', (error) => violations.push(error.message))
  await page.goto(new URL('/docs', server.url).href)
  await page
    .getByRole('button', { name: /Authorize/ })
    .first()
    .click()
  await page.locator('#api_key_value').fill(server.demoKey!)
  await page.locator('.auth-container').first().locator('button.authorize').click()
  await page.locator('.auth-container').first().locator('button.btn-done').click()
  const operation = page.locator('#operations-verification-verify')
  await operation.locator('.opblock-summary').click()
  const tryIt = operation.getByRole('button', { name: /Try it out/ })
  if (await tryIt.isVisible()) await tryIt.click()
  await operation.locator('input[placeholder="X-API-Token"]').fill(server.demoKey!)
  await operation
    .locator('textarea.body-param__text')
    .fill(JSON.stringify({ model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane' }))
  const answered = page.waitForResponse(
    (response) => new URL(response.url()).pathname === '/api/v1' && response.request().method() === 'POST'
  )
  await operation.getByRole('button', { name: 'Execute' }).click()
  const response = await answered
  t.equal(response.status(), 200, 'the request made from the page succeeded')
  const body = await response.json()
  t.equal(body.email_verification.dnsCheck, 'Pass')
  t.equal(body.name_verification.firstname.prediction, 'LABEL_1')
  const shown = operation.locator('.live-responses-table tbody .response-col_status').first()
  await shown.waitFor()
  t.match(await shown.innerText(), /^\s*200/, 'the page shows the 200')
  t.strictSame(foreign, [], 'no request left the server')
  t.strictSame(violations, [], 'no CSP violation or page error')
})
