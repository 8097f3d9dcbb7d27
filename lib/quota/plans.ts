// Plans and monthly periods: how many units a key may use, and which calendar month (UTC) it is.

/** Units per calendar month (UTC) of each plan, as sold. */
export const defaultPlans: Readonly<Record<string, number>> = Object.freeze({ free: 25, basic: 30000, pro: 65000 })

/**
 * The plans as a lookup that only holds them: a null-prototype, frozen copy, so an account whose
 * plan is named `constructor`, `toString` or `__proto__` finds no limit (an unknown plan: limit
 * 0, 402) rather than a function of Object.prototype (attacker finding F2).
 */
export function planTable(plans: Readonly<Record<string, number>>): Readonly<Record<string, number>> {
  return Object.freeze(Object.assign(Object.create(null) as Record<string, number>, plans))
}

/** A quota period: its id (`YYYY-MM`) and when it ends, in ms since the epoch. */
export interface Period {
  id: string
  /** Start of the next period (exclusive end of this one), ms since the epoch. */
  end: number
}

/** The calendar month (UTC) that contains `time` (ms since the epoch). */
export function periodOf(time: number): Period {
  const date = new Date(time)
  const year = date.getUTCFullYear()
  const month = date.getUTCMonth()
  return { id: `${year}-${String(month + 1).padStart(2, '0')}`, end: Date.UTC(year, month + 1, 1) }
}
