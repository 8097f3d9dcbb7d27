// Loads the committed name model and lexicon once and classifies names as real (LABEL_1) or junk (LABEL_0, with a reason).
import { readFileSync } from 'node:fs'
import { K_LETTER, K_MARK, S_HAN, S_HANGUL, S_KANA, S_LATIN, classify, lowerCodePoint } from './characters.js'
import { FEATURE_COUNT, extractFeatures, prepare, type Prepared } from './features.js'
import { latinReading } from './latin.js'
import { bestForward, calibrate, compileModel, type CompiledNameModel } from './model.js'
import { compileLexicon, junkWord, nameWords, ruleReason, shapeReason, type NameLexicon } from './rules.js'
import type { NameJunkReason, NamePrediction, NameVerifier } from '../types.js'
import { UserVerificationError } from '../errors.js'

/** Where the committed model lives, next to this module in source and in dist. */
export const DEFAULT_NAME_MODEL_URL = new URL('../data/name-model.json', import.meta.url)

/** Where the committed junk lexicon lives (built by `npm run data:names`). */
export const DEFAULT_NAME_LEXICON_URL = new URL('../data/name-lexicon.json', import.meta.url)

/** Confidence reported for a value a rule rejects (e-mail, markup, digits, lexicon words, keyboard walks). */
export const RULE_CONFIDENCE = 0.99

/** A rule-rejected value's probability is the network's times this, so it stays below 1 - RULE_CONFIDENCE. */
const RULE_SCALE = 0.01

/** A {@link NameVerifier} that also exposes the calibrated probability of a real name. */
export interface NameModelVerifier extends NameVerifier {
  /**
   * Probability that the trimmed value is a real name, in [0, 1], calibrated for equal priors (a name and junk
   * equally likely before the value is seen), so 0.5 is the decision point. For a value a rule rejects, the network's
   * probability times 0.01 (the rule decides; the order among such values stays the network's).
   */
  probability(value: string): number
  /**
   * The network's probability of a real name for the value alone, calibrated as the model file says (for the
   * training data's mix of names and junk): no rules, no Latin reading, no word-by-word judgement. For training and
   * diagnostics; decisions use {@link NameModelVerifier.probability}.
   */
  networkProbability(value: string): number
  /** Probability at and above which a value is a real name (LABEL_1): 0.5, the equal-prior decision point. */
  readonly threshold: number
  /** Whether the network runs as generated code (false: the plain loop evaluator, when code generation is disallowed). */
  readonly compiled: boolean
}

/** Options of {@link nameVerifierFromModel}. */
export interface NameModelOptions {
  /** Allow compiling the weights with `new Function` (default true); false forces the plain evaluator. */
  codegen?: boolean
  /** A parsed junk lexicon file; defaults to the committed lib/data/name-lexicon.json. */
  lexicon?: unknown
}

/** Reads and parses a JSON data file, with errors that name the file and the fix. */
function readJson(source: URL | string, what: string): unknown {
  const where = typeof source === 'string' ? source : source.pathname
  let text: string
  try {
    text = readFileSync(source, 'utf8')
  } catch (err) {
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `user-verification: name ${what} ${where} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); run \`npm run train\` or reinstall the package`
    )
  }
  try {
    return JSON.parse(text)
  } catch {
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `user-verification: name ${what} ${where} is not valid JSON (corrupt file)`)
  }
}

const logit = (p: number): number => Math.log(p / (1 - p))

/** A value without its combining marks (NFD, marks dropped, NFC again): the form "without diacritics". */
export function stripMarks(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').normalize('NFC')
}

/**
 * Builds a verifier from an already parsed model file (see lib/names/model.ts for the layout).
 * Throws an Error naming the problem when the file does not check out.
 */
export function nameVerifierFromModel(file: unknown, where = 'model', options: NameModelOptions = {}): NameModelVerifier {
  const model: CompiledNameModel = compileModel(file, where)
  const lexicon: NameLexicon = compileLexicon(options.lexicon ?? readJson(DEFAULT_NAME_LEXICON_URL, 'lexicon'))
  const x = new Float64Array(FEATURE_COUNT)
  const { run: net, compiled } = bestForward(model, options.codegen !== false)
  // The file's calibration fits this data's mix (a share `threshold` of real names); moving its logit by
  // logit(threshold) gives the probability for equal priors, whose decision point is 0.5.
  const priorShift = logit(model.threshold)
  const networkScore = (p: Prepared): number => {
    if (p.value.length === 0) return 0
    extractFeatures(p, model.ctx, x)
    return calibrate(model, net(x))
  }
  const score = (p: Prepared): number => {
    if (p.value.length === 0) return 0
    const q = networkScore(p)
    const z = logit(Math.min(Math.max(q, 1e-12), 1 - 1e-12)) - priorShift
    return 1 / (1 + Math.exp(-z))
  }
  // A value is also scored by its Latin reading (any-ascii) and without its combining marks, and keeps the best score:
  // the reading is for what the n-gram model has not seen (letters outside its alphabet: Tamil, Ethiopic, Kazakh
  // Cyrillic…) and for Latin letters with diacritics; scripts the training data covers keep their own score, since a
  // reading of their random letters looks like a name as often as not. Any value but Han, kana and Hangul is scored
  // without its combining marks (Ζερβός as Ζερβος, Þórunn as Þorunn), so diacritics never count against a name.
  const alphabet = model.ctx.tables.idOf
  /** 0: own score only (ASCII, CJK); 1: also without marks; 2: also the Latin reading. */
  const variants = (text: string): 0 | 1 | 2 => {
    let out: 0 | 1 | 2 = 0
    for (const ch of text) {
      const c = ch.codePointAt(0) as number
      if (c < 0x80) continue
      const cls = classify(c)
      const kind = cls & 0xff
      if (kind !== K_LETTER && kind !== K_MARK) continue
      const s = cls >> 8
      if (s === S_HAN || s === S_KANA || s === S_HANGUL) return 0
      if (s === S_LATIN || c >= 0x10000 || alphabet[lowerCodePoint(c)] === 0) out = 2
      else if (out === 0) out = 1
    }
    return out
  }
  const scoreWithReading = (p: Prepared): number => {
    const own = score(p)
    const kind = variants(p.text)
    if (kind === 0) return own
    let best = own
    const stripped = stripMarks(p.text)
    if (stripped !== p.text) best = Math.max(best, score(prepare(stripped)))
    if (kind === 2) {
      const reading = latinReading(p.text)
      if (reading !== p.text && reading !== stripped && reading.length > 0) best = Math.max(best, score(prepare(reading)))
    }
    return best
  }
  // `ranked`: whether a rule's rejection needs its probability too. `predict` reports the rule's
  // fixed confidence, so it skips the network there: the longest junk (phrases) costs most to score.
  const judge = (p: Prepared, ranked: boolean): { prob: number; reason: NameJunkReason | null; rule: boolean } => {
    const rule = ruleReason(p.text, p.length, lexicon)
    // A rule's rejection keeps the network's order below 0.01, so rankings (ROC AUC) still see the network's view.
    if (rule !== null) return { prob: ranked ? RULE_SCALE * score(p) : 0, reason: rule, rule: true }
    let prob = scoreWithReading(p)
    // A multi-word name that the network doubts as a whole is a name when each of its (at most 4) words is, particles
    // and initials aside, and none is a junk word.
    if (prob < 0.5 && p.length <= 64 && /[\s\-‐‑'’]/u.test(p.text)) {
      const { words, structured } = nameWords(p.text)
      // Without particles, two or three words qualify when each is written as a name is (title case, or a script
      // without case), which ordinary sentences typed in one case are not.
      const nameLike = words.length >= 2 && words.length <= 3 && p.text.split(/\s+/u).every((w) => /^(?:\p{Lu}\p{Ll}|\p{Lo})/u.test(w))
      if ((structured || nameLike) && words.length >= 1 && words.length <= 4 && !words.some((w) => junkWord(w, lexicon))) {
        let least = 1
        for (const w of words) least = Math.min(least, scoreWithReading(prepare(w)))
        prob = Math.max(prob, least)
      }
    }
    return { prob, reason: prob >= 0.5 ? null : shapeReason(p.text), rule: false }
  }
  return {
    compiled,
    threshold: 0.5,
    networkProbability(value: string): number {
      return networkScore(prepare(typeof value === 'string' ? value : String(value)))
    },
    probability(value: string): number {
      return judge(prepare(typeof value === 'string' ? value : String(value)), true).prob
    },
    predict(value: string): NamePrediction {
      const p = prepare(typeof value === 'string' ? value : String(value))
      const { prob, reason, rule } = judge(p, false)
      const real = reason === null
      const conf = rule ? RULE_CONFIDENCE : real ? prob : 1 - prob
      return {
        value: p.value,
        prediction: real ? 'LABEL_1' : 'LABEL_0',
        confidence: Math.max(0.5, Math.round(conf * 10_000) / 10_000),
        reason
      }
    }
  }
}

/**
 * Loads and verifies the name model. `source` is a file URL or path; defaults to the committed
 * `lib/data/name-model.json`. Throws an Error with a clear message when the file is missing,
 * is not JSON, has another format/version, or fails its SHA-256 checksum.
 */
export function loadNameModel(source: URL | string = DEFAULT_NAME_MODEL_URL, options: NameModelOptions = {}): NameModelVerifier {
  const where = typeof source === 'string' ? source : source.pathname
  return nameVerifierFromModel(readJson(source, 'model'), where, options)
}
