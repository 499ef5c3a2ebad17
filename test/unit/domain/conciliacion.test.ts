// The month's reconciliation (domain/conciliacion.ts): each kind of finding from small hand-made lists, with the
// documents it names; the 8 days at their boundary; and, as a property, identical lists find nothing.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  conciliar, plazoAceptacion, type CompraRcv, type ConciliacionInput, type EmitidoTimbre, type RecibidoTimbre, type VentaRcv,
} from '../../../src/domain/conciliacion'

const PROVEEDOR = '76086428-5'
const CLIENTE = '96790240-3'
const HOY = new Date('2026-11-20T12:00:00Z')
const DAY_MS = 24 * 60 * 60_000

// 100 000 neto, 19 000 IVA, 119 000 total.
const MONTOS = { montoExento: 0, montoNeto: 100_000, montoIva: 19_000, montoTotal: 119_000 }

function recibido(folio: number, over: Partial<RecibidoTimbre> = {}): RecibidoTimbre {
  return { tipoDte: 33, folio, rut: PROVEEDOR, estado: 'aceptado', recepcionSii: new Date('2026-11-02T10:00:00Z'), referencias: [], ...MONTOS, ...over }
}
function compra(folio: number, over: Partial<CompraRcv> = {}): CompraRcv {
  return { seccion: 'registro', tipoDte: 33, folio, rut: PROVEEDOR, recepcionSii: new Date('2026-11-02T10:00:00Z'), referencias: [], ...MONTOS, ...over }
}
function emitido(folio: number, over: Partial<EmitidoTimbre> = {}): EmitidoTimbre {
  return { tipoDte: 33, folio, rut: CLIENTE, fechaEmision: '2026-11-03', aceptadoSii: true, ...MONTOS, ...over }
}
function venta(folio: number, over: Partial<VentaRcv> = {}): VentaRcv {
  return { tipoDte: 33, folio, rut: CLIENTE, fechaEmision: '2026-11-03', ...MONTOS, ...over }
}
function input(over: Partial<ConciliacionInput>): ConciliacionInput {
  return { emitidos: [], recibidos: [], compras: [], ventas: [], hoy: HOY, ...over }
}

describe('conciliar: each finding with its documents', () => {
  test('a received document the SII does not hold', () => {
    const h = conciliar(input({ recibidos: [recibido(10)] }))
    expect(h).toHaveLength(1)
    expect(h[0]).toMatchObject({ tipo: 'recibido_sin_registro', documentos: [{ origen: 'timbre', tipoDte: 33, folio: 10, rut: PROVEEDOR, registro: null }] })
    expect(h[0]?.mensaje).toContain('pida al proveedor')
  })

  test('a document Timbre refused at reception is not expected in the RCV', () => {
    expect(conciliar(input({ recibidos: [recibido(10, { estado: 'rechazado_tecnico' })] }))).toEqual([])
  })

  test('an RCV purchase never received, in any section', () => {
    const h = conciliar(input({ compras: [compra(11, { seccion: 'no_incluir' })] }))
    expect(h).toEqual([expect.objectContaining({ tipo: 'compra_sin_documento', documentos: [{ origen: 'sii', tipoDte: 33, folio: 11, rut: PROVEEDOR, registro: 'no_incluir' }] })])
  })

  test('the RUT is matched in its canonical form', () => {
    expect(conciliar(input({ recibidos: [recibido(12, { rut: '76.086.428-5' })], compras: [compra(12)] }))).toEqual([])
  })

  test('amounts that differ: each one named, both documents given', () => {
    // The SII has neto 100 000 + IVA 19 000 = 119 000; Timbre's copy says neto 100 100, IVA 19 019, total 119 119.
    const h = conciliar(input({ recibidos: [recibido(13, { montoNeto: 100_100, montoIva: 19_019, montoTotal: 119_119 })], compras: [compra(13)] }))
    expect(h).toHaveLength(1)
    expect(h[0]?.tipo).toBe('montos_distintos')
    expect(h[0]?.diferencias).toEqual([
      { campo: 'montoNeto', timbre: 100_100, sii: 100_000 },
      { campo: 'montoIva', timbre: 19_019, sii: 19_000 },
      { campo: 'montoTotal', timbre: 119_119, sii: 119_000 },
    ])
    expect(h[0]?.documentos.map((d) => d.origen)).toEqual(['timbre', 'sii'])
  })

  test('an issued document accepted by the SII but missing from the Registro de Ventas', () => {
    const h = conciliar(input({ emitidos: [emitido(20), emitido(21, { aceptadoSii: false })] }))
    expect(h).toEqual([expect.objectContaining({ tipo: 'emitido_sin_registro', documentos: [expect.objectContaining({ folio: 20 })] })])
  })

  test('issued amounts that differ from the Registro de Ventas', () => {
    const h = conciliar(input({ emitidos: [emitido(22)], ventas: [venta(22, { montoExento: 5_000, montoTotal: 124_000 })] }))
    expect(h.map((x) => x.tipo)).toEqual(['montos_distintos'])
    expect(h[0]?.diferencias).toEqual([{ campo: 'montoExento', timbre: 0, sii: 5_000 }, { campo: 'montoTotal', timbre: 119_000, sii: 124_000 }])
  })

  test('a sale in the Registro de Ventas that Timbre did not issue', () => {
    expect(conciliar(input({ ventas: [venta(23)] })).map((h) => h.tipo)).toEqual(['venta_sin_documento'])
  })

  test('boletas are not matched by folio (the RV carries them as a summary)', () => {
    expect(conciliar(input({ emitidos: [emitido(1, { tipoDte: 39 })] }))).toEqual([])
  })

  test('a credit note over a claimed invoice, from the RCV', () => {
    const h = conciliar(input({
      recibidos: [recibido(30, { estado: 'reclamado' }), recibido(5, { tipoDte: 61, referencias: [{ tipoDte: 33, folio: 30 }] })],
      compras: [compra(30, { seccion: 'reclamado' }), compra(5, { tipoDte: 61, referencias: [{ tipoDte: 33, folio: 30 }] })],
    }))
    expect(h).toHaveLength(1)
    expect(h[0]).toMatchObject({ tipo: 'nota_sobre_reclamada' })
    expect(h[0]?.documentos.map((d) => [d.tipoDte, d.folio, d.registro])).toEqual([[61, 5, 'registro'], [33, 30, 'reclamado']])
  })

  test('a credit note over an invoice claimed in Timbre, before any mirror', () => {
    const h = conciliar(input({ recibidos: [recibido(31, { estado: 'reclamado' }), recibido(6, { tipoDte: 61, referencias: [{ tipoDte: 33, folio: 31 }] })] }))
    expect(h.filter((x) => x.tipo === 'nota_sobre_reclamada')).toHaveLength(1)
  })

  test('a note over an invoice of another supplier with the same folio is not matched', () => {
    const h = conciliar(input({
      compras: [compra(32, { seccion: 'reclamado', rut: CLIENTE }), compra(7, { tipoDte: 61, referencias: [{ tipoDte: 33, folio: 32 }] })],
    }))
    expect(h.filter((x) => x.tipo === 'nota_sobre_reclamada')).toEqual([])
  })

  test('a boleta the SII lists twice', () => {
    const boleta = venta(400, { tipoDte: 39, rut: '66666666-6' })
    const h = conciliar(input({ ventas: [boleta, boleta] }))
    expect(h).toEqual([expect.objectContaining({ tipo: 'boleta_duplicada' })])
    expect(h[0]?.documentos).toHaveLength(2)
  })

  test('a comprobante de pago and a boleta of the same day, receptor and total', () => {
    const rut = '66666666-6'
    const h = conciliar(input({
      emitidos: [emitido(401, { tipoDte: 39, rut })],
      ventas: [venta(9001, { tipoDte: 48, rut }), venta(9002, { tipoDte: 48, rut, montoTotal: 5_000 })],
    }))
    expect(h).toEqual([expect.objectContaining({ tipo: 'boleta_duplicada' })])
    expect(h[0]?.documentos.map((d) => [d.origen, d.tipoDte, d.folio])).toEqual([['sii', 48, 9001], ['timbre', 39, 401]])
  })
})

describe('pending acceptance: 8 days from the SII reception', () => {
  const recepcion = new Date('2026-11-15T20:00:00Z')

  test.each([
    ['just received', 0, 8],
    ['half a day in', DAY_MS / 2, 8],                  // 7.5 days left, shown rounded up
    ['one day before the limit', 7 * DAY_MS, 1],
    ['one millisecond before', 8 * DAY_MS - 1, 1],
    ['at the limit itself', 8 * DAY_MS, 0],
  ])('%s: %p ms after reception → %p days left', (_name, afterMs, dias) => {
    expect(plazoAceptacion(recepcion, new Date(recepcion.getTime() + afterMs))?.diasRestantes).toBe(dias)
  })

  test('one millisecond after the limit it counts as accepted: no longer pending', () => {
    expect(plazoAceptacion(recepcion, new Date(recepcion.getTime() + 8 * DAY_MS + 1))).toBeNull()
  })

  test('a pending purchase seen in both sources is one finding with both documents', () => {
    const hoy = new Date(recepcion.getTime() + 3 * DAY_MS)
    const h = conciliar(input({
      hoy,
      recibidos: [recibido(50, { estado: 'recibido', recepcionSii: recepcion })],
      compras: [compra(50, { seccion: 'pendiente', recepcionSii: recepcion })],
    }))
    expect(h).toHaveLength(1)
    expect(h[0]).toMatchObject({ tipo: 'pendiente_aceptacion', diasRestantes: 5, plazo: '2026-11-23T20:00:00.000Z' })
    expect(h[0]?.documentos.map((d) => d.origen)).toEqual(['sii', 'timbre'])
  })

  test('past the 8 days, or of a type without acceptance (56), nothing is pending', () => {
    const hoy = new Date(recepcion.getTime() + 9 * DAY_MS)
    expect(conciliar(input({ hoy, compras: [compra(51, { seccion: 'pendiente', recepcionSii: recepcion })] })).filter((h) => h.tipo === 'pendiente_aceptacion')).toEqual([])
    const early = new Date(recepcion.getTime() + DAY_MS)
    const nd = recibido(52, { tipoDte: 56, estado: 'recibido', recepcionSii: recepcion })
    expect(conciliar(input({ hoy: early, recibidos: [nd], compras: [compra(52, { tipoDte: 56 })] }))).toEqual([])
  })
})

describe('conciliar: properties', () => {
  const montos = fc.record({ montoExento: fc.nat(1e7), montoNeto: fc.nat(1e9), montoIva: fc.nat(2e8), montoTotal: fc.nat(2e9) })
  const doc = fc.record({ tipoDte: fc.constantFrom(33, 34, 56, 61), folio: fc.integer({ min: 1, max: 1e6 }), rut: fc.constantFrom(PROVEEDOR, CLIENTE), montos })

  test('identical lists find nothing', () => {
    fc.assert(fc.property(fc.uniqueArray(doc, { selector: (d) => `${d.tipoDte}|${d.rut}|${d.folio}`, maxLength: 20 }), (docs) => {
      const recibidos = docs.map((d) => recibido(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      const compras = docs.map((d) => compra(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      const emitidos = docs.map((d) => emitido(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      const ventas = docs.map((d) => venta(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      expect(conciliar(input({ recibidos, compras, emitidos, ventas }))).toEqual([])
    }))
  })

  test('each purchase missing from one side is found exactly once', () => {
    fc.assert(fc.property(fc.uniqueArray(doc, { selector: (d) => `${d.tipoDte}|${d.rut}|${d.folio}`, minLength: 1, maxLength: 20 }), fc.nat(), (docs, pick) => {
      const gone = pick % docs.length
      const recibidos = docs.map((d) => recibido(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      const compras = docs.filter((_, i) => i !== gone).map((d) => compra(d.folio, { tipoDte: d.tipoDte, rut: d.rut, ...d.montos }))
      const h = conciliar(input({ recibidos, compras }))
      expect(h.map((x) => [x.tipo, x.documentos[0]?.folio])).toEqual([['recibido_sin_registro', docs[gone]?.folio]])
    }))
  })
})
