// Store-outage log lines: each distinct line once, then at most once per 10 s, so an outage does not flood the log.
import type { Logger } from '../types.js'

/**
 * Logs each distinct line (message and fields) at most once per 10 s, so a reconnect loop, or a
 * failed store call per request during an outage, logs its cause once per window instead of
 * once per event. Used by the Redis and PostgreSQL connections and by the Keyv key store.
 */
export function throttled(logger: Logger): (level: 'warn' | 'error', message: string, fields?: Record<string, unknown>) => void {
  const last = new Map<string, number>()
  return (level, message, fields) => {
    const line = fields === undefined ? message : `${message} ${JSON.stringify(fields)}`
    const now = Date.now()
    if ((last.get(line) ?? 0) > now - 10_000) return
    if (last.size > 100) last.clear()
    last.set(line, now)
    if (fields === undefined) logger[level](message)
    else logger[level](message, fields)
  }
}
