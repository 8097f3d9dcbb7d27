// What every command group shares: option parsers that speak the product's words, the store and plans options, exit codes.
import { existsSync } from 'node:fs'
import { InvalidArgumentError, Option } from 'commander'
import { defaultPlans, planTable } from '../../lib/quota/plans.js'
import type { Stores } from '../../lib/types.js'
import type { CommandContext, CommandOutput } from '../account-commands.js'

/** Exit codes of the `user-verification` command, as the README documents them. */
export const exitCodes = { ok: 0, failure: 1, usage: 2 } as const

/** A mistake in the command line found after parsing: exit 2. */
export class UsageError extends Error {}

/** The command's modules, loaded only when a command runs, so `--help` and `--version` answer at once. */
export type Commands = typeof import('../account-commands.js')

/** The store when neither `--store` nor `UV_STORE` names one. */
export const defaultStore = 'sqlite://./user-verification.sqlite'

/** A commander argument parser for an integer in [min, max], failing with `--name must be …, got "text"`. */
export function integer(name: string, min: number, max = Number.MAX_SAFE_INTEGER): (text: string) => number {
  return (text) => {
    const value = Number(text)
    if (text.trim() === '' || !Number.isInteger(value) || value < min || value > max) {
      const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `from ${min} to ${max}`
      throw new InvalidArgumentError(`--${name} must be an integer ${range}, got "${text}"`)
    }
    return value
  }
}

/**
 * A yes/no variable such as `UV_SIGNUP`: `1`, `true`, `yes`, `on` or `0`, `false`, `no`, `off`
 * (any case); unset or empty is `false`. Anything else is a usage error: commander's own `.env()`
 * on a boolean flag would read `UV_SIGNUP=0` as on.
 */
export function envSwitch(name: string): boolean {
  const text = process.env[name]?.trim() ?? ''
  if (/^(?:1|true|yes|on)$/i.test(text)) return true
  if (/^(?:|0|false|no|off)$/i.test(text)) return false
  throw new UsageError(`${name} must be 1, true, yes or on (or 0, false, no, off), got "${text}"`)
}

/** Parses `free=25,basic=30000,pro=65000`: plan names and their units per calendar month (UTC). */
export function parsePlans(text: string): Record<string, number> {
  const plans: Record<string, number> = Object.create(null)
  const fail = (why: string) => {
    throw new InvalidArgumentError(`--plans must be name=units pairs separated by commas, such as free=25,basic=30000,pro=65000: ${why}`)
  }
  for (const entry of text.split(',').map((part) => part.trim())) {
    const match = /^([a-z][a-z0-9_-]{0,31})=(\d{1,12})$/i.exec(entry)
    // A leading letter also keeps out `__proto__`, which would be no plan but the object's prototype.
    if (match === null)
      fail(`"${entry}" is not name=units (a name that starts with a letter, then letters, digits, _ or -, and a whole number of units)`)
    const [, name, units] = match!
    if (name! in plans) fail(`plan "${name}" is given twice`)
    plans[name!] = Number(units)
  }
  return plans
}

/** `--store URL` (env `UV_STORE`). */
export function storeOption(): Option {
  return new Option('--store <url>', 'where keys and usage live: sqlite://path, redis://…, postgres://… or memory://')
    .env('UV_STORE')
    .default(defaultStore)
}

/** `--plans LIST` (env `UV_PLANS`): must match the server's so plan names and limits agree. */
export function plansOption(): Option {
  return new Option('--plans <list>', 'plans and their units per calendar month (UTC), name=units,…')
    .env('UV_PLANS')
    .argParser(parsePlans)
    .default(
      defaultPlans,
      Object.entries(defaultPlans)
        .map(([name, units]) => `${name}=${units}`)
        .join(',')
    )
}

/** Options every account, key and usage command takes. */
export interface StoreCommandOptions {
  store: string
  plans: Record<string, number>
  json?: boolean
  create?: boolean
}

/** Adds `--store`, `--plans`, `--create` and `--json` to a store command. */
export function withStoreOptions<T extends { addOption(option: Option): T; option(flags: string, description: string): T }>(command: T): T {
  return command
    .addOption(storeOption())
    .addOption(plansOption())
    .option('--create', 'start a new SQLite store when the file does not exist (create commands do so anyway)')
    .option('--json', 'print one line of JSON instead of text')
}

/** The file a `sqlite://` URL names, or `undefined` for other stores and in-memory SQLite. */
export function sqlitePath(url: string): string | undefined {
  if (!/^sqlite:\/\//i.test(url)) return undefined
  const path = url.slice('sqlite://'.length)
  return path === '' || path === ':memory:' ? undefined : path
}

/**
 * Opens the store named by `--store`. A missing SQLite file is refused unless `--create` (a typo
 * would otherwise answer from a new, empty store). `creates` commands (`keys create`, `accounts
 * create`) start a missing store themselves, as scripts provisioning a first key expect, and say so on stderr.
 */
export async function openCommandStores(options: StoreCommandOptions, creates = false): Promise<Stores> {
  const path = sqlitePath(options.store)
  const { CommandError } = await import('../account-commands.js')
  if (path !== undefined && !existsSync(path)) {
    if (!options.create && !creates)
      throw new CommandError(`no store at ${path}: check --store (or UV_STORE), or pass --create to start a new one there`)
    process.stderr.write(`user-verification: starting a new store at ${path}\n`)
  }
  const { openStores } = await import('../../lib/stores/open-stores.js')
  const { redactUrl } = await import('../serve.js')
  try {
    return await openStores(options.store)
  } catch (error) {
    throw new CommandError(`cannot open the store ${redactUrl(options.store)}: ${withoutPrefix(error)}`)
  }
}

/** The message of a thrown value without the package's `user-verification: ` prefix, which the CLI adds once. */
export function withoutPrefix(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).replace(/^(?:user-verification: )+/, '')
}

/** Opens the store, runs `work`, prints its output as text or JSON, and closes the store. */
export async function runWithStores(
  options: StoreCommandOptions,
  work: (ctx: CommandContext, commands: Commands) => Promise<CommandOutput>,
  creates = false
): Promise<void> {
  const stores = await openCommandStores(options, creates)
  try {
    const output = await work({ stores, plans: planTable(options.plans), now: Date.now }, await import('../account-commands.js'))
    process.stdout.write(options.json ? `${JSON.stringify(output.json)}\n` : output.text.map((line) => `${line}\n`).join(''))
  } finally {
    await stores.close()
  }
}
