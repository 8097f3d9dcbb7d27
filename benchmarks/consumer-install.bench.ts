// What a user pays for `npm install user-verification express`: time, node_modules size and packages, install scripts, import time and RSS.
import { execFileSync, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

const usage = `Usage: npx tsx benchmarks/consumer-install.bench.ts [package.tgz]
Packs this tree (npm pack, which builds first) unless a tarball is given, installs it with express
into a fresh project and measures. UV_NODE=<path to node> runs npm and the import on that Node,
e.g. UV_NODE=$(npx -y node@24 -p process.execPath). Packages come from the local npm cache where
it has them (--prefer-offline); the registry is asked for the rest.`
console.error(usage)

const node = process.env.UV_NODE ?? process.execPath
// The npm CLI this machine has, run under the chosen Node.
const npmCli = join(dirname(realpathSync(execFileSync('sh', ['-c', 'command -v npm'], { encoding: 'utf8' }).trim())), 'npm-cli.js')
const npm = (args: string[], cwd: string): string =>
  execFileSync(node, [npmCli, ...args], {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_update_notifier: 'false' }
  })

const work = mkdtempSync(join(tmpdir(), 'uv-consumer-'))
try {
  let tarball = process.argv[2] === undefined ? undefined : resolve(process.argv[2])
  if (tarball === undefined) {
    const [packed] = JSON.parse(npm(['pack', '--json', '--pack-destination', work], resolve('.'))) as [{ filename: string }]
    tarball = join(work, packed.filename)
  }
  const project = join(work, 'consumer')
  execFileSync('mkdir', ['-p', project])
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: 'module' }))
  const t0 = performance.now()
  npm(['install', tarball, 'express', '--no-audit', '--no-fund', '--prefer-offline'], project)
  const installSeconds = (performance.now() - t0) / 1000

  const lock = JSON.parse(readFileSync(join(project, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { hasInstallScript?: boolean }>
  }
  const packages = Object.keys(lock.packages).filter((p) => p !== '')
  const withScripts = packages.filter((p) => lock.packages[p]!.hasInstallScript === true).map((p) => p.replace(/^.*node_modules\//, ''))
  const bytes = size(join(project, 'node_modules'))

  const probe = `const t0 = performance.now(); await import('user-verification'); const ms = performance.now() - t0;
    console.log(JSON.stringify({ ms, rss: process.memoryUsage().rss }))`
  const runs = Array.from({ length: 5 }, () => {
    const out = spawnSync(node, ['--input-type=module', '-e', probe], { cwd: project, encoding: 'utf8' })
    if (out.status !== 0) throw new Error(`import failed: ${out.stderr}`)
    return JSON.parse(out.stdout) as { ms: number; rss: number }
  })
  const median = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim()
  console.log(`\nConsumer install of ${tarball.replace(/^.*\//, '')} + express, Node ${version}, ${new Date().toISOString()}\n`)
  console.log('| install s | node_modules MB | packages | install scripts | import ms (median of 5) | RSS after import MB |')
  console.log('|---:|---:|---:|---|---:|---:|')
  console.log(
    `| ${installSeconds.toFixed(1)} | ${(bytes / 1e6).toFixed(1)} | ${packages.length} | ${withScripts.length === 0 ? 'none' : withScripts.join(', ')} | ${median(runs.map((r) => r.ms)).toFixed(0)} | ${(median(runs.map((r) => r.rss)) / 1e6).toFixed(0)} |`
  )
} finally {
  rmSync(work, { recursive: true, force: true })
}

/** Bytes of every file under `dir` (what `du --apparent-size` counts). */
function size(dir: string): number {
  let total = 0
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += size(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}
