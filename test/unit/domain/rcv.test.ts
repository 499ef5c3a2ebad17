// The RCV mirror's pure parts (domain/rcv.ts): the SII portal data service's answers read into records (rows shaped
// as the open implementations the research cites record them), malformed and hostile answers refused as errors and
// never thrown, both registers written in the SII's CSV layout and checked column by column against rows of cl-sii's
// fixtures of SII downloads, and two properties: a summary adds up its details, and a CSV reads back to its details.
// Sources and open questions: docs/decisions/rcv.md "El servicio de datos del RCV y sus archivos".
import { describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import {
  claveDocumentoRcv, COLUMNAS_COMPRAS, COLUMNAS_VENTAS, isPeriodoRcv, readDetalleRcv, readResumenRcv, resumenDeDetalles,
  SECCIONES_COMPRAS, writeRegistroComprasCsv, writeRegistroVentasCsv, type DetalleRcv,
} from '../../../src/domain/rcv'

/** A detail row of getDetalleCompra: a factura del giro of 2019, amounts of cl-sii's registro fixture. */
function filaCompra(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    detTipoDoc: 33, detRutDoc: 12345678, detDvDoc: '5', detRznSoc: 'Fake Company S.A. ', detNroDoc: 23084,
    detFchDoc: '21/06/2019', detFecRecepcion: '24/06/2019 09:55:53', detFecAcuse: null, detFecReclamado: null,
    descTipoTransaccion: 'Del Giro', detMntExe: 0, detMntNeto: 240169, detMntIVA: 45632, detMntIVANoRec: null,
    detMntTotal: 285801, detIVANoRetenido: 0, dcvEstadoContab: 'REGISTRO', ...extra,
  }
}

const ok = (data: unknown[]) => ({ data, respEstado: { codRespuesta: 0, msgeRespuesta: null } })

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

/** A plain `;` CSV reader with RFC 4180 quotes: what a spreadsheet or cl-sii's csv dialect would do with the file. */
function readCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let cell = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++ } else if (c === '"') quoted = false
      else cell += c
    } else if (c === '"') quoted = true
    else if (c === ';') { row.push(cell); cell = '' }
    else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++ }
    else cell += c
  }
  expect(cell).toBe('')  // every row ends with CRLF
  return rows
}

describe('reading the data service', () => {
  test('a getDetalleCompra answer becomes details with canonical RUT, ISO dates and empty amounts kept apart from 0', () => {
    const read = readDetalleRcv(ok([filaCompra(), filaCompra({
      detRutDoc: '76354771', detDvDoc: 'k', detNroDoc: '789456', detFecReclamado: '12/06/2019 09:47:23',
      detMntIVANoRec: 16663, detCodIVANoRec: 9, detTipoDocRef: 0, detFolioDocRef: null,
    })]))
    expect(read.ok).toBe(true)
    if (!read.ok) return
    const [a, b] = read.value
    expect(a).toEqual(detalle({ folio: 23084, razonSocial: 'Fake Company S.A.', montoNeto: 240169, montoIva: 45632, montoTotal: 285801, ivaNoRetenido: 0 }))
    expect(b?.rut).toBe('76354771-K')
    expect(b?.folio).toBe(789456)
    expect(b?.fechaReclamo).toBe('2019-06-12T09:47:23')
    expect(b?.montoIvaNoRecuperable).toBe(16663)
    expect(b?.codigoIvaNoRecuperable).toBe(9)
    expect(b?.referencia).toBeNull()
  })

  test('the other scrapers\' name for the IVA no recuperable code (detMntCodNoRec) is read too', () => {
    const read = readDetalleRcv(ok([filaCompra({ detMntIVANoRec: 100, detMntCodNoRec: 1 })]))
    expect(read.ok && read.value[0]?.codigoIvaNoRecuperable).toBe(1)
  })

  test('a sale with a reference carries it', () => {
    const read = readDetalleRcv(ok([filaCompra({ detTipoDoc: 61, detTipoDocRef: 33, detFolioDocRef: 506, detIVARetTotal: 0 })]))
    expect(read.ok && read.value[0]?.referencia).toEqual({ tipoDoc: 33, folio: 506 })
  })

  test('a getResumen answer becomes one row per type', () => {
    const read = readResumenRcv(ok([
      { rsmnTipoDocInteger: 33, rsmnTotDoc: 1, rsmnMntExe: 0, rsmnMntNeto: 1000, rsmnMntIVA: 190, rsmnMntIVANoRec: 0, rsmnIVAUsoComun: 0, rsmnMntTotal: 1190, dcvNombreTipoDoc: 'Factura Electrónica' },
      { rsmnTipoDocInteger: 61, rsmnTotDoc: 1, rsmnMntExe: 0, rsmnMntNeto: 100, rsmnMntIVA: 19, rsmnMntIVANoRec: null, rsmnMntTotal: 119 },
    ]))
    expect(read).toEqual({ ok: true, value: [
      { tipoDoc: 33, cantidad: 1, montoExento: 0, montoNeto: 1000, montoIva: 190, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 1190 },
      { tipoDoc: 61, cantidad: 1, montoExento: 0, montoNeto: 100, montoIva: 19, montoIvaNoRecuperable: 0, ivaUsoComun: 0, montoTotal: 119 },
    ] })
  })

  test('codRespuesta 3 (no data) is an empty period, not an error', () => {
    expect(readDetalleRcv({ data: null, respEstado: { codRespuesta: 3 } })).toEqual({ ok: true, value: [] })
    expect(readResumenRcv({ respEstado: { codRespuesta: 3 } })).toEqual({ ok: true, value: [] })
  })

  test.each([
    [1, 'error de negocio'], [2, 'error de aplicación'], [99, 'inválida'], [7, 'desconocido: 7'],
  ])('codRespuesta %d is refused with a Spanish reason', (codigo, texto) => {
    const read = readDetalleRcv({ data: [filaCompra()], respEstado: { codRespuesta: codigo, msgeRespuesta: 'El token no es valido' } })
    expect(read.ok).toBe(false)
    if (read.ok) return
    expect(read.errors[0]?.campo).toBe('respEstado.codRespuesta')
    expect(read.errors[0]?.mensaje).toContain(texto)
    expect(read.errors[0]?.mensaje).toContain('El token no es valido')
  })

  test.each([
    ['not an object', 'hola', 'respuesta'],
    ['no respEstado', { data: [] }, 'respEstado.codRespuesta'],
    ['a code as text', { data: [], respEstado: { codRespuesta: '0' } }, 'respEstado.codRespuesta'],
    ['data not a list', { data: { a: 1 }, respEstado: { codRespuesta: 0 } }, 'data'],
    ['a row not an object', ok([42]), 'data.0'],
    ['a folio with decimals', ok([filaCompra({ detNroDoc: 1.5 })]), 'data.0.detNroDoc'],
    ['a folio missing', ok([filaCompra({ detNroDoc: undefined })]), 'data.0.detNroDoc'],
    ['a wrong check digit', ok([filaCompra({ detDvDoc: '4' })]), 'data.0.detRutDoc'],
    ['an impossible date', ok([filaCompra({ detFchDoc: '31/02/2019' })]), 'data.0.detFchDoc'],
    ['an ISO date', ok([filaCompra({ detFchDoc: '2019-06-21' })]), 'data.0.detFchDoc'],
    ['a reception without time', ok([filaCompra({ detFecRecepcion: '24/06/2019' })]), 'data.0.detFecRecepcion'],
    ['an amount as words', ok([filaCompra({ detMntNeto: 'mil' })]), 'data.0.detMntNeto'],
    ['an amount beyond safe integers', ok([filaCompra({ detMntTotal: 2 ** 60 })]), 'data.0.detMntTotal'],
    ['a razón social as a number', ok([filaCompra({ detRznSoc: 7 })]), 'data.0.detRznSoc'],
  ])('%s → an error naming the field, never a throw', (_name, answer, campo) => {
    const read = readDetalleRcv(answer)
    expect(read.ok).toBe(false)
    if (!read.ok) expect(read.errors.map((e) => e.campo)).toContain(campo)
  })

  test('every error of every row is reported at once', () => {
    const read = readDetalleRcv(ok([filaCompra({ detNroDoc: 'x' }), filaCompra({ detMntTotal: null, detFchDoc: '' })]))
    expect(read.ok ? [] : read.errors.map((e) => e.campo)).toEqual(['data.0.detNroDoc', 'data.1.detFchDoc', 'data.1.detMntTotal'])
  })

  test('a hostile __proto__ key does not reach a field', () => {
    const hostile = JSON.parse('{"respEstado":{"codRespuesta":0},"data":[{"__proto__":{"detMntTotal":5}}]}')
    const read = readDetalleRcv(hostile)
    expect(read.ok).toBe(false)
  })

  test('any JSON value is answered without throwing', () => {
    fc.assert(fc.property(fc.jsonValue(), (v) => {
      const d = readDetalleRcv(v)
      const r = readResumenRcv(v)
      const wrapped = readDetalleRcv({ data: [v], respEstado: { codRespuesta: 0 } })
      return typeof d.ok === 'boolean' && typeof r.ok === 'boolean' && typeof wrapped.ok === 'boolean'
    }), { numRuns: 300 })
  })
})

describe('the SII CSV layouts', () => {
  test('registro: the 27 columns of the SII file, a row of cl-sii\'s fixture cell by cell', () => {
    const csv = writeRegistroComprasCsv('registro', [detalle({
      folio: 23084, razonSocial: 'Fake Company S.A.', montoNeto: 240169, montoIva: 45632, montoTotal: 285801, ivaNoRetenido: 0,
    })])
    const [header, row] = readCsv(csv)
    expect(header?.join(';')).toBe('Nro;Tipo Doc;Tipo Compra;RUT Proveedor;Razon Social;Folio;Fecha Docto;Fecha Recepcion;Fecha Acuse;'
      + 'Monto Exento;Monto Neto;Monto IVA Recuperable;Monto Iva No Recuperable;Codigo IVA No Rec.;Monto Total;'
      + 'Monto Neto Activo Fijo;IVA Activo Fijo;IVA uso Comun;Impto. Sin Derecho a Credito;IVA No Retenido;Tabacos Puros;'
      + 'Tabacos Cigarrillos;Tabacos Elaborados;NCE o NDE sobre Fact. de Compra;Codigo Otro Impuesto;Valor Otro Impuesto;Tasa Otro Impuesto')
    const cells = Object.fromEntries((header ?? []).map((h, i) => [h, row?.[i]]))
    expect(cells).toMatchObject({
      'Nro': '1', 'Tipo Doc': '33', 'Tipo Compra': 'Del Giro', 'RUT Proveedor': '12345678-5', 'Razon Social': 'Fake Company S.A.',
      'Folio': '23084', 'Fecha Docto': '21/06/2019', 'Fecha Recepcion': '24/06/2019 09:55:53', 'Fecha Acuse': '',
      'Monto Exento': '0', 'Monto Neto': '240169', 'Monto IVA Recuperable': '45632', 'Monto Iva No Recuperable': '',
      'Codigo IVA No Rec.': '', 'Monto Total': '285801', 'IVA No Retenido': '0', 'Codigo Otro Impuesto': '',
    })
    expect(row).toHaveLength(27)
    expect(csv.endsWith('\r\n')).toBe(true)
  })

  test('pendiente has no Fecha Acuse, reclamado has Fecha Reclamo in its place, no incluir lacks the tabacos', () => {
    const headers = (s: (typeof SECCIONES_COMPRAS)[number]) => COLUMNAS_COMPRAS[s].map(([h]) => h)
    expect(headers('pendiente')).toHaveLength(23)
    expect(headers('pendiente')).not.toContain('Fecha Acuse')
    expect(headers('reclamado')[8]).toBe('Fecha Reclamo')
    expect(headers('reclamado')).toHaveLength(24)
    expect(headers('no_incluir')).toEqual(headers('registro').filter((h) => !h.startsWith('Tabacos')))
  })

  test('reclamado: the claim time, the other tax and its rate as the SII writes them', () => {
    const csv = writeRegistroComprasCsv('reclamado', [detalle({
      folio: 1000055, fechaReclamo: '2019-06-12T09:47:23', otrosImpuestos: [{ codigo: 23, valor: 12000, tasa: 2.967999999 }],
    })])
    const [header, row] = readCsv(csv)
    const cell = (h: string) => row?.[header?.indexOf(h) ?? -1]
    expect(cell('Fecha Reclamo')).toBe('12/06/2019 09:47:23')
    expect([cell('Codigo Otro Impuesto'), cell('Valor Otro Impuesto'), cell('Tasa Otro Impuesto')]).toEqual(['23', '12000', '2.967999999'])
  })

  test('ventas: the 43 columns of the SII file in order, with the reference of a note', () => {
    const csv = writeRegistroVentasCsv([detalle({ tipoDoc: 61, folio: 70, referencia: { tipoDoc: 33, folio: 506 }, ivaRetenidoTotal: 0 })])
    const [header, row] = readCsv(csv)
    expect(header).toHaveLength(43)
    // The header line of cl-sii's RCV-venta-rz_leading_trailing_whitespace.csv, an SII download.
    expect(header?.join(';')).toBe('Nro;Tipo Doc;Tipo Venta;Rut cliente;Razon Social;Folio;Fecha Docto;Fecha Recepcion;'
      + 'Fecha Acuse Recibo;Fecha Reclamo;Monto Exento;Monto Neto;Monto IVA;Monto total;IVA Retenido Total;IVA Retenido Parcial;'
      + 'IVA no retenido;IVA propio;IVA Terceros;RUT Emisor Liquid. Factura;Neto Comision Liquid. Factura;Exento Comision Liquid. Factura;IVA Comision Liquid. Factura;IVA fuera de plazo;'
      + 'Tipo Docto. Referencia;Folio Docto. Referencia;Num. Ident. Receptor Extranjero;Nacionalidad Receptor Extranjero;Credito empresa constructora;Impto. Zona Franca (Ley 18211);Garantia Dep. Envases;Indicador Venta sin Costo;'
      + 'Indicador Servicio Periodico;Monto No facturable;Total Monto Periodo;Venta Pasajes Transporte Nacional;Venta Pasajes Transporte Internacional;Numero Interno;Codigo Sucursal;NCE o NDE sobre Fact. de Compra;'
      + 'Codigo Otro Imp.;Valor Otro Imp.;Tasa Otro Imp.')
    const cell = (h: string) => row?.[header?.indexOf(h) ?? -1]
    expect([cell('Tipo Doc'), cell('Rut cliente'), cell('Monto IVA'), cell('Monto total')]).toEqual(['61', '12345678-5', '190', '1190'])
    expect([cell('Tipo Docto. Referencia'), cell('Folio Docto. Referencia'), cell('IVA Retenido Total')]).toEqual(['33', '506', '0'])
    expect(COLUMNAS_VENTAS.map(([h]) => h)).toEqual(header ?? [])
  })

  test('a razón social with a separator or quotes is quoted, not cut', () => {
    const csv = writeRegistroComprasCsv('registro', [detalle({ razonSocial: 'Comercial "El Sol"; Ltda.' })])
    expect(readCsv(csv)[1]?.[4]).toBe('Comercial "El Sol"; Ltda.')
  })
})

// Generators: details as the SII could hold them (amounts of a CLP document, sometimes left empty by the SII).
const montoRcv = fc.option(fc.integer({ min: 0, max: 10_000_000_000 }), { nil: null })
const isoDate = fc.date({ min: new Date('2017-08-01T00:00:00Z'), max: new Date('2030-12-31T23:59:59Z'), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 19))
const detalleArb: fc.Arbitrary<DetalleRcv> = fc.record({
  tipoDoc: fc.constantFrom(33, 34, 46, 56, 61), rut: fc.constantFrom('12345678-5', '76354771-K', '60803000-K'),
  razonSocial: fc.string({ maxLength: 40 }).map((s) => s.trim()), folio: fc.integer({ min: 1, max: 99_999_999 }),
  fecha: isoDate, recepcion: fc.option(isoDate, { nil: null }), acuse: fc.option(isoDate, { nil: null }),
  montoExento: montoRcv, montoNeto: montoRcv, montoIva: montoRcv, montoIvaNoRecuperable: montoRcv, ivaUsoComun: montoRcv,
  montoTotal: fc.integer({ min: 0, max: 10_000_000_000 }),
}).map(({ fecha, recepcion, acuse, ...d }) => detalle({ ...d, fechaEmision: fecha.slice(0, 10), fechaRecepcion: recepcion, fechaAcuse: acuse }))

describe('properties', () => {
  test('a summary\'s totals equal the sums of its details, type by type', () => {
    fc.assert(fc.property(fc.array(detalleArb, { maxLength: 40 }), (detalles) => {
      const resumen = resumenDeDetalles(detalles)
      expect(resumen.reduce((n, r) => n + r.cantidad, 0)).toBe(detalles.length)
      for (const r of resumen) {
        const deTipo = detalles.filter((d) => d.tipoDoc === r.tipoDoc)
        const sum = (f: (d: DetalleRcv) => number | null) => deTipo.reduce((n, d) => n + (f(d) ?? 0), 0)
        expect([r.cantidad, r.montoExento, r.montoNeto, r.montoIva, r.montoIvaNoRecuperable, r.ivaUsoComun, r.montoTotal]).toEqual([
          deTipo.length, sum((d) => d.montoExento), sum((d) => d.montoNeto), sum((d) => d.montoIva),
          sum((d) => d.montoIvaNoRecuperable), sum((d) => d.ivaUsoComun), sum((d) => d.montoTotal),
        ])
      }
    }), { numRuns: 200 })
  })

  test('a Registro de Compras CSV reads back to its details', () => {
    fc.assert(fc.property(fc.array(detalleArb, { maxLength: 20 }), (detalles) => {
      const [header, ...rows] = readCsv(writeRegistroComprasCsv('registro', detalles))
      const col = (h: string) => (header ?? []).indexOf(h)
      const back = (s: string | undefined) => (s === '' || s === undefined ? null : Number(s))
      const isoBack = (s: string | undefined) => (s ? `${s.slice(6, 10)}-${s.slice(3, 5)}-${s.slice(0, 2)}${s.length > 10 ? `T${s.slice(11)}` : ''}` : null)
      expect(rows).toHaveLength(detalles.length)
      rows.forEach((r, i) => {
        const d = detalles[i] as DetalleRcv
        expect({
          tipoDoc: back(r[col('Tipo Doc')]), rut: r[col('RUT Proveedor')], razonSocial: r[col('Razon Social')], folio: back(r[col('Folio')]),
          fechaEmision: isoBack(r[col('Fecha Docto')]), fechaRecepcion: isoBack(r[col('Fecha Recepcion')]), fechaAcuse: isoBack(r[col('Fecha Acuse')]),
          montoExento: back(r[col('Monto Exento')]), montoNeto: back(r[col('Monto Neto')]), montoIva: back(r[col('Monto IVA Recuperable')]),
          montoIvaNoRecuperable: back(r[col('Monto Iva No Recuperable')]), ivaUsoComun: back(r[col('IVA uso Comun')]), montoTotal: back(r[col('Monto Total')]),
        }).toEqual({
          tipoDoc: d.tipoDoc, rut: d.rut, razonSocial: d.razonSocial, folio: d.folio, fechaEmision: d.fechaEmision,
          fechaRecepcion: d.fechaRecepcion, fechaAcuse: d.fechaAcuse, montoExento: d.montoExento, montoNeto: d.montoNeto,
          montoIva: d.montoIva, montoIvaNoRecuperable: d.montoIvaNoRecuperable, ivaUsoComun: d.ivaUsoComun, montoTotal: d.montoTotal,
        })
      })
    }), { numRuns: 150 })
  })
})

test('the match key and the period', () => {
  expect(claveDocumentoRcv({ tipoDoc: 33, rut: '76354771-K', folio: 42 })).toBe('33:76354771-K:42')
  expect([isPeriodoRcv('202611'), isPeriodoRcv('202613'), isPeriodoRcv('201612'), isPeriodoRcv('2026-11')]).toEqual([true, false, false, false])
})
