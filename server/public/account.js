// The account view: sign in with a key, see plan, usage, the daily chart and past months, manage keys, call the API.
import {
  byId,
  callApi,
  capitalise,
  copyText,
  dailyChart,
  dates,
  el,
  keyStatus,
  months,
  numbers,
  problem,
  renderUpgrade,
  shortDates,
  storage
} from './common.js'

const storageKey = 'user-verification.apiKey'
const form = byId('key-form')
const input = byId('api-key')
const toggle = byId('toggle-key')
const remember = byId('remember')
const submit = byId('submit')
const status = byId('status')
const alertBox = byId('alert')
const keyError = byId('key-error')
const result = byId('result')
const keysCard = byId('keys-card')
const tryCard = byId('try-card')
const bar = byId('bar')
const barFill = byId('bar-fill')
const barLabel = byId('bar-label')
const curl = byId('curl')

/** The signed-in key: in page memory only, unless the user ticked "Remember". */
let currentKey = ''
let config = { upgrade: null, api: 'api/v1', signup: false }
let apiUrl = new URL('api/v1', new URL('.', window.location.href))

function setState(state) {
  document.body.dataset.state = state
}

function showAlert(message) {
  alertBox.textContent = message
  alertBox.hidden = false
}

function clearMessages() {
  alertBox.hidden = true
  alertBox.textContent = ''
  keyError.hidden = true
  keyError.textContent = ''
  input.removeAttribute('aria-invalid')
  status.textContent = ''
}

function setField(name, text) {
  for (const element of document.querySelectorAll(`[data-field="${name}"]`)) element.textContent = text
}

function hidePanels() {
  result.hidden = true
  keysCard.hidden = true
  tryCard.hidden = true
}

function curlExample() {
  const body = JSON.stringify({ model: 'user_verification', email: 'jane.doe@gmail.com', firstname: 'Jane', lastname: 'Doe' })
  return [
    `curl -s -X POST '${apiUrl.href}' \\`,
    "  -H 'Content-Type: application/json' \\",
    '  -H "X-API-Token: $UV_API_KEY" \\',
    `  -d '${body}'`
  ].join('\n')
}

function showUsage(view) {
  const { usage } = view
  const month = result.querySelector('[data-field="month"]')
  month.dateTime = usage.period
  month.textContent = months.format(new Date(`${usage.period}-01T00:00:00Z`))
  setField('id', view.key)
  setField('account', view.account.id)
  setField('account-name', view.account.name)
  setField('plan', capitalise(view.account.plan))
  setField('used', numbers.format(usage.used))
  setField('limit', numbers.format(usage.limit))
  setField('remaining', numbers.format(usage.remaining))
  const reset = result.querySelector('[data-field="reset"]')
  reset.dateTime = usage.reset
  reset.textContent = dates.format(new Date(usage.reset))

  const share = usage.limit > 0 ? Math.min(1, usage.used / usage.limit) : 1
  const percent = Math.round(share * 100)
  const text = `${numbers.format(usage.used)} of ${numbers.format(usage.limit)} units used (${percent}%)`
  bar.setAttribute('aria-valuemax', String(usage.limit))
  bar.setAttribute('aria-valuenow', String(Math.min(usage.used, usage.limit)))
  bar.setAttribute('aria-valuetext', text)
  const level = share >= 1 || usage.remaining === 0 ? 'full' : share > 0.8 ? 'warn' : 'ok'
  bar.dataset.level = level
  barFill.style.width = `${percent}%`
  barLabel.textContent = text

  // Past 80%, and when the month's units are used up, point to the operator's upgrade offer.
  const upgrade = byId('upgrade')
  upgrade.hidden = level === 'ok'
  upgrade.dataset.level = level
  const lead =
    level === 'full'
      ? `You have used all ${numbers.format(usage.limit)} units of this month: requests answer 402 until ${dates.format(new Date(usage.reset))}.`
      : `You have used ${percent}% of this month's units.`
  renderUpgrade(byId('upgrade-text'), config.upgrade, lead)

  dailyChart(byId('daily-chart'), {
    period: usage.period,
    daily: view.daily,
    today: usage.today,
    summary: byId('daily-summary'),
    table: byId('daily-table')
  })

  const past = [...view.months].reverse()
  byId('months').tBodies[0].replaceChildren(
    ...past.map((entry) =>
      el('tr', {}, [
        el('td', {}, [el('time', { datetime: entry.period, text: months.format(new Date(`${entry.period}-01T00:00:00Z`)) })]),
        el('td', { class: 'num', text: numbers.format(entry.units) })
      ])
    )
  )
  byId('months').hidden = past.length === 0
  byId('months-empty').hidden = past.length > 0
}

function showKeys(view) {
  const rows = view.keys.map((key) => {
    const state = keyStatus(key)
    const own = key.id === view.key
    const actions = el('td', { class: 'actions' })
    if (key.active) {
      actions.append(
        el('button', { type: 'button', class: 'secondary small', 'data-action': 'rotate', 'data-key': key.id, text: 'Rotate' }),
        el('button', { type: 'button', class: 'danger small', 'data-action': 'revoke', 'data-key': key.id, text: 'Revoke' })
      )
    }
    return el('tr', { 'data-key': key.id }, [
      el('td', {}, [el('code', { text: key.id }), own ? el('span', { class: 'tag', text: 'this session' }) : null]),
      el('td', { text: key.label ?? '—' }),
      el('td', { class: 'col-created' }, [el('time', { datetime: key.createdAt, text: shortDates.format(new Date(key.createdAt)) })]),
      el('td', { class: `state-${state.state}`, text: state.text }),
      actions
    ])
  })
  byId('keys').tBodies[0].replaceChildren(...rows)
}

function showAccount(view, focus) {
  showUsage(view)
  showKeys(view)
  curl.textContent = curlExample()
  byId('copy-status').textContent = ''
  result.hidden = false
  keysCard.hidden = false
  tryCard.hidden = false
  byId('sign-in').hidden = true
  setState('loaded')
  status.textContent = `Account loaded for ${view.key}.`
  // Move focus to the answer after a submit, so keyboard and screen-reader users land on it.
  if (focus) result.focus()
}

function fail(state, message) {
  hidePanels()
  byId('sign-in').hidden = false
  setState(state)
  showAlert(message)
}

async function load(key, focus) {
  clearMessages()
  setState('loading')
  submit.disabled = true
  form.setAttribute('aria-busy', 'true')
  status.textContent = 'Loading your account…'
  try {
    const reply = await callApi('account', { headers: { 'X-API-Token': key } })
    status.textContent = ''
    if (reply.status === 200) {
      currentKey = key
      if (remember.checked) storage()?.setItem(storageKey, key)
      return showAccount(reply.body, focus)
    }
    currentKey = ''
    if (reply.status === 401) {
      // A key the server refuses is never worth remembering.
      if (storage()?.getItem(storageKey) === key) storage()?.removeItem(storageKey)
      input.setAttribute('aria-invalid', 'true')
      return fail('invalid', 'This API key is not valid or has been revoked. Check that you pasted the whole key.')
    }
    if (reply.status === 0) return fail('offline', problem(reply))
    return fail(reply.status === 503 ? 'unavailable' : reply.status === 429 ? 'limited' : 'error', problem(reply))
  } finally {
    submit.disabled = false
    form.removeAttribute('aria-busy')
  }
}

/** Reloads the signed-in account (after an action); signs out if the key stopped working. */
async function refresh() {
  if (currentKey === '') return
  const reply = await callApi('account', { headers: { 'X-API-Token': currentKey } })
  if (reply.status === 200) return showAccount(reply.body, false)
  if (reply.status === 401) {
    signOut()
    return fail('invalid', 'The key you signed in with no longer works (revoked or expired). Sign in with another key of the account.')
  }
  showAlert(problem(reply))
}

function signOut() {
  currentKey = ''
  storage()?.removeItem(storageKey)
  input.value = ''
  remember.checked = false
  hidePanels()
  byId('new-key').hidden = true
  byId('sign-in').hidden = false
  clearMessages()
  setState('idle')
  input.focus()
}

/** Shows a just-made key once, ready to copy. */
function showOnce(issued) {
  const panel = byId('new-key')
  panel.querySelector('[data-once="id"]').textContent = issued.id
  byId('new-key-value').value = issued.key
  byId('new-key-status').textContent = ''
  panel.hidden = false
  byId('new-key-value').focus()
  byId('new-key-value').select()
}

function keysAlert(message) {
  const box = byId('keys-alert')
  box.textContent = message ?? ''
  box.hidden = !message
}

async function keyAction(action, id) {
  keysAlert()
  if (action === 'revoke' && !window.confirm(`Revoke ${id}? Requests with it will answer 401 at once.`)) return
  const body = action === 'rotate' ? { grace: Number(byId('rotate-grace').value) } : undefined
  const reply = await callApi(`keys/${encodeURIComponent(id)}/${action}`, { method: 'POST', headers: { 'X-API-Token': currentKey }, body })
  if (reply.status === 201 && action === 'rotate') {
    // Rotating the key of this session moves the session to the new key.
    if (id === document.querySelector('[data-field="id"]').textContent) {
      currentKey = reply.body.key
      if (remember.checked) storage()?.setItem(storageKey, currentKey)
    }
    await refresh()
    showOnce(reply.body)
    document.body.dataset.lastAction = `rotated ${id}`
    return
  }
  if (reply.status === 200) {
    await refresh()
    document.body.dataset.lastAction = `revoked ${id}`
    return
  }
  keysAlert(problem(reply))
}

form.addEventListener('submit', (event) => {
  event.preventDefault()
  const key = input.value.trim()
  if (key === '') {
    clearMessages()
    hidePanels()
    setState('empty')
    keyError.textContent = 'Paste your API key first.'
    keyError.hidden = false
    input.setAttribute('aria-invalid', 'true')
    input.focus()
    return
  }
  if (!remember.checked) storage()?.removeItem(storageKey)
  load(key, true)
})

remember.addEventListener('change', () => {
  // Unticking forgets at once; ticking saves the key once the server has accepted it.
  if (!remember.checked) storage()?.removeItem(storageKey)
  else if (currentKey !== '') storage()?.setItem(storageKey, currentKey)
})

toggle.addEventListener('click', () => {
  const shown = input.type === 'text'
  input.type = shown ? 'password' : 'text'
  toggle.textContent = shown ? 'Show' : 'Hide'
  toggle.setAttribute('aria-pressed', String(!shown))
  toggle.setAttribute('aria-label', shown ? 'Show API key' : 'Hide API key')
})

byId('copy').addEventListener('click', () => copyText(curl.textContent, curl, byId('copy-status')))
byId('new-key-copy').addEventListener('click', () => copyText(byId('new-key-value').value, byId('new-key-value'), byId('new-key-status')))
byId('sign-out').addEventListener('click', signOut)

byId('keys').addEventListener('click', (event) => {
  const button = event.target.closest('button[data-action]')
  if (button) keyAction(button.dataset.action, button.dataset.key)
})

byId('new-key-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  keysAlert()
  const label = byId('new-key-label').value.trim()
  const reply = await callApi('keys', { method: 'POST', headers: { 'X-API-Token': currentKey }, body: label ? { label } : {} })
  if (reply.status !== 201) return keysAlert(problem(reply))
  byId('new-key-label').value = ''
  await refresh()
  showOnce(reply.body)
  document.body.dataset.lastAction = `created ${reply.body.id}`
})

byId('try-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const tryStatus = byId('try-status')
  const output = byId('try-result')
  const body = { model: 'user_verification' }
  for (const name of ['email', 'firstname', 'lastname']) {
    const value = byId(`try-${name}`).value.trim()
    if (value !== '') body[name] = value
  }
  if (Object.keys(body).length === 1) {
    tryStatus.textContent = 'Fill at least one field.'
    return
  }
  byId('try-submit').disabled = true
  tryStatus.textContent = 'Calling the API…'
  let response
  try {
    response = await fetch(apiUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-API-Token': currentKey },
      body: JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit'
    })
  } catch {
    tryStatus.textContent = 'Could not reach the API.'
    byId('try-submit').disabled = false
    return
  }
  const answer = await response.text()
  let shown = answer
  try {
    shown = JSON.stringify(JSON.parse(answer), null, 2)
  } catch {}
  output.textContent = shown
  output.hidden = false
  output.dataset.status = String(response.status)
  tryStatus.textContent = `HTTP ${response.status}${response.status === 200 ? ` · ${response.headers.get('X-Quota-Remaining')} units left this month` : ''}`
  byId('try-submit').disabled = false
  await refresh()
})

/** Starts the view once the page knows the server's settings. */
export function startAccount(settings) {
  config = settings
  apiUrl = new URL(settings.api, new URL('.', window.location.href))
  byId('signup-hint').hidden = !settings.signup
  toggle.setAttribute('aria-label', 'Show API key')
  setState('idle')
  const saved = storage()?.getItem(storageKey)
  if (saved) {
    input.value = saved
    remember.checked = true
    load(saved, false)
  }
}

/** Signs in with a key just issued (after sign-up). */
export function signInWith(key) {
  input.value = key
  load(key, true)
}

export function focusAccount() {
  if (currentKey === '') input.focus()
}
