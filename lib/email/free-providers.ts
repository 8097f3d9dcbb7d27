// Tells whether a domain belongs to a free mail provider (gmail.com, outlook.com, …).
import { domainToASCII } from 'node:url'
import { freeProviderList } from './domain-lists.js'

/**
 * `true` when `domain` (any case, Unicode or punycode) is one of the free mail providers of
 * lib/data/free-domains.txt (webmail open to anyone and consumer ISP mailboxes).
 */
export function isFreeProvider(domain: string): boolean {
  const d = /^[\x00-\x7F]*$/.test(domain) ? domain.toLowerCase() : domainToASCII(domain)
  return freeProviderList().has(d)
}
