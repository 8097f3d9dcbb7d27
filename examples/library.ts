// The library core: check a sign-up form inline, with no HTTP, keys or quota.
// Run: npx tsx examples/library.ts
import { createVerifier } from 'user-verification'

const verifier = createVerifier({ dnsTimeout: 2000 })
const result = await verifier.verify({ email: 'jane.doe@gmial.com', firstname: 'Jane', lastname: 'asdfgh' })
console.log(JSON.stringify(result, null, 2))
if (result.email_verification?.suggestion) console.log(`Did you mean ${result.email_verification.suggestion}?`)
verifier.close()
