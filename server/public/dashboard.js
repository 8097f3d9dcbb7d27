// The usage dashboard's behaviour: reads one key's usage from the server and shows it.
;(() => {
  const storageKey = 'user-verification.apiKey'
  const byId = (id) => document.getElementById(id)
  const form = byId('key-form')
  const input = byId('api-key')
  const toggle = byId('toggle-key')
  const remember = byId('remember')
  const submit = byId('submit')
  const status = byId('status')
  const alertBox = byId('alert')
  const keyError = byId('key-error')
  const result = byId('result')
  const bar = byId('bar')
  const barFill = byId('bar-fill')
  const barLabel = byId('bar-label')
  const curl = byId('curl')
  const copy = byId('copy')
  const copyStatus = byId('copy-status')

  // Relative to the page, so the dashboard also works when the app is mounted under a prefix.
  const usageUrl = new URL('dashboard/api/usage', window.location.href)
  const apiUrl = new URL('api/v1', new URL('.', window.location.href))
  const numbers = new Intl.NumberFormat()
  const dates = new Intl.DateTimeFormat(undefined, { dateStyle: 'long', timeZone: 'UTC' })
  const months = new Intl.DateTimeFormat(undefined, { month: 'long', year: 'numeric', timeZone: 'UTC' })

  function storage() {
    try {
      return window.localStorage
    } catch {
      return undefined
    }
  }

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
    for (const element of result.querySelectorAll(`[data-field="${name}"]`)) element.textContent = text
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

  function showUsage(usage, focus) {
    const month = result.querySelector('[data-field="month"]')
    month.dateTime = usage.period
    month.textContent = months.format(new Date(`${usage.period}-01T00:00:00Z`))
    setField('id', usage.id)
    setField('plan', usage.plan.charAt(0).toUpperCase() + usage.plan.slice(1))
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
    bar.dataset.level = share >= 1 ? 'full' : share >= 0.8 ? 'warn' : 'ok'
    barFill.style.width = `${percent}%`
    barLabel.textContent = text

    curl.textContent = curlExample()
    copyStatus.textContent = ''
    result.hidden = false
    setState('loaded')
    status.textContent = `Usage loaded for ${usage.id}.`
    // Move focus to the answer after a submit, so keyboard and screen-reader users land on it.
    if (focus) result.focus()
  }

  function fail(state, message) {
    result.hidden = true
    setState(state)
    showAlert(message)
  }

  async function load(key, focus) {
    clearMessages()
    result.hidden = true
    setState('loading')
    submit.disabled = true
    form.setAttribute('aria-busy', 'true')
    status.textContent = 'Loading usage…'
    try {
      let response
      try {
        response = await fetch(usageUrl, {
          headers: { 'X-API-Token': key, Accept: 'application/json' },
          cache: 'no-store',
          credentials: 'omit'
        })
      } catch {
        status.textContent = ''
        return fail('offline', 'Could not reach the server. Check your connection and try again.')
      }
      status.textContent = ''
      if (response.status === 200) {
        if (remember.checked) storage()?.setItem(storageKey, key)
        return showUsage(await response.json(), focus)
      }
      if (response.status === 401) {
        // A key the server refuses is never worth remembering.
        if (storage()?.getItem(storageKey) === key) storage()?.removeItem(storageKey)
        input.setAttribute('aria-invalid', 'true')
        return fail('invalid', 'This API key is not valid or has been revoked. Check that you pasted the whole key.')
      }
      if (response.status === 503) {
        const wait = Number(response.headers.get('Retry-After'))
        const after = Number.isFinite(wait) && wait > 0 ? ` Try again in ${wait} seconds.` : ' Try again shortly.'
        return fail('unavailable', `The usage store is unavailable right now.${after}`)
      }
      return fail('error', `Unexpected answer from the server (HTTP ${response.status}).`)
    } finally {
      submit.disabled = false
      form.removeAttribute('aria-busy')
    }
  }

  form.addEventListener('submit', (event) => {
    event.preventDefault()
    const key = input.value.trim()
    if (key === '') {
      clearMessages()
      result.hidden = true
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
  })

  toggle.addEventListener('click', () => {
    const shown = input.type === 'text'
    input.type = shown ? 'password' : 'text'
    toggle.textContent = shown ? 'Show' : 'Hide'
    toggle.setAttribute('aria-pressed', String(!shown))
    toggle.setAttribute('aria-label', shown ? 'Show API key' : 'Hide API key')
  })

  copy.addEventListener('click', async () => {
    const text = curl.textContent
    try {
      await navigator.clipboard.writeText(text)
      copyStatus.textContent = 'Copied to the clipboard.'
    } catch {
      // The clipboard API needs a secure context; on plain HTTP select the text for Ctrl+C instead.
      const range = document.createRange()
      range.selectNodeContents(curl)
      const selection = window.getSelection()
      selection.removeAllRanges()
      selection.addRange(range)
      curl.focus()
      copyStatus.textContent = 'Selected: press Ctrl+C (⌘C on a Mac) to copy.'
    }
  })

  toggle.setAttribute('aria-label', 'Show API key')
  setState('idle')
  const saved = storage()?.getItem(storageKey)
  if (saved) {
    input.value = saved
    remember.checked = true
    load(saved, false)
  } else {
    input.focus()
  }
})()
