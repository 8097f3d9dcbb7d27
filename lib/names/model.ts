// The name model file: its format, checksum, and the plain evaluation of its trained weights.
import { createHash } from 'node:crypto'
import { SCRIPTS } from './characters.js'
import { FEATURE_COUNT, FEATURE_NAMES, type FeatureContext } from './features.js'
import { finishTables, type NgramTables } from './ngrams.js'
import { UserVerificationError } from '../errors.js'

/** `format` value of a name model file. */
export const NAME_MODEL_FORMAT = 'user-verification/name-model'

/** Version of the file layout this code reads; a file with another version is refused. */
export const NAME_MODEL_VERSION = 3

/** A fully connected sigmoid layer: `weights[j]` are node j's input weights. */
export interface DenseLayer {
  weights: number[][]
  biases: number[]
}

/** Everything in the model file except `checksum`. */
export interface NameModelPayload {
  format: string
  version: number
  /** Seed the training run used (informational). */
  seed: number
  /** Feature names in input order; must equal the code's {@link FEATURE_NAMES}. */
  features: string[]
  /** Per-feature mean and standard deviation used to standardise inputs. */
  mean: number[]
  std: number[]
  /** Letters of the n-gram model in id order (ids 4, 5, …). */
  alphabet: string
  ngram: {
    uni: number[]
    /** Sorted bigram keys as deltas, then their counts. */
    biKeys: number[]
    biCounts: number[]
    /** Sorted trigram keys `(a*size+b)*size+c` as deltas, then their counts. */
    triKeys: number[]
    triCounts: number[]
    /** Sorted 4-gram keys `((z*size+a)*size+b)*size+c` as deltas, then their counts. */
    quadKeys: number[]
    quadCounts: number[]
  }
  lexicon: { placeholder: string[]; profanity: string[] }
  /** Mean 4-gram log probability per transition of training names, per script (see FeatureContext.scriptMean). */
  scriptMean: number[]
  /** Hidden and output layers, sigmoid activations; one output, the raw P(real name). */
  net: { sizes: number[]; layers: DenseLayer[] }
  /** Platt scaling of the raw output's logit: P = sigmoid(a * logit(raw) + b). */
  calibration: { a: number; b: number }
  /** Decision threshold on the calibrated probability. Defaults to 0.5. */
  threshold: number
}

/** The model file: payload plus the hex SHA-256 of `JSON.stringify(payload)`. */
export interface NameModelFile extends NameModelPayload {
  checksum: string
}

/** SHA-256 (hex) of a payload, as stored in `checksum`. */
export function payloadChecksum(payload: NameModelPayload): string {
  return createHash('sha256').update(JSON.stringify(payload)).digest('hex')
}

/** Splits a parsed file into payload and checksum, in the key order the file was written in. */
function splitFile(file: Record<string, unknown>): { payload: NameModelPayload; checksum: unknown } {
  const { checksum, ...payload } = file
  return { payload: payload as unknown as NameModelPayload, checksum }
}

/** A loaded, verified model ready to evaluate. */
export interface CompiledNameModel {
  ctx: FeatureContext
  mean: Float64Array
  invStd: Float64Array
  /** Row-major weights per layer, with sizes. */
  layers: Array<{ w: Float64Array; b: Float64Array; inputs: number; outputs: number }>
  calibA: number
  calibB: number
  threshold: number
  /** Largest layer width, for the scratch buffers. */
  width: number
}

/** (key, count) pairs of a delta-coded key list. */
function* undelta(keys: number[], counts: number[]): Generator<[number, number]> {
  let key = 0
  for (let i = 0; i < keys.length; i++) {
    key += keys[i] as number
    yield [key, counts[i] as number]
  }
}

/** Thrown-message prefix for every model problem. */
const PREFIX = 'user-verification: name model'

/**
 * Checks and compiles a parsed model file. Throws an Error that says what is wrong when the
 * format, version, feature list, shapes or checksum do not match.
 */
export function compileModel(file: unknown, where = 'model'): CompiledNameModel {
  if (file === null || typeof file !== 'object' || Array.isArray(file)) {
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where} is not a JSON object`)
  }
  const { payload, checksum } = splitFile(file as Record<string, unknown>)
  if (payload.format !== NAME_MODEL_FORMAT)
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `${PREFIX} ${where}: format must be "${NAME_MODEL_FORMAT}", got ${JSON.stringify(payload.format)}`
    )
  if (payload.version !== NAME_MODEL_VERSION)
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `${PREFIX} ${where}: version ${JSON.stringify(payload.version)} is not supported (this code reads ${NAME_MODEL_VERSION}); retrain with \`npm run train\``
    )
  if (typeof checksum !== 'string') throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: checksum is missing`)
  const actual = payloadChecksum(payload)
  if (actual !== checksum)
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `${PREFIX} ${where}: checksum mismatch (file says ${checksum.slice(0, 12)}…, weights hash to ${actual.slice(0, 12)}…); the file is corrupt or was edited by hand`
    )
  if (!Array.isArray(payload.features) || payload.features.join(',') !== FEATURE_NAMES.join(',')) {
    throw new UserVerificationError(
      'ERR_UV_MODEL_LOAD',
      `${PREFIX} ${where}: feature list differs from lib/names/features.ts; retrain with \`npm run train\``
    )
  }

  const alphabet = new Map<number, number>()
  let id = 4
  for (const ch of payload.alphabet) alphabet.set(ch.codePointAt(0) as number, id++)
  const size = alphabet.size + 4
  const ng = payload.ngram
  if (ng.uni.length !== size || ng.biKeys.length !== ng.biCounts.length || ng.triKeys.length !== ng.triCounts.length) {
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: n-gram tables have inconsistent sizes`)
  }
  if (!Array.isArray(ng.quadKeys) || !Array.isArray(ng.quadCounts) || ng.quadKeys.length !== ng.quadCounts.length) {
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: n-gram tables have inconsistent sizes`)
  }
  const uni = Float64Array.from(ng.uni)
  const tables: NgramTables = finishTables(
    alphabet,
    uni,
    undelta(ng.biKeys, ng.biCounts),
    undelta(ng.triKeys, ng.triCounts),
    undelta(ng.quadKeys, ng.quadCounts),
    { bi: ng.biKeys.length, tri: ng.triKeys.length, quad: ng.quadKeys.length }
  )

  const layers: CompiledNameModel['layers'] = []
  let inputs: number = FEATURE_COUNT
  let width: number = FEATURE_COUNT
  for (const layer of payload.net.layers) {
    const outputs = layer.biases.length
    if (layer.weights.length !== outputs || layer.weights.some((row) => row.length !== inputs)) {
      throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: layer shapes do not chain (expected ${outputs}x${inputs})`)
    }
    layers.push({ w: Float64Array.from(layer.weights.flat()), b: Float64Array.from(layer.biases), inputs, outputs })
    inputs = outputs
    if (outputs > width) width = outputs
  }
  if (inputs !== 1)
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: the network must have one output, has ${inputs}`)
  if (!Array.isArray(payload.scriptMean) || payload.scriptMean.length !== SCRIPTS.length)
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: scriptMean must have ${SCRIPTS.length} entries`)
  if (payload.mean.length !== FEATURE_COUNT || payload.std.length !== FEATURE_COUNT)
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: mean/std length must be ${FEATURE_COUNT}`)
  return {
    ctx: {
      tables,
      lexicon: { placeholder: new Set(payload.lexicon.placeholder), profanity: new Set(payload.lexicon.profanity) },
      scriptMean: Float64Array.from(payload.scriptMean)
    },
    mean: Float64Array.from(payload.mean),
    invStd: Float64Array.from(payload.std, (s) => 1 / (s > 1e-9 ? s : 1)),
    layers,
    calibA: payload.calibration.a,
    calibB: payload.calibration.b,
    threshold: thresholdOf(payload.threshold, where),
    width
  }
}

/** The decision threshold of a payload: 0.5 when absent, else a number strictly between 0 and 1. */
function thresholdOf(t: unknown, where: string): number {
  if (t === undefined) return 0.5
  if (typeof t !== 'number' || !(t > 0 && t < 1))
    throw new UserVerificationError('ERR_UV_MODEL_LOAD', `${PREFIX} ${where}: threshold must be a number between 0 and 1`)
  return t
}

/** Standardises features in place. */
export function standardise(m: CompiledNameModel, x: Float64Array): Float64Array {
  for (let i = 0; i < x.length; i++) x[i] = ((x[i] as number) - (m.mean[i] as number)) * (m.invStd[i] as number)
  return x
}

/**
 * Raw network output for standardised features (sigmoid MLP, the same arithmetic as brain.js
 * `NeuralNetwork.run`). `a`/`b` are scratch buffers of at least `m.width` entries.
 */
export function forward(m: CompiledNameModel, x: Float64Array, a: Float64Array, b: Float64Array): number {
  let input = x
  let out = a
  for (const layer of m.layers) {
    const { w, b: bias, inputs, outputs } = layer
    for (let j = 0; j < outputs; j++) {
      let sum = bias[j] as number
      const base = j * inputs
      for (let k = 0; k < inputs; k++) sum += (w[base + k] as number) * (input[k] as number)
      out[j] = 1 / (1 + Math.exp(-sum))
    }
    input = out
    out = out === a ? b : a
  }
  return input[0] as number
}

/**
 * Compiles the network, with standardisation folded into the first layer, into one straight-line
 * function of the raw features (what brain.js `toFunction()` does, without brain.js at run time).
 * Gives the same value as {@link standardise} then {@link forward}, up to rounding.
 */
export function compileForward(m: CompiledNameModel): (x: Float64Array) => number {
  const lines: string[] = []
  const num = (v: number): string => (Number.isFinite(v) ? String(v) : '0')
  const nIn = m.mean.length
  lines.push(Array.from({ length: nIn }, (_, k) => `const x${k}=x[${k}];`).join(''))
  // Inputs that are mostly zero (flags, one-hot groups: mean below 0.15) are added under a branch, so a
  // typical name skips about half of the first layer's multiply-adds.
  const sparse = Array.from(m.mean, (v) => Math.abs(v) < 0.15)
  let inputs: string[] = []
  m.layers.forEach((layer, li) => {
    const next: string[] = []
    if (li === 0) {
      const w = (j: number, k: number): number => (layer.w[j * layer.inputs + k] as number) * (m.invStd[k] as number)
      for (let j = 0; j < layer.outputs; j++) {
        let bias = layer.b[j] as number
        for (let k = 0; k < nIn; k++) bias -= (m.mean[k] as number) * w(j, k)
        const terms: string[] = []
        for (let k = 0; k < nIn; k++) if (!sparse[k] && w(j, k) !== 0) terms.push(`${num(w(j, k))}*x${k}`)
        lines.push(`let a${j}=${num(bias)}${terms.length > 0 ? `+${terms.join('+')}` : ''};`)
      }
      for (let k = 0; k < nIn; k++) {
        if (!sparse[k]) continue
        const adds: string[] = []
        for (let j = 0; j < layer.outputs; j++) if (w(j, k) !== 0) adds.push(`a${j}+=${num(w(j, k))}*x${k};`)
        if (adds.length > 0) lines.push(`if(x${k}!==0){${adds.join('')}}`)
      }
      for (let j = 0; j < layer.outputs; j++) {
        lines.push(`const h0_${j}=1/(1+Math.exp(-a${j}));`)
        next.push(`h0_${j}`)
      }
    } else {
      for (let j = 0; j < layer.outputs; j++) {
        const terms: string[] = []
        for (let k = 0; k < layer.inputs; k++) {
          const wv = layer.w[j * layer.inputs + k] as number
          if (wv !== 0) terms.push(`${num(wv)}*${inputs[k] as string}`)
        }
        const v = `h${li}_${j}`
        lines.push(`const ${v}=1/(1+Math.exp(-(${num(layer.b[j] as number)}+${terms.join('+') || '0'})));`)
        next.push(v)
      }
    }
    inputs = next
  })
  lines.push(`return ${inputs[0] as string};`)
  // eslint-disable-next-line no-new-func -- generated from the verified weights only
  return new Function('x', lines.join('\n')) as (x: Float64Array) => number
}

/**
 * The same function as {@link compileForward} built from plain loops, for processes where code generation
 * from strings is disallowed (`--disallow-code-generation-from-strings`, some CSP-like sandboxes).
 */
export function plainForward(m: CompiledNameModel): (x: Float64Array) => number {
  const xs = new Float64Array(m.mean.length)
  const a = new Float64Array(m.width)
  const b = new Float64Array(m.width)
  return (x: Float64Array): number => {
    xs.set(x)
    return forward(m, standardise(m, xs), a, b)
  }
}

/** {@link compileForward} where the runtime allows `new Function`, else {@link plainForward}. */
export function bestForward(m: CompiledNameModel, codegen = true): { run: (x: Float64Array) => number; compiled: boolean } {
  if (codegen) {
    try {
      return { run: compileForward(m), compiled: true }
    } catch (err) {
      // EvalError when code generation from strings is disallowed; anything else is a real fault.
      if (!(err instanceof EvalError)) throw err
    }
  }
  return { run: plainForward(m), compiled: false }
}

/** Calibrated P(real name) from a raw network output. */
export function calibrate(m: CompiledNameModel, raw: number): number {
  const r = Math.min(Math.max(raw, 1e-12), 1 - 1e-12)
  const z = m.calibA * Math.log(r / (1 - r)) + m.calibB
  return 1 / (1 + Math.exp(-z))
}
