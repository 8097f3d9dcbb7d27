// `user-verification check`: one address and names through the library, or a whole file (check-bulk.ts).
import { createVerifier, type EmailVerifierOptions, type NamePrediction, type VerifyResult } from '../../lib/index.js'
import { CheckError, runBulkCheck, type BulkSettings } from './check-bulk.js'
import type { FileFormat } from './check-files.js'

export { CheckError } from './check-bulk.js'

/** Everything `check` takes, whichever parser read the command line. */
export interface CheckSettings {
  /** The address of a one-off check (the positional argument). */
  email?: string
  firstname?: string
  lastname?: string
  input?: string
  output?: string
  format?: FileFormat
  emailColumn?: string
  firstnameColumn?: string
  lastnameColumn?: string
  concurrency?: number
  overwrite: boolean
  json: boolean
  quiet: boolean
  progressInterval?: number
  server?: string
  key?: string
  /** DNS options, as `serve` takes them. */
  dns: EmailVerifierOptions
}

/** Exit codes of `check`: 0 done, 3 a bulk run stopped early (402/401/server gone; resumable). */
export const checkExitCodes = { done: 0, stopped: 3 } as const

/** Runs `check` and resolves with its exit code. */
export async function runCheck(settings: CheckSettings): Promise<number> {
  if (settings.input !== undefined || settings.output !== undefined) {
    if (settings.input === undefined || settings.output === undefined) throw new CheckError('a file check needs both --input and --output')
    if (settings.email !== undefined || settings.firstname !== undefined || settings.lastname !== undefined) {
      throw new CheckError('give either values to check or --input/--output, not both')
    }
    const { email: _e, firstname: _f, lastname: _l, input, output, ...rest } = settings
    const bulk: BulkSettings = { ...rest, input, output }
    const summary = await runBulkCheck(bulk)
    if (settings.json) process.stdout.write(`${JSON.stringify(summary)}\n`)
    return summary.stopped === undefined ? checkExitCodes.done : checkExitCodes.stopped
  }
  if (settings.email === undefined && settings.firstname === undefined && settings.lastname === undefined) {
    throw new CheckError('give an email address (and/or --firstname, --lastname), or --input FILE --output FILE')
  }
  if (settings.server !== undefined) throw new CheckError('--server applies to file checks (--input/--output) only')
  const verifier = createVerifier(settings.dns)
  try {
    if (verifier.nameModelError && (settings.firstname !== undefined || settings.lastname !== undefined)) throw verifier.nameModelError
    const result = await verifier.verify({ email: settings.email, firstname: settings.firstname, lastname: settings.lastname })
    if (result.request_count === 0) throw new CheckError('every value given is empty')
    process.stdout.write(`${settings.json ? JSON.stringify({ status: 'success', ...result }) : formatResult(result)}\n`)
    return checkExitCodes.done
  } finally {
    verifier.close()
  }
}

function yesNo(value: boolean): string {
  return value ? 'yes' : 'no'
}

function nameLine(field: string, prediction: NamePrediction): string {
  const reason = (prediction as NamePrediction & { reason?: unknown }).reason
  const verdict = prediction.prediction === 'LABEL_1' ? 'looks like a real name' : 'looks like junk'
  const why = typeof reason === 'string' ? `, reason ${reason}` : ''
  return `${field.padEnd(12)}${prediction.value}: ${verdict} (${prediction.prediction}, confidence ${prediction.confidence}${why})`
}

/** A one-off result as lines a person reads. */
export function formatResult(result: VerifyResult): string {
  const lines: string[] = []
  const email = result.email_verification
  if (email !== undefined) {
    lines.push(
      `email       ${email.emailAddress}`,
      `  syntax      ${email.syntexCheck}`,
      `  dns         ${email.dnsCheck}`,
      `  disposable  ${yesNo(email.disposable)}`,
      `  suggestion  ${email.suggestion ?? 'none'}`,
      `  role        ${yesNo(email.role)}`,
      `  free        ${yesNo(email.free)}`,
      `  username    ${email.username}`,
      `  domain      ${email.domain}`
    )
  }
  for (const field of ['firstname', 'lastname'] as const) {
    const prediction = result.name_verification?.[field]
    if (prediction !== undefined) lines.push(nameLine(field, prediction))
  }
  lines.push(`units       ${result.request_count} (what the API would charge)`)
  return lines.join('\n')
}
