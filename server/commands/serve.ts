// `user-verification serve`: the API, its dashboard and metrics as a standalone server.
import { type Command, Option } from 'commander'
import { integer, plansOption, storeOption } from './common.js'

/** What commander hands the `serve` action. */
interface ServeOptions {
  port: number
  host: string
  store: string
  plans: Record<string, number>
  dnsServers?: string
  workers: number
  demoKey: boolean
  quiet?: boolean
  dnsTimeout?: number
  dnsTries?: number
  dnsCacheSize?: number
  dnsPositiveTtl?: number
  dnsNegativeTtl?: number
  dnsUnknownTtl?: number
  bodyLimit?: number
  maxInFlight?: number
  maxEventLoopDelay?: number
  headersTimeout: number
  requestTimeout: number
  rateLimitKey?: number
  rateLimitIp?: number
  metricsPort?: number
  metricsHost?: string
}

const MAX_MS = 2 ** 31 - 1

/** Adds the `serve` command to `program`. */
export function registerServe(program: Command): void {
  program
    .command('serve')
    .description('serve the API at /api/v1, with /healthz, /readyz, /metrics and the dashboard')
    .addOption(
      new Option('--port <port>', 'port to listen on (0 picks a free one)')
        .env('PORT')
        .argParser(integer('port', 0, 65535))
        .default(8080)
    )
    .addOption(new Option('--host <host>', 'address to listen on').env('HOST').default('127.0.0.1'))
    .addOption(storeOption())
    .addOption(plansOption())
    .addOption(
      new Option('--dns-servers <list>', 'DNS servers to ask, ip[:port] separated by commas (default: the system resolvers)').env(
        'UV_DNS_SERVERS'
      )
    )
    .addOption(
      new Option('--workers <n>', 'processes serving the port (needs a shared store)').argParser(integer('workers', 1, 1024)).default(1)
    )
    .option('--no-demo-key', 'do not create a demo key on an empty store')
    .option('--quiet', 'leave out the per-request log lines')
    .addOption(
      new Option('--dns-timeout <ms>', 'deadline of the DNS check of one address (default: 3000)').argParser(
        integer('dns-timeout', 1, 60_000)
      )
    )
    .addOption(new Option('--dns-tries <n>', 'attempts per DNS query (default: 2)').argParser(integer('dns-tries', 1, 10)))
    .addOption(
      new Option('--dns-cache-size <n>', 'domains kept in the DNS cache (default: 10000)').argParser(
        integer('dns-cache-size', 1, 10_000_000)
      )
    )
    .addOption(
      new Option('--dns-positive-ttl <ms>', 'how long a Pass is cached (default: 3600000)').argParser(
        integer('dns-positive-ttl', 1, MAX_MS)
      )
    )
    .addOption(
      new Option('--dns-negative-ttl <ms>', 'how long a Fail is cached (default: 300000)').argParser(integer('dns-negative-ttl', 1, MAX_MS))
    )
    .addOption(
      new Option('--dns-unknown-ttl <ms>', 'how long an Unknown is cached (default: 30000)').argParser(
        integer('dns-unknown-ttl', 1, MAX_MS)
      )
    )
    .addOption(
      new Option('--body-limit <bytes>', 'largest request body; 413 above it (default: 16384)').argParser(integer('body-limit', 64))
    )
    .addOption(
      new Option('--max-in-flight <n>', 'requests in progress above which new ones get 503; 0 = off (default: 1024)').argParser(
        integer('max-in-flight', 0)
      )
    )
    .addOption(
      new Option('--max-event-loop-delay <ms>', 'event-loop delay above which new requests get 503; 0 = off (default: 0)').argParser(
        integer('max-event-loop-delay', 0)
      )
    )
    .addOption(
      new Option('--headers-timeout <ms>', 'time a client has to send the request headers')
        .argParser(integer('headers-timeout', 1, MAX_MS))
        .default(10_000)
    )
    .addOption(
      new Option('--request-timeout <ms>', 'time a client has to send the whole request')
        .argParser(integer('request-timeout', 1, MAX_MS))
        .default(30_000)
    )
    .addOption(
      new Option('--rate-limit-key <n>', 'requests per second per API key; 429 above it; 0 = off (default: off)').argParser(
        integer('rate-limit-key', 0)
      )
    )
    .addOption(
      new Option('--rate-limit-ip <n>', 'requests per second per client address; 429 above it; 0 = off (default: off)').argParser(
        integer('rate-limit-ip', 0)
      )
    )
    .action(async (o: ServeOptions) => {
      const dnsServers = o.dnsServers
        ?.split(',')
        .map((s) => s.trim())
        .filter(Boolean)
      const dnsCache = {
        max: o.dnsCacheSize,
        positiveTtl: o.dnsPositiveTtl,
        negativeTtl: o.dnsNegativeTtl,
        unknownTtl: o.dnsUnknownTtl
      }
      const dnsCacheGiven = Object.values(dnsCache).some((value) => value !== undefined)
      const { serve } = await import('../serve.js')
      await serve({
        port: o.port,
        host: o.host,
        store: o.store,
        plans: o.plans,
        demoKey: o.demoKey,
        workers: o.workers,
        quiet: o.quiet ?? false,
        dnsServers: dnsServers && dnsServers.length > 0 ? dnsServers : undefined,
        dnsTimeout: o.dnsTimeout,
        dnsTries: o.dnsTries,
        dnsCache: dnsCacheGiven ? Object.fromEntries(Object.entries(dnsCache).filter(([, value]) => value !== undefined)) : undefined,
        bodyLimit: o.bodyLimit,
        maxInFlight: o.maxInFlight,
        maxEventLoopDelay: o.maxEventLoopDelay,
        headersTimeout: o.headersTimeout,
        requestTimeout: o.requestTimeout,
        rateLimit: { perKey: o.rateLimitKey, perIp: o.rateLimitIp }
      })
    })
}
