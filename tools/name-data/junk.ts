// Seeded generators of junk name values (label 0), one per category spam and lazy typing produce.
import { int, pick, type Rng } from './prng.js'

/** Junk categories, reported one by one. */
export const JUNK_CATEGORIES = [
  'keyboard_walk',
  'random_letters',
  'random_short',
  'consonant_run',
  'repeated',
  'digits',
  'letter_digit',
  'placeholder',
  'symbols',
  'emoji',
  'email_url',
  'injection',
  'sentence',
  'profanity',
  'overlong',
  'mixed_script'
] as const

/** One of {@link JUNK_CATEGORIES}. */
export type JunkCategory = (typeof JUNK_CATEGORIES)[number]

/** What the generators draw on. */
export interface JunkInputs {
  /** Real names of the same split side (for john123, homoglyph and email templates). */
  names: string[]
  words: string[]
  placeholders: readonly string[]
  profanity: readonly string[]
}

const ROWS = [
  'qwertyuiop',
  'asdfghjkl',
  'zxcvbnm',
  '1234567890', // QWERTY
  'azertyuiop',
  'qsdfghjklm',
  'wxcvbn', // AZERTY
  'qwertzuiop',
  'yxcvbnm', // QWERTZ
  'йцукенгшщзх',
  'фывапролджэ',
  'ячсмитьбю', // ЙЦУКЕН
  'ςερτυθιοπ',
  'ασδφγηξκλ' // Greek
]
const COLUMNS = [
  '1qaz',
  '2wsx',
  '3edc',
  '4rfv',
  '5tgb',
  '6yhn',
  '7ujm',
  '8ik,',
  '9ol.',
  '0p;/',
  'qaz',
  'wsx',
  'edc',
  'rfv',
  'tgb',
  'yhn',
  'ujm',
  'ik',
  'ol'
]
const LATIN = 'abcdefghijklmnopqrstuvwxyz'
const CONSONANTS = 'bcdfghjklmnpqrstvwxz'
const CYR = 'абвгдежзийклмнопрстуфхцчшщыэюя'
const CYR_CONS = 'бвгджзйклмнпрстфхцчшщ'
const GREEK = 'αβγδεζηθικλμνξοπρστυφχψω'
const SYMBOLS = '!@#$%^&*()_+-=[]{};:\'",.<>/?\\|`~'
const EMOJI = [
  '😀',
  '😂',
  '🤣',
  '😍',
  '🙂',
  '😎',
  '🔥',
  '💯',
  '👍',
  '🙏',
  '❤️',
  '✨',
  '🎉',
  '🐶',
  '🍕',
  '⚽',
  '🚀',
  '😈',
  '💩',
  '🤡',
  '👻',
  '🌟',
  '😭',
  '🥰',
  '🤔',
  '👀',
  '✌️',
  '🇺🇸',
  '👨‍👩‍👧'
]
const TLDS = ['com', 'net', 'org', 'io', 'de', 'ru', 'co.uk', 'fr', 'info', 'xyz', 'cn', 'br']
const INJECTIONS = [
  '<script>alert(1)</script>',
  '<script>',
  '</script>',
  '<img src=x onerror=alert(1)>',
  '<b>bold</b>',
  '<a href="x">',
  '" OR 1=1 --',
  "' OR '1'='1",
  "'; DROP TABLE users; --",
  "Robert'); DROP TABLE Students;--",
  "admin'--",
  '1; SELECT * FROM users',
  'UNION SELECT password FROM users',
  '{{7*7}}',
  '${7*7}',
  '${jndi:ldap://x/a}',
  '<?php echo 1; ?>',
  '<iframe src=javascript:alert(1)>',
  '../../etc/passwd',
  '%00',
  '\\x00',
  '<svg onload=alert(1)>',
  'javascript:alert(1)',
  '<%= 7*7 %>',
  '#{7*7}',
  '"><script>',
  "' AND SLEEP(5)--",
  'EXEC xp_cmdshell',
  'sleep(10)#',
  '|| ls -la',
  '$(whoami)',
  '`id`'
]
const SENTENCE_TEMPLATES = [
  'my name is {n}',
  'i am {n}',
  'this is {n}',
  'call me {n}',
  'hello my name is {n}',
  'not telling you',
  'none of your business',
  'i dont want to say',
  'why do you need this',
  'just testing the form',
  'prefer not to say',
  'buy cheap {w} now',
  'click here for free {w}',
  'best {w} online',
  'get rich quick',
  'check out my website',
  'visit my page'
]
const HOMOGLYPH: Record<string, string> = {
  a: 'а',
  e: 'е',
  o: 'о',
  p: 'р',
  c: 'с',
  x: 'х',
  y: 'у',
  i: 'і',
  A: 'А',
  E: 'Е',
  O: 'О',
  P: 'Р',
  C: 'С',
  H: 'Н',
  K: 'К',
  M: 'М',
  T: 'Т',
  B: 'В'
}

function letters(rng: Rng, alphabet: string, n: number): string {
  const chars = Array.from(alphabet)
  let s = ''
  for (let i = 0; i < n; i++) s += pick(rng, chars)
  return s
}

/** Random casing typical of forms: as is, lower, ALL CAPS or Title. */
function recase(rng: Rng, s: string): string {
  const r = rng()
  if (r < 0.5) return s
  if (r < 0.7) return s.toUpperCase()
  if (r < 0.9) return s.charAt(0).toUpperCase() + s.slice(1)
  return s.toLowerCase()
}

function walk(rng: Rng): string {
  const r = rng()
  if (r < 0.55) {
    const row = Array.from(pick(rng, ROWS))
    const len = 3 + int(rng, Math.min(8, row.length - 2))
    const start = int(rng, Math.max(1, row.length - len + 1))
    let s = row.slice(start, start + len).join('')
    if (rng() < 0.3) s = Array.from(s).reverse().join('')
    if (rng() < 0.2)
      s += Array.from(pick(rng, ROWS))
        .slice(0, 2 + int(rng, 3))
        .join('')
    return s
  }
  if (r < 0.75) {
    const k = 1 + int(rng, 3)
    const start = int(rng, COLUMNS.length - k)
    return COLUMNS.slice(start, start + k).join('')
  }
  // A random walk over neighbouring keys of one layout.
  const layout = [ROWS[0], ROWS[1], ROWS[2]] as string[]
  let row = int(rng, 3)
  let col = int(rng, 7)
  const len = 4 + int(rng, 6)
  let s = ''
  for (let i = 0; i < len; i++) {
    const line = layout[row] as string
    col = Math.max(0, Math.min(line.length - 1, col))
    s += line[col]
    const step = int(rng, 4)
    if (step === 0) col++
    else if (step === 1) col--
    else if (step === 2) row = Math.min(2, row + 1)
    else row = Math.max(0, row - 1)
  }
  return s
}

/** One junk value of a category. */
export function generateJunk(rng: Rng, category: JunkCategory, inp: JunkInputs): string {
  switch (category) {
    case 'keyboard_walk':
      return recase(rng, walk(rng))
    case 'random_letters': {
      const r = rng()
      const alpha = r < 0.75 ? LATIN : r < 0.9 ? CYR : GREEK
      // Random strings of 3-4 letters are often attested names; they are measured apart (random_short).
      return recase(rng, letters(rng, alpha, 5 + int(rng, 10)))
    }
    case 'random_short': {
      const r = rng()
      return recase(rng, letters(rng, r < 0.8 ? LATIN : r < 0.9 ? CYR : GREEK, 3 + int(rng, 2)))
    }
    case 'consonant_run': {
      const alpha = rng() < 0.85 ? CONSONANTS : CYR_CONS
      return recase(rng, letters(rng, alpha, 3 + int(rng, 9)))
    }
    case 'repeated': {
      const r = rng()
      if (r < 0.35) {
        const pool = `${LATIN}абвгдежзклмнαβγδ哈啊嗯ㅋㅎあア5`
        return recase(rng, pick(rng, Array.from(pool)).repeat(3 + int(rng, 8)))
      }
      const unit =
        r < 0.7
          ? letters(rng, LATIN, 2 + int(rng, 2))
          : pick(rng, ['la', 'ha', 'he', 'bla', 'asd', 'na', 'ab', 'xo', 'lol', 'ja', 'ка', 'ха', '哈哈', 'ㅋㅋ', 'ok', 'yo', 'da', 'ma'])
      return recase(rng, unit.repeat(2 + int(rng, 4)))
    }
    case 'digits': {
      const r = rng()
      if (r < 0.3) return '1234567890'.slice(0, 3 + int(rng, 7))
      if (r < 0.5) return String(int(rng, 10)).repeat(2 + int(rng, 8))
      if (r < 0.7) return `+${1 + int(rng, 98)} ${100 + int(rng, 899)} ${1000 + int(rng, 8999)}`
      return String(int(rng, 10 ** (1 + int(rng, 9))))
    }
    case 'letter_digit': {
      const r = rng()
      const name = pick(rng, inp.names)
      if (r < 0.45) return recase(rng, name.toLowerCase()) + String(int(rng, rng() < 0.5 ? 100 : 10000))
      if (r < 0.6) return String(int(rng, 100)) + name.toLowerCase()
      if (r < 0.8) {
        // leetspeak: replace one or two letters by digits.
        const map: Record<string, string> = { a: '4', e: '3', i: '1', o: '0', s: '5', t: '7', l: '1', g: '9', b: '8' }
        let s = name
        let done = 0
        s = Array.from(s)
          .map((ch) => (done < 2 && map[ch.toLowerCase()] !== undefined && rng() < 0.6 ? (done++, map[ch.toLowerCase()] as string) : ch))
          .join('')
        return done > 0 ? s : `${s}1`
      }
      return letters(rng, `${LATIN}0123456789`, 4 + int(rng, 8))
    }
    case 'placeholder': {
      const w = pick(rng, inp.placeholders)
      const r = rng()
      if (r < 0.35) return recase(rng, w)
      if (r < 0.5) return `${recase(rng, w)}${pick(rng, ['.', '!', '?', '...', '-', ':'])}`
      if (r < 0.6) return `${pick(rng, ['-', '"', '(', '[', '*', '<'])}${w}${pick(rng, ['-', '"', ')', ']', '*', '>'])}`
      if (r < 0.7) return `${recase(rng, w)} ${recase(rng, w)}`
      if (r < 0.8) return Array.from(w).join(pick(rng, ['.', ' ', '-', '_']))
      if (r < 0.9) return w.replace(/ /g, pick(rng, ['', '_', '-', '.']))
      return w.toUpperCase().replace(/ /g, '')
    }
    case 'symbols': {
      const r = rng()
      if (r < 0.4) return letters(rng, SYMBOLS, 1 + int(rng, 8))
      if (r < 0.6) return pick(rng, ['.', '-', '?', '*', '_', '#', '/', '!']).repeat(1 + int(rng, 6))
      const name = pick(rng, inp.names)
      const cut = int(rng, name.length + 1)
      return name.slice(0, cut) + letters(rng, '!@#$%^&*()_+=[]{};:",<>/?\\|~', 1 + int(rng, 3)) + name.slice(cut)
    }
    case 'emoji': {
      const r = rng()
      const e = Array.from({ length: 1 + int(rng, 4) }, () => pick(rng, EMOJI)).join('')
      if (r < 0.5) return e
      return rng() < 0.5 ? `${pick(rng, inp.names)} ${e}` : `${e}${pick(rng, inp.names)}`
    }
    case 'email_url': {
      const name =
        pick(rng, inp.names)
          .toLowerCase()
          .replace(/[^a-z]/g, '') || 'user'
      const dom = letters(rng, LATIN, 4 + int(rng, 6))
      const r = rng()
      if (r < 0.4) return `${name}${rng() < 0.4 ? String(int(rng, 100)) : ''}@${dom}.${pick(rng, TLDS)}`
      if (r < 0.6)
        return `${pick(rng, ['http://', 'https://', 'www.', 'http://www.'])}${dom}.${pick(rng, TLDS)}${rng() < 0.3 ? `/${letters(rng, LATIN, 4)}` : ''}`
      if (r < 0.8) return `${dom}.${pick(rng, TLDS)}`
      return `${name}.${letters(rng, LATIN, 3 + int(rng, 5))}@${pick(rng, ['gmail.com', 'yahoo.com', 'mail.ru', 'web.de', 'outlook.com'])}`
    }
    case 'injection': {
      const base = pick(rng, INJECTIONS)
      const r = rng()
      if (r < 0.5) return base
      if (r < 0.75) return `${pick(rng, inp.names)}${base}`
      return base.replace(/1/g, String(int(rng, 10))).replace(/alert/g, pick(rng, ['alert', 'prompt', 'confirm', 'eval']))
    }
    case 'sentence': {
      if (rng() < 0.4) {
        const t = pick(rng, SENTENCE_TEMPLATES)
        return recase(rng, t.replace('{n}', pick(rng, inp.names)).replace('{w}', pick(rng, inp.words)))
      }
      const n = 3 + int(rng, 6)
      return recase(rng, Array.from({ length: n }, () => pick(rng, inp.words)).join(' '))
    }
    case 'profanity': {
      const w = pick(rng, inp.profanity)
      const r = rng()
      if (r < 0.5) return recase(rng, w)
      if (r < 0.65) return w.replace(/[aeiou]/, pick(rng, ['*', '@', '#', '!']))
      if (r < 0.75) return w.replace(/([aeiou])/, '$1$1$1')
      if (r < 0.9) return `${w}${pick(rng, ['you', 'off', 'er', 'face', 'head', 's', ' you', ' off', ' yourself'])}`
      return `${pick(rng, ['big', 'mr', 'ur', 'the', 'u'])} ${w}`
    }
    case 'overlong': {
      const r = rng()
      const len = 41 + int(rng, rng() < 0.2 ? 2000 : 120)
      if (r < 0.3) return letters(rng, LATIN, len)
      if (r < 0.6) {
        let s = ''
        while (s.length < len) s += pick(rng, inp.names) + (rng() < 0.5 ? ' ' : '')
        return s
      }
      if (r < 0.8) return pick(rng, inp.names).repeat(Math.ceil(len / 4))
      return Array.from({ length: Math.ceil(len / 6) }, () => pick(rng, inp.words)).join(' ')
    }
    case 'mixed_script': {
      const name = pick(rng, inp.names)
      const r = rng()
      if (r < 0.45) {
        // Homoglyph spoofing: a Latin name with a few Cyrillic look-alikes.
        let swapped = 0
        const s = Array.from(name)
          .map((ch) => {
            const h = HOMOGLYPH[ch]
            if (h !== undefined && (swapped === 0 || rng() < 0.3)) {
              swapped++
              return h
            }
            return ch
          })
          .join('')
        return swapped > 0 ? s : name + pick(rng, ['ов', 'ий', 'σ', 'λ'])
      }
      const other = pick(rng, ['李', '王', 'さ', 'ア', '김', 'ж', 'ш', 'λ', 'ω', 'ש', 'ع', 'क', 'ก'])
      const cut = 1 + int(rng, Math.max(1, name.length - 1))
      return name.slice(0, cut) + other + name.slice(cut)
    }
  }
}
