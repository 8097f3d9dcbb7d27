// The verification columns a bulk check adds to each row, and the run's summary counted from them.
import type { NamePrediction, VerifyResult } from '../../lib/index.js'

/** Columns appended to every output row, after the input's own columns. */
export const resultColumns = [
  'uv_email_syntax',
  'uv_email_dns',
  'uv_email_disposable',
  'uv_email_role',
  'uv_email_free',
  'uv_email_suggestion',
  'uv_firstname_label',
  'uv_firstname_confidence',
  'uv_firstname_reason',
  'uv_lastname_label',
  'uv_lastname_confidence',
  'uv_lastname_reason',
  'uv_error'
] as const

/** A value of a verification column; `null` where the field was not checked. */
export type ResultValue = string | number | boolean | null
export type ResultColumns = Record<(typeof resultColumns)[number], ResultValue>

/** The `reason` of a name result (README.md#name_verification), when the model gives one. */
function reasonOf(prediction: NamePrediction): string | null {
  const reason = (prediction as NamePrediction & { reason?: unknown }).reason
  return typeof reason === 'string' ? reason : null
}

/** An all-null row, with `uv_error` set when given. */
export function emptyColumns(error: string | null = null): ResultColumns {
  const row = Object.fromEntries(resultColumns.map((column) => [column, null])) as ResultColumns
  row.uv_error = error
  return row
}

/** Flattens one verification result into the verification columns. */
export function toColumns(result: VerifyResult): ResultColumns {
  const row = emptyColumns()
  const email = result.email_verification
  if (email !== undefined) {
    row.uv_email_syntax = email.syntexCheck
    row.uv_email_dns = email.dnsCheck
    row.uv_email_disposable = email.disposable
    row.uv_email_role = email.role
    row.uv_email_free = email.free
    row.uv_email_suggestion = email.suggestion
  }
  for (const field of ['firstname', 'lastname'] as const) {
    const prediction = result.name_verification?.[field]
    if (prediction === undefined) continue
    row[`uv_${field}_label`] = prediction.prediction
    row[`uv_${field}_confidence`] = prediction.confidence
    row[`uv_${field}_reason`] = reasonOf(prediction)
  }
  return row
}

/** One bad input row: where it is and what is wrong (never its content, which is personal data). */
export interface BadRow {
  line: number
  problem: string
}

/** What a bulk run reports at the end (printed, or as JSON with `--json`). */
export interface CheckSummary {
  /** Rows in the output file (resumed ones included). */
  rows: number
  /** Rows that were already in the output when this run started. */
  resumed: number
  /** Rows verified by this run. */
  checkedThisRun: number
  email: {
    checked: number
    syntaxFail: number
    dnsFail: number
    dnsUnknown: number
    disposable: number
    role: number
    free: number
    suggestions: number
  }
  names: {
    checked: number
    rejected: number
    /** Rejected names by `reason` (`unspecified` when the model gave none). */
    rejectedByReason: Record<string, number>
  }
  /** Rows written with `uv_error` set (a missing column, an overlong value, a failed verification). */
  rowErrors: number
  /** Input lines that could not be read at all, and rows with a problem; the first 1,000 are listed. */
  badRows: { count: number; list: BadRow[] }
  elapsedMs: number
  rowsPerSecond: number
  /** Peak resident memory of the process, in MiB. */
  peakRssMiB: number
  /** Set when the run stopped before the end of the input (`--server` got 402 or 401). */
  stopped?: { status: number; reason: string; resume: string }
}

/** Bad rows listed in the summary; the count goes on past it. */
const badRowListLimit = 1000

/** Counts outcomes as rows are written. */
export class SummaryCounter {
  readonly summary: CheckSummary = {
    rows: 0,
    resumed: 0,
    checkedThisRun: 0,
    email: { checked: 0, syntaxFail: 0, dnsFail: 0, dnsUnknown: 0, disposable: 0, role: 0, free: 0, suggestions: 0 },
    names: { checked: 0, rejected: 0, rejectedByReason: {} },
    rowErrors: 0,
    badRows: { count: 0, list: [] },
    elapsedMs: 0,
    rowsPerSecond: 0,
    peakRssMiB: 0
  }

  /** Adds one written row; values may be typed (JSON Lines) or text (CSV read back on resume). */
  add(row: Partial<Record<string, unknown>>): void {
    const s = this.summary
    const text = (column: string) => {
      const value = row[column]
      return value === null || value === undefined ? '' : String(value)
    }
    s.rows++
    if (text('uv_error') !== '') s.rowErrors++
    if (text('uv_email_syntax') !== '') {
      s.email.checked++
      if (text('uv_email_syntax') === 'Fail') s.email.syntaxFail++
      if (text('uv_email_dns') === 'Fail') s.email.dnsFail++
      if (text('uv_email_dns') === 'Unknown') s.email.dnsUnknown++
      if (text('uv_email_disposable') === 'true') s.email.disposable++
      if (text('uv_email_role') === 'true') s.email.role++
      if (text('uv_email_free') === 'true') s.email.free++
      if (text('uv_email_suggestion') !== '') s.email.suggestions++
    }
    for (const field of ['firstname', 'lastname']) {
      const label = text(`uv_${field}_label`)
      if (label === '') continue
      s.names.checked++
      if (label !== 'LABEL_0') continue
      s.names.rejected++
      const reason = text(`uv_${field}_reason`) || 'unspecified'
      s.names.rejectedByReason[reason] = (s.names.rejectedByReason[reason] ?? 0) + 1
    }
  }

  bad(line: number, problem: string): void {
    this.summary.badRows.count++
    if (this.summary.badRows.list.length < badRowListLimit) this.summary.badRows.list.push({ line, problem })
  }
}

/** The summary as lines a person reads. */
export function formatSummary(s: CheckSummary): string {
  const reasons = Object.entries(s.names.rejectedByReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, count]) => `${reason} ${count}`)
    .join(', ')
  const lines = [
    `rows            ${s.rows}${s.resumed > 0 ? ` (${s.resumed} from an earlier run, ${s.checkedThisRun} now)` : ''}`,
    `emails          ${s.email.checked} checked: syntax Fail ${s.email.syntaxFail}, DNS Fail ${s.email.dnsFail}, DNS Unknown ${s.email.dnsUnknown}`,
    `                disposable ${s.email.disposable}, role ${s.email.role}, free ${s.email.free}, typo suggestions ${s.email.suggestions}`,
    `names           ${s.names.checked} checked, ${s.names.rejected} rejected${reasons ? ` (${reasons})` : ''}`,
    `bad rows        ${s.badRows.count}${s.rowErrors > 0 ? `; rows written with uv_error: ${s.rowErrors}` : ''}`,
    `speed           ${s.rowsPerSecond} rows/s over ${(s.elapsedMs / 1000).toFixed(1)} s, peak RSS ${s.peakRssMiB} MiB`
  ]
  if (s.stopped) lines.push(`stopped         ${s.stopped.reason}`, `                ${s.stopped.resume}`)
  return lines.join('\n')
}
