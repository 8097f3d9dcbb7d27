// Compiles lib/ and server/ to dist/ and copies the shipped data files beside the code.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, rmSync, chmodSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'

rmSync('dist', { recursive: true, force: true })
// Resolved like a package, so the build also runs where node_modules sits in a parent folder.
execFileSync(
  process.execPath,
  [join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc'), '-p', 'tsconfig.json'],
  { stdio: 'inherit' }
)
if (existsSync('lib/data')) cpSync('lib/data', 'dist/lib/data', { recursive: true })
if (existsSync('server/public')) cpSync('server/public', 'dist/server/public', { recursive: true })
// Swagger UI for /docs ships as files (with its licence), so swagger-ui-dist stays a devDependency.
const swagger = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))
for (const file of ['swagger-ui-bundle.js', 'swagger-ui-bundle.js.LICENSE.txt', 'swagger-ui.css', 'LICENSE', 'NOTICE']) {
  cpSync(join(swagger, file), join('dist/server/public/swagger-ui', file))
}
if (existsSync('dist/server/cli.js')) chmodSync('dist/server/cli.js', 0o755)
