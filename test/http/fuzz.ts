// Property-based fuzzing of the HTTP surface (fast-check): no 5xx, JSON errors with detail, no crash, flat memory, no prototype pollution.
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { gzipSync } from 'node:zlib'
import fc from 'fast-check'
import t from 'tap'
import { issueKey } from '../../lib/quota/api-keys.js'
import { userVerification } from '../../lib/http/middleware.js'
import { defaultPlans } from '../../lib/quota/plans.js'
import { createApp } from '../../server/app.js'
import { captureLogger, memoryStores } from '../fixtures/create-api.js'
import { listen } from '../fixtures/listen.js'
import { buildRequest, RawConnection, rawRequest, type RawResponse, type Target } from '../fixtures/raw-http.js'
import { testVerifiers, testZone } from '../fixtures/test-verifiers.js'

// Case counts: CI runs the defaults (>= 10,000 in all); UV_FUZZ_SCALE=0.1 for a quick local pass.
const scale = Number(process.env.UV_FUZZ_SCALE ?? 1)
const runs = (n: number) => Math.max(10, Math.round(n * scale))
const seed = Number(process.env.UV_FUZZ_SEED ?? Date.now() % 2 ** 31)
t.comment(`fast-check seed ${seed} (rerun with UV_FUZZ_SEED=${seed})`)

setFlagsFromString('--expose-gc')
const gc = runInNewContext('gc') as () => void

const prototypesBefore = [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
  Object.getOwnPropertyNames(p).sort().join()
)

// The standalone server's app (helmet, JSON 404, error handler) around the real middleware,
// on memory stores, with the loopback DNS server; a small DNS cache so it fills during warm-up.
const verifiers = await testVerifiers(t)
const logger = captureLogger()
const stores = memoryStores()
const plans = { ...defaultPlans, fuzz: 1_000_000_000 }
const middleware = userVerification({ ...verifiers, store: stores, logger, plans, dnsCache: { max: 200 } })
await middleware.ready
const { url } = await listen(createApp(middleware, { ...logger, info: () => {} }), t, () => middleware.close())
const target: Target = { host: '127.0.0.1', port: Number(new URL(url).port) }
const { key } = await issueKey(stores.keys, 'fuzz')
const revoked = await issueKey(stores.keys, 'fuzz')
await stores.keys.update(revoked.id, { revokedAt: new Date().toISOString() })

/** Statuses the API may answer (CONTRIBUTING.md#the-http-contract); 503 only when a verifier really fails, which fuzzing must not cause. */
const apiStatuses = new Set([200, 400, 401, 402, 404, 405, 413, 422])
const tally = new Map<string, number>()
const count = (label: string) => tally.set(label, (tally.get(label) ?? 0) + 1)

/**
 * Problems found, by kind (e.g. "status 503"), with up to 3 example requests each. Properties
 * record instead of throwing, so one known bug does not hide the others; each subtest then
 * asserts it found none.
 */
type Problems = Map<string, string[]>
function record(problems: Problems, problem: string, request: string): void {
  const kind = problem.split(':')[0] ?? problem
  const examples = problems.get(kind) ?? []
  if (examples.length < 3) examples.push(`${problem.slice(0, 200)} ← ${request.slice(0, 600)}`)
  problems.set(kind, examples)
}
function noProblems(t: { strictSame(found: unknown, wanted: unknown, message: string): unknown }, problems: Problems, what: string): void {
  t.strictSame(Object.fromEntries(problems), {}, what)
}

/** The contract every answer to a well-framed request keeps. Returns a problem, or undefined. */
function checkApiResponse(response: RawResponse, path = '/api/v1'): string | undefined {
  const { status } = response
  if (status === undefined) return 'no response (connection closed)'
  count(String(status))
  if (status >= 500) return `status ${status}: ${response.body.slice(0, 200)}`
  // Health, metrics and the dashboard answer in their own formats; only their errors follow the API's.
  if (status < 400 && !/^\/api\/v1\/?(\?|$)/.test(path)) return undefined
  if (!apiStatuses.has(status)) return `unexpected status ${status}`
  if (!/^application\/json/.test(response.headers['content-type'] ?? ''))
    return `status ${status} without a JSON content type: ${response.body.slice(0, 200)}`
  let body: unknown
  try {
    body = JSON.parse(response.body)
  } catch {
    return `status ${status} with a body that is not JSON: ${response.body.slice(0, 200)}`
  }
  if (status === 200) return (body as { status?: unknown }).status === 'success' ? undefined : 'a 200 without status: success'
  const detail = (body as { detail?: unknown } | null)?.detail
  if (typeof detail !== 'string' && !Array.isArray(detail)) return `status ${status} without a detail: ${response.body.slice(0, 200)}`
  return undefined
}

// ---- arbitraries ----------------------------------------------------------------------------

const pollutionKeys = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isAdmin']
const bodyKeys = ['model', 'email', 'firstname', 'lastname']

const controlChars = fc.string({ unit: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), maxLength: 20 })
const loneSurrogates = fc.string({
  unit: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)),
  minLength: 1,
  maxLength: 4
})
const anyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: controlChars },
  { weight: 1, arbitrary: loneSurrogates },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\t\n',
      '\u00a0',
      '\u200b',
      '\ufeff',
      'null',
      'undefined',
      'NaN',
      '0',
      '-0',
      '1e999',
      'true',
      '[]',
      '{}'
    )
  },
  { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double()).map(String) }
)
const hugeText = fc
  .tuple(fc.integer({ min: 200, max: 6000 }), fc.constantFrom('a', 'é', '😀', ' ', '\u0000', '.', '@', '\\', '"'))
  .map(([n, c]) => c.repeat(n))
const emailText = fc.oneof(
  fc.emailAddress(),
  fc
    .tuple(
      fc.string({ maxLength: 20 }),
      fc.constantFrom(...Object.keys(testZone), 'gmail.com', 'mailinator.com', 'localhost', 'xn--nxasmq6b.com', 'b.c', '')
    )
    .map(([local, domain]) => `${local}@${domain}`),
  fc.tuple(anyText, anyText).map(([local, domain]) => `${local}@${domain}`)
)
const nameText = fc.oneof(
  fc.constantFrom('Jane', 'Zoë', 'José María', "O'Brien", 'Nguyễn', 'Иван', '李', 'محمد', 'asdf', 'test', 'n/a', 'x'.repeat(300)),
  anyText
)

/** Numbers as JSON text, including ones JSON.parse turns into Infinity, -0 or lossy values. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.constantFrom('1e999', '-1e999', '-0', '0.0000000000000000000001', '123456789012345678901234567890', '1E+2', '9007199254740993')
)

/** JSON text of any type and depth; keys include pollution keys and duplicates (serialized by hand so `__proto__` stays an own key). */
const { jsonText } = fc.letrec<{ jsonText: string; leaf: string; array: string; object: string }>((tie) => ({
  leaf: fc.oneof(
    anyText.map((s) => JSON.stringify(s)),
    numberText,
    fc.constantFrom('true', 'false', 'null')
  ),
  array: fc.array(tie('jsonText'), { maxLength: 5 }).map((items) => `[${items.join(',')}]`),
  object: fc
    .array(fc.tuple(fc.oneof(fc.constantFrom(...pollutionKeys, ...bodyKeys), fc.string({ maxLength: 8 })), tie('jsonText')), {
      maxLength: 6
    })
    .map((entries) => `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
  jsonText: fc.oneof({ depthSize: 'small', withCrossShrink: true }, tie('leaf'), tie('array'), tie('object'))
}))

/** A member value: strings of every kind (the usual case), or any other JSON. */
const fieldValue = fc.oneof(
  { weight: 6, arbitrary: fc.oneof(anyText, emailText, nameText).map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: hugeText.map((s) => JSON.stringify(s)) },
  { weight: 1, arbitrary: numberText.map((n) => JSON.stringify(n)) },
  { weight: 2, arbitrary: jsonText }
)

/** A request body object: `model` mostly right, any subset of the fields, extra and pollution keys. */
const bodyObject = fc
  .record({
    model: fc.option(fc.oneof({ weight: 5, arbitrary: fc.constant('"user_verification"') }, { weight: 1, arbitrary: fieldValue }), {
      nil: undefined,
      freq: 5
    }),
    email: fc.option(fieldValue, { nil: undefined }),
    firstname: fc.option(fieldValue, { nil: undefined }),
    lastname: fc.option(fieldValue, { nil: undefined }),
    extra: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...pollutionKeys), fc.string({ maxLength: 10 })), jsonText), { maxLength: 3 }),
    order: fc.boolean()
  })
  .map(({ model, email, firstname, lastname, extra, order }) => {
    const members = Object.entries({ model, email, firstname, lastname }).filter(([, v]) => v !== undefined) as Array<[string, string]>
    const all = order ? [...members, ...extra] : [...extra, ...members]
    return `{${all.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`
  })

/** Deep nesting, within the body limit. */
const deepText = fc.tuple(fc.integer({ min: 50, max: 8000 }), fc.constantFrom('array', 'object', 'member')).map(([depth, kind]) => {
  if (kind === 'array') return '['.repeat(depth) + ']'.repeat(depth)
  const inner = `${'{"a":'.repeat(Math.floor(depth / 3))}1${'}'.repeat(Math.floor(depth / 3))}`
  return kind === 'object' ? inner : `{"model":"user_verification","email":${inner}}`
})

/** Broken JSON: truncated, trailing garbage, BOM, comments, single quotes, random text. */
const brokenText = fc.oneof(
  bodyObject.chain((text) => fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((cut) => text.slice(0, cut))),
  fc.tuple(bodyObject, fc.constantFrom('x', '}', ',', ' // c', '\u0000', '{}')).map(([text, tail]) => text + tail),
  bodyObject.map((text) => `\ufeff${text}`),
  fc.constantFrom(
    "{'model':'user_verification'}",
    '{"model":"user_verification",}',
    '{model:1}',
    '{"a":1 /* c */}',
    '[1,]',
    '"unterminated',
    '{"a":"\\x"}',
    '{"a":"\\u12"}',
    'NaN',
    'Infinity',
    '-',
    '01'
  ),
  fc.string({ maxLength: 60 })
)

/** Body bytes: valid JSON objects mostly, then everything else, incl. invalid UTF-8 and oversize. */
const bodyBytes = fc.oneof(
  { weight: 10, arbitrary: bodyObject.map((s) => Buffer.from(s, 'utf8')) },
  { weight: 3, arbitrary: jsonText.map((s) => Buffer.from(s, 'utf8')) },
  { weight: 3, arbitrary: brokenText.map((s) => Buffer.from(s, 'utf8')) },
  { weight: 1, arbitrary: deepText.map((s) => Buffer.from(s, 'utf8')) },
  { weight: 2, arbitrary: fc.uint8Array({ maxLength: 80 }).map((a) => Buffer.from(a)) },
  { weight: 1, arbitrary: bodyObject.map((s) => Buffer.from(s.replace(/"user_verification"/, '"user_\xff\xfe_verification"'), 'latin1')) },
  {
    weight: 1,
    arbitrary: fc
      .integer({ min: 16 * 1024 - 64, max: 40 * 1024 })
      .map((n) => Buffer.from(`{"model":"user_verification","email":"${'a'.repeat(n)}"}`))
  },
  { weight: 1, arbitrary: fc.constant(Buffer.alloc(0)) }
)

/** Header values a well-formed request may carry (tab, visible ASCII, obs-text). */
const headerValue = fc
  .oneof(
    fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 60 }),
    fc.string({
      unit: fc.oneof(
        fc.constant('\t'),
        fc
          .integer({ min: 0x20, max: 0xff })
          .filter((c) => c !== 0x7f)
          .map((c) => String.fromCharCode(c))
      ),
      maxLength: 30
    }),
    fc.integer({ min: 1000, max: 2500 }).map((n) => 'x'.repeat(n))
  )
  .map((v) => v.trim())
const tokenChar = fc.constantFrom(..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+-.^_`|~")
const headerName = fc.oneof(
  fc.string({ unit: tokenChar, minLength: 1, maxLength: 20 }),
  fc.constantFrom('__proto__', 'constructor', 'x-api-token', 'X-API-TOKEN', 'content-type', 'accept', 'x-forwarded-for', 'cookie')
)

const token = fc.oneof(
  { weight: 6, arbitrary: fc.constant(key) },
  { weight: 1, arbitrary: fc.constant(revoked.key) },
  { weight: 1, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', `${key} `, key.toUpperCase(), 'uv_', '__proto__', 'constructor', '0', 'null') },
  { weight: 2, arbitrary: headerValue }
)
const contentType = fc.option(
  fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/json') },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'application/json; charset=utf-8',
        'application/json; charset=UTF-8',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/json; charset=latin1',
        'application/json; charset=utf-16',
        'application/json; charset=bogus',
        'application/json; charset',
        ';;',
        'application/json;charset="utf-8"'
      )
    },
    { weight: 1, arbitrary: headerValue }
  ),
  { nil: undefined, freq: 8 }
)
const contentEncoding = fc.oneof(
  { weight: 12, arbitrary: fc.constant(undefined) },
  { weight: 1, arbitrary: fc.constantFrom('identity', 'gzip', 'deflate', 'br', 'x-unknown', 'gzip, gzip') }
)
const path = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('/api/v1', '/api/v1/') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '/api/v1?x=1',
      '/api/v1/x',
      '/api/v1/%zz',
      '/api/%E0%A4%A',
      '/API/V1',
      '/api/v1//',
      '/api/v1/..',
      '/%2e%2e/api/v1',
      '/api/v1;x',
      '/api/v1#f',
      '/healthz',
      '/readyz',
      '/metrics',
      '/dashboard',
      '/dashboard/',
      '/dashboard/api/usage',
      '/',
      '/nope',
      '/api/v1/__proto__',
      '/api/v1?__proto__[polluted]=1'
    )
  },
  { weight: 1, arbitrary: fc.string({ unit: fc.constantFrom(...'abc/%?&=#._~-'), maxLength: 30 }).map((p) => `/${p}`) }
)
const method = fc.oneof(
  { weight: 12, arbitrary: fc.constant('POST') },
  { weight: 2, arbitrary: fc.constantFrom('GET', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND', 'SEARCH', 'QUERY', 'PURGE') }
)

interface Case {
  method: string
  path: string
  headers: Array<[string, string]>
  body: Buffer
}

const wellFramed = fc
  .record({
    method,
    path,
    token,
    contentType,
    contentEncoding,
    extra: fc.array(fc.tuple(headerName, headerValue), { maxLength: 4 }),
    body: bodyBytes,
    gzipBody: fc.boolean()
  })
  .map(({ method, path, token, contentType, contentEncoding, extra, body, gzipBody }): Case => {
    const headers: Array<[string, string]> = [['Host', '127.0.0.1']]
    for (const [name, value] of extra) {
      // Framing headers belong to the raw-socket cases.
      if (!/^(content-length|transfer-encoding|host|connection|expect|upgrade|content-encoding)$/i.test(name)) headers.push([name, value])
    }
    if (token !== undefined) headers.push(['X-API-Token', token])
    if (contentType !== undefined) headers.push(['Content-Type', contentType])
    let payload = body
    if (contentEncoding !== undefined) {
      headers.push(['Content-Encoding', contentEncoding])
      if (contentEncoding === 'gzip' && gzipBody) payload = gzipSync(body)
    }
    headers.push(['Content-Length', String(payload.length)])
    return { method, path, headers, body: method === 'HEAD' ? Buffer.alloc(0) : payload }
  })

const connection = new RawConnection(target, 10_000)
t.teardown(() => connection.close())

/** Time spent waiting for the server, to tell it apart from generating cases. */
let serverMs = 0

async function sendCase(c: Case): Promise<RawResponse> {
  const headers = c.method === 'HEAD' ? c.headers.filter(([n]) => n !== 'Content-Length') : c.headers
  const sentAt = performance.now()
  const response = await connection.send(buildRequest(c.method, c.path, headers, c.body))
  serverMs += performance.now() - sentAt
  // HEAD answers carry headers only.
  if (c.method === 'HEAD') return { ...response, body: '{"detail":"head"}' }
  return response
}

const bodyOnly = fc.record({ token, body: bodyBytes }).map(({ token, body }): Case => {
  const headers: Array<[string, string]> = [
    ['Host', '127.0.0.1'],
    ['Content-Type', 'application/json'],
    ['Content-Length', String(body.length)]
  ]
  if (token !== undefined) headers.push(['X-API-Token', token])
  return { method: 'POST', path: '/api/v1', headers, body }
})

function describe(c: Case): string {
  const cut = (text: string, n: number) => (text.length > n ? `${text.slice(0, n)}…(${text.length})` : text)
  const headers = c.headers.map(([name, value]) => [cut(name, 40), cut(value, 60)])
  return JSON.stringify({ method: c.method, path: c.path, headers, body: cut(c.body.toString('latin1'), 200) })
}

function memory(): { heap: number; external: number; heapTotal: number; rss: number } {
  gc()
  gc()
  const { heapUsed, heapTotal, external, rss } = process.memoryUsage()
  return { heap: heapUsed, external, heapTotal, rss }
}

const started = Date.now()
let cases = 0
let baseline: ReturnType<typeof memory> | undefined

t.test('warm-up: bodies to the endpoint (fills caches before the memory baseline)', async (t) => {
  const problems: Problems = new Map()
  await fc.assert(
    fc.asyncProperty(bodyOnly, async (c) => {
      cases++
      const problem = checkApiResponse(await sendCase(c))
      if (problem !== undefined) record(problems, problem, describe(c))
    }),
    { numRuns: runs(1500), seed }
  )
  noProblems(t, problems, 'every answer kept the contract')
  baseline = memory()
  t.pass(`baseline heap ${(baseline.heap / 1e6).toFixed(1)} MB, rss ${(baseline.rss / 1e6).toFixed(1)} MB`)
})

t.test('JSON bodies of every type and depth, headers, methods and paths: never a 5xx, every error JSON with a detail', async (t) => {
  const problems: Problems = new Map()
  await fc.assert(
    fc.asyncProperty(wellFramed, async (c) => {
      cases++
      const problem = checkApiResponse(await sendCase(c), c.path)
      if (problem !== undefined) record(problems, problem, describe(c))
    }),
    { numRuns: runs(6000), seed: seed + 1 }
  )
  noProblems(t, problems, 'every answer kept the contract')
})

t.test('the request members: every kind of value in model, email, firstname and lastname', async (t) => {
  const problems: Problems = new Map()
  await fc.assert(
    fc.asyncProperty(bodyObject, fc.constantFrom(key, revoked.key), async (text, token) => {
      cases++
      const c: Case = {
        method: 'POST',
        path: '/api/v1',
        headers: [
          ['Host', 'x'],
          ['Content-Type', 'application/json'],
          ['X-API-Token', token],
          ['Content-Length', String(Buffer.byteLength(text))]
        ],
        body: Buffer.from(text)
      }
      const response = await sendCase(c)
      const problem = checkApiResponse(response)
      if (problem !== undefined) return record(problems, problem, describe(c))
      if (response.status === 200) {
        const body = JSON.parse(response.body) as { request_count: unknown; received_data: { model: unknown } }
        if (
          body.received_data.model !== 'user_verification' ||
          typeof body.request_count !== 'number' ||
          body.request_count < 1 ||
          body.request_count > 3
        ) {
          record(problems, `a 200 with a wrong body: ${response.body.slice(0, 300)}`, describe(c))
        }
      }
    }),
    { numRuns: runs(2500), seed: seed + 2 }
  )
  noProblems(t, problems, 'every answer kept the contract')
})

/** Bytes no well-behaved client sends: broken framing, control characters, odd request lines. */
const rawBytes = fc.oneof(
  fc.tuple(fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 12 }), path).map(([m, p]) =>
    buildRequest(
      m || 'X',
      p,
      [
        ['Host', 'x'],
        ['Content-Length', '2']
      ],
      '{}'
    )
  ),
  fc
    .tuple(headerName, fc.string({ unit: fc.integer({ min: 0, max: 255 }).map((c) => String.fromCharCode(c)), maxLength: 30 }))
    .map(([n, v]) =>
      buildRequest(
        'POST',
        '/api/v1',
        [
          ['Host', 'x'],
          [n, v],
          ['X-API-Token', key],
          ['Content-Length', '2']
        ],
        '{}'
      )
    ),
  fc
    .constantFrom<Array<[string, string]>>(
      [
        ['Host', 'x'],
        ['Content-Length', '2'],
        ['Transfer-Encoding', 'chunked']
      ],
      [
        ['Host', 'x'],
        ['Content-Length', '2'],
        ['Content-Length', '3']
      ],
      [
        ['Host', 'x'],
        ['Content-Length', '-1']
      ],
      [
        ['Host', 'x'],
        ['Content-Length', '0x10']
      ],
      [
        ['Host', 'x'],
        ['Content-Length', '99999999999999999999']
      ],
      [
        ['Host', 'x'],
        ['Transfer-Encoding', 'gzip, chunked']
      ],
      [
        ['Host', 'x'],
        ['Transfer-Encoding', 'chunked, identity']
      ],
      [['Content-Length', '2']],
      [
        ['Host', 'x'],
        ['Host', 'y'],
        ['Content-Length', '2']
      ],
      [
        ['Host', 'x'],
        ['Expect', 'something-else'],
        ['Content-Length', '2']
      ],
      [
        ['Host', 'x'],
        [' Content-Length', '2']
      ],
      [
        ['Host', 'x'],
        ['Content-Length ', '2']
      ]
    )
    .map((headers) => buildRequest('POST', '/api/v1', headers, '{}')),
  fc
    .tuple(fc.constantFrom('zz', '-1', '1;ext="', 'ffffffffffffffffff', '2\r\n{}\r\n0'), fc.uint8Array({ maxLength: 20 }))
    .map(([size, junk]) =>
      Buffer.concat([
        buildRequest('POST', '/api/v1', [
          ['Host', 'x'],
          ['Transfer-Encoding', 'chunked'],
          ['X-API-Token', key]
        ]),
        Buffer.from(`${size}\r\n`),
        Buffer.from(junk),
        Buffer.from('\r\n0\r\n\r\n')
      ])
    ),
  fc
    .constantFrom(
      'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n',
      'POST /api/v1 HTTP/1.1\nHost: x\nContent-Length: 2\n\n{}',
      'POST /api/v1 HTTP/3.0\r\nHost: x\r\n\r\n',
      'POST /api/v1\r\n\r\n',
      'GET / HTTP/1.1\r\nHost: x\r\nX: a\r\n b\r\n\r\n',
      '\r\n\r\n\r\n\r\n',
      'CONNECT x:443 HTTP/1.1\r\nHost: x:443\r\n\r\n'
    )
    .map((s) => Buffer.from(s, 'latin1')),
  fc.uint8Array({ minLength: 1, maxLength: 200 }).map((a) => Buffer.concat([Buffer.from(a), Buffer.from('\r\n\r\n')])),
  fc.integer({ min: 16 * 1024, max: 80 * 1024 }).map((n) =>
    buildRequest(
      'POST',
      '/api/v1',
      [
        ['Host', 'x'],
        ['X-Big', 'b'.repeat(n)],
        ['Content-Length', '2']
      ],
      '{}'
    )
  )
)

t.test('raw sockets: broken framing, invalid bytes, odd methods and headers never get a 5xx and never stop the server', async (t) => {
  const parserAnswers = new Map<string, number>()
  const problems: Problems = new Map()
  await fc.assert(
    fc.asyncProperty(rawBytes, async (bytes) => {
      cases++
      const shown = JSON.stringify(bytes.subarray(0, 200).toString('latin1'))
      let response: RawResponse
      try {
        // Half-closed after the bytes, so an incomplete request ends now rather than at a timeout.
        response = await rawRequest(target, bytes, 5000, true)
      } catch (error) {
        return record(problems, `no answer and no close: ${(error as Error).message}`, shown)
      }
      if (response.status === undefined) return void count('closed')
      if (response.status >= 500) return record(problems, `status ${response.status}: ${response.body.slice(0, 200)}`, shown)
      if (/^application\/json/.test(response.headers['content-type'] ?? '')) {
        const problem = checkApiResponse(response)
        if (problem !== undefined) record(problems, problem, shown)
      } else {
        // Node's HTTP parser answered before the app saw a request (400/431 with an empty body).
        const label = `${response.status} from the HTTP parser`
        parserAnswers.set(label, (parserAnswers.get(label) ?? 0) + 1)
        if (![400, 413, 417, 431, 505].includes(response.status)) record(problems, `parser answered ${response.status}`, shown)
      }
    }),
    { numRuns: runs(800), seed: seed + 3 }
  )
  noProblems(t, problems, 'no 5xx, and every app answer kept the contract')
  t.comment(`HTTP-parser answers without a JSON body: ${JSON.stringify(Object.fromEntries(parserAnswers))}`)
  const after = await rawRequest(
    target,
    buildRequest(
      'POST',
      '/api/v1',
      [
        ['Host', 'x'],
        ['Content-Type', 'application/json'],
        ['X-API-Token', key],
        ['Content-Length', '49']
      ],
      '{"model":"user_verification","email":"a@b.co.uk"}'
    )
  )
  t.equal(after.status, 200, 'the server still answers a good request')
})

t.test('prototype pollution: keys like __proto__ and constructor at any depth change nothing shared', async (t) => {
  const polluter = fc
    .tuple(fc.constantFrom('__proto__', 'constructor', 'prototype'), fc.integer({ min: 0, max: 4 }), fc.constantFrom('model', 'email', 'x'))
    .map(([k, depth, at]) => {
      let inner = `{"${k}":{"polluted":"yes","prototype":{"polluted":"yes"}},"polluted":"yes"}`
      for (let i = 0; i < depth; i++) inner = `{"${k}":${inner}}`
      return `{"model":"user_verification","email":"a@acme-mail.com","${at}":${inner},"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}`
    })
  const problems: Problems = new Map()
  await fc.assert(
    fc.asyncProperty(polluter, async (text) => {
      cases++
      const c: Case = {
        method: 'POST',
        path: '/api/v1',
        headers: [
          ['Host', 'x'],
          ['Content-Type', 'application/json'],
          ['X-API-Token', key],
          ['__proto__', 'polluted'],
          ['Content-Length', String(Buffer.byteLength(text))]
        ],
        body: Buffer.from(text)
      }
      const problem = checkApiResponse(await sendCase(c))
      if (problem !== undefined) record(problems, problem, describe(c))
      if (({} as { polluted?: unknown }).polluted !== undefined) record(problems, 'Object.prototype polluted', describe(c))
    }),
    { numRuns: runs(500), seed: seed + 4 }
  )
  noProblems(t, problems, 'every answer kept the contract')
  t.equal(({} as { polluted?: unknown }).polluted, undefined, '({}).polluted is undefined')
  t.equal(([] as unknown as { polluted?: unknown }).polluted, undefined, '[].polluted is undefined')
  const prototypesAfter = [Object.prototype, Array.prototype, Function.prototype, String.prototype].map((p) =>
    Object.getOwnPropertyNames(p).sort().join()
  )
  t.strictSame(prototypesAfter, prototypesBefore, 'no built-in prototype gained a property')
})

t.test('regressions found by fuzzing', async (t) => {
  const send = (text: string | Buffer, extra: Array<[string, string]> = []) => {
    const body = typeof text === 'string' ? Buffer.from(text) : text
    return connection.send(
      buildRequest(
        'POST',
        '/api/v1',
        [['Host', 'x'], ['Content-Type', 'application/json'], ['X-API-Token', key], ...extra, ['Content-Length', String(body.length)]],
        body
      )
    )
  }
  for (const [name, text] of [
    ['deeply nested array as the body', '['.repeat(8000) + ']'.repeat(8000)],
    ['deeply nested array as the model', `{"model":${'['.repeat(7000)}${']'.repeat(7000)}}`]
  ] as const) {
    const response = await send(text)
    t.equal(response.status, 422, `${name}: 422, not ${response.status}`)
    t.notOk(checkApiResponse(response), name)
  }
  for (const encoding of ['gzip', 'deflate', 'br']) {
    const response = await send('this is not compressed', [['Content-Encoding', encoding]])
    t.equal(response.status, 400, `a corrupt ${encoding} body: 400, not ${response.status}`)
    t.notOk(checkApiResponse(response), `corrupt ${encoding}`)
  }
  const gzipped = await send(gzipSync('{"model":"user_verification","email":"a@acme-mail.com"}'), [['Content-Encoding', 'gzip']])
  t.equal(gzipped.status, 200, 'a well-formed gzip body is read')
})

t.test('memory stays flat and nothing leaked into the logs', async (t) => {
  if (baseline === undefined) {
    t.fail('no baseline')
    return
  }
  const end = memory()
  const heapGrowth = end.heap + end.external - (baseline.heap + baseline.external)
  const rssGrowth = end.rss - baseline.rss
  t.comment(
    `${cases} cases in ${((Date.now() - started) / 1000).toFixed(1)} s (${(serverMs / 1000).toFixed(1)} s waiting on keep-alive answers); statuses ${JSON.stringify(Object.fromEntries([...tally].sort()))}`
  )
  const mb = (n: number) => (n / 1e6).toFixed(1)
  t.comment(
    `after GC: heapUsed ${mb(baseline.heap)} → ${mb(end.heap)} MB, external ${mb(baseline.external)} → ${mb(end.external)} MB, heapTotal ${mb(baseline.heapTotal)} → ${mb(end.heapTotal)} MB, rss ${mb(baseline.rss)} → ${mb(end.rss)} MB`
  )
  // The leak check. After the warm-up the bounded caches (DNS: 200 entries here, MX learning,
  // keys) are full, so a forced GC leaves only what something still holds. JS objects and
  // strings count in heapUsed and Buffers in external. 16 MB is ~1.6 kB per case over ~10k cases,
  // so keeping even one body per request (several kB here, up to 40 kB for the oversize ones)
  // would exceed it. Measured: +1 to +3 MB over 11,300 cases, +1 MB over 33,900.
  t.ok(heapGrowth < 16e6, `heapUsed + external grew ${mb(heapGrowth)} MB (< 16 MB)`)
  // RSS is only a guard against a gross native leak (e.g. zlib/brotli decoders never freed): it
  // also holds pages glibc keeps after GC, which measured +13 to +120 MB at 1x and *below* the
  // baseline at 3x, so the bound is loose.
  t.ok(rssGrowth < 256e6, `rss grew ${mb(rssGrowth)} MB (< 256 MB)`)
  t.ok(cases >= runs(10_000) || scale < 1, `${cases} cases (>= 10,000 at scale 1)`)
  t.equal(middleware.metrics().inFlight, 0, 'no request left in flight')
  const logged = new Map<string, number>()
  for (const line of logger.lines) {
    const message = String((JSON.parse(line) as { message?: unknown }).message).slice(0, 120)
    logged.set(message, (logged.get(message) ?? 0) + 1)
  }
  t.comment(`log lines by message: ${JSON.stringify(Object.fromEntries(logged))}`)
  const log = logger.lines.join('\n')
  t.notMatch(log, key, 'the API key never reached the log')
})
