// Accuracy and speed of our syntax check beside npm peers, on the public-suite corpus, in one process.
// Run: npx tsx benchmarks/email-syntax.bench.ts
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { checkEmailSyntax } from '../lib/email/syntax.js'

const require = createRequire(import.meta.url)
interface Case {
  address: string
  expected: 'Pass' | 'Fail'
}
const corpus = JSON.parse(readFileSync(new URL('../test/fixtures/email-syntax-corpus.json', import.meta.url), 'utf8')) as { cases: Case[] }

const validator = require('validator') as { isEmail(s: string): boolean }
const emailValidator = require('email-validator') as { validate(s: string): boolean }
const hapi = require('@hapi/address') as { isEmailValid(s: string): boolean }
const isemail = require('isemail') as { validate(s: string): boolean }
const emailAddresses = require('email-addresses') as { parseOneAddress(s: string): unknown }
const version = (p: string): string => (require(`${p}/package.json`) as { version: string }).version

const peers: Array<[string, (s: string) => boolean]> = [
  ['user-verification checkEmailSyntax', (s) => checkEmailSyntax(s) === 'Pass'],
  [`validator@${version('validator')} isEmail`, (s) => validator.isEmail(s)],
  [`email-validator@${version('email-validator')} validate`, (s) => emailValidator.validate(s)],
  [`@hapi/address@${version('@hapi/address')} isEmailValid`, (s) => hapi.isEmailValid(s)],
  [`isemail@${version('isemail')} validate`, (s) => isemail.validate(s)],
  [`email-addresses@${version('email-addresses')} parseOneAddress`, (s) => emailAddresses.parseOneAddress(s) !== null]
]

function safe(fn: (s: string) => boolean, s: string): boolean {
  try {
    return fn(s)
  } catch {
    return false
  }
}

const rows: string[] = []
const speeds: number[] = []
for (const [name, fn] of peers) {
  let correct = 0
  let falseAccept = 0
  let falseReject = 0
  for (const c of corpus.cases) {
    const accepted = safe(fn, c.address)
    if (accepted === (c.expected === 'Pass')) correct++
    else if (accepted) falseAccept++
    else falseReject++
  }
  for (let i = 0; i < 20; i++) for (const c of corpus.cases) safe(fn, c.address)
  let checks = 0
  const started = process.hrtime.bigint()
  let elapsed = 0
  while (elapsed < 400) {
    for (const c of corpus.cases) safe(fn, c.address)
    checks += corpus.cases.length
    elapsed = Number(process.hrtime.bigint() - started) / 1e6
  }
  const perSecond = checks / (elapsed / 1000)
  speeds.push(perSecond)
  rows.push(
    `| ${name} | ${((100 * correct) / corpus.cases.length).toFixed(1)}% | ${correct}/${corpus.cases.length} | ${falseAccept} | ${falseReject} | ${Math.round(perSecond).toLocaleString('en-US')} |`
  )
}
const peerSpeeds = speeds.slice(1).sort((a, b) => a - b)
const median = (peerSpeeds[(peerSpeeds.length - 1) >> 1]! + peerSpeeds[peerSpeeds.length >> 1]!) / 2
console.log(
  `Email syntax corpus: ${corpus.cases.length} cases (${corpus.cases.filter((c) => c.expected === 'Pass').length} Pass, ${corpus.cases.filter((c) => c.expected === 'Fail').length} Fail), each library with default options.\n`
)
console.log('| validator | accuracy | correct | false accepts | false rejects | checks/s |')
console.log('|---|---|---|---|---|---|')
for (const r of rows) console.log(r)
console.log(
  `\nOurs vs median peer speed: ${(speeds[0]! / median).toFixed(2)}x (median peer ${Math.round(median).toLocaleString('en-US')} checks/s)`
)
