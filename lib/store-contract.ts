// The store contract suite (`user-verification/store-contract`): every account/key and quota store runs it unmodified.
import { createHash, randomBytes } from 'node:crypto'
import type { Test } from 'tap'
import type { Account, KeyRecord, Stores } from './types.js'

/**
 * What a store can do beyond the required methods. A capability that is `false` skips its
 * tests (reported as skipped, never as passed); the suite checks that each flag matches the
 * store, so a flag cannot hide a method that exists or claim one that does not.
 */
export interface ContractFlags {
  /** The quota store has `cancel` (network stores whose replies can be lost). */
  cancel: boolean
  /** The quota store has `keysVersion` (stores whose `readKey` caches key records, as SQLite's does). */
  keysVersion: boolean
  /** The key store has `getKeyWithAccount` (reads a key and its account together). */
  keyWithAccount: boolean
  /**
   * Writes a store as release 0.1.0 did (keys with plans, usage per key) and returns how to open
   * it with this release, plus what it holds. Absent: the store keeps nothing between opens, so
   * there is nothing to upgrade (the upgrade tests are skipped).
   */
  legacy?: () => Promise<LegacyStore>
  /**
   * Opens two instances of the store on one backend and namespace, as two processes would (both
   * are closed by the suite). Absent: the store lives in one process (the test is skipped).
   */
  twin?: () => Promise<[Stores, Stores]>
  /** Parallel consumes in the concurrency test. Defaults to 60. */
  concurrency?: number
}

/** A store written by release 0.1.0, as the upgrade tests see it. */
export interface LegacyStore {
  /** Opens the store with the current code (runs the upgrade); may be called more than once. */
  open(): Promise<Stores>
  /** The keys written: the key itself, its 0.1.0 plan and label, whether it was revoked, and its usage per period. */
  keys: Array<{ id: string; key: string; plan: string; label: string | null; revoked: boolean; usage: Record<string, number> }>
}

/** A namespace no other test run uses: lower-case, safe as a table name and a Redis prefix. */
export function uniqueNamespace(tag = 'uvt'): string {
  return `${tag}_${process.pid}_${randomBytes(4).toString('hex')}`
}

/** An account with a random id; `createdAt` from `at` (ms since the epoch). */
export function makeAccount(at = Date.now(), patch: Partial<Account> = {}): Account {
  return {
    id: `acct_${randomBytes(6).toString('hex')}`,
    name: 'Test account',
    email: null,
    plan: 'free',
    createdAt: new Date(at).toISOString(),
    disabledAt: null,
    ...patch
  }
}

/** A key record with random id and hash for `accountId`; `createdAt` from `at` (ms since the epoch). */
export function makeRecord(accountId: string, at = Date.now(), patch: Partial<KeyRecord> = {}): KeyRecord {
  const key = `uv_${randomBytes(24).toString('base64url')}`
  return {
    id: `key_${randomBytes(6).toString('hex')}`,
    hash: createHash('sha256').update(key).digest('hex'),
    accountId,
    label: null,
    createdAt: new Date(at).toISOString(),
    revokedAt: null,
    expiresAt: null,
    ...patch
  }
}

const PERIOD = '2031-05'
const DAY = '2031-05-14'
const LATER = Date.UTC(2031, 5, 1)
const randomAccountId = (): string => `acct_${randomBytes(6).toString('hex')}`
const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex')

/**
 * Runs the contract against stores made by `makeStores`, which must return fresh, empty stores
 * (a unique namespace per call; see {@link uniqueNamespace}). Each subtest closes its stores.
 */
export function storeContract(t: Test, makeStores: () => Promise<Stores>, flags: ContractFlags): void {
  const concurrency = flags.concurrency ?? 60

  const withStores = (name: string, fn: (stores: Stores, t: Test) => Promise<void>, skip: string | false = false): void => {
    t.test(name, { skip }, async (t) => {
      const stores = await makeStores()
      t.teardown(() => stores.close())
      await fn(stores, t)
    })
  }

  withStores('declares localKeys and prefix, and the capabilities its flags say', async ({ keys, quota }, t) => {
    t.type(keys.localKeys, 'boolean')
    t.type(quota.localKeys, 'boolean')
    t.type(keys.prefix, 'string')
    t.type(quota.prefix, 'string')
    t.equal(typeof quota.cancel === 'function', flags.cancel, 'flags.cancel matches the store')
    t.equal(typeof quota.keysVersion === 'function', flags.keysVersion, 'flags.keysVersion matches the store')
    t.equal(typeof keys.getKeyWithAccount === 'function', flags.keyWithAccount, 'flags.keyWithAccount matches the store')
    await keys.init?.()
    await quota.init?.()
  })

  withStores('account: create, get by id and by email (any case), list oldest first', async ({ keys }, t) => {
    t.same(await keys.listAccounts(), [], 'empty store lists nothing')
    const base = Date.UTC(2030, 0, 1)
    const later = makeAccount(base + 2000, { name: 'Ada', email: 'ada@example.org', plan: 'basic' })
    const earlier = makeAccount(base + 1000)
    await keys.createAccount(later)
    await keys.createAccount(earlier)
    t.same(await keys.getAccount(later.id), later)
    t.same(await keys.getAccountByEmail('ADA@Example.org'), later, 'email lookup ignores case')
    t.equal(await keys.getAccount(randomAccountId()), undefined, 'unknown id')
    t.equal(await keys.getAccountByEmail('nobody@example.org'), undefined, 'unknown email')
    t.same(
      (await keys.listAccounts()).map((a) => a.id),
      [earlier.id, later.id]
    )
  })

  withStores('account: update changes name, email, plan and disabledAt only; email stays unique', async ({ keys }, t) => {
    const a = makeAccount(Date.now(), { email: 'a@example.org' })
    const b = makeAccount(Date.now(), { email: 'b@example.org' })
    await keys.createAccount(a)
    await keys.createAccount(b)
    const disabledAt = new Date(Date.UTC(2030, 5, 1)).toISOString()
    t.same(await keys.updateAccount(a.id, { plan: 'pro', disabledAt }), { ...a, plan: 'pro', disabledAt })
    t.same(await keys.updateAccount(a.id, { disabledAt: null, name: 'Renamed' }), { ...a, plan: 'pro', name: 'Renamed' }, 'null enables')
    t.same(await keys.updateAccount(a.id, { email: 'New@Example.org' }), { ...a, plan: 'pro', name: 'Renamed', email: 'New@Example.org' })
    t.equal(await keys.getAccountByEmail('a@example.org'), undefined, 'the old email no longer finds it')
    t.equal((await keys.getAccountByEmail('new@example.org'))?.id, a.id, 'the new one does')
    await t.rejects(keys.updateAccount(a.id, { email: 'b@example.org' }), { code: 'ERR_UV_DUPLICATE_ACCOUNT' }, 'a taken email')
    t.equal((await keys.getAccountByEmail('b@example.org'))?.id, b.id)
    await t.rejects(keys.updateAccount(a.id, { email: '"B"@EXAMPLE.org' }), { code: 'ERR_UV_DUPLICATE_ACCOUNT' }, 'another spelling of it')
    t.same(await keys.updateAccount(a.id, { email: 'NEW@example.org' }), { ...a, plan: 'pro', name: 'Renamed', email: 'NEW@example.org' })
    t.equal((await keys.getAccountByEmail('new@example.org'))?.id, a.id, 'a new spelling of its own address keeps it')
    const sneaky = await keys.updateAccount(a.id, { id: 'acct_other', createdAt: 'x' } as never)
    t.equal(sneaky?.id, a.id, 'update never changes the id')
    t.equal(sneaky?.createdAt, a.createdAt, 'nor the creation time')
    t.equal(await keys.updateAccount(randomAccountId(), { plan: 'pro' }), undefined, 'unknown id')
    t.equal((await keys.listAccounts()).length, 2, 'update adds no account')
  })

  withStores('account: a duplicate id or email, or a malformed account, is rejected', async ({ keys }, t) => {
    const a = makeAccount(Date.now(), { email: 'dup@example.org' })
    await keys.createAccount(a)
    await t.rejects(keys.createAccount({ ...makeAccount(), id: a.id }), { code: 'ERR_UV_DUPLICATE_ACCOUNT' }, 'same id')
    await t.rejects(
      keys.createAccount(makeAccount(Date.now(), { email: 'DUP@example.org' })),
      { code: 'ERR_UV_DUPLICATE_ACCOUNT' },
      'same email'
    )
    await t.rejects(keys.createAccount({ ...makeAccount(), plan: '' }), TypeError, 'no plan')
    await t.rejects(keys.createAccount({ ...makeAccount(), id: '' }), TypeError, 'no id')
    t.same(await keys.listAccounts(), [a])
  })

  withStores('account: concurrent creates with one email through one store: exactly one wins', async ({ keys }, t) => {
    const attempts = Array.from({ length: 8 }, () => makeAccount(Date.now(), { email: 'race@example.org' }))
    const outcomes = await Promise.allSettled(attempts.map((account) => keys.createAccount(account)))
    t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'one account created')
    t.ok(
      outcomes.every((o) => o.status === 'fulfilled' || (o.reason as { code?: unknown }).code === 'ERR_UV_DUPLICATE_ACCOUNT'),
      'the others were refused as duplicates'
    )
    t.equal((await keys.listAccounts()).filter((a) => a.email === 'race@example.org').length, 1, 'one account holds the address')
  })

  withStores(
    'account: spellings of one mailbox are one address (canonicalEmail), kept as typed; aliases are not folded',
    async ({ keys }, t) => {
      const spellings: Array<[string, string[]]> = [
        ['"Sig.Dup"@Gmail.com', ['sig.dup@gmail.com', 'SIG.DUP@GMAIL.COM', '"sig\\.dup"@gmail.com', ' sig.dup@gmail.com ']],
        ['sig@bücher.com', ['sig@xn--bcher-kva.com', 'sig@bu\u0308cher.com', 'sig@BÜCHER.com', 'SIG@XN--BCHER-KVA.COM']],
        ['"a b"@example.org', ['"A B"@example.org']]
      ]
      for (const [typed, others] of spellings) {
        const account = makeAccount(Date.now(), { email: typed })
        await keys.createAccount(account)
        t.equal((await keys.getAccount(account.id))?.email, typed, `${typed}: kept as typed`)
        for (const other of others) {
          t.equal((await keys.getAccountByEmail(other))?.id, account.id, `${JSON.stringify(other)} finds ${typed}`)
          await t.rejects(
            keys.createAccount(makeAccount(Date.now(), { email: other })),
            { code: 'ERR_UV_DUPLICATE_ACCOUNT' },
            `${JSON.stringify(other)} is taken`
          )
        }
      }
      // Provider aliases are other addresses to every other mail server: left alone on purpose.
      for (const alias of ['sigdup@gmail.com', 'sig.dup+x@gmail.com', '"a  b"@example.org']) {
        await keys.createAccount(makeAccount(Date.now(), { email: alias }))
        t.pass(`${alias} is its own address`)
      }
      t.equal((await keys.listAccounts()).length, 6)
    }
  )

  withStores(
    'account: concurrent creates with spellings of one mailbox through one store: one wins, the others are duplicates',
    async ({ keys }, t) => {
      const spellings = ['race.x@bücher.com', '"race.x"@xn--bcher-kva.com', 'RACE.X@bu\u0308cher.com', '"race\\.x"@BÜCHER.com']
      const attempts = Array.from({ length: 12 }, (_, i) => makeAccount(Date.now(), { email: spellings[i % spellings.length]! }))
      const outcomes = await Promise.allSettled(attempts.map((account) => keys.createAccount(account)))
      t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, 'one account created')
      t.strictSame(
        outcomes.filter((o) => o.status === 'rejected').map((o) => (o.reason as { code?: unknown }).code),
        Array(11).fill('ERR_UV_DUPLICATE_ACCOUNT'),
        'every other create rejected with ERR_UV_DUPLICATE_ACCOUNT (never a store error)'
      )
      t.equal((await keys.listAccounts()).length, 1, 'one account holds the mailbox')
    }
  )

  const twin = flags.twin
  t.test(
    'account: concurrent creates of one mailbox through two instances of the store (two processes): one wins, the others are duplicates',
    { skip: twin === undefined && 'this store lives in one process' },
    async (t) => {
      const [first, second] = await twin!()
      t.teardown(() => Promise.all([first.close(), second.close()]))
      for (const round of [0, 1, 2]) {
        const spellings = [`twin${round}@example.org`, `"twin${round}"@Example.org`, `TWIN${round}@example.ORG`]
        const attempts = Array.from({ length: 12 }, (_, i) => {
          const account = makeAccount(Date.now(), { email: spellings[i % spellings.length]! })
          return (i % 2 === 0 ? first : second).keys.createAccount(account)
        })
        const outcomes = await Promise.allSettled(attempts)
        t.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1, `round ${round}: one account created`)
        t.strictSame(
          outcomes.filter((o) => o.status === 'rejected').map((o) => (o.reason as { code?: unknown }).code),
          Array(11).fill('ERR_UV_DUPLICATE_ACCOUNT'),
          `round ${round}: every other create rejected with ERR_UV_DUPLICATE_ACCOUNT`
        )
        const holders = (await first.keys.listAccounts()).filter((a) => a.email !== null && spellings.includes(a.email))
        t.equal(holders.length, 1, `round ${round}: one account holds the mailbox`)
        t.equal((await second.keys.getAccountByEmail(spellings[0]!))?.id, holders[0]?.id, `round ${round}: both instances find it`)
      }
    }
  )

  withStores('key: create for an account, then get by id and by hash; list and listByAccount', async ({ keys }, t) => {
    const account = makeAccount()
    const other = makeAccount()
    await keys.createAccount(account)
    await keys.createAccount(other)
    const base = Date.UTC(2030, 0, 1)
    const prod = makeRecord(account.id, base + 3000, { label: 'prod' })
    const staging = makeRecord(account.id, base + 1000, { label: 'staging' })
    const theirs = makeRecord(other.id, base + 2000)
    for (const r of [prod, staging, theirs]) await keys.create(r)
    t.same(await keys.getById(prod.id), prod)
    t.same(await keys.getByHash(prod.hash), prod)
    t.equal(await keys.getById(`key_${randomBytes(6).toString('hex')}`), undefined, 'unknown id')
    t.equal(await keys.getByHash(sha256('nope')), undefined, 'unknown hash')
    t.same(
      (await keys.list()).map((r) => r.id),
      [staging.id, theirs.id, prod.id],
      'all keys, oldest first'
    )
    t.same(await keys.listByAccount(account.id), [staging, prod], "one account's keys, oldest first")
    t.same(await keys.listByAccount(randomAccountId()), [], 'unknown account: none')
    await t.rejects(keys.create(makeRecord(randomAccountId())), { code: 'ERR_UV_UNKNOWN_ACCOUNT' }, 'a key needs its account')
  })

  withStores('key: update changes label, revocation and expiry only', async ({ keys }, t) => {
    const account = makeAccount()
    await keys.createAccount(account)
    const record = makeRecord(account.id)
    await keys.create(record)
    const expiresAt = new Date(Date.UTC(2030, 5, 1)).toISOString()
    t.same(await keys.update(record.id, { expiresAt }), { ...record, expiresAt })
    t.same(await keys.getByHash(record.hash), { ...record, expiresAt }, 'visible through the hash too')
    const revokedAt = new Date(Date.UTC(2030, 6, 1)).toISOString()
    t.same(await keys.update(record.id, { revokedAt, label: 'old' }), { ...record, expiresAt, revokedAt, label: 'old' })
    t.same(await keys.update(record.id, { revokedAt: null, expiresAt: null }), { ...record, label: 'old' }, 'null clears')
    const sneaky = await keys.update(record.id, { hash: '0'.repeat(64), accountId: 'acct_other' } as never)
    t.equal(sneaky?.hash, record.hash, 'update never changes the hash')
    t.equal(sneaky?.accountId, account.id, 'nor the account')
    t.equal(await keys.update(`key_${randomBytes(6).toString('hex')}`, { label: 'x' }), undefined, 'unknown id')
    t.equal((await keys.list()).length, 1, 'update adds no record')
  })

  withStores('key: updateKey merges with the record as stored: a revocation stays, the earlier end wins', async ({ keys }, t) => {
    const account = makeAccount()
    await keys.createAccount(account)
    const record = makeRecord(account.id, Date.now(), { label: 'kept' })
    await keys.create(record)
    const end = new Date(Date.UTC(2030, 5, 1)).toISOString()
    const later = new Date(Date.UTC(2030, 6, 1)).toISOString()
    const earlier = new Date(Date.UTC(2030, 4, 1)).toISOString()
    t.same(await keys.updateKey(record.id, { expiresAt: end }), { ...record, expiresAt: end }, 'an end is set')
    t.same(await keys.updateKey(record.id, { expiresAt: later }), { ...record, expiresAt: end }, 'a later end does not move it')
    t.same(
      await keys.updateKey(record.id, { restoreEnd: { from: later, to: null } }),
      { ...record, expiresAt: end },
      'nor undoes an end it did not set'
    )
    t.same(await keys.updateKey(record.id, { restoreEnd: { from: end, to: null } }), record, 'its own end is undone')
    t.same(await keys.updateKey(record.id, { expiresAt: end }), { ...record, expiresAt: end })
    const revokedAt = new Date(Date.UTC(2030, 5, 2)).toISOString()
    t.same(
      await keys.updateKey(record.id, { revokedAt, expiresAt: earlier }),
      { ...record, revokedAt, expiresAt: earlier },
      'revoked, earlier end'
    )
    t.same(
      await keys.updateKey(record.id, { revokedAt: later, restoreEnd: { from: earlier, to: null } }),
      { ...record, revokedAt, expiresAt: null },
      'a revocation keeps its first time; restoring an end never un-revokes'
    )
    t.same(await keys.getByHash(record.hash), { ...record, revokedAt, expiresAt: null }, 'visible through the hash too')
    t.equal(await keys.updateKey(`key_${randomBytes(6).toString('hex')}`, { revokedAt }), undefined, 'unknown id')
    t.equal((await keys.list()).length, 1, 'updateKey adds no record')
  })

  withStores('key: concurrent updateKey and update calls of one key through one store lose no revocation', async ({ keys }, t) => {
    const account = makeAccount()
    await keys.createAccount(account)
    for (let round = 0; round < 5; round++) {
      const record = makeRecord(account.id)
      await keys.create(record)
      const revokedAt = new Date(Date.UTC(2030, 5, 2)).toISOString()
      const ends = Array.from({ length: 10 }, (_, i) => new Date(Date.UTC(2030, 6, 1 + i)).toISOString())
      await Promise.all([
        ...ends.slice(0, 5).map((expiresAt) => keys.updateKey(record.id, { expiresAt })),
        keys.updateKey(record.id, { revokedAt }),
        ...ends.slice(5).map((expiresAt) => keys.updateKey(record.id, { expiresAt })),
        keys.update(record.id, { label: 'renamed' })
      ])
      t.same(
        await keys.getById(record.id),
        { ...record, label: 'renamed', revokedAt, expiresAt: ends[0] },
        `round ${round}: revoked, with the earliest end and the new label`
      )
    }
  })

  withStores('key: a duplicate id or hash, or a malformed record, is rejected and changes nothing', async ({ keys }, t) => {
    const account = makeAccount()
    await keys.createAccount(account)
    const record = makeRecord(account.id)
    await keys.create(record)
    await t.rejects(keys.create({ ...makeRecord(account.id), id: record.id }), 'same id')
    await t.rejects(keys.create({ ...makeRecord(account.id), hash: record.hash }), 'same hash')
    await t.rejects(keys.create({ ...makeRecord(account.id), hash: 'not-a-digest' }), TypeError)
    await t.rejects(keys.create({ ...makeRecord(account.id), id: '' }), TypeError)
    t.same(await keys.getById(record.id), record)
    t.same(await keys.getByHash(record.hash), record)
    t.same(await keys.list(), [record])
  })

  withStores(
    'key: getKeyWithAccount reads the key and its account as they are now, every time',
    async ({ keys }, t) => {
      const read = keys.getKeyWithAccount!.bind(keys)
      const account = makeAccount()
      await keys.createAccount(account)
      const record = makeRecord(account.id)
      await keys.create(record)
      t.same(await read(sha256('nope')), { record: undefined, account: undefined }, 'unknown digest')
      t.same(await read(record.hash), { record, account }, 'first read')
      t.same(await read(record.hash), { record, account }, 'second read')
      const disabledAt = new Date(Date.UTC(2030, 0, 1)).toISOString()
      await keys.updateAccount(account.id, { plan: 'pro', disabledAt })
      const revokedAt = new Date(Date.UTC(2030, 0, 2)).toISOString()
      await keys.update(record.id, { revokedAt })
      t.same(
        await read(record.hash),
        { record: { ...record, revokedAt }, account: { ...account, plan: 'pro', disabledAt } },
        'changes show at once'
      )
    },
    !flags.keyWithAccount && 'this store has no getKeyWithAccount (the middleware reads the key, then its account)'
  )

  withStores('quota: consume within and exactly at the limit, then refuse', async ({ quota }, t) => {
    const id = randomAccountId()
    t.match(await quota.consume(id, PERIOD, 2, 5, LATER, undefined, DAY), { granted: true, used: 2 })
    t.match(await quota.consume(id, PERIOD, 3, 5, LATER, undefined, DAY), { granted: true, used: 5 }, 'reaching the limit is allowed')
    t.match(await quota.consume(id, PERIOD, 1, 5, LATER, undefined, DAY), { granted: false, used: 5 }, 'one past it is not')
    t.equal(await quota.get(id, PERIOD), 5)
    t.same(await quota.daily(id, '2031-05-01', '2031-05-31'), [{ day: DAY, units: 5 }], 'the refused consume wrote no history')
  })

  withStores('quota: all-or-nothing (3 with 2 left is refused, usage unchanged)', async ({ quota }, t) => {
    const id = randomAccountId()
    t.match(await quota.consume(id, PERIOD, 3, 5, LATER), { granted: true, used: 3 })
    t.match(await quota.consume(id, PERIOD, 3, 5, LATER), { granted: false, used: 3 })
    t.equal(await quota.get(id, PERIOD), 3)
    t.match(await quota.consume(id, PERIOD, 2, 5, LATER), { granted: true, used: 5 })
  })

  withStores('quota: a first consume larger than the limit writes nothing', async ({ quota }, t) => {
    const id = randomAccountId()
    t.match(await quota.consume(id, PERIOD, 4, 3, LATER, undefined, DAY), { granted: false, used: 0 })
    t.match(await quota.consume(id, PERIOD, 1, 0, LATER, undefined, DAY), { granted: false, used: 0 }, 'limit 0')
    t.equal(await quota.get(id, PERIOD), 0)
    t.same(await quota.daily(id, DAY, DAY), [], 'no history either')
    t.match(await quota.consume(id, PERIOD, 3, 3, LATER), { granted: true, used: 3 })
  })

  withStores('quota: history by day and month, in the same step as the consume', async ({ quota }, t) => {
    const id = randomAccountId()
    const other = randomAccountId()
    await quota.consume(id, '2031-05', 2, 100, LATER, undefined, '2031-05-01')
    await quota.consume(id, '2031-05', 3, 100, LATER, undefined, '2031-05-01')
    await quota.consume(id, '2031-05', 4, 100, LATER, undefined, '2031-05-31')
    await quota.consume(id, '2031-06', 5, 100, LATER + 31 * 86_400_000, undefined, '2031-06-01')
    await quota.consume(other, '2031-05', 7, 100, LATER, undefined, '2031-05-01')
    t.same(
      await quota.daily(id, '2031-04-20', '2031-06-10'),
      [
        { day: '2031-05-01', units: 5 },
        { day: '2031-05-31', units: 4 },
        { day: '2031-06-01', units: 5 }
      ],
      'days with units, oldest first, across a month boundary'
    )
    t.same(await quota.daily(id, '2031-05-02', '2031-05-30'), [], 'a range without units')
    t.same(
      await quota.monthly(id, '2030-12', '2031-12'),
      [
        { period: '2031-05', units: 9 },
        { period: '2031-06', units: 5 }
      ],
      'month totals'
    )
    t.same(await quota.monthly(other, '2031-05', '2031-05'), [{ period: '2031-05', units: 7 }], 'accounts are separate')
    await t.rejects(quota.consume(id, '2031-05', 1, 100, LATER, undefined, '2031-06-01'), RangeError, 'a day outside the period')
    await t.rejects(quota.daily(id, '2031-05-01', '2035-01-01'), RangeError, 'a runaway range')
    t.equal(await quota.get(id, '2031-05'), 9, 'the refused call changed nothing')
  })

  withStores('quota: period rollover: a new month starts at 0, the old one stays readable', async ({ quota }, t) => {
    const id = randomAccountId()
    t.match(await quota.consume(id, '2031-05', 5, 5, LATER, undefined, '2031-05-31'), { granted: true, used: 5 })
    t.match(await quota.consume(id, '2031-05', 1, 5, LATER, undefined, '2031-05-31'), { granted: false, used: 5 }, 'May is exhausted')
    t.match(
      await quota.consume(id, '2031-06', 5, 5, LATER + 31 * 86_400_000, undefined, '2031-06-01'),
      { granted: true, used: 5 },
      'June starts at 0'
    )
    t.equal(await quota.get(id, '2031-05'), 5)
    t.equal(await quota.get(id, '2031-07'), 0, 'a month with no usage')
    t.same(await quota.monthly(id, '2031-05', '2031-07'), [
      { period: '2031-05', units: 5 },
      { period: '2031-06', units: 5 }
    ])
  })

  withStores(
    'quota: usage past its expiresAt is gone (after purge, where the store has one) and counting restarts',
    async ({ quota }, t) => {
      const id = randomAccountId()
      const past = Date.now() - 60_000
      await quota.consume(id, '2020-01', 3, 10, past, undefined, '2020-01-15')
      const kept = randomAccountId()
      await quota.consume(kept, '2031-05', 2, 10, LATER, undefined, DAY)
      await quota.purge?.(Date.now())
      t.equal(await quota.get(id, '2020-01'), 0, 'month total expired')
      t.same(await quota.daily(id, '2020-01-01', '2020-01-31'), [], 'days expired')
      t.same(await quota.monthly(id, '2020-01', '2020-01'), [])
      t.equal(await quota.get(kept, '2031-05'), 2, 'unexpired usage is kept')
      t.same(await quota.daily(kept, DAY, DAY), [{ day: DAY, units: 2 }])
      t.match(
        await quota.consume(id, '2020-01', 10, 10, Date.now() + 60_000, undefined, '2020-01-15'),
        { granted: true, used: 10 },
        'starts over'
      )
    }
  )

  withStores('quota: refund gives units back (month and day) and never goes below zero', async ({ quota }, t) => {
    const id = randomAccountId()
    await quota.consume(id, PERIOD, 3, 10, LATER, undefined, DAY)
    await quota.refund(id, PERIOD, 2, DAY)
    t.equal(await quota.get(id, PERIOD), 1)
    t.same(await quota.daily(id, DAY, DAY), [{ day: DAY, units: 1 }], 'the day too')
    await quota.refund(id, PERIOD, 5, DAY)
    t.equal(await quota.get(id, PERIOD), 0, 'clamped at zero')
    t.same(await quota.daily(id, DAY, DAY), [], 'a day at zero is not listed')
    t.match(await quota.consume(id, PERIOD, 10, 10, LATER), { granted: true, used: 10 }, 'the full limit is available again')
    const other = randomAccountId()
    await quota.refund(other, PERIOD, 3, DAY)
    t.equal(await quota.get(other, PERIOD), 0, 'refund of unknown usage stays 0')
    t.match(await quota.consume(other, PERIOD, 1, 1, LATER), { granted: true, used: 1 }, 'and does not create credit')
  })

  withStores('quota: bad arguments reject', async ({ quota }, t) => {
    const id = randomAccountId()
    await t.rejects(quota.consume(id, PERIOD, -1, 10, LATER))
    await t.rejects(quota.consume(id, PERIOD, 1.5, 10, LATER))
    await t.rejects(quota.consume('', PERIOD, 1, 10, LATER))
    await t.rejects(quota.consume(id, PERIOD, 1, 10, LATER, undefined, 'tuesday'))
    await t.rejects(quota.refund(id, PERIOD, -2))
    t.equal(await quota.get(id, PERIOD), 0)
  })

  withStores(
    'quota: cancel undoes a named consume once (month and day), and only one that was applied',
    async ({ quota }, t) => {
      const cancel = quota.cancel!.bind(quota)
      const id = randomAccountId()
      t.equal((await quota.consume(id, PERIOD, 3, 10, LATER, 'op-applied', DAY)).granted, true)
      t.equal((await quota.consume(id, PERIOD, 2, 10, LATER, undefined, DAY)).granted, true)
      t.equal(await cancel('op-applied', id, PERIOD, 3, DAY), true, 'units given back')
      t.equal(await quota.get(id, PERIOD), 2)
      t.same(await quota.daily(id, DAY, DAY), [{ day: DAY, units: 2 }], 'from the day too')
      t.equal(await cancel('op-applied', id, PERIOD, 3, DAY), false, 'a second cancel does nothing')
      t.equal(await cancel('op-never-sent', id, PERIOD, 3, DAY), false, 'an operation that never arrived does nothing')
      t.equal((await quota.consume(id, PERIOD, 9, 10, LATER, 'op-refused', DAY)).granted, false)
      t.equal(await cancel('op-refused', id, PERIOD, 9, DAY), false, 'a refused consume has nothing to undo')
      t.equal(await quota.get(id, PERIOD), 2)
      // A hung server may run a consume after the caller gave up on it and cancelled it: it must not land.
      t.equal(await cancel('op-late', id, PERIOD, 4, DAY), false, 'cancelled before it arrived')
      await t.rejects(quota.consume(id, PERIOD, 4, 10, LATER, 'op-late', DAY), 'the late consume is refused')
      t.equal(await quota.get(id, PERIOD), 2, 'and changed nothing')
      t.equal(await cancel('op-late', id, PERIOD, 4, DAY), false, 'cancelling again still does nothing')
    },
    !flags.cancel && 'this store has no cancel: a rejected consume was not applied'
  )

  withStores(
    'keysVersion: moves on every account and key write and comes back with each consume',
    async ({ keys, quota }, t) => {
      const keysVersion = quota.keysVersion!.bind(quota)
      const start = await keysVersion()
      const account = makeAccount()
      await keys.createAccount(account)
      const afterAccount = await keysVersion()
      t.ok(afterAccount > start, 'createAccount moves it')
      const record = makeRecord(account.id)
      await keys.create(record)
      const created = await keysVersion()
      t.ok(created > afterAccount, 'create moves it')
      t.equal((await quota.consume(account.id, PERIOD, 1, 5, LATER)).keysVersion, created, 'a granted consume returns it')
      await keys.updateAccount(account.id, { plan: 'pro' })
      const replanned = await keysVersion()
      t.ok(replanned > created, 'updateAccount moves it')
      await keys.update(record.id, { revokedAt: new Date().toISOString() })
      const updated = await keysVersion()
      t.ok(updated > replanned, 'update moves it')
      t.equal((await quota.consume(account.id, PERIOD, 9, 5, LATER)).keysVersion, updated, 'a refused consume returns it too')
    },
    !flags.keysVersion && 'this store keeps no key-records version (the middleware reads keys on every request)'
  )

  withStores(`quota: ${concurrency} parallel consumes grant exactly min(N, L), and the day holds the same`, async ({ quota }, t) => {
    for (const limit of [Math.floor(concurrency / 3), concurrency + 5]) {
      const id = randomAccountId()
      const results = await Promise.all(
        Array.from({ length: concurrency }, () => quota.consume(id, PERIOD, 1, limit, LATER, undefined, DAY))
      )
      const granted = results.filter((r) => r.granted).length
      t.equal(granted, Math.min(concurrency, limit), `limit ${limit}`)
      t.equal(await quota.get(id, PERIOD), granted, 'get() equals the granted sum')
      t.same(await quota.daily(id, DAY, DAY), [{ day: DAY, units: granted }], 'the day equals it too')
      t.ok(
        results.every((r) => r.used <= limit),
        'no answer reports usage past the limit'
      )
      t.same(new Set(results.filter((r) => r.granted).map((r) => r.used)).size, granted, 'each grant saw a distinct total')
    }
    const id = randomAccountId()
    const mixed = await Promise.all(Array.from({ length: 20 }, (_, i) => quota.consume(id, PERIOD, 1 + (i % 3), 17, LATER)))
    const total = mixed.reduce((s, r, i) => s + (r.granted ? 1 + (i % 3) : 0), 0)
    t.ok(total <= 17, 'mixed amounts never pass the limit')
    t.equal(await quota.get(id, PERIOD), total, 'get() equals the granted sum (mixed amounts)')
  })

  const legacy = flags.legacy
  t.test(
    'upgrade: a store written by release 0.1.0 opens with each key its own account, usage carried over, idempotently',
    { skip: legacy === undefined && 'this store keeps nothing between opens, so there is nothing to upgrade' },
    async (t) => {
      const written = await legacy!()
      const snapshot = async (stores: Stores) => {
        const accounts = await stores.keys.listAccounts()
        const keys = await stores.keys.list()
        const usage: Record<string, number> = {}
        for (const a of accounts)
          for (const m of await stores.quota.monthly(a.id, '2026-01', '2027-12')) usage[`${a.id} ${m.period}`] = m.units
        return { accounts, keys, usage }
      }
      // Two processes (or instances) starting together both run the upgrade.
      const [first, twin] = await Promise.all([written.open(), written.open()])
      const before = await snapshot(first)
      t.same(await snapshot(twin), before, 'two upgrades at once agree')
      await twin.close()
      t.equal(before.accounts.length, written.keys.length, 'one account per key')
      t.equal(before.keys.length, written.keys.length, 'every key kept')
      for (const old of written.keys) {
        const record = await first.keys.getByHash(sha256(old.key))
        t.equal(record?.id, old.id, `${old.id} is found by its key`)
        const account = record === undefined ? undefined : await first.keys.getAccount(record.accountId)
        t.equal(account?.plan, old.plan, `${old.id}: its account has its plan`)
        t.equal(record?.label, old.label, `${old.id}: label kept`)
        t.equal(record?.revokedAt !== null, old.revoked, `${old.id}: revocation kept`)
        t.same(await first.keys.listByAccount(record!.accountId), [record], `${old.id}: alone in its account`)
        for (const [period, units] of Object.entries(old.usage)) {
          t.equal(await first.quota.get(record!.accountId, period), units, `${old.id}: ${units} units of ${period} carried over`)
        }
        const months = await first.quota.monthly(record!.accountId, '2026-01', '2027-12')
        t.equal(
          months.reduce((sum, m) => sum + m.units, 0),
          Object.values(old.usage).reduce((sum, u) => sum + u, 0),
          `${old.id}: no usage invented`
        )
      }
      await first.close()
      const second = await written.open()
      t.same(await snapshot(second), before, 'opening again changes nothing (idempotent)')
      const full = written.keys.find((k) => Object.keys(k.usage).length > 0 && !k.revoked)!
      const record = (await second.keys.getByHash(sha256(full.key)))!
      const [period, units] = Object.entries(full.usage)[0]!
      t.match(
        await second.quota.consume(record.accountId, period, 1, units + 1, LATER + 3650 * 86_400_000, undefined, `${period}-02`),
        { granted: true, used: units + 1 },
        'consumes continue from the carried-over total'
      )
      await second.close()
    }
  )

  withStores('stores: close() can be called twice', async (stores, t) => {
    await stores.close()
    await stores.close()
    t.pass('closed twice')
  })
}
