// Seeded, epoch-by-epoch training of a brain.js NeuralNetwork with per-epoch shuffles and best-epoch selection.
import brain from 'brain.js'
import { mulberry32, shuffle, withSeededMathRandom } from './prng.js'

/** One training row: standardised features and the label. */
export interface Row {
  input: number[]
  output: number[]
}

/** Options of {@link trainMlp}. */
export interface TrainOptions {
  hidden: number[]
  epochs: number
  seed: number
  /** Learning rate of the first epoch; it falls linearly to 5% of this by the last one. Defaults to 0.05. */
  learningRate?: number
  /** Validation rows; the epoch with the lowest log loss on them wins. Defaults to the last epoch. */
  validation?: Row[]
  onEpoch?: (epoch: number, trainError: number, validationLoss: number) => void
}

/** brain.js JSON of the chosen epoch, its number and validation loss. */
export function trainMlp(rows: Row[], o: TrainOptions): { json: unknown; epoch: number; loss: number } {
  const rng = mulberry32(o.seed)
  const data = [...rows]
  const net = withSeededMathRandom(o.seed, () => new brain.NeuralNetwork({ hiddenLayers: o.hidden, activation: 'sigmoid' }))
  const lr0 = o.learningRate ?? 0.05
  let best: { json: unknown; epoch: number; loss: number } | undefined
  for (let epoch = 1; epoch <= o.epochs; epoch++) {
    shuffle(rng, data)
    // Per-sample SGD is noisy at a fixed rate; annealing lets the late epochs settle.
    const lr = lr0 * (1 - (0.95 * (epoch - 1)) / Math.max(1, o.epochs - 1))
    const state = withSeededMathRandom(o.seed + epoch, () =>
      net.train(data, { iterations: 1, errorThresh: 1e-6, learningRate: lr, momentum: 0.5 })
    )
    let loss = 0
    const val = o.validation ?? []
    for (const c of val) {
      const p = Math.min(Math.max((net.run(c.input) as number[])[0] as number, 1e-7), 1 - 1e-7)
      loss -= c.output[0] === 1 ? Math.log(p) : Math.log(1 - p)
    }
    loss = val.length > 0 ? loss / val.length : -epoch
    if (best === undefined || loss < best.loss) best = { json: net.toJSON(), epoch, loss }
    o.onEpoch?.(epoch, state.error, loss)
  }
  if (best === undefined) throw new Error('trainMlp: epochs must be >= 1')
  return best
}
