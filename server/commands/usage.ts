// `user-verification usage <account|key>`: this month against the plan, and the history by month or day.
import type { Command } from 'commander'
import { runWithStores, withStoreOptions, type StoreCommandOptions } from './common.js'

/** Adds the `usage` command to `program`. */
export function registerUsage(program: Command): void {
  withStoreOptions(
    program
      .command('usage')
      .description('show an account’s usage this month against its plan, and its history')
      .argument('<account>', 'the id of the account (acct_…) or of one of its keys (key_…)')
      .option('--daily', 'units per UTC day (the last 31 days) instead of per month (the last 13 months)')
      .option('--from <date>', 'first month YYYY-MM (or day YYYY-MM-DD with --daily)')
      .option('--to <date>', 'last month YYYY-MM (or day YYYY-MM-DD with --daily)')
  ).action((id: string, options: StoreCommandOptions & { daily?: boolean; from?: string; to?: string }) =>
    runWithStores(options, (ctx, commands) => commands.usage(ctx, id, options))
  )
}
