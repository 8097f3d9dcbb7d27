// No PII in logs: a realistic session, failures included, against `serve` and the in-process middleware; every email, name and key sent is grepped for.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { existsSync } from 'node:fs'
import express from 'express'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { issueKey } from '../../lib/quota/api-keys.js'
import { userVerification } from '../../lib/http/middleware.js'
import { loadNameModel } from '../../lib/names/verifier.js'
import { createRateLimiters } from '../../lib/http/rate-limit.js'
import type { Stores } from '../../lib/types.js'
import { captureLogger, memoryStores } from '../fixtures/create-api.js'
import { buildRequest, rawRequest, targetOf } from '../fixtures/raw-http.js'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { startPrivateRedis } from '../fixtures/private-redis.js'
import { listen } from '../fixtures/listen.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

/** Everything personal this test sends; each must be absent from every log. */
const sent = { emails: new Set<string>(), names: new Set<string>(), keys: new Set<string>() }
const tag = () => randomBytes(4).toString('hex')

/** A distinctive address on a domain the loopback DNS server knows (so it gets a full check). */
function email(domain = 'acme-mail.com'): string {
  const address = `pii.${tag()}@${domain}`
  sent.emails.add(address)
  return address
}
/** A distinctive, real-looking name (letters only, so the name model takes it as a name). */
function name(): string {
  const letters = 'bcdfghjklmnprstvz'
  const vowels = 'aeiou'
  let value = 'Q'
  for (const byte of randomBytes(6)) value += letters[byte % letters.length]! + vowels[byte % vowels.length]!
  sent.names.add(value)
  return value
}
function token(value: string): string {
  sent.keys.add(value)
  return value
}

/** Every sent email, name and key found in `text`, with the form it was found in. */
function leaks(text: string): string[] {
  const found: string[] = []
  const lower = text.toLowerCase()
  for (const address of sent.emails) {
    const [local] = address.split('@')
    if (lower.includes(address.toLowerCase())) found.push(`email ${address}`)
    else if (local !== undefined && lower.includes(local.toLowerCase())) found.push(`email local part ${local}`)
    // Percent-encoded, as it would appear in a logged URL.
    else if (lower.includes(encodeURIComponent(address).toLowerCase())) found.push(`email (encoded) ${address}`)
  }
  for (const value of sent.names) if (lower.includes(value.toLowerCase())) found.push(`name ${value}`)
  for (const key of sent.keys) {
    if (text.includes(key)) found.push(`key ${key.slice(0, 8)}…`)
    // A key's secret part alone (without uv_) would be as bad.
    else if (key.length > 12 && text.includes(key.slice(3))) found.push(`key body ${key.slice(0, 8)}…`)
  }
  return found
}

const { dnsServers } = await testVerifiers(t)
const haveBuild = existsSync(cliPath)
const haveRedisServer = spawnSync('redis-server', ['--version']).status === 0

t.test(
  'the standalone server: a session with successes, refusals and a store outage logs no email, name or key',
  {
    skip: !haveBuild
      ? `${cliPath} is missing: run \`npm run build\` first`
      : !haveRedisServer
        ? 'redis-server is not installed: the store-outage session needs a private one'
        : false
  },
  async (t) => {
    const redis = await startPrivateRedis()
    t.teardown(() => redis.close())
    const store = redis.url
    const create = async (plan: string) =>
      JSON.parse((await runCli(['keys', 'create', '--plan', plan, '--label', 'pii', '--store', store, '--json'])).stdout) as {
        id: string
        key: string
      }
    const pro = await create('pro')
    const free = await create('free')
    const revoked = await create('pro')
    for (const issued of [pro, free, revoked]) token(issued.key)
    t.equal((await runCli(['keys', 'revoke', revoked.id, '--store', store])).code, 0, 'revoked one key')

    // No --quiet: every request gets its log line.
    const server = await startServe(['--store', store, '--no-demo-key', '--dns-servers', dnsServers.join(',')])
    t.teardown(() => server.stop('SIGKILL'))
    const post = async (body: unknown, key: string | undefined, path = '/api/v1', headers: Record<string, string> = {}) => {
      const response = await checkedFetch(new URL(path, server.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-token': key }), ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body)
      })
      await response.arrayBuffer()
      return response.status
    }
    const full = () => ({ model: 'user_verification', email: email(), firstname: name(), lastname: name() })
    const statuses: number[] = []

    for (let i = 0; i < 5; i++) statuses.push(await post(full(), pro.key))
    statuses.push(await post({ model: 'user_verification', email: email('example.org') }, pro.key))
    statuses.push(await post({ model: 'user_verification', email: `${name()}@no-such-domain-${tag()}.com` }, pro.key))
    statuses.push(await post({ model: 'user_verification', email: [email()], firstname: 7 }, pro.key))
    statuses.push(await post(`{"model":"user_verification","email":"${email()}",`, pro.key))
    statuses.push(await post(full(), undefined))
    statuses.push(await post(full(), token(`uv_${randomBytes(32).toString('base64url')}`)))
    statuses.push(await post(full(), token(`not-a-key-${tag()}`)))
    statuses.push(await post(full(), revoked.key))
    statuses.push(await post({ ...full(), model: 'gpt' }, pro.key))
    for (let i = 0; i < 10; i++) statuses.push(await post(full(), free.key))
    statuses.push(await post({ model: 'user_verification', email: email() + 'x'.repeat(20_000) }, pro.key))
    statuses.push(await post(full(), pro.key, `/api/v1/${email()}`))
    statuses.push(await post(full(), pro.key, `/${name()}?email=${encodeURIComponent(email())}`))
    statuses.push(
      await post(full(), pro.key, '/api/v1', {
        'x-forwarded-for': email(),
        referer: `https://example.com/signup?email=${email()}`,
        'user-agent': name()
      })
    )
    const getStatus = (await checkedFetch(new URL(`/api/v1?email=${email()}&name=${name()}`, server.url))).status
    statuses.push(getStatus)
    const parserReject = await rawRequest(
      targetOf(server.url),
      buildRequest(
        'POST',
        '/api/v1',
        [
          ['Host', 'x'],
          ['X-API-Token', token(`uv_${tag()}\x01${tag()}`)],
          ['Content-Length', '2']
        ],
        '{}'
      ),
      3000,
      true
    )
    statuses.push(parserReject.status ?? 0)

    // Store outage: Redis stops answering, so lookups and consumes time out (503), then it comes back.
    redis.pause()
    const during = await Promise.all([
      post(full(), pro.key),
      post(full(), pro.key),
      post(full(), token(`uv_${randomBytes(32).toString('base64url')}`))
    ])
    redis.resume()
    let after = 0
    for (let i = 0; i < 50 && after !== 200; i++) {
      after = await post(full(), pro.key)
      if (after !== 200) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.equal(await server.stop('SIGTERM'), 0, 'graceful stop')

    const seen = new Set([...statuses, ...during, after])
    for (const status of [200, 400, 401, 402, 404, 405, 413, 422, 503]) t.ok(seen.has(status), `the session produced a ${status}`)
    t.ok(
      during.every((status) => status === 503),
      `store outage answered 503 (${during.join(',')})`
    )
    t.equal(after, 200, 'and the server recovered')

    const stdout = server.stdout()
    const stderr = server.stderr()
    const lines = stdout.split('\n').filter(Boolean)
    t.ok(lines.length >= statuses.length, `${lines.length} JSON log lines written`)
    t.ok(
      lines.every((line) => {
        try {
          return typeof JSON.parse(line) === 'object'
        } catch {
          return false
        }
      }),
      'every stdout line is JSON'
    )
    t.match(stdout, /"level":"error"/, 'the outage was logged')
    t.strictSame(leaks(stdout), [], 'no email, name or key in the JSON log (stdout)', {
      leakingLines: lines.filter((line) => leaks(line).length > 0)
    })
    t.strictSame(leaks(stderr), [], 'none on stderr either')
  }
)

t.test(
  'the middleware in-process: a throwing name model, a failing email check, failing stores, bad tokens and rate limits log no email, name or key',
  async (t) => {
    const logger = captureLogger()
    const base = memoryStores()
    const broken = { keys: false, quota: false, refund: false, slowConsume: false }
    // A store that fails on demand, with messages as a careless backend might write them.
    const stores: Stores = {
      close: () => base.close(),
      keys: {
        localKeys: base.keys.localKeys,
        prefix: base.keys.prefix,
        getByHash: async (hash) => {
          if (broken.keys) throw new Error(`connection lost while reading ${hash}`)
          return base.keys.getByHash(hash)
        },
        getById: (id) => base.keys.getById(id),
        create: (record) => base.keys.create(record),
        update: (id, patch) => base.keys.update(id, patch),
        updateKey: (id, change) => base.keys.updateKey(id, change),
        list: () => base.keys.list(),
        listByAccount: (id) => base.keys.listByAccount(id),
        getAccount: (id) => base.keys.getAccount(id),
        getAccountByEmail: (email) => base.keys.getAccountByEmail(email),
        createAccount: (account) => base.keys.createAccount(account),
        updateAccount: (id, patch) => base.keys.updateAccount(id, patch),
        listAccounts: () => base.keys.listAccounts()
      },
      quota: {
        localKeys: base.quota.localKeys,
        prefix: base.quota.prefix,
        consume: async (...args) => {
          if (broken.quota) throw new Error(`timeout consuming ${args.join(' ')}`)
          if (broken.slowConsume) await new Promise((resolve) => setTimeout(resolve, 300))
          return base.quota.consume(...args)
        },
        refund: async (...args) => {
          if (broken.refund) throw new Error(`timeout refunding ${args.join(' ')}`)
          return base.quota.refund(...args)
        },
        get: (...args) => base.quota.get(...args),
        daily: (...args) => base.quota.daily(...args),
        monthly: (...args) => base.quota.monthly(...args)
      }
    }
    const model = loadNameModel()
    const faults = { names: false, email: false }
    // Verifiers whose errors quote their input, as third-party code often does.
    const nameVerifier = {
      predict(value: string) {
        if (faults.names) throw new Error(`model cannot classify "${value}"`)
        return model.predict(value)
      }
    }
    const emailVerifier = {
      async verify(address: string) {
        throw new Error(`resolver failed for ${address}`)
      }
    }
    const withNames = userVerification({
      store: stores,
      logger,
      nameVerifier,
      dnsServers,
      dnsTimeout: 1000,
      plans: { pro: 65000, gold: 1000 }
    })
    const withBrokenEmail = userVerification({ store: stores, logger, nameVerifier, emailVerifier })
    await Promise.all([withNames.ready, withBrokenEmail.ready])
    const limiters = createRateLimiters({ perKey: 3, perIp: 10_000 }, { logger })
    // Counters on a "Redis" whose every command fails, quoting its arguments.
    const downLimiters = createRateLimiters(
      { perKey: 3 },
      {
        logger,
        backend: async () => ({
          prefix: 'uv',
          sendCommand: async (args) => {
            throw new Error(`connection closed before ${args.join(' ')}`)
          }
        })
      }
    )
    const app = express()
    app.use('/limited', limiters.handlers, withNames)
    app.use('/limited-down', downLimiters.handlers, withNames)
    app.use('/api', withNames)
    app.use('/broken-email', withBrokenEmail)
    const { url: baseUrl } = await listen(app, t, () =>
      Promise.all([withNames.close(), withBrokenEmail.close(), limiters.close(), downLimiters.close()])
    )
    const post = async (path: string, body: unknown, key?: string, headers: Record<string, string> = {}) => {
      const payload = typeof body === 'string' ? body : JSON.stringify(body)
      // A host app with the middleware under several mounts: each answer is checked as the API mounted at `path`.
      const response = await checkedFetch(
        baseUrl + path,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-token': key }), ...headers },
          body: payload
        },
        { scope: 'api', mount: path }
      )
      await response.arrayBuffer()
      return response.status
    }
    const full = () => ({ model: 'user_verification', email: email(), firstname: name(), lastname: name() })
    const { key } = await issueKey(stores.keys, 'pro')
    const odd = await issueKey(stores.keys, 'platinum')
    token(key)
    token(odd.key)

    const statuses: Record<string, number> = {}
    statuses.ok = await post('/api', full(), key)
    faults.names = true
    statuses.namesThrow = await post('/api', full(), key)
    faults.names = false
    // The client leaves while its units are being consumed, and giving them back fails too.
    broken.refund = true
    broken.slowConsume = true
    statuses.leftRefundFails = await checkedFetch(
      `${baseUrl}/api`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': key },
        body: JSON.stringify({ model: 'user_verification', firstname: name(), lastname: name() }),
        signal: AbortSignal.timeout(150)
      },
      { scope: 'api', mount: '/api' }
    ).then(
      (response) => response.status,
      (error: Error) => {
        if (/OpenAPI mismatch/.test(error.message)) throw error
        return 0
      }
    )
    await new Promise((resolve) => setTimeout(resolve, 400))
    broken.refund = false
    broken.slowConsume = false
    statuses.emailThrows = await post('/broken-email', { model: 'user_verification', email: email() }, key)
    broken.keys = true
    statuses.keysDown = await post('/api', full(), key)
    broken.keys = false
    broken.quota = true
    statuses.quotaDown = await post('/api', full(), key)
    broken.quota = false
    statuses.unknownPlan = await post('/api', full(), odd.key)
    statuses.badToken = await post('/api', full(), token(`uv_${randomBytes(32).toString('base64url')}`))
    statuses.badJson = await post('/api', `{"email":"${email()}"`, key)
    const limited: number[] = []
    for (let i = 0; i < 4; i++) limited.push(await post('/limited', full(), key, { 'x-forwarded-for': email() }))
    statuses.rateStoreDown = await post('/limited-down', full(), token(`uv_${randomBytes(32).toString('base64url')}`))

    t.strictSame(statuses, {
      ok: 200,
      namesThrow: 503,
      leftRefundFails: 0,
      emailThrows: 503,
      keysDown: 503,
      quotaDown: 503,
      unknownPlan: 402,
      badToken: 401,
      badJson: 422,
      rateStoreDown: 503
    })
    t.strictSame(limited, [200, 200, 200, 429], 'per-key limit reached')
    const log = logger.lines.join('\n')
    for (const code of ['ERR_UV_VERIFIER', 'ERR_UV_REFUND', 'ERR_UV_STORE', 'WRN_UV_UNKNOWN_PLAN']) t.match(log, code, `${code} was logged`)
    t.match(log, /X-Forwarded-For/, "express-rate-limit's proxy warning was logged")
    t.match(log, /rate limit \(key\) counter failed/, 'the counter failure was logged')
    t.strictSame(leaks(log), [], 'no email, name or key in the log', {
      leakingLines: logger.lines.filter((line) => leaks(line).length > 0)
    })
  }
)

t.test('the leak detector finds what it looks for', async (t) => {
  const address = [...sent.emails][0]!
  const someName = [...sent.names][0]!
  const someKey = [...sent.keys][0]!
  t.ok(
    sent.emails.size > 20 && sent.names.size > 20 && sent.keys.size > 5,
    `sent ${sent.emails.size} emails, ${sent.names.size} names, ${sent.keys.size} keys`
  )
  t.strictSame(leaks(`{"msg":"x ${address.toUpperCase()} y"}`).length, 1, 'an email, whatever its case')
  t.strictSame(leaks(`/api/v1?email=${encodeURIComponent(address)}`).length, 1, 'an email in a URL')
  t.strictSame(leaks(`name=${someName}`).length, 1, 'a name')
  t.strictSame(leaks(`token ${someKey.slice(3)}`).length, 1, 'a key without its prefix')
  t.strictSame(leaks('{"level":"info","msg":"request","path":"/api/v1","status":200}'), [], 'and nothing in a clean line')
})
