// Placeholder and profanity words (junk by design) and the real names that collide with them.
import { createRequire } from 'node:module'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'

const require = createRequire(import.meta.url)

/** Placeholder words people type instead of a name, in several languages (hand-written). */
export const PLACEHOLDERS: readonly string[] = [
  // English
  'test', 'testing', 'tester', 'test test', 'test user', 'testuser', 'asdf', 'asd', 'qwe', 'qwerty', 'none', 'null', 'n/a',
  'na', 'undefined', 'unknown', 'anonymous', 'anon', 'nobody', 'noname', 'no name', 'firstname', 'first name',
  'lastname', 'last name', 'surname', 'name', 'your name', 'yourname', 'my name', 'fname', 'lname', 'first', 'last',
  'full name', 'user', 'username', 'admin', 'administrator', 'guest', 'customer', 'client', 'sample', 'example',
  'demo', 'dummy', 'fake', 'foo', 'foobar', 'blah', 'blah blah', 'bla', 'blabla', 'xyz', 'abc', 'abcd', 'abcdef',
  'aaa', 'xxx', 'xx', 'zzz', 'mr', 'mrs', 'ms', 'miss', 'sir', 'madam', 'nothing', 'yes', 'ok', 'okay', 'hello',
  'hi', 'hey', 'idk', 'dunno', 'whatever', 'private', 'secret', 'nope', 'something', 'someone', 'somebody',
  'person', 'human', 'me', 'myself', 'tbd', 'tba', 'required', 'optional', 'not applicable', 'not available',
  'not provided', 'not given', 'default', 'temp', 'delete', 'deleted', 'remove', 'spam', 'bot', 'robot', 'lorem',
  'ipsum', 'lorem ipsum', 'random', 'password', 'pass', 'email', 'e-mail', 'mail', 'phone', 'address', 'company',
  'nope nope', 'no thanks', 'prefer not to say', 'rather not say', 'na na', 'void', 'empty', 'blank', 'missing',
  'invalid', 'error', 'sdf', 'sdfsdf', 'dfg', 'jkl', 'hjkl', 'zxc', 'zxcv', 'fdsa', 'lol', 'lmao', 'omg', 'wtf',
  'hahaha', 'haha', 'hehe', 'yo', 'dude', 'bro', 'mister', 'anyone', 'everyone', 'nonexistent', 'placeholder',
  'insert name', 'enter name', 'enter your name', 'type here', 'your first name', 'your last name', 'unnamed',
  // German, French, Spanish, Italian, Portuguese, Dutch, Polish, Turkish
  'vorname', 'nachname', 'keine', 'keiner', 'unbekannt', 'niemand', 'mustermann', 'beispiel', 'prénom', 'nom',
  'nom de famille', 'inconnu', 'aucun', 'anonyme', 'rien', 'nombre', 'apellido', 'ninguno', 'nadie', 'desconocido',
  'anónimo', 'prueba', 'fulano', 'mengano', 'nome', 'cognome', 'nessuno', 'sconosciuto', 'prova', 'sobrenome',
  'nenhum', 'ninguém', 'desconhecido', 'teste', 'voornaam', 'achternaam', 'geen', 'onbekend', 'imię', 'nazwisko',
  'brak', 'nieznany', 'isim', 'soyisim', 'soyad', 'yok', 'bilinmiyor',
  // Cyrillic, Greek, Arabic, Hebrew, Devanagari, Thai, Han, kana, Hangul
  'тест', 'имя', 'фамилия', 'нет', 'никто', 'неизвестно', 'аноним', 'пользователь', 'проверка', 'ім\'я', 'прізвище',
  'όνομα', 'επώνυμο', 'κανένας', 'δοκιμή', 'άγνωστος', 'اسم', 'لا يوجد', 'تجربة', 'مجهول', 'اختبار', 'שם',
  'בדיקה', 'אין', 'פלוני', 'טסט', 'नाम', 'परीक्षण', 'कोई नहीं', 'टेस्ट', 'ทดสอบ', 'ไม่มี', 'ชื่อ', 'นามสกุล',
  '测试', '無', '无', '名字', '姓名', '某某', '匿名', '测试用户', '名', '姓', 'テスト', 'なし', '名前', '名無し', 'ななし',
  '테스트', '없음', '이름', '익명', '성명',
]

/**
 * Real names that profanity lists contain; they stay real names (documented in the data card).
 * A placeholder that is also a rare surname (Null, Test, Name) stays junk by design.
 */
export const PROFANITY_NAME_ALLOW: readonly string[] = [
  'dick', 'fanny', 'gay', 'cummings', 'cumming', 'willy', 'randy', 'johnson', 'butts', 'cox', 'hoare', 'peter',
  'rod', 'wang', 'dong', 'bush', 'seaman', 'long', 'fuchs', 'kock', 'analise', 'hardy', 'woody', 'beaver', 'bunny',
  'cherry', 'candy', 'honey', 'sexton', 'lust', 'bone', 'booty', 'hooker', 'muff', 'shag', 'knob', 'cock', 'balls',
]

/** Profanity words from naughty-words (every language file), lower-cased and deduplicated. */
export function loadProfanity (): string[] {
  const dir = dirname(require.resolve('naughty-words/en.json'))
  const out = new Set<string>()
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.json') || f === 'package.json' || f === 'package-lock.json' || f === 'bower.json') continue
    const words = require(join(dir, f)) as unknown
    if (!Array.isArray(words)) continue
    for (const w of words) if (typeof w === 'string' && w.trim().length > 1) out.add(w.trim().toLowerCase())
  }
  return [...out].sort()
}
