// The RCV read over the portal's data service (src/sii/portal/rcv-read.ts, facade.ts) against a real TLS server that
// asks for the company's certificate: the whole RCV (four sections and ventas) with the SII's summaries kept, the
// request bodies research §2.2 records, the deferred download that finishes (a gzip CSV read back by rcv-csv.ts) and
// one that never does, and every failure reason: an expired session mid-read, a refusal, malformed JSON, a changed
// CSV header, a 503, a hang. Logout is counted after each.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { gzipSync } from 'node:zlib'
import { resumenDeDetalles, type DetalleRcv } from '../../src/domain/rcv'
import type { SiiCompany, SiiCredentials } from '../../src/sii/client/client'
import { PORTAL_PATHS } from '../../src/sii/portal-protocol'
import { createRcvPortalClient, type RcvPortalClientOptions } from '../../src/sii/portal/rcv-client'
import { makeCertificate } from '../support/pki'
import {
  CSESSIONID, json, namespaceOf, newPortalState, ok, rcvPortal, sessionGone, startFakePortal, TOKEN, type FakePortal, type RcvPortalState,
} from './portal-server'

const identity = makeCertificate({ rut: '11111111-1', keySlot: 7, serial: '5a11' })
const creds: SiiCredentials = { certificateId: 'cert-1', rutFirmante: '11111111-1', signer: identity.signer }
const company: SiiCompany = { rut: '76354771-K', ambiente: 'produccion', isDemo: false }

function detalle(folio: number, extra: Partial<DetalleRcv> = {}): DetalleRcv {
  return {
    tipoDoc: 33, rut: '12345678-5', razonSocial: 'Proveedor; "Uno" Ltda.', folio, fechaEmision: '2026-10-03',
    fechaRecepcion: '2026-10-03T10:11:12', fechaAcuse: null, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: 0, montoNeto: 1000 * folio, montoIva: 190 * folio, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null,
    montoTotal: 1190 * folio, montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null,
    ivaNoRetenido: null, otrosImpuestos: [], ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null,
    ivaFueraPlazo: null, referencia: null, ...extra,
  }
}

/** A month with something in every section: two types in registro, a claimed invoice, sales with a credit note. */
const REGISTROS: Readonly<Record<string, readonly DetalleRcv[]>> = {
  'COMPRA/REGISTRO': [
    detalle(1, { fechaAcuse: '2026-10-04T08:00:00' }), detalle(2, { fechaAcuse: '2026-10-11T00:00:01', montoIvaNoRecuperable: 19, codigoIvaNoRecuperable: 1 }),
    detalle(3, { fechaAcuse: '2026-10-05T09:30:00' }), detalle(7, { tipoDoc: 34, montoNeto: null, montoIva: null, montoExento: 5000, montoTotal: 5000 }),
  ],
  'COMPRA/PENDIENTE': [detalle(10, { rut: '76354771-K', razonSocial: 'Pendiente S.A.' })],
  'COMPRA/NO_INCLUIR': [detalle(11, { tipoTransaccion: 'No Corresp. Incluir', fechaAcuse: '2026-10-09T12:00:00' })],
  'COMPRA/RECLAMADO': [detalle(12, { fechaReclamo: '2026-10-06T17:45:00' })],
  'VENTA/': [
    detalle(100, { rut: '60803000-K', razonSocial: 'Cliente', tipoTransaccion: null, ivaRetenidoTotal: 0, ivaPropio: 10 }),
    detalle(5, { tipoDoc: 61, rut: '60803000-K', razonSocial: 'Cliente', montoTotal: 1190, referencia: { tipoDoc: 33, folio: 100 } }),
  ],
}

let portal: FakePortal
let state: RcvPortalState
let slept: number[]

beforeAll(async () => {
  portal = await startFakePortal(() => ({ status: 500 }))
})
afterAll(() => portal.stop())
beforeEach(() => {
  portal.seen.length = 0
  slept = []
  state = newPortalState(REGISTROS)
  portal.handler = rcvPortal(state, identity.certificateDer)
})

function leer(extra: Partial<RcvPortalClientOptions> = {}) {
  return createRcvPortalClient({
    target: { kind: 'origin', origin: portal.httpsOrigin },
    sleep: async (ms) => { slept.push(ms) },
    ...extra,
  }).leerRcv(company, creds, '202610')
}

const conTipo = (key: string, tipo: number) => (REGISTROS[key] ?? []).filter((d) => d.tipoDoc === tipo)

describe('the whole RCV', () => {
  test('four sections and ventas: the SII\'s summaries kept, every type\'s detail read, one session', async () => {
    const outcome = await leer()
    if (outcome.kind !== 'ok') throw new Error(JSON.stringify(outcome))
    const seccion = (key: string) => ({ resumen: resumenDeDetalles(REGISTROS[key] ?? []), detalle: REGISTROS[key] ?? [] })
    expect(outcome).toEqual({
      kind: 'ok',
      compras: {
        periodo: '202610',
        secciones: {
          registro: seccion('COMPRA/REGISTRO'), pendiente: seccion('COMPRA/PENDIENTE'),
          no_incluir: seccion('COMPRA/NO_INCLUIR'), reclamado: seccion('COMPRA/RECLAMADO'),
        },
      },
      ventas: { periodo: '202610', ...seccion('VENTA/') },
      diferidas: 0,
    })
    expect([state.logins, state.logouts]).toEqual([1, 1])
  })

  test('the requests: summary then details per section, bodies as research §2.2 records them', async () => {
    await leer()
    expect(state.facade.map((c) => `${c.op} ${String(c.body.data.operacion)} ${String(c.body.data.estadoContab)} ${String(c.body.data.codTipoDoc)}`)).toEqual([
      'getResumen COMPRA REGISTRO 0', 'getDetalleCompra COMPRA REGISTRO 33', 'getDetalleCompra COMPRA REGISTRO 34',
      'getResumen COMPRA PENDIENTE 0', 'getDetalleCompra COMPRA PENDIENTE 33',
      'getResumen COMPRA NO_INCLUIR 0', 'getDetalleCompra COMPRA NO_INCLUIR 33',
      'getResumen COMPRA RECLAMADO 0', 'getDetalleCompra COMPRA RECLAMADO 33',
      'getResumen VENTA  0', 'getDetalleVenta VENTA  33', 'getDetalleVenta VENTA  61',
    ])
    for (const c of state.facade) {
      expect(c.body.metaData).toEqual({ namespace: namespaceOf(c.op), conversationId: TOKEN, transactionId: expect.stringMatching(/^[0-9a-f-]{36}$/), page: null })
      expect(c.body.data).toMatchObject({ rutEmisor: '76354771', dvEmisor: 'K', ptributario: '202610' })
    }
    expect(new Set(state.facade.map((c) => c.body.metaData.transactionId)).size).toBe(state.facade.length)
    const resumen = portal.seen.find((r) => r.path.endsWith('/getResumen'))
    expect(resumen?.headers['content-type']).toBe('application/json')
  })

  test('boletas are totals only: their summary row is kept and no detail is asked for them', async () => {
    const boleta = detalle(500, { tipoDoc: 39, rut: '66666666-6', razonSocial: 'Boletas del día', montoTotal: 1190 })
    state = newPortalState({ ...REGISTROS, 'VENTA/': [...(REGISTROS['VENTA/'] ?? []), boleta] })
    portal.handler = rcvPortal(state, identity.certificateDer)
    const outcome = await leer()
    if (outcome.kind !== 'ok') throw new Error(JSON.stringify(outcome))
    expect(outcome.ventas.resumen.find((r) => r.tipoDoc === 39)?.cantidad).toBe(1)
    expect(outcome.ventas.detalle.some((d) => d.tipoDoc === 39)).toBe(false)
    expect(state.facade.filter((c) => c.op === 'getDetalleVenta').map((c) => c.body.data.codTipoDoc)).toEqual([33, 61])
  })

  test('a period with no data (codRespuesta 3 everywhere) is an empty RCV, not a failure', async () => {
    state = newPortalState({})
    portal.handler = rcvPortal(state, identity.certificateDer)
    const outcome = await leer()
    expect(outcome.kind === 'ok' && [outcome.compras.secciones.registro, outcome.ventas.detalle]).toEqual([{ resumen: [], detalle: [] }, []])
  })
})

describe('the deferred download', () => {
  test('a type above diferidaDesde comes as a gzip CSV once its state is TERMINADO; the others by JSON', async () => {
    state.pollsBeforeDone = 2
    const outcome = await leer({ diferidaDesde: 2, diferidaPollMs: 1500 })
    if (outcome.kind !== 'ok') throw new Error(JSON.stringify(outcome))
    expect(outcome.diferidas).toBe(1)
    // Registro's type 33 has three documents: read back from the CSV, equal to what the SII holds (razón social with
    // a separator and quotes included); its type 34 still came by JSON.
    expect(outcome.compras.secciones.registro.detalle).toEqual([...conTipo('COMPRA/REGISTRO', 33), ...conTipo('COMPRA/REGISTRO', 34)])
    const registro = state.facade.filter((c) => c.body.data.estadoContab === 'REGISTRO').map((c) => c.op)
    expect(registro).toEqual(['getResumen', 'solicitarDescargaDiferida', 'getEstadoDescargaDiferida', 'getEstadoDescargaDiferida', 'getEstadoDescargaDiferida', 'getDetalleCompra'])
    expect(state.facade.find((c) => c.op === 'getEstadoDescargaDiferida')?.body.data).toMatchObject({ idSolicitud: 'SOL-1', codTipoDoc: 33, estadoContab: 'REGISTRO' })
    expect(slept).toEqual([1500, 1500])
    const archivo = portal.seen.find((r) => r.path.includes('obtenerArchivoBLOB'))
    expect([archivo?.method, archivo?.path]).toEqual(['GET', `${PORTAL_PATHS.facade}obtenerArchivoBLOB/SOL-1`])
    expect(archivo?.headers.cookie).toContain(`TOKEN=${TOKEN}`)
  })

  test('a CSV served with Content-Encoding gzip (fetch inflates it) reads the same', async () => {
    state.archivo = (csv) => ({ status: 200, headers: [['Content-Encoding', 'gzip'], ['Content-Type', 'text/csv; charset=utf-8']], body: gzipSync(csv) })
    const outcome = await leer({ diferidaDesde: 2 })
    expect(outcome.kind === 'ok' && outcome.compras.secciones.registro.detalle).toEqual(REGISTROS['COMPRA/REGISTRO'] ?? [])
  })

  test('one that never finishes is descarga_diferida_sin_terminar after diferidaTimeoutMs (real clock and sleep)', async () => {
    state.pollsBeforeDone = Number.POSITIVE_INFINITY
    const started = Date.now()
    const outcome = await leer({ diferidaDesde: 2, diferidaPollMs: 30, diferidaTimeoutMs: 200, sleep: (ms) => Bun.sleep(ms) })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'descarga_diferida_sin_terminar' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('seguía EN PROCESO')
    expect(Date.now() - started).toBeGreaterThanOrEqual(150)
    expect(state.logouts).toBe(1)
  })

  test('with a sleep that returns at once, the limit still ends the wait (time slept counts)', async () => {
    state.pollsBeforeDone = Number.POSITIVE_INFINITY
    const outcome = await leer({ diferidaDesde: 2, diferidaPollMs: 2000, diferidaTimeoutMs: 10_000 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'descarga_diferida_sin_terminar' })
    expect(slept).toEqual([2000, 2000, 2000, 2000, 2000])
  })

  test('a CSV whose header the SII changed is respuesta_invalida naming the column', async () => {
    state.archivo = (csv) => ({ status: 200, body: gzipSync(csv.replace('Monto IVA Recuperable', 'Monto IVA Credito')) })
    const outcome = await leer({ diferidaDesde: 2 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('«Monto IVA Credito» y Timbre espera «Monto IVA Recuperable»')
    expect(state.logouts).toBe(1)
  })

  test('a damaged gzip, or no file (404), is respuesta_invalida', async () => {
    state.archivo = () => ({ status: 200, body: new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]) })
    expect(await leer({ diferidaDesde: 2 })).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
    state.archivo = () => ({ status: 404, body: 'no' })
    expect(await leer({ diferidaDesde: 2 })).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
  })

  test('an unknown caEstado is respuesta_invalida', async () => {
    state.spoil = (c) => (c.op === 'getEstadoDescargaDiferida' ? ok({ caEstado: 'ERROR' }) : undefined)
    const outcome = await leer({ diferidaDesde: 2 })
    expect(outcome.kind === 'failed' && [outcome.motivo, outcome.mensaje.includes('"ERROR"')]).toEqual(['respuesta_invalida', true])
  })
})

describe('failures mid-read', () => {
  test('an expired session mid-read (codRespuesta 99 "El token no es válido") is sesion_expirada; logout still happens', async () => {
    state.spoil = (c) => (c.op === 'getDetalleCompra' && c.body.data.estadoContab === 'PENDIENTE' ? sessionGone : undefined)
    const outcome = await leer()
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sesion_expirada' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('getDetalleCompra COMPRA PENDIENTE tipo 33')
    expect(state.facade.at(-1)?.op).toBe('getDetalleCompra')
    expect(state.logouts).toBe(1)
  })

  test('a refusal (codRespuesta 2) is sii_rechazo with the SII\'s words; a 99 that is not about the session too', async () => {
    state.spoil = (c) => (c.op === 'getResumen' && c.body.data.operacion === 'VENTA'
      ? json({ data: null, respEstado: { codRespuesta: 2, msgeRespuesta: 'Servicio no disponible temporalmente' } }) : undefined)
    const outcome = await leer()
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('Servicio no disponible temporalmente')
    state.spoil = (c) => (c.op === 'getResumen' ? json({ data: null, respEstado: { codRespuesta: 99, msgeRespuesta: 'Periodo no valido' } }) : undefined)
    expect(await leer()).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo' })
    expect(state.logouts).toBe(2)
  })

  test('an SII message that echoes the session\'s cookies reaches the accountant with them blanked', async () => {
    state.spoil = (c) => (c.op === 'getResumen'
      ? json({ data: null, respEstado: { codRespuesta: 2, msgeRespuesta: `Error en sesion ${CSESSIONID} / ${TOKEN}` } }) : undefined)
    const outcome = await leer()
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sii_rechazo' })
    const mensaje = outcome.kind === 'failed' ? outcome.mensaje : ''
    expect(mensaje).toContain('Error en sesion [sesión] / [sesión]')
    expect(mensaje.includes(CSESSIONID) || mensaje.includes(TOKEN)).toBe(false)
  })

  test('malformed JSON is respuesta_invalida naming the request', async () => {
    state.spoil = (c) => (c.op === 'getDetalleVenta' ? { status: 200, headers: [['Content-Type', 'application/json']], body: '{"data": [{"detTipoDoc": 33' } : undefined)
    const outcome = await leer()
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('getDetalleVenta VENTA tipo 33')
    expect(state.logouts).toBe(1)
  })

  test('a row the domain reader refuses is respuesta_invalida naming the field', async () => {
    state.spoil = (c) => (c.op === 'getDetalleCompra' ? ok([{ detTipoDoc: 33, detRutDoc: 1, detDvDoc: '1' }]) : undefined)
    const outcome = await leer()
    expect(outcome.kind === 'failed' && [outcome.motivo, outcome.mensaje.includes('data.0.detRutDoc')]).toEqual(['respuesta_invalida', true])
  })

  test('an answer larger than the client reads is respuesta_invalida, cut unread; logout still happens', async () => {
    const outcome = await leer({ maxAnswerBytes: 2048 })
    // The summaries of this period are a few hundred bytes; the first detail answer passes 2 KB.
    state = newPortalState({ ...REGISTROS, 'COMPRA/REGISTRO': Array.from({ length: 40 }, (_, i) => detalle(200 + i)) })
    portal.handler = rcvPortal(state, identity.certificateDer)
    const big = await leer({ maxAnswerBytes: 2048 })
    expect(outcome.kind).toBe('ok')
    expect(big).toMatchObject({ kind: 'failed', motivo: 'respuesta_invalida' })
    expect(big.kind === 'failed' && big.mensaje).toContain('demasiado grande')
    expect(state.logouts).toBe(1)
  })

  test('a 503 from the data service is sin_conexion', async () => {
    state.spoil = (c) => (c.op === 'getResumen' && c.body.data.estadoContab === 'RECLAMADO' ? { status: 503, body: '<html>Mantención</html>' } : undefined)
    const outcome = await leer()
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sin_conexion' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('HTTP 503')
    expect(state.logouts).toBe(1)
  })

  test('a data request that never answers is sin_conexion after timeoutMs; logout still happens', async () => {
    state.spoil = (c) => (c.op === 'getDetalleVenta' ? { status: 200, hang: true } : undefined)
    const outcome = await leer({ timeoutMs: 300 })
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sin_conexion' })
    expect(outcome.kind === 'failed' && outcome.mensaje).toContain('timeout after 300 ms')
    expect(state.logouts).toBe(1)
  })

  test('a connection refused is sin_conexion', async () => {
    const outcome = await createRcvPortalClient({ target: { kind: 'origin', origin: 'https://127.0.0.1:1' } }).leerRcv(company, creds, '202610')
    expect(outcome).toMatchObject({ kind: 'failed', motivo: 'sin_conexion' })
  })
})

test('a caller\'s bug throws: a malformed RUT or period', async () => {
  const c = createRcvPortalClient({ target: { kind: 'origin', origin: portal.httpsOrigin } })
  await expect(c.leerRcv({ ...company, rut: '76354771-1' }, creds, '202610')).rejects.toThrow('company RUT')
  await expect(c.leerRcv(company, creds, '2026-10')).rejects.toThrow('periodo')
  expect(() => createRcvPortalClient({ target: { kind: 'simulado' } })).toThrow('start the simulator')
})
