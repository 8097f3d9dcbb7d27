// `npm run bench [name]`: lists the benchmarks, or runs one (results are recorded in benchmarks/RESULTS.md).
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const dir = fileURLToPath(new URL('.', import.meta.url))
const names = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace(/\.bench\.ts$/, ''))
  .sort()
const name = process.argv[2]

if (name === undefined || !names.includes(name)) {
  if (name !== undefined) console.error(`no benchmark named "${name}"`)
  console.log(
    `Usage: npm run bench <name>   (npm run build first: some start the built server)\n\nBenchmarks: ${names.join(', ')}\n\nEach prints a markdown table with the date, machine and load; record figures in benchmarks/RESULTS.md.`
  )
  process.exitCode = name === undefined ? 0 : 2
} else {
  const run = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', `${dir}${name}.bench.ts`], { stdio: 'inherit' })
  process.exitCode = run.status ?? 1
}
