// Public-sector namespaces (government, military, education) that no throwaway service can register in: never disposable.
import { getPublicSuffix } from 'tldts'

// Top-level domains restricted to public bodies (RFC 1591, .int by IANA).
const PUBLIC_SECTOR_TLDS = new Set(['gov', 'mil', 'edu', 'int'])
// Labels that, inside a country's ICANN public suffix, name its government, military or
// education namespace: gov.uk, ac.uk, gouv.fr, gov.in, edu.au, go.jp, gob.mx, govt.nz, gv.at,
// gc.ca, mil.br, k12.ca.us, sch.uk, nhs.uk, police.uk. Documented in lib/data/disposable-card.md.
const PUBLIC_SECTOR_LABELS = new Set(['gov', 'gob', 'gouv', 'go', 'govt', 'gv', 'gc', 'mil', 'edu', 'ac', 'sch', 'k12', 'nhs', 'police'])

/**
 * `true` when `domain` (lower-case ASCII) lies in a government, military or education
 * namespace: a `.gov`/`.mil`/`.edu`/`.int` name, a name under an ICANN public suffix with one
 * of the labels above before its top-level label (`dallas.gov`, `x.gov.uk`, `u.ac.jp`), or a
 * US locality name (`ci.dallas.tx.us`: the `.us` state and locality zones, RFC 1480).
 */
export function isPublicSectorDomain(domain: string): boolean {
  const tld = domain.slice(domain.lastIndexOf('.') + 1)
  if (PUBLIC_SECTOR_TLDS.has(tld)) return true
  const suffix = getPublicSuffix(domain)
  if (suffix === null || suffix === domain || !suffix.includes('.')) return false
  const labels = suffix.split('.')
  if (tld === 'us') return true
  for (let i = 0; i < labels.length - 1; i++) if (PUBLIC_SECTOR_LABELS.has(labels[i]!)) return true
  return false
}
