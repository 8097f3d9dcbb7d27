// `accounts …`, `keys …` and `usage …`: the account/key model for people and scripts, independent of the argument parser.
import ms from 'ms'
import {
  addKey,
  checkEmailSyntax,
  createAccount,
  issueKey,
  isKeyActive,
  periodOf,
  rotateKey,
  UserVerificationError,
  type Account,
  type IssuedKey,
  type KeyRecord,
  type DailyUsage,
  type MonthlyUsage,
  type Stores
} from '../lib/index.js'
import { dailyHistory, defaultRange, monthlyHistory, usageReport } from './usage-report.js'

/** A user mistake (unknown id, bad plan, bad date): the CLI exits 1 with the message. */
export class CommandError extends Error {}

/** What a command produced: `json` for `--json` (one line), `text` lines for people. */
export interface CommandOutput {
  json: unknown
  text: string[]
}

/** Settings every command gets. */
export interface CommandContext {
  stores: Stores
  plans: Readonly<Record<string, number>>
  /** Clock, ms since the epoch. */
  now: () => number
}

function planName(ctx: CommandContext, plan: string | undefined): string {
  const names = Object.keys(ctx.plans).join(', ')
  if (plan === undefined || plan === '') throw new CommandError(`--plan is required: one of ${names}`)
  if (!(plan in ctx.plans)) throw new CommandError(`unknown plan "${plan}": use one of ${names}`)
  return plan
}

async function accountOf(ctx: CommandContext, id: string | undefined): Promise<Account> {
  if (id === undefined || id === '') throw new CommandError('an account id is required (see `accounts list`)')
  const account = await ctx.stores.keys.getAccount(id)
  if (account === undefined) throw new CommandError(`no account with id "${id}"`)
  return account
}

async function keyOf(ctx: CommandContext, id: string | undefined): Promise<KeyRecord> {
  if (id === undefined || id === '') throw new CommandError('a key id is required (see `keys list`)')
  const record = await ctx.stores.keys.getById(id)
  if (record === undefined) throw new CommandError(`no key with id "${id}"`)
  return record
}

/** A key as printed: never its hash; with its state at `now`. */
export function publicKey(record: KeyRecord, account: Account | undefined, now: number) {
  const { hash: _hash, ...rest } = record
  const status =
    record.revokedAt !== null ? 'revoked' : isKeyActive(record, account, now) ? 'active' : account?.disabledAt ? 'disabled' : 'expired'
  return { ...rest, status }
}

function accountStatus(account: Account): string {
  return account.disabledAt === null ? 'active' : 'disabled'
}

function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)))
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  '))
}

/** `accounts create --name NAME [--email ADDRESS] --plan PLAN`. */
export async function accountsCreate(ctx: CommandContext, o: { name?: string; email?: string; plan?: string }): Promise<CommandOutput> {
  const plan = planName(ctx, o.plan)
  if (o.name === undefined || o.name.trim() === '') throw new CommandError('--name is required')
  const email = o.email?.trim() || null
  // The syntax check the admin view and sign-up apply: a loose address would be a second account for one mailbox.
  if (email !== null && checkEmailSyntax(email) !== 'Pass') throw new CommandError('--email is not a valid email address')
  try {
    const account = await createAccount(ctx.stores.keys, { name: o.name.trim(), email, plan }, ctx.now())
    return {
      json: account,
      text: [`Created account ${account.id} on the ${plan} plan.`, `Add a key: user-verification keys create --account ${account.id}`]
    }
  } catch (error) {
    if (error instanceof UserVerificationError && error.code === 'ERR_UV_DUPLICATE_ACCOUNT')
      throw new CommandError('an account with this email already exists')
    throw error
  }
}

/** `accounts list`: every account with its plan, state and usage this month. */
export async function accountsList(ctx: CommandContext): Promise<CommandOutput> {
  const period = periodOf(ctx.now())
  const accounts = await ctx.stores.keys.listAccounts()
  const rows = await Promise.all(
    accounts.map(async (a) => ({
      ...a,
      status: accountStatus(a),
      ...usageFields(usageReport(a, period, await ctx.stores.quota.get(a.id, period.id), ctx.plans))
    }))
  )
  if (rows.length === 0) return { json: [], text: ['No accounts yet: `user-verification accounts create --name NAME --plan free`.'] }
  return {
    json: rows,
    text: table([
      ['id', 'plan', 'status', `used ${period.id}`, 'created', 'name'],
      ...rows.map((r) => [r.id, r.plan, r.status, `${r.used}/${r.limit}`, r.createdAt, r.name])
    ])
  }
}

function usageFields(report: { used: number; limit: number; remaining: number; period: string }) {
  return { period: report.period, used: report.used, limit: report.limit, remaining: report.remaining }
}

/** `accounts plan <account> <plan>`: applies to the account's next request. */
export async function accountsPlan(ctx: CommandContext, id: string | undefined, plan: string | undefined): Promise<CommandOutput> {
  const account = await accountOf(ctx, id)
  const updated = (await ctx.stores.keys.updateAccount(account.id, { plan: planName(ctx, plan) }))!
  return { json: { id: updated.id, plan: updated.plan }, text: [`${updated.id} is now on the ${updated.plan} plan.`] }
}

/** `accounts disable|enable <account>`: every key of a disabled account answers 401. */
export async function accountsDisable(ctx: CommandContext, id: string | undefined, disable: boolean): Promise<CommandOutput> {
  const account = await accountOf(ctx, id)
  const disabledAt = disable ? (account.disabledAt ?? new Date(ctx.now()).toISOString()) : null
  const updated = (await ctx.stores.keys.updateAccount(account.id, { disabledAt }))!
  return {
    json: { id: updated.id, disabledAt: updated.disabledAt },
    text: [disable ? `Disabled ${updated.id}: its keys answer 401.` : `Enabled ${updated.id}.`]
  }
}

/** `keys create --plan PLAN` (a new account with its first key) or `keys create --account ID` (another key). */
export async function keysCreate(ctx: CommandContext, o: { plan?: string; account?: string; label?: string }): Promise<CommandOutput> {
  if (o.plan !== undefined && o.account !== undefined)
    throw new CommandError('use --plan (a new account) or --account (an existing one), not both')
  const label = o.label ?? null
  let issued: IssuedKey
  if (o.account !== undefined) {
    const account = await accountOf(ctx, o.account)
    issued = await addKey(ctx.stores.keys, account.id, label, ctx.now())
  } else {
    issued = await issueKey(ctx.stores.keys, planName(ctx, o.plan), label, ctx.now())
  }
  return {
    json: issued,
    text: [
      `Created ${issued.id} for account ${issued.account} (${issued.plan} plan)${issued.label ? ` (${issued.label})` : ''}. The key, shown only this once:`,
      issued.key
    ]
  }
}

/** `keys list [--account ID]`. */
export async function keysList(ctx: CommandContext, o: { account?: string }): Promise<CommandOutput> {
  const records =
    o.account === undefined ? await ctx.stores.keys.list() : await ctx.stores.keys.listByAccount((await accountOf(ctx, o.account)).id)
  const accounts = new Map<string, Account | undefined>()
  for (const r of records) if (!accounts.has(r.accountId)) accounts.set(r.accountId, await ctx.stores.keys.getAccount(r.accountId))
  const now = ctx.now()
  const keys = records.map((r) => publicKey(r, accounts.get(r.accountId), now))
  if (keys.length === 0) return { json: [], text: ['No keys yet: `user-verification keys create --plan free`.'] }
  return {
    json: keys,
    text: table([
      ['id', 'account', 'status', 'created', 'expires', 'label'],
      ...keys.map((k) => [k.id, k.accountId, k.status, k.createdAt, k.expiresAt ?? '-', k.label ?? ''])
    ])
  }
}

/** Parses a grace period: `0`, a number of ms, or an `ms` duration such as `30m`, `24h`, `7d`. */
export function parseDuration(text: string | undefined): number {
  if (text === undefined || text === '') return 0
  const value = /^\d+$/.test(text) ? Number(text) : ms(text as ms.StringValue)
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
    throw new CommandError(`--grace must be a duration such as 0, 30m, 24h or 7d, got "${text}"`)
  }
  return value
}

/** `keys rotate <key> [--grace DURATION]`: a new key for the same account; the old one answers 401 after the grace. */
export async function keysRotate(ctx: CommandContext, id: string | undefined, o: { grace?: string }): Promise<CommandOutput> {
  const grace = parseDuration(o.grace)
  const old = await keyOf(ctx, id)
  try {
    const { previous, ...issued } = await rotateKey(ctx.stores.keys, old.id, grace, ctx.now())
    return {
      json: { ...issued, previous: { id: previous.id, expiresAt: previous.expiresAt } },
      text: [
        `Created ${issued.id} for account ${issued.account}; ${previous.id} stops working at ${previous.expiresAt}. The new key, shown only this once:`,
        issued.key
      ]
    }
  } catch (error) {
    if (error instanceof UserVerificationError && error.code === 'ERR_UV_KEY_INACTIVE')
      throw new CommandError(`key ${old.id} is revoked or expired; create a new key instead`)
    throw error
  }
}

/** `keys revoke <key>`: answers 401 from the next request on. */
export async function keysRevoke(ctx: CommandContext, id: string | undefined): Promise<CommandOutput> {
  const record = await keyOf(ctx, id)
  const updated =
    record.revokedAt !== null
      ? record
      : ((await ctx.stores.keys.updateKey(record.id, { revokedAt: new Date(ctx.now()).toISOString() })) ?? record)
  return { json: { id: record.id, revokedAt: updated.revokedAt }, text: [`Revoked ${record.id}.`] }
}

/** `keys plan <key> <plan>` (release 0.1.0's command): changes the plan of the key's account. */
export async function keysPlan(ctx: CommandContext, id: string | undefined, plan: string | undefined): Promise<CommandOutput> {
  const record = await keyOf(ctx, id)
  const out = await accountsPlan(ctx, record.accountId, plan)
  return { json: { id: record.id, account: record.accountId, plan: (out.json as { plan: string }).plan }, text: out.text }
}

const DAY = /^\d{4}-\d{2}-\d{2}$/
const MONTH = /^\d{4}-\d{2}$/

/**
 * `usage <account|key> [--daily] [--from] [--to]`: this month against the plan, and the history
 * (months by default, the last 31 days with `--daily`; `--from`/`--to` are days or months to match).
 */
export async function usage(
  ctx: CommandContext,
  id: string | undefined,
  o: { daily?: boolean; from?: string; to?: string }
): Promise<CommandOutput> {
  if (id === undefined || id === '') throw new CommandError('an account id (or key id) is required (see `accounts list`)')
  let key: string | undefined
  let account: Account
  if (id.startsWith('key_')) {
    const record = await keyOf(ctx, id)
    key = record.id
    account = await accountOf(ctx, record.accountId)
  } else account = await accountOf(ctx, id)
  const now = ctx.now()
  const daily = o.daily ?? false
  const shape = daily ? DAY : MONTH
  const range = defaultRange(daily, now)
  for (const [name, value] of [
    ['from', o.from],
    ['to', o.to]
  ] as const) {
    if (value === undefined) continue
    if (!shape.test(value))
      throw new CommandError(`--${name} must be ${daily ? 'a day YYYY-MM-DD (with --daily)' : 'a month YYYY-MM'}, got "${value}"`)
    range[name] = value
  }
  if (range.from > range.to) throw new CommandError(`--from (${range.from}) is after --to (${range.to})`)
  const period = periodOf(now)
  const report = usageReport(account, period, await ctx.stores.quota.get(account.id, period.id), ctx.plans)
  let history: { days: DailyUsage[] } | { months: MonthlyUsage[] }
  try {
    history = daily
      ? { days: await dailyHistory(ctx.stores.quota, account.id, range) }
      : { months: await monthlyHistory(ctx.stores.quota, account.id, range) }
  } catch (error) {
    if (error instanceof RangeError)
      throw new CommandError(`the range ${range.from}..${range.to} is too long (at most 800 days or 120 months)`)
    throw error
  }
  const rows =
    'days' in history ? history.days.map((d) => [d.day, String(d.units)]) : history.months.map((m) => [m.period, String(m.units)])
  return {
    json: { ...(key === undefined ? {} : { id: key }), ...report, from: range.from, to: range.to, ...history },
    text: [
      `${report.account} (${report.plan}): ${report.used} of ${report.limit} units used in ${report.period}; ${report.remaining} left; resets ${report.reset}.`,
      rows.length === 0
        ? `No units from ${range.from} to ${range.to}.`
        : `Units ${daily ? 'per day' : 'per month'}, ${range.from} to ${range.to}:`,
      ...(rows.length === 0 ? [] : table(rows))
    ]
  }
}
