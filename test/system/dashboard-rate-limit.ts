// The dashboard's rate limits count where the API's do: on a Redis store, every instance shares one counter per address.
import type { AddressInfo } from 'node:net'
import { createClient } from '@keyv/redis'
import express from 'express'
import t, { type Test } from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { openStores, userVerification } from '../../lib/index.js'
import { createDashboard } from '../../server/dashboard.js'
import { uniqueNamespace } from '../fixtures/store-contract.js'

const url = process.env.UV_TEST_REDIS_URL
const skip = url === undefined || url === '' ? 'UV_TEST_REDIS_URL is not set: the shared-counter test needs Redis' : false
const quiet = { warn() {}, error() {}, info() {} }

/** One server instance: the API and the dashboard on its own connection to the shared Redis namespace. */
async function instance(t: Test, namespace: string) {
  const stores = await openStores(url!, { namespace, logger: quiet })
  const middleware = userVerification({ store: stores, logger: quiet })
  await middleware.ready
  const app = express()
  app.use('/api/v1', middleware)
  app.use(createDashboard(middleware, { logger: quiet, rateLimit: { perIp: 5 } }))
  const server = app.listen(0, '127.0.0.1')
  await new Promise((resolve) => server.once('listening', resolve))
  t.teardown(async () => {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
    await middleware.close()
    await stores.close()
  })
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('two instances on one Redis share the dashboard per-address limit', { skip }, async (t) => {
  const namespace = uniqueNamespace()
  const client = createClient({ url: url! })
  await client.connect()
  t.teardown(async () => {
    for await (const keys of client.scanIterator({ MATCH: `${namespace}-*`, COUNT: 500 })) if (keys.length > 0) await client.unlink(keys)
    await client.close()
  })
  const a = await instance(t, namespace)
  const b = await instance(t, namespace)
  // Within one second (the per-address window), alternating between the instances.
  const statuses: number[] = []
  for (let i = 0; i < 8; i++) statuses.push((await checkedFetch(`${i % 2 === 0 ? a : b}/dashboard/api/config`)).status)
  const window = Math.floor(Date.now() / 1000)
  t.equal(statuses.filter((s) => s === 200).length, 5, `5 per second across both instances (${statuses.join(',')})`)
  t.equal(statuses.filter((s) => s === 429).length, 3)
  const counters: string[] = []
  for await (const keys of client.scanIterator({ MATCH: `${namespace}-rl-dash-ip:*`, COUNT: 500 })) counters.push(...keys)
  // A window edge may fall inside the loop; then the counts split, which the assertion above would show.
  t.ok(counters.length >= 1 || Math.floor(Date.now() / 1000) !== window, 'the counter lives in Redis under the namespace')
})
