// Diagnostics channels the library publishes on (node:diagnostics_channel): free when nobody listens, so metrics stay off the request path.
import diagnostics from 'node:diagnostics_channel'
import type { DnsCheck } from './types.js'

/** A DNS check of a mail domain: its outcome and where it came from (`lookup` = queries sent). */
export interface DnsCheckMessage {
  outcome: DnsCheck
  source: 'lookup' | 'cache' | 'shared' | 'special-use' | 'no-public-suffix'
}

/** The name model scored the names of one request, taking `seconds`. */
export interface NameModelMessage {
  seconds: number
}

/** `user-verification:dns`: one message per DNS check of a domain. */
export const dnsCheckChannel = diagnostics.channel('user-verification:dns')

/** `user-verification:name-model`: one message per request whose names the model scored. */
export const nameModelChannel = diagnostics.channel('user-verification:name-model')
