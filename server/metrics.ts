// Prometheus text exposition of the middleware's counters and the process's memory.
import type { MiddlewareMetrics } from '../lib/index.js'

/** Renders counters in the Prometheus text format (version 0.0.4). */
export function renderMetrics(metrics: MiddlewareMetrics): string {
  const lines = [
    '# HELP uv_responses_total Responses of the verification endpoint, by HTTP status.',
    '# TYPE uv_responses_total counter',
    ...Object.entries(metrics.responses).map(([status, count]) => `uv_responses_total{status="${status}"} ${count}`),
    '# HELP uv_in_flight Verification requests in progress.',
    '# TYPE uv_in_flight gauge',
    `uv_in_flight ${metrics.inFlight}`,
    '# HELP uv_units_consumed_total Quota units granted.',
    '# TYPE uv_units_consumed_total counter',
    `uv_units_consumed_total ${metrics.unitsConsumed}`,
    '# HELP uv_units_refunded_total Quota units given back after a failed verification.',
    '# TYPE uv_units_refunded_total counter',
    `uv_units_refunded_total ${metrics.unitsRefunded}`,
    '# HELP process_resident_memory_bytes Resident memory size in bytes.',
    '# TYPE process_resident_memory_bytes gauge',
    `process_resident_memory_bytes ${process.memoryUsage.rss()}`
  ]
  return lines.join('\n') + '\n'
}
