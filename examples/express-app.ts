// An existing Express 5 app that mounts the verification API at /api/v1 on the default SQLite store, and its dashboard at /dashboard.
// Run: npx tsx examples/express-app.ts (PORT sets the port), then create a key with `npx user-verification keys create --plan free`.
import express from 'express'
import { userVerification } from 'user-verification'
import { createDashboard } from 'user-verification/dashboard'

const app = express()
// The host's own parser may run first: a malformed or oversized body on /api/v1 still gets the API's JSON answer.
app.use(express.json())
const verification = userVerification({ store: 'sqlite://./user-verification.sqlite' })
app.use('/api/v1', verification)
// The account view at /dashboard; the admin view only with UV_ADMIN_TOKEN set (16+ characters), sign-up only when asked.
app.use(createDashboard(verification, { adminToken: process.env.UV_ADMIN_TOKEN, signup: false, upgrade: 'https://example.com/pricing' }))
app.get('/', (_req, res) => {
  res.send('POST /api/v1 with an X-API-Token header')
})

await verification.ready
const port = Number(process.env.PORT ?? 3000)
const server = app.listen(port, () => console.log(`listening on http://localhost:${port}/api/v1`))
process.on('SIGTERM', () => server.close(() => void verification.close()))
