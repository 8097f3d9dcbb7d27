// An account's usage: the current period against its plan, and its history by day or month, as the dashboard and `usage` show them.
import type { Account, DailyUsage, MonthlyUsage, Period, QuotaStore } from '../lib/index.js'

/** What `usage --json` answers for an account (and the dashboard, with the key's id). */
export interface UsageReport {
  account: string
  plan: string
  /** Calendar month (UTC), `YYYY-MM`. */
  period: string
  used: number
  limit: number
  remaining: number
  /** ISO 8601 start of the next period, when usage goes back to 0. */
  reset: string
}

/** The report for `account`, which has used `used` units of `period`; unknown plans have a limit of 0. */
export function usageReport(account: Account, period: Period, used: number, plans: Readonly<Record<string, number>>): UsageReport {
  const limit = plans[account.plan] ?? 0
  return {
    account: account.id,
    plan: account.plan,
    period: period.id,
    used,
    limit,
    remaining: Math.max(0, limit - used),
    reset: new Date(period.end).toISOString()
  }
}

/** A range of history: days (`YYYY-MM-DD`) or months (`YYYY-MM`), inclusive. */
export interface HistoryRange {
  from: string
  to: string
}

/** The default range: the 13 months up to `now`'s (monthly), or the last 31 days up to `now` (daily). */
export function defaultRange(daily: boolean, now: number): HistoryRange {
  const today = new Date(now)
  if (daily) return { from: new Date(now - 30 * 86_400_000).toISOString().slice(0, 10), to: today.toISOString().slice(0, 10) }
  const from = new Date(Date.UTC(today.getUTCFullYear(), today.getUTCMonth() - 12, 1))
  return { from: from.toISOString().slice(0, 7), to: today.toISOString().slice(0, 7) }
}

/** Units per day in `range` (days with units only). */
export async function dailyHistory(quota: QuotaStore, account: string, range: HistoryRange): Promise<DailyUsage[]> {
  return quota.daily(account, range.from, range.to)
}

/** Units per month in `range` (months with units only). */
export async function monthlyHistory(quota: QuotaStore, account: string, range: HistoryRange): Promise<MonthlyUsage[]> {
  return quota.monthly(account, range.from, range.to)
}
