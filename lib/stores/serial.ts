// One task at a time per name, in arrival order: what a store without conditional writes uses to keep its own read-modify-writes from interleaving.

/**
 * Runs the tasks given for one name one after another, in the order they arrive; tasks of
 * different names run concurrently. A task that rejects does not stop the ones behind it. Only
 * calls through this one instance are ordered: other processes sharing a backend are not.
 */
export class Serial {
  /** The settling of the last task queued for each name that has one pending. */
  readonly #last = new Map<string, Promise<void>>()

  async run<T>(name: string, task: () => Promise<T>): Promise<T> {
    const before = this.#last.get(name) ?? Promise.resolve()
    const run = before.then(task, task)
    const settled = run.then(
      () => {},
      () => {}
    )
    this.#last.set(name, settled)
    try {
      return await run
    } finally {
      if (this.#last.get(name) === settled) this.#last.delete(name)
    }
  }

  /** Runs `task` holding every name of `names` (taken in sorted order, so two callers never wait for each other). */
  async runAll<T>(names: readonly string[], task: () => Promise<T>): Promise<T> {
    const sorted = [...new Set(names)].sort()
    const hold = (i: number): Promise<T> => (i === sorted.length ? task() : this.run(sorted[i]!, () => hold(i + 1)))
    return hold(0)
  }
}
