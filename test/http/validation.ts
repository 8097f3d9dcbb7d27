// CONTRIBUTING.md#the-http-contract step 1: the FastAPI-style 422 array, and the order of checks when several fail.
import t from 'tap'
import { startApi } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const api = await startApi(await testVerifiers(t))
t.teardown(() => api.close())
const { key } = await api.key('pro')
const missingHeader = { type: 'missing', loc: ['header', 'X-API-Token'], msg: 'Field required', input: null }

t.test('header absent: one missing entry for the header', async (t) => {
  const reply = await api.post({ model: 'user_verification', firstname: 'Jane' }, { token: null })
  t.equal(reply.status, 422)
  t.same(reply.body, { detail: [missingHeader] })
})

t.test('header absent and model absent: both entries, header first', async (t) => {
  const reply = await api.post({ email: 'jane@example.org' }, { token: null })
  t.equal(reply.status, 422)
  t.strictSame(reply.body.detail, [
    missingHeader,
    { type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: { email: 'jane@example.org' } }
  ])
})

t.test('model absent: input is the body object as received', async (t) => {
  const reply = await api.post({}, { token: key })
  t.equal(reply.status, 422)
  t.strictSame(reply.body.detail, [{ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: {} }])
})

t.test('body absent or empty: missing body', async (t) => {
  for (const body of [undefined, '', 'null']) {
    const reply = await api.post(body, { token: key })
    t.equal(reply.status, 422, `body ${JSON.stringify(body)}`)
    t.strictSame(reply.body.detail, [{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])
  }
})

t.test('body not JSON: json_invalid with the character offset', async (t) => {
  const cases: Array<[string, number]> = [
    ['{"model": "user_verification",}', 30],
    ['{', 1],
    ['model=user_verification', 0],
    ['{"model" "x"}', 9],
    ['  [1, 2', 7]
  ]
  for (const [body, offset] of cases) {
    const reply = await api.post(body, { token: key })
    t.equal(reply.status, 422, body)
    const [entry, ...rest] = reply.body.detail
    t.equal(rest.length, 0)
    t.equal(entry.type, 'json_invalid')
    t.strictSame(entry.loc, ['body', offset], body)
    t.equal(entry.msg, 'JSON decode error')
    t.strictSame(entry.input, {})
    t.type(entry.ctx.error, 'string')
  }
})

t.test('malformed JSON and no header: header entry first, then json_invalid', async (t) => {
  const reply = await api.post('{oops', { token: null })
  t.equal(reply.status, 422)
  t.strictSame(reply.body.detail[0], missingHeader)
  t.equal(reply.body.detail[1].type, 'json_invalid')
})

t.test('JSON that is not an object: model_attributes_type with the body as input', async (t) => {
  for (const body of [[], [1, 'a'], 42, 'text', true, 0]) {
    const reply = await api.post(JSON.stringify(body), { token: key })
    t.equal(reply.status, 422, JSON.stringify(body))
    t.strictSame(reply.body.detail, [
      {
        type: 'model_attributes_type',
        loc: ['body'],
        msg: 'Input should be a valid dictionary or object to extract fields from',
        input: body
      }
    ])
  }
})

t.test('fields that are not strings: string_type, in field order, all at once', async (t) => {
  const reply = await api.post({ lastname: ['x'], model: 7, email: { a: 1 }, firstname: true }, { token: key })
  t.equal(reply.status, 422)
  t.strictSame(reply.body.detail, [
    { type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: 7 },
    { type: 'string_type', loc: ['body', 'email'], msg: 'Input should be a valid string', input: { a: 1 } },
    { type: 'string_type', loc: ['body', 'firstname'], msg: 'Input should be a valid string', input: true },
    { type: 'string_type', loc: ['body', 'lastname'], msg: 'Input should be a valid string', input: ['x'] }
  ])
})

t.test('model null is a string_type error; null optional fields are "not provided"', async (t) => {
  const modelNull = await api.post({ model: null, email: null }, { token: key })
  t.equal(modelNull.status, 422)
  t.strictSame(modelNull.body.detail, [{ type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: null }])
  const namesNull = await api.post({ model: 'user_verification', email: null, firstname: 'Jane', lastname: null }, { token: key })
  t.equal(namesNull.status, 200)
  t.equal(namesNull.body.request_count, 1)
  t.strictSame(namesNull.body.received_data, { model: 'user_verification', email: null, firstname: 'Jane', lastname: null })
})

t.test('unknown members are ignored, including prototype keys', async (t) => {
  const reply = await api.post('{"model":"user_verification","firstname":"Jane","extra":[1],"__proto__":{"admin":true},"constructor":1}', {
    token: key
  })
  t.equal(reply.status, 200)
  t.equal(reply.body.request_count, 1)
  t.notOk('extra' in reply.body.received_data)
})

t.test('422 comes before 401: bad token with a malformed body', async (t) => {
  const reply = await api.post({ email: 'x@y.org' }, { token: 'uv_wrong' })
  t.equal(reply.status, 422)
})

t.test(
  'a non-JSON content type gets the 422 of CONTRIBUTING.md#the-http-contract: the body is not parsed, so it is no object',
  async (t) => {
    const text = '{"model":"user_verification","firstname":"Jane"}'
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/x-www-form-urlencoded', 'multipart/form-data', 'json']) {
      const reply = await api.post(text, { token: key, headers: { 'content-type': type } })
      t.equal(reply.status, 422, type)
      t.strictSame(
        reply.body,
        {
          detail: [
            {
              type: 'model_attributes_type',
              loc: ['body'],
              msg: 'Input should be a valid dictionary or object to extract fields from',
              input: text
            }
          ]
        },
        type
      )
    }
    const noToken = await api.post(text, { headers: { 'content-type': 'text/plain' } })
    t.strictSame(
      noToken.body.detail.map((issue: { type: string }) => issue.type),
      ['missing', 'model_attributes_type'],
      'the header entry first'
    )
    const empty = await api.post('', { token: key, headers: { 'content-type': 'text/plain' } })
    t.equal(empty.status, 422)
    t.strictSame(empty.body.detail[0], { type: 'missing', loc: ['body'], msg: 'Field required', input: null })
    for (const type of ['application/json', 'application/json; charset=utf-8', 'Application/JSON', 'application/vnd.api+json']) {
      const reply = await api.post(text, { token: key, headers: { 'content-type': type } })
      t.equal(reply.status, 200, type)
    }
  }
)
