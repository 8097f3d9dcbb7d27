// Special-use and reserved domain names (RFC 2606, 6761, 6762, 7686, 8375, 9476) and names under no public suffix, which never take Internet mail.
import { parse } from 'tldts'

// Top-level names reserved so that they never resolve on the public Internet: RFC 2606/6761
// (test, example, invalid, localhost), RFC 6762 (local), RFC 7686 (onion), RFC 9476 (alt),
// ICANN's 2024 reservation of internal, and arpa (infrastructure; home.arpa is RFC 8375).
const RESERVED_TLDS = new Set(['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'alt', 'internal', 'arpa'])
// RFC 2606 §3 second-level example names.
const RESERVED_NAMES = new Set(['example.com', 'example.net', 'example.org'])

/**
 * `true` when `domain` (lower-case ASCII, no trailing dot) is a special-use or reserved name
 * that must be answered `Fail` without a DNS query: `localhost` and `*.localhost`, `.test`,
 * `.example`, `.invalid`, `.local`, `.onion`, `.alt`, `.internal`, `.arpa`, and
 * `example.com`/`.net`/`.org` with their subdomains.
 */
export function isSpecialUseDomain(domain: string): boolean {
  const d = domain.endsWith('.') ? domain.slice(0, -1) : domain
  const tld = d.slice(d.lastIndexOf('.') + 1)
  if (RESERVED_TLDS.has(tld)) return true
  const lastDot = d.lastIndexOf('.')
  const secondDot = lastDot <= 0 ? -1 : d.lastIndexOf('.', lastDot - 1)
  return RESERVED_NAMES.has(d.slice(secondDot + 1))
}

/**
 * `true` when `domain` (lower-case ASCII) ends in a suffix the Public Suffix List knows (ICANN
 * or private section, as shipped with tldts): `example.co.uk`, `x.github.io`. `false` for names
 * under an unknown top-level label (`db.corp`, `router.lan`, `nas.home`,
 * `kubernetes.default.svc`), which only a private resolver can answer.
 */
export function hasPublicSuffix(domain: string): boolean {
  const info = parse(domain, { allowPrivateDomains: true, extractHostname: false })
  return info.isIcann === true || info.isPrivate === true
}
