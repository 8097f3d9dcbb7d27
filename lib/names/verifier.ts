// Loads the committed name model once and classifies names as real (LABEL_1) or junk (LABEL_0).
import { readFileSync } from 'node:fs'
import { FEATURE_COUNT, extractFeatures, prepare, type Prepared } from './features.js'
import { bestForward, calibrate, compileModel, type CompiledNameModel } from './model.js'
import type { NamePrediction, NameVerifier } from '../types.js'

/** Where the committed model lives, next to this module in source and in dist. */
export const DEFAULT_NAME_MODEL_URL = new URL('../data/name-model.json', import.meta.url)

/** A {@link NameVerifier} that also exposes the calibrated probability of a real name. */
export interface NameModelVerifier extends NameVerifier {
  /** Calibrated probability that the trimmed value is a real name, in [0, 1]. */
  probability(value: string): number
  /** Calibrated probability at and above which a value is a real name (LABEL_1); the model file sets it. */
  readonly threshold: number
  /** Whether the network runs as generated code (false: the plain loop evaluator, when code generation is disallowed). */
  readonly compiled: boolean
}

/** Options of {@link nameVerifierFromModel}. */
export interface NameModelOptions {
  /** Allow compiling the weights with `new Function` (default true); false forces the plain evaluator. */
  codegen?: boolean
}

/**
 * Builds a verifier from an already parsed model file (see lib/names/model.ts for the layout).
 * Throws an Error naming the problem when the file does not check out.
 */
export function nameVerifierFromModel(file: unknown, where = 'model', options: NameModelOptions = {}): NameModelVerifier {
  const model: CompiledNameModel = compileModel(file, where)
  const x = new Float64Array(FEATURE_COUNT)
  const { run: net, compiled } = bestForward(model, options.codegen !== false)
  const probabilityOf = (p: Prepared): number => {
    if (p.value.length === 0) return 0
    extractFeatures(p, model.ctx, x)
    return calibrate(model, net(x))
  }
  return {
    compiled,
    threshold: model.threshold,
    probability(value: string): number {
      return probabilityOf(prepare(typeof value === 'string' ? value : String(value)))
    },
    predict(value: string): NamePrediction {
      const p = prepare(typeof value === 'string' ? value : String(value))
      const prob = probabilityOf(p)
      const real = prob >= model.threshold
      const conf = real ? prob : 1 - prob
      // The contract promises >= 0.5 even where the threshold is not 0.5.
      return {
        value: p.value,
        prediction: real ? 'LABEL_1' : 'LABEL_0',
        confidence: Math.max(0.5, Math.round(conf * 10_000) / 10_000)
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
  let text: string
  try {
    text = readFileSync(source, 'utf8')
  } catch (err) {
    throw new Error(
      `user-verification: name model ${where} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}); run \`npm run train\` or reinstall the package`
    )
  }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw new Error(`user-verification: name model ${where} is not valid JSON (corrupt file)`)
  }
  return nameVerifierFromModel(parsed, where, options)
}
