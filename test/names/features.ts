// Tests the name features, the leave-one-out n-gram scores, the plain evaluator against brain.js, and seeded training.
import t from 'tap'
import { readFileSync } from 'node:fs'
import brain from 'brain.js'
import { MAX_CHARS, classify, dominantScript, nfcSafe } from '../../lib/names/characters.js'
import { FEATURE_COUNT, FEATURE_NAMES, extractFeatures, prepare } from '../../lib/names/features.js'
import { lexiconKey } from '../../lib/names/lexicon.js'
import { ngramScores } from '../../lib/names/ngrams.js'
import { countNgrams, ngramScoresExcluding, ownCounts, symbolIds, tablesFromCounts } from '../../tools/name-data/ngram-counts.js'
import { compileForward, compileModel, forward, standardise, type NameModelFile } from '../../lib/names/model.js'
import { DEFAULT_NAME_MODEL_URL } from '../../lib/names/verifier.js'
import { trainMlp } from '../../tools/name-data/net-train.js'

const file = JSON.parse(readFileSync(DEFAULT_NAME_MODEL_URL, 'utf8')) as NameModelFile
const model = compileModel(file)

t.test('scripts are recognised per character and per value', async (t) => {
  const cases: Array<[string, string]> = [
    ['Müller', 'Latin'],
    ['Nguyễn', 'Latin'],
    ['Vəliyev', 'Latin'],
    ['Иван', 'Cyrillic'],
    ['Ελένη', 'Greek'],
    ['محمد', 'Arabic'],
    ['דוד', 'Hebrew'],
    ['राहुल', 'Indic'],
    ['สมชาย', 'Thai'],
    ['王伟', 'Han'],
    ['さくら', 'Kana'],
    ['김민준', 'Hangul'],
    ['გიორგი', 'Georgian'],
    ['Արամ', 'Armenian'],
    ['12345', 'None'],
    ['😀', 'None']
  ]
  for (const [v, s] of cases) t.equal(dominantScript(v), s, v)
  // Devanagari vowel signs are marks and must count as letters of the name, not symbols.
  t.equal(classify('ु'.codePointAt(0) as number) & 0xff, 2)
  t.equal(classify(0x41) & 0xff, 1)
  t.equal(classify(0x31) & 0xff, 3)
})

t.test('prepare trims, caps long input and normalises to NFC', async (t) => {
  const p = prepare('  Jose\u0301  ')
  t.equal(p.value, 'Jose\u0301')
  t.equal(p.text, 'José')
  const long = prepare('x'.repeat(5000))
  t.equal(Array.from(long.text).length, MAX_CHARS)
  t.equal(long.length, 5000)
  t.equal(prepare('😀😀').length, 2)
})

t.test('NFC is skipped only where it provably changes nothing', async (t) => {
  let wrong = 0
  for (let c = 0; c < 0x10000; c++) {
    if (c >= 0xd800 && c < 0xe000) continue
    const ch = String.fromCharCode(c)
    if (nfcSafe(c) && ch.normalize('NFC') !== ch) wrong++
    // Every character a canonical decomposition puts after its first one can join what precedes it.
    const d = Array.from(ch.normalize('NFD'))
    for (const x of d.slice(1)) if (nfcSafe(x.codePointAt(0) as number)) wrong++
  }
  t.equal(wrong, 0)
  for (const v of ['Ångström', 'Nguyễn', '김민준', 'Иван', 'Ελένη', 'e\u0301', '\u1100\u1161', 'Ａｎｎａ', '\u212b']) {
    t.equal(prepare(v).text, v.normalize('NFC'), v)
  }
  t.equal(prepare(`${'a'.repeat(70)}e\u0301`).text, 'a'.repeat(MAX_CHARS))
  t.equal(prepare('😀'.repeat(70)).text, '😀'.repeat(MAX_CHARS))
  // NFC may expand characters; features stay finite for the worst case.
  const x = extractFeatures(prepare('\u{1D160}'.repeat(MAX_CHARS) + '\u0958'.repeat(MAX_CHARS)), model.ctx, new Float64Array(FEATURE_COUNT))
  t.ok(x.every(Number.isFinite))
  t.equal(prepare('😀'.repeat(70)).length, 70)
})

t.test('extractFeatures writes every feature, in FEATURE_NAMES order', async (t) => {
  const f = (v: string): Record<string, number> => {
    const x = extractFeatures(prepare(v), model.ctx, new Float64Array(FEATURE_COUNT).fill(Number.NaN))
    t.ok(x.every(Number.isFinite), `every slot written for ${JSON.stringify(v)}`)
    return Object.fromEntries(FEATURE_NAMES.map((name, i) => [name, x[i] as number]))
  }
  t.equal(new Set(FEATURE_NAMES).size, FEATURE_COUNT, 'feature names are unique')
  // Each value below sets the named feature to a value that no neighbour in the list takes for it, so
  // writing any feature into another's slot changes at least one of these answers.
  const maria = f('Maria')
  t.equal(maria.len, 5 / 32)
  t.equal(maria.logLen, Math.log2(6) / 6)
  t.equal(maria.truncated, 0)
  t.equal(maria.letterShare, 1)
  t.equal(maria.words, 1 / 3)
  t.equal(maria.maxWordLen, 5 / 15)
  t.equal(maria.scriptCount, 1 / 2)
  t.equal(maria.grpAlphabet, 1)
  t.equal(maria.vowelRatio, 3 / 5)
  t.equal(maria.titleCase, 1)
  t.equal(maria.allUpper, 0)
  t.equal(maria.trMean4, maria.ng4Mean, 'a Latin value is its own Latin reading')
  t.equal(f('x'.repeat(80)).truncated, 1)
  t.equal(f('1234').digitShare, 1)
  t.equal(f('Ann Lee').spaceShare, (1 / 7) * 4)
  t.equal(f("O'Neil").namePunctShare, (1 / 6) * 4)
  t.equal(f('a#b').symbolShare, 1 / 3)
  t.equal(f('😀').emojiShare, 1)
  t.equal(f('a\u0001b').controlShare, 1 / 3)
  t.equal(f('Anna Иван').scriptCount, 1)
  t.equal(f('Anнa').mixedInWord, 1)
  t.equal(f('محمد').grpAbjad, 1)
  t.equal(f('राहुल').grpAbugida, 1)
  t.equal(f('王伟').grpCjk, 1)
  t.equal(f('ᎠᎨᏍ').grpOther, 1)
  t.equal(f('1234').grpNone, 1)
  t.equal(f('Strzkv').maxConsRun, 6 / 4)
  t.equal(f('Aaaia').maxVowelRun, 5 / 3)
  t.equal(f('Abbbc').maxSameRun, 3 / 3)
  t.equal(f('abab').distinctRatio, 2 / 4)
  t.equal(f('abab').periodic, 2 / 4)
  t.equal(f('abababab').repeatUnits, 4 / 3)
  t.equal(f('qwer').keyAdjShare, 1)
  t.equal(f('qwer').keyRun, 3 / 5)
  t.equal(f('JOHN').allUpper, 1)
  t.equal(f('john').allLower, 1)
  t.equal(f('McDonald').innerCaps, 1 / 2)
  t.equal(f('test').lexPlaceholder, 1)
  t.equal(f('fuck').lexProfanity, 1)
  t.equal(f('John test').lexWord, 1)
  t.equal(f('fuckyou').lexStem, 1)
  t.equal(f('a@b.com').emailUrl, 1)
  t.equal(f('abc1 def').digitInWord, 1 / 2)
  t.equal(f('<a>').codeChars, 2 / 3)
  t.equal(f('-Ann').punctEdge, 0.5)
  t.equal(f("Ann''-x").punctRun, 3 / 3)
  t.equal(f('Z').singleLetter, 1)
  const ivan = f('Иван')
  t.not(ivan.trMean4, ivan.ng4Mean, 'a Cyrillic value has a Latin reading of its own')
  // The n-gram entries: a mash scores worse than a name on each (the stored values are negated log probabilities).
  const mash = f('Xqzkvw')
  for (const k of ['ngMean', 'ngMin', 'ng4Mean', 'ng4Min'] as const) t.ok((mash[k] as number) > (maria[k] as number), k)
  for (const k of ['ngUnseenTri', 'ngUnseenBi', 'ngUnseen4', 'ngLowShare'] as const) t.ok((mash[k] as number) > (maria[k] as number), k)
  t.ok((mash.ngLlr as number) < (maria.ngLlr as number), 'ngLlr')
  t.ok((mash.ng4Rel as number) < (maria.ng4Rel as number) && (mash.ngLlrRel as number) < (maria.ngLlrRel as number), 'relative scores')
  t.ok((f('Maria\u{10FFF0}').ngUnknown as number) > 0, 'ngUnknown')
})

t.test('the integer-keyed n-gram tables score like the count maps', async (t) => {
  const names = ['anna', 'hannah', 'johann', 'marianne', 'ann', 'nora', 'jan', 'jo-ann', 'an na']
  const alphabet = new Map<number, number>()
  for (const ch of new Set(names.join(''))) if (ch !== ' ') alphabet.set(ch.codePointAt(0) as number, alphabet.size + 4)
  const counts = new Map<number, number>()
  for (const n of names) countNgrams(symbolIds(n, alphabet), alphabet.size + 4, counts)
  const tables = tablesFromCounts(alphabet, counts)
  for (const v of [...names, 'xanna', 'nnnn', 'a', '', 'hanna jo', 'zz9']) {
    const ids = symbolIds(v, alphabet)
    t.same(ngramScores(ids, tables), ngramScoresExcluding(ids, tables, new Map()), v)
  }
})

t.test('lexicon keys keep letters and digits only', async (t) => {
  t.equal(lexiconKey('n/a'), 'na')
  t.equal(lexiconKey('your name'), 'yourname')
  t.equal(lexiconKey('t.e.s.t'), 'test')
  t.equal(lexiconKey("ім'я"), 'імя')
})

t.test('leave-one-out n-gram scores equal scores from tables that never saw the name', async (t) => {
  const names = ['anna', 'hannah', 'johann', 'marianne', 'ann', 'nora', 'jan']
  const alphabet = new Map<number, number>()
  for (const ch of new Set(names.join(''))) alphabet.set(ch.codePointAt(0) as number, alphabet.size + 4)
  const size = alphabet.size + 4
  for (const held of names) {
    const all = new Map<number, number>()
    const rest = new Map<number, number>()
    for (const n of names) {
      countNgrams(symbolIds(n, alphabet), size, all)
      if (n !== held) countNgrams(symbolIds(n, alphabet), size, rest)
    }
    const ids = symbolIds(held, alphabet)
    const loo = ngramScoresExcluding(ids, tablesFromCounts(alphabet, all), ownCounts(ids, size))
    const fresh = ngramScores(ids, tablesFromCounts(alphabet, rest))
    t.ok(Math.abs(loo.meanLogProb - fresh.meanLogProb) < 1e-9, `${held} mean ${loo.meanLogProb} vs ${fresh.meanLogProb}`)
    t.ok(Math.abs(loo.minLogProb - fresh.minLogProb) < 1e-9, `${held} min`)
    t.equal(loo.unseenTri, fresh.unseenTri)
    t.ok(Math.abs(loo.meanLogProb4 - fresh.meanLogProb4) < 1e-9, `${held} 4-gram mean`)
    t.ok(Math.abs(loo.llr - fresh.llr) < 1e-9, `${held} llr`)
    t.equal(loo.unseenQuad, fresh.unseenQuad)
    t.equal(loo.lowShare, fresh.lowShare)
    t.equal(loo.unseenBi, fresh.unseenBi)
    // Seen in full tables, a name scores higher than when left out.
    t.ok(ngramScores(ids, tablesFromCounts(alphabet, all)).meanLogProb > fresh.meanLogProb)
  }
})

t.test('features are finite for odd input and names look different from mashes', async (t) => {
  const x = new Float64Array(FEATURE_COUNT)
  for (const v of ['', '\uD800', '😀', 'a'.repeat(200), '\u0000', '<script>', 'Ng']) {
    extractFeatures(prepare(v), model.ctx, x)
    t.ok(x.every(Number.isFinite), JSON.stringify(v.slice(0, 10)))
  }
  const ng = (v: string): number => ngramScores(symbolIds(v, model.ctx.tables.alphabet), model.ctx.tables).meanLogProb
  t.ok(ng('maria') > ng('xqzkv'))
  t.ok(ng('иван') > ng('йцук'))
})

t.test('Greek, Cyrillic, Armenian and Georgian values are also scored by their Latin reading', async (t) => {
  const tr = FEATURE_NAMES.indexOf('trMean4')
  const llr = FEATURE_NAMES.indexOf('trLlr')
  const own = FEATURE_NAMES.indexOf('ng4Mean')
  const f = (v: string): Float64Array => extractFeatures(prepare(v), model.ctx, new Float64Array(FEATURE_COUNT))
  for (const [script, latin] of [
    ['Ζερβός', 'zervos'],
    ['Щукин', 'shchukin'],
    ['Արամ', 'aram'],
    ['გიორგი', 'giorgi'],
    ['Олександр Ємець', 'oleksandr yemets']
  ]) {
    const a = f(script as string)
    const b = f(latin as string)
    t.equal(a[tr], b[own], `${script} reads as ${latin}`)
    t.equal(a[llr], b[FEATURE_NAMES.indexOf('ngLlr')])
    t.not(a[own], a[tr], `${script} keeps its own-script score too`)
  }
  // A Latin or Han value's Latin reading is its own score.
  for (const v of ['Maria', 'xqzkv', '王伟']) t.equal(f(v)[tr], f(v)[own], v)
  // Random letters stay random in Latin.
  t.ok((f('Ζερβός')[tr] as number) < (f('ψξκβφ')[tr] as number), 'a lower value is a better score (the feature is negated)')
})

t.test('the plain evaluator gives what brain.js run gives for the same weights', async (t) => {
  const layers: Array<Record<string, unknown>> = [Object.fromEntries(Array.from({ length: FEATURE_COUNT }, (_, i) => [String(i), {}]))]
  for (const l of file.net.layers) {
    layers.push(
      Object.fromEntries(
        l.biases.map((b, j) => [
          String(j),
          { bias: b, weights: Object.fromEntries((l.weights[j] as number[]).map((w, k) => [String(k), w])) }
        ])
      )
    )
  }
  const net = new brain.NeuralNetwork().fromJSON({
    sizes: file.net.sizes,
    layers,
    outputLookup: false,
    inputLookup: false,
    activation: 'sigmoid',
    trainOpts: {}
  } as never)
  const a = new Float64Array(model.width)
  const b = new Float64Array(model.width)
  for (const v of ['Maria', 'asdf', '王伟', 'john123', 'de la Cruz']) {
    const x = standardise(model, extractFeatures(prepare(v), model.ctx, new Float64Array(FEATURE_COUNT)))
    const ours = forward(model, x, a, b)
    const theirs = (net.run(Array.from(x)) as number[])[0] as number
    // brain.js keeps weights in Float32Array, so they agree to float32 precision.
    t.ok(Math.abs(ours - theirs) < 1e-6, `${v}: ${ours} vs ${theirs}`)
    const compiled = compileForward(model)(extractFeatures(prepare(v), model.ctx, new Float64Array(FEATURE_COUNT)))
    t.ok(Math.abs(compiled - ours) < 1e-12, `${v}: compiled ${compiled} vs loop ${ours}`)
  }
})

t.test('seeded training is deterministic', async (t) => {
  const rows = Array.from({ length: 300 }, (_, i) => {
    const input = [Math.sin(i), Math.cos(i * 0.7), (i % 7) / 7]
    return { input, output: [(input[0] as number) > 0 ? 1 : 0] }
  })
  const opts = { hidden: [4], epochs: 3, seed: 7, validation: rows.slice(0, 50) }
  const one = trainMlp(rows, opts)
  const two = trainMlp(rows, opts)
  t.same(JSON.stringify(one.json), JSON.stringify(two.json))
  t.equal(one.epoch, two.epoch)
  const other = trainMlp(rows, { ...opts, seed: 8 })
  t.not(JSON.stringify(other.json), JSON.stringify(one.json))
  // Math.random is restored after training.
  t.not(Math.random(), Math.random())
})
