// Several instances behind a load balancer share keys and exact quotas through Redis (needs `npm install @keyv/redis`).
// Run two copies: PORT=3001 npx tsx examples/redis-scale-out.ts & PORT=3002 npx tsx examples/redis-scale-out.ts
import express from 'express'
import { userVerification } from 'user-verification'

const app = express()
const verification = userVerification({ store: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' })
app.use('/api/v1', verification)
await verification.ready
const port = Number(process.env.PORT ?? 3001)
app.listen(port, '127.0.0.1', () => console.log(`listening on http://127.0.0.1:${port}/api/v1`))
process.on('SIGTERM', () => void verification.close().then(() => process.exit(0)))
