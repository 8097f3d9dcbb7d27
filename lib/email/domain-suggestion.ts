// "Did you mean" for typos of popular mail domains (gmial.com → gmail.com, gmail.con → gmail.com).
import { LRUCache } from 'lru-cache'
import { parse } from 'tldts'
import { allowList } from './domain-lists.js'

// The domains people most often mistype, and the only ones we ever suggest.
const POPULAR = [
  'gmail.com',
  'googlemail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'live.com',
  'msn.com',
  'aol.com',
  'icloud.com',
  'me.com',
  'mac.com',
  'protonmail.com',
  'proton.me',
  'comcast.net',
  'verizon.net',
  'att.net',
  'sbcglobal.net',
  'bellsouth.net',
  'charter.net',
  'cox.net',
  'earthlink.net',
  'yandex.ru',
  'mail.ru',
  'rambler.ru',
  'gmx.de',
  'gmx.net',
  'web.de',
  't-online.de',
  'freenet.de',
  'orange.fr',
  'wanadoo.fr',
  'laposte.net',
  'free.fr',
  'libero.it',
  'virgilio.it',
  'hotmail.co.uk',
  'hotmail.fr',
  'yahoo.co.uk',
  'yahoo.fr',
  'yahoo.co.jp',
  'yahoo.co.in',
  'yahoo.com.br',
  'btinternet.com',
  'qq.com',
  '163.com',
  '126.com',
  'naver.com',
  'hanmail.net',
  'rediffmail.com',
  'ymail.com',
  'rocketmail.com',
  'zoho.com',
  'fastmail.com',
  'tutanota.com',
  'uol.com.br',
  'bol.com.br',
  'terra.com.br',
  'seznam.cz',
  'wp.pl',
  'o2.pl',
  'interia.pl'
]
// Mistyped suffixes that are not real TLDs, or real ones practically never meant in an address.
const SUFFIX_TYPOS: Record<string, string> = {
  con: 'com',
  cmo: 'com',
  ocm: 'com',
  vom: 'com',
  xom: 'com',
  comm: 'com',
  coom: 'com',
  cpm: 'com',
  c0m: 'com',
  co: 'com',
  cm: 'com',
  om: 'com',
  comn: 'com',
  colm: 'com',
  cim: 'com',
  nte: 'net',
  ner: 'net',
  nett: 'net',
  ne: 'net',
  met: 'net',
  ogr: 'org',
  orgg: 'org',
  rog: 'org',
  prg: 'org',
  'co.uj': 'co.uk',
  'co.ik': 'co.uk',
  'cp.uk': 'co.uk',
  'com.bt': 'com.br'
}

interface Split {
  name: string
  suffix: string
}
const popular = POPULAR.map((d): Split & { domain: string } => ({ domain: d, ...split(d) }))

function split(domain: string): Split {
  const suffix = parse(domain).publicSuffix ?? domain.slice(domain.lastIndexOf('.') + 1)
  return { name: domain.slice(0, Math.max(0, domain.length - suffix.length - 1)), suffix }
}

/** Optimal-string-alignment distance (edits plus adjacent transpositions), capped at `max + 1`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1
  let prev2: number[] = []
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const cur = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, prev2[j - 2]! + 1)
      cur.push(v)
      best = Math.min(best, v)
    }
    if (best > max) return max + 1
    prev2 = prev
    prev = cur
  }
  return prev[b.length]!
}

// Names of popular providers are short words: allow one edit below 8 letters (typed and known), two from 8 on,
// and for names of <= 4 letters only a swap of neighbours (lvie → live; love.com stays love.com).
function allowedEdits(typed: string, name: string): number {
  return Math.min(typed.length, name.length) >= 8 ? 2 : 1
}

function isSwap(a: string, b: string): boolean {
  if (a.length !== b.length) return false
  const diff: number[] = []
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) diff.push(i)
  return diff.length === 2 && diff[1] === diff[0]! + 1 && a[diff[0]!] === b[diff[1]!] && a[diff[1]!] === b[diff[0]!]
}

/**
 * The popular mail domain `domain` is most likely a typo of, or `null`. Never suggests for a
 * domain that is itself a known provider or organisation (allow-list), and only when one
 * popular domain is clearly closest: the provider name within one edit (two for names of 8+
 * letters, a swap of neighbours for names of <= 4), with the same suffix or a suffix typo
 * (`con`, `cmo`, `co` for `com` …). `domain` is lower-case ASCII.
 */
export function suggestDomain(domain: string): string | null {
  const d = domain.toLowerCase()
  // Pure and ~5 µs (an edit distance to every popular domain), while forms repeat the same few
  // domains: remembered per domain ('' for none, as the cache holds no null).
  const known = remembered.get(d)
  if (known !== undefined) return known === '' ? null : known
  const suggestion = closestPopular(d)
  remembered.set(d, suggestion ?? '')
  return suggestion
}

const remembered = new LRUCache<string, string>({ max: 10_000 })

function closestPopular(d: string): string | null {
  if (d === '' || allowList().has(d)) return null
  if (!d.includes('.')) {
    // A missing dot: gmailcom → gmail.com.
    const hit = popular.find((p) => p.domain.replace(/\./g, '') === d)
    return hit?.domain ?? null
  }
  const typed = split(d)
  const info = parse(d)
  let best: string | null = null
  let bestScore = Infinity
  let tie = false
  for (const p of popular) {
    let suffixCost: number
    if (typed.suffix === p.suffix) suffixCost = 0
    else if (SUFFIX_TYPOS[typed.suffix] === p.suffix || (info.isIcann !== true && distance(typed.suffix, p.suffix, 1) <= 1))
      suffixCost = 0.5
    else continue
    let nameCost: number
    if (typed.name === p.name) nameCost = 0
    else if (p.name.length <= 4) nameCost = isSwap(typed.name, p.name) ? 1 : Infinity
    else nameCost = distance(typed.name, p.name, allowedEdits(typed.name, p.name))
    if (nameCost > allowedEdits(typed.name, p.name)) continue
    const score = nameCost + suffixCost
    if (score === 0) return null
    if (score < bestScore) {
      best = p.domain
      bestScore = score
      tie = false
    } else if (score === bestScore) tie = true
  }
  return tie ? null : best
}
