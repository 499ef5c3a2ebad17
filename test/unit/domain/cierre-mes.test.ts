// The RCV mirror's records as the reconciliation and the F29 read them (domain/cierre-mes.ts): a month's registers
// matching Timbre's documents give no finding, a purchase's reception is an instant in Santiago's time, IVA booked as
// uso común is still the document's IVA, and the F29's débito and crédito are the registers' IVA.
import { describe, expect, test } from 'bun:test'
import { santiagoInstant } from '../../../src/clock'
import { comprasParaConciliar, comprasParaF29, ventasParaConciliar, ventasParaF29 } from '../../../src/domain/cierre-mes'
import { conciliar } from '../../../src/domain/conciliacion'
import { proponerF29 } from '../../../src/domain/f29'
import type { DetalleRcv, RegistroCompras, RegistroVentas, ResumenYDetalle } from '../../../src/domain/rcv'

function detalle(over: Partial<DetalleRcv> & Pick<DetalleRcv, 'tipoDoc' | 'rut' | 'folio' | 'montoTotal'>): DetalleRcv {
  return {
    razonSocial: 'Proveedor Limitada', fechaEmision: '2026-10-05', fechaRecepcion: '2026-10-05T10:00:00', fechaAcuse: null, fechaReclamo: null,
    tipoTransaccion: 'Del Giro', montoExento: null, montoNeto: null, montoIva: null, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null,
    montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null, ivaNoRetenido: null, otrosImpuestos: [],
    ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null, ivaFueraPlazo: null, referencia: null,
    ...over,
  }
}

const vacio: ResumenYDetalle = { resumen: [], detalle: [] }

const compras: RegistroCompras = {
  periodo: '202610',
  secciones: {
    registro: {
      resumen: [],
      detalle: [
        detalle({ tipoDoc: 33, rut: '76086428-5', folio: 101, montoNeto: 100_000, montoIva: 19_000, montoTotal: 119_000 }),
        // Booked as IVA de uso común: the document's IVA sits there, not in IVA recuperable.
        detalle({ tipoDoc: 33, rut: '96790240-3', folio: 7, montoNeto: 50_000, ivaUsoComun: 9_500, montoTotal: 59_500 }),
      ],
    },
    pendiente: { resumen: [], detalle: [detalle({ tipoDoc: 33, rut: '76086428-5', folio: 102, montoNeto: 10_000, montoIva: 1_900, montoTotal: 11_900, fechaRecepcion: '2026-10-27T09:15:00' })] },
    no_incluir: vacio,
    reclamado: vacio,
  },
}

const ventas: RegistroVentas = {
  periodo: '202610',
  resumen: [],
  detalle: [
    detalle({ tipoDoc: 33, rut: '77665544-9', folio: 1, montoNeto: 200_000, montoIva: 38_000, montoTotal: 238_000, fechaEmision: '2026-10-02' }),
    detalle({ tipoDoc: 61, rut: '77665544-9', folio: 1, montoNeto: 20_000, montoIva: 3_800, montoTotal: 23_800, fechaEmision: '2026-10-09', referencia: { tipoDoc: 33, folio: 1 } }),
  ],
}

describe('the RCV mirror for the reconciliation', () => {
  test('registers matching Timbre\'s documents: only the pending purchase, with its days left from the SII\'s reception in Santiago', () => {
    const hoy = new Date('2026-10-30T12:00:00Z')
    const rows = comprasParaConciliar(compras, santiagoInstant)
    expect(rows.map((r) => [r.seccion, r.folio, r.montoIva])).toEqual([['registro', 101, 19_000], ['registro', 7, 9_500], ['pendiente', 102, 1_900]])
    // 09:15 in Santiago in October (UTC-3) is 12:15 UTC.
    expect(rows[2]!.recepcionSii?.toISOString()).toBe('2026-10-27T12:15:00.000Z')
    const hallazgos = conciliar({
      emitidos: ventasParaConciliar(ventas).map((v) => ({ ...v, aceptadoSii: true })),
      recibidos: rows.map((r) => ({ ...r, estado: r.seccion === 'pendiente' ? 'recibido' as const : 'aceptado' as const })),
      compras: rows,
      ventas: ventasParaConciliar(ventas),
      hoy,
    })
    expect(hallazgos.map((h) => h.tipo)).toEqual(['pendiente_aceptacion'])
  })

  test('a reception the mirror cannot read is no instant, not a guess', () => {
    const torcido: RegistroCompras = { ...compras, secciones: { ...compras.secciones, registro: { resumen: [], detalle: [detalle({ tipoDoc: 33, rut: '76086428-5', folio: 9, montoTotal: 1, fechaRecepcion: '27/10/2026' })] } } }
    expect(comprasParaConciliar(torcido, santiagoInstant)[0]!.recepcionSii).toBeNull()
  })
})

describe('the RCV mirror for the F29', () => {
  test('débito is the sales\' IVA less the credit notes\'; crédito the purchases\' recuperable IVA plus uso común at its factor', () => {
    const propuesta = proponerF29({ periodo: '202610', origen: 'rcv', ventas: ventasParaF29(ventas), compras: comprasParaF29(compras), factorUsoComunMilesimas: 600, hallazgos: [] })
    const valor = (codigo: number) => propuesta.codigos.find((c) => c.codigo === codigo)?.valor
    expect(valor(502)).toBe(38_000)
    expect(valor(510)).toBe(3_800)
    expect(valor(538)).toBe(38_000 - 3_800)
    // The pending purchase gives no credit yet; uso común's credit is round(9 500 × 0.6) = 5 700.
    expect(valor(520)).toBe(19_000 + 5_700)
    expect(propuesta.origen).toBe('rcv')
  })
})

describe('boletas in the Registro de Ventas', () => {
  test('they come as the summary\'s totals (no detail lists them): 110 counts them and 111 carries their IVA', () => {
    const conBoletas: RegistroVentas = {
      ...ventas,
      resumen: [
        { tipoDoc: 33, cantidad: 1, montoExento: 0, montoNeto: 200_000, montoIva: 38_000, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 238_000 },
        { tipoDoc: 39, cantidad: 412, montoExento: 0, montoNeto: 840_336, montoIva: 159_664, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 1_000_000 },
        { tipoDoc: 41, cantidad: 0, montoExento: 0, montoNeto: 0, montoIva: 0, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 0 },
      ],
    }
    const lineas = ventasParaF29(conBoletas)
    expect(lineas.filter((l) => l.tipoDte === 39)).toEqual([{ tipoDte: 39, folio: 0, rut: '', cantidad: 412, montoExento: 0, montoNeto: 840_336, montoIva: 159_664, ivaRetenido: 0, montoTotal: 1_000_000 }])
    // A type with details is read from them, never twice from its summary too; an empty summary row adds nothing.
    expect(lineas.filter((l) => l.tipoDte === 33)).toHaveLength(1)
    expect(lineas.some((l) => l.tipoDte === 41)).toBe(false)
    const propuesta = proponerF29({ periodo: '202610', origen: 'rcv', ventas: lineas, compras: [], factorUsoComunMilesimas: null, hallazgos: [] })
    const valor = (c: number) => propuesta.codigos.find((x) => x.codigo === c)?.valor
    expect(valor(110)).toBe(412)
    expect(valor(111)).toBe(159_664)
    expect(valor(538)).toBe(38_000 - 3_800 + 159_664)
  })
})
