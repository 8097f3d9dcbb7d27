// Undoes consumes whose outcome is unknown (the call rejected, but the store may have applied it).
import { throttledWarning, toError } from '../errors.js'
import type { Logger, QuotaStore } from '../types.js'

interface Pending {
  operation: string
  accountId: string
  period: string
  amount: number
  day: string | undefined
  since: number
}

/** Options of {@link QuotaCompensation}. */
export interface QuotaCompensationOptions {
  logger: Logger
  /** How often pending cancels are retried, in ms. Defaults to 1000. */
  interval?: number
  /** How long a cancel is retried before it is given up (and logged), in ms. Defaults to 1 hour. */
  giveUpAfter?: number
  /** The clock for `giveUpAfter`, in ms since the epoch. Defaults to `Date.now`. */
  now?: () => number
}

/**
 * Keeps every consume that rejected and retries `quota.cancel` for it until the store answers,
 * so a unit is never kept without a 200 — even when the store applied the consume and then lost
 * the reply to an outage. Stores without `cancel` (in-process and SQLite, whose rejected calls
 * were not applied) need none of this.
 */
export class QuotaCompensation {
  readonly #pending = new Map<string, Pending>()
  readonly #logger: Logger
  readonly #interval: number
  readonly #giveUpAfter: number
  readonly #now: () => number
  readonly #warnRefunded: (message: string, fields?: Record<string, unknown>) => void
  #timer: NodeJS.Timeout | undefined
  #running: Promise<void> | undefined
  #quota: QuotaStore | undefined

  constructor(options: QuotaCompensationOptions) {
    this.#logger = options.logger
    this.#interval = options.interval ?? 1000
    this.#giveUpAfter = options.giveUpAfter ?? 3600_000
    this.#now = options.now ?? Date.now
    // One line per refund would flood the log when many clients leave at once (an outage, a deploy).
    this.#warnRefunded = throttledWarning(this.#logger, 'WRN_UV_REFUNDED', 60_000, this.#now)
  }

  /** Consumes waiting to be undone. */
  get size(): number {
    return this.#pending.size
  }

  /** Records a consume that rejected; its cancel is tried at once and then every interval. */
  add(quota: QuotaStore, operation: string, accountId: string, period: string, amount: number, day?: string): void {
    if (quota.cancel === undefined) return
    this.#quota = quota
    this.#pending.set(operation, { operation, accountId, period, amount, day, since: this.#now() })
    this.#timer ??= setInterval(() => void this.flush(), this.#interval).unref()
    void this.flush()
  }

  /**
   * Tries every pending cancel once; resolves when each has answered or failed. While a pass runs,
   * resolves with that pass.
   */
  flush(): Promise<void> {
    const quota = this.#quota
    if (this.#running !== undefined) return this.#running
    if (quota?.cancel === undefined) return Promise.resolve()
    this.#running = this.#pass(quota).finally(() => {
      this.#running = undefined
      if (this.#pending.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer)
        this.#timer = undefined
      }
    })
    return this.#running
  }

  async #pass(quota: QuotaStore): Promise<void> {
    for (const item of [...this.#pending.values()]) {
      try {
        const undone = await quota.cancel!(item.operation, item.accountId, item.period, item.amount, item.day)
        this.#pending.delete(item.operation)
        if (undone) this.#warnRefunded(`gave back ${item.amount} units of account ${item.accountId} consumed without an answer`)
      } catch (error) {
        if (this.#now() - item.since < this.#giveUpAfter) continue
        this.#pending.delete(item.operation)
        this.#logger.error(
          `user-verification: ERR_UV_REFUND could not undo a consume of ${item.amount} units of account ${item.accountId}: ${toError(error).message}`,
          { code: 'ERR_UV_REFUND' }
        )
      }
    }
  }

  /** One last try (at most `deadline` ms, so a dead store cannot hold up shutdown), then stops the timer. */
  async close(deadline = 3000): Promise<void> {
    if (this.#timer !== undefined) clearInterval(this.#timer)
    this.#timer = undefined
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      this.flush(),
      new Promise((resolve) => {
        timer = setTimeout(resolve, deadline)
      })
    ])
    clearTimeout(timer)
    if (this.#pending.size > 0) {
      this.#logger.error(
        `user-verification: ERR_UV_REFUND ${this.#pending.size} consumes with lost replies were not undone before shutdown`,
        { code: 'ERR_UV_REFUND' }
      )
    }
  }
}
