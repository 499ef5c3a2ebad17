// The PDF417 of the timbre: byte compaction by hand, bwip-js's matrix, and zxing reading back exactly the bytes.
import { describe, expect, test } from 'bun:test'
import { PNG } from 'pngjs'
import { byteCompaction, pdf417Matrix, type Pdf417Matrix } from '../../../src/pdf/pdf417'
import { decodePdf417 } from './pdf-tools'

/** The matrix as a PNG, `scale` pixels a module, with a quiet zone: what zxing reads in these unit tests. */
function toPng(m: Pdf417Matrix, scale = 3): Uint8Array {
  const quiet = 4
  const width = (m.width + 2 * quiet) * scale
  const height = (m.rows * m.rowHeight + 2 * quiet) * scale
  const png = new PNG({ width, height })
  png.data.fill(255)
  for (let y = 0; y < m.rows * m.rowHeight * scale; y++) {
    const row = Math.floor(y / scale / m.rowHeight)
    for (let x = 0; x < m.width * scale; x++) {
      if (m.modules[row * m.width + Math.floor(x / scale)] !== 1) continue
      const o = ((y + quiet * scale) * width + x + quiet * scale) * 4
      png.data[o] = png.data[o + 1] = png.data[o + 2] = 0
    }
  }
  return PNG.sync.write(png)
}

describe('byte compaction (ISO/IEC 15438 §5.4.3)', () => {
  test.each([
    ['6 bytes: latch 924 and one group of 5', [0x41, 0x42, 0x43, 0x44, 0x45, 0x46], [924, 109, 326, 368, 127, 330]],
    ['7 bytes: latch 901, a group, then one codeword a byte', [1, 2, 3, 4, 5, 6, 255], [901, 1, 620, 89, 74, 846, 255]],
    ['fewer than 6 bytes: one codeword each', [0xf1, 0x00], [901, 0xf1, 0]],
  ])('%s', (_name, bytes, codewords) => {
    // 0x414243444546 = 109·900⁴ + 326·900³ + 368·900² + 127·900 + 330 (base 900, most significant first).
    expect(byteCompaction(Uint8Array.from(bytes))).toEqual(codewords)
  })
})

describe('pdf417Matrix', () => {
  test('every byte value 0–255 comes back from zxing as the same byte, in order', () => {
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => i)
    expect(decodePdf417(toPng(pdf417Matrix(bytes, 15)))).toEqual(bytes)
  })

  test('a TED-sized ISO-8859-1 text (ñ, á, º, &amp;) round-trips byte for byte; rows are 3 modules tall', () => {
    const ted = `<TED version="1.0"><DD><RE>76086428-5</RE><RSR>Ferretería y Construcción Ñuble &amp; Cía.</RSR>${'<X>ñandú º½</X>'.repeat(50)}</DD></TED>`
    const bytes = Uint8Array.from(Buffer.from(ted, 'latin1'))
    const m = pdf417Matrix(bytes, 18)
    expect(m.rowHeight).toBe(3)
    expect(m.width).toBe(17 * (18 + 4) + 1)
    expect(decodePdf417(toPng(m))).toEqual(bytes)
  })

  test('random byte strings of TED sizes round-trip (20 cases)', () => {
    for (let i = 0; i < 20; i++) {
      const bytes = crypto.getRandomValues(new Uint8Array(600 + Math.floor(Math.random() * 430)))
      expect(decodePdf417(toPng(pdf417Matrix(bytes, 15)))).toEqual(bytes)
    }
  }, 30_000)

  test('a long TED (names of 40 characters with quotes and "&": ~1 150 bytes, past byte compaction at level 5) still round-trips', () => {
    const name = `${'&quot;Ñ&quot; &amp; '.repeat(6)}Ltda`  // 40 characters once unescaped, 112 bytes escaped
    const caf = `<CAF version="1.0"><DA><RE>76086428-5</RE><RS>${name}</RS><TD>33</TD><RNG><D>1</D><H>100</H></RNG><FA>2025-01-01</FA><RSAPK><M>${'Q'.repeat(88)}</M><E>Aw==</E></RSAPK><IDK>100</IDK></DA><FRMA algoritmo="SHA1withRSA">${'x'.repeat(172)}</FRMA></CAF>`
    const ted = `<TED version="1.0"><DD><RE>76086428-5</RE><TD>33</TD><F>1234567890</F><FE>2025-06-30</FE><RR>96874030-K</RR><RSR>${name}</RSR><MNT>999999999999</MNT><IT1>${name}</IT1>${caf}<TSTED>2025-06-30T10:00:00</TSTED></DD><FRMT algoritmo="SHA1withRSA">${'y'.repeat(88)}</FRMT></TED>`
    const bytes = Uint8Array.from(Buffer.from(ted, 'latin1'))
    expect(bytes.length).toBeGreaterThan(1030)
    expect(decodePdf417(toPng(pdf417Matrix(bytes, 18)))).toEqual(bytes)
  })
})
