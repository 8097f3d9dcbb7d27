// Turns the domain of an address into its checked ASCII (punycode) form: UTS-46 plus hostname rules.
import { domainToASCII, domainToUnicode } from 'node:url'

/** Longest domain in text form, in octets (RFC 1035: 255 on the wire, 253 as text). */
export const MAX_DOMAIN_OCTETS = 253

const LDH_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/
const TLD = /^(?:[a-z]{2,63}|xn--[a-z0-9-]{1,59})$/
// Characters no hostname may contain, checked on the raw text because UTS-46 silently drops
// some of them (zero-width space, soft hyphen) and would let a disguised domain through.
const UNSAFE = /[\p{Cc}\p{Cs}\p{Co}\p{Cn}\p{Z}\u00AD\u200B\u2060\uFEFF\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]/u
const ASCII_ONLY = /^[\x00-\x7F]*$/
// IDNA2008 (RFC 5892) admits letters, marks and digits in U-labels; UTS-46 alone would also pass
// symbols and emoji (`domain.com©`), which no registry issues and mail systems refuse.
const IDNA2008_LABEL = /^[\p{L}\p{M}\p{N}-]+$/u

/**
 * The ASCII form of a mail domain, or `null` when it is no valid Internet hostname for mail:
 * UTS-46 mapping (non-transitional, as browsers do) to punycode with invalid IDNA rejected,
 * then >= 2 labels, LDH labels of 1-63 octets without edge hyphens, no `??--` label unless a
 * valid `xn--` A-label whose U-label holds only letters, marks and digits (IDNA2008), a TLD of letters (or an A-label) that is not numeric, <= 253 octets.
 * Domain literals (`[1.2.3.4]`), trailing dots and underscores are rejected.
 */
export function toAsciiDomain(domain: string): string | null {
  if (domain.length === 0 || domain.length > 1024) return null
  if (UNSAFE.test(domain)) return null
  let ascii: string
  if (ASCII_ONLY.test(domain)) {
    ascii = domain.toLowerCase()
  } else {
    ascii = domainToASCII(domain.normalize('NFC'))
    if (ascii === '') return null
  }
  if (ascii.length > MAX_DOMAIN_OCTETS) return null
  const labels = ascii.split('.')
  if (labels.length < 2) return null
  for (const label of labels) {
    if (!LDH_LABEL.test(label)) return null
    if (label.length >= 4 && label[2] === '-' && label[3] === '-') {
      if (!label.startsWith('xn--')) return null
      // An A-label must decode and re-encode to itself, else it is not valid IDNA.
      if (domainToASCII(label) !== label) return null
      if (!IDNA2008_LABEL.test(domainToUnicode(label))) return null
    }
  }
  if (!TLD.test(labels[labels.length - 1]!)) return null
  return ascii
}
