// Loads the shipped domain lists of lib/data once and shares them (disposable list, free providers, allow-list).
import { readFileSync } from 'node:fs'

let disposable: Set<string> | undefined
let free: Set<string> | undefined
let allow: Set<string> | undefined

function readList(file: string): string[] {
  const text = readFileSync(new URL(`../data/${file}`, import.meta.url), 'utf8')
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
}

/** The merged disposable list (lower-case ASCII), read at first use. */
export function disposableList(): ReadonlySet<string> {
  disposable ??= new Set(readList('disposable-domains.txt'))
  return disposable
}

/** Free mail providers (lower-case ASCII), read at first use. */
export function freeProviderList(): ReadonlySet<string> {
  free ??= new Set(readList('free-domains.txt'))
  return free
}

/** Real providers and organisations never flagged disposable: free providers plus allow-domains.txt. */
export function allowList(): ReadonlySet<string> {
  allow ??= new Set([...freeProviderList(), ...readList('allow-domains.txt')])
  return allow
}

/** `domain` and each parent with at least two labels, longest first (`a.b.c` → `a.b.c`, `b.c`). */
export function domainAndParents(domain: string): string[] {
  const out = [domain]
  let i = domain.indexOf('.')
  while (i !== -1) {
    const rest = domain.slice(i + 1)
    if (!rest.includes('.')) break
    out.push(rest)
    i = domain.indexOf('.', i + 1)
  }
  return out
}
