// The simulator's det*/rsmn* writer (src/sii/simulator/rcv-rows.ts) is the exact inverse of domain/rcv.ts's readers:
// any detail or summary the simulator can hold, written as the data service's JSON and read back by readDetalleRcv and
// readResumenRcv, is the same record (fast-check over every field, empty amounts included); and the 8-day rule at
// its boundary (rcv-registers.ts estadoAcuse).
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readDetalleRcv, readResumenRcv, resumenDeDetalles, type DetalleRcv } from '../../src/domain/rcv'
import { ACUSE_TACITO_MS, estadoAcuse } from '../../src/sii/simulator/rcv-registers'
import { detalleRow, resumenRow } from '../../src/sii/simulator/rcv-rows'

const monto = fc.option(fc.integer({ min: 0, max: 10_000_000_000 }), { nil: null })
const instant = fc.date({ min: new Date('2017-08-01T00:00:00Z'), max: new Date('2030-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19))
const texto = fc.option(fc.string({ minLength: 1, maxLength: 60 }).map((s) => s.trim()).filter((s) => s !== ''), { nil: null })

const detalleArb: fc.Arbitrary<DetalleRcv> = fc.record({
  tipoDoc: fc.constantFrom(33, 34, 43, 46, 56, 61, 110, 111, 112),
  rut: fc.constantFrom('12345678-5', '76354771-K', '60803000-K', '1-9', '76086428-5'),
  razonSocial: fc.string({ maxLength: 100 }).map((s) => s.trim()),
  folio: fc.integer({ min: 1, max: 9_999_999_999 }),
  fechaEmision: instant.map((i) => i.slice(0, 10)),
  fechaRecepcion: fc.option(instant, { nil: null }),
  fechaAcuse: fc.option(instant, { nil: null }),
  fechaReclamo: fc.option(instant, { nil: null }),
  tipoTransaccion: texto,
  montoExento: monto, montoNeto: monto, montoIva: monto, montoIvaNoRecuperable: monto,
  codigoIvaNoRecuperable: fc.option(fc.constantFrom(1, 2, 3, 4, 9), { nil: null }),
  montoTotal: fc.integer({ min: 0, max: 10_000_000_000 }),
  montoNetoActivoFijo: monto, ivaActivoFijo: monto, ivaUsoComun: monto, impuestoSinDerechoCredito: monto, ivaNoRetenido: monto,
  otrosImpuestos: fc.constant([]),
  ivaRetenidoTotal: monto, ivaRetenidoParcial: monto, ivaPropio: monto, ivaTerceros: monto, ivaFueraPlazo: monto,
  referencia: fc.option(fc.record({ tipoDoc: fc.constantFrom(33, 34, 56, 61), folio: fc.integer({ min: 1, max: 99_999_999 }) }), { nil: null }),
})

/** The data service's answer as the simulator sends it: JSON text, parsed again as the client would. */
const wire = (data: unknown) => JSON.parse(JSON.stringify({ data, metaData: null, respEstado: { codRespuesta: 0, msgeRespuesta: 'Ok', codError: null } }))

describe('det* and rsmn* rows read back', () => {
  test('every detail the simulator can hold reads back as itself', () => {
    fc.assert(fc.property(fc.array(detalleArb, { maxLength: 20 }), (detalles) => {
      expect(readDetalleRcv(wire(detalles.map(detalleRow)))).toEqual({ ok: true, value: detalles })
    }), { numRuns: 300 })
  })

  test('every summary reads back as itself', () => {
    fc.assert(fc.property(fc.array(detalleArb, { maxLength: 30 }), (detalles) => {
      const resumen = resumenDeDetalles(detalles)
      expect(readResumenRcv(wire(resumen.map(resumenRow)))).toEqual({ ok: true, value: resumen })
    }), { numRuns: 200 })
  })

  test('the formats the reader wants: dd/mm/yyyy, dd/mm/yyyy HH:MM:SS, RUT body as a number, empty as null', () => {
    const [d] = fc.sample(detalleArb, { numRuns: 1, seed: 7 })
    const row = detalleRow({ ...(d as DetalleRcv), rut: '76354771-K', fechaEmision: '2026-03-02', fechaRecepcion: '2026-03-02T12:05:09', fechaAcuse: null, montoExento: null })
    expect(row).toMatchObject({ detRutDoc: 76354771, detDvDoc: 'K', detFchDoc: '02/03/2026', detFecRecepcion: '02/03/2026 12:05:09', detFecAcuse: null, detMntExe: null })
  })
})

describe('the 8 days and the events', () => {
  const recibido = Date.parse('2026-03-02T15:00:00Z')
  test.each([
    ['no events, 1 ms short of 8 days', [], ACUSE_TACITO_MS - 1, { seccion: 'pendiente', fechaAcuse: null, fechaReclamo: null }],
    ['no events, 8 days exactly', [], ACUSE_TACITO_MS, { seccion: 'registro', fechaAcuse: recibido + ACUSE_TACITO_MS, fechaReclamo: null }],
    ['ERM on day 2', [{ accion: 'ERM', registered_at: recibido + 2 }], 3, { seccion: 'registro', fechaAcuse: recibido + 2, fechaReclamo: null }],
    ['ACD then ERM: the first acceptance dates the acuse', [{ accion: 'ACD', registered_at: recibido + 2 }, { accion: 'ERM', registered_at: recibido + 3 }], 4, { seccion: 'registro', fechaAcuse: recibido + 2, fechaReclamo: null }],
    ['a claim, even after 8 days', [{ accion: 'RFT', registered_at: recibido + 5 }], 2 * ACUSE_TACITO_MS, { seccion: 'reclamado', fechaAcuse: null, fechaReclamo: recibido + 5 }],
    ['an event later than now has not happened', [{ accion: 'RCD', registered_at: recibido + 10 }], 5, { seccion: 'pendiente', fechaAcuse: null, fechaReclamo: null }],
  ] as const)('%s', (_name, eventos, elapsed, expected) => {
    expect(estadoAcuse(recibido, eventos, recibido + elapsed)).toEqual(expected)
  })
})
