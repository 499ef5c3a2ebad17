// EnvioRecibos (src/xml/envio-recibos.ts): the Ley 19.983 receipt of goods. Validated with xmllint against the SII's
// EnvioRecibos_v10.xsd (and each Recibo alone against Recibos_v10.xsd), every signature verified with xmlsec1: the
// outer one over SetRecibos, and each Recibo's both in place and cut out standalone (docs/sii-protocol.md §4.3).
import { afterAll, describe, expect, test } from 'bun:test'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { signBlock } from '../../../../src/xml/block-signature'
import { buildEnvioRecibos, DECLARACION_RECIBO, readEnvioRecibos, type EnvioRecibosInput } from '../../../../src/xml/envio-recibos'
import { fromLatin1Bytes, toLatin1Bytes } from '../../../../src/xml/latin1'
import { validateSchema } from '../../../../src/xml/xsd'
import { makeCertificate, testCa } from '../../../support/pki'
import { SCHEMAS } from '../../../support/xml-tools'

const DIR = mkdtempSync(join(tmpdir(), 'timbre-recibos-'))
afterAll(() => rmSync(DIR, { recursive: true, force: true }))

const identity = makeCertificate({ rut: '07880442-4', issuer: testCa() })
const EMISOR = '76543210-3'
const RECEPTOR = '76086428-5'
const ID_ATTRS = ['--id-attr:ID', 'http://www.sii.cl/SiiDte:SetRecibos', '--id-attr:ID', 'http://www.sii.cl/SiiDte:DocumentoRecibo']

let fileCount = 0
function write(bytes: Uint8Array): string {
  const path = join(DIR, `recibos-${++fileCount}.xml`)
  writeFileSync(path, bytes)
  return path
}

function xmllint(bytes: Uint8Array, xsd: string): { ok: boolean; output: string } {
  const run = spawnSync('xmllint', ['--noout', '--nonet', '--schema', join(SCHEMAS, xsd), write(bytes)], { encoding: 'latin1' })
  return { ok: run.status === 0, output: run.stderr }
}

/** xmlsec1 on the `n`-th Signature (1-based, document order); `n` omitted: the only one. */
function xmlsec1(bytes: Uint8Array, n?: number): boolean {
  const pick = n === undefined ? [] : ['--node-xpath', `(//*[local-name()='Signature'])[${n}]`]
  return spawnSync('xmlsec1', ['--verify', ...ID_ATTRS, ...pick, write(bytes)]).status === 0
}

const input: EnvioRecibosInput = {
  rutResponde: RECEPTOR, rutRecibe: EMISOR, nmbContacto: 'Juana Pérez', mailContacto: 'bodega@ñuble.cl', tmst: new Date('2026-01-12T13:14:15Z'),
  recibos: [
    { tipoDoc: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutRecep: RECEPTOR, montoTotal: 38021, recinto: 'Bodega Chillán, andén 3', rutFirma: '7880442-4', tmst: new Date('2026-01-12T13:00:00Z') },
    { tipoDoc: 52, folio: 77, fechaEmision: '2026-01-11', rutEmisor: EMISOR, rutRecep: RECEPTOR, montoTotal: 0, recinto: `Oficina “central” ${'x'.repeat(100)}`, rutFirma: '7.880.442-4', tmst: new Date('2026-01-12T13:05:00Z') },
  ],
}

describe('buildEnvioRecibos', () => {
  const bytes = buildEnvioRecibos(input, identity.signer)
  const text = fromLatin1Bytes(bytes)
  const recibos = [...text.matchAll(/<Recibo [\s\S]*?<\/Recibo>/g)].map((m) => m[0])

  test('DECLARACION_RECIBO is byte for byte the `fixed` value of Recibos_v10.xsd', () => {
    const xsd = fromLatin1Bytes(readFileSync(join(SCHEMAS, 'Recibos_v10.xsd')))
    expect(/<xs:element name="Declaracion" fixed="([^"]+)"/.exec(xsd)?.[1]).toBe(DECLARACION_RECIBO)
  })

  test('validates against EnvioRecibos_v10.xsd (xmllint, and in process)', async () => {
    const lint = xmllint(bytes, 'EnvioRecibos_v10.xsd')
    expect(lint.output).toContain('validates')
    expect(lint.ok).toBe(true)
    expect(await validateSchema(bytes, 'EnvioRecibos')).toEqual({ isValid: true, errors: [] })
  })

  test('xmlsec1 verifies the SetRecibos signature (the last) and each Recibo\'s in place', () => {
    expect(recibos).toHaveLength(2)
    expect([1, 2, 3].map((n) => xmlsec1(bytes, n))).toEqual([true, true, true])
    expect(text).toMatch(/<\/SetRecibos>\n<Signature xmlns="http:\/\/www\.w3\.org\/2000\/09\/xmldsig#"><SignedInfo>.*<Reference URI="#SetRecibos">.*<\/Signature><\/EnvioRecibos>\n$/s)
  })

  test('each Recibo cut out of the file is a document of its own: Recibos_v10.xsd accepts it, xmlsec1 verifies it', () => {
    for (const recibo of recibos) {
      const standalone = toLatin1Bytes(`<?xml version="1.0" encoding="ISO-8859-1"?>\n${recibo}`)
      expect(xmllint(standalone, 'Recibos_v10.xsd').ok).toBe(true)
      expect(xmlsec1(standalone)).toBe(true)
    }
  })

  test('each Recibo declares the root\'s namespaces, carries the declaration, RutFirma canonical, Recinto cut to 80', () => {
    expect(recibos[0]).toStartWith(
      '<Recibo xmlns="http://www.sii.cl/SiiDte" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" version="1.0"><DocumentoRecibo ID="R1T33F1">' +
        `<TipoDoc>33</TipoDoc><Folio>1</Folio><FchEmis>2026-01-10</FchEmis><RUTEmisor>${EMISOR}</RUTEmisor><RUTRecep>${RECEPTOR}</RUTRecep>` +
        `<MntTotal>38021</MntTotal><Recinto>Bodega Chillán, andén 3</Recinto><RutFirma>7880442-4</RutFirma><Declaracion>${DECLARACION_RECIBO}</Declaracion>` +
        '<TmstFirmaRecibo>2026-01-12T10:00:00</TmstFirmaRecibo></DocumentoRecibo><Signature',
    )
    expect(recibos[1]).toContain('<RutFirma>7880442-4</RutFirma>')
    expect(recibos[1]).toContain(`<Recinto>Oficina &quot;central&quot; ${'x'.repeat(80 - 18)}</Recinto>`)
    expect(text).toContain('<Caratula version="1.0"><RutResponde>76086428-5</RutResponde><RutRecibe>76543210-3</RutRecibe><NmbContacto>Juana Pérez</NmbContacto><MailContacto>bodega@ñuble.cl</MailContacto><TmstFirmaEnv>2026-01-12T10:14:15</TmstFirmaEnv></Caratula>')
  })

  test('readEnvioRecibos gets back what was written, every signature verified', () => {
    expect(readEnvioRecibos(bytes)).toEqual({
      rutResponde: RECEPTOR, rutRecibe: EMISOR, signatureOk: true,
      recibos: [
        { tipoDoc: 33, folio: 1, fechaEmision: '2026-01-10', rutEmisor: EMISOR, rutRecep: RECEPTOR, montoTotal: 38021, recinto: 'Bodega Chillán, andén 3', tmst: '2026-01-12T10:00:00' },
        { tipoDoc: 52, folio: 77, fechaEmision: '2026-01-11', rutEmisor: EMISOR, rutRecep: RECEPTOR, montoTotal: 0, recinto: `Oficina "central" ${'x'.repeat(80 - 18)}`, tmst: '2026-01-12T10:05:00' },
      ],
    })
  })

  test.each([
    ['no recibos', { recibos: [] }],
    ['a bad rutResponde', { rutResponde: '11.111.111-2' }],
    ['a bad rutFirma', { recibos: [{ ...input.recibos[0]!, rutFirma: 'x' }] }],
    ['a date that is none', { recibos: [{ ...input.recibos[0]!, fechaEmision: '2026-02-30' }] }],
    ['a negative amount', { recibos: [{ ...input.recibos[0]!, montoTotal: -1 }] }],
  ] as const)('%s throws RangeError', (_name, overrides) => {
    expect(() => buildEnvioRecibos({ ...input, ...overrides }, identity.signer)).toThrow(RangeError)
  })
})

describe('readEnvioRecibos on what others send', () => {
  const bytes = buildEnvioRecibos(input, identity.signer)
  const text = fromLatin1Bytes(bytes)

  test('a Recibo changed after signing: read, signatureOk false (the Recibo\'s own and the outer signature both break)', () => {
    const tampered = toLatin1Bytes(text.replace('<MntTotal>38021</MntTotal>', '<MntTotal>1</MntTotal>'))
    expect(readEnvioRecibos(tampered)).toMatchObject({ signatureOk: false, recibos: [{ montoTotal: 1 }, { montoTotal: 0 }] })
  })

  test('only the Caratula changed after signing: signatureOk false (the outer signature)', () => {
    const tampered = toLatin1Bytes(text.replace('<NmbContacto>Juana Pérez</NmbContacto>', '<NmbContacto>Otra</NmbContacto>'))
    expect(readEnvioRecibos(tampered)?.signatureOk).toBe(false)
  })

  test('a Recibo whose own signature is forged under a correctly re-signed SetRecibos: signatureOk false', () => {
    const first = /<DocumentoRecibo ID="R1T33F1">[\s\S]*?<SignatureValue>([^<]+)</.exec(text)?.[1] ?? ''
    const forged = text.replace(first, `${first.slice(0, -4)}AAA=`)
    // Re-sign the outer block over the forged Recibo, as an attacker holding a certificate would.
    const unsignedOuter = forged.replace(/<\/SetRecibos>\n<Signature[\s\S]*<\/Signature>/, '</SetRecibos>\n')
    expect(unsignedOuter).not.toEqual(forged)
    const resigned = signBlock(unsignedOuter, identity.signer)
    expect(readEnvioRecibos(toLatin1Bytes(resigned))?.signatureOk).toBe(false)
  })

  test.each([
    ['garbage', new Uint8Array([0xde, 0xad, 0xbe, 0xef])],
    ['another root', new TextEncoder().encode('<RespuestaDTE xmlns="http://www.sii.cl/SiiDte"/>')],
    ['no SetRecibos', new TextEncoder().encode('<EnvioRecibos xmlns="http://www.sii.cl/SiiDte"/>')],
    ['deep nesting', new TextEncoder().encode(`<EnvioRecibos><SetRecibos><Caratula/>${'<Recibo>'.repeat(30_000)}${'</Recibo>'.repeat(30_000)}</SetRecibos></EnvioRecibos>`)],
  ])('%s: null or an unverified reading, never a throw', (_name, input) => {
    const read = readEnvioRecibos(input)
    expect(read === null || read.signatureOk === false).toBe(true)
  })
})
