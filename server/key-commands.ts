// `keys create|list|revoke|plan` and `usage`: key management against a store, for people and scripts.
import { defaultPlans, issueKey, openStores, periodOf, type KeyRecord, type Stores } from '../lib/index.js'
import { redactUrl } from './serve.js'
import { usageReport } from './usage-report.js'

interface CommandSettings {
  store: string
  json: boolean
  plan?: string | undefined
  label?: string | undefined
}

/** A user mistake (unknown id, bad plan): exit 1 with the message. */
class CommandError extends Error {}

function print(line: string): void {
  process.stdout.write(line + '\n')
}

function planName(plan: string | undefined): string {
  if (plan === undefined) throw new CommandError(`--plan is required: one of ${Object.keys(defaultPlans).join(', ')}`)
  if (!(plan in defaultPlans)) throw new CommandError(`unknown plan "${plan}": use one of ${Object.keys(defaultPlans).join(', ')}`)
  return plan
}

async function withStores<T>(url: string, work: (stores: Stores) => Promise<T>): Promise<T> {
  let stores: Stores
  try {
    stores = await openStores(url)
  } catch (error) {
    throw new CommandError(`cannot open the store ${redactUrl(url)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    return await work(stores)
  } finally {
    await stores.close()
  }
}

async function existing(stores: Stores, id: string | undefined): Promise<KeyRecord> {
  if (id === undefined) throw new CommandError('a key id is required (see `keys list`)')
  const record = await stores.keys.getById(id)
  if (record === undefined) throw new CommandError(`no key with id "${id}"`)
  return record
}

function publicRecord(record: KeyRecord) {
  const { hash: _hash, ...rest } = record
  return rest
}

/** Runs `keys <action> …`. */
export async function runKeyCommand(positionals: string[], settings: CommandSettings): Promise<void> {
  const [action, id, plan] = positionals
  await withStores(settings.store, async (stores) => {
    switch (action) {
      case 'create': {
        const issued = await issueKey(stores.keys, planName(settings.plan), settings.label ?? null)
        if (settings.json) return print(JSON.stringify(issued))
        print(`Created ${issued.id} on the ${issued.plan} plan${issued.label ? ` (${issued.label})` : ''}. The key, shown only this once:`)
        return print(issued.key)
      }
      case 'list': {
        const records = await stores.keys.list()
        if (settings.json) return print(JSON.stringify(records.map(publicRecord)))
        if (records.length === 0) return print('No keys yet: `user-verification keys create --plan free`.')
        print(['id'.padEnd(18), 'plan'.padEnd(6), 'status'.padEnd(8), 'created'.padEnd(25), 'label'].join(' '))
        for (const r of records) {
          print(
            [r.id.padEnd(18), r.plan.padEnd(6), (r.revokedAt ? 'revoked' : 'active').padEnd(8), r.createdAt.padEnd(25), r.label ?? ''].join(
              ' '
            )
          )
        }
        return
      }
      case 'revoke': {
        const record = await existing(stores, id)
        const updated = record.revokedAt ? record : await stores.keys.update(record.id, { revokedAt: new Date().toISOString() })
        if (settings.json) return print(JSON.stringify({ id: record.id, revokedAt: updated?.revokedAt ?? null }))
        return print(`Revoked ${record.id}.`)
      }
      case 'plan': {
        const record = await existing(stores, id)
        const updated = await stores.keys.update(record.id, { plan: planName(plan) })
        if (settings.json) return print(JSON.stringify({ id: record.id, plan: updated?.plan }))
        return print(`${record.id} is now on the ${updated?.plan} plan.`)
      }
      default:
        throw new CommandError(`unknown keys action "${action ?? ''}": use create, list, revoke or plan`)
    }
  })
}

/** Runs `usage <id>`: units used in the current calendar month (UTC). */
export async function runUsageCommand(positionals: string[], settings: CommandSettings): Promise<void> {
  await withStores(settings.store, async (stores) => {
    const record = await existing(stores, positionals[0])
    const period = periodOf(Date.now())
    const report = usageReport(record, period, await stores.quota.get(record.id, period.id), defaultPlans)
    if (settings.json) return print(JSON.stringify(report))
    print(
      `${report.id} (${report.plan}): ${report.used} of ${report.limit} units used in ${report.period}; ${report.remaining} left; resets ${report.reset}.`
    )
  })
}
