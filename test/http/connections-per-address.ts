// One client address cannot take the whole connection cap (attacker finding F1): past
// --max-connections-per-address its new connections are closed at once, while another address
// (127.0.0.2 on loopback) is still served.
import { existsSync } from 'node:fs'
import { connect } from 'node:net'
import t from 'tap'
import { rawRequest, targetOf, verificationRequest, type Target } from '../fixtures/raw-http.js'
import { cliPath, runCli, startServe } from '../fixtures/spawn-cli.js'
import { testVerifiers } from '../fixtures/test-verifiers.js'

if (!existsSync(cliPath)) {
  t.plan(0, `needs ${cliPath} (npm run build)`)
  process.exit(0)
}

const perAddress = 20
const { dnsServers } = await testVerifiers(t)
const store = `sqlite://${t.testdir()}/uv.sqlite`
const { key } = JSON.parse((await runCli(['keys', 'create', '--plan', 'pro', '--store', store, '--json'])).stdout) as { key: string }
const server = await startServe([
  '--store',
  store,
  '--no-demo-key',
  '--quiet',
  '--dns-servers',
  dnsServers.join(','),
  '--headers-timeout',
  '5000',
  '--max-connections',
  '100',
  '--max-connections-per-address',
  String(perAddress)
])
t.teardown(() => server.stop('SIGKILL'))
const target = targetOf(server.url)
const body = '{"model":"user_verification","firstname":"Jane"}'
const request = verificationRequest(key, body)
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A silent client of `to` from `localAddress`: connects and sends nothing; records when the server closed it. */
function silent(to: Target, localAddress: string) {
  const socket = connect({ ...to, localAddress, allowHalfOpen: true })
  socket.on('error', () => {})
  const opened = Date.now()
  let closedAfter: number | undefined
  const mark = () => (closedAfter ??= Date.now() - opened)
  socket.on('end', mark)
  socket.on('close', mark)
  return { closedAfter: () => closedAfter, destroy: () => socket.destroy() }
}

t.test('past the per-address cap an address is refused at once while another is served', async (t) => {
  const flood = Array.from({ length: 3 * perAddress }, () => silent(target, '127.0.0.1'))
  t.teardown(() => flood.forEach((client) => client.destroy()))
  await settle(500)
  const closed = flood.filter((client) => client.closedAfter() !== undefined)
  t.equal(closed.length, 2 * perAddress, `the ${2 * perAddress} connections past the cap were closed at once`)
  t.ok(
    closed.every((client) => client.closedAfter()! < 500),
    'within half a second'
  )

  const other = await rawRequest({ ...target, localAddress: '127.0.0.2' }, request)
  t.equal(other.status, 200, 'another client address is served meanwhile')
  const refused = await rawRequest({ ...target, localAddress: '127.0.0.1' }, request, 2000)
  t.match(refused, { status: undefined, closed: true }, 'the flooding address is closed without an answer')

  flood.forEach((client) => client.destroy())
  await settle(300)
  t.equal((await rawRequest({ ...target, localAddress: '127.0.0.1' }, request)).status, 200, 'served again once its connections closed')
  t.equal(server.stdout().match(/WRN_UV_CONNECTIONS_PER_ADDRESS/g)?.length, 1, 'logged once for the burst')
  t.notMatch(server.stdout(), /127\.0\.0\.1/, 'without the address')
})

t.test('UV_MAX_CONNECTIONS_PER_ADDRESS sets the cap as the flag does', async (t) => {
  const fromEnv = await startServe(['--store', 'memory://', '--no-demo-key', '--quiet', '--max-connections', '100'], {
    UV_MAX_CONNECTIONS_PER_ADDRESS: '2'
  })
  t.teardown(() => fromEnv.stop('SIGKILL'))
  const to = targetOf(fromEnv.url)
  const clients = Array.from({ length: 3 }, () => silent(to, '127.0.0.1'))
  t.teardown(() => clients.forEach((client) => client.destroy()))
  await settle(500)
  t.equal(
    clients.filter((client) => client.closedAfter() !== undefined).length,
    1,
    'one of its 3 connections is closed (the default cap is 25)'
  )
  t.equal((await rawRequest({ ...to, localAddress: '127.0.0.2' }, request)).status, 401, 'another address is answered')
})
