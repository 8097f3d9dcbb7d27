// Every file in examples/ is started as a user would start it, on the port PORT names, and answers a request that shows what it is about.
import { spawn, type ChildProcess } from 'node:child_process'
import { once } from 'node:events'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { issueKey } from '../../lib/quota/api-keys.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { redisSkipReason, sparePort, startPrivateRedis } from '../fixtures/private-redis.js'

const examples = fileURLToPath(new URL('../../examples/', import.meta.url))

interface Running {
  lines: string[]
  /** Resolves with the first stdout line matching `pattern`. */
  line(pattern: RegExp, ms?: number): Promise<string>
  exit: Promise<number | null>
  stop(): Promise<void>
}

function run(file: string, env: Record<string, string>, cwd: string): Running {
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', `${examples}${file}`], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  const lines: string[] = []
  const waiters: Array<() => void> = []
  let buffered = ''
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk
    const parts = buffered.split('\n')
    buffered = parts.pop()!
    lines.push(...parts)
    for (const wake of waiters.splice(0)) wake()
  })
  let stderr = ''
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exit = once(child, 'exit').then(([code]) => code as number | null)
  return {
    lines,
    exit,
    async line(pattern, ms = 20_000) {
      const deadline = Date.now() + ms
      for (;;) {
        const found = lines.find((l) => pattern.test(l))
        if (found !== undefined) return found
        if (Date.now() > deadline || child.exitCode !== null)
          throw new Error(`${file}: no line matching ${pattern} (exit ${child.exitCode}); stdout ${lines.join('\n')}; stderr ${stderr}`)
        await Promise.race([new Promise<void>((resolve) => waiters.push(resolve)), new Promise((resolve) => setTimeout(resolve, 100))])
      }
    },
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000)
      await exit
      clearTimeout(timer)
    }
  }
}

/** The examples are host apps: only their `/api/v1` answers are the API's, and each is checked against the document. */
async function post(port: number, body: string, key?: string): Promise<{ status: number; type: string; body: any }> {
  const response = await checkedFetch(
    `http://127.0.0.1:${port}/api/v1`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(key === undefined ? {} : { 'x-api-token': key }) },
      body
    },
    { scope: 'api' }
  )
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = JSON.parse(text)
  } catch {}
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: parsed }
}

t.test('every example has a test here', async (t) => {
  t.same(readdirSync(examples).sort(), ['custom-verifier.ts', 'express-app.ts', 'library.ts', 'redis-scale-out.ts'])
})

t.test('express-app: the API on SQLite beside the host routes, behind express.json(), on PORT', async (t) => {
  const dir = t.testdir()
  const stores = await openStores(`sqlite://${dir}/user-verification.sqlite`)
  const { key } = await issueKey(stores.keys, 'free')
  await stores.close()
  const port = await sparePort()
  const app = run('express-app.ts', { PORT: String(port) }, dir)
  t.teardown(app.stop)
  t.match(await app.line(/listening on/), `http://localhost:${port}/api/v1`)
  // The host app's own route, not part of the API: `scope: 'api'` leaves it unchecked on purpose.
  const home = await checkedFetch(`http://127.0.0.1:${port}/`, {}, { scope: 'api' })
  t.match(await home.text(), /POST \/api\/v1/, 'the host app still answers its own routes')
  const ok = await post(port, JSON.stringify({ model: 'user_verification', firstname: 'Jane', lastname: 'asdfgh' }), key)
  t.equal(ok.status, 200)
  t.equal(ok.body.name_verification.firstname.prediction, 'LABEL_1')
  t.equal(ok.body.name_verification.lastname.prediction, 'LABEL_0')
  t.equal(ok.body.request_count, 2)
  const malformed = await post(port, '{"model": "user_verification", "firstname": ', key)
  t.equal(malformed.status, 422, 'a malformed body behind express.json() gets the API answer')
  t.match(malformed.type, /^application\/json/)
  t.match(malformed.body, { detail: [{ type: 'json_invalid' }] })
  const oversized = await post(port, JSON.stringify({ model: 'user_verification', lastname: 'x'.repeat(200_000) }), key)
  t.same([oversized.status, oversized.body], [413, { detail: 'Request body too large' }], 'larger than express.json() allows: JSON 413')
})

t.test('custom-verifier: the block-list marks competitor.example, other domains are untouched', async (t) => {
  const port = await sparePort()
  const app = run('custom-verifier.ts', { PORT: String(port) }, t.testdir())
  t.teardown(app.stop)
  await app.line(/listening on/)
  const key = (await app.line(/^demo key: /)).slice('demo key: '.length)
  t.match(await app.line(/^try: curl/), `localhost:${port}`)
  const blocked = await post(port, JSON.stringify({ model: 'user_verification', email: 'sales@competitor.example' }), key)
  t.equal(blocked.status, 200, 'the printed key works')
  t.equal(blocked.body.email_verification['the service'], true, 'blocked domain flagged')
  t.equal(blocked.body.email_verification.disposable, true)
  const other = await post(port, JSON.stringify({ model: 'user_verification', email: 'sales@partner.example' }), key)
  t.equal(other.body.email_verification['the service'], false, 'another domain is not flagged')
  t.equal((await post(port, JSON.stringify({ model: 'user_verification', email: 'a@b.example' }), 'uv_wrong')).status, 401)
})

t.test('library: the core checks a form with no HTTP', async (t) => {
  const app = run('library.ts', {}, t.testdir())
  t.equal(await app.exit, 0)
  const output = app.lines.join('\n')
  const result = JSON.parse(output.slice(0, output.lastIndexOf('}') + 1))
  t.equal(result.request_count, 3)
  t.equal(result.email_verification.suggestion, 'jane.doe@gmail.com')
  t.equal(result.name_verification.lastname.prediction, 'LABEL_0')
  t.match(output, /Did you mean jane\.doe@gmail\.com\?/)
})

t.test('redis-scale-out: two instances on their PORTs share one exact quota', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.close())
  const stores = await openStores(redis.url)
  const { key } = await issueKey(stores.keys, 'free')
  await stores.close()
  const ports = [await sparePort(), await sparePort()]
  const dir = t.testdir()
  const apps = ports.map((port) => run('redis-scale-out.ts', { PORT: String(port), REDIS_URL: redis.url }, dir))
  t.teardown(async () => {
    for (const app of apps) await app.stop()
  })
  for (const [i, app] of apps.entries()) t.match(await app.line(/listening on/), `:${ports[i]}/api/v1`)
  const statuses: number[] = []
  for (let i = 0; i < 30; i++) {
    const reply = await post(ports[i % 2]!, JSON.stringify({ model: 'user_verification', email: `u${i}@shop.example` }), key)
    statuses.push(reply.status)
  }
  t.equal(statuses.filter((s) => s === 200).length, 25, 'the free plan (25 units) is spent across both instances, exactly')
  t.same(statuses.slice(25), [402, 402, 402, 402, 402])
  t.ok(statuses.slice(0, 25).every((s) => s === 200))
})
