// The account commands as users and scripts run them: accounts, keys per account, rotation with grace, usage history, each with --json.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { periodOf } from '../../lib/quota/plans.js'
import { openStores } from '../../lib/stores/open-stores.js'
import { startApi } from '../fixtures/create-api.js'
import { runCli } from '../fixtures/spawn-cli.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-accounts-cli-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
let n = 0
const freshStore = () => `sqlite://${join(dir, `store-${++n}.sqlite`)}`
const verifiers = await testVerifiers(t)
const one = { model: 'user_verification', firstname: 'Jane' }

async function json(args: string[]): Promise<any> {
  const result = await runCli([...args, '--json'])
  if (result.code !== 0) throw new Error(`${args.join(' ')} exited ${result.code}: ${result.stderr}`)
  t.equal(result.stdout.trim().split('\n').length, 1, `${args.slice(0, 2).join(' ')} --json prints one line`)
  return JSON.parse(result.stdout)
}

t.test('accounts create|list|plan|disable|enable and keys create --account, against a server using the same store', async (t) => {
  const store = freshStore()
  const account = await json([
    'accounts',
    'create',
    '--name',
    'Acme Ltd',
    '--email',
    'Ops@Acme.example',
    '--plan',
    'free',
    '--store',
    store
  ])
  // The address as typed; uniqueness compares its canonical form (F4).
  t.match(account, { id: /^acct_[0-9a-f]{12}$/, name: 'Acme Ltd', email: 'Ops@Acme.example', plan: 'free', disabledAt: null })
  const duplicate = await runCli([
    'accounts',
    'create',
    '--name',
    'Again',
    '--email',
    '"ops"@ACME.example',
    '--plan',
    'free',
    '--store',
    store
  ])
  t.equal(duplicate.code, 1)
  t.match(duplicate.stderr, /already exists/)
  t.notMatch(duplicate.stderr, /ops@acme/, 'the email is not echoed')
  // The admin view's syntax check applies here too: a trailing dot or a zero-width space is another mailbox's spelling.
  for (const email of ['ops@acme.example.', 'o\u200bps@acme.example']) {
    const loose = await runCli(['accounts', 'create', '--name', 'Loose', '--email', email, '--plan', 'free', '--store', store])
    t.equal(loose.code, 1, `refused: ${JSON.stringify(email)}`)
    t.match(loose.stderr, /--email is not a valid email address/)
    t.notMatch(loose.stderr, /acme/, 'the email is not echoed')
  }

  const prod = await json(['keys', 'create', '--account', account.id, '--label', 'prod', '--store', store])
  const staging = await json(['keys', 'create', '--account', account.id, '--label', 'staging', '--store', store])
  t.strictSame(Object.keys(prod), ['id', 'key', 'plan', 'label', 'account'])
  t.equal(prod.account, account.id)
  t.equal(staging.plan, 'free')
  const both = await json(['keys', 'list', '--account', account.id, '--store', store])
  t.strictSame(
    both.map((k: any) => [k.id, k.label, k.status]),
    [
      [prod.id, 'prod', 'active'],
      [staging.id, 'staging', 'active']
    ]
  )

  const stores = await openStores(store)
  const api = await startApi({ ...verifiers, store: stores })
  t.teardown(async () => {
    await api.close()
    await stores.close()
  })
  for (let i = 0; i < 13; i++) t.equal((await api.post(one, { token: prod.key })).status, 200)
  for (let i = 0; i < 12; i++) t.equal((await api.post(one, { token: staging.key })).status, 200)
  t.equal((await api.post(one, { token: staging.key })).status, 402, 'the two keys share 25 units')

  const listed = await json(['accounts', 'list', '--store', store])
  t.match(listed, [{ id: account.id, plan: 'free', status: 'active', used: 25, limit: 25, remaining: 0 }])
  const human = await runCli(['accounts', 'list', '--store', store])
  t.match(human.stdout, new RegExp(`${account.id}\\s+free\\s+active\\s+25/25`))

  t.strictSame(await json(['accounts', 'plan', account.id, 'basic', '--store', store]), { id: account.id, plan: 'basic' })
  t.equal((await api.post(one, { token: prod.key })).status, 200, 'the plan change applies to the next request')
  const disabled = await json(['accounts', 'disable', account.id, '--store', store])
  t.type(disabled.disabledAt, 'string')
  t.equal((await api.post(one, { token: prod.key })).status, 401, 'a disabled account: 401')
  t.equal((await api.post(one, { token: staging.key })).status, 401, 'on every key')
  t.strictSame(await json(['accounts', 'enable', account.id, '--store', store]), { id: account.id, disabledAt: null })
  t.equal((await api.post(one, { token: staging.key })).status, 200, 'enabled again')

  const created = await json(['keys', 'create', '--plan', 'pro', '--store', store])
  t.not(created.account, account.id, 'keys create --plan makes a new account')
  t.equal((await json(['accounts', 'list', '--store', store])).length, 2)
})

t.test('keys rotate --grace: the old key answers until the grace ends, then 401; usage carries on', async (t) => {
  const store = freshStore()
  const first = await json(['keys', 'create', '--plan', 'free', '--label', 'web', '--store', store])
  let clock = Date.now()
  const stores = await openStores(store)
  const api = await startApi({ ...verifiers, store: stores, now: () => clock })
  t.teardown(async () => {
    await api.close()
    await stores.close()
  })
  t.equal((await api.post(one, { token: first.key })).status, 200)

  const rotated = await json(['keys', 'rotate', first.id, '--grace', '10m', '--store', store])
  t.match(rotated, { account: first.account, label: 'web', plan: 'free', previous: { id: first.id } })
  t.match(rotated.key, /^uv_[A-Za-z0-9_-]{43}$/)
  const ends = Date.parse(rotated.previous.expiresAt)
  t.ok(Math.abs(ends - (Date.now() + 600_000)) < 30_000, 'the grace is 10 minutes')
  t.equal((await api.post(one, { token: first.key })).status, 200, 'the old key inside the grace')
  const fresh = await api.post(one, { token: rotated.key })
  t.equal(fresh.headers.get('x-quota-remaining'), '22', 'the new key continues the same month')
  clock = ends
  t.equal((await api.post(one, { token: first.key })).status, 401, 'after the grace')
  t.equal((await api.post(one, { token: rotated.key })).status, 200)
  const keys = await json(['keys', 'list', '--store', store])
  t.strictSame(
    keys.map((k: any) => k.id),
    [first.id, rotated.id]
  )

  const bad = await runCli(['keys', 'rotate', rotated.id, '--grace', 'soon', '--store', store])
  t.equal(bad.code, 1)
  t.match(bad.stderr, /--grace must be a duration/)
  const now = await json(['keys', 'rotate', rotated.id, '--store', store])
  t.ok(Date.parse(now.previous.expiresAt) <= Date.now(), 'no --grace: the old key stops at once')
  const revoked = await json(['keys', 'revoke', now.id, '--store', store])
  t.equal(revoked.id, now.id)
  const again = await runCli(['keys', 'rotate', now.id, '--store', store])
  t.equal(again.code, 1)
  t.match(again.stderr, /revoked or expired/)
})

t.test('usage <account> [--daily] [--from] [--to]: this month and the history, from the store', async (t) => {
  const store = freshStore()
  const issued = await json(['keys', 'create', '--plan', 'basic', '--store', store])
  const stores = await openStores(store)
  let clock = Date.UTC(2026, 9, 30, 12)
  const host = await startApi({ ...verifiers, store: stores, now: () => clock })
  t.teardown(async () => {
    await host.close()
    await stores.close()
  })
  const two = { ...one, lastname: 'Doe' }
  t.equal((await host.post(two, { token: issued.key })).status, 200)
  clock = Date.UTC(2026, 9, 31, 8)
  t.equal((await host.post(one, { token: issued.key })).status, 200)
  clock = Date.UTC(2026, 10, 2, 8)
  for (let i = 0; i < 3; i++) t.equal((await host.post(one, { token: issued.key })).status, 200)

  const months = await json(['usage', issued.account, '--from', '2026-01', '--to', '2026-12', '--store', store])
  t.match(months, { account: issued.account, plan: 'basic', from: '2026-01', to: '2026-12' })
  t.strictSame(months.months, [
    { period: '2026-10', units: 3 },
    { period: '2026-11', units: 3 }
  ])
  const days = await json(['usage', issued.account, '--daily', '--from', '2026-10-01', '--to', '2026-11-30', '--store', store])
  t.strictSame(days.days, [
    { day: '2026-10-30', units: 2 },
    { day: '2026-10-31', units: 1 },
    { day: '2026-11-02', units: 3 }
  ])
  const human = await runCli(['usage', issued.account, '--daily', '--from', '2026-10-01', '--to', '2026-11-30', '--store', store])
  t.match(human.stdout, /2026-10-30\s+2\n/)
  const current = await json(['usage', issued.account, '--store', store])
  t.equal(current.period, periodOf(Date.now()).id, 'this month is the real one')

  for (const [args, message] of [
    [['--daily', '--from', '2026-10'], /--from must be a day/],
    [['--from', '2026-10-01'], /--from must be a month/],
    [['--from', '2026-12', '--to', '2026-01'], /is after --to/],
    [['--daily', '--from', '2020-01-01', '--to', '2026-01-01'], /too long/]
  ] as const) {
    const result = await runCli(['usage', issued.account, ...args, '--store', store])
    t.equal(result.code, 1, args.join(' '))
    t.match(result.stderr, message)
  }
  const unknown = await runCli(['usage', 'acct_000000000000', '--store', store])
  t.equal(unknown.code, 1)
  t.match(unknown.stderr, /no account with id/)
})
