// lib/http/rate-limit.ts: option checks, per-key and per-IP limits on a real Express app, fail-closed counters, shared Redis counters.
import { createHash, randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import { createClient } from '@keyv/redis'
import express, { type RequestHandler } from 'express'
import t from 'tap'
import { issueKey } from '../../lib/quota/api-keys.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { userVerification } from '../../lib/http/middleware.js'
import { periodOf } from '../../lib/quota/plans.js'
import {
  createRateLimiters,
  redisBackendOf,
  resolveRateLimit,
  type RateLimitBackend,
  type RateLimitContext,
  type RateLimitOptions,
  type SendCommand
} from '../../lib/http/rate-limit.js'
import { captureLogger, memoryStores, startApi } from '../fixtures/create-api.js'
import { listen } from '../fixtures/listen.js'
import { cliPath, startServe } from '../fixtures/spawn-cli.js'

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

interface Limited {
  url: string
  logger: ReturnType<typeof captureLogger>
  post(headers?: Record<string, string>, body?: string): Promise<{ status: number; retryAfter: string | null; body: any }>
}

/** A bare Express app: the limiters, then a handler that answers 200 `{ ok: true }`. */
async function limitedApp(
  t: { teardown(fn: () => unknown): void },
  options: Partial<RateLimitOptions>,
  context: Partial<RateLimitContext> = {},
  after: RequestHandler[] = []
): Promise<Limited> {
  const logger = captureLogger()
  const limiters = createRateLimiters(options, { logger, ...context })
  const app = express()
  if (limiters.handlers.length > 0) app.use('/api', limiters.handlers)
  if (after.length > 0) app.use('/api', after)
  app.post('/api', (_req, res) => {
    res.json({ ok: true })
  })
  const url = `${(await listen(app, t, () => limiters.close())).url}/api`
  return {
    url,
    logger,
    async post(headers = {}, body = '{}') {
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body })
      const text = await response.text()
      let parsed: unknown = text
      try {
        parsed = JSON.parse(text)
      } catch {}
      return { status: response.status, retryAfter: response.headers.get('retry-after'), body: parsed }
    }
  }
}

async function statuses(app: Limited, count: number, headers: Record<string, string> = {}): Promise<number[]> {
  const out: number[] = []
  for (let i = 0; i < count; i++) out.push((await app.post(headers)).status)
  return out
}

t.test('options: undefined, {}, undefined fields and a null-prototype object all mean off', async (t) => {
  for (const input of [undefined, {}, { perKey: undefined, perIp: undefined }, Object.create(null)]) {
    t.strictSame(resolveRateLimit(input), { perKey: 0, perIp: 0 })
  }
  t.strictSame(resolveRateLimit({ perKey: 5 }), { perKey: 5, perIp: 0 })
  t.strictSame(createRateLimiters(undefined, { logger: captureLogger() }).handlers, [], 'no middleware when both are off')
  t.strictSame(createRateLimiters({ perKey: 0, perIp: 0 }, { logger: captureLogger() }).handlers, [])
})

t.test('options: impossible values throw, naming the option', async (t) => {
  // @ts-expect-error deliberately wrong type
  t.throws(() => resolveRateLimit(5), TypeError)
  // @ts-expect-error deliberately wrong type
  t.throws(() => resolveRateLimit(null), TypeError)
  // @ts-expect-error deliberately wrong type
  t.throws(() => resolveRateLimit({ perKey: '10' }), { name: 'TypeError', message: /rateLimit\.perKey/ })
  t.throws(() => resolveRateLimit({ perIp: 1.5 }), { name: 'TypeError', message: /rateLimit\.perIp/ })
  t.throws(() => resolveRateLimit({ perIp: Number.NaN }), TypeError)
  t.throws(() => resolveRateLimit({ perIp: Number.POSITIVE_INFINITY }), TypeError)
  t.throws(() => resolveRateLimit({ perKey: -1 }), { name: 'RangeError', message: /rateLimit\.perKey/ })
})

t.test('per IP: the limit+1-th request in a second gets 429 JSON with Retry-After, and the next window is open again', async (t) => {
  // The in-process counters read Date.now(): a clock the test moves, so the window passes without waiting.
  let clock = Date.now()
  t.capture(Date, 'now', () => clock)
  const app = await limitedApp(t, { perIp: 3 })
  t.strictSame(await statuses(app, 3), [200, 200, 200])
  const limited = await app.post()
  t.equal(limited.status, 429)
  t.strictSame(limited.body, { detail: 'Too Many Requests' })
  t.equal(limited.retryAfter, '1', 'Retry-After is 1 s')
  t.equal((await app.post({ 'x-api-token': 'uv_other' })).status, 429, 'a different key does not escape the IP limit')
  clock += 999
  t.equal((await app.post()).status, 429, 'still closed 1 ms before the window ends')
  clock += 1
  t.equal((await app.post()).status, 200, 'open again when the window has passed')
})

t.test('F9: a client gone before the per-IP limiter ran is skipped without an error log', async (t) => {
  const logger = captureLogger()
  const limiters = createRateLimiters({ perIp: 3 }, { logger })
  const app = express()
  let addressSeen: string | undefined = 'not yet'
  // The client's socket is gone by the time the limiter runs, as when it aborts meanwhile.
  app.use('/api', (req, _res, next) => {
    req.socket.destroy()
    addressSeen = req.ip
    next()
  })
  app.use('/api', limiters.handlers)
  let reached = 0
  const handled = new Promise<void>((resolve) => {
    app.post('/api', (_req, res) => {
      reached++
      res.json({ ok: true })
      resolve()
    })
  })
  const url = `${(await listen(app, t, () => limiters.close())).url}/api`
  await t.rejects(fetch(url, { method: 'POST', body: '{}' }), 'the client saw its connection end')
  // The client may see its connection end before the server's handler ran: wait for the handler.
  await handled
  t.equal(addressSeen, undefined, 'the request had no address any more')
  t.equal(reached, 1, 'the limiter let it through (nothing to count, nobody to answer)')
  t.strictSame(logger.lines, [], 'and logged nothing')
})

t.test('per key: counted per token digest; other tokens and token-less requests are not affected', async (t) => {
  const app = await limitedApp(t, { perKey: 2 })
  const a = { 'x-api-token': `uv_${randomBytes(32).toString('base64url')}` }
  const b = { 'x-api-token': `uv_${randomBytes(32).toString('base64url')}` }
  t.strictSame(await statuses(app, 3, a), [200, 200, 429])
  t.strictSame(await statuses(app, 2, b), [200, 200], 'another key has its own budget')
  t.strictSame(await statuses(app, 5), [200, 200, 200, 200, 200], 'no token header: not counted per key')
  t.equal((await app.post({ 'x-api-token': '' })).status, 200, 'an empty token is a key of its own')
  t.equal((await app.post({ 'x-api-token': '' })).status, 200)
  t.equal((await app.post({ 'x-api-token': '' })).status, 429)
})

t.test('per key and per IP together: whichever is reached first answers', async (t) => {
  const app = await limitedApp(t, { perKey: 2, perIp: 4 })
  const a = { 'x-api-token': 'uv_a' }
  t.strictSame(await statuses(app, 3, a), [200, 200, 429])
  t.strictSame(await statuses(app, 2, { 'x-api-token': 'uv_b' }), [200, 429], 'the IP budget (4) is spent by the 5th request')
})

t.test('mounted before the real middleware: 429 comes before validation and consumes no quota', async (t) => {
  const stores = memoryStores()
  const nameVerifier = { predict: (value: string) => ({ value, prediction: 'LABEL_1' as const, confidence: 0.9 }) }
  const middleware = userVerification({ store: stores, logger: captureLogger(), nameVerifier })
  await middleware.ready
  t.teardown(() => middleware.close())
  const { key, account } = await issueKey(stores.keys, 'pro')
  const app = await limitedApp(t, { perKey: 2 }, {}, [middleware])
  const headers = { 'x-api-token': key }
  const one = JSON.stringify({ model: 'user_verification', firstname: 'Jane' })
  t.equal((await app.post(headers, one)).status, 200, 'reaches the middleware and consumes 1 unit')
  t.equal((await app.post(headers, 'not json at all')).status, 422, 'a bad body is counted too')
  const limited = await app.post(headers, one)
  t.equal(limited.status, 429, 'the third is limited before the middleware sees it')
  t.strictSame(limited.body, { detail: 'Too Many Requests' })
  t.equal(await stores.quota.get(account, periodOf(Date.now()).id), 1, 'the limited request consumed nothing')
})

t.test('counters that cannot be reached answer 503 (never fail open), then recover', async (t) => {
  let calls = 0
  let up = false
  const app = await limitedApp(
    t,
    { perKey: 1 },
    {
      retryAfter: 7,
      backend: async () => {
        calls++
        if (!up) throw new Error('store not open')
        return undefined
      }
    }
  )
  const headers = { 'x-api-token': 'uv_k' }
  const down = await app.post(headers)
  t.equal(down.status, 503)
  t.strictSame(down.body, { detail: 'Tool service unavailable' })
  t.equal(down.retryAfter, '7')
  t.equal((await app.post(headers)).status, 503, 'still closed while the backend fails')
  t.equal(calls, 2, 'the backend is asked again on each request while it fails')
  t.match(app.logger.lines.join('\n'), /ERR_UV_STORE/)
  up = true
  t.strictSame(await statuses(app, 2, headers), [200, 429], 'works once the backend answers')
  t.equal(calls, 3, 'and is not asked again')
  t.notMatch(app.logger.lines.join('\n'), 'uv_k', 'the key never reaches the log')
})

const redisUrl = process.env.UV_TEST_REDIS_URL
const skipRedis =
  redisUrl === undefined || redisUrl === ''
    ? 'UV_TEST_REDIS_URL is not set: set it (e.g. redis://127.0.0.1:6379) to run the shared-Redis rate-limit test'
    : false

t.test('Redis: two apps share one budget; keys hold the digest and expire with the window', { skip: skipRedis }, async (t) => {
  const client = createClient({ url: redisUrl!, disableOfflineQueue: true })
  await client.connect()
  const prefix = `rltest_${randomBytes(4).toString('hex')}`
  t.teardown(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${prefix}-rl-*`, COUNT: 100 })) if (keys.length > 0) await client.unlink(keys)
    if (client.isOpen) await client.close()
  })
  const sent: string[][] = []
  const sendCommand: SendCommand = async (args) => {
    sent.push(args)
    return client.sendCommand(args)
  }
  const backend = async (): Promise<RateLimitBackend> => ({ sendCommand, prefix })
  const one = await limitedApp(t, { perKey: 3, perIp: 100 }, { backend })
  const two = await limitedApp(t, { perKey: 3, perIp: 100 }, { backend })
  const token = `uv_${randomBytes(32).toString('base64url')}`
  const headers = { 'x-api-token': token }
  t.strictSame([(await one.post(headers)).status, (await two.post(headers)).status, (await one.post(headers)).status], [200, 200, 200])
  t.equal((await two.post(headers)).status, 429, 'the fourth request is limited whichever app gets it')
  const keys: string[] = []
  for await (const batch of client.scanIterator({ MATCH: `${prefix}-rl-*`, COUNT: 100 })) keys.push(...batch)
  t.ok(keys.includes(`${prefix}-rl-key:${sha256(token)}`), 'per-key counter named by the SHA-256 digest')
  t.ok(
    keys.some((key) => key.startsWith(`${prefix}-rl-ip:`)),
    'per-IP counter'
  )
  t.notOk(
    sent.flat().some((arg) => arg.includes(token)),
    'the key itself is never sent to Redis'
  )
  const ttl = Number(await client.sendCommand(['PTTL', `${prefix}-rl-key:${sha256(token)}`]))
  t.ok(ttl > 0 && ttl <= 1000, `counter expires within the 1 s window (PTTL ${ttl})`)
})

t.test('Redis: script loading that failed is retried; a dropped connection answers 503', { skip: skipRedis }, async (t) => {
  const client = createClient({ url: redisUrl!, disableOfflineQueue: true })
  await client.connect()
  const prefix = `rltest_${randomBytes(4).toString('hex')}`
  t.teardown(async () => {
    if (!client.isOpen) await client.connect()
    for await (const keys of client.scanIterator({ MATCH: `${prefix}-rl-*`, COUNT: 100 })) if (keys.length > 0) await client.unlink(keys)
    await client.close()
  })
  let failScriptLoads = 2
  const sendCommand: SendCommand = async (args) => {
    if (args[0] === 'SCRIPT' && failScriptLoads-- > 0) throw new Error('LOADING Redis is loading the dataset in memory')
    return client.sendCommand(args)
  }
  const app = await limitedApp(t, { perKey: 1 }, { backend: async () => ({ sendCommand, prefix }) })
  const headers = { 'x-api-token': `uv_${randomBytes(8).toString('hex')}` }
  t.equal((await app.post(headers)).status, 503, 'scripts could not be loaded: 503')
  t.strictSame(await statuses(app, 2, headers), [200, 429], 'loaded on the next request')
  await client.close()
  const down = await app.post({ 'x-api-token': 'uv_other' })
  t.equal(down.status, 503, 'Redis connection gone: 503, not a pass')
  t.equal(down.retryAfter, '5')
})

t.test('redisBackendOf: only stores carrying a sendCommand use Redis', async (t) => {
  const plain = memoryStores()
  t.equal(redisBackendOf(plain), undefined)
  const sendCommand: SendCommand = async () => 'OK'
  const backend = redisBackendOf({ ...plain, sendCommand } as typeof plain)
  t.equal(backend?.sendCommand, sendCommand)
  t.equal(backend?.prefix, plain.quota.prefix)
})

// The middleware's `rateLimit` option and the CLI's flags (wired by lib/http/middleware.ts, lib/http/options.ts, server/cli.ts).
t.test('userVerification({ rateLimit }): per-key 429 before the quota, per-IP across keys, off by default', async (t) => {
  const limited = await startApi({
    rateLimit: { perKey: 2, perIp: 5 },
    nameVerifier: { predict: (value: string) => ({ value, prediction: 'LABEL_1' as const, confidence: 0.9 }) }
  } as never)
  t.teardown(() => limited.close())
  const a = await limited.key('pro')
  const b = await limited.key('pro')
  const one = { model: 'user_verification', firstname: 'Jane' }
  const run = async (key: string, n: number) => {
    const out: number[] = []
    for (let i = 0; i < n; i++) out.push((await limited.post(one, { token: key })).status)
    return out
  }
  t.strictSame(await run(a.key, 3), [200, 200, 429])
  const refused = await limited.post(one, { token: a.key })
  t.strictSame(refused.body, { detail: 'Too Many Requests' })
  t.ok(Number(refused.headers.get('retry-after')) >= 1, 'Retry-After')
  t.equal(await limited.stores.quota.get(a.account, periodOf(Date.now()).id), 2, 'limited requests consumed nothing')
  t.strictSame(await run(b.key, 2), [200, 429], "another key: its first request is the address's 5th, its second the 6th")
  t.notMatch(limited.logger.lines.join('\n'), a.key, 'no key in the log')

  const open = await startApi({
    nameVerifier: { predict: (value: string) => ({ value, prediction: 'LABEL_1' as const, confidence: 0.9 }) }
  })
  t.teardown(() => open.close())
  const c = await open.key('pro')
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) statuses.push((await open.post(one, { token: c.key })).status)
  t.ok(
    statuses.every((status) => status === 200),
    'no limit by default (30 requests at once)'
  )
})

const cliSkip = !existsSync(cliPath) ? `${cliPath} is missing: run \`npm run build\`` : false
t.test('serve --rate-limit-key / --rate-limit-ip', { skip: cliSkip }, async (t) => {
  const server = await startServe(['--store', 'memory://', '--quiet', '--rate-limit-key', '2', '--rate-limit-ip', '100'])
  t.teardown(() => server.stop('SIGKILL'))
  const statuses: number[] = []
  for (let i = 0; i < 3; i++) {
    const response = await fetch(server.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-token': server.demoKey ?? '' },
      body: '{"model":"user_verification"}'
    })
    statuses.push(response.status)
    if (i === 2) t.strictSame(await response.json(), { detail: 'Too Many Requests' })
  }
  t.strictSame(statuses, [400, 400, 429], 'the third request of the second is limited')
})

t.test('two middlewares on one Redis store share the per-key budget', { skip: skipRedis }, async (t) => {
  const namespace = `rltest_${randomBytes(4).toString('hex')}`
  const stores = await openStores(redisUrl!, { namespace, logger: captureLogger() })
  const client = createClient({ url: redisUrl! })
  await client.connect()
  t.teardown(async () => {
    for (const pattern of [`${namespace}-*`]) {
      for await (const keys of client.scanIterator({ MATCH: pattern, COUNT: 100 })) if (keys.length > 0) await client.unlink(keys)
    }
    await client.close()
    await stores.close()
  })
  t.ok(redisBackendOf(stores), 'openStores(redis://) exposes its sendCommand')
  const nameVerifier = { predict: (value: string) => ({ value, prediction: 'LABEL_1' as const, confidence: 0.9 }) }
  const one = await startApi({ store: stores, rateLimit: { perKey: 2 }, nameVerifier } as never)
  const two = await startApi({ store: stores, rateLimit: { perKey: 2 }, nameVerifier } as never)
  t.teardown(async () => {
    await one.close()
    await two.close()
  })
  const { key } = await one.key('pro')
  const body = { model: 'user_verification', firstname: 'Jane' }
  const statuses = [
    (await one.post(body, { token: key })).status,
    (await two.post(body, { token: key })).status,
    (await one.post(body, { token: key })).status
  ]
  t.strictSame(statuses, [200, 200, 429], 'the third request is limited, whichever instance gets it')
  const counters: string[] = []
  for await (const keys of client.scanIterator({ MATCH: `${namespace}-rl-key:*`, COUNT: 100 })) counters.push(...keys)
  t.strictSame(counters, [`${namespace}-rl-key:${sha256(key)}`], "one counter, named by the digest, in the store's namespace")
})
