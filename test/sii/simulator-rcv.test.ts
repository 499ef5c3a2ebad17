// The simulated SII's RCV data service (src/sii/simulator/rcv-service.ts, rcv-registers.ts) over real HTTP: facturas
// uploaded by Timbre's own SII client become the issuer's Registro de Ventas and the receptor's Registro de Compras;
// ERM/ACD and claims registered through RegistroReclamoDTE move them between sections, as do 8 days of simulator clock;
// every answer read back with domain/rcv.ts's readers; the deferred download's states and its gzip CSV; the faults and
// the answer codes. docs/decisions/simulator.md "Portal y RCV".
import { afterAll, describe, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { santiagoTimestamp } from '../../src/clock'
import type { Accion } from '../../src/domain/intercambio'
import { readDetalleRcv, readResumenRcv, writeRegistroComprasCsv, writeRegistroVentasCsv, type DetalleRcv, type SeccionCompras, ESTADO_CONTAB } from '../../src/domain/rcv'
import { createSiiClient, type SiiCompany, type SiiCredentials } from '../../src/sii/client/client'
import { FACADE_OPS, PORTAL_PATHS, SESSION_INVALID_TEXT } from '../../src/sii/portal-protocol'
import { startSimulator, type RunningSimulator } from '../../src/sii/simulator/server'
import { SimulatorStore } from '../../src/sii/simulator/store'
import { testClock, type TestClock } from '../support/clock'
import { tempDir } from '../support/server'
import { dte, EMISOR, envioDte, identity, SENDER, SIM_START } from './simulator-helpers'
import { facade, holder, login } from './simulator-portal-helpers'

setDefaultTimeout(30_000)

const DAY_MS = 24 * 60 * 60_000
const RECEPTOR = '76086428-5'
const PERIODO = '202603'
const CREDS: SiiCredentials = { certificateId: 'cert-rcv', rutFirmante: SENDER, signer: identity().signer }
const company = (rut: string): SiiCompany => ({ rut, ambiente: 'certificacion', isDemo: false })

const running: RunningSimulator[] = []
const dirs: string[] = []
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop()))
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Harness {
  readonly url: string
  readonly clock: TestClock
  readonly dataDir: string
  /** The current session's token; `relogin` opens another (the simulator's clock moved past its 30 idle minutes). */
  readonly token: string
  relogin(): Promise<void>
  upload(folios: readonly number[], opts?: { receptor?: string; fechaEmision?: string }): Promise<void>
  registrar(folio: number, accion: Accion): Promise<void>
  /** A data call with the session; the parsed JSON answer. */
  call(op: string, data: Partial<Parameters<typeof facade>[3]>): Promise<{ data: unknown; respEstado: { codRespuesta: number; msgeRespuesta: string } }>
  detalle(operacion: 'COMPRA' | 'VENTA', seccion: SeccionCompras | null, tipo?: number): Promise<DetalleRcv[]>
  withStore(work: (store: SimulatorStore) => void): void
}

async function harness(): Promise<Harness> {
  const clock = testClock({ at: SIM_START })
  const dataDir = tempDir('timbre-simrcv-')
  dirs.push(dataDir)
  const sim = await startSimulator({ processingDelayMs: 0, clock: clock.now, dataDir })
  running.push(sim)
  const client = createSiiClient({ target: { kind: 'origin', origin: sim.url }, timeoutMs: 5_000 })
  let token = (await login(sim.url, holder())).token ?? ''
  const base = { rutEmisor: '', dvEmisor: '', ptributario: PERIODO, estadoContab: '', operacion: 'COMPRA' as const }
  const h: Harness = {
    url: sim.url, clock, dataDir,
    get token() {
      return token
    },
    async relogin() {
      token = (await login(sim.url, holder())).token ?? ''
    },
    async upload(folios, opts = {}) {
      const out = await client.upload(company(EMISOR), CREDS, 'soap', envioDte(folios.map((folio) => dte({ folio, ...opts }))), 'envio.xml')
      expect(out.kind).toBe('received')
    },
    async registrar(folio, accion) {
      const r = await client.registrarAccion(company(RECEPTOR), CREDS, { rutEmisor: EMISOR, tipoDte: 33, folio }, accion)
      expect(r).toMatchObject({ kind: 'registrada' })
    },
    async call(op, data) {
      const res = await facade(sim.url, token, op, { ...base, ...data } as Parameters<typeof facade>[3])
      expect(res.status).toBe(200)
      return (await res.json()) as { data: unknown; respEstado: { codRespuesta: number; msgeRespuesta: string } }
    },
    async detalle(operacion, seccion, tipo = 33) {
      const rut = operacion === 'VENTA' ? EMISOR : RECEPTOR
      const [rutEmisor = '', dvEmisor = ''] = rut.split('-')
      const op = operacion === 'VENTA' ? FACADE_OPS.detalleVenta : FACADE_OPS.detalleCompra
      const read = readDetalleRcv(await h.call(op, { rutEmisor, dvEmisor, operacion, estadoContab: seccion === null ? '' : ESTADO_CONTAB[seccion], codTipoDoc: tipo }))
      if (!read.ok) throw new Error(JSON.stringify(read.errors))
      return read.value
    },
    withStore(work) {
      const store = new SimulatorStore(dataDir)
      try {
        work(store)
      } finally {
        store.close()
      }
    },
  }
  return h
}

const folios = (ds: readonly DetalleRcv[]) => ds.map((d) => d.folio)
const at = (ms: number) => santiagoTimestamp(new Date(SIM_START.getTime() + ms))

describe('the registers from what the simulator received', () => {
  test('a received factura: the issuer\'s venta and the receptor\'s pendiente compra, with the DTE\'s amounts, names and reception', async () => {
    const h = await harness()
    await h.upload([1])
    const [venta] = await h.detalle('VENTA', null)
    expect(venta).toMatchObject({
      tipoDoc: 33, rut: RECEPTOR, razonSocial: 'Cliente & Cía', folio: 1, fechaEmision: '2026-03-02', fechaRecepcion: at(0),
      fechaAcuse: null, fechaReclamo: null, montoExento: null, montoNeto: 1000, montoIva: 190, montoTotal: 1190,
    })
    expect(folios(await h.detalle('COMPRA', 'pendiente'))).toEqual([1])
    const [compra] = await h.detalle('COMPRA', 'pendiente')
    expect(compra).toMatchObject({ rut: EMISOR, razonSocial: 'Comercializadora Ñandú Limitada', montoNeto: 1000, montoIva: 190, montoTotal: 1190, fechaAcuse: null })
    expect(await h.detalle('COMPRA', 'registro')).toEqual([])
    // Another period, and a type nobody received, have no data (code 3).
    const [rutEmisor = '', dvEmisor = ''] = RECEPTOR.split('-')
    expect((await h.call(FACADE_OPS.detalleCompra, { rutEmisor, dvEmisor, ptributario: '202604', estadoContab: 'PENDIENTE', codTipoDoc: 33 })).respEstado.codRespuesta).toBe(3)
    expect((await h.call(FACADE_OPS.detalleCompra, { rutEmisor, dvEmisor, estadoContab: 'PENDIENTE', codTipoDoc: 61 })).respEstado.codRespuesta).toBe(3)
  })

  test('ERM or ACD moves a compra to registro with its Fecha Acuse; a claim to reclamado with its Fecha Reclamo; 8 days do the rest', async () => {
    const h = await harness()
    await h.upload([1, 2, 3, 4])
    h.clock.advance(DAY_MS)
    await h.registrar(1, 'ERM')
    await h.registrar(2, 'ACD')
    h.clock.advance(60_000)
    await h.registrar(3, 'RFP')
    await h.relogin()
    expect(folios(await h.detalle('COMPRA', 'registro'))).toEqual([1, 2])
    expect((await h.detalle('COMPRA', 'registro')).map((d) => d.fechaAcuse)).toEqual([at(DAY_MS), at(DAY_MS)])
    expect(folios(await h.detalle('COMPRA', 'pendiente'))).toEqual([4])
    const [reclamada] = await h.detalle('COMPRA', 'reclamado')
    expect(reclamada).toMatchObject({ folio: 3, fechaReclamo: at(DAY_MS + 60_000), fechaAcuse: null })
    // The issuer sees the same acuse and claim in its Registro de Ventas.
    const ventas = await h.detalle('VENTA', null)
    expect(ventas.map((v) => [v.folio, v.fechaAcuse, v.fechaReclamo])).toEqual([[1, at(DAY_MS), null], [2, at(DAY_MS), null], [3, null, at(DAY_MS + 60_000)], [4, null, null]])

    // One second short of 8 days from reception folio 4 is still pendiente; at 8 days it is registro, acuse at that instant.
    h.clock.offsetMs = 8 * DAY_MS - 1000
    await h.relogin()
    expect(folios(await h.detalle('COMPRA', 'pendiente'))).toEqual([4])
    h.clock.offsetMs = 8 * DAY_MS
    expect(folios(await h.detalle('COMPRA', 'pendiente'))).toEqual([])
    expect((await h.detalle('COMPRA', 'registro')).map((d) => [d.folio, d.fechaAcuse])).toEqual([[1, at(DAY_MS)], [2, at(DAY_MS)], [4, at(8 * DAY_MS)]])
  })

  test('getResumen: one row per type per section, read back by readResumenRcv; the period is the month of FchEmis', async () => {
    const h = await harness()
    await h.upload([1, 2])
    await h.upload([3], { fechaEmision: '2026-02-27' })
    const [rutEmisor = '', dvEmisor = ''] = RECEPTOR.split('-')
    const pendiente = readResumenRcv(await h.call(FACADE_OPS.resumen, { rutEmisor, dvEmisor, estadoContab: 'PENDIENTE', codTipoDoc: 0 }))
    expect(pendiente).toEqual({
      ok: true,
      value: [{ tipoDoc: 33, cantidad: 2, montoExento: 0, montoNeto: 2000, montoIva: 380, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 2380 }],
    })
    const febrero = readResumenRcv(await h.call(FACADE_OPS.resumen, { rutEmisor, dvEmisor, ptributario: '202602', estadoContab: 'PENDIENTE', codTipoDoc: 0 }))
    expect(febrero.ok && febrero.value.map((r) => r.cantidad)).toEqual([1])
    // No rows: code 3, which the reader takes as an empty period.
    const registro = await h.call(FACADE_OPS.resumen, { rutEmisor, dvEmisor, estadoContab: 'REGISTRO', codTipoDoc: 0 })
    expect(registro.respEstado.codRespuesta).toBe(3)
    expect(readResumenRcv(registro)).toEqual({ ok: true, value: [] })
  })

  test('rows added to the store join the registers: sections as given, or the 8-day rule', async () => {
    const h = await harness()
    await h.upload([1])
    h.withStore((store) => store.insertRcvFilas([
      { rut_empresa: RECEPTOR, registro: 'compras', tipo: 33, rut: '11111111-1', razon_social: 'Proveedor Externo', folio: 77, fecha_emision: '2026-03-01', fecha_recepcion: '2026-03-01T09:00:00', monto_exento: 0, monto_neto: 500, monto_iva: 95, monto_total: 595, seccion: null, added_at: 0 },
      { rut_empresa: RECEPTOR, registro: 'compras', tipo: 33, rut: '11111111-1', razon_social: 'Proveedor Externo', folio: 78, fecha_emision: '2026-03-01', fecha_recepcion: '2026-03-01T09:00:00', monto_exento: 0, monto_neto: 10, monto_iva: 2, monto_total: 12, seccion: 'reclamado', added_at: 0 },
    ]))
    expect(folios(await h.detalle('COMPRA', 'pendiente'))).toEqual([1, 77])
    expect(await h.detalle('COMPRA', 'reclamado')).toMatchObject([{ folio: 78, rut: '11111111-1', fechaReclamo: '2026-03-01T09:00:00', montoTotal: 12 }])
    h.clock.advance(8 * DAY_MS)
    await h.relogin()
    expect(folios(await h.detalle('COMPRA', 'registro'))).toEqual([1, 77])
  })

  test('only 33, 34 and 43 wait for an acceptance: a credit note enters registro at reception', async () => {
    const h = await harness()
    h.withStore((store) => store.insertRcvFilas([
      { rut_empresa: RECEPTOR, registro: 'compras', tipo: 61, rut: '11111111-1', razon_social: 'Proveedor Externo', folio: 90, fecha_emision: '2026-03-02', fecha_recepcion: '2026-03-02T09:00:00', monto_exento: 0, monto_neto: 100, monto_iva: 19, monto_total: 119, seccion: null, added_at: 0 },
    ]))
    expect(await h.detalle('COMPRA', 'pendiente', 61)).toEqual([])
    expect(await h.detalle('COMPRA', 'registro', 61)).toMatchObject([{ folio: 90, tipoDoc: 61, fechaAcuse: '2026-03-02T09:00:00' }])
  })
})

describe('the deferred download', () => {
  test('CREADO, EN PROCESO from 1 s, TERMINADO from 2 s; then the gzip CSV of that section and type in the SII\'s layout', async () => {
    const h = await harness()
    await h.upload([1, 2])
    await h.registrar(2, 'ERM')
    const [rutEmisor = '', dvEmisor = ''] = RECEPTOR.split('-')
    const pedido = await h.call(FACADE_OPS.solicitarDiferida, { rutEmisor, dvEmisor, estadoContab: 'PENDIENTE', codTipoDoc: 33 })
    expect(pedido.respEstado.codRespuesta).toBe(0)
    const idSolicitud = (pedido.data as { idSolicitud: string }).idSolicitud
    const estado = async () => ((await h.call(FACADE_OPS.estadoDiferida, { rutEmisor, dvEmisor, estadoContab: 'PENDIENTE', codTipoDoc: 33, idSolicitud })).data as { caEstado: string }).caEstado
    const blob = () => fetch(`${h.url}${PORTAL_PATHS.facade}${FACADE_OPS.archivoDiferida}/${idSolicitud}`, { headers: { Cookie: `TOKEN=${h.token}; CSESSIONID=${h.token}` } })
    expect(await estado()).toBe('CREADO')
    expect((await (await blob()).json()).respEstado.codRespuesta).toBe(1)
    h.clock.advance(1000)
    expect(await estado()).toBe('EN PROCESO')
    h.clock.advance(1000)
    expect(await estado()).toBe('TERMINADO')
    const res = await blob()
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/gzip')
    const csv = new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer())))
    expect(csv).toBe(writeRegistroComprasCsv('pendiente', await h.detalle('COMPRA', 'pendiente')))
    expect(csv.split('\r\n')[1]).toStartWith(`1;33;Del Giro;${EMISOR};Comercializadora Ñandú Limitada;1;02/03/2026;`)
    // Without the session's cookie, nothing.
    const sinSesion = await fetch(`${h.url}${PORTAL_PATHS.facade}${FACADE_OPS.archivoDiferida}/${idSolicitud}`)
    expect((await sinSesion.json()).respEstado).toMatchObject({ codRespuesta: 99, msgeRespuesta: SESSION_INVALID_TEXT })
  })

  test('the ventas CSV, and an unknown request', async () => {
    const h = await harness()
    await h.upload([5])
    const [rutEmisor = '', dvEmisor = ''] = EMISOR.split('-')
    const pedido = await h.call(FACADE_OPS.solicitarDiferida, { rutEmisor, dvEmisor, operacion: 'VENTA', estadoContab: '', codTipoDoc: 33 })
    const idSolicitud = (pedido.data as { idSolicitud: string }).idSolicitud
    h.clock.advance(2000)
    const res = await fetch(`${h.url}${PORTAL_PATHS.facade}${FACADE_OPS.archivoDiferida}/${idSolicitud}`, { headers: { Cookie: `TOKEN=${h.token}` } })
    const csv = new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await res.arrayBuffer())))
    expect(csv).toBe(writeRegistroVentasCsv(await h.detalle('VENTA', null)))
    expect((await h.call(FACADE_OPS.estadoDiferida, { rutEmisor, dvEmisor, operacion: 'VENTA', idSolicitud: '999999' })).respEstado.codRespuesta).toBe(1)
  })
})

describe('answer codes and faults', () => {
  test('a RUT whose check digit does not match is 99; a bad period, section or operation is 1', async () => {
    const h = await harness()
    const code = async (data: Partial<Parameters<typeof facade>[3]>) => (await h.call(FACADE_OPS.resumen, { rutEmisor: '76086428', dvEmisor: '5', estadoContab: 'REGISTRO', ...data })).respEstado.codRespuesta
    expect(await code({})).toBe(3)
    expect(await code({ dvEmisor: '4' })).toBe(99)
    expect(await code({ rutEmisor: 'abc' })).toBe(99)
    expect(await code({ ptributario: '202613' })).toBe(1)
    expect(await code({ ptributario: '201601' })).toBe(1)
    expect(await code({ estadoContab: 'OTRO' })).toBe(1)
    expect(await code({ operacion: 'OTRA' as 'VENTA' })).toBe(1)
  })

  test('respuesta_malformada: the next data call is 200 with a cut body that is not JSON, the one after is whole', async () => {
    const h = await harness()
    h.withStore((s) => s.setFalla('respuesta_malformada', 1))
    const res = await facade(h.url, h.token, FACADE_OPS.resumen, { rutEmisor: '76086428', dvEmisor: '5', ptributario: PERIODO, estadoContab: 'REGISTRO', operacion: 'COMPRA' })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(() => JSON.parse(text)).toThrow()
    expect((await h.call(FACADE_OPS.resumen, { rutEmisor: '76086428', dvEmisor: '5', estadoContab: 'REGISTRO' })).respEstado.codRespuesta).toBe(3)
  })

  test('sesion_expirada: the next data call is 99 "El token no es valido" and the session is over', async () => {
    const h = await harness()
    h.withStore((s) => s.setFalla('sesion_expirada', 1))
    const data = { rutEmisor: '76086428', dvEmisor: '5', estadoContab: 'REGISTRO' }
    expect((await h.call(FACADE_OPS.resumen, data)).respEstado).toMatchObject({ codRespuesta: 99, msgeRespuesta: SESSION_INVALID_TEXT })
    expect((await h.call(FACADE_OPS.resumen, data)).respEstado.codRespuesta).toBe(99)
    const other = (await login(h.url, holder())).token ?? ''
    const res = await facade(h.url, other, FACADE_OPS.resumen, { rutEmisor: '76086428', dvEmisor: '5', ptributario: PERIODO, estadoContab: 'REGISTRO', operacion: 'COMPRA' })
    expect((await res.json()).respEstado.codRespuesta).toBe(3)
  })

  test('diferida_eterna with --veces 0: every request stays EN PROCESO until removed', async () => {
    const h = await harness()
    h.withStore((s) => s.setFalla('diferida_eterna', 0))
    const data = { rutEmisor: '76086428', dvEmisor: '5', estadoContab: 'REGISTRO', codTipoDoc: 33 }
    const ids: string[] = []
    for (let i = 0; i < 2; i++) ids.push(((await h.call(FACADE_OPS.solicitarDiferida, data)).data as { idSolicitud: string }).idSolicitud)
    h.clock.advance(29 * 60_000)
    for (const idSolicitud of ids) expect((await h.call(FACADE_OPS.estadoDiferida, { ...data, idSolicitud })).data).toMatchObject({ caEstado: 'EN PROCESO' })
    h.withStore((s) => expect(s.removeFalla('diferida_eterna')).toBe(true))
    const later = ((await h.call(FACADE_OPS.solicitarDiferida, data)).data as { idSolicitud: string }).idSolicitud
    h.clock.advance(2000)
    expect((await h.call(FACADE_OPS.estadoDiferida, { ...data, idSolicitud: later })).data).toMatchObject({ caEstado: 'TERMINADO' })
  })
})
