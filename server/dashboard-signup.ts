// Self-serve sign-up: a name and an email, screened by this product's own checks, become an account and its first key.
import express from 'express'
import { addKey, createAccount, type Stores, type UserVerificationMiddleware, type Verifier } from '../lib/index.js'
import {
  bodyOf,
  bounded,
  isDuplicateAccount,
  readJson,
  sendDetail,
  sendJson,
  storesOf,
  text,
  unavailable,
  type AuditLog
} from './dashboard-http.js'

/** Why a sign-up was refused: the field it concerns and a sentence for the form. */
interface Refusal {
  field: 'name' | 'email'
  detail: string
}

/**
 * Screens a sign-up with the product's own verification: the email's syntax, its DNS check
 * (`Fail` refuses; `Unknown` means our resolver could not tell, which is not the user's fault)
 * and the disposable list, and each word-group of the name through the name model.
 */
export async function screenSignup(verifier: Verifier, name: string, email: string): Promise<Refusal | undefined> {
  // The first word as the first name and the rest as the last name, as the model was trained.
  const [first = '', ...rest] = name.split(/\s+/)
  const result = await verifier.verify({ email, firstname: first, lastname: rest.join(' ') })
  const mail = result.email_verification
  if (mail === undefined || mail.syntexCheck === 'Fail') return { field: 'email', detail: 'This email address is not valid.' }
  if (mail.disposable) return { field: 'email', detail: 'Disposable email addresses are not accepted. Use your own address.' }
  if (mail.dnsCheck === 'Fail') return { field: 'email', detail: `The domain ${mail.domain} does not receive email (DNS check failed).` }
  const names = result.name_verification
  if (names?.firstname?.prediction === 'LABEL_0' || names?.lastname?.prediction === 'LABEL_0') {
    return { field: 'name', detail: 'This does not look like a real name. Enter your name as you write it.' }
  }
  return undefined
}

/** The route `POST /dashboard/api/signup`. */
export function signupRoutes(
  middleware: UserVerificationMiddleware,
  settings: { verifier: Verifier; plan: string; now: () => number; audit: AuditLog; limiter: express.RequestHandler }
): express.Router {
  const { verifier, plan, now, audit } = settings
  const router = express.Router({ strict: true })

  router.post('/signup', settings.limiter, readJson, async (req, res) => {
    const body = bodyOf(req)
    const name = text(body, 'name', 120)
    const email = text(body, 'email', 254)
    if (name === undefined) return sendJson(res, 422, { detail: 'Enter your name.', field: 'name' })
    if (email === undefined) return sendJson(res, 422, { detail: 'Enter your email address.', field: 'email' })
    let refusal: Refusal | undefined
    try {
      refusal = await screenSignup(verifier, name, email)
    } catch {
      return unavailable(res)
    }
    if (refusal) return sendJson(res, 422, refusal)

    const open: Stores | undefined = await storesOf(middleware)
    if (!open) return unavailable(res)
    const taken = () => sendJson(res, 409, { detail: 'An account with this email address exists already.', field: 'email' })
    if ((await bounded(open.keys.getAccountByEmail(email))) !== undefined) return taken()
    const time = now()
    let accountId: string
    try {
      accountId = (await bounded(createAccount(open.keys, { name, email, plan }, time))).id
    } catch (error) {
      // Two sign-ups for one address at once: the store's unique email decides, the loser gets 409.
      if (isDuplicateAccount(error)) return taken()
      throw error
    }
    const issued = await bounded(addKey(open.keys, accountId, 'default', time))
    audit({ actor: 'signup', action: 'account.create', account: accountId, key: issued.id, plan })
    sendJson(res, 201, { account: { id: accountId, plan }, key: { id: issued.id, key: issued.key, label: issued.label } })
  })

  router.all('/signup', (_req, res) => {
    res.set('Allow', 'POST')
    sendDetail(res, 405, 'Method Not Allowed')
  })
  return router
}
