// The host-app contract: whatever body parser the host mounted first, a bad body on the API path gets the API's JSON answer and reaches no log.
import { request } from 'node:http'
import express, { type Express } from 'express'
import t, { type Test } from 'tap'
import { userVerification } from '../../lib/http/middleware.js'
import { issueKey } from '../../lib/quota/api-keys.js'
import { captureLogger, memoryStores } from '../fixtures/create-api.js'
import { listen } from '../fixtures/listen.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

// A marker that must never appear in a log line or on stderr.
const SECRET = 'jane.marker.7f3a@example.com'

interface Raw {
  status: number
  type: string
  body: string
}

/** Sends raw bytes so the tests control Content-Length, chunking and the content type exactly. */
function send(url: string, body: string, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/api/v1`, { method: 'POST', headers }, (res) => {
      let text = ''
      res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body: text }))
    })
    req.on('error', reject)
    req.end(body)
  })
}

let verifiers: Awaited<ReturnType<typeof testVerifiers>>
t.before(async () => {
  verifiers = await testVerifiers(t)
})

/** The API behind `host`'s parsers on a loopback port, served until `t` ends. */
async function start(t: Test, host: (app: Express) => void, mountOnRouter = false) {
  const logger = captureLogger()
  const stores = memoryStores()
  const { key } = await issueKey(stores.keys, 'pro')
  const middleware = userVerification({ logger, store: stores, ...verifiers })
  await middleware.ready
  const app = express()
  host(app)
  if (mountOnRouter) {
    const router = express.Router()
    router.use('/api/v1', middleware)
    app.use(router)
  } else app.use('/api/v1', middleware)
  const { url } = await listen(app, t, () => middleware.close())
  return { url, key, logger }
}

const hosts: Array<[string, (app: Express) => void]> = [
  ['no parser', () => {}],
  ['express.json()', (app) => app.use(express.json())],
  [
    'express.json({ limit: "1mb" }), urlencoded and text',
    (app) => app.use(express.json({ limit: '1mb' }), express.urlencoded(), express.text())
  ],
  ['express.raw() for every type', (app) => app.use(express.raw({ type: () => true }))]
]

t.test('every host parser setup answers like the API alone, in JSON', async (t) => {
  // Spy on stderr too: Express's final handler prints an error's stack (with the body excerpt) there.
  const written: string[] = []
  const write = process.stderr.write.bind(process.stderr)
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: never[]) => {
    written.push(String(chunk))
    return write(chunk, ...rest)
  }) as typeof process.stderr.write
  t.teardown(() => {
    process.stderr.write = write
  })

  const big = JSON.stringify({ model: 'user_verification', email: SECRET, lastname: 'x'.repeat(2_000_000) })
  const cases: Array<[string, string, Record<string, string>]> = [
    ['malformed JSON', `{"model":"user_verification","email":"${SECRET}",`, { 'content-type': 'application/json' }],
    ['JSON that is not an object', '"just a string"', { 'content-type': 'application/json' }],
    ['oversized, declared length', big, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(big)) }],
    ['oversized, chunked', big, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' }],
    [
      'form-encoded',
      `model=user_verification&email=${encodeURIComponent(SECRET)}`,
      { 'content-type': 'application/x-www-form-urlencoded' }
    ],
    ['text/plain', `{"model":"user_verification","email":"${SECRET}"}`, { 'content-type': 'text/plain' }],
    ['unsupported encoding', 'xxxx', { 'content-type': 'application/json', 'content-encoding': 'compress' }],
    ['unsupported charset', '{}', { 'content-type': 'application/json; charset=klingon' }],
    ['valid request', JSON.stringify({ model: 'user_verification', email: SECRET }), { 'content-type': 'application/json' }]
  ]
  const answers = new Map<string, Raw[]>()
  for (const [name, setup] of hosts) {
    const api = await start(t, setup)
    for (const [label, body, headers] of cases) {
      const reply = await send(api.url, body, { ...headers, 'x-api-token': api.key })
      t.match(reply.type, /^application\/json/, `${name}, ${label}: JSON (${reply.status})`)
      t.notMatch(reply.body, /<html|<pre|at [A-Za-z.]+ \(/i, `${name}, ${label}: no HTML page or stack`)
      t.ok(reply.status < 500, `${name}, ${label}: not a 5xx`)
      answers.set(label, [...(answers.get(label) ?? []), reply])
    }
    t.equal(
      api.logger.lines.filter((line) => line.includes(SECRET) || line.includes('user_verification')).length,
      0,
      `${name}: no body in the logs`
    )
  }
  t.equal(written.filter((chunk) => chunk.includes(SECRET)).length, 0, 'no body on stderr')
  // The API's own answers (no host parser) are the reference for every setup.
  for (const [label, replies] of answers) {
    const [reference, ...others] = replies
    for (const [i, reply] of others.entries()) {
      const name = hosts[i + 1]![0]
      if (label === 'valid request') {
        t.equal(reply.status, 200, `${name}: a valid request still succeeds`)
        continue
      }
      // A host parser that read a body the API would not have parsed (form, text, raw) leaves an object or a string: the body errors stay 4xx JSON.
      if (label === 'form-encoded' || label === 'text/plain' || label === 'unsupported charset') continue
      t.same(
        { status: reply.status, body: JSON.parse(reply.body) },
        { status: reference!.status, body: JSON.parse(reference!.body) },
        `${name}, ${label}: same answer as the API alone`
      )
    }
  }
  t.equal(answers.get('malformed JSON')![1]!.status, 422, 'malformed JSON behind express.json() is the 422 json_invalid')
  t.match(JSON.parse(answers.get('malformed JSON')![1]!.body), { detail: [{ type: 'json_invalid', loc: ['body', Number] }] })
  t.same(JSON.parse(answers.get('oversized, chunked')![1]!.body), { detail: 'Request body too large' })
})

t.test('mounted on a Router behind a parser: one warning that says how to fix it', async (t) => {
  const api = await start(t, (app) => app.use(express.json()), true)
  for (let i = 0; i < 3; i++) {
    const reply = await send(api.url, JSON.stringify({ model: 'user_verification', email: SECRET }), {
      'content-type': 'application/json',
      'x-api-token': api.key
    })
    t.equal(reply.status, 200)
  }
  const warnings = api.logger.lines.filter((line) => line.includes('WRN_UV_HOST_PARSER'))
  t.equal(warnings.length, 1, 'warned once')
  t.match(warnings[0], /app\.use\(path, middleware\)/)
})
