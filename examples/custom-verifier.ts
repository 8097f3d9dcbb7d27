// Wrap the shipped email verifier to add a rule of your own (here: a company block-list).
// Run: npx tsx examples/custom-verifier.ts
import express from 'express'
import { createEmailVerifier, userVerification, type EmailVerifier } from 'user-verification'

const blocked = new Set(['competitor.example'])
const base = createEmailVerifier()
const emailVerifier: EmailVerifier = {
  async verify(address) {
    const result = await base.verify(address)
    return blocked.has(result.domain) ? { ...result, disposable: true, 'the service': true } : result
  },
  close: () => base.close()
}

const app = express()
app.use('/api/v1', userVerification({ emailVerifier, store: 'memory://' }))
app.listen(3000)
