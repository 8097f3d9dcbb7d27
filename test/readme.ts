// The README documents every error and warning code, and the set-up commands it promises.
import { readFileSync } from 'node:fs'
import t from 'tap'
import { errorCodes } from '../lib/errors.js'

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8')

t.test('every code is in the README table', async (t) => {
  for (const code of Object.keys(errorCodes)) t.match(readme, `| \`${code}\` |`, code)
})

t.test('the two set-up commands are there', async (t) => {
  t.match(readme, 'npm ci && npm start')
  t.match(readme, 'npm ci && npm test')
  t.notMatch(readme, /PLACEHOLDER/, 'no section left unwritten')
})
