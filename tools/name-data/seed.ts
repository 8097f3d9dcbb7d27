// The one seed of the name data and training run, shared by tools/train-names.ts and the benchmarks.

/** Seed of every random choice in data generation and training. */
export const SEED = 20240611
