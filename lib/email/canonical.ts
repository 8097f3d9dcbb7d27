// The canonical form of an address for "one account per email" (CONTRIBUTING.md#accounts-keys-and-quota): spellings of one mailbox compare equal.
import { isValidLocalPart } from './syntax.js'
import { toAsciiDomain } from './domain.js'

/**
 * The form in which two spellings of one mailbox are equal (attacker finding F4): NFC; the
 * domain lower-cased and in its ASCII (punycode) form; a quoted local part whose content, with
 * its backslash escapes removed, is a valid dot-atom is compared unquoted (`"a.b"@x` and
 * `"a\.b"@x` are `a.b@x`); the local part lower-cased, as addresses always were compared here.
 * Provider aliases (Gmail's dots, `+tags`) are deliberately not folded: they are different
 * addresses to every other mail server. A value without an `@` or with a domain that is no
 * hostname is lower-cased in NFC only. The address itself is kept as typed; this is a key.
 */
export function canonicalEmail(address: string): string {
  const nfc = String(address).trim().normalize('NFC')
  const at = nfc.lastIndexOf('@')
  if (at <= 0) return nfc.toLowerCase()
  let local = nfc.slice(0, at)
  const domain = nfc.slice(at + 1)
  if (local.length >= 2 && local.startsWith('"') && local.endsWith('"')) {
    const content = local.slice(1, -1).replace(/\\([\s\S])/gu, '$1')
    if (!content.startsWith('"') && isValidLocalPart(content)) local = content
  }
  return `${local.toLowerCase()}@${toAsciiDomain(domain) ?? domain.toLowerCase()}`
}
