// A real client generated from the OpenAPI document (openapi-typescript + openapi-fetch): it type-checks and talks to the API.
import { createHash } from 'node:crypto'
import { readFileSync } from 'node:fs'
import createClient from 'openapi-fetch'
import t from 'tap'
import type { paths } from '../fixtures/openapi-client/schema.js'
import { startApi, type Api } from '../fixtures/create-api.js'
import { checkResponse } from '../fixtures/openapi-check.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'
import { serverDocument } from '../../server/openapi.js'

t.test('the generated types are those of the current document', async (t) => {
  const header = readFileSync(new URL('../fixtures/openapi-client/schema.d.ts', import.meta.url), 'utf8').split('\n')[0] ?? ''
  const digest = createHash('sha256')
    .update(JSON.stringify(serverDocument(), null, 2))
    .digest('hex')
  t.equal(
    /SHA-256 ([0-9a-f]{64})/.exec(header)?.[1],
    digest,
    'regenerate with `npx tsx tools/openapi-client.ts` after changing the document'
  )
})

/** A client for `api` whose every answer is also checked against the document. */
function clientOf(api: Api) {
  return createClient<paths>({
    baseUrl: api.url,
    fetch: async (request: Request) => {
      const response = await fetch(request)
      const text = await response.clone().text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {}
      checkResponse(
        { method: request.method, path: new URL(request.url).pathname, scope: 'api' },
        { status: response.status, headers: response.headers, body }
      )
      return response
    }
  })
}

const verifiers = await testVerifiers(t)

t.test('the seven field combinations', async (t) => {
  const api = await startApi({ ...verifiers })
  t.teardown(() => api.close())
  const { key } = await api.key('pro')
  const client = clientOf(api)
  const all = { email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' } as const
  const combinations: Array<Array<keyof typeof all>> = [
    ['email', 'firstname', 'lastname'],
    ['email', 'firstname'],
    ['email', 'lastname'],
    ['firstname', 'lastname'],
    ['email'],
    ['firstname'],
    ['lastname']
  ]
  for (const fields of combinations) {
    const body = { model: 'user_verification', ...Object.fromEntries(fields.map((field) => [field, all[field]])) }
    const { data, error, response } = await client.POST('/api/v1', { params: { header: { 'X-API-Token': key } }, body })
    t.equal(response.status, 200, fields.join('+'))
    t.equal(error, undefined)
    if (data === undefined) continue
    // Typed access: these lines only compile because the generated types describe the 200 body.
    const dns: 'Pass' | 'Fail' | 'Unknown' | undefined = data.email_verification?.dnsCheck
    const label: 'LABEL_1' | 'LABEL_0' | undefined = data.name_verification?.firstname?.prediction
    t.equal(data.status, 'success')
    t.equal(data.request_count, fields.length)
    t.equal(dns, fields.includes('email') ? 'Pass' : undefined)
    t.equal(label, fields.includes('firstname') ? 'LABEL_1' : undefined)
    t.equal(data.name_verification?.lastname?.value, fields.includes('lastname') ? 'Doe' : undefined)
    t.equal(data.received_data.email, fields.includes('email') ? all.email : null)
    t.match(response.headers.get('x-quota-remaining'), /^\d+$/)
  }
})

t.test('every error the operation documents, through the typed client', async (t) => {
  const api = await startApi({ ...verifiers, plans: { free: 25, tiny: 2 }, bodyLimit: 1024 })
  t.teardown(() => api.close())
  const { key } = await api.key('free')
  const client = clientOf(api)
  const header = { 'X-API-Token': key }

  // @ts-expect-error the header is required by the document; leaving it out is the 422 case.
  const noHeader = await client.POST('/api/v1', { params: { header: {} }, body: { model: 'user_verification', email: 'a@acme-mail.com' } })
  t.equal(noHeader.response.status, 422)
  t.strictSame(noHeader.error?.detail, [{ type: 'missing', loc: ['header', 'X-API-Token'], msg: 'Field required', input: null }])

  // @ts-expect-error model is required by the request schema; leaving it out is the other 422 case.
  const noModel = await client.POST('/api/v1', { params: { header }, body: { email: 'a@acme-mail.com' } })
  t.equal(noModel.response.status, 422)
  t.match(noModel.error?.detail, [{ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: { email: 'a@acme-mail.com' } }])

  // @ts-expect-error email must be a string (or null).
  const notString = await client.POST('/api/v1', { params: { header }, body: { model: 'user_verification', email: 42 } })
  t.match(notString.error?.detail, [{ type: 'string_type', loc: ['body', 'email'], input: 42 }])

  const badKey = await client.POST('/api/v1', {
    params: { header: { 'X-API-Token': 'uv_not-a-key' } },
    body: { model: 'user_verification', firstname: 'Jane' }
  })
  t.equal(badKey.response.status, 401)
  t.strictSame(badKey.error, { detail: 'Invalid API token' })

  const badModel = await client.POST('/api/v1', { params: { header }, body: { model: 'gpt', firstname: 'Jane' } })
  t.equal(badModel.response.status, 400)
  t.strictSame(badModel.error, { detail: 'Invalid Tool name' })

  const noData = await client.POST('/api/v1', { params: { header }, body: { model: 'user_verification', email: '  ', firstname: '' } })
  t.equal(noData.response.status, 400)
  t.strictSame(noData.error, { detail: 'No valid data provided for verification' })

  const tooLarge = await client.POST('/api/v1', { params: { header }, body: { model: 'user_verification', lastname: 'x'.repeat(2000) } })
  t.equal(tooLarge.response.status, 413)
  t.strictSame(tooLarge.error, { detail: 'Request body too large' })

  const tiny = await api.key('tiny')
  const fits = await client.POST('/api/v1', {
    params: { header: { 'X-API-Token': tiny.key } },
    body: { model: 'user_verification', firstname: 'Jane', lastname: 'Doe' }
  })
  t.equal(fits.response.status, 200)
  t.equal(fits.response.headers.get('x-quota-remaining'), '0')
  const over = await client.POST('/api/v1', {
    params: { header: { 'X-API-Token': tiny.key } },
    body: { model: 'user_verification', firstname: 'Jane' }
  })
  t.equal(over.response.status, 402)
  t.strictSame(over.error, { detail: 'You have to upgrade your plan' })

  const broken = await startApi({
    ...verifiers,
    nameVerifier: {
      predict() {
        throw new Error('model gone')
      }
    }
  })
  t.teardown(() => broken.close())
  const brokenKey = await broken.key('pro')
  const unavailable = await clientOf(broken).POST('/api/v1', {
    params: { header: { 'X-API-Token': brokenKey.key } },
    body: { model: 'user_verification', firstname: 'Jane' }
  })
  t.equal(unavailable.response.status, 503)
  t.strictSame(unavailable.error, { detail: 'Tool service unavailable' })
  t.match(unavailable.response.headers.get('retry-after'), /^\d+$/)

  const limited = await startApi({ ...verifiers, rateLimit: { perKey: 1 } })
  t.teardown(() => limited.close())
  const limitedKey = await limited.key('pro')
  const limitedClient = clientOf(limited)
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) {
    const reply = await limitedClient.POST('/api/v1', {
      params: { header: { 'X-API-Token': limitedKey.key } },
      body: { model: 'user_verification', firstname: 'Jane' }
    })
    statuses.push(reply.response.status)
    if (reply.response.status === 429) {
      t.strictSame(reply.error, { detail: 'Too Many Requests' })
      t.match(reply.response.headers.get('retry-after'), /^\d+$/)
    }
  }
  t.ok(statuses.includes(429), `a 429 among ${statuses.join(', ')}`)
})
