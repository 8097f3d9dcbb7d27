// `user-verification check --input FILE --output FILE`: screens a CSV or JSON Lines file, resumably, with progress.
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { resolve as resolvePath } from 'node:path'
import cliProgress from 'cli-progress'
import { createVerifier, type EmailVerifierOptions, type VerifyInput, type VerifyResult } from '../../lib/index.js'
import { mapOrdered, defaultConcurrency } from '../../lib/verify-many.js'
import {
  emptyColumns,
  formatSummary,
  resultColumns,
  SummaryCounter,
  toColumns,
  type CheckSummary,
  type ResultColumns
} from './check-rows.js'
import { formatOfPath, inspectOutput, openOutput, readInput, type FileFormat, type InputRecord, type RowWriter } from './check-files.js'

/** Settings of a bulk check, as the command line gives them. */
export interface BulkSettings {
  input: string
  output: string
  /** Overrides the format given by the extensions. */
  format?: FileFormat
  emailColumn?: string
  firstnameColumn?: string
  lastnameColumn?: string
  concurrency?: number
  /** Start over instead of resuming an existing output. */
  overwrite: boolean
  json: boolean
  quiet: boolean
  /** Seconds between plain progress lines when stderr is not a terminal. */
  progressInterval?: number
  /** Send rows to a running server instead of the library. */
  server?: string
  key?: string
  dns: EmailVerifierOptions
}

/** A mistake in the settings or the files, reported without a stack. */
export class CheckError extends Error {}

/** Column names tried, in order, when no mapping is given (compared case-insensitively). */
const defaultColumns = {
  email: ['email', 'e-mail', 'email_address', 'emailaddress', 'mail'],
  firstname: ['firstname', 'first_name', 'first name', 'firstName', 'given_name', 'givenname', 'forename'],
  lastname: ['lastname', 'last_name', 'last name', 'lastName', 'surname', 'family_name', 'familyname']
} as const

/** The longest value checked; longer ones make the row bad (the API's 16 KiB body could not carry much more). */
export const maxValueLength = 1000

type Field = keyof typeof defaultColumns

/** Picks each field's column: the one named, or the first default present in `available`. */
function mapColumns(available: string[], settings: BulkSettings): Partial<Record<Field, string>> {
  const named: Record<Field, string | undefined> = {
    email: settings.emailColumn,
    firstname: settings.firstnameColumn,
    lastname: settings.lastnameColumn
  }
  const mapping: Partial<Record<Field, string>> = {}
  const lower = new Map(available.map((name) => [name.toLowerCase(), name]))
  for (const field of ['email', 'firstname', 'lastname'] as const) {
    const wanted = named[field]
    if (wanted !== undefined) {
      if (!available.includes(wanted)) throw new CheckError(`column "${wanted}" (--${field}-column) is not in the input's header`)
      mapping[field] = wanted
      continue
    }
    const found = defaultColumns[field].map((name) => lower.get(name.toLowerCase())).find((name) => name !== undefined)
    if (found !== undefined) mapping[field] = found
  }
  if (Object.keys(mapping).length === 0) {
    throw new CheckError(
      `no email, first name or last name column found (columns: ${available.slice(0, 20).join(', ')}); name them with --email-column, --firstname-column or --lastname-column`
    )
  }
  return mapping
}

/** The fields of one record, or the problem that makes it a bad row. */
function fieldsOf(record: Record<string, unknown>, mapping: Partial<Record<Field, string>>): VerifyInput | string {
  const input: VerifyInput = {}
  for (const [field, column] of Object.entries(mapping) as Array<[Field, string]>) {
    const value = record[column]
    if (value === undefined) return `missing column "${column}"`
    if (value === null) continue
    if (typeof value !== 'string') return `column "${column}" is not text`
    if (value.length > maxValueLength) return `column "${column}" is ${value.length} characters long (limit ${maxValueLength})`
    input[field] = value
  }
  return input
}

/** Output of one row's verification: its columns, or a stop (the server refused to go on). */
type Outcome =
  | {
      columns: ResultColumns
      bytes: number
      record: Record<string, unknown>
      /** The row's place among the input's parseable records (0-based, across runs). */
      index: number
      /** Set when the columns came from a verification (this run's or a kept one), with the fields verified. */
      verified?: VerifyInput
    }
  | { stop: { status: number; reason: string } }

/** A verified row that could not be written in input order before the run stopped. */
interface KeptAnswer {
  index: number
  fields: VerifyInput
  columns: ResultColumns
}

/**
 * Where a stopped run keeps rows it has answers for but could not write yet: with `--concurrency`
 * above 1, rows after the one that got a 402 may already be answered 200 (and charged); the output
 * holds the input's rows in order, so those go here and a resumed run writes them without sending
 * them again. JSON Lines of {@link KeptAnswer}; removed once every kept row is in the output.
 */
export function keptPath(output: string): string {
  return `${output}.answered`
}

async function readKept(path: string): Promise<Map<number, KeptAnswer>> {
  const kept = new Map<number, KeptAnswer>()
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch {
    return kept
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue
    try {
      const answer = JSON.parse(line) as KeptAnswer
      if (Number.isInteger(answer.index) && typeof answer.columns === 'object') kept.set(answer.index, answer)
    } catch {
      // A torn last line (the process died while writing it): that row is sent again.
    }
  }
  return kept
}

const sameFields = (a: VerifyInput, b: VerifyInput) => a.email === b.email && a.firstname === b.firstname && a.lastname === b.lastname

/** Verifies through the library: no server, no key, no quota. */
function libraryVerify(dns: EmailVerifierOptions) {
  const verifier = createVerifier(dns)
  return {
    verify: (input: VerifyInput) => verifier.verify(input),
    close: () => verifier.close()
  }
}

/** Verifies through a running server's API, with its key and quota. */
function serverVerify(url: string, key: string) {
  const endpoint = url.replace(/\/+$/, '') + (/(\/api\/v1)$/.test(url.replace(/\/+$/, '')) ? '' : '/api/v1')
  async function verify(input: VerifyInput): Promise<VerifyResult | { status: number; detail: string }> {
    for (let attempt = 1; ; attempt++) {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': key },
        body: JSON.stringify({ model: 'user_verification', ...input })
      })
      const body = (await response.json().catch(() => ({}))) as Record<string, unknown>
      if (response.status === 200) {
        const { status: _status, received_data: _received, ...result } = body
        return result as unknown as VerifyResult
      }
      // Overload and rate limits are passing: wait as told and try again, a few times.
      if ((response.status === 503 || response.status === 429) && attempt < 5) {
        const wait = Math.min(30, Number(response.headers.get('retry-after')) || attempt)
        await new Promise((resolve) => setTimeout(resolve, wait * 1000))
        continue
      }
      return { status: response.status, detail: typeof body.detail === 'string' ? body.detail : JSON.stringify(body.detail) }
    }
  }
  return { verify, close: () => {} }
}

/** Progress on stderr: a bar on a terminal, a plain line every few seconds otherwise, nothing when quiet. */
function progressReporter(settings: BulkSettings, totalBytes: number) {
  if (settings.quiet) return { update: (_rows: number, _bytes: number) => {}, stop: () => {} }
  const started = Date.now()
  const rate = (rows: number) => Math.round(rows / Math.max(0.001, (Date.now() - started) / 1000))
  if (process.stderr.isTTY) {
    const bar = new cliProgress.SingleBar(
      {
        stream: process.stderr,
        format: '{bar} {percentage}% | {rows} rows | {speed} rows/s | ETA {eta_formatted}',
        etaBuffer: 50,
        hideCursor: true
      },
      cliProgress.Presets.shades_classic
    )
    bar.start(Math.max(1, totalBytes), 0, { rows: 0, speed: 0 })
    return {
      update: (rows: number, bytes: number) => bar.update(bytes, { rows, speed: rate(rows) }),
      stop: () => bar.stop()
    }
  }
  const every = (settings.progressInterval ?? 5) * 1000
  let last = started
  return {
    update(rows: number, bytes: number) {
      const now = Date.now()
      if (now - last < every) return
      last = now
      const percent = totalBytes > 0 ? Math.min(100, Math.floor((bytes / totalBytes) * 100)) : 0
      process.stderr.write(`check: ${rows} rows, ${percent}% of the input, ${rate(rows)} rows/s\n`)
    },
    stop: () => {}
  }
}

/** Runs a bulk check and returns its summary (also printed unless `json`, where the caller prints it). */
export async function runBulkCheck(settings: BulkSettings): Promise<CheckSummary> {
  const format = settings.format ?? formatOfPath(settings.input)
  const outputFormat = settings.format ?? formatOfPath(settings.output) ?? format
  if (format === undefined) throw new CheckError(`cannot tell the format of "${settings.input}" from its name; give --format csv|jsonl`)
  if (outputFormat !== format)
    throw new CheckError(`the input is ${format} but the output's name says ${outputFormat}; use the same format`)
  if (resolvePath(settings.input) === resolvePath(settings.output)) throw new CheckError('--output must be another file than --input')
  let totalBytes: number
  try {
    totalBytes = (await stat(settings.input)).size
  } catch {
    throw new CheckError(`cannot read the input file "${settings.input}"`)
  }
  if (settings.server !== undefined && settings.key === undefined) throw new CheckError('--server needs --key (an API key of that server)')
  const concurrency = settings.concurrency ?? (settings.server === undefined ? defaultConcurrency : 4)
  const started = Date.now()
  const counter = new SummaryCounter()
  const existing = settings.overwrite ? undefined : await inspectOutput(settings.output, format, counter)
  const skip = existing?.rows ?? 0
  counter.summary.resumed = skip
  const keptFile = keptPath(settings.output)
  if (settings.overwrite) await rm(keptFile, { force: true })
  // Answers an earlier stopped run received for rows it could not write yet (only those not in the output since).
  const kept = await readKept(keptFile)
  for (const index of kept.keys()) if (index < skip) kept.delete(index)

  const report = (line: number, problem: string) => {
    counter.bad(line, problem)
    if (!settings.quiet) process.stderr.write(`check: line ${line}: ${problem}\n`)
  }
  let header: string[] | undefined
  const records = readInput(settings.input, format, report, (columns) => {
    header = columns
  })
  const verifier = settings.server === undefined ? libraryVerify(settings.dns) : serverVerify(settings.server, settings.key ?? '')
  const progress = progressReporter(settings, totalBytes)

  let mapping: Partial<Record<Field, string>> | undefined
  let writer: RowWriter | undefined
  let written = 0
  let seen = 0
  let stopped: { status: number; reason: string } | undefined
  /** Verified rows after the row that stopped the run: kept for the resumed run. */
  const keep: KeptAnswer[] = []

  /** A resumed CSV must have the columns this input produces, or rows would land under the wrong names. */
  function checkResumedHeader(): void {
    if (existing?.header === undefined || header === undefined) return
    if (existing.header.join('\u0000') !== [...header, ...resultColumns].join('\u0000')) {
      throw new CheckError(`"${settings.output}" has other columns than this input produces; give --overwrite to start over`)
    }
  }

  /** Records of this run: the first `skip` parseable records were written by an earlier run. */
  async function* pending(): AsyncGenerator<{ item: InputRecord; index: number }> {
    for await (const item of records) {
      if (seen === 0) checkResumedHeader()
      const index = seen++
      if (index < skip) continue
      if (stopped !== undefined) return
      yield { item, index }
    }
  }

  async function work({ item, index }: { item: InputRecord; index: number }): Promise<Outcome> {
    mapping ??= mapColumns(header ?? Object.keys(item.record), settings)
    const fields = fieldsOf(item.record, mapping)
    const row = { bytes: item.bytes, record: item.record, index }
    if (typeof fields === 'string') {
      report(item.line, fields)
      return { ...row, columns: emptyColumns(fields) }
    }
    // Answered in an earlier run that stopped before it could write this row: not sent (nor charged) again.
    const earlier = kept.get(index)
    if (earlier !== undefined && sameFields(earlier.fields, fields)) return { ...row, columns: earlier.columns, verified: fields }
    if (stopped !== undefined) return { stop: stopped }
    const hasValue = Object.values(fields).some((value) => typeof value === 'string' && value.trim() !== '')
    if (!hasValue) return { ...row, columns: emptyColumns() }
    try {
      const result = await verifier.verify(fields)
      if ('detail' in result) {
        stopped ??= { status: result.status, reason: `the server answered ${result.status} ${result.detail}` }
        return { stop: stopped }
      }
      return { ...row, columns: toColumns(result), verified: fields }
    } catch (error) {
      if (settings.server !== undefined) {
        stopped ??= { status: 0, reason: `the server could not be reached (${error instanceof Error ? error.message : String(error)})` }
        return { stop: stopped }
      }
      const problem = 'verification failed (the name model is unavailable)'
      report(item.line, problem)
      return { ...row, columns: emptyColumns(problem) }
    }
  }

  try {
    // After a stop no new row is sent, but the rows in flight are waited for: each 200 among them was charged.
    let gap = false
    for await (const outcome of mapOrdered(pending(), concurrency, work)) {
      if ('stop' in outcome) {
        gap = true
        continue
      }
      if (gap) {
        // The output holds the input's rows in order, so a row after the gap waits in the kept file.
        if (outcome.verified !== undefined) keep.push({ index: outcome.index, fields: outcome.verified, columns: outcome.columns })
        continue
      }
      writer ??= openOutput(settings.output, format, header ?? [], existing !== undefined)
      await writer.write(outcome.record, outcome.columns)
      counter.add(outcome.columns)
      written++
      progress.update(skip + written, outcome.bytes)
    }
    // An input with a header and no rows still gets an output with a header.
    if (writer === undefined && existing === undefined && header !== undefined) writer = openOutput(settings.output, format, header, false)
  } finally {
    progress.stop()
    verifier.close()
    await writer?.close()
    // Kept answers still ahead of the output (this run's and an earlier run's not reached), or none: no file.
    const ahead = new Map([...kept].filter(([index]) => index >= skip + written))
    for (const answer of keep) ahead.set(answer.index, answer)
    if (ahead.size > 0) {
      const lines = [...ahead.values()].sort((a, b) => a.index - b.index).map((answer) => JSON.stringify(answer))
      await writeFile(keptFile, `${lines.join('\n')}\n`)
    } else await rm(keptFile, { force: true })
  }

  const summary = counter.summary
  summary.checkedThisRun = written
  summary.elapsedMs = Date.now() - started
  summary.rowsPerSecond = Math.round(written / Math.max(0.001, summary.elapsedMs / 1000))
  summary.peakRssMiB = Math.round(process.resourceUsage().maxRSS / 1024)
  if (stopped !== undefined) {
    const lost =
      keep.length > 0
        ? ` ${keep.length} rows after it in the input were answered and are kept in ${keptFile}: a resumed run writes them without sending them again.`
        : ''
    summary.stopped = {
      ...stopped,
      reason: `${stopped.reason} after ${summary.rows} rows.${lost}`,
      resume:
        stopped.status === 402
          ? 'Upgrade the plan (or wait for the next period), then run the same command again: rows already in the output are skipped.'
          : 'Fix the cause, then run the same command again: rows already in the output are skipped.'
    }
  }
  if (!settings.json) process.stdout.write(`${formatSummary(summary)}\n`)
  return summary
}
