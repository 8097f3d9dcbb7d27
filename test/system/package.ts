// What `npm pack` ships: the built library, server, data and licence — and no tests, tools or sources.
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import t from 'tap'

const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
const [pack] = JSON.parse(
  execFileSync(npm, ['pack', '--dry-run', '--json', '--ignore-scripts'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
) as [{ files: Array<{ path: string }>; unpackedSize: number }]
const files = new Set(pack.files.map((f) => f.path))
const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'))

t.test('ships the entry points, the bin and the data the code loads', async (t) => {
  for (const path of [
    'dist/lib/index.js',
    'dist/lib/index.d.ts',
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
    'README.md'
  ]) {
    t.ok(files.has(path), path)
  }
  t.equal(manifest.exports['.'].import, './dist/lib/index.js')
  t.equal(Object.keys(manifest.exports['.'])[0], 'types', 'types first')
  t.equal(manifest.bin['user-verification'], './dist/server/cli.js')
  t.match(readFileSync(new URL('../../dist/server/cli.js', import.meta.url), 'utf8'), /^#!\/usr\/bin\/env node/)
})

t.test('ships no tests, tools, benchmarks or TypeScript sources', async (t) => {
  for (const path of files) t.notMatch(path, /^(test|tools|benchmarks|lib|server|examples)\//, path)
  t.ok(pack.unpackedSize < 20 * 1024 * 1024, `unpacked ${pack.unpackedSize} bytes`)
})

t.test('the package imports by its own name, as a user would', async (t) => {
  const library = await import('user-verification')
  t.type(library.userVerification, 'function')
  t.equal(library.default, library.userVerification)
  t.type(library.verify, 'function')
  t.type(library.openStores, 'function')
})

t.test('the dashboard router imports from its subpath, for host apps', async (t) => {
  t.equal(manifest.exports['./dashboard'].import, './dist/server/dashboard.js')
  t.equal(Object.keys(manifest.exports['./dashboard'])[0], 'types', 'types first')
  t.ok(manifest.dependencies.uplot, 'the charting library is a runtime dependency: the router serves it from node_modules')
  const { createDashboard } = await import('user-verification/dashboard')
  t.type(createDashboard, 'function')
})
