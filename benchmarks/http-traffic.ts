// The traffic of the HTTP benchmark: request bodies that vary the way a sign-up form's do (names of
// many cultures, addresses at many domains), so caches keyed by name or domain are not all hits.
import { readFileSync } from 'node:fs'

interface Culture {
  given: string[]
  surnames: string[]
}

/** Mail domains of the benchmark, each with its own MX host. */
export const benchDomains = Array.from({ length: 64 }, (_, i) => `shop${i}.bench-mail.com`)

/** The loopback DNS zone that answers for {@link benchDomains}. */
export function benchZone(): Record<string, { mx?: Array<{ priority: number; exchange: string }>; a?: string[] }> {
  const zone: Record<string, { mx?: Array<{ priority: number; exchange: string }>; a?: string[] }> = {}
  for (const domain of benchDomains) {
    zone[domain] = { mx: [{ priority: 10, exchange: `mx.${domain}` }] }
    zone[`mx.${domain}`] = { a: ['203.0.113.25'] }
  }
  return zone
}

/**
 * `count` request bodies with all three fields: given name and surname pairs from the
 * independent name set (Latin, Cyrillic, Greek, Arabic, Indic, Han … scripts), addresses spread
 * over the 64 domains. Deterministic, so every run sends the same traffic.
 */
export function benchBodies(count: number): string[] {
  const cultures: Culture[] = []
  for (const part of ['a', 'b', 'c', 'd']) {
    const url = new URL(`../test/fixtures/name-independent/names-${part}.json`, import.meta.url)
    cultures.push(...(JSON.parse(readFileSync(url, 'utf8')) as { cultures: Culture[] }).cultures)
  }
  const bodies: string[] = []
  for (let i = 0; i < count; i++) {
    const culture = cultures[i % cultures.length]!
    const firstname = culture.given[Math.floor(i / cultures.length) % culture.given.length]!
    const lastname = culture.surnames[(i * 7) % culture.surnames.length]!
    const email = `user${i}@${benchDomains[(i * 13) % benchDomains.length]}`
    bodies.push(JSON.stringify({ model: 'user_verification', email, firstname, lastname }))
  }
  return bodies
}
