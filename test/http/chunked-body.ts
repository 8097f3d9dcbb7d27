// A chunked body declares no length (attacker finding of 2026-11-25): body-parser read and
// discarded all of it before its 413, so four connections streamed 2.77 GB in 5 s at a full core.
// Now the 413 goes out once the body passes the limit, and the connection is closed.
import { connect } from 'node:net'
import t from 'tap'
import { startApi } from '../fixtures/create-api.js'
import { targetOf } from '../fixtures/raw-http.js'

t.test('a chunked body past the limit gets 413 at once and its connection is closed', async (t) => {
  const api = await startApi()
  t.teardown(() => api.close())
  const { key } = await api.key('pro')
  const socket = connect(targetOf(api.url))
  socket.on('error', () => {})
  let received = ''
  let sent = 0
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')))
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  socket.write(
    `POST /api/v1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-API-Token: ${key}\r\nTransfer-Encoding: chunked\r\n\r\n`
  )
  // 4 KiB chunks, never the final one, for up to 8 MiB or until the server answers.
  const chunk = `1000\r\n${'{'.repeat(4096)}\r\n`
  for (let i = 0; i < 2048 && received === '' && !socket.destroyed; i++) {
    if (!socket.write(chunk)) await new Promise((resolve) => setTimeout(resolve, 5))
    sent += 4096
    if (i % 16 === 15) await new Promise((resolve) => setImmediate(resolve))
  }
  await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 3000))])
  t.match(received, /^HTTP\/1\.1 413 /, 'answered 413 (before: no answer until the last chunk)')
  t.match(received, /\{"detail":"Request Entity Too Large"\}|\{"detail":/, 'in JSON')
  t.ok(sent < 1024 * 1024, `the answer came after ${Math.round(sent / 1024)} KiB, not at the end of the stream`)
  t.ok(socket.destroyed || socket.readableEnded, 'the connection was closed')
  t.match(api.middleware.metrics().responses, { 413: 1 }, 'and the 413 is counted')
  // The server keeps serving.
  t.equal((await api.post({ model: 'user_verification', firstname: 'Jane' }, { token: key })).status, 200)
})

t.test('a chunked body within the limit is read and verified as usual', async (t) => {
  const api = await startApi()
  t.teardown(() => api.close())
  const { key } = await api.key('pro')
  const body = JSON.stringify({ model: 'user_verification', firstname: 'Jane' })
  const response = await fetch(api.endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-token': key },
    // A stream body makes fetch send it chunked.
    body: new Blob([body]).stream(),
    duplex: 'half'
  } as RequestInit)
  t.equal(response.status, 200)
  t.equal(((await response.json()) as { name_verification?: { firstname?: unknown } }).name_verification !== undefined, true)
})

t.test('every answer of the API is counted by status: 413, 405, 404 and 429 as well as the verification answers', async (t) => {
  const api = await startApi({ rateLimit: { perKey: 1 } })
  t.teardown(() => api.close())
  const { key } = await api.key('pro')
  const ok = { model: 'user_verification', firstname: 'Jane' }
  t.equal((await api.post(ok, { token: key })).status, 200)
  t.equal((await api.post(ok, { token: key })).status, 429)
  t.equal((await api.request('GET', '/api/v1')).status, 405)
  t.equal((await api.request('GET', '/api/v1/other')).status, 404)
  t.equal((await api.post('x'.repeat(100_000), { token: 'uv_other' })).status, 413)
  await new Promise((resolve) => setTimeout(resolve, 50))
  t.strictSame(api.middleware.metrics().responses, { 200: 1, 405: 1, 404: 1, 413: 1, 429: 1 }, 'before: only the 200 was counted')
})
