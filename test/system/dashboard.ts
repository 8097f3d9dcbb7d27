// The usage dashboard: its JSON endpoint, its page headers, and the page itself driven in headless Chromium.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import express from 'express'
import helmet from 'helmet'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import t, { type Test } from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { issueKey, periodOf, userVerification, type Stores } from '../../lib/index.js'
import { createDashboard } from '../../server/dashboard.js'
import { captureLogger, memoryStores } from '../fixtures/create-api.js'
import { runCli, startServe } from '../fixtures/spawn-cli.js'
import { checkPageAnswers, type PageAnswers } from '../fixtures/dashboard-app.js'

const chromiumPath = process.env.UV_TEST_CHROMIUM ?? '/usr/bin/chromium'
// With UV_TEST_CHROMIUM set (CI) the browser tests must run, so a missing binary fails them.
const skipBrowser =
  process.env.UV_TEST_CHROMIUM === undefined && !existsSync(chromiumPath)
    ? `no Chromium at ${chromiumPath}: install it (apt-get install chromium) or set UV_TEST_CHROMIUM`
    : false

// `.invalid` is a special-use domain: the email check answers without any DNS query.
const threeUnits = { model: 'user_verification', email: 'jane.doe@mail.invalid', firstname: 'Jane', lastname: 'Doe' }

/** Stores whose key and quota reads can be made to fail, as an unreachable backend would. */
function breakableStores(): { stores: Stores; setBroken(broken: boolean): void } {
  const stores = memoryStores()
  let broken = false
  const { keys, quota } = stores
  const getByHash = keys.getByHash.bind(keys)
  const get = quota.get.bind(quota)
  keys.getByHash = async (hash) => {
    if (broken) throw new Error('store down')
    return getByHash(hash)
  }
  quota.get = async (keyId, period) => {
    if (broken) throw new Error('store down')
    return get(keyId, period)
  }
  return { stores, setBroken: (value) => void (broken = value) }
}

/** A tiny app shaped like server/app.ts (helmet defaults, API at /api/v1, JSON 404) with the dashboard mounted. */
async function startApp(t: Test) {
  const { stores, setBroken } = breakableStores()
  const logger = captureLogger()
  const middleware = userVerification({ store: stores, logger })
  await middleware.ready
  const app = express()
  app.use(helmet())
  app.use(createDashboard(middleware))
  app.use('/api/v1', middleware)
  app.use((_req, res) => void res.status(404).json({ detail: 'Not Found' }))
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await middleware.close()
  })
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return { url, stores, logger, setBroken }
}

async function post(origin: string, key: string, body: unknown) {
  const response = await checkedFetch(`${origin}/api/v1`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': key },
    body: JSON.stringify(body)
  })
  await response.arrayBuffer()
  return response.status
}

async function usage(origin: string, headers: Record<string, string> = {}) {
  const response = await checkedFetch(`${origin}/dashboard/api/usage`, { headers })
  return { status: response.status, headers: response.headers, body: (await response.json()) as any }
}

t.test('GET /dashboard/api/usage: 200 report, 401 for missing/unknown/revoked keys, 503 when the store fails', async (t) => {
  const app = await startApp(t)
  const { key, id, account } = await issueKey(app.stores.keys, 'free')
  t.equal(await post(app.url, key, threeUnits), 200)
  t.equal(await post(app.url, key, { model: 'user_verification', firstname: 'Ada' }), 200)

  const period = periodOf(Date.now())
  const ok = await usage(app.url, { 'x-api-token': key })
  t.equal(ok.status, 200)
  t.strictSame(ok.body, {
    id,
    account,
    plan: 'free',
    period: period.id,
    used: 4,
    limit: 25,
    remaining: 21,
    reset: new Date(period.end).toISOString()
  })
  t.equal(ok.headers.get('cache-control'), 'no-store', 'a usage answer is never cached')

  const invalid = { detail: 'Invalid API token' }
  t.strictSame((await usage(app.url)).body, invalid, 'no header')
  t.equal((await usage(app.url)).status, 401)
  const empty = await usage(app.url, { 'x-api-token': '' })
  t.strictSame([empty.status, empty.body], [401, invalid], 'empty header')
  t.equal((await usage(app.url, { 'x-api-token': `uv_${'x'.repeat(43)}` })).status, 401, 'unknown key')
  const other = await issueKey(app.stores.keys, 'pro')
  await app.stores.keys.update(other.id, { revokedAt: new Date().toISOString() })
  const revoked = await usage(app.url, { 'x-api-token': other.key })
  t.strictSame([revoked.status, revoked.body], [401, invalid], 'revoked key')

  await app.stores.keys.updateAccount(account, { plan: 'basic' })
  t.match(
    (await usage(app.url, { 'x-api-token': key })).body,
    { plan: 'basic', used: 4, limit: 30000, remaining: 29996 },
    'a plan change shows at once'
  )

  app.setBroken(true)
  const down = await usage(app.url, { 'x-api-token': key })
  t.strictSame([down.status, down.body], [503, { detail: 'Tool service unavailable' }])
  t.equal(down.headers.get('retry-after'), '5')
  app.setBroken(false)

  const wrongMethod = await checkedFetch(`${app.url}/dashboard/api/usage`, { method: 'POST', headers: { 'x-api-token': key } })
  t.equal(wrongMethod.status, 405)
  t.equal(wrongMethod.headers.get('allow'), 'GET, HEAD')
  t.notOk(
    app.logger.lines.some((line) => line.includes(key) || line.includes(other.key)),
    'no key in the logs'
  )
})

t.test('GET /dashboard: the page, its files, a strict CSP without inline code, no key in any URL', async (t) => {
  const app = await startApp(t)
  const page = await checkedFetch(`${app.url}/dashboard`)
  t.equal(page.status, 200)
  t.match(page.headers.get('content-type'), /^text\/html/)
  const csp = page.headers.get('content-security-policy') ?? ''
  t.match(csp, /default-src 'none'/)
  t.match(csp, /script-src 'self'(;|$)/)
  t.match(csp, /frame-ancestors 'none'/)
  t.notMatch(csp, /unsafe-inline|unsafe-eval|upgrade-insecure-requests/)
  const html = await page.text()
  t.notMatch(html, /https?:\/\//, 'no external resource')
  t.notMatch(html, /<script>|<style>|\sstyle=|\son[a-z]+=/i, 'no inline script, style or handler')
  t.notMatch(html, /id="api-key"[^>]*\sname=/, 'the key field has no name, so it can never end up in a URL')

  for (const [path, type] of [
    ['/dashboard/dashboard.js', /^text\/javascript/],
    ['/dashboard/dashboard.css', /^text\/css/]
  ] as const) {
    const asset = await checkedFetch(app.url + path)
    t.equal(asset.status, 200, path)
    t.match(asset.headers.get('content-type'), type, path)
    t.notMatch(await asset.text(), /https?:\/\/(?!127)/, `${path} loads nothing from elsewhere`)
  }
  const slash = await checkedFetch(`${app.url}/dashboard/`, { redirect: 'manual' })
  t.equal(slash.status, 301)
  t.equal(new URL(slash.headers.get('location') ?? '', `${app.url}/dashboard/`).href, `${app.url}/dashboard`)
  t.equal((await checkedFetch(`${app.url}/dashboard/nope`)).status, 404, 'other paths fall through to the app')
})

/** A fresh browser page that records console errors, page errors, CSP violations and usage requests, and checks its API answers. */
async function openPage(browser: Browser, t: Test, viewport = { width: 900, height: 900 }, colorScheme: 'light' | 'dark' = 'light') {
  const context: BrowserContext = await browser.newContext({ locale: 'en-US', timezoneId: 'UTC', viewport, colorScheme })
  t.teardown(() => context.close())
  return watch(await context.newPage())
}

async function watch(page: Page) {
  const problems: string[] = []
  const usageRequests: Array<{ url: string; token: string | undefined }> = []
  page.on('console', (message) => {
    if (message.type() === 'error' || /Content.Security.Policy/i.test(message.text())) problems.push(message.text())
  })
  page.on('pageerror', (error) => problems.push(error.message))
  page.on('request', (request) => {
    if (request.url().includes('/dashboard/api/account'))
      usageRequests.push({ url: request.url(), token: request.headers()['x-api-token'] })
  })
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (e) => console.error('CSP violation: ' + e.violatedDirective + ' ' + e.blockedURI))`
  })
  return { page, problems, usageRequests, answers: checkPageAnswers(page) }
}

/** Waits for the page's answer checks and asserts some ran and none mismatched the OpenAPI document. */
async function answersMatch(t: Test, ...all: PageAnswers[]) {
  await Promise.all(all.map((answers) => answers.settled()))
  const count = all.reduce((sum, answers) => sum + answers.count, 0)
  t.ok(count > 0, `the page's API answers were checked (${count})`)
  t.strictSame(
    all.flatMap((answers) => answers.mismatches),
    [],
    'every API answer the page received matches the OpenAPI document'
  )
}

/** Console errors other than the browser's own note about a 401/503 answer, which the page expects. */
function unexpected(problems: string[]): string[] {
  return problems.filter((text) => !/Failed to load resource: the server responded with a status of (401|503)/.test(text))
}

const text = (page: Page, selector: string) => page.locator(selector).innerText()
const field = (page: Page, name: string) => text(page, `#result [data-field="${name}"]`)
// A function, not a string: Playwright evals string predicates in the page, which the page's CSP forbids.
const waitState = (page: Page, state: string) =>
  page.waitForFunction((wanted) => (globalThis as any).document.body.dataset.state === wanted, state, { timeout: 10_000 })

/** Pastes `key`, submits, and waits for the page to settle in `state`. */
async function submitKey(page: Page, key: string, state: string) {
  await page.fill('#api-key', key)
  await page.click('#submit')
  await waitState(page, state)
}

/** Asserts the result panel shows `expected` and that the page's numbers are the store's. */
async function assertShown(
  t: Test,
  page: Page,
  expected: { id: string; used: number; limit: number; remaining: number; plan: string; origin: string; key: string }
) {
  const period = periodOf(Date.now())
  t.equal(await field(page, 'id'), expected.id)
  t.equal((await field(page, 'plan')).toLowerCase(), expected.plan)
  t.equal(await field(page, 'used'), String(expected.used))
  t.equal(await field(page, 'limit'), String(expected.limit))
  t.equal(await field(page, 'remaining'), String(expected.remaining))
  t.equal(await page.locator('#result [data-field="month"]').getAttribute('datetime'), period.id)
  t.equal(
    await field(page, 'month'),
    new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(period.end - 1)
  )
  t.equal(await page.locator('#result [data-field="reset"]').getAttribute('datetime'), new Date(period.end).toISOString())
  t.equal(await field(page, 'reset'), new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(period.end))
  t.equal(await page.getAttribute('#bar', 'aria-valuenow'), String(expected.used))
  t.equal(await page.getAttribute('#bar', 'aria-valuemax'), String(expected.limit))
  t.match(await text(page, '#bar-label'), `${expected.used} of ${expected.limit} units used`)
  const width = (await page.evaluate(
    `document.getElementById('bar-fill').getBoundingClientRect().width / document.getElementById('bar').clientWidth`
  )) as number
  t.ok(Math.abs(width - expected.used / expected.limit) < 0.03, `the bar is ${Math.round(width * 100)}% full`)
  const curl = await text(page, '#curl')
  t.match(curl, `curl -s -X POST '${expected.origin}/api/v1'`)
  t.match(curl, '"X-API-Token: $UV_API_KEY"')
  t.notOk(curl.includes(expected.key), 'the curl example does not print the key')
  t.notOk(page.url().includes(expected.key), 'the key is not in the page URL')
}

t.test('the page in headless Chromium', { skip: skipBrowser }, async (t) => {
  const app = await startApp(t)
  const browser = await launch()
  t.teardown(() => browser.close())
  const { key, id } = await issueKey(app.stores.keys, 'free')
  t.equal(await post(app.url, key, threeUnits), 200, 'three units used through the real API')

  const { page, problems, usageRequests, answers } = await openPage(browser, t)
  await page.goto(`${app.url}/dashboard`)
  t.equal(await page.evaluate('document.activeElement.id'), 'api-key', 'the key field has focus')
  t.equal(await page.locator('label[for="api-key"]').innerText(), 'API key')

  await page.click('#submit')
  await waitState(page, 'empty')
  t.match(await text(page, '#key-error'), 'Paste your API key first')
  t.equal(await page.getAttribute('#api-key', 'aria-invalid'), 'true')
  t.equal(usageRequests.length, 0, 'an empty key sends nothing')

  await submitKey(page, 'uv_not-a-key', 'invalid')
  t.match(await text(page, '#alert'), 'not valid or has been revoked')
  t.ok(await page.locator('#result').isHidden())
  await page.screenshot({ path: '/tmp/dashboard-error.png' })

  await submitKey(page, key, 'loaded')
  await assertShown(t, page, { id, plan: 'free', used: 3, limit: 25, remaining: 22, origin: app.url, key })
  t.ok(await page.locator('#alert').isHidden(), 'the error is gone')
  t.equal(await page.evaluate('document.activeElement.id'), 'result', 'focus moves to the answer')
  await page.click('#copy')
  await page.locator('#copy-status', { hasText: /Copied|Selected/ }).waitFor({ timeout: 5000 })
  t.pass('the copy button answers')
  t.strictSame(usageRequests.at(-1), { url: `${app.url}/dashboard/api/account`, token: key }, 'the key travels in the header only')
  t.equal(await page.evaluate('localStorage.length'), 0, 'nothing stored unless asked')
  await page.screenshot({ path: '/tmp/dashboard.png', fullPage: true })

  app.setBroken(true)
  await page.click('#sign-out')
  await submitKey(page, key, 'unavailable')
  t.match(await text(page, '#alert'), 'unavailable right now. Try again in 5 seconds')
  app.setBroken(false)

  t.equal(await post(app.url, key, { model: 'user_verification', lastname: 'Lovelace' }), 200)
  await submitKey(page, key, 'loaded')
  t.equal(await field(page, 'used'), '4', 'a new submit shows fresh numbers')
  t.strictSame(unexpected(problems), [], 'no console errors or CSP violations')
  await answersMatch(t, answers)
  t.ok(
    problems.every((line) => !line.includes(key)),
    'the key is never in the console'
  )
})

t.test(
  '"remember on this device" keeps the key in localStorage only when ticked; readable on a phone',
  { skip: skipBrowser },
  async (t) => {
    const app = await startApp(t)
    const browser = await launch()
    t.teardown(() => browser.close())
    const { key, id } = await issueKey(app.stores.keys, 'free')
    const { page, problems, answers } = await openPage(browser, t, { width: 360, height: 740 }, 'dark')
    await page.goto(`${app.url}/dashboard`)
    await page.check('#remember')
    await submitKey(page, key, 'loaded')
    t.equal(await page.evaluate(`Object.values(localStorage).includes(${JSON.stringify(key)})`), true)

    const again = await watch(await page.context().newPage())
    await again.page.goto(`${app.url}/dashboard`)
    await waitState(again.page, 'loaded')
    t.equal(await field(again.page, 'id'), id, 'a remembered key loads on its own')
    t.equal(await again.page.inputValue('#api-key'), key)
    const overflow = (await again.page.evaluate('document.documentElement.scrollWidth - document.documentElement.clientWidth')) as number
    t.ok(overflow <= 0, 'no sideways scrolling at 360 px')
    await again.page.screenshot({ path: '/tmp/dashboard-mobile.png', fullPage: true })

    await again.page.click('#sign-out')
    t.equal(await again.page.evaluate('localStorage.length'), 0, 'signing out forgets the key at once')
    t.notOk(await again.page.isChecked('#remember'), 'and unticks remembering')
    t.strictSame(unexpected([...problems, ...again.problems]), [])
    await answersMatch(t, answers, again.answers)
  }
)

t.test('the built server, as users start it, serves the dashboard', { skip: skipBrowser }, async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'uv-dashboard-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const store = `sqlite://${join(dir, 'store.sqlite')}`
  const server = await startServe(['--store', store, '--quiet'])
  t.teardown(() => server.stop())
  const origin = new URL(server.url).origin
  if ((await checkedFetch(`${origin}/dashboard`)).status === 404) {
    t.fail('server/app.ts must mount the dashboard at /dashboard')
    return
  }
  const key = server.demoKey
  const id = server.demoKeyId
  if (key === undefined || id === undefined) throw new Error('serve printed no demo key')
  const printed = server.stderr().split(key).length
  t.equal(await post(origin, key, threeUnits), 200, 'three units used through the real API')

  const browser = await launch()
  t.teardown(() => browser.close())
  const { page, problems, answers } = await openPage(browser, t)
  await page.goto(`${origin}/dashboard`)
  await submitKey(page, 'uv_not-a-key', 'invalid')
  await submitKey(page, key, 'loaded')
  await assertShown(t, page, { id, plan: 'free', used: 3, limit: 25, remaining: 22, origin, key })
  const cli = await runCli(['usage', id, '--store', store, '--json'])
  t.match(JSON.parse(cli.stdout), { id, used: 3, limit: 25, remaining: 22 }, 'the store agrees with the page')
  t.strictSame(unexpected(problems), [], "no console errors or CSP violations under the app's real headers")
  await answersMatch(t, answers)
  t.notOk(server.stdout().includes(key), 'the key is not in the JSON log')
  t.equal(server.stderr().split(key).length, printed, 'nor printed again after the one-time demo message')
})

async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync'
    ]
  })
}
