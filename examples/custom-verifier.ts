// Wrap the shipped email verifier to add a rule of your own (here: a company block-list).
// Run: npx tsx examples/custom-verifier.ts (PORT sets the port), then POST an address at competitor.example with the printed key.
import express from 'express'
import { createEmailVerifier, issueKey, openStores, userVerification, type EmailVerifier } from 'user-verification'

const blocked = new Set(['competitor.example'])
const base = createEmailVerifier()
const emailVerifier: EmailVerifier = {
  async verify(address) {
    const result = await base.verify(address)
    return blocked.has(result.domain) ? { ...result, disposable: true, 'the service': true } : result
  },
  close: () => base.close()
}

// In-memory stores hold no key yet: issue one for this demo (use sqlite:// and the CLI for real keys).
const store = await openStores('memory://')
const { key } = await issueKey(store.keys, 'free', 'custom-verifier demo')

const app = express()
app.use('/api/v1', userVerification({ emailVerifier, store }))
const port = Number(process.env.PORT ?? 3000)
app.listen(port, () => {
  console.log(`listening on http://localhost:${port}/api/v1`)
  console.log(`demo key: ${key}`)
  console.log(
    `try: curl -s http://localhost:${port}/api/v1 -H 'X-API-Token: ${key}' -H 'Content-Type: application/json' -d '{"model":"user_verification","email":"sales@competitor.example"}'`
  )
})
