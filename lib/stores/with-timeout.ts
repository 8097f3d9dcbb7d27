// Bounds a store call in time, so a hung backend turns into a rejection (503) instead of a hung request.

/** Error of a store call that did not settle in time; `code` is `'ERR_UV_STORE_TIMEOUT'`. */
export class StoreTimeoutError extends Error {
  readonly code = 'ERR_UV_STORE_TIMEOUT'
  constructor(what: string, ms: number) {
    super(`user-verification: ${what} did not answer within ${ms} ms. Check that the store is up and not overloaded.`)
    this.name = 'StoreTimeoutError'
  }
}

/**
 * Resolves or rejects like `promise`, or rejects with {@link StoreTimeoutError} after `ms`
 * milliseconds. The timer is unref()ed and cleared. The underlying operation is not cancelled:
 * a timed-out consume may still land, so the middleware names consumes and calls the store's
 * `cancel`, which undoes it or fences it off.
 */
export async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new StoreTimeoutError(what, ms)), ms)
    timer.unref()
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}
