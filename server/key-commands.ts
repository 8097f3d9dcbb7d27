// `accounts …`, `keys …` and `usage`: opens the store, runs the command (server/account-commands.ts) and prints its output.
import { defaultPlans, openStores, type Stores } from '../lib/index.js'
import * as commands from './account-commands.js'
import { CommandError, type CommandContext, type CommandOutput } from './account-commands.js'
import { redactUrl } from './serve.js'

/** Options of the account, key and usage commands (each command reads the ones it takes). */
export interface CommandSettings {
  store: string
  json: boolean
  plan?: string | undefined
  label?: string | undefined
  account?: string | undefined
  name?: string | undefined
  email?: string | undefined
  grace?: string | undefined
  daily?: boolean | undefined
  from?: string | undefined
  to?: string | undefined
}

export { CommandError }

function print(output: CommandOutput, json: boolean): void {
  process.stdout.write(json ? JSON.stringify(output.json) + '\n' : output.text.map((line) => line + '\n').join(''))
}

async function withStores(settings: CommandSettings, work: (ctx: CommandContext) => Promise<CommandOutput>): Promise<void> {
  let stores: Stores
  try {
    stores = await openStores(settings.store)
  } catch (error) {
    throw new CommandError(`cannot open the store ${redactUrl(settings.store)}: ${error instanceof Error ? error.message : String(error)}`)
  }
  try {
    print(await work({ stores, plans: defaultPlans, now: Date.now }), settings.json)
  } finally {
    await stores.close()
  }
}

/** Runs `accounts <action> …`. */
export async function runAccountCommand(positionals: string[], settings: CommandSettings): Promise<void> {
  const [action, id, plan] = positionals
  await withStores(settings, async (ctx) => {
    switch (action) {
      case 'create':
        return commands.accountsCreate(ctx, settings)
      case 'list':
        return commands.accountsList(ctx)
      case 'plan':
        return commands.accountsPlan(ctx, id, plan ?? settings.plan)
      case 'disable':
      case 'enable':
        return commands.accountsDisable(ctx, id, action === 'disable')
      default:
        throw new CommandError(`unknown accounts action "${action ?? ''}": use create, list, plan, disable or enable`)
    }
  })
}

/** Runs `keys <action> …`. */
export async function runKeyCommand(positionals: string[], settings: CommandSettings): Promise<void> {
  const [action, id, plan] = positionals
  await withStores(settings, async (ctx) => {
    switch (action) {
      case 'create':
        return commands.keysCreate(ctx, settings)
      case 'list':
        return commands.keysList(ctx, settings)
      case 'rotate':
        return commands.keysRotate(ctx, id, settings)
      case 'revoke':
        return commands.keysRevoke(ctx, id)
      case 'plan':
        return commands.keysPlan(ctx, id, plan)
      default:
        throw new CommandError(`unknown keys action "${action ?? ''}": use create, list, rotate, revoke or plan`)
    }
  })
}

/** Runs `usage <account|key> [--daily] [--from] [--to]`. */
export async function runUsageCommand(positionals: string[], settings: CommandSettings): Promise<void> {
  await withStores(settings, (ctx) => commands.usage(ctx, positionals[0], settings))
}
