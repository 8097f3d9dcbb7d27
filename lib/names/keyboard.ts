// Keyboard adjacency of QWERTY, AZERTY, QWERTZ and ЙЦУКЕН keys, for the keyboard-walk features.

// Keyboard neighbour pairs (same row +-1, or stacked) for QWERTY, AZERTY, QWERTZ and ЙЦУКЕН,
// as a small index per key and an adjacency matrix of those indices.
const KEY_ROWS = [
  ['1234567890', 'qwertyuiop', 'asdfghjkl', 'zxcvbnm'],
  ['1234567890', 'azertyuiop', 'qsdfghjklm', 'wxcvbn'],
  ['1234567890', 'qwertzuiopü', 'asdfghjklöä', 'yxcvbnm'],
  ['1234567890', 'йцукенгшщзхъ', 'фывапролджэ', 'ячсмитьбю']
]
/** Code points below this can be keys; {@link KEY_INDEX} covers them. */
export const KEY_LIMIT = 0x500
/** Key index (1-based, 0 = not a key) of each code point below {@link KEY_LIMIT}. */
export const KEY_INDEX = new Int16Array(KEY_LIMIT)
let keyCount = 0
for (const layout of KEY_ROWS) {
  for (const row of layout) {
    for (const ch of row) {
      const c = ch.codePointAt(0) as number
      if (KEY_INDEX[c] === 0) KEY_INDEX[c] = ++keyCount
    }
  }
}
/** Row stride of {@link KEY_ADJ}. */
export const KEY_STRIDE = keyCount + 1
/** 1 where keys i and j are neighbours on some layout, at `i * KEY_STRIDE + j`. */
export const KEY_ADJ = new Uint8Array(KEY_STRIDE * KEY_STRIDE)
function keyPair(a: string, b: string): void {
  const i = KEY_INDEX[a.codePointAt(0) as number] as number
  const j = KEY_INDEX[b.codePointAt(0) as number] as number
  KEY_ADJ[i * KEY_STRIDE + j] = 1
  KEY_ADJ[j * KEY_STRIDE + i] = 1
}
for (const layout of KEY_ROWS) {
  for (let r = 0; r < layout.length; r++) {
    const row = Array.from(layout[r] as string)
    const below = layout[r + 1] === undefined ? undefined : Array.from(layout[r + 1] as string)
    for (let i = 0; i < row.length; i++) {
      const next = row[i + 1]
      if (next !== undefined) keyPair(row[i] as string, next)
      // Rows are staggered: key i sits over keys i-1 and i of the next row.
      if (below !== undefined) {
        for (const j of [i - 1, i]) {
          const bc = below[j]
          if (bc !== undefined) keyPair(row[i] as string, bc)
        }
      }
    }
  }
}
