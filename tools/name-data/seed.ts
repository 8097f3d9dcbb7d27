// The one seed of the name data and training run, shared by tools/train-names.ts and the benchmarks.

/**
 * Seed of every random choice in data generation, the split and training. NAME_SEED overrides it to draw a
 * fresh split (with NAME_OUT, to check a configuration on test values no earlier run has seen).
 */
export const SEED = process.env.NAME_SEED === undefined ? 20240611 : Number(process.env.NAME_SEED)
