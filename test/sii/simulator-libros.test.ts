// The certification libros uploaded to the REAL simulator over HTTP (DTEUpload, then getEstUp, docs/sii-protocol.md
// §6.9): a good LibroCompraVenta or LibroGuia goes REC … FOK, PRD to LOK as the injected clock moves; one whose
// resumen does not sum its detalle ends LRH naming each difference, a signature broken after signing RFR, a schema
// violation RSC; the sender and the company are refused at once (STATUS 1, 6); the same bytes again get STATUS 99.
// Then Timbre's own SII client reads those answers as it reads an envelope's (sii/client/queries.ts).
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { FOLIO_NOTIFICACION, libroCompras, libroGuias, libroVentas, type LibroCompraVenta, type LibroResult } from '../../src/domain/libros'
import { createSiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { fromLatin1Bytes, toLatin1Bytes } from '../../src/xml/latin1'
import { buildLibroCompraVenta, type CaratulaLibro } from '../../src/xml/libro-cv'
import { buildLibroGuia } from '../../src/xml/libro-guia'
import { testClock } from '../support/clock'
import { makeCertificate, testCa } from '../support/pki'
import { dteUpload, EMISOR, estUp, field, fields, identity, SENDER, SIM_START, soapToken } from './simulator-helpers'

// Each upload runs the XSD in process (~150 ms, more on a loaded machine): room beyond bun's 5 s.
setDefaultTimeout(30_000)

const DELAY = 5000
const clock = testClock({ at: SIM_START })
let sim: RunningSimulator
let token: string
beforeAll(async () => {
  sim = await startSimulator({ clock: clock.now, processingDelayMs: DELAY })
  token = await soapToken(sim.url)
})
afterAll(() => sim.stop())

function ok<T>(result: LibroResult<T>): T {
  if (!result.ok) throw new Error(JSON.stringify(result.errors))
  return result.value
}

const CARATULA: CaratulaLibro = {
  rutEmisorLibro: EMISOR, rutEnvia: SENDER, fchResol: '2026-01-15', nroResol: 0, folioNotificacion: FOLIO_NOTIFICACION.ventas,
  tmstFirma: new Date('2026-03-20T15:00:00Z'),
}

let nextFolio = 1
/** A libro de ventas of two fresh invoices (each upload is new bytes: same bytes get STATUS 99). */
function ventas(): LibroCompraVenta {
  const doc = (folio: number) => ({
    tipoDte: 33, folio, fechaEmision: '2026-03-02', rutReceptor: '76086428-5', razonSocialReceptor: 'Cliente Ñandú', montoExento: 0, montoNeto: 1000 * folio,
    tasaIva: 19, iva: 190 * folio, montoTotal: 1190 * folio,
  })
  return ok(libroVentas({ periodo: '2026-03', documentos: [doc(nextFolio++), doc(nextFolio++)] }))
}

const compras = (): LibroCompraVenta => ok(libroCompras({
  periodo: '2026-03', factorProporcionalidad: 0.6, proveedor: { rut: '76086428-5', razonSocial: 'Proveedora Ñandú' },
  compras: [
    { tipo: 30, tipoDocumento: 'FACTURA', folio: nextFolio++, observacion: 'FACTURA CON IVA USO COMUN', montoExento: 0, montoAfecto: 30171, lineNumber: 1 },
    { tipo: 46, tipoDocumento: 'FACTURA DE COMPRA ELECTRONICA', folio: nextFolio++, observacion: 'COMPRA CON RETENCION TOTAL DEL IVA', montoExento: 0, montoAfecto: 10632, lineNumber: 4 },
  ],
}))

const guias = () => ok(libroGuias({
  periodo: '2026-03',
  guias: [
    { folio: nextFolio++, fechaEmision: '2026-03-05', indTraslado: 5, rutReceptor: EMISOR, razonSocialReceptor: 'La misma empresa', montoNeto: 0, tasaIva: null, iva: 0, montoTotal: 0 },
    { folio: 900, fechaEmision: '2026-03-05', indTraslado: 1, rutReceptor: '76086428-5', razonSocialReceptor: 'Cliente', montoNeto: 1000, tasaIva: 19, iva: 190, montoTotal: 1190 },
    { folio: 901, fechaEmision: '2026-03-05', indTraslado: 1, rutReceptor: '76086428-5', razonSocialReceptor: 'Cliente', montoNeto: 2000, tasaIva: 19, iva: 380, montoTotal: 2380 },
  ],
  facturada: { folioGuia: 900, factura: { tipoDte: 33, folio: 40, fechaEmision: '2026-03-06' } },
  folioAnulada: 901,
}))

const libroVentasBytes = (libro: LibroCompraVenta = ventas(), caratula: Partial<CaratulaLibro> = {}, signer = identity().signer): Uint8Array =>
  buildLibroCompraVenta(libro, { ...CARATULA, ...caratula }, signer)

/** Uploads, expects STATUS 0 and a 10-digit track id. */
async function upload(bytes: Uint8Array): Promise<string> {
  const up = await dteUpload(sim.url, token, bytes)
  expect(up.status).toBe('0')
  expect(up.trackId).toMatch(/^\d{10}$/)
  return up.trackId ?? ''
}

async function estado(trackId: string, company = EMISOR): Promise<{ estado: string | null; glosa: string | null; body: string[] }> {
  const answer = await estUp(sim.url, token, trackId, company)
  return { estado: field(answer.inner, 'ESTADO'), glosa: field(answer.inner, 'GLOSA'), body: fields(answer.inner, 'TIPO_DOCTO') }
}

function spoil(bytes: Uint8Array, from: string, to: string): Uint8Array {
  const text = fromLatin1Bytes(bytes)
  if (!text.includes(from)) throw new Error(`no ${from}`)
  return toLatin1Bytes(text.replace(from, to))
}

describe('an accepted libro', () => {
  test('ventas: REC, SOK, CRT, FOK, PRD as the clock moves, then LOK with no counters', async () => {
    const trackId = await upload(libroVentasBytes())
    const seen: Array<string | null> = []
    for (let step = 0; step < 5; step++) {
      seen.push((await estado(trackId)).estado)
      clock.advance(DELAY / 5)
    }
    expect(seen).toEqual(['REC', 'SOK', 'CRT', 'FOK', 'PRD'])
    expect(await estado(trackId)).toEqual({ estado: 'LOK', glosa: 'Libro Aceptado', body: [] })
  })

  test('compras (IVA uso común with its credit, a total retention) and guías (one invoiced, one annulled) end LOK', async () => {
    const compra = await upload(buildLibroCompraVenta(compras(), { ...CARATULA, folioNotificacion: FOLIO_NOTIFICACION.compras }, identity().signer))
    const guia = await upload(buildLibroGuia(guias(), { ...CARATULA, folioNotificacion: FOLIO_NOTIFICACION.guias }, identity().signer))
    clock.advance(DELAY)
    expect((await estado(compra)).estado).toBe('LOK')
    expect((await estado(guia)).estado).toBe('LOK')
  })

  test('the same bytes again: STATUS 99 with the first track id; another company\'s track id is not found (-11)', async () => {
    const bytes = libroVentasBytes()
    const first = await upload(bytes)
    const again = await dteUpload(sim.url, token, bytes)
    expect([again.status, again.trackId]).toEqual(['99', first])
    expect((await estado(first, '96790240-3')).estado).toBe('-11')
  })
})

describe('a rejected libro', () => {
  test('a resumen that does not sum its detalle: LRH after PRD, each difference a detail line of the GLOSA', async () => {
    const libro = ventas()
    const resumen = libro.resumen.map((t) => ({ ...t, montoNeto: t.montoNeto + 1, montoTotal: t.montoTotal + 1 }))
    const trackId = await upload(libroVentasBytes({ ...libro, resumen }))
    clock.advance((DELAY * 4) / 5)
    expect((await estado(trackId)).estado).toBe('PRD')
    clock.advance(DELAY / 5)
    const { estado: final, glosa } = await estado(trackId)
    expect(final).toBe('LRH')
    expect(glosa).toBe(
      `Libro Rechazado: (LBR-3-1) Resumen del período no cuadra con el detalle — TpoDoc 33: TotMntNeto ${libro.resumen[0]!.montoNeto + 1} en el resumen, ${libro.resumen[0]!.montoNeto} según el detalle; ` +
      `(LBR-3-1) Resumen del período no cuadra con el detalle — TpoDoc 33: TotMntTotal ${libro.resumen[0]!.montoTotal + 1} en el resumen, ${libro.resumen[0]!.montoTotal} según el detalle`,
    )
  })

  test('a libro de guías counting the annulled guía as a sale: LRH', async () => {
    const libro = guias()
    const trackId = await upload(buildLibroGuia({ ...libro, resumen: { ...libro.resumen, guiasVenta: 2, montoGuiasVenta: 3570 } }, { ...CARATULA, folioNotificacion: 3 }, identity().signer))
    clock.advance(DELAY)
    const answer = await estado(trackId)
    expect(answer.estado).toBe('LRH')
    expect(answer.glosa).toContain('TotGuiaVenta 2 en el resumen, 1 según el detalle')
  })

  test('an amount changed after signing: RFR from FOK\'s step on, the reason in the GLOSA', async () => {
    const bytes = libroVentasBytes()
    const total = /<TotMntTotal>(\d+)<\/TotMntTotal>/.exec(fromLatin1Bytes(bytes))?.[1] ?? ''
    const trackId = await upload(spoil(bytes, `<TotMntTotal>${total}</TotMntTotal>`, `<TotMntTotal>${Number(total) + 1}</TotMntTotal>`))
    clock.advance((DELAY * 2) / 5)
    expect((await estado(trackId)).estado).toBe('CRT')
    clock.advance(DELAY / 5)
    const answer = await estado(trackId)
    expect(answer.estado).toBe('RFR')
    expect(answer.glosa).toStartWith('Rechazado por Error en Firma: (FRM-3-1) Firma del libro inválida — el DigestValue no corresponde al EnvioLibro')
  })

  test('signed by a certificate that is not RutEnvia\'s: RFR', async () => {
    const other = makeCertificate({ rut: '13131313-6', issuer: testCa() })
    const trackId = await upload(libroVentasBytes(ventas(), {}, other.signer))
    clock.advance(DELAY)
    const answer = await estado(trackId)
    expect(answer.estado).toBe('RFR')
    expect(answer.glosa).toContain('(FRM-3-2) El firmante del libro no es RutEnvia — certificado de 13131313-6, RutEnvia 7880442-4')
  })

  test('a schema violation (TipoOperacion ARRIENDO): RSC from SOK\'s step on, with libxml2\'s line', async () => {
    // The schema is checked first, so the signature this edit also breaks is never reached.
    const trackId = await upload(spoil(libroVentasBytes(), '<TipoOperacion>VENTA</TipoOperacion>', '<TipoOperacion>ARRIENDO</TipoOperacion>'))
    expect((await estado(trackId)).estado).toBe('REC')
    clock.advance(DELAY / 5)
    const answer = await estado(trackId)
    expect(answer.estado).toBe('RSC')
    expect(answer.glosa).toStartWith('Rechazado por Error en Schema: (SCH-3-1) Error de schema — libro.xml:')
    expect(answer.glosa).toContain('TipoOperacion')
  })
})

describe('refused at once, as envelopes are', () => {
  test('RutEnvia is not rutSender: STATUS 1; RutEmisorLibro is not rutCompany: STATUS 6; no track id', async () => {
    const foreignSender = await dteUpload(sim.url, token, libroVentasBytes(ventas(), { rutEnvia: '13131313-6' }))
    expect([foreignSender.status, foreignSender.trackId]).toEqual(['1', null])
    expect(foreignSender.text).toContain('RUT envia diferente al Upload')
    const otherCompany = await dteUpload(sim.url, token, libroVentasBytes(ventas(), { rutEmisorLibro: '96790240-3' }))
    expect([otherCompany.status, otherCompany.trackId]).toEqual(['6', null])
  })

  test('without a token: STATUS 5, as for any upload', async () => {
    expect((await dteUpload(sim.url, null, libroVentasBytes())).status).toBe('5')
  })

  test('a libro root outside the SII namespace is not taken for a libro: STATUS 7 as any file that is not an EnvioDTE', async () => {
    const bytes = spoil(libroVentasBytes(), 'xmlns="http://www.sii.cl/SiiDte"', 'xmlns="urn:otro"')
    expect((await dteUpload(sim.url, token, bytes)).status).toBe('7')
  })
})

describe('Timbre\'s SII client reads a libro\'s answers', () => {
  const COMPANY: SiiCompany = { rut: EMISOR, ambiente: 'certificacion', isDemo: false }
  const creds = (): SiiCredentials => ({ certificateId: 'libros', rutFirmante: SENDER, signer: identity().signer })
  const client = () => createSiiClient({ target: { kind: 'origin', origin: sim.url } })

  test('upload received, then LOK processed (no counters) and LRH rejected with one motive per difference', async () => {
    const good = await client().upload(COMPANY, creds(), 'soap', libroVentasBytes(), 'libro-ventas.xml')
    const libro = ventas()
    const bad = await client().upload(COMPANY, creds(), 'soap', libroVentasBytes({ ...libro, resumen: libro.resumen.map((t) => ({ ...t, cantidad: 3 })) }), 'libro-ventas.xml')
    if (good.kind !== 'received' || bad.kind !== 'received') throw new Error(`not received: ${good.kind} ${bad.kind}`)
    clock.advance(DELAY)
    const accepted = await client().queryEnvio(COMPANY, creds(), 'soap', good.trackId)
    expect(accepted).toMatchObject({ kind: 'processed', estado: 'LOK', glosa: 'Libro Aceptado', informados: 0, rechazados: 0, reparos: 0, estadistica: [] })
    const rejected = await client().queryEnvio(COMPANY, creds(), 'soap', bad.trackId)
    expect(rejected).toMatchObject({
      kind: 'rejected', estado: 'LRH',
      motivos: [{ codigo: 'LBR-3-1', glosa: 'Resumen del período no cuadra con el detalle', detalle: 'TpoDoc 33: TotDoc 3 en el resumen, 2 según el detalle', nivel: 3, fuente: 'estado_envio' }],
    })
  })
})
