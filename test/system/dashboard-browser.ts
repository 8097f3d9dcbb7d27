// The dashboard in headless Chromium: sign-up to chart, key create/rotate/revoke, the admin view lifting a 402, at desktop and phone widths, light and dark.
import { existsSync, mkdirSync } from 'node:fs'
import type { Page } from 'playwright-core'
import t, { type Test } from 'tap'
import {
  chromiumPath,
  desktop,
  launch,
  mailDomain,
  openPage,
  overflow,
  phone,
  startDashboardApp,
  unexpected,
  waitBody,
  type Viewport
} from '../fixtures/dashboard-app.js'

// With UV_TEST_CHROMIUM set (CI) the browser tests must run, so a missing binary fails them.
const skipBrowser =
  process.env.UV_TEST_CHROMIUM === undefined && !existsSync(chromiumPath)
    ? `no Chromium at ${chromiumPath}: install it (apt-get install chromium) or set UV_TEST_CHROMIUM`
    : false

// Six browser sessions on a shared 2-core machine: more than the default 120 s per file when the machine is busy.
t.setTimeout(300_000)

/** Screenshots go here for a person to look at (UV_TEST_SCREENSHOTS overrides). */
const shots = process.env.UV_TEST_SCREENSHOTS ?? '/tmp/uv-dashboard-shots'
mkdirSync(shots, { recursive: true })
const shot = (page: Page, name: string) => page.screenshot({ path: `${shots}/${name}.png`, fullPage: true })

const adminToken = 'test-admin-token-0123456789abcdef'
const upgradeUrl = 'https://billing.example.com/upgrade'
const text = (page: Page, selector: string) => page.locator(selector).innerText()
/** The body rows of a table, each as its cells' text joined by `|`. */
const rows = (page: Page, table: string) =>
  page
    .locator(`${table} tbody tr`)
    .evaluateAll((trs) => trs.map((tr) => [...(tr as any).cells].map((cell: any) => cell.textContent).join('|')))

/** Signs up through the form and returns the key the page shows once. */
async function signUp(page: Page, name: string, email: string): Promise<string> {
  await page.fill('#signup-name', name)
  await page.fill('#signup-email', email)
  await page.click('#signup-submit')
  await waitBody(page, 'signup', 'created')
  return page.inputValue('#signup-key')
}

/** Submits the sign-up form and returns the refusal the page shows for `field`. */
async function refused(page: Page, name: string, email: string, field: 'name' | 'email'): Promise<string> {
  await page.fill('#signup-name', name)
  await page.fill('#signup-email', email)
  await page.click('#signup-submit')
  await waitBody(page, 'signup', 'refused')
  const message = await text(page, `#signup-${field}-error`)
  await page.evaluate('document.body.dataset.signup = ""')
  return message
}

/** Waits until the account view shows `used` units. */
async function usedShown(page: Page, used: number) {
  await page.locator('#result [data-field="used"]', { hasText: new RegExp(`^${used}$`) }).waitFor({ timeout: 10_000 })
}

t.test(
  'sign-up → key → API call → chart; keys created, rotated with grace, revoked; upgrade offer past 80%',
  { skip: skipBrowser },
  async (t) => {
    const app = await startDashboardApp(t, { signup: true, adminToken, upgrade: upgradeUrl })
    const browser = await launch()
    t.teardown(() => browser.close())
    const { page, problems, answers } = await openPage(browser, t)
    await page.goto(`${app.url}/dashboard`)
    await waitBody(page, 'ready', 'true')
    t.ok(await page.locator('nav [data-nav="signup"]').isVisible(), 'sign-up is offered')
    t.ok(await page.locator('nav [data-nav="admin"]').isVisible(), 'the admin view is offered')

    await page.click('nav [data-nav="plans"]')
    t.strictSame(
      await page.locator('#plans-table tbody tr').allInnerTexts(),
      ['Free\t25', 'Basic\t30,000', 'Pro\t65,000'],
      'plans with their limits'
    )
    t.equal(await page.getAttribute('#plans-upgrade a', 'href'), upgradeUrl)

    await page.click('nav [data-nav="signup"]')
    const email = `jane.doe@${mailDomain}`
    t.match(await refused(page, 'Jane Doe', 'jane.doe@@acme', 'email'), 'not valid', 'bad syntax is refused')
    t.match(await refused(page, 'Jane Doe', 'jane.doe@mailinator.com', 'email'), 'Disposable', 'a disposable domain is refused')
    t.match(await refused(page, 'Jane Doe', 'jane.doe@no-mail-here-zz.com', 'email'), 'DNS check failed', 'a failed DNS check is refused')
    t.match(await refused(page, 'xkqzvw jjjjjjj', email, 'name'), 'real name', 'a junk name is refused')
    await shot(page, 'signup-refused')
    const key = await signUp(page, 'Jane Doe', email)
    t.match(key, /^uv_[A-Za-z0-9_-]{40,}$/, 'the key is shown once')
    await shot(page, 'signup-done')
    t.equal(await app.call(key), 200, 'the new key works on the API')

    await page.click('#signup-open')
    await waitBody(page, 'state', 'loaded')
    t.equal(await text(page, '#result [data-field="plan"]'), 'Free')
    t.equal(await text(page, '#result [data-field="account-name"]'), 'Jane Doe')
    await usedShown(page, 1)
    t.equal(await page.locator('#signup-key').inputValue(), '', 'the sign-up form no longer holds the key')
    t.equal(await page.evaluate('localStorage.length'), 0, 'nothing remembered unless asked')

    // The try-it form calls the real API with the signed-in key: three fields, three units.
    t.match(await text(page, '#try-cost'), 'uses one unit')
    await page.fill('#try-email', `ada@${mailDomain}`)
    await page.fill('#try-firstname', 'Ada')
    await page.fill('#try-lastname', 'Lovelace')
    await page.click('#try-submit')
    await page.locator('#try-status', { hasText: 'HTTP 200' }).waitFor()
    t.match(await text(page, '#try-result'), '"status": "success"')
    await usedShown(page, 4)
    const chart = page.locator('#daily-chart')
    t.equal(await chart.getAttribute('data-total'), '4', 'the chart holds the four units')
    t.ok(await page.locator('#daily-chart canvas').count(), 'uPlot drew a canvas')
    const today = new Date(app.now()).toISOString().slice(0, 10)
    t.strictSame(await rows(page, '#daily-table'), [`${today}|4`], "today's bar carries the units")
    t.match(await text(page, '#daily-summary'), '4 units this month')
    t.strictSame(await rows(page, '#months'), [
      `${new Intl.DateTimeFormat('en-US', { month: 'long', year: 'numeric', timeZone: 'UTC' }).format(app.now())}|4`
    ])
    t.match(await text(page, '#curl'), `curl -s -X POST '${app.url}/api/v1'`)
    t.notOk((await text(page, '#curl')).includes(key), 'the curl example does not print the key')
    await shot(page, 'account-desktop-light')

    // A second key for the account: shown once, draws on the same allowance.
    await page.fill('#new-key-label', 'staging')
    await page.click('#new-key-submit')
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.lastAction?.startsWith('created'))
    const staging = await page.inputValue('#new-key-value')
    const stagingId = await text(page, '#new-key [data-once="id"]')
    t.match(staging, /^uv_/)
    t.equal(await app.call(staging), 200)
    t.equal(await page.locator('#keys tbody tr').count(), 2, 'both keys listed')
    t.match(await text(page, `#keys tr[data-key="${stagingId}"]`), 'staging')

    // Rotate the staging key with 5 minutes of grace: both work until the grace ends, then the old one answers 401.
    await page.selectOption('#rotate-grace', '300')
    await page.click(`#keys tr[data-key="${stagingId}"] button[data-action="rotate"]`)
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `rotated ${id}`, stagingId)
    const rotated = await page.inputValue('#new-key-value')
    t.not(rotated, staging)
    t.match(await text(page, `#keys tr[data-key="${stagingId}"]`), 'Rotated: works until')
    t.equal(await app.call(staging), 200, 'the old key works during the grace period')
    t.equal(await app.call(rotated), 200, 'the new key works')
    app.advance(301_000)
    t.equal(await app.call(staging), 401, "the old key's 401 after the grace")
    t.equal(await app.call(rotated), 200, 'the new key still works')
    await page.click('#new-key-copy')
    await page.locator('#new-key-status', { hasText: /Copied|Selected/ }).waitFor()

    // Revoke the rotated key: 401 at once.
    const rotatedId = await text(page, '#new-key [data-once="id"]')
    await page.click(`#keys tr[data-key="${rotatedId}"] button[data-action="revoke"]`)
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `revoked ${id}`, rotatedId)
    t.equal(await app.call(rotated), 401, 'a revoked key answers 401 at once')
    t.match(await text(page, `#keys tr[data-key="${rotatedId}"]`), 'Revoked')

    // Past 80% of the free plan's 25 units the upgrade offer shows; at 25 the page says requests answer 402.
    const accountId = await text(page, '#result [data-field="account"]')
    const period = new Date(app.now()).toISOString().slice(0, 7)
    while ((await app.stores.quota.get(accountId, period)) < 19) t.equal(await app.call(key), 200)
    await page.fill('#try-email', '')
    await page.fill('#try-lastname', '')
    const tryOnce = async (status: number) => {
      await page.evaluate('document.getElementById("try-status").textContent = ""')
      await page.click('#try-submit')
      await page.locator('#try-status', { hasText: `HTTP ${status}` }).waitFor()
    }
    await tryOnce(200)
    await usedShown(page, 20)
    t.ok(await page.locator('#upgrade').isHidden(), 'no upgrade offer at 80%')
    await tryOnce(200)
    await usedShown(page, 21)
    t.equal(await page.getAttribute('#upgrade', 'data-level'), 'warn', 'the offer shows past 80%')
    t.match(await text(page, '#upgrade'), "84% of this month's units")
    t.equal(await page.getAttribute('#upgrade a', 'href'), upgradeUrl, 'the operator’s upgrade link')
    await shot(page, 'account-warn')
    while ((await app.call(key)) === 200) {}
    t.equal(await app.call(key), 402, 'the plan is used up')
    await tryOnce(402)
    await page.locator('#upgrade[data-level="full"]').waitFor()
    t.match(await text(page, '#upgrade'), 'requests answer 402')
    t.equal(await page.getAttribute('#upgrade a', 'href'), upgradeUrl)
    await shot(page, 'account-exhausted')

    t.strictSame(unexpected(problems), [], 'no console errors or CSP violations')
    await answers.settled()
    t.ok(answers.count > 0, `the page's API answers were checked (${answers.count})`)
    t.strictSame(answers.mismatches, [], 'every API answer the page received matches the OpenAPI document')
    const audit = app.audit()
    t.strictSame(
      audit.map((line) => line.action),
      ['account.create', 'key.create', 'key.rotate', 'key.revoke'],
      'one audit line per action'
    )
    t.match(audit[0], { actor: 'signup', account: /^acct_/, key: /^key_/ })
    t.match(audit[2], { actor: /^key_/, key: /^key_/, previous: stagingId })
    for (const secret of [key, staging, rotated, email, 'Jane', 'Doe'])
      t.notOk(
        app.logger.lines.some((line) => line.includes(secret)),
        `the log never holds ${secret.slice(0, 6)}…`
      )
  }
)

t.test(
  'admin view: search, create with first key, plan change lifts the 402, disable/enable, revoke, escaped text',
  { skip: skipBrowser },
  async (t) => {
    const app = await startDashboardApp(t, { adminToken, upgrade: 'Write to sales@example.com for more units' })
    const browser = await launch()
    t.teardown(() => browser.close())
    const { page, problems, answers } = await openPage(browser, t)
    await page.goto(`${app.url}/dashboard#admin`)
    await waitBody(page, 'ready', 'true')
    t.ok(await page.locator('nav [data-nav="signup"]').isHidden(), 'no sign-up unless enabled')

    await page.fill('#admin-token', 'wrong-token-wrong-token')
    await page.click('#admin-submit')
    await waitBody(page, 'admin', 'invalid')
    t.match(await text(page, '#admin-error'), 'not valid')
    await page.fill('#admin-token', adminToken)
    await page.click('#admin-submit')
    await waitBody(page, 'admin', 'loaded')

    // Create an account whose name is markup: it must show as text.
    const hostile = '<img src=x onerror="document.body.dataset.pwned=1">Mallory'
    await page.fill('#admin-create-name', hostile)
    await page.fill('#admin-create-email', 'mallory@example.org')
    await page.selectOption('#admin-create-plan', 'free')
    await page.fill('#admin-create-label', 'prod')
    await page.click('#admin-create-submit')
    await page.waitForFunction(() => (globalThis as any).document.body.dataset.lastAction?.startsWith('created'))
    const key = await page.inputValue('#admin-new-key-value')
    const accountId = await text(page, '#admin-new-key [data-once="account"]')
    t.match(key, /^uv_/, 'the first key is shown once')
    t.equal(await page.locator('#admin-accounts img').count(), 0, 'no element made from the name')
    t.match(await text(page, `#admin-accounts tr[data-account="${accountId}"]`), hostile, 'the name shown as typed')
    t.equal(await page.evaluate('document.body.dataset.pwned ?? "no"'), 'no')

    // A second account, to search between.
    await page.fill('#admin-create-name', 'Bob Builder')
    await page.click('#admin-create-submit')
    await page.waitForFunction(
      (first) =>
        (globalThis as any).document.body.dataset.lastAction?.startsWith('created') &&
        !(globalThis as any).document.body.dataset.lastAction.endsWith(first),
      accountId
    )
    t.equal(await page.locator('#admin-accounts tbody tr').count(), 2)
    await page.fill('#admin-search', 'mallory@')
    await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#admin-accounts tbody tr').length === 1)
    t.match(await text(page, '#admin-accounts tbody'), 'Mallory')

    // Use the free plan up: 402. The admin moves the account to basic: the next request passes.
    while ((await app.call(key)) === 200) {}
    t.equal(await app.call(key), 402)
    await page.selectOption(`#admin-accounts tr[data-account="${accountId}"] select`, 'basic')
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `plan ${id}`, accountId)
    t.equal(await app.call(key), 200, 'the 402 lifts on the next request')
    t.match(await text(page, '#admin-total'), /^2\d$/)

    await page.click(`#admin-accounts tr[data-account="${accountId}"] button[data-action="disable"]`)
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `disable ${id}`, accountId)
    t.equal(await app.call(key), 401, 'a disabled account’s keys answer 401')
    await page.click(`#admin-accounts tr[data-account="${accountId}"] button[data-action="enable"]`)
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `enable ${id}`, accountId)
    t.equal(await app.call(key), 200, 'enabled again')

    await page.click(`#admin-accounts tr[data-account="${accountId}"] button[data-action="open"]`)
    // On a failure, say what the page said (a CI run once timed out here with no clue).
    await page
      .locator('#admin-detail-chart canvas')
      .waitFor()
      .catch(async (error: unknown) => {
        throw new Error(`${String(error)}; the page's alert: ${JSON.stringify(await page.textContent('#admin-alert'))}`)
      })
    t.match(await page.getAttribute('#admin-detail-chart', 'data-total'), /^2\d$/, "the account's daily chart")
    t.equal(
      await page.getAttribute('#admin-chart', 'data-total'),
      (await text(page, '#admin-total')).replace(/\D/g, ''),
      'the total chart holds the total'
    )
    await shot(page, 'admin-desktop-light')
    const keyId = (await page.locator('#admin-keys tbody tr').first().getAttribute('data-key')) ?? ''
    await page.click(`#admin-keys tr[data-key="${keyId}"] button[data-action="revoke"]`)
    await page.waitForFunction((id) => (globalThis as any).document.body.dataset.lastAction === `revoke ${id}`, keyId)
    t.equal(await app.call(key), 401, 'revoked by the admin')

    t.strictSame(unexpected(problems), [], 'no console errors or CSP violations')
    await answers.settled()
    t.ok(answers.count > 0, `the page's API answers were checked (${answers.count})`)
    t.strictSame(answers.mismatches, [], 'every API answer the page received matches the OpenAPI document')
    const audit = app.audit()
    t.strictSame(
      audit.map((line) => `${line.actor} ${line.action}`),
      [
        'admin account.create',
        'admin account.create',
        'admin account.plan',
        'admin account.disable',
        'admin account.enable',
        'admin key.revoke'
      ]
    )
    for (const secret of [key, adminToken, 'mallory@example.org', 'Mallory', 'Bob Builder'])
      t.notOk(
        app.logger.lines.some((line) => line.includes(secret)),
        `the log never holds ${secret.slice(0, 6)}…`
      )
  }
)

/** Every view at one size and scheme: no console errors, no sideways scrolling, a screenshot each. */
async function everyView(t: Test, viewport: Viewport, scheme: 'light' | 'dark') {
  const app = await startDashboardApp(t, { signup: true, adminToken, upgrade: upgradeUrl })
  const browser = await launch()
  t.teardown(() => browser.close())
  const { page, problems, answers } = await openPage(browser, t, viewport, scheme)
  const size = viewport.width < 500 ? 'phone' : 'desktop'
  await page.goto(`${app.url}/dashboard#signup`)
  await waitBody(page, 'ready', 'true')
  const key = await signUp(page, 'Grace Hopper', `grace@${mailDomain}`)
  // Seven requests of three units, spread over the month's last days so the chart has bars to show.
  const day = 86_400_000
  const dayOfMonth = new Date(app.now()).getUTCDate()
  for (let i = 0; i < 7; i++) {
    const back = Math.min(6 - i, dayOfMonth - 1) * day
    app.advance(-back)
    t.equal(await app.call(key, { email: `g@${mailDomain}`, firstname: 'Grace', lastname: 'Hopper' }), 200)
    app.advance(back)
  }
  await shot(page, `signup-${size}-${scheme}`)
  await page.click('nav [data-nav="account"]')
  await page.check('#remember')
  await page.fill('#api-key', key)
  await page.click('#submit')
  await waitBody(page, 'state', 'loaded')
  t.ok((await page.evaluate('Object.keys(localStorage).length')) === 1, 'remembering is opt-in and stores the key when ticked')
  t.equal(await overflow(page), 0, `account view fits ${viewport.width} px`)
  t.equal(await page.getAttribute('#daily-chart', 'data-total'), '21')
  await shot(page, `account-${size}-${scheme}`)
  if (size === 'desktop' && scheme === 'light') {
    await page.evaluate('window.scrollTo(0, 0)')
    await page.screenshot({ path: `${shots}/readme.png` })
  }
  await page.goto(`${app.url}/dashboard#plans`)
  await waitBody(page, 'state', 'loaded')
  t.equal(await overflow(page), 0, `plans fit ${viewport.width} px`)
  await shot(page, `plans-${size}-${scheme}`)
  await page.goto(`${app.url}/dashboard#admin`)
  await waitBody(page, 'ready', 'true')
  await page.fill('#admin-token', adminToken)
  await page.click('#admin-submit')
  await waitBody(page, 'admin', 'loaded')
  await page.click('#admin-accounts button[data-action="open"]')
  await page.locator('#admin-detail-chart canvas').waitFor()
  t.equal(await overflow(page), 0, `admin view fits ${viewport.width} px`)
  await shot(page, `admin-${size}-${scheme}`)
  t.strictSame(unexpected(problems), [], `no console errors or CSP violations (${size}, ${scheme})`)
  await answers.settled()
  t.ok(answers.count > 0, `the page's API answers were checked (${answers.count})`)
  t.strictSame(answers.mismatches, [], 'every API answer the page received matches the OpenAPI document')
}

for (const viewport of [desktop, phone])
  for (const scheme of ['light', 'dark'] as const)
    t.test(`every view at ${viewport.width} px, ${scheme}`, { skip: skipBrowser }, (t) => everyView(t, viewport, scheme))
