// Practical RFC 5321/5322/6531 mailbox syntax check of CONTRIBUTING.md#email-semantics: dot-atom or quoted local part, IDN domain.
import type { SyntaxCheck } from '../types.js'
import { toAsciiDomain } from './domain.js'

/** Longest local part, in UTF-8 octets (RFC 5321 §4.5.3.1.1). */
export const MAX_LOCAL_OCTETS = 64
/** Longest address, in octets (RFC 5321 path of 256 minus the angle brackets; RFC 3696 errata). */
export const MAX_ADDRESS_OCTETS = 254

// RFC 5322 atext plus RFC 6531 UTF8-non-ascii; `u` makes `.` and classes work on code points.
const DOT_ATOM = /^[\p{L}\p{M}\p{N}\p{S}\p{P}]+$/u
const ATEXT_ASCII = /^[A-Za-z0-9!#$%&'*+\-/=?^_`{|}~.]*$/
const ASCII_SPECIALS = /[\x00-\x7F]/g
// RFC 5321 quoted-string: qtextSMTP (%d32-33 / %d35-91 / %d93-126 / UTF-8) or `\` + %d32-126.
const QUOTED = /^"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|[^\x00-\x7F]|\\[\x20-\x7E])+"$/u
// Unicode an address should not carry even where the RFCs allow it: controls, format characters
// (bidi overrides, zero-width space; ZWNJ/ZWJ stay, scripts need them), surrogates, private use,
// unassigned code points and every space but U+0020 (which is only legal inside quotes).
const UNSAFE =
  /[\p{Cc}\p{Cs}\p{Co}\p{Cn}\u00A0\u1680\u2000-\u200B\u200E\u200F\u2028-\u202F\u205F-\u206F\u3000\uFEFF\u00AD\u061C\u180E\uFFF9-\uFFFB]|(?![\u200C\u200D])\p{Cf}/u
function octets(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}

/** `true` when `local` is a valid dot-atom or quoted local part (RFC 5321/6531), length aside. */
export function isValidLocalPart(local: string): boolean {
  if (local.length === 0) return false
  if (local.charCodeAt(0) === 0x22) return QUOTED.test(local)
  if (local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false
  const nonAscii = local.replace(ASCII_SPECIALS, '')
  if (nonAscii.length === 0) return ATEXT_ASCII.test(local)
  // Outside quotes the ASCII characters must still be atext; what is left is UTF-8 text.
  if (!ATEXT_ASCII.test(local.replace(/[^\x00-\x7F]/gu, ''))) return false
  if (!DOT_ATOM.test(nonAscii)) return false
  // A combining mark cannot start an atom: it would attach to the dot or the quote before it.
  for (const atom of local.split('.')) if (/^\p{M}/u.test(atom)) return false
  return true
}

/**
 * Checks `address` against the practical mailbox syntax of CONTRIBUTING.md#email-semantics and answers
 * `'Pass'` or `'Fail'`. The value is checked as given (trim it first): dot-atom or quoted
 * local part with UTF-8 allowed (SMTPUTF8), an IDN or ASCII hostname domain (see
 * {@link toAsciiDomain}), local part <= 64 octets, address <= 254 octets; no comments,
 * folding white space, obsolete forms, domain literals or unsafe Unicode. Unicode is
 * compared in NFC, so both spellings of an accented letter give the same verdict.
 */
export function checkEmailSyntax(address: string): SyntaxCheck {
  if (typeof address !== 'string' || address.length === 0 || address.length > 1024) return 'Fail'
  const nfc = address.normalize('NFC')
  if (UNSAFE.test(nfc)) return 'Fail'
  const at = nfc.lastIndexOf('@')
  if (at <= 0) return 'Fail'
  const local = nfc.slice(0, at)
  const domain = nfc.slice(at + 1)
  if (!isValidLocalPart(local)) return 'Fail'
  const localOctets = octets(local)
  if (localOctets > MAX_LOCAL_OCTETS) return 'Fail'
  const ascii = toAsciiDomain(domain)
  if (ascii === null) return 'Fail'
  // SMTPUTF8 may send the domain as U-labels or A-labels: both spellings must fit the limit.
  if (localOctets + 1 + Math.max(ascii.length, octets(domain)) > MAX_ADDRESS_OCTETS) return 'Fail'
  return 'Pass'
}
