// `user-verification serve`: the API, its dashboard and metrics as a standalone server.
import { type Command, Option } from 'commander'
import { envSwitch, integer, plansOption, storeOption } from './common.js'
import { addDnsOptions, dnsOptionsOf, type DnsFlags } from './dns-options.js'

/** What commander hands the `serve` action. */
interface ServeOptions extends DnsFlags {
  port: number
  host: string
  store: string
  plans: Record<string, number>
  workers: number
  demoKey: boolean
  quiet?: boolean
  bodyLimit?: number
  maxInFlight?: number
  maxEventLoopDelay?: number
  headersTimeout: number
  requestTimeout: number
  maxConnections?: number
  maxConnectionsPerAddress?: number
  rateLimitKey?: number
  rateLimitIp?: number
  metricsPort?: number
  metricsHost?: string
  adminTokenFile?: string
  signup?: boolean
  upgradeUrl?: string
}

const MAX_MS = 2 ** 31 - 1

/** Adds the `serve` command to `program`. */
export function registerServe(program: Command): void {
  const serve = program
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
      new Option('--workers <n>', 'processes serving the port (needs a shared store)').argParser(integer('workers', 1, 1024)).default(1)
    )
    .option('--no-demo-key', 'do not create a demo key on an empty store')
    .option('--quiet', 'leave out the per-request log lines')
  addDnsOptions(serve)
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
      new Option(
        '--max-connections <n>',
        'open connections per process above which new ones are dropped (default: from the file-descriptor limit)'
      ).argParser(integer('max-connections', 1))
    )
    .addOption(
      new Option(
        '--max-connections-per-address <n>',
        'open connections per client address (IPv6 by /56) and process above which its new ones are closed; 0 = no cap, e.g. behind a proxy (default: a quarter of --max-connections)'
      )
        .env('UV_MAX_CONNECTIONS_PER_ADDRESS')
        .argParser(integer('max-connections-per-address', 0))
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
    .addOption(
      new Option('--metrics-port <port>', 'serve /metrics on this port instead of the API port (default: the API port)')
        .env('UV_METRICS_PORT')
        .argParser(integer('metrics-port', 0, 65535))
    )
    .addOption(new Option('--metrics-host <host>', 'address of the --metrics-port listener (default: --host)').env('UV_METRICS_HOST'))
    .addOption(
      new Option(
        '--admin-token-file <file>',
        "file whose first line is the dashboard's admin token, 16+ characters (default: UV_ADMIN_TOKEN; neither: no admin view)"
      )
    )
    .option(
      '--signup',
      'let visitors create a Free account and key on the dashboard, screened by the product (default: off; env: UV_SIGNUP=1)'
    )
    .addOption(
      new Option('--upgrade-url <url-or-text>', 'upgrade offer shown past 80% of a plan: a URL becomes a link, other text is shown').env(
        'UV_UPGRADE_URL'
      )
    )
    .action(async (o: ServeOptions) => {
      const { serve } = await import('../serve.js')
      await serve({
        port: o.port,
        host: o.host,
        store: o.store,
        plans: o.plans,
        demoKey: o.demoKey,
        workers: o.workers,
        quiet: o.quiet ?? false,
        ...dnsOptionsOf(o),
        bodyLimit: o.bodyLimit,
        maxInFlight: o.maxInFlight,
        maxEventLoopDelay: o.maxEventLoopDelay,
        headersTimeout: o.headersTimeout,
        requestTimeout: o.requestTimeout,
        maxConnections: o.maxConnections,
        maxConnectionsPerAddress: o.maxConnectionsPerAddress,
        rateLimit: { perKey: o.rateLimitKey, perIp: o.rateLimitIp },
        metricsPort: o.metricsPort,
        metricsHost: o.metricsHost,
        adminTokenFile: o.adminTokenFile,
        signup: o.signup ?? envSwitch('UV_SIGNUP'),
        upgrade: o.upgradeUrl
      })
    })
}
