#!/usr/bin/env node
// The `user-verification` command: serve the API, manage keys, show usage.
import { parseArgs } from 'node:util'
import { serve } from './serve.js'
import { runAccountCommand, runKeyCommand, runUsageCommand, type CommandSettings } from './key-commands.js'
import { CheckError, runCheck } from './commands/check.js'

const usage = `Usage:
  user-verification serve [--port 8080] [--host 127.0.0.1] [--store URL] [--dns-servers ip[:port],...]
                          [--workers N] [--no-demo-key] [--quiet]
                          [--dns-timeout MS] [--dns-tries N] [--dns-cache-size N]
                          [--dns-positive-ttl MS] [--dns-negative-ttl MS] [--dns-unknown-ttl MS]
                          [--body-limit BYTES] [--max-in-flight N] [--max-event-loop-delay MS]
                          [--headers-timeout MS] [--request-timeout MS] [--max-connections N]
                          [--rate-limit-key N] [--rate-limit-ip N]
  user-verification accounts create --name NAME [--email ADDRESS] --plan free|basic|pro [--store URL] [--json]
  user-verification accounts list [--store URL] [--json]
  user-verification accounts plan <account> <plan> [--store URL] [--json]
  user-verification accounts disable|enable <account> [--store URL] [--json]
  user-verification keys create --plan free|basic|pro [--label TEXT] [--store URL] [--json]   (a new account with its first key)
  user-verification keys create --account <account> [--label TEXT] [--store URL] [--json]
  user-verification keys list [--account <account>] [--store URL] [--json]
  user-verification keys rotate <key> [--grace DURATION] [--store URL] [--json]   (DURATION: 0, 30m, 24h, 7d)
  user-verification keys revoke <key> [--store URL] [--json]
  user-verification usage <account> [--daily] [--from DATE] [--to DATE] [--store URL] [--json]
  user-verification check <email> [--firstname X] [--lastname Y] [--json] [DNS options as for serve]
  user-verification check --input FILE --output FILE [--format csv|jsonl] [--email-column NAME]
                          [--firstname-column NAME] [--lastname-column NAME] [--concurrency N] [--overwrite]
                          [--server URL --key KEY] [--progress-interval S] [--quiet] [--json] [DNS options]

Environment: PORT, HOST, UV_STORE, UV_DNS_SERVERS. Default store: sqlite://./user-verification.sqlite`

/** A mistake in the command line: print it with the usage and exit 2. */
export class UsageError extends Error {}

const defaultStore = 'sqlite://./user-verification.sqlite'

function integer(name: string, text: string | undefined, fallback: number, min: number): number {
  if (text === undefined || text === '') return fallback
  const value = Number(text)
  if (!Number.isInteger(value) || value < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${text}"`)
  return value
}

/** The DNS options `serve` and `check` share, from their flags and `UV_DNS_SERVERS`. */
function dnsOptionsOf(values: Record<string, string | boolean | undefined>) {
  const optional = (name: string, min: number) => {
    const text = values[name]
    return typeof text === 'string' ? integer(name, text, 0, min) : undefined
  }
  const servers = (typeof values['dns-servers'] === 'string' ? values['dns-servers'] : process.env.UV_DNS_SERVERS)
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const cache = {
    max: optional('dns-cache-size', 1),
    positiveTtl: optional('dns-positive-ttl', 1),
    negativeTtl: optional('dns-negative-ttl', 1),
    unknownTtl: optional('dns-unknown-ttl', 1)
  }
  const cacheGiven = Object.values(cache).some((value) => value !== undefined)
  return {
    dnsServers: servers && servers.length > 0 ? servers : undefined,
    dnsTimeout: optional('dns-timeout', 1),
    dnsTries: optional('dns-tries', 1),
    dnsCache: cacheGiven ? Object.fromEntries(Object.entries(cache).filter(([, value]) => value !== undefined)) : undefined
  }
}

async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    strict: true,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      store: { type: 'string' },
      'dns-servers': { type: 'string' },
      'dns-timeout': { type: 'string' },
      'dns-tries': { type: 'string' },
      'dns-cache-size': { type: 'string' },
      'dns-positive-ttl': { type: 'string' },
      'dns-negative-ttl': { type: 'string' },
      'dns-unknown-ttl': { type: 'string' },
      'body-limit': { type: 'string' },
      'max-in-flight': { type: 'string' },
      'max-event-loop-delay': { type: 'string' },
      'headers-timeout': { type: 'string' },
      'request-timeout': { type: 'string' },
      'max-connections': { type: 'string' },
      'rate-limit-key': { type: 'string' },
      'rate-limit-ip': { type: 'string' },
      workers: { type: 'string' },
      'no-demo-key': { type: 'boolean' },
      quiet: { type: 'boolean' },
      plan: { type: 'string' },
      label: { type: 'string' },
      account: { type: 'string' },
      name: { type: 'string' },
      email: { type: 'string' },
      grace: { type: 'string' },
      daily: { type: 'boolean' },
      from: { type: 'string' },
      to: { type: 'string' },
      json: { type: 'boolean' },
      firstname: { type: 'string' },
      lastname: { type: 'string' },
      input: { type: 'string' },
      output: { type: 'string' },
      format: { type: 'string' },
      'email-column': { type: 'string' },
      'firstname-column': { type: 'string' },
      'lastname-column': { type: 'string' },
      concurrency: { type: 'string' },
      overwrite: { type: 'boolean' },
      'progress-interval': { type: 'string' },
      server: { type: 'string' },
      key: { type: 'string' },
      help: { type: 'boolean', short: 'h' }
    }
  })
  if (values.help || command === undefined || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(usage + '\n')
    return
  }
  const store = values.store ?? process.env.UV_STORE ?? defaultStore
  switch (command) {
    case 'serve': {
      const optional = (name: keyof typeof values, min: number) => {
        const text = values[name]
        return typeof text === 'string' ? integer(name, text, 0, min) : undefined
      }
      const { dnsServers, dnsTimeout, dnsTries, dnsCache } = dnsOptionsOf(values)
      await serve({
        port: integer('port', values.port ?? process.env.PORT, 8080, 0),
        host: values.host ?? process.env.HOST ?? '127.0.0.1',
        store,
        demoKey: !values['no-demo-key'],
        workers: integer('workers', values.workers, 1, 1),
        quiet: values.quiet ?? false,
        dnsServers,
        dnsTimeout,
        dnsTries,
        dnsCache,
        bodyLimit: optional('body-limit', 64),
        maxInFlight: optional('max-in-flight', 0),
        maxEventLoopDelay: optional('max-event-loop-delay', 0),
        headersTimeout: optional('headers-timeout', 1) ?? 10_000,
        requestTimeout: optional('request-timeout', 1) ?? 30_000,
        maxConnections: optional('max-connections', 1),
        rateLimit: { perKey: optional('rate-limit-key', 0), perIp: optional('rate-limit-ip', 0) }
      })
      return
    }
    case 'accounts':
    case 'keys':
    case 'usage': {
      const settings: CommandSettings = {
        store,
        json: values.json ?? false,
        plan: values.plan,
        label: values.label,
        account: values.account,
        name: values.name,
        email: values.email,
        grace: values.grace,
        daily: values.daily,
        from: values.from,
        to: values.to
      }
      const run = command === 'accounts' ? runAccountCommand : command === 'keys' ? runKeyCommand : runUsageCommand
      return run(positionals, settings)
    }
    case 'check': {
      if (positionals.length > 1) throw new UsageError('check takes one email address; quote values with spaces')
      const format = values.format
      if (format !== undefined && format !== 'csv' && format !== 'jsonl')
        throw new UsageError(`--format must be csv or jsonl, got "${format}"`)
      const given = (name: 'concurrency' | 'progress-interval', min: number) =>
        values[name] === undefined ? undefined : integer(name, values[name], 0, min)
      process.exitCode = await runCheck({
        email: positionals[0],
        firstname: values.firstname,
        lastname: values.lastname,
        input: values.input,
        output: values.output,
        format,
        emailColumn: values['email-column'],
        firstnameColumn: values['firstname-column'],
        lastnameColumn: values['lastname-column'],
        concurrency: given('concurrency', 1),
        progressInterval: given('progress-interval', 1),
        overwrite: values.overwrite ?? false,
        json: values.json ?? false,
        quiet: values.quiet ?? false,
        server: values.server,
        key: values.key ?? process.env.UV_API_KEY,
        dns: Object.fromEntries(Object.entries(dnsOptionsOf(values)).filter(([, value]) => value !== undefined))
      })
      return
    }
    default:
      throw new UsageError(`unknown command "${command}"`)
  }
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const isUsage = error instanceof UsageError || (error as { code?: string } | null)?.code?.startsWith('ERR_PARSE_ARGS')
  process.stderr.write(`user-verification: ${error instanceof Error ? error.message : String(error)}\n`)
  if (isUsage) process.stderr.write('\n' + usage + '\n')
  process.exit(isUsage || error instanceof CheckError ? 2 : 1)
})
