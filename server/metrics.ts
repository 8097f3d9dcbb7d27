// Prometheus metrics of the standalone server (prom-client): request latency, DNS, name model, store calls, quota; one view across --workers.
import cluster from 'node:cluster'
import diagnostics from 'node:diagnostics_channel'
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client'
import type { DnsCheckMessage, MiddlewareMetrics, NameModelMessage, Stores } from '../lib/index.js'

/** The metrics of one server process, and how a scrape renders them. */
export interface ServerMetrics {
  readonly registry: Registry
  /** The `Content-Type` of {@link render}'s text. */
  readonly contentType: string
  /** Records an API request's status and duration. */
  observeRequest(status: number, seconds: number): void
  /** Times every key and quota store call (latency by call, errors by call). */
  instrumentStores(stores: Stores): Stores
  /** The exposition text: this process's metrics, or, in a `--workers` worker, every worker's summed by the primary. */
  render(): Promise<string>
  /** Stops listening on the diagnostics channels. */
  close(): void
}

/** Options of {@link createServerMetrics}. */
export interface ServerMetricsOptions {
  /** Node's process metrics (CPU, memory, event loop, GC) as well. Defaults to `false`. */
  defaultMetrics?: boolean
}

const statusClass = (status: number) => `${Math.floor(status / 100)}xx`

/** Builds the metrics of `middleware`, on a registry of their own. */
export function createServerMetrics(middleware: { metrics(): MiddlewareMetrics }, options: ServerMetricsOptions = {}): ServerMetrics {
  const registry = new Registry()
  if (cluster.isWorker) {
    // Constructing one installs prom-client's answer to the primary's requests in this worker.
    new AggregatorRegistry()
    AggregatorRegistry.setRegistries([registry])
  }
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry })
  else
    new Gauge({
      name: 'process_resident_memory_bytes',
      help: 'Resident memory size in bytes.',
      registers: [registry],
      collect() {
        this.set(process.memoryUsage.rss())
      }
    })

  const requestSeconds = new Histogram({
    name: 'uv_http_request_duration_seconds',
    help: 'Time to answer a request of the verification API, by status class.',
    labelNames: ['status_class'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry]
  })
  // The middleware counts on plain numbers (cheap on the request path); the counters catch up at each scrape.
  let seen: MiddlewareMetrics = { responses: {}, aborted: 0, inFlight: 0, unitsConsumed: 0, unitsRefunded: 0 }
  let latest = seen
  const refresh = () => {
    latest = middleware.metrics()
  }
  const responses = new Counter({
    name: 'uv_responses_total',
    help: 'Responses of the verification endpoint written in full, by HTTP status (402 over plan, 429 rate limited, 503 unavailable or shedding).',
    labelNames: ['status'],
    registers: [registry],
    collect() {
      refresh()
      for (const [status, count] of Object.entries(latest.responses)) {
        const delta = count - (seen.responses[status as unknown as number] ?? 0)
        if (delta > 0) this.inc({ status }, delta)
      }
    }
  })
  for (const status of ['200', '402', '429', '503']) responses.inc({ status }, 0)
  new Gauge({
    name: 'uv_in_flight',
    help: 'Verification requests in progress.',
    registers: [registry],
    collect() {
      this.set(latest.inFlight)
    }
  })
  new Counter({
    name: 'uv_requests_aborted_total',
    help: 'Verification requests whose client left before the answer was written in full (their units, if any, given back).',
    registers: [registry],
    collect() {
      if (latest.aborted > seen.aborted) this.inc(latest.aborted - seen.aborted)
    }
  })
  new Counter({
    name: 'uv_units_consumed_total',
    help: 'Quota units granted.',
    registers: [registry],
    collect() {
      if (latest.unitsConsumed > seen.unitsConsumed) this.inc(latest.unitsConsumed - seen.unitsConsumed)
    }
  })
  new Counter({
    name: 'uv_units_refunded_total',
    help: 'Quota units given back because the client left before its 200 was written in full.',
    registers: [registry],
    collect() {
      if (latest.unitsRefunded > seen.unitsRefunded) this.inc(latest.unitsRefunded - seen.unitsRefunded)
      // Registered last of the middleware's counters: every one has caught up with `latest` now.
      seen = { ...latest, responses: { ...latest.responses } }
    }
  })

  const dnsChecks = new Counter({
    name: 'uv_dns_checks_total',
    help: 'DNS checks of mail domains by outcome (Pass/Fail/Unknown) and source (lookup, cache hit, shared in-flight lookup, special-use name).',
    labelNames: ['outcome', 'source'],
    registers: [registry]
  })
  const nameSeconds = new Histogram({
    name: 'uv_name_model_duration_seconds',
    help: 'Time the name model took for the names of one request.',
    buckets: [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05],
    registers: [registry]
  })
  const storeSeconds = new Histogram({
    name: 'uv_store_call_duration_seconds',
    help: 'Time of key and quota store calls, by store and call.',
    labelNames: ['store', 'call'],
    buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry]
  })
  const storeErrors = new Counter({
    name: 'uv_store_errors_total',
    help: 'Key and quota store calls that failed (unreachable, timed out, refused), by store and call.',
    labelNames: ['store', 'call'],
    registers: [registry]
  })

  const onDns = (message: unknown) => {
    const { outcome, source } = message as DnsCheckMessage
    dnsChecks.inc({ outcome, source })
  }
  const onName = (message: unknown) => nameSeconds.observe((message as NameModelMessage).seconds)
  diagnostics.subscribe('user-verification:dns', onDns)
  diagnostics.subscribe('user-verification:name-model', onName)

  function instrument<T extends object>(target: T, store: 'keys' | 'quota'): T {
    const wrapped = new Map<PropertyKey, unknown>()
    return new Proxy(target, {
      get(object, property) {
        const value = Reflect.get(object, property, object)
        if (typeof value !== 'function' || property === 'constructor') return value
        let fn = wrapped.get(property)
        if (fn === undefined) {
          const call = String(property)
          fn = function timed(...args: unknown[]) {
            const start = process.hrtime.bigint()
            const done = () => storeSeconds.observe({ store, call }, Number(process.hrtime.bigint() - start) / 1e9)
            let result: unknown
            try {
              // Called on the store itself, not the proxy: stores keep private fields.
              result = (value as (...a: unknown[]) => unknown).apply(object, args)
            } catch (error) {
              done()
              storeErrors.inc({ store, call })
              throw error
            }
            if (result instanceof Promise) {
              return result.then(
                (ok) => {
                  done()
                  return ok
                },
                (error: unknown) => {
                  done()
                  storeErrors.inc({ store, call })
                  throw error
                }
              )
            }
            done()
            return result
          }
          wrapped.set(property, fn)
        }
        return fn
      }
    })
  }

  return {
    registry,
    contentType: registry.contentType,
    observeRequest(status, seconds) {
      requestSeconds.observe({ status_class: statusClass(status) }, seconds)
    },
    instrumentStores(stores) {
      return { ...stores, keys: instrument(stores.keys, 'keys'), quota: instrument(stores.quota, 'quota') }
    },
    render() {
      return cluster.isWorker ? clusterMetricsFromPrimary() : registry.metrics()
    },
    close() {
      diagnostics.unsubscribe('user-verification:dns', onDns)
      diagnostics.unsubscribe('user-verification:name-model', onName)
    }
  }
}

/** Messages between a worker's `/metrics` and the primary, which sums every worker's registry. */
interface MetricsMessage {
  type: 'uv:metrics'
  id: number
  text?: string
  error?: string
}

let nextId = 0
const waiting = new Map<number, (message: MetricsMessage) => void>()
let listening = false

/** In a worker: asks the primary for the whole server's metrics (prom-client's cluster aggregation). */
async function clusterMetricsFromPrimary(): Promise<string> {
  if (!listening) {
    listening = true
    process.on('message', (message: MetricsMessage) => {
      if (message?.type !== 'uv:metrics') return
      waiting.get(message.id)?.(message)
      waiting.delete(message.id)
    })
  }
  // After the primary died (the worker is finishing its requests), process.send would emit an
  // 'error' event nobody listens to, and the throw would end the worker mid-request.
  if (!process.connected) throw new Error('the primary is gone; no cluster metrics')
  const id = ++nextId
  const answer = await new Promise<MetricsMessage>((resolve, reject) => {
    const timer = setTimeout(() => {
      waiting.delete(id)
      reject(new Error('the primary did not answer with the metrics within 5 s'))
    }, 5000)
    waiting.set(id, (message) => {
      clearTimeout(timer)
      resolve(message)
    })
    process.send?.({ type: 'uv:metrics', id } satisfies MetricsMessage)
  })
  if (answer.text === undefined) throw new Error(answer.error ?? 'no metrics')
  return answer.text
}

/** In the primary of `--workers`: answers workers' metrics requests with every worker's metrics summed. */
export function serveClusterMetrics(): { clusterMetrics(): Promise<string>; contentType: string } {
  const aggregator = new AggregatorRegistry()
  cluster.on('message', (worker, message: MetricsMessage) => {
    if (message?.type !== 'uv:metrics') return
    aggregator.clusterMetrics().then(
      (text) => worker.send({ type: 'uv:metrics', id: message.id, text } satisfies MetricsMessage),
      (error: unknown) => worker.send({ type: 'uv:metrics', id: message.id, error: String(error) } satisfies MetricsMessage)
    )
  })
  return aggregator
}
