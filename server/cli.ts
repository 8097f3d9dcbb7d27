#!/usr/bin/env node
// The `user-verification` command: parses the command line (commander) and hands each command group its own module.
import { readFileSync } from 'node:fs'
import { Command, CommanderError } from 'commander'
import { registerAccounts } from './commands/accounts.js'
import { registerCheck } from './commands/check-command.js'
import { exitCodes, UsageError, withoutPrefix } from './commands/common.js'
import { registerKeys } from './commands/keys.js'
import { registerServe } from './commands/serve.js'
import { registerUsage } from './commands/usage.js'

/** The package's version, from the package.json beside the source (server/) or the build (dist/server/). */
function version(): string {
  for (const path of ['../package.json', '../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(path, import.meta.url), 'utf8')) as { name?: string; version?: string }
      if (manifest.name === 'user-verification' && manifest.version) return manifest.version
    } catch {
      // Not this one: try the next place.
    }
  }
  return 'unknown'
}

/** Builds the program; each command group registers itself (add a group: one module in commands/, one line here). */
export function createProgram(): Command {
  const program = new Command('user-verification')
    .description('Screen sign-up and contact forms: serve the verification API, manage accounts and keys, show usage.')
    .version(version(), '-v, --version', 'print the version')
    // Subcommands inherit a one-line hint (their full help is long); the top level shows its command list.
    .showHelpAfterError('(add --help to see the options)')
    .exitOverride()
    .configureOutput({
      // commander's own messages ("error: …") in the product's voice; the range messages come from our parsers.
      outputError: (text, write) =>
        write(
          text
            .replace(/^error: option '[^']*' argument '[^']*' is invalid\. /, 'user-verification: ')
            .replace(/^error: option '[^']*' value '[^']*' from env '([^']*)' is invalid\. (.*)$/m, 'user-verification: $2 (from $1)')
            .replace(/^error: /, 'user-verification: ')
        )
    })
    .addHelpText(
      'after',
      '\nExit codes: 0 done, 1 the command failed (store, unknown id, …), 2 a usage error (unknown command or option, bad value).\nRun `user-verification <command> --help` for the options of a command.'
    )
  registerServe(program)
  registerAccounts(program)
  registerKeys(program)
  registerUsage(program)
  registerCheck(program)
  return program.showHelpAfterError(true)
}

async function main(argv: string[]): Promise<number> {
  const program = createProgram()
  if (argv.length === 0) {
    program.outputHelp()
    return exitCodes.ok
  }
  try {
    await program.parseAsync(argv, { from: 'user' })
    return exitCodes.ok
  } catch (error) {
    // commander has printed its message (and the help) already.
    if (error instanceof CommanderError) return error.exitCode === 0 ? exitCodes.ok : exitCodes.usage
    process.stderr.write(`user-verification: ${withoutPrefix(error)}\n`)
    return error instanceof UsageError ? exitCodes.usage : exitCodes.failure
  }
}

const code = await main(process.argv.slice(2))
// `serve` keeps running (its listeners hold the loop); the other commands end here.
if (code !== exitCodes.ok) process.exit(code)
