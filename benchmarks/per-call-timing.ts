// Per-call latency of a synchronous function: one process.hrtime.bigint() pair around every call.

/** Latency quantiles in µs and the number of timed calls. */
export interface Timing {
  p50: number
  p99: number
  mean: number
  calls: number
}

/** Times `fn` once per call over `n` calls cycling through `values`, after `warm` untimed calls. */
export function timeEach(values: string[], n: number, warm: number, fn: (v: string) => unknown): Timing {
  for (let i = 0; i < warm; i++) fn(values[i % values.length] as string)
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) {
    const v = values[i % values.length] as string
    const t0 = process.hrtime.bigint()
    fn(v)
    out[i] = Number(process.hrtime.bigint() - t0)
  }
  out.sort()
  const at = (q: number): number => (out[Math.min(out.length - 1, Math.floor(q * out.length))] as number) / 1000
  let sum = 0
  for (const v of out) sum += v
  return { p50: at(0.5), p99: at(0.99), mean: sum / out.length / 1000, calls: out.length }
}
