import { describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { createHash, generateKeyPairSync } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { authorityKeys } from '../../../src/xml/authority-keys'
import { verifyCafSignature } from '../../../src/xml/caf'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../src/xml/latin1'
import { buildTed, readTed, verifyTed, type TedData } from '../../../src/xml/ted'
import { makeTestCaf } from '../../support/pki'
import { OFFICIAL_EXAMPLE_FILE } from '../../support/xml-tools'

const OFFICIAL_EXAMPLE = fromLatin1Bytes(readFileSync(OFFICIAL_EXAMPLE_FILE))

const { caf } = makeTestCaf()

function tedData(change: Partial<TedData> = {}): TedData {
  return {
    rutEmisor: '76543210-3',
    tipoDte: 33,
    folio: 42,
    fechaEmision: '2026-01-10',
    rutReceptor: '77777777-7',
    razonSocialReceptor: 'Ñandú & "Cía" <Ltda> de O\'Higgins',
    montoTotal: 119000,
    item1: 'Café molido de grano seleccionado, 1 kg',
    timestamp: '2026-01-10T09:33:20',
    ...change,
  }
}

describe('the SII official example (docs/sii-protocol.md §3.2 vector)', () => {
  test('its DD flattens to the 592 bytes whose SHA-1 is 35f9c699…', () => {
    const { ddXml } = readTed(OFFICIAL_EXAMPLE)
    const bytes = toLatin1Bytes(ddXml)
    expect(bytes.length).toBe(592)
    expect(createHash('sha1').update(bytes).digest('hex')).toBe('35f9c699d6a2911ca05205570dd2ce753b881ac8')
    expect(ddXml).toStartWith('<DD><RE>97975000-5</RE><TD>33</TD><F>60</F><FE>2003-10-13</FE>')
    expect(ddXml).toEndWith('</CAF><TSTED>2003-10-13T09:33:20</TSTED></DD>')
    expect(ddXml).toContain('<RSR>EMPRESA  LTDA</RSR>')  // both spaces: whitespace inside values is signed (§1.2)
  })

  test('its FRMT verifies with the RSAPK inside its own DD, and its CAF with IDK 100', () => {
    expect(verifyTed(OFFICIAL_EXAMPLE)).toBe(true)
    const ted = readTed(OFFICIAL_EXAMPLE)
    expect(ted.data).toMatchObject({ rutEmisor: '97975000-5', tipoDte: 33, folio: 60, montoTotal: '119000', item1: 'Parlantes Multimedia 180W.' })
    expect(() => verifyCafSignature(ted.caf, authorityKeys({ allowSimulator: false }))).not.toThrow()
  })

  test.each([
    ['MNT', (x: string) => x.replace('<MNT>119000</MNT>', '<MNT>119001</MNT>')],
    ['RSR, one space less', (x: string) => x.replace('<RSR>EMPRESA  LTDA</RSR>', '<RSR>EMPRESA LTDA</RSR>')],
    ['FRMT', (x: string) => x.replace('GbmDcS9e', 'GbmDcS9f')],
  ])('a change in %s fails', (_, spoil) => {
    expect(verifyTed(spoil(OFFICIAL_EXAMPLE))).toBe(false)
  })

  test('another key fails', () => {
    expect(verifyTed(OFFICIAL_EXAMPLE, generateKeyPairSync('rsa', { modulusLength: 512, publicExponent: 3 }).publicKey)).toBe(false)
  })
})

describe('buildTed', () => {
  test('a flat TED: DD fields in XSD order, the CAF element verbatim, then TSTED; FRMT over the DD', () => {
    const ted = buildTed(tedData(), caf)
    expect(ted).toStartWith('<TED version="1.0"><DD><RE>76543210-3</RE><TD>33</TD><F>42</F><FE>2026-01-10</FE><RR>77777777-7</RR>')
    expect(ted).toContain(`<MNT>119000</MNT><IT1>Café molido de grano seleccionado, 1 kg</IT1>${caf.cafXml}<TSTED>2026-01-10T09:33:20</TSTED></DD><FRMT algoritmo="SHA1withRSA">`)
    expect(ted).not.toMatch(/>\s+</)
    expect(verifyTed(ted)).toBe(true)
    expect(verifyTed(ted, caf.publicKey)).toBe(true)
  })

  test('escapes with the five named entities, in the signed bytes and in the output alike', () => {
    const ted = buildTed(tedData(), caf)
    expect(ted).toContain('<RSR>Ñandú &amp; &quot;Cía&quot; &lt;Ltda&gt; de O&apos;Higgins</RSR>')
    expect(readTed(ted).data.razonSocialReceptor).toBe('Ñandú & "Cía" <Ltda> de O\'Higgins')
    expect(readTed(ted).ddXml).toBe(/<DD>.*<\/DD>/.exec(ted)?.[0] ?? '')
  })

  test('openssl agrees: `openssl dgst -sha1 -verify` accepts FRMT over the DD written as ISO-8859-1', () => {
    const ted = buildTed(tedData(), caf)
    const dir = mkdtempSync(join(tmpdir(), 'timbre-ted-'))
    try {
      const dd = /<DD>.*<\/DD>/.exec(ted)?.[0] ?? ''
      const frmt = /<FRMT[^>]*>([^<]+)<\/FRMT>/.exec(ted)?.[1] ?? ''
      writeFileSync(join(dir, 'dd.bin'), toLatin1Bytes(dd))
      writeFileSync(join(dir, 'frmt.bin'), Buffer.from(frmt, 'base64'))
      writeFileSync(join(dir, 'rsapk.pem'), caf.publicKey.export({ type: 'spki', format: 'pem' }))
      const verify = (file: string) => spawnSync('openssl', ['dgst', '-sha1', '-verify', join(dir, 'rsapk.pem'), '-signature', join(dir, 'frmt.bin'), file], { encoding: 'utf8' })
      const ok = verify(join(dir, 'dd.bin'))
      expect(ok.stdout.trim()).toBe('Verified OK')
      writeFileSync(join(dir, 'dd-utf8.bin'), Buffer.from(dd, 'utf8'))  // the classic mistake: UTF-8 instead of Latin-1
      expect(verify(join(dir, 'dd-utf8.bin')).status).not.toBe(0)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  test('RSR and IT1 are cut to 40 characters before escaping', () => {
    const long = 'Sociedad Comercial & Inversiones Ñuñoa del Sur Limitada'
    const ted = buildTed(tedData({ razonSocialReceptor: long, item1: `${'x'.repeat(39)}&tail` }), caf)
    expect(readTed(ted).data.razonSocialReceptor).toBe(long.slice(0, 40))
    expect(ted).toContain(`<IT1>${'x'.repeat(39)}&amp;</IT1>`)
    expect(verifyTed(ted)).toBe(true)
  })

  test('the TED verifies inside a DTE in the SII namespace (the DD is signed without it)', () => {
    const ted = buildTed(tedData(), caf)
    const dte = `<?xml version="1.0" encoding="ISO-8859-1"?>\n<DTE xmlns="http://www.sii.cl/SiiDte" version="1.0"><Documento ID="F42T33">${ted}<TmstFirma>2026-01-10T09:33:20</TmstFirma></Documento></DTE>`
    expect(verifyTed(dte)).toBe(true)
    expect(verifyTed(dte.replace('<F>42</F>', '<F>43</F>'))).toBe(false)
  })

  test('montoTotal as decimal text (exports) is written verbatim', () => {
    const ted = buildTed(tedData({ montoTotal: '1234.5' }), caf)
    expect(ted).toContain('<MNT>1234.5</MNT>')
    expect(verifyTed(ted)).toBe(true)
  })

  test.each([
    ['a folio outside the CAF', { folio: 101 }],
    ['another tipo', { tipoDte: 34 }],
    ['another emisor', { rutEmisor: '11111111-1' }],
    ['a receptor RUT with dots', { rutReceptor: '77.777.777-7' }],
    ['a timestamp with a zone', { timestamp: '2026-01-10T09:33:20Z' }],
    ['a date in another format', { fechaEmision: '10-01-2026' }],
    ['€ in the item (outside ISO-8859-1)', { item1: 'Servicio 10 €' }],
    ['a CR in the name (it would read back as LF)', { razonSocialReceptor: 'Línea\r\nDos' }],
    ['an empty item', { item1: '   ' }],
    ['a fractional number', { montoTotal: 10.5 }],
  ])('refuses %s', (_, change) => {
    expect(() => buildTed(tedData(change), caf)).toThrow(RangeError)
  })

  test('any ISO-8859-1 name round-trips: buildTed → verifyTed, and readTed gives the first 40 characters back, tabs and LF included (property)', () => {
    const latin1Char = fc.integer({ min: 0x20, max: 0xff }).filter((c) => c < 0x7f || c > 0x9f).map((c) => String.fromCharCode(c))
    const anyChar = fc.oneof({ weight: 20, arbitrary: latin1Char }, { weight: 1, arbitrary: fc.constantFrom('\t', '\n') })
    const name = fc.array(anyChar, { minLength: 1, maxLength: 60 }).map((a) => a.join('')).filter((s) => s.slice(0, 40).trim() !== '')
    fc.assert(
      fc.property(name, name, (rsr, it1) => {
        const ted = buildTed(tedData({ razonSocialReceptor: rsr, item1: it1 }), caf)
        expect(verifyTed(ted)).toBe(true)
        expect(readTed(ted).data.razonSocialReceptor).toBe(rsr.slice(0, 40))
        expect(readTed(ted).data.item1).toBe(it1.slice(0, 40))
      }),
      { numRuns: 60 },
    )
  })
})
