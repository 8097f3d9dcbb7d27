// Reading and writing the files of a bulk check: CSV (csv-parse/csv-stringify) or JSON Lines, streamed, resumable.
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs'
import { open, stat, truncate } from 'node:fs/promises'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { parse, type CastingContext } from 'csv-parse'
import { stringify, type Stringifier } from 'csv-stringify'
import { resultColumns, type ResultColumns, type SummaryCounter } from './check-rows.js'

/** File formats a bulk check reads and writes. */
export type FileFormat = 'csv' | 'jsonl'

/** The format named by a file's extension, or `undefined`. */
export function formatOfPath(path: string): FileFormat | undefined {
  const lower = path.toLowerCase()
  if (lower.endsWith('.csv')) return 'csv'
  if (lower.endsWith('.jsonl') || lower.endsWith('.ndjson')) return 'jsonl'
  return undefined
}

/** One input record: its first line number, its members, and how far into the file it ends. */
export interface InputRecord {
  line: number
  record: Record<string, unknown>
  /** Bytes of the input read up to the end of this record (for progress). */
  bytes: number
}

/** A record longer than this cannot be a sign-up row; csv-parse reports it and moves on. */
const maxRecordSize = 1 << 20

/** Reads the input as records, reporting unparseable ones to `bad` and going on. `header` receives CSV column names. */
export async function* readInput(
  path: string,
  format: FileFormat,
  bad: (line: number, problem: string) => void,
  header: (columns: string[]) => void
): AsyncGenerator<InputRecord> {
  if (format === 'jsonl') {
    yield* readJsonLines(path, bad)
    return
  }
  const parser = createReadStream(path).pipe(
    parse({
      bom: true,
      columns: (names: string[]) => {
        header(names)
        return names
      },
      info: true,
      // A short row is read (its missing column is reported per row); a row with surplus cells is unreadable.
      relax_column_count_less: true,
      // A stray quote inside a field is taken as text rather than swallowing the rest of the file.
      relax_quotes: true,
      skip_records_with_error: true,
      skip_empty_lines: true,
      max_record_size: maxRecordSize,
      // Values stay text: a ZIP code or a name like "0" must round-trip exactly.
      cast: (value: string, _context: CastingContext) => value
    })
  )
  parser.on('skip', (error: Error & { lines?: number }) => {
    bad(error.lines ?? 0, `unreadable CSV record (${error.message.replace(/:.*$/s, '')})`)
  })
  for await (const item of parser as AsyncIterable<{ record: Record<string, unknown>; info: { lines: number; bytes: number } }>) {
    // `info.lines` is the line the record ends on; a record spanning lines starts earlier, rarely matters.
    yield { line: item.info.lines, record: item.record, bytes: item.info.bytes }
  }
}

async function* readJsonLines(path: string, bad: (line: number, problem: string) => void): AsyncGenerator<InputRecord> {
  const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity })
  let line = 0
  let bytes = 0
  for await (const text of lines) {
    line++
    bytes += Buffer.byteLength(text) + 1
    if (text.trim() === '') continue
    if (text.length > maxRecordSize) {
      bad(line, `line longer than ${maxRecordSize} characters`)
      continue
    }
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      bad(line, 'not valid JSON')
      continue
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      bad(line, 'not a JSON object')
      continue
    }
    yield { line, record: value as Record<string, unknown>, bytes }
  }
}

/** What an earlier run left in the output file. */
export interface ExistingOutput {
  /** Complete rows already written. */
  rows: number
  /** The CSV header found there (CSV only). */
  header?: string[]
}

/**
 * Reads an earlier run's output: cuts a last row that a crash left half-written, counts the
 * complete rows and adds them to `counter`. `undefined` when the file is absent or empty.
 */
export async function inspectOutput(path: string, format: FileFormat, counter: SummaryCounter): Promise<ExistingOutput | undefined> {
  let size: number
  try {
    size = (await stat(path)).size
  } catch {
    return undefined
  }
  if (size === 0) return undefined
  const end = await endOfLastLine(path, size)
  if (end < size) await truncate(path, end)
  if (end === 0) return undefined
  if (format === 'jsonl') {
    let rows = 0
    const lines = createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity })
    for await (const text of lines) {
      if (text.trim() === '') continue
      counter.add(JSON.parse(text) as Record<string, unknown>)
      rows++
    }
    return { rows }
  }
  let header: string[] | undefined
  let rows = 0
  const parser = createReadStream(path).pipe(
    parse({
      bom: true,
      columns: (names: string[]) => {
        header = names
        return names
      }
    })
  )
  for await (const record of parser as AsyncIterable<Record<string, unknown>>) {
    counter.add(record)
    rows++
  }
  return header === undefined ? undefined : { rows, header }
}

/** Byte offset just past the file's last newline (0 when it has none). */
async function endOfLastLine(path: string, size: number): Promise<number> {
  const handle = await open(path, 'r')
  try {
    const chunk = Buffer.alloc(64 * 1024)
    let position = size
    while (position > 0) {
      const length = Math.min(chunk.length, position)
      position -= length
      await handle.read(chunk, 0, length, position)
      const newline = chunk.subarray(0, length).lastIndexOf(10)
      if (newline >= 0) return position + newline + 1
    }
    return 0
  } finally {
    await handle.close()
  }
}

/** Writes output rows with backpressure: `write` resolves once the row may be followed by more. */
export interface RowWriter {
  write(record: Record<string, unknown>, columns: ResultColumns): Promise<void>
  /** Flushes and closes the file. */
  close(): Promise<void>
}

/** Opens the output: appends when resuming, otherwise creates it (with a header for CSV). */
export function openOutput(path: string, format: FileFormat, inputColumns: string[], append: boolean): RowWriter {
  const file = createWriteStream(path, { flags: append ? 'a' : 'w' })
  const fileError = new Promise<never>((_resolve, reject) => file.once('error', reject))
  fileError.catch(() => {})
  if (format === 'jsonl') return jsonLinesWriter(file, fileError)
  const stringifier: Stringifier = stringify({
    header: !append,
    columns: [...inputColumns, ...resultColumns],
    cast: { boolean: (value) => (value ? 'true' : 'false') }
  })
  stringifier.pipe(file)
  return {
    async write(record, columns) {
      const row: Record<string, unknown> = {}
      for (const name of inputColumns) row[name] = record[name] ?? ''
      for (const name of resultColumns) row[name] = columns[name] ?? ''
      if (!stringifier.write(row)) await Promise.race([once(stringifier, 'drain'), fileError])
    },
    async close() {
      stringifier.end()
      await Promise.race([once(file, 'close'), fileError])
    }
  }
}

function jsonLinesWriter(file: WriteStream, fileError: Promise<never>): RowWriter {
  return {
    async write(record, columns) {
      if (!file.write(`${JSON.stringify({ ...record, ...columns })}\n`)) await Promise.race([once(file, 'drain'), fileError])
    },
    async close() {
      file.end()
      await Promise.race([once(file, 'close'), fileError])
    }
  }
}
