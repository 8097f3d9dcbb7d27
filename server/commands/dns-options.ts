// The DNS options `serve` and `check` share: flags, their range checks, and the library options they become.
import { type Command, Option } from 'commander'
import type { EmailVerifierOptions } from '../../lib/index.js'
import { integer } from './common.js'

const MAX_MS = 2 ** 31 - 1

/** The DNS flags as commander hands them to an action. */
export interface DnsFlags {
  dnsServers?: string
  dnsTimeout?: number
  dnsTries?: number
  dnsCacheSize?: number
  dnsPositiveTtl?: number
  dnsNegativeTtl?: number
  dnsUnknownTtl?: number
}

/** Adds `--dns-servers` (env `UV_DNS_SERVERS`), `--dns-timeout`, `--dns-tries` and the DNS cache flags to `command`. */
export function addDnsOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--dns-servers <list>', 'DNS servers to ask, ip[:port] separated by commas (default: the system resolvers)').env(
        'UV_DNS_SERVERS'
      )
    )
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
}

/** The library's DNS options for the flags given; flags left out are left out (the library's defaults apply). */
export function dnsOptionsOf(o: DnsFlags): Pick<EmailVerifierOptions, 'dnsServers' | 'dnsTimeout' | 'dnsTries' | 'dnsCache'> {
  const servers = o.dnsServers
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  const cache = Object.fromEntries(
    Object.entries({
      max: o.dnsCacheSize,
      positiveTtl: o.dnsPositiveTtl,
      negativeTtl: o.dnsNegativeTtl,
      unknownTtl: o.dnsUnknownTtl
    }).filter(([, value]) => value !== undefined)
  )
  return Object.fromEntries(
    Object.entries({
      dnsServers: servers && servers.length > 0 ? servers : undefined,
      dnsTimeout: o.dnsTimeout,
      dnsTries: o.dnsTries,
      dnsCache: Object.keys(cache).length > 0 ? cache : undefined
    }).filter(([, value]) => value !== undefined)
  )
}
