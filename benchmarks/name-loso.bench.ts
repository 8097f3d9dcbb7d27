// Leave-one-source-out: a model trained with NAME_EXCLUDE_SOURCES (npm run train with NAME_OUT) scored on the names of
// the sources it never saw, beside the shipped model, which saw them. NAME_MODEL=<dir>/name-model.json, same variable.
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { loadNameModel } from '../lib/names/verifier.js'
import { loadFakerNames, loadHumannames, loadUsBabyNames } from '../tools/name-data/sources.js'

const excluded = new Set((process.env.NAME_EXCLUDE_SOURCES ?? '').split(',').filter((x) => x.length > 0))
if (excluded.size === 0 || process.env.NAME_MODEL === undefined) {
  console.error('set NAME_EXCLUDE_SOURCES (as for training) and NAME_MODEL (the model trained without them)')
  process.exit(2)
}
const all = [...loadHumannames(), ...(await loadUsBabyNames()), ...loadFakerNames()]
const key = (v: string): string => v.normalize('NFC').toLowerCase()
// A value another source also holds was seen in training: only values unique to the left-out sources count.
const kept = new Set(all.filter((s) => !excluded.has(s.source)).map((s) => key(s.value)))
const without = loadNameModel(pathToFileURL(process.env.NAME_MODEL))
const shipped = loadNameModel()
const file = JSON.parse(readFileSync(process.env.NAME_MODEL, 'utf8')) as { threshold: number }
const lines = [
  '| left-out source | unseen names | accepted by the model trained without it | …its network alone (no readings, rules, word-by-word) | accepted by the shipped model (saw it) |',
  '|---|---|---|---|---|'
]
for (const src of excluded) {
  const values = [...new Set(all.filter((s) => s.source === src && !kept.has(key(s.value))).map((s) => s.value))]
  const rate = (m: typeof shipped): string =>
    `${((100 * values.filter((v) => m.predict(v).prediction === 'LABEL_1').length) / Math.max(1, values.length)).toFixed(2)}%`
  const net = values.filter((v) => without.networkProbability(v) >= file.threshold).length
  lines.push(
    `| ${src} | ${values.length} | ${rate(without)} | ${((100 * net) / Math.max(1, values.length)).toFixed(2)}% | ${rate(shipped)} |`
  )
}
process.stdout.write(`${lines.join('\n')}\n`)
