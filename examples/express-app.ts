// An existing Express 5 app that mounts the verification API at /api/v1 on the default SQLite store, and its dashboard at /dashboard.
// Run: npx tsx examples/express-app.ts, then create a key with `npx user-verification keys create --plan free`.
import express from 'express'
import { userVerification } from 'user-verification'
import { createDashboard } from 'user-verification/dashboard'

const app = express()
app.use(express.json()) // optional: the middleware reads the body itself when no parser ran
const verification = userVerification({ store: 'sqlite://./user-verification.sqlite' })
app.use('/api/v1', verification)
// The account view at /dashboard; the admin view only with UV_ADMIN_TOKEN set (16+ characters), sign-up only when asked.
app.use(createDashboard(verification, { adminToken: process.env.UV_ADMIN_TOKEN, signup: false, upgrade: 'https://example.com/pricing' }))
app.get('/', (_req, res) => {
  res.send('POST /api/v1 with an X-API-Token header')
})

await verification.ready
const server = app.listen(3000, () => console.log('listening on http://localhost:3000/api/v1'))
process.on('SIGTERM', () => server.close(() => void verification.close()))
