// Verifies a stream of rows with bounded concurrency, yielding results in input order.
import { toError, OptionsRangeError } from './errors.js'
import type { VerifyInput, VerifyResult } from './types.js'
import { createVerifier, type Verifier, type VerifierOptions } from './verify.js'

/** Options of {@link verifyMany}: the verifier's options plus how many rows are checked at once. */
export interface VerifyManyOptions extends VerifierOptions {
  /**
   * Rows in flight at once. DNS lookups dominate, and concurrent lookups of one domain share a
   * single query through the verifier's cache. Defaults to 32.
   */
  concurrency?: number
  /** A ready verifier to reuse (it is not closed). Defaults to one built from the other options and closed at the end. */
  verifier?: Verifier
}

/** One row's outcome: `result` when it was verified, `error` when a verifier failed on it. */
export type VerifyManyItem<T> =
  | { index: number; input: T; result: VerifyResult; error?: undefined }
  | { index: number; input: T; result?: undefined; error: Error }

/** The concurrency used when none is given: enough to overlap DNS round trips, little memory. */
export const defaultConcurrency = 32

/**
 * Maps `source` through `work` with at most `concurrency` calls pending, yielding outcomes in
 * source order. Memory is bounded by the window: the source is read only as fast as results are
 * consumed, so a stream of any length runs in constant memory.
 */
export async function* mapOrdered<T, R>(
  source: Iterable<T> | AsyncIterable<T>,
  concurrency: number,
  work: (input: T, index: number) => Promise<R>
): AsyncGenerator<R> {
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new OptionsRangeError(`user-verification: concurrency must be an integer >= 1, got ${concurrency}`)
  }
  const iterator: Iterator<T> | AsyncIterator<T> =
    Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : (source as Iterable<T>)[Symbol.iterator]()
  const window: Array<Promise<R>> = []
  let exhausted = false
  let index = 0
  try {
    for (;;) {
      while (!exhausted && window.length < concurrency) {
        const next = await iterator.next()
        if (next.done === true) {
          exhausted = true
          break
        }
        const pending = work(next.value, index++)
        // Settled later by `yield await`; a rejection must not count as unhandled meanwhile.
        pending.catch(() => {})
        window.push(pending)
      }
      const head = window.shift()
      if (head === undefined) return
      yield await head
    }
  } finally {
    if (!exhausted) await iterator.return?.()
  }
}

/**
 * Verifies every row of `rows` (any iterable or async iterable of `{ email, firstname, lastname }`,
 * extra members allowed) and yields `{ index, input, result }` per row, in input order. A row whose
 * verification fails (a broken name model) yields `{ index, input, error }` and the run goes on.
 * Bad input is a result, not an error, as with `verify`. One verifier (and so one DNS cache) serves
 * all rows: a domain is looked up once however many rows use it.
 *
 * @example
 * for await (const { input, result } of verifyMany(rows, { concurrency: 64 })) console.log(input.email, result?.email_verification?.dnsCheck)
 */
export async function* verifyMany<T extends VerifyInput>(
  rows: Iterable<T> | AsyncIterable<T>,
  options: VerifyManyOptions = {}
): AsyncGenerator<VerifyManyItem<T>> {
  const { concurrency = defaultConcurrency, verifier: given, ...verifierOptions } = options
  const verifier = given ?? createVerifier(verifierOptions)
  try {
    yield* mapOrdered(rows, concurrency, (input, index) =>
      verifier.verify(input).then(
        (result): VerifyManyItem<T> => ({ index, input, result }),
        (error: unknown): VerifyManyItem<T> => ({ index, input, error: toError(error) })
      )
    )
  } finally {
    if (given === undefined) verifier.close()
  }
}
