// Splits an email address into its local part and domain at the last `@` (CONTRIBUTING.md#email-semantics).

/** The two halves of an address as CONTRIBUTING.md#email-semantics reports them. */
export interface EmailParts {
  /** Text before the last `@`; the whole value when there is no `@`. */
  username: string
  /** Text after the last `@`, lower-cased; `""` when there is no `@`. */
  domain: string
}

/**
 * Splits `address` at its last `@`. The value is used as given (trim it first if needed);
 * the domain is lower-cased, the username is kept as typed.
 */
export function splitEmail(address: string): EmailParts {
  const at = address.lastIndexOf('@')
  if (at === -1) return { username: address, domain: '' }
  return { username: address.slice(0, at), domain: address.slice(at + 1).toLowerCase() }
}
