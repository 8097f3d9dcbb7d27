// Connection-level guards of `serve`: a cap on open connections per client address, a cap on
// pipelined requests waiting on one connection, and a JSON answer to CONNECT (which Node hands to
// a 'connect' listener, or else closes without a byte).
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { ipKeyGenerator } from 'express-rate-limit'
import { throttledWarning } from '../lib/errors.js'
import type { Logger } from '../lib/index.js'

/** How long a refused client has to read its answer before its socket is destroyed, in ms. */
const lingerMs = 1000

/** Pipelined requests one connection may have waiting for the answers before theirs. */
export const maxQueuedPerConnection = 32

/** The default per-address cap: a quarter of the process's cap, so one client leaves room for others. */
export function defaultPerAddress(maxConnections: number): number {
  return Math.max(1, Math.floor(maxConnections / 4))
}

/**
 * Closes, at once, a new connection from an address (IPv6 grouped by /56, as the rate limits
 * are) that already holds `max` open connections: without it one client could take the whole
 * `--max-connections` cap and lock every other client out. `0` turns it off (a proxy in front
 * makes every client one address). Logged once per 10 s, without the address.
 */
export function capConnectionsPerAddress(server: Server, max: number, logger: Logger): void {
  if (max <= 0) return
  const open = new Map<string, number>()
  const warn = throttledWarning(logger, 'WRN_UV_CONNECTIONS_PER_ADDRESS', 10_000)
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress
    // Gone already (reset before we saw it): nothing to count.
    if (address === undefined) return void socket.destroy()
    const group = ipKeyGenerator(address, 56)
    const count = open.get(group) ?? 0
    if (count >= max) {
      socket.destroy()
      return warn('connection cap per client address reached; its new connections are closed', { maxPerAddress: max })
    }
    open.set(group, count + 1)
    socket.once('close', () => {
      const left = (open.get(group) ?? 1) - 1
      if (left <= 0) open.delete(group)
      else open.set(group, left)
    })
  })
}

/**
 * Node parses every request a client pipelines and queues their answers, however many: a client
 * that sends thousands on one connection and never reads would hold that many requests in memory.
 * Returns a check for each request that closes its connection once more than `max` requests wait
 * behind an unwritten answer (none of them has been worked on: the middleware takes a pipelined
 * request only in its turn). Browsers do not pipeline; clients that do rarely go past a few.
 */
export function limitPipelining(max: number, logger: Logger): (req: IncomingMessage, res: ServerResponse) => boolean {
  const waiting = new WeakMap<Socket, number>()
  const warn = throttledWarning(logger, 'WRN_UV_PIPELINING', 10_000)
  return (req, res) => {
    // An answer with a socket is the connection's current one: nothing waits in front of it.
    if (res.socket !== null) return false
    const socket = req.socket
    const count = (waiting.get(socket) ?? 0) + 1
    if (count > max) {
      if (!socket.destroyed) warn('a connection pipelined too many requests; it was closed', { maxQueued: max })
      socket.destroy()
      return true
    }
    waiting.set(socket, count)
    res.once('socket', () => waiting.set(socket, (waiting.get(socket) ?? 1) - 1))
    return false
  }
}

/** Writes a whole HTTP/1.1 answer `{ detail }` on a raw socket, then destroys it (soon, if the client does not read). */
export function answerOnSocket(socket: Duplex, status: number, extra: Record<string, string> = {}): void {
  const body = JSON.stringify({ detail: STATUS_CODES[status] })
  // end() alone only half-closes: a client that never closes its side (a silent socket past the
  // headers timeout) would keep the descriptor forever. Destroy once the answer is out, or soon.
  const timer = setTimeout(() => socket.destroy(), lingerMs)
  timer.unref()
  const headers = Object.entries({
    'Content-Type': 'application/json',
    'Content-Length': String(Buffer.byteLength(body)),
    Connection: 'close',
    ...extra
  })
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('')
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${headers}\r\n${body}`, () => {
    clearTimeout(timer)
    socket.destroy()
  })
}

/** CONNECT (a proxy tunnel) is no method of this API: 405 in JSON instead of a silent close. */
export function answerConnect(server: Server): void {
  server.on('connect', (_req: IncomingMessage, socket: Duplex) => answerOnSocket(socket, 405, { Allow: 'POST' }))
}
