// Placeholder and profanity lexicon lookups: keys, repeat squeezing, insult affixes, per-word hits.
import { K_DIGIT, K_LETTER, K_MARK, K_SPACE, classify } from './characters.js'

/** Words that mark a placeholder or profanity, compared after {@link lexiconKey}. */
export interface Lexicon {
  placeholder: Set<string>
  profanity: Set<string>
}

/** Lower-cased letters and digits only: `N/A` → `na`, `Your Name` → `yourname`. */
export function lexiconKey(lower: string): string {
  let out = ''
  let run = 0
  let i = 0
  // Runs of kept characters are appended as slices; a string of kept characters only is returned as is.
  for (const ch of lower) {
    const kind = classify(ch.codePointAt(0) as number) & 0xff
    if (kind !== K_LETTER && kind !== K_DIGIT && kind !== K_MARK) {
      if (i > run) out += lower.slice(run, i)
      run = i + ch.length
    }
    i += ch.length
  }
  return run === 0 ? lower : out + lower.slice(run, i)
}

// Longest key of each lexicon: longer strings cannot hit, so long inputs skip hashing and slicing.
const lexiconMax = new WeakMap<Lexicon, number>()

export function maxKeyLength(lex: Lexicon): number {
  let m = lexiconMax.get(lex)
  if (m === undefined) {
    m = 0
    for (const k of lex.placeholder) if (k.length > m) m = k.length
    for (const k of lex.profanity) if (k.length > m) m = k.length
    lexiconMax.set(lex, m)
  }
  return m
}

export function lexiconHit(lex: Lexicon, k: string, max: number): boolean {
  return k.length > 1 && k.length <= max && (lex.placeholder.has(k) || lex.profanity.has(k))
}

/** `fuuuuck` → `fuck`, `testtt` → `test`: runs of one character cut to one; '' once longer than `max` (no hit possible). */
export function squeezeRepeats(k: string, max: number): string {
  let out = ''
  let prev = ''
  for (const ch of k) {
    if (ch !== prev) {
      out += ch
      if (out.length > max) return ''
    }
    prev = ch
  }
  return out
}

const STEM_AFFIXES = ['you', 'off', 'face', 'head', 'er', 's', 'ed', 'ing', 'yourself', 'big', 'mr', 'ur', 'the', 'u', 'my', 'ya']

/** Lexicon hit after removing one common insult affix (`fuckyou`, `bigtest`), for words of >= 3 letters. */
export function stemHit(lex: Lexicon, k: string, max: number): boolean {
  for (const a of STEM_AFFIXES) {
    const rest = k.length - a.length
    if (rest >= 3 && rest <= max) {
      if (k.endsWith(a) && lexiconHit(lex, k.slice(0, rest), max)) return true
      if (k.startsWith(a) && lexiconHit(lex, k.slice(a.length), max)) return true
    }
  }
  return false
}

/** Whether any whitespace-separated word of `lower` (as `split(/\s+/)` cuts it) is a lexicon key. */
export function anyWordHit(lex: Lexicon, lower: string, max: number): boolean {
  let start = 0
  for (let i = 0; i <= lower.length; i++) {
    const c = i < lower.length ? lower.charCodeAt(i) : 0x20
    const space = c === 0x20 || (c >= 0x09 && c <= 0x0d) || (c >= 0xa0 && (classify(c) & 0xff) === K_SPACE)
    if (space) {
      if (i > start) {
        const k = lexiconKey(lower.slice(start, i))
        if (k.length > 0 && k.length <= max && (lex.placeholder.has(k) || lex.profanity.has(k))) return true
      }
      start = i + 1
    }
  }
  return false
}
