// Compiles lib/ and server/ to dist/ and copies the shipped data files beside the code.
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, rmSync, chmodSync } from 'node:fs'

rmSync('dist', { recursive: true, force: true })
execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json'], { stdio: 'inherit' })
if (existsSync('lib/data')) cpSync('lib/data', 'dist/lib/data', { recursive: true })
if (existsSync('server/public')) cpSync('server/public', 'dist/server/public', { recursive: true })
if (existsSync('dist/server/cli.js')) chmodSync('dist/server/cli.js', 0o755)
