// `user-verification accounts …`: create, list, re-plan, disable and enable accounts.
import type { Command } from 'commander'
import { runWithStores, withStoreOptions, type StoreCommandOptions } from './common.js'

/** Adds the `accounts` command group to `program`. */
export function registerAccounts(program: Command): void {
  const accounts = program.command('accounts').description('create, list, re-plan, disable and enable accounts')

  withStoreOptions(
    accounts
      .command('create')
      .description('create an account (then give it keys with keys create --account)')
      .requiredOption('--name <name>', 'the account holder, such as a company name')
      .option('--email <address>', 'a contact address (one account per address)')
      .option('--plan <plan>', 'the plan (one of --plans)')
  ).action((options: StoreCommandOptions & { name: string; email?: string; plan?: string }) =>
    runWithStores(options, (ctx, commands) => commands.accountsCreate(ctx, options), true)
  )

  withStoreOptions(accounts.command('list').description("list accounts with their plan, state and this month's usage")).action(
    (options: StoreCommandOptions) => runWithStores(options, (ctx, commands) => commands.accountsList(ctx))
  )

  withStoreOptions(
    accounts
      .command('plan')
      .description("change an account's plan; applies to its next request")
      .argument('<account>', 'the id of the account (acct_…)')
      .argument('[plan]', 'the new plan (one of --plans)')
      .option('--plan <plan>', 'the new plan, as an option')
  ).action((id: string, plan: string | undefined, options: StoreCommandOptions & { plan?: string }) =>
    runWithStores(options, (ctx, commands) => commands.accountsPlan(ctx, id, plan ?? options.plan))
  )

  for (const action of ['disable', 'enable'] as const) {
    withStoreOptions(
      accounts
        .command(action)
        .description(action === 'disable' ? 'make every key of an account answer 401' : 'let the keys of a disabled account work again')
        .argument('<account>', 'the id of the account (acct_…)')
    ).action((id: string, options: StoreCommandOptions) =>
      runWithStores(options, (ctx, commands) => commands.accountsDisable(ctx, id, action === 'disable'))
    )
  }
}
