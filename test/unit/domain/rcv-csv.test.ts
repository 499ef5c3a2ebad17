// The RCV CSV reader (domain/rcv-csv.ts), the inverse of rcv.ts's writers: every layout reads back to the details it
// was written from (a property over generated details, hostile razones sociales included), and the file's edge
// cases: quotes, CRLF or LF, a BOM, null kept apart from 0, a header the SII changed (named by its first differing
// column), a ragged row, unreadable cells.
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { readRegistroComprasCsv, readRegistroVentasCsv } from '../../../src/domain/rcv-csv'
import {
  COLUMNAS_COMPRAS, COLUMNAS_VENTAS, SECCIONES_COMPRAS, writeRegistroComprasCsv, writeRegistroVentasCsv,
  type DetalleRcv, type SeccionCompras,
} from '../../../src/domain/rcv'
import { computeDv } from '../../../src/domain/rut'

function detalle(extra: Partial<DetalleRcv> = {}): DetalleRcv {
  return {
    tipoDoc: 33, rut: '12345678-5', razonSocial: 'Fake Company S.A.', folio: 1, fechaEmision: '2019-06-21',
    fechaRecepcion: '2019-06-24T09:55:53', fechaAcuse: null, fechaReclamo: null, tipoTransaccion: 'Del Giro',
    montoExento: 0, montoNeto: 1000, montoIva: 190, montoIvaNoRecuperable: null, codigoIvaNoRecuperable: null, montoTotal: 1190,
    montoNetoActivoFijo: null, ivaActivoFijo: null, ivaUsoComun: null, impuestoSinDerechoCredito: null, ivaNoRetenido: null,
    otrosImpuestos: [], ivaRetenidoTotal: null, ivaRetenidoParcial: null, ivaPropio: null, ivaTerceros: null, ivaFueraPlazo: null,
    referencia: null, ...extra,
  }
}

/**
 * What a layout can carry of a detail: the writer leaves out what its columns do not hold (ventas' retentions in
 * compras, the acuse in pendiente, compras' activo fijo in ventas…) and keeps one other tax. A round trip can only
 * give back this projection, and must give back all of it.
 */
function proyeccion(d: DetalleRcv, layout: SeccionCompras | 'ventas'): DetalleRcv {
  const ventas = layout === 'ventas'
  return {
    ...d,
    fechaAcuse: layout === 'pendiente' || layout === 'reclamado' ? null : d.fechaAcuse,
    fechaReclamo: layout === 'reclamado' || ventas ? d.fechaReclamo : null,
    montoIvaNoRecuperable: ventas ? null : d.montoIvaNoRecuperable,
    codigoIvaNoRecuperable: ventas ? null : d.codigoIvaNoRecuperable,
    montoNetoActivoFijo: ventas ? null : d.montoNetoActivoFijo,
    ivaActivoFijo: ventas ? null : d.ivaActivoFijo,
    ivaUsoComun: ventas ? null : d.ivaUsoComun,
    impuestoSinDerechoCredito: ventas ? null : d.impuestoSinDerechoCredito,
    otrosImpuestos: d.otrosImpuestos.slice(0, 1),
    ivaRetenidoTotal: ventas ? d.ivaRetenidoTotal : null,
    ivaRetenidoParcial: ventas ? d.ivaRetenidoParcial : null,
    ivaPropio: ventas ? d.ivaPropio : null,
    ivaTerceros: ventas ? d.ivaTerceros : null,
    ivaFueraPlazo: ventas ? d.ivaFueraPlazo : null,
    referencia: ventas ? d.referencia : null,
  }
}

const write = (layout: SeccionCompras | 'ventas', ds: readonly DetalleRcv[]) =>
  layout === 'ventas' ? writeRegistroVentasCsv(ds) : writeRegistroComprasCsv(layout, ds)
const read = (layout: SeccionCompras | 'ventas', text: string) =>
  layout === 'ventas' ? readRegistroVentasCsv(text) : readRegistroComprasCsv(layout, text)
const LAYOUTS: readonly (SeccionCompras | 'ventas')[] = [...SECCIONES_COMPRAS, 'ventas']

// Generators: any value each field may hold, including negative amounts, 0 beside null, and razones sociales with
// separators, quotes and line breaks (the writer quotes them).
const montoRcv = fc.option(fc.integer({ min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }), { nil: null })
const isoDateTime = fc.date({ min: new Date('2017-08-01T00:00:00Z'), max: new Date('2099-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 19))
const rut = fc.integer({ min: 1_000_000, max: 99_999_999 }).map((n) => `${n}-${computeDv(String(n))}`)
const texto = fc.string({ unit: fc.constantFrom('a', 'Ñ', 'é', ' ', ';', '"', '\r', '\n', '\r\n', ',', 'S', '.'), maxLength: 30 })
const otroImpuesto = fc.record({
  codigo: fc.integer({ min: 1, max: 999 }), valor: fc.integer({ min: 0, max: 1_000_000_000 }),
  tasa: fc.option(fc.double({ min: 0, max: 100, noNaN: true }).map((t) => t + 0), { nil: null }),
})
const detalleArb: fc.Arbitrary<DetalleRcv> = fc.record({
  tipoDoc: fc.integer({ min: 0, max: 999 }), rut, razonSocial: texto.map((s) => s.trim()), folio: fc.integer({ min: 0, max: 9_999_999_999 }),
  fecha: isoDateTime, fechaRecepcion: fc.option(isoDateTime, { nil: null }), fechaAcuse: fc.option(isoDateTime, { nil: null }),
  fechaReclamo: fc.option(isoDateTime, { nil: null }), tipoTransaccion: fc.option(texto.filter((s) => s !== ''), { nil: null }),
  montoExento: montoRcv, montoNeto: montoRcv, montoIva: montoRcv, montoIvaNoRecuperable: montoRcv,
  codigoIvaNoRecuperable: fc.option(fc.constantFrom(1, 2, 3, 4, 9), { nil: null }), montoTotal: fc.integer({ min: -1e12, max: 1e12 }),
  montoNetoActivoFijo: montoRcv, ivaActivoFijo: montoRcv, ivaUsoComun: montoRcv, impuestoSinDerechoCredito: montoRcv,
  ivaNoRetenido: montoRcv, otrosImpuestos: fc.array(otroImpuesto, { maxLength: 3 }),
  ivaRetenidoTotal: montoRcv, ivaRetenidoParcial: montoRcv, ivaPropio: montoRcv, ivaTerceros: montoRcv, ivaFueraPlazo: montoRcv,
  referencia: fc.option(fc.record({ tipoDoc: fc.integer({ min: 1, max: 999 }), folio: fc.integer({ min: 1, max: 9_999_999_999 }) }), { nil: null }),
}).map(({ fecha, ...d }) => ({ ...d, fechaEmision: fecha.slice(0, 10) }))

describe('round trip', () => {
  test.each(LAYOUTS.map((l) => [l]))('%s: written details read back the same', (layout) => {
    fc.assert(fc.property(fc.array(detalleArb, { maxLength: 15 }), (detalles) => {
      const esperado = detalles.map((d) => proyeccion(d, layout))
      expect(read(layout, write(layout, detalles))).toEqual({ ok: true, value: esperado })
    }), { numRuns: 150 })
  })

  test('a header with no rows is an empty register', () => {
    for (const layout of LAYOUTS) expect(read(layout, write(layout, []))).toEqual({ ok: true, value: [] })
  })
})

describe('the file as the SII may send it', () => {
  const header = COLUMNAS_COMPRAS.registro.map(([h]) => h).join(';')
  /** A registro row with the cells named in `cells` (by header) set; the others empty. */
  function fila(cells: Record<string, string>): string {
    return COLUMNAS_COMPRAS.registro.map(([h]) => cells[h] ?? '').join(';')
  }
  const base = { Nro: '1', 'Tipo Doc': '33', 'RUT Proveedor': '76354771-K', 'Razon Social': 'Proveedor', Folio: '42', 'Fecha Docto': '21/06/2019', 'Monto Total': '1190' }

  test('empty cells are null and 0 stays 0', () => {
    const text = `${header}\r\n${fila({ ...base, 'Monto Exento': '0', 'Monto Iva No Recuperable': '' })}\r\n`
    const r = readRegistroComprasCsv('registro', text)
    expect(r.ok && [r.value[0]?.montoExento, r.value[0]?.montoIvaNoRecuperable, r.value[0]?.montoNeto]).toEqual([0, null, null])
  })

  test('LF line ends, a BOM, a missing final line break and a trailing blank line are read the same as CRLF', () => {
    const crlf = readRegistroComprasCsv('registro', `${header}\r\n${fila(base)}\r\n`)
    expect(crlf.ok).toBe(true)
    for (const text of [`${header}\n${fila(base)}\n`, `\uFEFF${header}\r\n${fila(base)}\r\n`, `${header}\r\n${fila(base)}`, `${header}\r\n${fila(base)}\r\n\r\n`]) {
      expect(readRegistroComprasCsv('registro', text)).toEqual(crlf)
    }
  })

  test('a quoted razón social keeps its separators, doubled quotes and line breaks; surrounding spaces go', () => {
    const text = `${header}\r\n${fila({ ...base, 'Razon Social': '"  Comercial ""El Sol""; Ltda.\r\nSucursal  "' })}\r\n`
    const r = readRegistroComprasCsv('registro', text)
    expect(r.ok && r.value[0]?.razonSocial).toBe('Comercial "El Sol"; Ltda.\r\nSucursal')
  })

  test('an other tax with code 0 and no amount is no tax; with a code and no amount it is an error', () => {
    const sinImpuesto = readRegistroComprasCsv('registro', `${header}\r\n${fila({ ...base, 'Codigo Otro Impuesto': '0', 'Valor Otro Impuesto': '0' })}\r\n`)
    expect(sinImpuesto.ok && sinImpuesto.value[0]?.otrosImpuestos).toEqual([])
    const tasa = readRegistroComprasCsv('registro', `${header}\r\n${fila({ ...base, 'Codigo Otro Impuesto': '271', 'Valor Otro Impuesto': '5000', 'Tasa Otro Impuesto': '2.967999999' })}\r\n`)
    expect(tasa.ok && tasa.value[0]?.otrosImpuestos).toEqual([{ codigo: 271, valor: 5000, tasa: 2.967999999 }])
    expect(readRegistroComprasCsv('registro', `${header}\r\n${fila({ ...base, 'Codigo Otro Impuesto': '271' })}\r\n`)).toEqual({
      ok: false, errors: [{ campo: 'fila.1.Valor Otro Impuesto', mensaje: 'Un otro impuesto con código debe traer su valor.' }],
    })
  })

  test('unreadable cells are collected, each named by row and column', () => {
    const text = `${header}\r\n${fila({ ...base, Folio: '', 'Monto Neto': '1.000' })}\r\n${fila({ ...base, 'RUT Proveedor': '76354771-1', 'Fecha Docto': '31/02/2019' })}\r\n`
    const r = readRegistroComprasCsv('registro', text)
    expect(r.ok ? [] : r.errors.map((e) => e.campo)).toEqual([
      'fila.1.Folio', 'fila.1.Monto Neto', 'fila.2.RUT Proveedor', 'fila.2.Fecha Docto',
    ])
  })

  test('a row with fewer or more cells than the header is an error, not a shifted read', () => {
    const r = readRegistroComprasCsv('registro', `${header}\r\n${fila(base)};extra\r\n`)
    expect(r).toEqual({ ok: false, errors: [{ campo: 'fila.1', mensaje: 'La fila trae 28 columnas y el encabezado 27.' }] })
  })

  test('an unclosed quote or text after a closing quote is an error', () => {
    expect(readRegistroComprasCsv('registro', `${header}\r\n1;33;"Del Giro\r\n`).ok).toBe(false)
    expect(readRegistroComprasCsv('registro', `${header}\r\n1;33;"Del" Giro;\r\n`).ok).toBe(false)
  })

  test('an empty file is an error: not even the header came', () => {
    expect(readRegistroVentasCsv('')).toEqual({ ok: false, errors: [{ campo: 'encabezado', mensaje: 'El archivo del SII está vacío: no trae ni el encabezado.' }] })
  })
})

describe('a header the SII changed', () => {
  const ventas = COLUMNAS_VENTAS.map(([h]) => h)

  test.each([
    ['a renamed column', ventas.map((h) => (h === 'Monto IVA' ? 'Monto IVA Debito' : h)), 'encabezado.13', '«Monto IVA Debito»'],
    ['a column added in the middle', [...ventas.slice(0, 5), 'Giro', ...ventas.slice(5)], 'encabezado.6', '«Giro»'],
    ['two more columns at the end (the research\'s 45)', [...ventas, 'Otra', 'Mas'], 'encabezado.44', '«Otra»'],
    ['a column missing at the end', ventas.slice(0, -1), 'encabezado.43', '«Tasa Otro Imp.»'],
  ])('%s: refused, naming the first differing column', (_name, header, campo, nombrada) => {
    const r = readRegistroVentasCsv(`${header.join(';')}\r\n`)
    expect(r.ok).toBe(false)
    if (r.ok) return
    expect(r.errors).toHaveLength(1)
    expect(r.errors[0]?.campo).toBe(campo)
    expect(r.errors[0]?.mensaje).toContain(nombrada)
    expect(r.errors[0]?.mensaje).toContain('el SII cambió el formato del archivo')
  })

  test('a section\'s file read as another section is refused (pendiente has no Fecha Acuse)', () => {
    const r = readRegistroComprasCsv('pendiente', writeRegistroComprasCsv('registro', [detalle()]))
    expect(r.ok ? null : r.errors[0]?.campo).toBe('encabezado.9')
  })

  test('spaces around a header are not a change', () => {
    const header = COLUMNAS_COMPRAS.reclamado.map(([h]) => ` ${h} `).join(';')
    expect(readRegistroComprasCsv('reclamado', `${header}\r\n`)).toEqual({ ok: true, value: [] })
  })
})
