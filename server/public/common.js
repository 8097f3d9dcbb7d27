// What the dashboard's views share: calling the dashboard API, building elements from text only, formatting, the daily chart, copying.

export const byId = (id) => document.getElementById(id)

/** The dashboard API's base URL, relative to the page, so the dashboard also works under a mount prefix. */
const apiBase = new URL('dashboard/api/', window.location.href)

export const numbers = new Intl.NumberFormat()
export const dates = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeZone: 'UTC' })
export const shortDates = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' })
export const dateTimes = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short', timeZone: 'UTC' })
export const months = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' })

/** `localStorage`, or `undefined` where the browser refuses it. Used only when the user ticks "Remember". */
export function storage() {
  try {
    return window.localStorage
  } catch {
    return undefined
  }
}

/**
 * Calls the dashboard API. Credentials travel in headers only (no cookies: `credentials: 'omit'`).
 * Resolves to `{ status, body, headers }`; `status` 0 means the server could not be reached.
 */
export async function callApi(path, { method = 'GET', headers = {}, body } = {}) {
  let response
  try {
    response = await fetch(new URL(path, apiBase), {
      method,
      headers: { Accept: 'application/json', ...(body === undefined ? {} : { 'Content-Type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit'
    })
  } catch {
    return { status: 0, body: null, headers: new Headers() }
  }
  let parsed = null
  try {
    parsed = await response.json()
  } catch {}
  return { status: response.status, body: parsed, headers: response.headers }
}

/** A sentence for an answer that is not the one hoped for. */
export function problem(reply) {
  if (reply.status === 0) return 'Could not reach the server. Check your connection and try again.'
  if (reply.status === 429) {
    const wait = Number(reply.headers.get('Retry-After'))
    return `${reply.body?.detail ?? 'Too many requests'}. Try again in ${Number.isFinite(wait) && wait > 0 ? wait : 'a few'} seconds.`
  }
  if (reply.status === 503) {
    const wait = Number(reply.headers.get('Retry-After'))
    const after = Number.isFinite(wait) && wait > 0 ? ` Try again in ${wait} seconds.` : ' Try again shortly.'
    return `The usage store is unavailable right now.${after}`
  }
  if (typeof reply.body?.detail === 'string') return reply.body.detail
  return `Unexpected answer from the server (HTTP ${reply.status}).`
}

/**
 * Builds an element. Every piece of text goes in through `textContent`, never as HTML, so names,
 * labels and emails from the store can never become markup.
 */
export function el(tag, props = {}, children = []) {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue
    if (name === 'text') element.textContent = String(value)
    else if (name === 'class') element.className = value
    else if (name === 'dataset') Object.assign(element.dataset, value)
    else if (name.startsWith('on')) element.addEventListener(name.slice(2), value)
    else element.setAttribute(name, value === true ? '' : String(value))
  }
  for (const child of [children].flat()) {
    if (child === undefined || child === null || child === false) continue
    element.append(typeof child === 'string' ? document.createTextNode(child) : child)
  }
  return element
}

export function capitalise(text) {
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** A key's state in words: active, revoked, or in (or past) a rotation's grace period. */
export function keyStatus(key) {
  if (key.revokedAt !== null) return { text: `Revoked ${dateTimes.format(new Date(key.revokedAt))} UTC`, state: 'revoked' }
  if (key.expiresAt !== null) {
    const when = `${dateTimes.format(new Date(key.expiresAt))} UTC`
    return key.active ? { text: `Rotated: works until ${when}`, state: 'grace' } : { text: `Expired ${when}`, state: 'revoked' }
  }
  return key.active ? { text: 'Active', state: 'active' } : { text: 'Inactive', state: 'revoked' }
}

/** Copies `text`; on plain HTTP (no clipboard API) selects `input` for Ctrl+C instead. `status` gets the outcome. */
export async function copyText(text, input, status) {
  try {
    await navigator.clipboard.writeText(text)
    status.textContent = 'Copied to the clipboard.'
  } catch {
    if (input instanceof HTMLInputElement) {
      input.focus()
      input.select()
    } else {
      const range = document.createRange()
      range.selectNodeContents(input)
      const selection = window.getSelection()
      selection.removeAllRanges()
      selection.addRange(range)
      input.focus()
    }
    status.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy.'
  }
}

function cssColor(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || '#888'
}

/** Days of `period` (`YYYY-MM`) up to `today` (`YYYY-MM-DD`), as UTC midnights in seconds, with the units of each. */
function monthSeries(period, today, daily) {
  const units = new Map(daily.map((entry) => [entry.day, entry.units]))
  const [year, month] = period.split('-').map(Number)
  const lastDay = today.startsWith(period) ? Number(today.slice(8, 10)) : new Date(Date.UTC(year, month, 0)).getUTCDate()
  const xs = []
  const ys = []
  for (let day = 1; day <= lastDay; day++) {
    const id = `${period}-${String(day).padStart(2, '0')}`
    xs.push(Date.UTC(year, month - 1, day) / 1000)
    ys.push(units.get(id) ?? 0)
  }
  return [xs, ys]
}

const charts = new WeakMap()

/**
 * Draws the units per day of `period` as bars with uPlot (served from the package), in the page's
 * colours, and fills `summary` and the optional accessible `table` with the same figures.
 */
export function dailyChart(container, { period, daily, today, summary, table }) {
  const data = monthSeries(period, today, daily)
  const total = data[1].reduce((sum, units) => sum + units, 0)
  container.dataset.total = String(total)
  const busiest = daily.reduce((best, entry) => (best === undefined || entry.units > best.units ? entry : best), undefined)
  if (summary) {
    summary.textContent =
      total === 0
        ? 'No units used this month yet.'
        : `${numbers.format(total)} units this month; the busiest day was ${shortDates.format(new Date(`${busiest.day}T00:00:00Z`))} with ${numbers.format(busiest.units)}.`
  }
  if (table) {
    const body = table.tBodies[0]
    body.replaceChildren(...daily.map((entry) => el('tr', {}, [el('td', { text: entry.day }), el('td', { text: String(entry.units) })])))
  }
  charts.get(container)?.destroy()
  if (typeof window.uPlot !== 'function') {
    container.textContent = 'The chart could not be drawn.'
    return
  }
  const accent = cssColor('--accent')
  const muted = cssColor('--muted')
  const grid = cssColor('--border')
  const axis = { stroke: muted, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 } }
  const width = Math.max(240, container.clientWidth)
  const chart = new window.uPlot(
    {
      width,
      height: width < 480 ? 180 : 220,
      legend: { show: false },
      cursor: { drag: { x: false, y: false } },
      // Half a day either side, so the first and last bars are drawn whole.
      scales: {
        x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] },
        y: { range: (_u, _min, max) => [0, Math.max(5, Math.ceil(max * 1.15))] }
      },
      axes: [
        { ...axis, values: (_u, ticks) => ticks.map((tick) => String(new Date(tick * 1000).getUTCDate())) },
        { ...axis, size: 48, values: (_u, ticks) => ticks.map((tick) => (Number.isInteger(tick) ? numbers.format(tick) : '')) }
      ],
      series: [
        {},
        {
          label: 'Units',
          stroke: accent,
          fill: accent,
          width: 0,
          paths: window.uPlot.paths.bars({ size: [0.7, 28], align: 0 }),
          points: { show: false }
        }
      ]
    },
    data,
    container
  )
  charts.set(container, chart)
  resizeWith(container, chart)
}

const observed = new WeakSet()
function resizeWith(container, chart) {
  if (observed.has(container) || typeof ResizeObserver !== 'function') return
  observed.add(container)
  new ResizeObserver(() => {
    const current = charts.get(container)
    if (!current) return
    const width = Math.max(240, container.clientWidth)
    if (Math.abs(width - current.width) > 2) current.setSize({ width, height: width < 480 ? 180 : 220 })
  }).observe(container)
  void chart
}

/** Shows the operator's upgrade offer in `target`: a link when it has a URL, text otherwise. */
export function renderUpgrade(target, upgrade, lead) {
  target.replaceChildren()
  if (lead) target.append(lead, ' ')
  if (!upgrade) return
  if (upgrade.url) target.append(el('a', { href: upgrade.url, rel: 'noopener noreferrer', text: upgrade.text }))
  else target.append(upgrade.text)
}
