// Name model benchmark: held-out accuracy and per-prediction latency vs gibberish-detective, cold load and RSS;
// exits 1 when one of the targets is missed.
import { execFileSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { cpus, loadavg } from 'node:os'
import { fileURLToPath } from 'node:url'
import { DEFAULT_NAME_LEXICON_URL, DEFAULT_NAME_MODEL_URL, loadNameModel } from '../lib/names/verifier.js'
import { buildDataset } from '../tools/name-data/dataset.js'
import { accuracy, pct, perGroup, rocAuc, type Scored } from '../tools/name-data/evaluate.js'
import { SEED } from '../tools/name-data/seed.js'
import { timeEach } from './per-call-timing.js'

const require = createRequire(import.meta.url)
const N = Number(process.env.BENCH_N ?? 200_000)

/** Cold load in a fresh process: ms for loadNameModel and the RSS it adds (MiB), median of 5. */
function coldLoad(): { ms: number; rssMiB: number } {
  const lib = fileURLToPath(new URL('../lib/names/verifier.ts', import.meta.url))
  const code = `
    const { loadNameModel } = await import(${JSON.stringify(lib)})
    global.gc?.(); const before = process.memoryUsage().rss
    const t0 = performance.now(); const m = loadNameModel(); const ms = performance.now() - t0
    m.predict('Maria'); global.gc?.()
    console.log(JSON.stringify({ ms, rss: (process.memoryUsage().rss - before) / 1048576 }))`
  const runs = Array.from(
    { length: 5 },
    () =>
      JSON.parse(
        execFileSync(process.execPath, ['--expose-gc', '--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' })
      ) as { ms: number; rss: number }
  )
  const med = (xs: number[]): number => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
  return { ms: med(runs.map((r) => r.ms)), rssMiB: med(runs.map((r) => r.rss)) }
}

const loadStart = loadavg()
  .map((l) => l.toFixed(2))
  .join(' ')
const ds = await buildDataset(SEED)
const test = ds.examples.filter((e) => e.split === 'test')
const values = test.map((e) => e.value)
const model = loadNameModel()
const gib = require('gibberish-detective')({ useCache: false }) as { detect: (s: string) => boolean }

const ours: Scored[] = test.map((e) => ({
  label: e.label,
  p: model.probability(e.value),
  group: e.label === 1 ? `name:${e.script}` : `junk:${e.category}`
}))
const theirs: Scored[] = test.map((e) => {
  let junk = true
  try {
    junk = gib.detect(e.value)
  } catch {
    junk = true
  }
  return { label: e.label, p: junk ? 0 : 1, group: '' }
})
const rate = (xs: Scored[], label: 0 | 1, th = 0.5): number =>
  accuracy(
    xs.filter((x) => x.label === label),
    th
  )
const tOurs = timeEach(values, N, 20_000, (v) => model.predict(v))
// The network alone (features and network, no rules, readings or word-by-word judgement), in the same run: the ratio
// says what issue 11's layers cost, whatever the machine's load.
const tNet = timeEach(values, N, 20_000, (v) => model.networkProbability(v))
const tTheirs = timeEach(values, N, 20_000, (v) => {
  try {
    return gib.detect(v)
  } catch {
    return true
  }
})
const cold = coldLoad()

// Issue 11's figures: in-distribution accuracy >= 99.3% and ROC AUC >= 0.999; model and lexicon files <= 3 MB together.
const modelBytes = statSync(DEFAULT_NAME_MODEL_URL).size + statSync(DEFAULT_NAME_LEXICON_URL).size
const fmt = (x: number): string => x.toFixed(2)
const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')
const lines = [
  `${new Date().toISOString()}; ${cpus().length} × ${cpus()[0]?.model ?? '?'}; Node ${process.version}; load average at start ${loadStart}, at end ${load()}; network ${model.compiled ? 'compiled' : 'plain loop'}, threshold ${model.threshold}.`,
  `Held-out test split: ${test.length} values (${test.filter((e) => e.label === 1).length} real names, ${test.filter((e) => e.label === 0).length} junk), seed ${SEED}; ${N} timed predictions each.`,
  '',
  '| checker | accuracy | ROC AUC | real names accepted | junk rejected | p50 µs | p99 µs | mean µs |',
  '|---|---|---|---|---|---|---|---|',
  `| user-verification name model | ${pct(accuracy(ours, model.threshold))} | ${rocAuc(ours).toFixed(5)} | ${pct(rate(ours, 1, model.threshold))} | ${pct(rate(ours, 0, model.threshold))} | ${fmt(tOurs.p50)} | ${fmt(tOurs.p99)} | ${fmt(tOurs.mean)} |`,
  `| …its network alone (no rules, readings, word-by-word) | n/a | n/a | n/a | n/a | ${fmt(tNet.p50)} | ${fmt(tNet.p99)} | ${fmt(tNet.mean)} |`,
  `| gibberish-detective 1.1.1 (detect) | ${pct(accuracy(theirs))} | n/a (boolean) | ${pct(rate(theirs, 1))} | ${pct(rate(theirs, 0))} | ${fmt(tTheirs.p50)} | ${fmt(tTheirs.p99)} | ${fmt(tTheirs.mean)} |`,
  '',
  `Cold load (fresh process, median of 5): loadNameModel ${cold.ms.toFixed(1)} ms, RSS added ${cold.rssMiB.toFixed(1)} MiB; model and lexicon files ${(modelBytes / 1e6).toFixed(2)} MB.`
]
// The targets: the run fails (exit 1) when one is missed. Groups under 50 test values and the
// random_short diagnostic are held to none.
const missed = [
  ...(accuracy(ours, model.threshold) < 0.993 ? [`accuracy ${pct(accuracy(ours, model.threshold))} < 99.3%`] : []),
  ...(rocAuc(ours) < 0.999 ? [`ROC AUC ${rocAuc(ours).toFixed(5)} < 0.999`] : []),
  ...perGroup(ours, model.threshold)
    .filter((g) => g.n >= 50 && g.group !== 'junk:random_short' && g.rate < (g.group.startsWith('name:') ? 0.97 : 0.98))
    .map((g) => `${g.group} ${pct(g.rate)} < ${g.group.startsWith('name:') ? 97 : 98}%`),
  ...(tOurs.p50 > 5 ? [`p50 ${fmt(tOurs.p50)} µs > 5 µs`] : []),
  ...(tOurs.p99 > 20 ? [`p99 ${fmt(tOurs.p99)} µs > 20 µs`] : []),
  ...(cold.ms >= 200 ? [`cold load ${cold.ms.toFixed(1)} ms >= 200 ms`] : []),
  ...(cold.rssMiB > 25 ? [`RSS added ${cold.rssMiB.toFixed(1)} MiB > 25 MiB`] : []),
  ...(tOurs.calls < 100_000 ? [`${tOurs.calls} timed predictions < 100k`] : []),
  ...(modelBytes > 3_000_000 ? [`model and lexicon files ${modelBytes} bytes > 3 MB`] : [])
]
lines.push('', missed.length === 0 ? 'Targets: all met.' : `Targets MISSED: ${missed.join('; ')}.`)
process.stdout.write(`${lines.join('\n')}\n`)
if (missed.length > 0) process.exitCode = 1
