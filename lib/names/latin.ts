// A Latin reading of any value (any-ascii, plus the inherent vowel of Indic consonants) so that the large Latin part of the
// n-gram model can speak for scripts with few or no training names, and a name's diacritics never count against it.
import anyAscii from 'any-ascii'

// Brahmic blocks laid out like Devanagari (Devanagari … Malayalam, 0x900–0xD7F): consonants at offsets 0x15–0x39 and
// 0x58–0x5F of each 0x80 block, dependent vowel signs 0x3E–0x4C, virama 0x4D, nukta 0x3C.
function brahmicRole(c: number): 0 | 1 | 2 {
  if (c >= 0x900 && c < 0xd80) {
    const o = c & 0x7f
    if ((o >= 0x15 && o <= 0x39) || (o >= 0x58 && o <= 0x5f)) return 1
    if ((o >= 0x3e && o <= 0x4d) || o === 0x3c || (o >= 0x62 && o <= 0x63)) return 2
    return 0
  }
  // Tibetan: consonants 0xF40–0xF6C and their subjoined forms 0xF90–0xFBC; vowel signs 0xF71–0xF7D and 0xF80–0xF84.
  if ((c >= 0xf40 && c <= 0xf6c) || (c >= 0xf90 && c <= 0xfbc)) return 1
  if ((c >= 0xf71 && c <= 0xf7d) || (c >= 0xf80 && c <= 0xf84)) return 2
  // Sinhala: consonants 0xD9A–0xDC6, al-lakuna 0xDCA and vowel signs 0xDCF–0xDDF.
  if (c >= 0xd9a && c <= 0xdc6) return 1
  if (c === 0xdca || (c >= 0xdcf && c <= 0xddf) || c === 0xdf2 || c === 0xdf3) return 2
  return 0
}

/**
 * The Latin reading of an NFC value: any-ascii's transliteration, where an Indic or Sinhala consonant with no vowel
 * sign or virama after it also gets its inherent `a` (any-ascii writes তনুশ্রী as `tnusri`; this reads `tanushri`).
 * Returns the value itself when it is already ASCII.
 */
export function latinReading(text: string): string {
  let ascii = true
  for (let i = 0; i < text.length; i++) {
    if (text.charCodeAt(i) >= 0x80) {
      ascii = false
      break
    }
  }
  if (ascii) return text
  let out = ''
  let cased = false
  const cps = Array.from(text)
  for (let i = 0; i < cps.length; i++) {
    const ch = cps[i] as string
    const c = ch.codePointAt(0) as number
    // Apostrophes of every kind read as the ASCII one (O’Brien, Kaʻiulani).
    if (c === 0x2019 || c === 0x2018 || c === 0x2bc || c === 0x2bb || c === 0x60) {
      out += "'"
      continue
    }
    // Tibetan syllable marks join syllables; a glottal apostrophe any-ascii writes for a letter (Ethiopic አ) is dropped.
    if (c === 0xf0b || c === 0xf0c) continue
    const r = anyAscii(ch)
    const lower = ch.toLowerCase()
    const hasCase = lower !== ch.toUpperCase()
    if (hasCase) cased = true
    if (c < 0x250 || (c >= 0x1e00 && c < 0x1f00)) out += r
    else {
      // One letter reads as one capitalised or lower-case syllable (any-ascii writes Cherokee Ꮙ as `Quo`).
      const l = r.replace(/'/g, '').toLowerCase()
      out += hasCase && ch !== lower ? l.charAt(0).toUpperCase() + l.slice(1) : l
    }
    if (brahmicRole(c) === 1) {
      const next = cps[i + 1]
      const n = next === undefined ? 0 : (next.codePointAt(0) as number)
      // A Tibetan consonant with a subjoined one under it (ས + ྟ) takes no vowel of its own.
      const stacked = n >= 0xf90 && n <= 0xfbc
      if (next === undefined || (brahmicRole(n) !== 2 && !stacked)) out += 'a'
    }
  }
  // Readings of uncased scripts are lower case; each word then starts with a capital, as names are written in Latin.
  // A cased value (Latin, Cyrillic, Greek…) keeps the case it was typed in.
  if (cased) return out
  return out.replace(/(^|[\s-])([a-z])/g, (_m, sep: string, ch: string) => sep + ch.toUpperCase())
}
