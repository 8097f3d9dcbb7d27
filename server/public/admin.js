// The admin view: every account with this month's usage, search, create, change plan, disable/enable, revoke keys, charts.
import { byId, callApi, capitalise, copyText, dailyChart, el, keyStatus, months, numbers, problem, shortDates, storage } from './common.js'

const storageKey = 'user-verification.adminToken'
const form = byId('admin-form')
const tokenInput = byId('admin-token')
const remember = byId('admin-remember')
const panel = byId('admin-panel')
const errorBox = byId('admin-error')
const alertBox = byId('admin-alert')
const search = byId('admin-search')

/** The admin token: in page memory only, unless the operator ticked "Remember". */
let token = ''
let plans = []
let period = ''
let shownAccount = ''

const call = (path, options = {}) => callApi(`admin/${path}`, { ...options, headers: { Authorization: `Bearer ${token}` } })

function setState(state) {
  document.body.dataset.admin = state
}

function showAlert(message) {
  alertBox.textContent = message ?? ''
  alertBox.hidden = !message
}

function planSelect(account) {
  const select = el(
    'select',
    { 'aria-label': `Plan of ${account.name}`, 'data-action': 'plan', 'data-account': account.id },
    plans.map((plan) =>
      el('option', {
        value: plan.name,
        selected: plan.name === account.plan,
        text: `${capitalise(plan.name)} (${numbers.format(plan.limit)})`
      })
    )
  )
  return select
}

function accountRow(account) {
  const share = account.limit > 0 ? account.used / account.limit : 1
  const disabled = account.disabledAt !== null
  return el('tr', { 'data-account': account.id, class: disabled ? 'disabled' : undefined }, [
    el('td', {}, [
      el('button', { type: 'button', class: 'link', 'data-action': 'open', 'data-account': account.id, text: account.name }),
      el('div', { class: 'sub' }, [el('code', { text: account.id }), account.email ? ` · ${account.email}` : ''])
    ]),
    el('td', {}, [planSelect(account)]),
    el('td', {
      class: `num ${share >= 1 ? 'state-revoked' : share > 0.8 ? 'state-grace' : ''}`,
      text: `${numbers.format(account.used)} / ${numbers.format(account.limit)}`
    }),
    el('td', { class: disabled ? 'state-revoked' : 'state-active', text: disabled ? 'Disabled' : 'Active' }),
    el('td', { class: 'actions' }, [
      el('button', {
        type: 'button',
        class: disabled ? 'secondary small' : 'danger small',
        'data-action': disabled ? 'enable' : 'disable',
        'data-account': account.id,
        text: disabled ? 'Enable' : 'Disable'
      })
    ])
  ])
}

async function loadAccounts() {
  const reply = await call(`accounts${search.value.trim() ? `?q=${encodeURIComponent(search.value.trim())}` : ''}`)
  if (reply.status === 401) return signedOut('The admin token is no longer accepted.')
  if (reply.status !== 200) return showAlert(problem(reply))
  period = reply.body.period
  byId('admin-month').dateTime = period
  byId('admin-month').textContent = months.format(new Date(`${period}-01T00:00:00Z`))
  byId('admin-total').textContent = numbers.format(reply.body.total)
  byId('admin-accounts').tBodies[0].replaceChildren(...reply.body.accounts.map(accountRow))
  byId('admin-empty').hidden = reply.body.accounts.length > 0
  panel.dataset.accounts = String(reply.body.accounts.length)
}

async function loadTotal() {
  const reply = await call('daily')
  if (reply.status !== 200) return showAlert(problem(reply))
  dailyChart(byId('admin-chart'), { period, daily: reply.body.daily, today: reply.body.today, summary: byId('admin-chart-summary') })
}

async function openAccount(id, focus) {
  const reply = await call(`accounts/${encodeURIComponent(id)}`)
  if (reply.status !== 200) return showAlert(problem(reply))
  shownAccount = id
  const view = reply.body
  const detail = byId('admin-detail')
  byId('admin-detail-heading').textContent = view.account.name
  const set = (name, text) => (detail.querySelector(`[data-admin="${name}"]`).textContent = text)
  set('id', view.account.id)
  set('email', view.account.email ?? '—')
  set('plan', capitalise(view.account.plan))
  set('used', numbers.format(view.usage.used))
  set('limit', numbers.format(view.usage.limit))
  detail.hidden = false
  dailyChart(byId('admin-detail-chart'), {
    period: view.usage.period,
    daily: view.daily,
    today: view.usage.today,
    summary: byId('admin-detail-summary')
  })
  byId('admin-keys').tBodies[0].replaceChildren(
    ...view.keys.map((key) => {
      const state = keyStatus(key)
      return el('tr', { 'data-key': key.id }, [
        el('td', {}, [el('code', { text: key.id })]),
        el('td', { text: key.label ?? '—' }),
        el('td', { class: 'col-created' }, [el('time', { datetime: key.createdAt, text: shortDates.format(new Date(key.createdAt)) })]),
        el('td', { class: `state-${state.state}`, text: state.text }),
        el('td', { class: 'actions' }, [
          key.revokedAt === null
            ? el('button', { type: 'button', class: 'danger small', 'data-action': 'revoke', 'data-key': key.id, text: 'Revoke' })
            : null
        ])
      ])
    })
  )
  if (focus) detail.focus()
}

async function refreshAll() {
  await loadAccounts()
  await loadTotal()
  if (shownAccount) await openAccount(shownAccount, false)
}

async function signIn(candidate) {
  errorBox.hidden = true
  tokenInput.removeAttribute('aria-invalid')
  setState('loading')
  const reply = await callApi('admin/accounts', { headers: { Authorization: `Bearer ${candidate}` } })
  if (reply.status !== 200) {
    if (storage()?.getItem(storageKey) === candidate && reply.status === 401) storage()?.removeItem(storageKey)
    errorBox.textContent = reply.status === 401 ? 'This admin token is not valid.' : problem(reply)
    errorBox.hidden = false
    tokenInput.setAttribute('aria-invalid', 'true')
    setState(reply.status === 401 ? 'invalid' : 'error')
    return
  }
  token = candidate
  if (remember.checked) storage()?.setItem(storageKey, token)
  byId('admin-sign-in').hidden = true
  panel.hidden = false
  await refreshAll()
  setState('loaded')
}

function signedOut(message) {
  token = ''
  shownAccount = ''
  storage()?.removeItem(storageKey)
  tokenInput.value = ''
  remember.checked = false
  panel.hidden = true
  byId('admin-detail').hidden = true
  byId('admin-new-key').hidden = true
  byId('admin-sign-in').hidden = false
  errorBox.textContent = message ?? ''
  errorBox.hidden = !message
  setState('idle')
}

async function act(action, target) {
  showAlert()
  let reply
  if (action === 'plan')
    reply = await call(`accounts/${encodeURIComponent(target.dataset.account)}`, { method: 'PATCH', body: { plan: target.value } })
  else if (action === 'disable' || action === 'enable')
    reply = await call(`accounts/${encodeURIComponent(target.dataset.account)}`, {
      method: 'PATCH',
      body: { disabled: action === 'disable' }
    })
  else if (action === 'revoke') {
    if (!window.confirm(`Revoke ${target.dataset.key}? Requests with it will answer 401 at once.`)) return
    reply = await call(`keys/${encodeURIComponent(target.dataset.key)}/revoke`, { method: 'POST' })
  } else if (action === 'open') return openAccount(target.dataset.account, true)
  if (reply.status !== 200) return showAlert(problem(reply))
  await refreshAll()
  document.body.dataset.lastAction = `${action} ${target.dataset.account ?? target.dataset.key}`
}

for (const container of [byId('admin-accounts'), byId('admin-keys')]) {
  container.addEventListener('click', (event) => {
    const button = event.target.closest('button[data-action]')
    if (button) act(button.dataset.action, button)
  })
}
byId('admin-accounts').addEventListener('change', (event) => {
  if (event.target.matches('select[data-action="plan"]')) act('plan', event.target)
})

let searchTimer
search.addEventListener('input', () => {
  clearTimeout(searchTimer)
  searchTimer = setTimeout(loadAccounts, 200)
})

form.addEventListener('submit', (event) => {
  event.preventDefault()
  const candidate = tokenInput.value.trim()
  if (candidate === '') {
    errorBox.textContent = 'Enter the admin token.'
    errorBox.hidden = false
    tokenInput.setAttribute('aria-invalid', 'true')
    return
  }
  if (!remember.checked) storage()?.removeItem(storageKey)
  signIn(candidate)
})

remember.addEventListener('change', () => {
  if (!remember.checked) storage()?.removeItem(storageKey)
  else if (token !== '') storage()?.setItem(storageKey, token)
})

byId('admin-sign-out').addEventListener('click', () => signedOut())

byId('admin-create-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const errorText = byId('admin-create-error')
  errorText.hidden = true
  const name = byId('admin-create-name').value.trim()
  if (name === '') {
    errorText.textContent = 'Enter a name.'
    errorText.hidden = false
    return
  }
  const body = { name, plan: byId('admin-create-plan').value }
  const email = byId('admin-create-email').value.trim()
  const label = byId('admin-create-label').value.trim()
  if (email) body.email = email
  if (label) body.label = label
  const reply = await call('accounts', { method: 'POST', body })
  if (reply.status !== 201) {
    errorText.textContent = problem(reply)
    errorText.hidden = false
    return
  }
  event.target.reset()
  const box = byId('admin-new-key')
  box.querySelector('[data-once="account"]').textContent = reply.body.account.id
  byId('admin-new-key-value').value = reply.body.key.key
  byId('admin-new-key-status').textContent = ''
  box.hidden = false
  await refreshAll()
  document.body.dataset.lastAction = `created ${reply.body.account.id}`
})
byId('admin-new-key-copy').addEventListener('click', () =>
  copyText(byId('admin-new-key-value').value, byId('admin-new-key-value'), byId('admin-new-key-status'))
)

/** Starts the view with the server's plans; signs in with a remembered token. */
export function startAdmin(settings) {
  plans = settings.plans
  byId('admin-create-plan').replaceChildren(
    ...plans.map((plan) => el('option', { value: plan.name, text: `${capitalise(plan.name)} (${numbers.format(plan.limit)} units)` }))
  )
  setState('idle')
  const saved = storage()?.getItem(storageKey)
  if (saved) {
    tokenInput.value = saved
    remember.checked = true
    signIn(saved)
  }
}

export function focusAdmin() {
  if (token === '') tokenInput.focus()
}
