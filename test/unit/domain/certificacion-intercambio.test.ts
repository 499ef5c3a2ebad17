// The pure rules of certification's intercambio answers (src/domain/certificacion-intercambio.ts): which check decides
// a DTE's codes, who gets a receipt, and which files are refused as not the company's set de intercambio. Readings:
// docs/decisions/certificacion.md «Intercambio».
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  ARCHIVOS_INTERCAMBIO,
  problemaIntercambio,
  recintoDe,
  respuestaDocumento,
  RUT_EMISOR_INTERCAMBIO,
} from '../../../src/domain/certificacion-intercambio'
import { CHECK_NAMES, type CheckName, type CheckResult } from '../../../src/domain/intercambio'

/** The nine checks in CHECK_NAMES order, as xml/received-envio.ts lists a document's; `failing` fail with their name as detalle. */
function checks(...failing: CheckName[]): CheckResult[] {
  return CHECK_NAMES.map((check) => (failing.includes(check) ? { check, ok: false, detalle: `falla ${check}` } : { check, ok: true, detalle: '' }))
}

describe('respuestaDocumento', () => {
  test('all checks pass: received 0, accepted 0 "Mercadería Conforme", with a receipt', () => {
    expect(respuestaDocumento(checks())).toEqual({
      estadoRecepDte: 0, glosaRecepcion: 'DTE Recibido OK', estadoDte: 0, glosaResultado: 'DTE Aceptado - Mercadería Conforme', decide: null, recibo: true,
    })
  })

  test('another RUT: EstadoRecepDTE 3 with what was found, EstadoDTE 2 "RUT Receptor no corresponde", no receipt', () => {
    expect(respuestaDocumento(checks('receptor'))).toEqual({
      estadoRecepDte: 3, glosaRecepcion: 'DTE No Recibido - Error en RUT Receptor: falla receptor',
      estadoDte: 2, glosaResultado: 'DTE Rechazado - RUT Receptor no corresponde', decide: 'receptor', recibo: false,
    })
  })

  test.each([
    [['ted'] as CheckName[]],
    [['caf'] as CheckName[]],
    [['duplicado'] as CheckName[]],
    [['ted', 'caf', 'duplicado'] as CheckName[]],
  ])('%j failing is reported, not decisive: the DTE is still accepted (the SII\'s own TEDs never verify)', (failing) => {
    expect(respuestaDocumento(checks(...failing))).toMatchObject({ estadoRecepDte: 0, estadoDte: 0, decide: null, recibo: true })
  })

  test.each([
    [['schema', 'firma_envio', 'receptor'], 'schema', 99, 'DTE Rechazado - Error de Schema'],
    [['firma_envio', 'firma_dte', 'receptor'], 'firma_envio', 1, 'DTE Rechazado - Error de Firma'],
    [['receptor_envio', 'receptor'], 'receptor_envio', 3, 'DTE Rechazado - RUT Receptor no corresponde'],
    [['firma_dte', 'emisor', 'receptor'], 'firma_dte', 1, 'DTE Rechazado - Error de Firma'],
    [['emisor', 'receptor', 'ted'], 'emisor', 2, 'DTE Rechazado - RUT Emisor no corresponde'],
  ] as Array<[CheckName[], CheckName, number, string]>)('%j: %s decides (DESIGN §13 precedence), code %d', (failing, decide, code, glosa) => {
    const r = respuestaDocumento(checks(...failing))
    expect(r).toMatchObject({ decide, estadoRecepDte: code, estadoDte: 2, glosaResultado: glosa, recibo: false })
    expect(r.glosaRecepcion).toEndWith(`: falla ${decide}`)
  })

  test('property: accepted exactly when no deciding check fails, and only what is accepted gets a receipt', () => {
    const deciding: readonly CheckName[] = ['schema', 'firma_envio', 'receptor_envio', 'firma_dte', 'emisor', 'receptor']
    fc.assert(fc.property(fc.subarray([...CHECK_NAMES]), (failing) => {
      const r = respuestaDocumento(checks(...failing))
      const refused = failing.some((f) => deciding.includes(f))
      expect(r.estadoDte).toBe(refused ? 2 : 0)
      expect(r.recibo).toBe(!refused)
      expect(r.estadoRecepDte === 0).toBe(!refused)
      expect(r.decide === null).toBe(!refused)
    }))
  })
})

describe('problemaIntercambio', () => {
  const EMPRESA = '77626554-3'
  const sii = { rutEmisor: RUT_EMISOR_INTERCAMBIO, rutReceptor: EMPRESA, receptores: [EMPRESA, '69507000-4'] }

  test('the SII\'s test envelope for the company: no problem', () => {
    expect(problemaIntercambio(sii, EMPRESA, 'archivo_base64')).toBeNull()
  })

  test('another issuer: 400 at the caller\'s field, naming both issuers', () => {
    const p = problemaIntercambio({ ...sii, rutEmisor: '76086428-5' }, EMPRESA, 'archivo')
    expect(p).toMatchObject({ field: 'archivo', code: 'INVALID_VALUE' })
    expect(p!.message).toContain('76086428-5')
    expect(p!.message).toContain('88888888-8')
  })

  test('an envelope without a valid issuer RUT is not the SII\'s either', () => {
    expect(problemaIntercambio({ ...sii, rutEmisor: null }, EMPRESA, 'archivo_base64')?.message).toContain('sin RutEmisor')
  })

  test('addressed to another company: refused as another company\'s set', () => {
    expect(problemaIntercambio({ ...sii, rutReceptor: '76086428-5' }, EMPRESA, 'archivo_base64')?.message).toContain('otra empresa')
  })

  test('no DTE for the company: refused, naming the receivers found', () => {
    const p = problemaIntercambio({ ...sii, receptores: ['69507000-4', '69507000-4'] }, EMPRESA, 'archivo_base64')
    expect(p?.message).toBe(`Ningún DTE del envío está dirigido a ${EMPRESA} (receptores: 69507000-4).`)
    expect(problemaIntercambio({ ...sii, receptores: [] }, EMPRESA, 'archivo_base64')?.message).toContain('ninguno identificable')
  })
})

test('the three file names are the ones the SII\'s site and LibreDTE use, in order', () => {
  expect(Object.values(ARCHIVOS_INTERCAMBIO)).toEqual(['1_RecepcionDTE.xml', '2_EnvioRecibos.xml', '3_ResultadoDTE.xml'])
})

test('recintoDe: the company\'s address, cut to Recinto\'s 80 characters', () => {
  expect(recintoDe({ direccion: 'Calle Falsa 123', comuna: 'Ñuñoa' })).toBe('Calle Falsa 123, Ñuñoa')
  expect(recintoDe({ direccion: 'x'.repeat(100), comuna: 'Ñuñoa' })).toHaveLength(80)
})
