// `user-verification keys …`: create, list, rotate, revoke and re-plan API keys.
import type { Command } from 'commander'
import { runWithStores, withStoreOptions, type StoreCommandOptions } from './common.js'

/** Adds the `keys` command group to `program`. */
export function registerKeys(program: Command): void {
  const keys = program.command('keys').description('create, list, rotate and revoke API keys')

  withStoreOptions(
    keys
      .command('create')
      .description('create a key: with --plan, for a new account with that plan; with --account, another key of that account')
      .option('--plan <plan>', 'the plan of the new account (one of --plans)')
      .option('--account <account>', 'add the key to this existing account instead')
      .option('--label <text>', 'a note to tell keys apart, such as prod or ci bot')
  ).action((options: StoreCommandOptions & { plan?: string; account?: string; label?: string }) =>
    runWithStores(options, (ctx, commands) => commands.keysCreate(ctx, options), true)
  )

  withStoreOptions(
    keys.command('list').description('list keys (never the keys themselves)').option('--account <account>', 'only the keys of this account')
  ).action((options: StoreCommandOptions & { account?: string }) =>
    runWithStores(options, (ctx, commands) => commands.keysList(ctx, options))
  )

  withStoreOptions(
    keys
      .command('rotate')
      .description('issue a new key for the same account; the old one keeps working for the grace period')
      .argument('<key>', 'the id of the key to replace (key_…)')
      .option('--grace <duration>', 'how long the old key keeps working: 0, 30m, 24h, 7d', '0')
  ).action((id: string, options: StoreCommandOptions & { grace: string }) =>
    runWithStores(options, (ctx, commands) => commands.keysRotate(ctx, id, options))
  )

  withStoreOptions(
    keys.command('revoke').description('make a key answer 401 from the next request on').argument('<key>', 'the id of the key (key_…)')
  ).action((id: string, options: StoreCommandOptions) => runWithStores(options, (ctx, commands) => commands.keysRevoke(ctx, id)))

  withStoreOptions(
    keys
      .command('plan')
      .description("change the plan of a key's account (release 0.1.0's command; see accounts plan)")
      .argument('<key>', 'the id of the key (key_…)')
      .argument('<plan>', 'the new plan (one of --plans)')
  ).action((id: string, plan: string, options: StoreCommandOptions) =>
    runWithStores(options, (ctx, commands) => commands.keysPlan(ctx, id, plan))
  )
}
