// ConsumoFolios (src/xml/consumo-folios.ts), the boleta certification's report of folios: validated with the system's
// xmllint against the SII's ConsumoFolio_v10.xsd (test/fixtures/sii/schemas) and in process against the embedded copy,
// its signature verified by xmlsec1; totals and folio ranges per type, with gaps and annulled folios.
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { buildConsumoFolios, folioRanges, resumenConsumo, type ConsumoFoliosInput, type FolioConsumido } from '../../../src/xml/consumo-folios'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../src/xml/latin1'
import { validateSchema } from '../../../src/xml/xsd'
import { makeCertificate, testCa } from '../../support/pki'
import { SCHEMAS } from '../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-consumo-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })

let fileCount = 0
function write(bytes: Uint8Array): string {
  const path = join(DIR, `consumo-${++fileCount}.xml`)
  writeFileSync(path, bytes)
  return path
}

function xmllint(bytes: Uint8Array): { ok: boolean; output: string } {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, 'ConsumoFolio_v10.xsd'), write(bytes)], { encoding: 'latin1' })
  return { ok: run.status === 0, output: run.stderr }
}

function xmlsec1(bytes: Uint8Array): boolean {
  return spawnSync('xmlsec1', ['--verify', '--id-attr:ID', 'http://www.sii.cl/SiiDte:DocumentoConsumoFolios', write(bytes)]).status === 0
}

/** A boleta afecta of `total` pesos, IVA included, split as the boleta's totals split it. */
function boleta(folio: number, total: number, fecha = '2026-03-02'): FolioConsumido {
  const neto = Math.round(total / 1.19)
  return { tipo: 39, folio, fecha, neto, iva: total - neto, exento: 0, total }
}

const documentos: FolioConsumido[] = [
  // 39: folios 1–3, a gap (4 was never used), 5, 6 annulled at the SII, 7–8; given out of order.
  boleta(7, 11_900, '2026-03-03'),
  boleta(2, 2_380),
  boleta(1, 1_190),
  boleta(3, 5_950),
  boleta(5, 119),
  { tipo: 39, folio: 6, fecha: '2026-03-02', neto: 0, iva: 0, exento: 0, total: 0, anulado: true },
  boleta(8, 23_800, '2026-03-03'),
  // 41: exempt only, folios 10 and 12.
  { tipo: 41, folio: 12, fecha: '2026-03-02', neto: 0, iva: 0, exento: 4_000, total: 4_000 },
  { tipo: 41, folio: 10, fecha: '2026-03-01', neto: 0, iva: 0, exento: 2_500, total: 2_500 },
]

const input: ConsumoFoliosInput = {
  rutEmisor: '76.543.210-3',
  rutEnvia: '7880442-4',
  fchResol: '2026-01-15',
  nroResol: 0,
  secEnvio: 1,
  tmstFirmaEnv: new Date('2026-03-03T21:00:00Z'),
  documentos,
}

describe('buildConsumoFolios', () => {
  const bytes = buildConsumoFolios(input, identity.signer)
  const text = fromLatin1Bytes(bytes)

  test('validates against the SII\'s ConsumoFolio_v10.xsd (system xmllint) and the embedded copy (in process)', async () => {
    const lint = xmllint(bytes)
    expect(lint.output).toContain('validates')
    expect(lint.ok).toBe(true)
    expect(await validateSchema(bytes, 'ConsumoFolios')).toEqual({ isValid: true, errors: [] })
    // The referees can say no: a factura's type is not a TipoConsumoType.
    const factura = toLatin1Bytes(text.replace('<TipoDocumento>41</TipoDocumento>', '<TipoDocumento>33</TipoDocumento>'))
    expect(xmllint(factura).ok).toBe(false)
    expect((await validateSchema(factura, 'ConsumoFolios')).errors.join('\n')).toContain('TipoDocumento')
  })

  test('xmlsec1 verifies the signature over DocumentoConsumoFolios; a changed total breaks it', () => {
    expect(xmlsec1(bytes)).toBe(true)
    expect(text).toMatch(/<\/DocumentoConsumoFolios>\n<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#"><SignedInfo>.*<Reference URI="#CF_765432103_20260301_1">.*<\/Signature><\/ConsumoFolios>\n$/s)
    const tampered = toLatin1Bytes(text.replace('<MntTotal>6500</MntTotal>', '<MntTotal>6501</MntTotal>'))
    expect(tampered).not.toEqual(bytes)
    expect(xmllint(tampered).ok).toBe(true)
    expect(xmlsec1(tampered)).toBe(false)
  })

  test('ISO-8859-1 declaration, root with the SII namespace and version, Caratula from the input and the folios\' dates', () => {
    expect(text).toStartWith(
      '<?xml version="1.0" encoding="ISO-8859-1"?>\n<ConsumoFolios xmlns="http://www.sii.cl/SiiDte" ' +
        'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:schemaLocation="http://www.sii.cl/SiiDte ConsumoFolio_v10.xsd" version="1.0">\n' +
        '<DocumentoConsumoFolios ID="CF_765432103_20260301_1">\n<Caratula version="1.0"><RutEmisor>76543210-3</RutEmisor>' +
        '<RutEnvia>7880442-4</RutEnvia><FchResol>2026-01-15</FchResol><NroResol>0</NroResol><FchInicio>2026-03-01</FchInicio>' +
        '<FchFinal>2026-03-03</FchFinal><SecEnvio>1</SecEnvio><TmstFirmaEnv>2026-03-03T18:00:00</TmstFirmaEnv></Caratula>\n',
    )
  })

  test('per type, in 39, 41 order: totals of the issued folios, the annulled one counted apart, ranges around the gaps', () => {
    const resumenes = [...text.matchAll(/<Resumen>.*?<\/Resumen>/g)].map((m) => m[0])
    // 39: neto 1000 + 2000 + 5000 + 100 + 10000 + 20000, IVA the rest of 45 339.
    expect(resumenes).toEqual([
      '<Resumen><TipoDocumento>39</TipoDocumento><MntNeto>38100</MntNeto><MntIva>7239</MntIva><TasaIVA>19</TasaIVA>' +
        '<MntTotal>45339</MntTotal><FoliosEmitidos>6</FoliosEmitidos><FoliosAnulados>1</FoliosAnulados><FoliosUtilizados>7</FoliosUtilizados>' +
        '<RangoUtilizados><Inicial>1</Inicial><Final>3</Final></RangoUtilizados>' +
        '<RangoUtilizados><Inicial>5</Inicial><Final>5</Final></RangoUtilizados>' +
        '<RangoUtilizados><Inicial>7</Inicial><Final>8</Final></RangoUtilizados>' +
        '<RangoAnulados><Inicial>6</Inicial><Final>6</Final></RangoAnulados></Resumen>',
      '<Resumen><TipoDocumento>41</TipoDocumento><MntExento>6500</MntExento><MntTotal>6500</MntTotal>' +
        '<FoliosEmitidos>2</FoliosEmitidos><FoliosAnulados>0</FoliosAnulados><FoliosUtilizados>2</FoliosUtilizados>' +
        '<RangoUtilizados><Inicial>10</Inicial><Final>10</Final></RangoUtilizados>' +
        '<RangoUtilizados><Inicial>12</Inicial><Final>12</Final></RangoUtilizados></Resumen>',
    ])
  })

  test('credit notes over boletas (61) get their own Resumen; a boleta with an exempt part writes both amounts', async () => {
    const mixed = buildConsumoFolios({
      ...input,
      documentos: [
        { tipo: 61, folio: 3, fecha: '2026-03-02', neto: 1_000, iva: 190, exento: 0, total: 1_190 },
        { tipo: 39, folio: 20, fecha: '2026-03-02', neto: 1_000, iva: 190, exento: 500, total: 1_690 },
      ],
    }, identity.signer)
    expect(xmllint(mixed).ok).toBe(true)
    expect(xmlsec1(mixed)).toBe(true)
    const resumenes = [...fromLatin1Bytes(mixed).matchAll(/<Resumen><TipoDocumento>(\d+)<\/TipoDocumento>(.*?)<FoliosEmitidos>/g)].map((m) => [m[1], m[2]])
    expect(resumenes).toEqual([
      ['39', '<MntNeto>1000</MntNeto><MntIva>190</MntIva><TasaIVA>19</TasaIVA><MntExento>500</MntExento><MntTotal>1690</MntTotal>'],
      ['61', '<MntNeto>1000</MntNeto><MntIva>190</MntIva><TasaIVA>19</TasaIVA><MntTotal>1190</MntTotal>'],
    ])
  })

  test('a type whose every folio was annulled: zero totals, no RangoUtilizados, still valid', () => {
    const onlyAnulados = buildConsumoFolios({
      ...input,
      documentos: [1, 2, 3].map((folio) => ({ tipo: 41, folio, fecha: '2026-03-02', neto: 0, iva: 0, exento: 0, total: 0, anulado: true })),
    }, identity.signer)
    expect(xmllint(onlyAnulados).ok).toBe(true)
    expect(fromLatin1Bytes(onlyAnulados)).toContain(
      '<Resumen><TipoDocumento>41</TipoDocumento><MntTotal>0</MntTotal><FoliosEmitidos>0</FoliosEmitidos><FoliosAnulados>3</FoliosAnulados>' +
        '<FoliosUtilizados>3</FoliosUtilizados><RangoAnulados><Inicial>1</Inicial><Final>3</Final></RangoAnulados></Resumen>',
    )
  })

  test('SecEnvio of a corrected report goes into the Caratula and the ID', () => {
    const second = fromLatin1Bytes(buildConsumoFolios({ ...input, secEnvio: 2 }, identity.signer))
    expect(second).toContain('<SecEnvio>2</SecEnvio>')
    expect(second).toContain('ID="CF_765432103_20260301_2"')
  })

  test.each([
    ['no folios (the XSD needs one Resumen)', { documentos: [] }],
    ['a factura (33 is not a TipoConsumoType)', { documentos: [{ ...boleta(1, 119), tipo: 33 }] }],
    ['a folio given twice', { documentos: [boleta(1, 119), boleta(1, 238)] }],
    ['a negative amount', { documentos: [{ ...boleta(1, 119), exento: -1 }] }],
    ['a fractional amount', { documentos: [{ ...boleta(1, 119), total: 119.5 }] }],
    ['folio 0', { documentos: [boleta(0, 119)] }],
    ['a date that is none', { documentos: [boleta(1, 119, '2026-02-30')] }],
    ['SecEnvio 0 (the first is 1)', { secEnvio: 0 }],
    ['SecEnvio of four digits', { secEnvio: 1000 }],
    ['a bad RutEmisor', { rutEmisor: '76543210-4' }],
    ['a bad FchResol', { fchResol: '15-01-2026' }],
  ] as const)('%s throws RangeError', (_name, overrides) => {
    expect(() => buildConsumoFolios({ ...input, ...overrides } as ConsumoFoliosInput, identity.signer)).toThrow(RangeError)
  })
})

describe('resumenConsumo and folioRanges', () => {
  test('an annulled folio\'s amounts are not counted', () => {
    const [r] = resumenConsumo([boleta(1, 119), { ...boleta(2, 1_000_000), anulado: true }])
    expect(r).toMatchObject({ mntTotal: 119, mntNeto: 100, mntIva: 19, foliosEmitidos: 1, foliosAnulados: 1, foliosUtilizados: 2 })
  })

  test.each([
    [[], []],
    [[4], [[4, 4]]],
    [[5, 1, 2, 3, 7, 8], [[1, 3], [5, 5], [7, 8]]],
    [[10, 9, 11, 13], [[9, 11], [13, 13]]],
  ])('folioRanges(%j) is %j', (folios, expected) => {
    expect(folioRanges(folios).map((r) => [r.inicial, r.final])).toEqual(expected)
  })

  test('property: the ranges are ascending, never touch, and cover exactly the given folios', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: 300 }), { maxLength: 120 }), (folios) => {
        const ranges = folioRanges(folios)
        const covered = ranges.flatMap((r) => Array.from({ length: r.final - r.inicial + 1 }, (_, i) => r.inicial + i))
        expect(covered).toEqual([...folios].sort((a, b) => a - b))
        ranges.forEach((r, i) => {
          expect(r.final).toBeGreaterThanOrEqual(r.inicial)
          if (i > 0) expect(r.inicial).toBeGreaterThan(ranges[i - 1]!.final + 1)
        })
      }),
    )
  })
})
