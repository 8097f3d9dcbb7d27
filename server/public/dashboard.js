// The dashboard's entry: reads the server's settings, shows the views it offers, and switches views by the URL's hash.
import { focusAccount, signInWith, startAccount } from './account.js'
import { focusAdmin, startAdmin } from './admin.js'
import { byId, callApi, capitalise, el, numbers, problem, renderUpgrade } from './common.js'
import { startSignup } from './signup.js'

let offered = new Set(['account', 'plans'])

function show(view) {
  const wanted = offered.has(view) ? view : 'account'
  for (const section of document.querySelectorAll('section[data-view]')) section.hidden = section.dataset.view !== wanted
  for (const link of document.querySelectorAll('[data-nav]')) {
    if (link.dataset.nav === wanted) link.setAttribute('aria-current', 'page')
    else link.removeAttribute('aria-current')
  }
  document.body.dataset.current = wanted
  if (wanted === 'account') focusAccount()
  if (wanted === 'admin') focusAdmin()
}

function route() {
  show(window.location.hash.replace(/^#/, '') || 'account')
}

function showPlans(config) {
  byId('plans-table').tBodies[0].replaceChildren(
    ...config.plans.map((plan) =>
      el('tr', { 'data-plan': plan.name }, [
        el('td', { text: capitalise(plan.name) }),
        el('td', { class: 'num', text: numbers.format(plan.limit) })
      ])
    )
  )
  const upgrade = byId('plans-upgrade')
  upgrade.hidden = !config.upgrade
  renderUpgrade(upgrade, config.upgrade, 'Need more units?')
}

async function start() {
  const reply = await callApi('config')
  const config =
    reply.status === 200 ? reply.body : { plans: [], signup: false, admin: false, upgrade: null, api: 'api/v1', failed: problem(reply) }
  offered = new Set(['account', 'plans', ...(config.signup ? ['signup'] : []), ...(config.admin ? ['admin'] : [])])
  for (const link of document.querySelectorAll('[data-nav]')) link.hidden = !offered.has(link.dataset.nav)
  showPlans(config)
  startAccount(config)
  if (config.signup)
    startSignup(config, (key) => {
      window.location.hash = '#account'
      signInWith(key)
    })
  if (config.admin) startAdmin(config)
  if (config.failed) {
    byId('alert').textContent = config.failed
    byId('alert').hidden = false
  }
  window.addEventListener('hashchange', route)
  route()
  document.body.dataset.ready = 'true'
}

start()
