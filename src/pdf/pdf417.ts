// The TED as a PDF417 module matrix (docs/sii-protocol.md §9): ISO-8859-1 bytes, byte compaction, error correction level 5.
// bwip-js draws it; the codewords are computed here and handed over with bwipp's `raw` option, which skips bwipp's
// own compaction search: that search is the slow part (~19 ms a TED against ~9 ms in raw mode, measured) and byte
// compaction is what docs/sii-protocol.md §9 asks for anyway.
// 'bwip-js/node': the package's bare specifier has no condition TypeScript's bundler resolution matches (only node, browser…).
import bwipjs from 'bwip-js/node'

export interface Pdf417Matrix {
  /** Modules per row (17 × (columns + 4) + 1, quiet zone not included). */
  readonly width: number
  /** Rows of codewords. */
  readonly rows: number
  /** Height of a row in modules: 3, the row height of 3 × X the SII asks for (docs/sii-protocol.md §9; bwipp's rowmult). */
  readonly rowHeight: number
  /** Row-major, one entry per module of each row, 1 = dark. */
  readonly modules: Uint8Array
}

/** ISO/IEC 15438 byte compaction: latch 924 when the length is a multiple of 6, else 901; 6 bytes → 5 base-900 codewords. */
export function byteCompaction(bytes: Uint8Array): number[] {
  const codewords = [bytes.length % 6 === 0 ? 924 : 901]
  let i = 0
  for (; i + 6 <= bytes.length; i += 6) {
    let n = 0
    for (let k = 0; k < 6; k++) n = n * 256 + bytes[i + k]!  // 2^48 < 2^53: exact in a double
    const group = [0, 0, 0, 0, 0]
    for (let k = 4; k >= 0; k--) {
      group[k] = n % 900
      n = Math.floor(n / 900)
    }
    codewords.push(...group)
  }
  for (; i < bytes.length; i++) codewords.push(bytes[i]!)
  return codewords
}

type RawSymbol = { pixs: number[]; pixx: number; pixy: number }
/**
 * bwip-js's `raw(bcid, text, opts)`: its typings declare the options every symbology shares, not pdf417's own
 * (`eclevel`, `columns`, `raw`), and list overloads TypeScript cannot pick from here; this is the call as documented.
 */
type RawEncoder = (bcid: 'pdf417', text: string, opts: { eclevel: number; columns: number; raw?: boolean; binarytext?: boolean }) => RawSymbol[]
const encodeRaw = bwipjs.raw as unknown as RawEncoder

/** A symbol holds at most 928 codewords: the length descriptor, the data and the 64 of error correction level 5. */
const MAX_DATA_CODEWORDS = 928 - 1 - 64

/**
 * A TED too long for byte compaction at level 5 (names full of entities: up to ~1 500 bytes) goes through bwipp's own
 * compaction, which packs ASCII two characters a codeword; if even that does not fit, a lower error correction level
 * is better than no printed document (the SII's level 5 is a recommendation of its instructivo, docs/sii-protocol.md §9).
 */
function encodeCompacted(bytes: Uint8Array, columns: number): RawSymbol[] {
  const text = String.fromCharCode(...bytes)
  for (const eclevel of [5, 4, 3, 2]) {
    try {
      // binarytext: each character is one byte; without it bwip-js encodes the text as UTF-8 (Ñ → C3 91).
      return encodeRaw('pdf417', text, { eclevel, columns, binarytext: true })
    } catch (err) {
      if (!String(err).includes('pdf417dataTooLong')) throw err
    }
  }
  throw new RangeError(`the TED (${bytes.length} bytes) does not fit in a PDF417 symbol`)
}

/** The PDF417 symbol of `bytes` with `columns` data columns (bwipp picks the rows), error correction level 5. */
export function pdf417Matrix(bytes: Uint8Array, columns: number): Pdf417Matrix {
  // Byte compaction fits about 1 030 bytes at level 5; a usual TED is ~850–950.
  const codewords = byteCompaction(bytes)
  const [symbol] = codewords.length <= MAX_DATA_CODEWORDS ? encodeRaw('pdf417', codewords.map((cw) => `^${String(cw).padStart(3, '0')}`).join(''), { eclevel: 5, columns, raw: true }) : encodeCompacted(bytes, columns)
  if (symbol === undefined || !Array.isArray(symbol.pixs)) throw new Error('bwip-js returned no PDF417 matrix')
  // bwip-js returns each row once (pixs) and the drawn height with the row multiplier applied (pixy).
  const rows = symbol.pixs.length / symbol.pixx
  if (!Number.isInteger(rows) || rows === 0) throw new Error('bwip-js returned a malformed PDF417 matrix')
  return { width: symbol.pixx, rows, rowHeight: symbol.pixy / rows, modules: Uint8Array.from(symbol.pixs, (m) => (m ? 1 : 0)) }
}
