// JSON-lines logger for the standalone server; callers pass no keys, emails or names.
import type { Logger } from '../lib/index.js'

type Level = 'info' | 'warn' | 'error'

/** A logger that writes one JSON object per line to `stream` (stdout by default). */
export function createJsonLogger(stream: NodeJS.WritableStream = process.stdout, quiet = false): Required<Logger> {
  function write(level: Level, message: string, fields?: Record<string, unknown>): void {
    if (quiet && level === 'info') return
    stream.write(`${JSON.stringify({ time: new Date().toISOString(), level, pid: process.pid, msg: message, ...fields })}\n`)
  }
  return {
    info: (message, fields) => write('info', message, fields),
    warn: (message, fields) => write('warn', message, fields),
    error: (message, fields) => write('error', message, fields)
  }
}
