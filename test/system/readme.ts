// The README documents every error and warning code, and the set-up commands it promises.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { errorCodes } from '../../lib/errors.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

t.test('every code is in the README table', async (t) => {
  for (const code of Object.keys(errorCodes)) t.match(readme, `| \`${code}\` |`, code)
})

t.test('the two set-up commands are there', async (t) => {
  t.match(readme, 'npm ci && npm start')
  t.match(readme, 'npm ci && npm test')
  t.notMatch(readme, /PLACEHOLDER/, 'no section left unwritten')
})

t.test('every code the library uses is declared in errorCodes', async (t) => {
  const { readdirSync } = await import('node:fs')
  const files = readdirSync(new URL('../../lib/', import.meta.url), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'))
  const used = new Set<string>()
  for (const file of files) {
    for (const match of readFileSync(new URL(`../../lib/${file}`, import.meta.url), 'utf8').matchAll(/\b(?:ERR|WRN)_UV_[A-Z_]+\b/g))
      used.add(match[0])
  }
  t.ok(used.size > 5)
  for (const code of used) t.ok(code in errorCodes, `${code} is declared`)
})
