// Name model choice: brain.js LSTM/GRU over characters vs the feature MLP, on one seeded subsample under a fixed time budget each.
// Measures test accuracy, ROC AUC, real-name acceptance, junk rejection, training time, per-call latency and JSON size.
import { execFileSync } from 'node:child_process'
import { statSync } from 'node:fs'
import { cpus, loadavg } from 'node:os'
import brain from 'brain.js'
import { classify } from '../lib/names/characters.js'
import { FEATURE_COUNT } from '../lib/names/features.js'
import { DEFAULT_NAME_MODEL_URL, loadNameModel } from '../lib/names/verifier.js'
import { buildDataset, type Example } from '../tools/name-data/dataset.js'
import { accuracy, pct, rocAuc, type Scored } from '../tools/name-data/evaluate.js'
import { buildFeatureContext, exampleFeatures, featureStats } from '../tools/name-data/features.js'
import { trainMlp } from '../tools/name-data/net-train.js'
import { mulberry32, shuffle, withSeededMathRandom, type Rng } from '../tools/name-data/prng.js'
import { SEED } from '../tools/name-data/seed.js'
import { timeEach, type Timing } from './per-call-timing.js'

const TRAIN_N = Number(process.env.RNN_TRAIN ?? 4000)
const TEST_N = Number(process.env.RNN_TEST ?? 3000)
const BUDGET_S = Number(process.env.RNN_BUDGET_S ?? 240)
const HIDDEN = (process.env.RNN_HIDDEN ?? '20,20').split(',').map(Number)
const LEARNING_RATE = Number(process.env.RNN_LR ?? 0.01)
/** Most frequent training characters that keep their own token; the rest share a (kind, script) token. */
const VOCAB = Number(process.env.RNN_VOCAB ?? 96)
/** Code points an RNN reads; longer values are cut and get an overflow token. */
const MAX_LEN = Number(process.env.RNN_MAX_LEN ?? 40)
const RNN_TIMED = Number(process.env.RNN_TIMED ?? 2000)
const MLP_TIMED = Number(process.env.MLP_TIMED ?? 20_000)
const MLP_EPOCHS = Number(process.env.MLP_EPOCHS ?? 30)
const MLP_HIDDEN = [16, 8]

/** One row of the result table. */
interface Row {
  model: string
  data: string
  /** Decision threshold on the probability (the shipped model stores its own); 0.5 when absent. */
  threshold?: number
  trainS: number | undefined
  progress: string
  finalError: string
  /** Mean label log loss of the model on its own training subsample. */
  trainLoss: number | undefined
  scored: Scored[]
  auc: number | undefined
  timing: Timing
  jsonBytes: string
  /** Extra line under the table. */
  note?: string
}

// ---------- machine and sampling ----------

function machine(): string {
  const nproc = execFileSync('nproc', { encoding: 'utf8' }).trim()
  return `nproc ${nproc}; CPU ${cpus()[0]?.model ?? '?'}; Node ${process.version}`
}

const load = (): string =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')

/** Seeded class-balanced subsample: n/2 names and n/2 junk, each drawn uniformly. */
function balancedSample(rng: Rng, xs: Example[], n: number): Example[] {
  const names = shuffle(
    rng,
    xs.filter((e) => e.label === 1)
  ).slice(0, Math.ceil(n / 2))
  const junk = shuffle(
    rng,
    xs.filter((e) => e.label === 0)
  ).slice(0, Math.floor(n / 2))
  return shuffle(rng, [...names, ...junk])
}

// ---------- scoring ----------

/** Mean binary cross-entropy of scored examples. */
function logLoss(xs: Scored[]): number {
  let sum = 0
  for (const x of xs) {
    const p = Math.min(Math.max(x.p, 1e-7), 1 - 1e-7)
    sum -= x.label === 1 ? Math.log(p) : Math.log(1 - p)
  }
  return sum / xs.length
}

function score(test: Example[], p: (v: string) => number): Scored[] {
  return test.map((e) => ({ label: e.label, p: p(e.value), group: '' }))
}

// ---------- recurrent models (brain.js 1.6.1 LSTM / GRU) ----------

/** The brain.js 1.6.1 RNN internals this benchmark drives (public in the JS, absent from index.d.ts). */
interface Matrix {
  weights: Float64Array | number[]
}
interface Equation {
  runIndex(rowIndex: number): Matrix
}
interface RecurrentInternals {
  train(data: Array<{ input: string; output: string }>, options: Record<string, unknown>): { error: number; iterations: number }
  trainPattern(input: number[], logErrorRate: boolean): number
  formatDataIn(input: string, output?: string | null): number[]
  bindEquation(): void
  run(input: string): string
  toJSON(): { options: { dataFormatter: { values?: unknown } } }
  model: { equations: Equation[] }
  dataFormatter: { indexTable: Record<string, number> }
}

/** Maps a value onto the RNN vocabulary: frequent characters stay, others become a (kind, script) token. */
class Vocabulary {
  private readonly keep: Set<number>

  constructor(train: Example[]) {
    const counts = new Map<number, number>()
    for (const e of train) for (const c of this.codePoints(e.value)) counts.set(c, (counts.get(c) ?? 0) + 1)
    const top = [...counts.entries()]
      .filter(([c]) => c < 0xd800)
      .sort((a, b) => b[1] - a[1] || a[0] - b[0])
      .slice(0, VOCAB)
    this.keep = new Set(top.map(([c]) => c))
  }

  private codePoints(v: string): number[] {
    return Array.from(v.trim(), (ch) => ch.codePointAt(0) as number)
  }

  map(v: string): string {
    const cps = this.codePoints(v)
    let out = ''
    for (const c of cps.slice(0, MAX_LEN)) {
      // Private-use tokens: 0xE000 + kind * 16 + script for characters outside the kept set.
      out += this.keep.has(c) ? String.fromCodePoint(c) : String.fromCharCode(0xe000 + (classify(c) & 0xff) * 16 + (classify(c) >> 8))
    }
    return cps.length > MAX_LEN ? `${out}\ue100` : out
  }
}

type RecurrentKind = 'LSTM' | 'GRU'

/** Trains one RNN on `input → '1'|'0'` pairs, example by example, until the time budget runs out. */
function trainRecurrent(
  kind: RecurrentKind,
  train: Example[],
  vocab: Vocabulary
): { net: RecurrentInternals; seconds: number; epochs: number; patterns: number; error: number } {
  const pairs = train.map((e) => ({ input: vocab.map(e.value), output: String(e.label) }))
  const t0 = performance.now()
  const net = withSeededMathRandom(SEED, () => {
    const Ctor = kind === 'LSTM' ? brain.recurrent.LSTM : brain.recurrent.GRU
    const n = new Ctor({ hiddenLayers: HIDDEN }) as unknown as RecurrentInternals
    // iterations 0: builds the character table and the weights (seeded), trains nothing.
    n.train(pairs, { iterations: 0, learningRate: LEARNING_RATE })
    return n
  })
  const seqs = pairs.map((p) => net.formatDataIn(p.input, p.output))
  const rng = mulberry32(SEED + 1)
  const order = seqs.map((_, i) => i)
  const recent = new Float64Array(seqs.length)
  const deadline = t0 + BUDGET_S * 1000
  let patterns = 0
  while (performance.now() < deadline) {
    if (patterns % seqs.length === 0) shuffle(rng, order)
    recent[patterns % seqs.length] = net.trainPattern(seqs[order[patterns % seqs.length] as number] as number[], true)
    patterns++
    if (!Number.isFinite(recent[(patterns - 1) % seqs.length] as number)) throw new Error(`${kind}: training error is not finite`)
  }
  // brain.js's per-pattern error (2^(bits / (length - 1)) / 100) explodes on 1-2 character values, so the median.
  const last = Array.from(recent.subarray(0, Math.min(patterns, seqs.length))).sort((a, b) => a - b)
  return {
    net,
    seconds: (performance.now() - t0) / 1000,
    epochs: patterns / seqs.length,
    patterns,
    error: last[Math.floor(last.length / 2)] ?? NaN
  }
}

/**
 * P(real name) from one RNN: the input, stop-input and start-output tokens are fed (teacher forcing, as in
 * training), then the softmax over the first output character gives P('1') / (P('1') + P('0')).
 */
function recurrentProbability(net: RecurrentInternals, vocab: Vocabulary): (v: string) => number {
  const table = net.dataFormatter.indexTable
  const one = (table['1'] as number) + 1
  const zero = (table['0'] as number) + 1
  return (v: string): number => {
    const seq = net.formatDataIn(vocab.map(v))
    while (net.model.equations.length <= seq.length) net.bindEquation()
    let out = (net.model.equations[0] as Equation).runIndex(0)
    for (let i = 0; i < seq.length; i++) out = (net.model.equations[i + 1] as Equation).runIndex((seq[i] as number) + 1)
    const w = out.weights
    const a = w[one] as number
    const b = w[zero] as number
    // Softmax restricted to the two labels: sigmoid of the logit difference.
    return 1 / (1 + Math.exp(b - a))
  }
}

/** JSON size without the formatter's copy of every training string (stock toJSON keeps it; inference does not need it). */
function recurrentJsonBytes(net: RecurrentInternals): string {
  const json = net.toJSON()
  const stock = JSON.stringify(json).length
  delete json.options.dataFormatter.values
  const lean = JSON.stringify(json).length
  return `${kib(lean)} (stock toJSON ${kib(stock)})`
}

function recurrentRow(kind: RecurrentKind, train: Example[], test: Example[], vocab: Vocabulary): Row {
  log(`${kind}: training for ${BUDGET_S} s on ${train.length} values`)
  const r = trainRecurrent(kind, train, vocab)
  const prob = recurrentProbability(r.net, vocab)
  const scored = score(test, prob)
  const stock = test.filter((e) => r.net.run(vocab.map(e.value)) === String(e.label)).length / test.length
  log(`${kind}: ${r.patterns} patterns, accuracy ${pct(accuracy(scored))}, stock run() ${pct(stock)}`)
  const values = test.map((e) => e.value)
  return {
    model: `brain.js ${kind} ${HIDDEN.join(',')} (chars → '1'/'0')`,
    data: `${train.length} balanced`,
    trainS: r.seconds,
    progress: `${r.epochs.toFixed(1)} epochs (${r.patterns} patterns)`,
    finalError: `${r.error.toFixed(4)} (median brain.js pattern error, last epoch)`,
    trainLoss: logLoss(score(train, prob)),
    scored,
    auc: rocAuc(scored),
    timing: timeEach(values, RNN_TIMED, 200, prob),
    jsonBytes: recurrentJsonBytes(r.net),
    note: `brain.js ${kind}: stock \`run()\` (greedy decode, no probability) accuracy ${pct(stock)}.`
  }
}

// ---------- feature MLP from scratch on the same subsample ----------

function mlpRow(train: Example[], test: Example[], placeholder: string[], profanity: string[]): Row {
  log(`feature MLP: ${MLP_EPOCHS} epochs on ${train.length} values`)
  const t0 = performance.now()
  const context = buildFeatureContext(
    train.filter((e) => e.label === 1),
    { placeholder, profanity }
  )
  const xs = train.map((e) => exampleFeatures(e, context, true))
  const { mean, std } = featureStats(xs)
  const z = (x: Float64Array): number[] => Array.from(x, (v, i) => (v - (mean[i] as number)) / (std[i] as number))
  let lastError = NaN
  const best = trainMlp(
    xs.map((x, i) => ({ input: z(x), output: [(train[i] as Example).label] })),
    {
      hidden: MLP_HIDDEN,
      epochs: MLP_EPOCHS,
      seed: SEED,
      onEpoch: (_epoch, err) => {
        lastError = err
      }
    }
  )
  const seconds = (performance.now() - t0) / 1000
  const net = new brain.NeuralNetwork().fromJSON(best.json as brain.INeuralNetworkJSON)
  const prob = (v: string): number => (net.run(z(exampleFeatures({ value: v, label: 0 }, context, false))) as number[])[0] as number
  const scored = score(test, prob)
  const tablesBytes = JSON.stringify(
    [...(context.ctx.tables.maps ?? [])].filter(([k]) => k < 2 ** 41 || (k >= 2 ** 50 && k < 2 ** 51))
  ).length
  return {
    model: `brain.js NeuralNetwork ${FEATURE_COUNT}→${MLP_HIDDEN.join('→')}→1, features (from scratch)`,
    data: `${train.length} balanced`,
    trainS: seconds,
    progress: `${MLP_EPOCHS} epochs`,
    finalError: `${lastError.toFixed(4)} (brain.js MSE, last epoch)`,
    trainLoss: logLoss(score(train, prob)),
    scored,
    auc: rocAuc(scored),
    timing: timeEach(
      test.map((e) => e.value),
      MLP_TIMED,
      2000,
      prob
    ),
    jsonBytes: `${kib(JSON.stringify(best.json).length)} net + ~${kib(tablesBytes)} n-gram counts`
  }
}

function shippedRow(train: Example[], test: Example[]): Row {
  const model = loadNameModel()
  const scored = score(test, (v) => model.probability(v))
  return {
    model: 'shipped model (lib/data/name-model.json, loadNameModel)',
    data: 'full train split, oversampled (see the data card)',
    threshold: model.threshold,
    trainS: undefined,
    progress: 'see RESULTS.md § name model',
    finalError: '—',
    trainLoss: logLoss(score(train, (v) => model.probability(v))),
    scored,
    auc: rocAuc(scored),
    timing: timeEach(
      test.map((e) => e.value),
      MLP_TIMED,
      20_000,
      (v) => model.predict(v)
    ),
    jsonBytes: kib(statSync(DEFAULT_NAME_MODEL_URL).size)
  }
}

// ---------- report ----------

function kib(bytes: number): string {
  return `${(bytes / 1024).toFixed(0)} KiB`
}

function log(m: string): void {
  process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${m}\n`)
}

function tableLine(r: Row): string {
  const th = r.threshold ?? 0.5
  const rate = (label: 0 | 1): string =>
    pct(
      accuracy(
        r.scored.filter((x) => x.label === label),
        th
      )
    )
  const t = r.timing
  return `| ${r.model} | ${r.data} | ${r.trainS === undefined ? '—' : r.trainS.toFixed(1)} | ${r.progress} | ${r.finalError} | ${r.trainLoss === undefined ? '—' : r.trainLoss.toFixed(3)} | ${pct(accuracy(r.scored, th))} | ${r.auc === undefined ? 'n/a' : r.auc.toFixed(4)} | ${rate(1)} | ${rate(0)} | ${t.p50.toFixed(1)} | ${t.p99.toFixed(1)} | ${t.calls} | ${r.jsonBytes} |`
}

async function main(): Promise<void> {
  const loadStart = load()
  const started = new Date().toISOString()
  const ds = await buildDataset(SEED)
  const rng = mulberry32(SEED)
  const train = balancedSample(
    rng,
    ds.examples.filter((e) => e.split === 'train'),
    TRAIN_N
  )
  const test = shuffle(
    rng,
    ds.examples.filter((e) => e.split === 'test')
  ).slice(0, TEST_N)
  log(`train subsample ${train.length}, test sample ${test.length} (${test.filter((e) => e.label === 1).length} names)`)

  const rows: Row[] = [shippedRow(train, test), mlpRow(train, test, ds.placeholderKeys, ds.profanityKeys)]
  const vocab = new Vocabulary(train)
  const rnnRows = (['LSTM', 'GRU'] as const).map((k) => recurrentRow(k, train, test, vocab))
  rows.push(...rnnRows)

  const lines = [
    '| date | nproc / CPU / Node | load average at start → end |',
    '|---|---|---|',
    `| ${started} → ${new Date().toISOString()} | ${machine()} | ${loadStart} → ${load()} |`,
    '',
    `Seed ${SEED}; training subsample ${train.length} values from the train split (class-balanced); test sample ${test.length} values of the test split (${test.filter((e) => e.label === 1).length} real names, ${test.filter((e) => e.label === 0).length} junk). ` +
      `RNNs: hidden ${HIDDEN.join(',')}, learning rate ${LEARNING_RATE}, vocabulary ${VOCAB} characters + (kind, script) tokens, first ${MAX_LEN} code points + overflow token, budget ${BUDGET_S} s each.`,
    '',
    '| model | training data | train s | iterations | final train error | train log loss | accuracy | ROC AUC | real accepted | junk rejected | p50 µs | p99 µs | timed calls | JSON |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows.map(tableLine),
    '',
    ...rows.flatMap((r) => (r.note === undefined ? [] : [r.note]))
  ]
  process.stdout.write(`${lines.join('\n')}\n`)
}

await main()
