// CONTRIBUTING.md#the-200-body: the 200 body for all seven field combinations, the echo, trimming and the quota headers.
import t from 'tap'
import { startApi } from '../fixtures/create-api.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const verifiers = await testVerifiers(t)
const api = await startApi(verifiers)
t.teardown(() => api.close())
const { key } = await api.key('pro')

const values = { email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' }
const combinations: Array<Array<keyof typeof values>> = [
  ['email', 'firstname', 'lastname'],
  ['email', 'firstname'],
  ['email', 'lastname'],
  ['firstname', 'lastname'],
  ['email'],
  ['firstname'],
  ['lastname']
]

for (const fields of combinations) {
  t.test(`combination: ${fields.join(' + ')}`, async (t) => {
    const body: Record<string, string> = { model: 'user_verification' }
    for (const field of fields) body[field] = values[field]
    const reply = await api.post(body, { token: key })
    t.equal(reply.status, 200)
    t.equal(reply.body.status, 'success')
    t.equal(reply.body.request_count, fields.length)
    t.strictSame(reply.body.received_data, {
      model: 'user_verification',
      email: body.email ?? null,
      firstname: body.firstname ?? null,
      lastname: body.lastname ?? null
    })
    t.equal('email_verification' in reply.body, fields.includes('email'))
    const hasNames = fields.includes('firstname') || fields.includes('lastname')
    t.equal('name_verification' in reply.body, hasNames)
    if (hasNames) {
      t.strictSame(
        Object.keys(reply.body.name_verification),
        fields.filter((f) => f !== 'email')
      )
    }
    t.strictSame(Object.keys(reply.body), [
      'status',
      'received_data',
      'request_count',
      ...(fields.includes('email') ? ['email_verification'] : []),
      ...(hasNames ? ['name_verification'] : [])
    ])
  })
}

t.test('email_verification fields and types', async (t) => {
  const reply = await api.post({ model: 'user_verification', email: '  Jane.Doe@Acme-Mail.COM ' }, { token: key })
  const email = reply.body.email_verification
  t.equal(email.emailAddress, 'Jane.Doe@Acme-Mail.COM', 'trimmed, case kept')
  t.equal(email.username, 'Jane.Doe')
  t.equal(email.domain, 'acme-mail.com')
  t.equal(email.syntexCheck, 'Pass')
  t.equal(email.dnsCheck, 'Pass')
  t.equal(email['the service'], false)
  t.equal(email.disposable, email['the service'])
  for (const field of ['role', 'free']) t.type(email[field], 'boolean')
  t.ok(email.suggestion === null || typeof email.suggestion === 'string')
  t.equal(reply.body.received_data.email, '  Jane.Doe@Acme-Mail.COM ', 'echo is as sent')
})

t.test('name predictions: value trimmed, label, confidence of the label in [0.5, 1] with 4 decimals', async (t) => {
  const reply = await api.post({ model: 'user_verification', firstname: '  Maria ', lastname: 'asdfgh' }, { token: key })
  const { firstname, lastname } = reply.body.name_verification
  t.equal(firstname.value, 'Maria')
  t.equal(firstname.prediction, 'LABEL_1')
  t.equal(lastname.prediction, 'LABEL_0')
  for (const p of [firstname, lastname]) {
    t.ok(p.confidence >= 0.5 && p.confidence <= 1, String(p.confidence))
    t.equal(Math.round(p.confidence * 1e4) / 1e4, p.confidence)
  }
})

t.test('an empty field beside others gets no result and is not counted', async (t) => {
  const reply = await api.post({ model: 'user_verification', email: '', firstname: 'Jane', lastname: '  ' }, { token: key })
  t.equal(reply.status, 200)
  t.equal(reply.body.request_count, 1)
  t.notOk('email_verification' in reply.body)
  t.strictSame(Object.keys(reply.body.name_verification), ['firstname'])
  t.strictSame(reply.body.received_data, { model: 'user_verification', email: '', firstname: 'Jane', lastname: '  ' })
})

t.test('quota headers on success', async (t) => {
  const fresh = await api.key('basic')
  const reply = await api.post({ model: 'user_verification', ...values }, { token: fresh.key })
  t.equal(reply.headers.get('x-quota-limit'), '30000')
  t.equal(reply.headers.get('x-quota-remaining'), '29997')
  const reset = new Date(reply.headers.get('x-quota-reset') ?? '')
  t.equal(reset.getUTCDate(), 1)
  t.equal(reset.getUTCHours(), 0)
  t.ok(reset.getTime() > Date.now())
})

t.test('answers are JSON with an exact length and no ETag (an API answer is never cached)', async (t) => {
  const ok = await api.post({ model: 'user_verification', ...values }, { token: key })
  const refused = await api.post({ model: 'user_verification', ...values }, { token: 'uv_not_a_key' })
  const invalid = await api.post({ model: 'user_verification', email: 5 }, { token: key })
  for (const [name, reply, status] of [
    ['200', ok, 200],
    ['401', refused, 401],
    ['422', invalid, 422]
  ] as const) {
    t.equal(reply.status, status, name)
    t.equal(reply.headers.get('etag'), null, `${name}: no ETag`)
    t.equal(reply.headers.get('content-type'), 'application/json; charset=utf-8', `${name}: JSON`)
    t.equal(Number(reply.headers.get('content-length')), Buffer.byteLength(JSON.stringify(reply.body)), `${name}: exact length`)
  }
})

t.test('the same contract when the host app ran express.json() first', async (t) => {
  const host = await startApi({ ...verifiers, hostJson: true })
  t.teardown(() => host.close())
  const issued = await host.key('pro')
  const ok = await host.post({ model: 'user_verification', firstname: 'Jane', email: null }, { token: issued.key })
  t.equal(ok.status, 200)
  t.equal(ok.body.request_count, 1)
  const missing = await host.post({ firstname: 'Jane' }, { token: null })
  t.strictSame(
    missing.body.detail.map((d: { loc: unknown }) => d.loc),
    [
      ['header', 'X-API-Token'],
      ['body', 'model']
    ]
  )
  const array = await host.post([1], { token: issued.key })
  t.equal(array.body.detail[0].type, 'model_attributes_type')
})
