// `user-verification check`'s command line (commander); the command itself is server/commands/check.ts.
import { type Command, Option } from 'commander'
import { integer, UsageError } from './common.js'
import { addDnsOptions, dnsOptionsOf, type DnsFlags } from './dns-options.js'

interface CheckFlags extends DnsFlags {
  firstname?: string
  lastname?: string
  input?: string
  output?: string
  format?: 'csv' | 'jsonl'
  emailColumn?: string
  firstnameColumn?: string
  lastnameColumn?: string
  concurrency?: number
  overwrite?: boolean
  progressInterval?: number
  server?: string
  key?: string
  quiet?: boolean
  json?: boolean
}

/** Adds the `check` command to `program`. */
export function registerCheck(program: Command): void {
  const check = program
    .command('check')
    .description('check one address (and names), or a whole CSV or JSON Lines file; exit 3 when a file check stopped early')
    .argument('[email]', 'the address to check')
    .option('--firstname <name>', 'a first name to check')
    .option('--lastname <name>', 'a last name to check')
    .option('--input <file>', 'a CSV or JSON Lines file of values to check')
    .option('--output <file>', 'where to write the results (resumes a stopped run)')
    .addOption(new Option('--format <format>', 'the file format (default: from the file name)').choices(['csv', 'jsonl']))
    .option('--email-column <name>', 'the column holding addresses')
    .option('--firstname-column <name>', 'the column holding first names')
    .option('--lastname-column <name>', 'the column holding last names')
    .addOption(new Option('--concurrency <n>', 'rows checked at once').argParser(integer('concurrency', 1)))
    .option('--overwrite', 'replace an output file that does not match this input')
    .option('--server <url>', 'check through a running server instead of in this process')
    .addOption(new Option('--key <key>', 'the API key for --server').env('UV_API_KEY'))
    .addOption(new Option('--progress-interval <s>', 'seconds between progress lines').argParser(integer('progress-interval', 1)))
    .option('--quiet', 'no progress output')
    .option('--json', 'print JSON (the API answer, or the file summary)')
  addDnsOptions(check).action(async (email: string | undefined, o: CheckFlags) => {
    const { CheckError, runCheck } = await import('./check.js')
    try {
      process.exitCode = await runCheck({
        email,
        firstname: o.firstname,
        lastname: o.lastname,
        input: o.input,
        output: o.output,
        format: o.format,
        emailColumn: o.emailColumn,
        firstnameColumn: o.firstnameColumn,
        lastnameColumn: o.lastnameColumn,
        concurrency: o.concurrency,
        progressInterval: o.progressInterval,
        overwrite: o.overwrite ?? false,
        json: o.json ?? false,
        quiet: o.quiet ?? false,
        server: o.server,
        key: o.key,
        dns: dnsOptionsOf(o)
      })
    } catch (error) {
      // check's own usage mistakes (both --input and a value, a missing --output, …) exit 2 like the parser's.
      if (error instanceof CheckError) throw new UsageError(error.message)
      throw error
    }
  })
}
