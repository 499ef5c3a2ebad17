// exchangeKindOf (src/xml/exchange-kind.ts): which SII document a mail attachment is, from the start of the file only.
import { describe, expect, test } from 'bun:test'
import { exchangeKindOf } from '../../../../src/xml/exchange-kind'
import { toLatin1Bytes } from '../../../../src/xml/latin1'

const SII = 'xmlns="http://www.sii.cl/SiiDte"'
const latin1 = (text: string): Uint8Array => toLatin1Bytes(text)
const utf16 = (text: string, bom: number[], le: boolean): Uint8Array => {
  const body = Buffer.from(text, 'utf16le')
  if (!le) body.swap16()
  return new Uint8Array([...bom, ...body])
}

describe('exchangeKindOf', () => {
  test.each([
    ['EnvioDTE with declaration', `<?xml version="1.0" encoding="ISO-8859-1"?>\n<EnvioDTE ${SII} version="1.0"><SetDTE/></EnvioDTE>`, 'EnvioDTE'],
    ['RespuestaDTE after comments and a PI', `<?xml version="1.0"?><!-- acuse --><?xml-stylesheet href="a.xsl"?>\r\n<!-- otra\n línea --><RespuestaDTE ${SII}>`, 'RespuestaDTE'],
    ['EnvioRecibos with a prefix', '<ns0:EnvioRecibos xmlns:ns0="http://www.sii.cl/SiiDte">', 'EnvioRecibos'],
    ['the SII\'s RESULTADO_ENVIO', '<?xml version="1.0" encoding="ISO-8859-1"?>\r\n<RESULTADO_ENVIO>\r\n<IDENTIFICACION>', 'RespSII'],
    ['a self-closed root', `<EnvioDTE ${SII}/>`, 'EnvioDTE'],
    ['a root with a newline before its attributes', `<EnvioDTE\n ${SII}>`, 'EnvioDTE'],
    ['a DTE alone', `<DTE ${SII} version="1.0">`, null],
    ['an EnvioBOLETA (never mailed between companies)', `<EnvioBOLETA ${SII}>`, null],
    ['a name that only starts like one', '<EnvioDTEx>', null],
    ['a DOCTYPE', `<!DOCTYPE EnvioDTE><EnvioDTE ${SII}>`, null],
    ['text before the root', `hola<EnvioDTE ${SII}>`, null],
    ['an unclosed comment', '<!-- <EnvioDTE>', null],
    ['an unclosed declaration', '<?xml version="1.0"', null],
    ['empty', '', null],
    ['a PDF', '%PDF-1.7\n', null],
  ] as const)('%s → %p', (_name, text, kind) => {
    expect(exchangeKindOf(latin1(text))).toBe(kind)
  })

  test('byte-order marks: UTF-8, UTF-16 LE and BE', () => {
    const text = `<?xml version="1.0"?><RespuestaDTE ${SII}>`
    expect(exchangeKindOf(new Uint8Array([0xef, 0xbb, 0xbf, ...new TextEncoder().encode(text)]))).toBe('RespuestaDTE')
    expect(exchangeKindOf(utf16(text, [0xff, 0xfe], true))).toBe('RespuestaDTE')
    expect(exchangeKindOf(utf16(text, [0xfe, 0xff], false))).toBe('RespuestaDTE')
  })

  test('only the start is read: a root beyond 64 KB of comments is not found, and 20 MB answer at once', () => {
    expect(exchangeKindOf(latin1(`<!--${' '.repeat(70_000)}--><EnvioDTE ${SII}>`))).toBeNull()
    const big = new Uint8Array(20 * 1024 * 1024).fill(0x20)
    big.set(latin1(`<EnvioDTE ${SII}>`), 0)
    const started = performance.now()
    expect(exchangeKindOf(big)).toBe('EnvioDTE')
    expect(performance.now() - started).toBeLessThan(50)
  })

  test('random bytes never throw', () => {
    for (let i = 0; i < 200; i++) {
      const bytes = new Uint8Array(64).map(() => Math.floor(Math.random() * 256))
      expect(() => exchangeKindOf(bytes)).not.toThrow()
    }
  })
})
