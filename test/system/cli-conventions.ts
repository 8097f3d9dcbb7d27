// The CLI's conventions: --version, per-command help with defaults, suggestions, range errors, exit codes, --create, --plans.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { startDnsServer } from '../fixtures/dns-server.js'
import { redisSkipReason, startPrivateRedis } from '../fixtures/private-redis.js'
import { runCli, startServe } from '../fixtures/spawn-cli.js'
import { testZone } from '../fixtures/test-verifiers.js'

const dir = mkdtempSync(join(tmpdir(), 'uv-cli-conventions-'))
t.teardown(() => rmSync(dir, { recursive: true, force: true }))
const dns = await startDnsServer(structuredClone(testZone))
t.teardown(() => dns.close())
let n = 0
const freshStore = () => `sqlite://${join(dir, `store-${++n}.sqlite`)}`
const body = JSON.stringify({ model: 'user_verification', email: 'jane.doe@acme-mail.com', firstname: 'Jane', lastname: 'Doe' })

async function post(url: string, key: string) {
  const response = await checkedFetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-token': key }, body })
  return { status: response.status, body: (await response.json()) as any }
}

t.test('conventions: --version, per-command --help with defaults, suggestions, range errors in our words, exit codes', async (t) => {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
  const shown = await runCli(['--version'])
  t.equal(shown.code, 0)
  t.equal(shown.stdout.trim(), version)

  const serveHelp = await runCli(['serve', '--help'])
  t.equal(serveHelp.code, 0)
  const help = { stdout: serveHelp.stdout.replace(/\s+/g, ' ') }
  t.match(help.stdout, /Usage: user-verification serve/)
  t.match(help.stdout, /--port <port> port to listen on[\s\S]*default: 8080, env: PORT/)
  t.match(help.stdout, /--dns-timeout <ms> deadline[\s\S]*default: 3000/)
  t.match(help.stdout, /--plans <list>[\s\S]*default: free=25,basic=30000,pro=65000, env: UV_PLANS/)
  t.match(help.stdout, /--max-connections-per-address <n>[\s\S]*\(env: UV_MAX_CONNECTIONS_PER_ADDRESS\)/)
  t.match(help.stdout, /--admin-token-file <file>[\s\S]*--signup let visitors[\s\S]*env: UV_SIGNUP=1/)
  const keysHelp = await runCli(['keys', 'rotate', '--help'])
  t.match(keysHelp.stdout.replace(/\s+/g, ' '), /--grace <duration>[\s\S]*\(default: "0"\)/)
  t.match((await runCli(['--help'])).stdout.replace(/\s+/g, ' '), /Exit codes: 0 done, 1 the command failed[\s\S]*2 a usage error/)

  const misspelt = await runCli(['kyes', 'list'])
  t.equal(misspelt.code, 2)
  t.match(misspelt.stderr, /unknown command 'kyes'\n\(Did you mean keys\?\)/)
  const flag = await runCli(['keys', 'list', '--stor', 'memory://'])
  t.equal(flag.code, 2)
  t.match(flag.stderr, /unknown option '--stor'\n\(Did you mean --store\?\)/)
  const sub = await runCli(['keys', 'lisst'])
  t.equal(sub.code, 2)
  t.match(sub.stderr, /Did you mean list\?/)

  const port = await runCli(['serve', '--port', '99999'])
  t.equal(port.code, 2)
  t.match(port.stderr, /^user-verification: --port must be an integer from 0 to 65535, got "99999"\n/)
  t.notMatch(port.stderr, /RangeError|ERR_|at /, 'no raw Node error or stack')
  const envPort = await runCli(['serve'], { PORT: 'eighty' })
  t.equal(envPort.code, 2)
  t.match(envPort.stderr, /--port must be an integer from 0 to 65535, got "eighty" \(from PORT\)/)
  const envPerAddress = await runCli(['serve'], { UV_MAX_CONNECTIONS_PER_ADDRESS: 'many' })
  t.equal(envPerAddress.code, 2)
  t.match(envPerAddress.stderr, /--max-connections-per-address must be an integer >= 0, got "many" \(from UV_MAX_CONNECTIONS_PER_ADDRESS\)/)
  for (const plans of ['free', 'free=25,free=30', 'free=-1', 'free=25,,pro=3', 'free=1.5', '__proto__=5']) {
    const bad = await runCli(['serve', '--plans', plans])
    t.equal(bad.code, 2, plans)
    t.match(bad.stderr, /--plans must be name=units pairs/, plans)
  }
  // F2: __proto__ can be no plan name, and the message says why.
  t.match((await runCli(['serve', '--plans', '__proto__=5'])).stderr, /"__proto__=5" is not name=units \(a name that starts with a letter/)
  // F2: a plan may be called "constructor" (it was refused as "given twice"); an account on an
  // unconfigured plan named after an Object.prototype member is refused like any unknown plan.
  const constructorPlan = await runCli([
    'accounts',
    'create',
    '--store',
    'memory://',
    '--plans',
    'constructor=5',
    '--plan',
    'constructor',
    '--name',
    'C'
  ])
  t.equal(constructorPlan.code, 0, constructorPlan.stderr)
  const protoPlan = await runCli(['accounts', 'create', '--store', 'memory://', '--plan', 'toString', '--name', 'T'])
  t.equal(protoPlan.code, 1)
  t.match(protoPlan.stderr, /unknown plan "toString"/)
  const envPlans = await runCli(['keys', 'list', '--store', 'memory://'], { UV_PLANS: 'gold' })
  t.equal(envPlans.code, 2)
  t.match(envPlans.stderr, /--plans must be name=units[\s\S]*\(from UV_PLANS\)/)
})

t.test('keys and usage refuse a SQLite file that does not exist unless --create; create commands start one', async (t) => {
  const path = join(dir, 'typo.sqlite')
  for (const args of [
    ['keys', 'list'],
    ['usage', 'acct_000000000000'],
    ['accounts', 'list'],
    ['keys', 'revoke', 'key_000000000000']
  ]) {
    const refused = await runCli([...args, '--store', `sqlite://${path}`])
    t.equal(refused.code, 1, args.join(' '))
    t.match(refused.stderr, /^user-verification: no store at .*typo\.sqlite: check --store \(or UV_STORE\), or pass --create/)
    t.notOk(existsSync(path), 'no file was created')
  }
  const created = await runCli(['keys', 'list', '--store', `sqlite://${path}`, '--create', '--json'])
  t.equal(created.code, 0, created.stderr)
  t.strictSame(JSON.parse(created.stdout), [])
  t.ok(existsSync(path))
  const other = join(dir, 'first.sqlite')
  const first = await runCli(['keys', 'create', '--plan', 'free', '--store', `sqlite://${other}`, '--json'])
  t.equal(first.code, 0)
  t.match(first.stderr, /starting a new store at/)
  t.equal(JSON.parse(first.stdout).plan, 'free')
})

t.test('store errors carry the product prefix once', async (t) => {
  const result = await runCli(['keys', 'list', '--store', 'sqlite://', '--create'])
  t.equal(result.code, 1)
  t.equal(result.stderr.match(/user-verification:/g)?.length, 1, result.stderr)
  t.match(result.stderr, /cannot open the store sqlite:\/\/: `store` must be/)
})

t.test(
  '--plans sets the server plans (UV_PLANS those of the commands): a 4-unit free plan answers 402 on the second request',
  async (t) => {
    const store = freshStore()
    const server = await startServe(['--store', store, '--dns-servers', dns.server, '--plans', 'free=4,team=100', '--quiet'])
    t.teardown(() => server.stop('SIGKILL'))
    t.equal((await post(server.url, server.demoKey!)).status, 200)
    t.equal((await post(server.url, server.demoKey!)).status, 402)
    const team = await runCli(['keys', 'create', '--plan', 'team', '--store', store, '--json'], { UV_PLANS: 'free=4,team=100' })
    t.equal(team.code, 0, team.stderr)
    t.equal((await post(server.url, JSON.parse(team.stdout).key)).status, 200)
    const usage = JSON.parse((await runCli(['usage', server.demoKeyId!, '--store', store, '--json', '--plans', 'free=4,team=100'])).stdout)
    t.match(usage, { used: 3, limit: 4, remaining: 1 })
    const unknownPlan = await runCli(['keys', 'create', '--plan', 'team', '--store', store])
    t.equal(unknownPlan.code, 1)
    t.match(unknownPlan.stderr, /unknown plan "team"/)
    await server.stop()
  }
)

t.test('each warning once per server: the Redis durability warning under --workers 2', { skip: redisSkipReason() }, async (t) => {
  const redis = await startPrivateRedis()
  t.teardown(() => redis.close())
  const server = await startServe(['--store', redis.url, '--workers', '2', '--no-demo-key'])
  t.teardown(() => server.stop('SIGKILL'))
  const ready = await checkedFetch(server.url.replace('/api/v1', '/readyz'))
  t.equal(ready.status, 200)
  t.equal(await server.stop('SIGTERM'), 0)
  const warnings = server
    .stdout()
    .split('\n')
    .filter((line) => line.includes('WRN_UV_REDIS_NOT_DURABLE'))
  t.equal(warnings.length, 1, 'one line for the primary and both workers')
  t.equal(JSON.parse(warnings[0]!).code, 'WRN_UV_REDIS_NOT_DURABLE', 'the code as a field')
})
