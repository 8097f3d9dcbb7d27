// The package as users get it: packed from a tree without dist/, installed into fresh ESM, TypeScript-ESM and TypeScript-CommonJS projects running the README's code.
import { execFileSync, spawn } from 'node:child_process'
import { once } from 'node:events'
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import t, { type Test } from 'tap'
import { checkedFetch } from '../fixtures/openapi-check.js'
import { sparePort } from '../fixtures/private-redis.js'

const root = fileURLToPath(new URL('../../', import.meta.url))
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
const readme = readFileSync(join(root, 'README.md'), 'utf8')
// UV_CONSUMER_NODE runs the consumers on another Node (CI: Node 24 from the npm registry's `node` package).
const node = process.env.UV_CONSUMER_NODE ?? process.execPath
// Children run as a user's would: without the test runner's loaders and settings. tap's process
// tracker puts its loader back into NODE_OPTIONS of every child it sees, so `env -u` drops it.
const env: NodeJS.ProcessEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(NODE_OPTIONS|TAP|_TAP)/.test(name)))
env.npm_config_update_notifier = 'false'
const clean = (command: string, args: string[]): [string, string[]] => ['env', ['-u', 'NODE_OPTIONS', command, ...args]]
const run = (command: string, args: string[], cwd?: string): string =>
  execFileSync(...clean(command, args), { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env })
const nodeVersion = run(node, ['-p', 'process.versions.node']).trim()
const [major = 0, minor = 0] = nodeVersion.split('.').map(Number)
const hasNodeSqlite = major > 22 || (major === 22 && minor >= 13)
const npm = (args: string[], cwd: string): string => run('npm', args, cwd)

// Outside the repository, so nothing resolves from its node_modules.
const work = mkdtempSync(join(tmpdir(), 'uv-package-'))
t.teardown(() => rmSync(work, { recursive: true, force: true }))

// A tree as a git clone has it: sources, no dist/. `npm pack` must build it (prepack). It sits
// inside the repository (git-ignored .tap/) so its build finds our node_modules by walking up.
const tree = join(root, '.tap', `pack-tree-${process.pid}`)
t.teardown(() => rmSync(tree, { recursive: true, force: true }))
mkdirSync(tree, { recursive: true })
for (const entry of ['lib', 'server', 'tools', 'package.json', 'package-lock.json', 'tsconfig.json', 'LICENSE', 'README.md']) {
  cpSync(join(root, entry), join(tree, entry), { recursive: true })
}
const [pack] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], tree)) as [
  { filename: string; files: Array<{ path: string }>; unpackedSize: number }
]
const tarball = join(work, pack.filename)
const files = new Set(pack.files.map((f) => f.path))

t.test('npm pack builds first and ships the entry points, the bin and the data the code loads', async (t) => {
  for (const path of [
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
    'dist/lib/store-contract.js',
    'dist/server/cli.js',
    'dist/lib/data/name-model.json',
    'dist/lib/data/disposable-domains.txt',
    'dist/lib/data/disposable-provenance.json',
    'dist/lib/data/name-model.card.md',
    'dist/server/dashboard.js',
    'dist/server/dashboard.d.ts',
    'dist/server/public/dashboard.html',
    'dist/server/public/dashboard.js',
    'LICENSE',
    'README.md',
    'dist/server/public/swagger-ui/swagger-ui-bundle.js',
    'dist/server/public/swagger-ui/LICENSE'
  ]) {
    t.ok(files.has(path), path)
  }
  t.equal(manifest.exports['.'].default, './dist/lib/index.js', 'a `default` condition, so require() finds it too')
  t.equal(Object.keys(manifest.exports['.'])[0], 'types', 'types first')
  t.equal(manifest.bin['user-verification'], './dist/server/cli.js')
})

t.test('ships no tests, tools, sources or source maps, and no install script', async (t) => {
  for (const path of files) t.notMatch(path, /^(test|tools|benchmarks|lib|server|examples)\/|\.map$/, path)
  t.ok(pack.unpackedSize < 20 * 1024 * 1024, `unpacked ${pack.unpackedSize} bytes`)
  for (const script of ['preinstall', 'install', 'postinstall']) t.notOk(manifest.scripts?.[script], `no ${script}`)
  for (const heavy of ['sqlite3', 'brain.js', 'pg', '@keyv/redis', '@keyv/postgres', '@keyv/sqlite']) {
    t.notOk(heavy in manifest.dependencies, `${heavy} is not a run-time dependency`)
  }
})

// One install holds the three consumer projects, each in its own folder with its own package.json.
const consumers = join(work, 'consumers')
mkdirSync(consumers)
writeFileSync(join(consumers, 'package.json'), JSON.stringify({ name: 'consumers', private: true }))
npm(['install', tarball, 'express', '@types/express', '@types/node', '--no-audit', '--no-fund', '--prefer-offline'], consumers)
if (!hasNodeSqlite) {
  // This Node has no node:sqlite: the README's sqlite:// store needs the optional sqlite3, taken from our own node_modules.
  symlinkSync(join(root, 'node_modules', 'sqlite3'), join(consumers, 'node_modules', 'sqlite3'))
}

/** The code block that follows `<!-- marker` in the README. */
function readmeBlock(marker: string): string {
  const at = readme.indexOf(`<!-- ${marker}`)
  const match = /```ts\n([\s\S]*?)```/.exec(readme.slice(at))
  if (at < 0 || match === null) throw new Error(`README has no block after <!-- ${marker}`)
  return match[1]!
}

async function startAndRequest(t: Test, dir: string, entry: string): Promise<void> {
  // A key in the store the README's app opens, through the package's public API.
  const issue = `import { issueKey, openStores } from 'user-verification'
    const stores = await openStores('sqlite://./user-verification.sqlite')
    console.log((await issueKey(stores.keys, 'free')).key)
    await stores.close()`
  const key = run(node, ['--input-type=module', '-e', issue], dir).trim()
  const port = await sparePort()
  const child = spawn(...clean(node, [entry]), { cwd: dir, env: { ...env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
  })
  let reply: Response | undefined
  for (const deadline = Date.now() + 20_000; reply === undefined && Date.now() < deadline && child.exitCode === null; ) {
    // The README's app is a host app (scope `api`); only a refused connection (the app still starting) is retried, never a mismatch.
    reply = await checkedFetch(
      `http://127.0.0.1:${port}/api/v1`,
      {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-token': key },
        body: JSON.stringify({ model: 'user_verification', firstname: 'Jane', lastname: 'asdfgh' })
      },
      { scope: 'api' }
    ).catch((error: Error) => {
      if (/OpenAPI mismatch/.test(error.message)) throw error
      return undefined
    })
    if (reply === undefined) await new Promise((resolve) => setTimeout(resolve, 200))
  }
  t.ok(reply, `the app answers (stderr: ${stderr})`)
  t.equal(reply?.status, 200)
  const body = (await reply?.json()) as { name_verification: { lastname: { prediction: string } } }
  t.equal(body.name_verification.lastname.prediction, 'LABEL_0')
  const malformed = await checkedFetch(
    `http://127.0.0.1:${port}/api/v1`,
    { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-token': key }, body: '{"model":' },
    { scope: 'api' }
  )
  t.equal(malformed.status, 422)
}

const tsc = (dir: string): string => run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', dir])

const tsconfig = {
  compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, types: ['node'], outDir: 'out' },
  include: ['app.ts']
}

t.test(`ESM JavaScript: the README's app on Node ${nodeVersion}`, async (t) => {
  const dir = join(consumers, 'esm-js')
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'esm-js', private: true, type: 'module' }))
  writeFileSync(join(dir, 'app.js'), readmeBlock('readme-esm-app'))
  await startAndRequest(t, dir, 'app.js')
})

t.test(`TypeScript nodenext, "type": "module": compiles and runs on Node ${nodeVersion}`, async (t) => {
  const dir = join(consumers, 'ts-esm')
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ts-esm', private: true, type: 'module' }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
  writeFileSync(join(dir, 'app.ts'), readmeBlock('readme-esm-app'))
  tsc(dir)
  await startAndRequest(t, dir, 'out/app.js')
})

t.test(`TypeScript nodenext, CommonJS: compiles to require() and runs on Node ${nodeVersion}`, async (t) => {
  const dir = join(consumers, 'ts-cjs')
  mkdirSync(dir)
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'ts-cjs', private: true }))
  writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(tsconfig))
  writeFileSync(join(dir, 'app.ts'), readmeBlock('readme-cjs-app'))
  tsc(dir)
  t.match(readFileSync(join(dir, 'out/app.js'), 'utf8'), /require\("user-verification"\)/, 'compiled to require()')
  await startAndRequest(t, dir, 'out/app.js')
})

t.test('require() loads the package; no driver, brain.js or native module was installed', async (t) => {
  const dir = join(consumers, 'esm-js')
  const probe = `const lib = require('user-verification'); console.log(typeof lib.userVerification, typeof lib.openStores)`
  t.equal(run(node, ['-e', probe], dir).trim(), 'function function')
  const installed = JSON.parse(readFileSync(join(consumers, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>
  }
  const names = Object.keys(installed.packages).map((p) => p.replace(/^.*node_modules\//, ''))
  for (const absent of ['sqlite3', 'brain.js', 'gpu.js', 'pg', '@keyv/redis', '@redis/client', '@keyv/postgres', '@keyv/sqlite']) {
    t.notOk(names.includes(absent), `${absent} not installed`)
  }
  t.same(
    Object.entries(installed.packages).filter(([, p]) => p.hasInstallScript === true),
    [],
    'no package with an install script'
  )
})

t.test('a store URL whose driver is not installed is one line naming the package', async (t) => {
  const dir = join(consumers, 'esm-js')
  const probe = `import { openStores } from 'user-verification'
    try { await openStores('redis://127.0.0.1:1') } catch (e) { console.log(e.code + ' ' + e.message) }`
  const out = run(node, ['--input-type=module', '-e', probe], dir).trim()
  t.equal(
    out,
    'ERR_UV_STORE_DRIVER user-verification: redis:// stores need the @keyv/redis package, which is not installed: run `npm install @keyv/redis`.'
  )
})

t.test('the dashboard router imports from its subpath, for host apps', async (t) => {
  t.equal(manifest.exports['./dashboard'].default, './dist/server/dashboard.js')
  t.equal(Object.keys(manifest.exports['./dashboard'])[0], 'types', 'types first')
  t.ok(manifest.dependencies.uplot, 'the charting library is a runtime dependency: the router serves it from node_modules')
  const { createDashboard } = await import('user-verification/dashboard')
  t.type(createDashboard, 'function')
})

t.test('the store contract suite imports from its subpath and runs as shipped (on memory stores)', async (t) => {
  t.equal(manifest.exports['./store-contract'].default, './dist/lib/store-contract.js')
  t.equal(Object.keys(manifest.exports['./store-contract'])[0], 'types', 'types first')
  const { storeContract } = await import('user-verification/store-contract')
  const { openStores } = await import('user-verification')
  storeContract(t, () => openStores('memory://'), { cancel: false, keysVersion: false, keyWithAccount: false })
})

t.test(`the installed CLI serves the API and /docs (Swagger UI shipped as files) on Node ${nodeVersion}`, async (t) => {
  const child = spawn(
    ...clean(node, ['node_modules/user-verification/dist/server/cli.js', 'serve', '--port', '0', '--store', 'sqlite://./served.sqlite']),
    {
      cwd: consumers,
      env,
      stdio: ['ignore', 'pipe', 'pipe']
    }
  )
  t.teardown(async () => {
    if (child.exitCode === null) {
      child.kill('SIGKILL')
      await once(child, 'exit')
    }
  })
  let output = ''
  const url = await new Promise<string>((resolve, reject) => {
    const read = (chunk: Buffer): void => {
      output += chunk
      const match = /listening on (http:\/\/\S+)/.exec(output)
      if (match?.[1]) resolve(match[1].replace(/\/api\/v1\/?$/, ''))
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${output}`)))
  })
  const bundle = await checkedFetch(`${url}/docs/swagger-ui-bundle.js`)
  t.equal(bundle.status, 200, 'Swagger UI is served without swagger-ui-dist installed')
  t.ok((await bundle.text()).length > 100_000)
  const document = await checkedFetch(`${url}/openapi.json`)
  t.equal(document.status, 200)
  const api = await checkedFetch(`${url}/api/v1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(api.status, 422, 'the API answers')
})
