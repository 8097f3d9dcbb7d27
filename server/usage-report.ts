// A key's usage in the current period, as the dashboard and `usage` show it.
import type { KeyRecord, Period } from '../lib/index.js'

/** What `GET /dashboard/api/usage` and `usage --json` answer for a key. */
export interface UsageReport {
  id: string
  plan: string
  /** Calendar month (UTC), `YYYY-MM`. */
  period: string
  used: number
  limit: number
  remaining: number
  /** ISO 8601 start of the next period, when usage goes back to 0. */
  reset: string
}

/** The report for `key`, which has used `used` units of `period`; unknown plans have a limit of 0. */
export function usageReport(key: KeyRecord, period: Period, used: number, plans: Readonly<Record<string, number>>): UsageReport {
  const limit = plans[key.plan] ?? 0
  return {
    id: key.id,
    plan: key.plan,
    period: period.id,
    used,
    limit,
    remaining: Math.max(0, limit - used),
    reset: new Date(period.end).toISOString()
  }
}
