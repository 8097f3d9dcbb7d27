// Cost of one email verification for crafted worst-case addresses (up to the 16 KiB body limit) beside a normal one.
// Run: npx tsx benchmarks/email-crafted.bench.ts   (UV_ROOT=/path/to/other/checkout measures that checkout's lib instead)
import { performance } from 'node:perf_hooks'
import { pathToFileURL } from 'node:url'

const root = process.env.UV_ROOT === undefined ? new URL('../', import.meta.url) : pathToFileURL(`${process.env.UV_ROOT}/`)
const { createEmailVerifier } = (await import(new URL('lib/email/verifier.ts', root).href)) as typeof import('../lib/email/verifier.js')
const v = createEmailVerifier({ resolver: { resolveMx: async () => [], resolve4: async () => [], resolve6: async () => [] } })
const LIMIT = 16 * 1024
const cases: Array<[string, string]> = [
  ['normal: user@gmail.com', 'user@gmail.com'],
  ['normal: someone@mailinator.com', 'someone@mailinator.com'],
  ['issue 10: x@ + "a." x 8110 + a', `x@${'a.'.repeat(8110)}a`],
  ['"a." x 8150 + mailinator.com', `x@${'a.'.repeat(8150)}mailinator.com`.slice(-LIMIT)],
  ['16 KiB local part @gmail.com', `${'a'.repeat(LIMIT - 10)}@gmail.com`],
  ['16 KiB "admin" x N local part', `${'admin'.repeat(3270)}@x.com`],
  ['"é." x 5400 + com (IDN)', `x@${'é.'.repeat(5400)}com`],
  ['16 KiB dotless domain', `x@${'g'.repeat(LIMIT - 2)}`],
  ['"-." x 8000', `x@${'-.'.repeat(8000)}com`],
  ['"@" x 16000', '@'.repeat(LIMIT)]
]
console.log(`| input | chars | µs per verify (median of 200) |`)
console.log('|---|---|---|')
for (const [name, address] of cases) {
  for (let i = 0; i < 20; i++) await v.verify(address)
  const times: number[] = []
  for (let i = 0; i < 200; i++) {
    const s = performance.now()
    await v.verify(address)
    times.push(performance.now() - s)
  }
  times.sort((a, b) => a - b)
  console.log(`| ${name} | ${address.length} | ${(times[100]! * 1000).toFixed(1)} |`)
}
v.close()
