// The sign-up view: a name and an email become a Free account and its key, shown once; refusals say why.
import { byId, callApi, copyText, problem } from './common.js'

const form = byId('signup-form')
const fields = { name: byId('signup-name'), email: byId('signup-email') }
const errors = { name: byId('signup-name-error'), email: byId('signup-email-error') }
const alertBox = byId('signup-alert')
const result = byId('signup-result')

function clear() {
  for (const field of Object.keys(fields)) {
    errors[field].hidden = true
    errors[field].textContent = ''
    fields[field].removeAttribute('aria-invalid')
  }
  alertBox.hidden = true
  alertBox.textContent = ''
}

function fieldError(field, message) {
  errors[field].textContent = message
  errors[field].hidden = false
  fields[field].setAttribute('aria-invalid', 'true')
  fields[field].focus()
}

/** Starts the view; `onKey` signs in with the new key when the user opens the account. */
export function startSignup(settings, onKey) {
  for (const element of document.querySelectorAll('[data-field="signup-plan"]')) element.textContent = settings.signupPlan ?? 'free'
  let issued = ''
  form.addEventListener('submit', async (event) => {
    event.preventDefault()
    clear()
    const name = fields.name.value.trim()
    const email = fields.email.value.trim()
    if (name === '') return fieldError('name', 'Enter your name.')
    if (email === '') return fieldError('email', 'Enter your email address.')
    byId('signup-submit').disabled = true
    document.body.dataset.signup = 'sending'
    const reply = await callApi('signup', { method: 'POST', body: { name, email } })
    byId('signup-submit').disabled = false
    if (reply.status === 201) {
      issued = reply.body.key.key
      byId('signup-key').value = issued
      form.hidden = true
      result.hidden = false
      result.focus()
      document.body.dataset.signup = 'created'
      return
    }
    document.body.dataset.signup = 'refused'
    const field = reply.body?.field
    if ((reply.status === 422 || reply.status === 409) && (field === 'name' || field === 'email'))
      return fieldError(field, reply.body.detail)
    alertBox.textContent = problem(reply)
    alertBox.hidden = false
  })
  byId('signup-copy').addEventListener('click', () => copyText(issued, byId('signup-key'), byId('signup-copy-status')))
  byId('signup-open').addEventListener('click', () => {
    // The key leaves the sign-up form for the account view's memory; nothing is stored unless the user ticks "Remember".
    byId('signup-key').value = ''
    result.hidden = true
    form.hidden = false
    form.reset()
    onKey(issued)
    issued = ''
  })
}
