// Every validation rule of an issuance request fails with its exact dot path and DESIGN §5 detail code: the rules
// across fields (domain/emision-rules.ts) and the shape (http/schemas/dte.ts), both through validateEmision.
import { describe, expect, test } from 'bun:test'
import type { EmitirDte, TipoDte } from '../../../src/domain/emision'
import { RUT_CONSUMIDOR_ANONIMO, checkEmision, checkSalvagedEmision } from '../../../src/domain/emision-rules'
import { validateEmision } from '../../../src/contracts/dte'

const TODAY = '2025-06-30'

const receptor = () => ({
  rut: '76.555.835-2',
  razon_social: 'Comercializadora Ñuñoa Ltda.',
  giro: 'Ferretería',
  direccion: 'Av. Irarrázaval 2345',
  comuna: 'Ñuñoa',
  ciudad: 'Santiago',
})
const factura = (): EmitirDte => ({
  tipo_dte: 33,
  fecha_emision: '2025-06-10',
  receptor: receptor(),
  detalle: [{ nombre: 'Taladro percutor', cantidad: 2, precio: 45990 }],
})
const exenta = (): EmitirDte => ({ ...factura(), tipo_dte: 34 })
const boleta = (): EmitirDte => ({ ...factura(), tipo_dte: 39, receptor: { rut: '66666666-6', razon_social: 'Consumidor final' } })
const notaCredito = (codigo_ref: 1 | 2 | 3 = 3): EmitirDte => ({
  ...factura(),
  tipo_dte: 61,
  referencias: [{ tipo_doc_ref: 33, folio_ref: 1601, fecha_ref: '2025-06-01', codigo_ref, razon_ref: 'Devolución' }],
})
const correccionTexto = (): EmitirDte => ({
  ...notaCredito(2),
  detalle: [{ nombre: 'Corrige giro', dsc_item: 'Donde dice A debe decir B' }],
})
const liquidacion = (): EmitirDte => ({
  ...factura(),
  tipo_dte: 43,
  detalle: [{ nombre: 'Venta por cuenta de terceros', tipo_doc_liq: '33', cantidad: 1, precio: 100000 }],
  comisiones: [{ tipo_movim: 'C', glosa: 'Comisión 8 %', val_com_neto: 8000, val_com_exe: 0 }],
})
const compra = (): EmitirDte => ({ ...factura(), tipo_dte: 46, detalle: [{ nombre: 'Chatarra', cantidad: 10, precio: 1000, cod_imp_adic: 15 }] })
const guia = (): EmitirDte => ({ ...factura(), tipo_dte: 52, ind_traslado: 1 })
const exportacion = (): EmitirDte => ({
  ...factura(),
  tipo_dte: 110,
  receptor: { rut: '55555555-5', razon_social: 'Andes Importers LLC', direccion: '1200 Brickell Ave', ciudad: 'Miami' },
  export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 950.37 },
})
const notaExportacion = (tipo_dte: 111 | 112): EmitirDte => ({
  ...exportacion(),
  tipo_dte,
  referencias: [{ tipo_doc_ref: 110, folio_ref: 210, fecha_ref: '2025-06-01', codigo_ref: 3, razon_ref: 'Ajuste' }],
})

type Case = [field: string, code: string, base: () => EmitirDte, spoil: (b: EmitirDte) => void]

const cases: Case[] = [
  // header
  ['receptor.rut', 'INVALID_RUT', factura, (b) => { b.receptor.rut = '11111111-2' }],
  ['receptor.rut', 'INVALID_RUT', factura, (b) => { b.receptor.rut = 'no es un rut' }],
  ['receptor.giro', 'REQUIRED', liquidacion, (b) => { delete b.receptor.giro }],
  ['receptor.direccion', 'REQUIRED', liquidacion, (b) => { b.receptor.direccion = '  ' }],
  ['receptor.comuna', 'REQUIRED', liquidacion, (b) => { delete b.receptor.comuna }],
  ['fecha_emision', 'OUT_OF_RANGE', factura, (b) => { b.fecha_emision = '2025-07-01' }],
  ['fecha_emision', 'OUT_OF_RANGE', factura, (b) => { b.fecha_emision = '1999-12-31' }],
  ['fecha_emision', 'INVALID_FORMAT', factura, (b) => { b.fecha_emision = '2025-02-30' }],
  ['metadata', 'TOO_LONG', factura, (b) => { b.metadata = { nota: 'x'.repeat(16 * 1024) } }],
  // text outside ISO-8859-1 after transliteration (DESIGN §12)
  ['receptor.razon_social', 'INVALID_VALUE', factura, (b) => { b.receptor.razon_social = 'Café € Ltda.' }],
  ['receptor.giro', 'INVALID_VALUE', factura, (b) => { b.receptor.giro = 'Importación 日本' }],
  ['detalle.0.nombre', 'INVALID_VALUE', factura, (b) => { b.detalle[0]!.nombre = 'Taladro 👍' }],
  ['detalle.0.dsc_item', 'INVALID_VALUE', factura, (b) => { b.detalle[0]!.dsc_item = 'Ω ohmios' }],
  ['detalle.0.unidad', 'INVALID_VALUE', factura, (b) => { b.detalle[0]!.unidad = '㎏' }],
  ['referencias.0.razon_ref', 'INVALID_VALUE', notaCredito, (b) => { b.referencias![0]!.razon_ref = 'Devolución ✓' }],
  ['descuentos_globales.0.glosa_dr', 'INVALID_VALUE', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 5, glosa_dr: '5 % → cliente' }] }],
  ['comisiones.0.glosa', 'INVALID_VALUE', liquidacion, (b) => { b.comisiones![0]!.glosa = 'Comisión ≈ 8 %' }],
  ['export_data.marcas', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.marcas = 'ANDES • MIA' }],
  // indicators per type (docs/sii-protocol.md §2.2)
  ['ind_traslado', 'REQUIRED', guia, (b) => { delete b.ind_traslado }],
  ['ind_traslado', 'NOT_ALLOWED', factura, (b) => { b.ind_traslado = 1 }],
  ['tipo_despacho', 'NOT_ALLOWED', notaCredito, (b) => { b.tipo_despacho = 1 }],
  ['tipo_despacho', 'NOT_ALLOWED', liquidacion, (b) => { b.tipo_despacho = 2 }],
  ['tipo_despacho', 'NOT_ALLOWED', boleta, (b) => { b.tipo_despacho = 2 }],
  ['ind_servicio', 'NOT_ALLOWED', guia, (b) => { b.ind_servicio = 3 }],
  ['ind_servicio', 'INVALID_VALUE', factura, (b) => { b.ind_servicio = 4 }],
  ['ind_servicio', 'INVALID_VALUE', exportacion, (b) => { b.ind_servicio = 1 }],
  ['ind_servicio', 'INVALID_VALUE', boleta, (b) => { b.ind_servicio = 5 }],
  ['montos_brutos', 'NOT_ALLOWED', exenta, (b) => { b.montos_brutos = true }],
  ['montos_brutos', 'NOT_ALLOWED', boleta, (b) => { b.montos_brutos = true }],
  ['montos_brutos', 'NOT_ALLOWED', compra, (b) => { b.montos_brutos = true }],
  ['montos_brutos', 'NOT_ALLOWED', factura, (b) => { b.montos_brutos = true; b.detalle[0]!.cod_imp_adic = 27 }],
  // lines
  ['detalle.0.cantidad', 'INVALID_FORMAT', factura, (b) => { b.detalle[0]!.cantidad = 1.0000001 }],
  ['detalle.0.cantidad', 'REQUIRED', factura, (b) => { delete b.detalle[0]!.cantidad }],
  ['detalle.0.precio', 'REQUIRED', factura, (b) => { delete b.detalle[0]!.precio }],
  ['detalle.0.precio', 'INCONSISTENT', correccionTexto, (b) => { b.detalle[0]!.precio = 1000 }],
  ['detalle.0.monto_item', 'INCONSISTENT', correccionTexto, (b) => { b.detalle[0]!.monto_item = 1000 }],
  ['detalle.0.monto_item', 'OUT_OF_RANGE', factura, (b) => { b.detalle[0] = { nombre: 'Ajuste', monto_item: -500 } }],
  // Decimals in the document's currency (DESIGN §12 "Exports"): none in pesos, up to 4 in a foreign currency.
  ['detalle.0.precio', 'INVALID_TYPE', factura, (b) => { b.detalle[0]!.precio = 12.5 }],
  ['detalle.0.precio', 'INVALID_TYPE', boleta, (b) => { b.detalle[0]!.precio = 990.9 }],
  ['detalle.0.precio', 'INVALID_TYPE', exportacion, (b) => { b.export_data = { tpo_moneda: 'PESO CL' }; b.detalle[0]!.precio = 12.5 }],
  ['detalle.0.precio', 'INVALID_FORMAT', exportacion, (b) => { b.detalle[0]!.precio = 12.12345 }],
  ['detalle.0.monto_item', 'INVALID_TYPE', factura, (b) => { b.detalle[0] = { nombre: 'Ajuste', monto_item: 100.5 } }],
  ['detalle.0.monto_item', 'INVALID_FORMAT', () => notaExportacion(112), (b) => { b.detalle[0] = { nombre: 'Ajuste', monto_item: 0.00001 } }],
  ['detalle.0.descuento_pct', 'NOT_ALLOWED', liquidacion, (b) => { b.detalle[0]!.descuento_pct = 5 }],
  ['detalle.0.recargo_pct', 'NOT_ALLOWED', liquidacion, (b) => { b.detalle[0]!.recargo_pct = 5 }],
  ['detalle.0.descuento_pct', 'NOT_ALLOWED', factura, (b) => { b.detalle[0] = { nombre: 'Global', monto_item: 1000, descuento_pct: 10 } }],
  ['detalle.0.descuento_pct', 'INVALID_FORMAT', factura, (b) => { b.detalle[0]!.descuento_pct = 12.345 }],
  ['detalle.0.recargo_pct', 'INVALID_FORMAT', factura, (b) => { b.detalle[0]!.recargo_pct = 0.001 }],
  ['detalle.0.tipo_doc_liq', 'REQUIRED', liquidacion, (b) => { delete b.detalle[0]!.tipo_doc_liq }],
  ['detalle.0.tipo_doc_liq', 'NOT_ALLOWED', factura, (b) => { b.detalle[0]!.tipo_doc_liq = '33' }],
  ['detalle.0.cod_imp_adic', 'NOT_ALLOWED', boleta, (b) => { b.detalle[0]!.cod_imp_adic = 27 }],
  ['detalle.0.cod_imp_adic', 'NOT_ALLOWED', exportacion, (b) => { b.detalle[0]!.cod_imp_adic = 27 }],
  ['detalle.0.cod_imp_adic', 'INVALID_VALUE', factura, (b) => { b.detalle[0]!.cod_imp_adic = 16 }],
  ['detalle.1.cod_imp_adic', 'INCONSISTENT', factura, (b) => { b.detalle.push({ nombre: 'Exento', cantidad: 1, precio: 10, ind_exe: 1, cod_imp_adic: 27 }) }],
  ['detalle.0.cod_imp_adic', 'NOT_ALLOWED', factura, (b) => { b.detalle[0]!.cod_imp_adic = 15 }],
  ['detalle', 'INCONSISTENT', factura, (b) => { b.detalle[0]!.ind_exe = 1 }],
  ['detalle', 'INCONSISTENT', boleta, (b) => { b.detalle[0]!.ind_exe = 1 }],
  // references (spec 2.5, docs/sii-protocol.md §2.2, DESIGN §12 SET)
  ['referencias', 'REQUIRED', notaCredito, (b) => { delete b.referencias }],
  ['referencias', 'REQUIRED', () => ({ ...notaCredito(), tipo_dte: 56 }), (b) => { b.referencias = [] }],
  ['referencias', 'REQUIRED', () => notaExportacion(111), (b) => { delete b.referencias }],
  ['referencias', 'REQUIRED', () => notaExportacion(112), (b) => { delete b.referencias }],
  ['referencias', 'REQUIRED', notaCredito, (b) => { b.referencias = [{ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: '2025-06-01', razon_ref: 'CASO 1' }] }],
  ['referencias.0.codigo_ref', 'REQUIRED', notaCredito, (b) => { delete b.referencias![0]!.codigo_ref }],
  ['referencias.1.codigo_ref', 'INCONSISTENT', () => notaCredito(1), (b) => { b.referencias!.push({ tipo_doc_ref: 33, folio_ref: 1602, fecha_ref: '2025-06-01', codigo_ref: 3, razon_ref: 'Otra' }) }],
  ['referencias.0.folio_ref', 'INVALID_VALUE', factura, (b) => { b.referencias = [{ tipo_doc_ref: 'SET', folio_ref: 5, fecha_ref: '2025-06-01', razon_ref: 'CASO 4267228-1' }] }],
  ['referencias.0.razon_ref', 'INVALID_FORMAT', factura, (b) => { b.referencias = [{ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: '2025-06-01', razon_ref: 'Set de pruebas' }] }],
  ['referencias.0.folio_ref', 'OUT_OF_RANGE', notaCredito, (b) => { b.referencias![0]!.folio_ref = 0 }],
  ['referencias.0.fecha_ref', 'INVALID_FORMAT', notaCredito, (b) => { b.referencias![0]!.fecha_ref = '2025-13-01' }],
  ['referencias.0.fecha_ref', 'OUT_OF_RANGE', notaCredito, (b) => { b.referencias![0]!.fecha_ref = '1999-01-01' }],
  // commissions
  ['comisiones', 'REQUIRED', liquidacion, (b) => { delete b.comisiones }],
  ['comisiones', 'NOT_ALLOWED', factura, (b) => { b.comisiones = [{ tipo_movim: 'C', glosa: 'x', val_com_neto: 1, val_com_exe: 0 }] }],
  ['comisiones.0.tasa_comision', 'INVALID_FORMAT', liquidacion, (b) => { b.comisiones![0]!.tasa_comision = 8.125 }],
  ['comisiones.0.val_com_neto', 'OUT_OF_RANGE', compra, (b) => { b.comisiones = [{ tipo_movim: 'O', glosa: 'x', val_com_neto: -1, val_com_exe: 0 }] }],
  // additional taxes and retentions (docs/sii-protocol.md §2.4, §2.5)
  ['impuestos_retenciones', 'NOT_ALLOWED', exportacion, (b) => { b.impuestos_retenciones = [{ tipo_imp: 27 }] }],
  ['impuestos_retenciones', 'NOT_ALLOWED', exenta, (b) => { b.impuestos_retenciones = [{ tipo_imp: 27 }] }],
  ['impuestos_retenciones.0.tipo_imp', 'INVALID_VALUE', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 40, monto_imp: 10 }] }],
  ['impuestos_retenciones.1.tipo_imp', 'INCONSISTENT', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 27 }, { tipo_imp: 27 }] }],
  ['impuestos_retenciones.0.tipo_imp', 'NOT_ALLOWED', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 15 }] }],
  ['impuestos_retenciones.0.tipo_imp', 'NOT_ALLOWED', notaCredito, (b) => { b.impuestos_retenciones = [{ tipo_imp: 15 }] }],
  ['impuestos_retenciones.0.tasa_imp', 'INVALID_FORMAT', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 27, tasa_imp: 10.555 }] }],
  ['impuestos_retenciones.0.monto_imp', 'REQUIRED', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 28 }] }],
  ['impuestos_retenciones.0.monto_imp', 'OUT_OF_RANGE', factura, (b) => { b.impuestos_retenciones = [{ tipo_imp: 28, monto_imp: -5 }] }],
  ['impuestos_retenciones', 'REQUIRED', factura, (b) => { b.detalle[0]!.cod_imp_adic = 35 }],
  ['impuestos_retenciones', 'INCONSISTENT', compra, (b) => { b.impuestos_retenciones = [{ tipo_imp: 15, monto_imp: 999999 }] }],
  // global discounts and surcharges (spec 2.10, docs/sii-protocol.md §2.4)
  ['descuentos_globales', 'NOT_ALLOWED', liquidacion, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 5 }] }],
  ['descuentos_globales', 'NOT_ALLOWED', correccionTexto, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 5 }] }],
  ['descuentos_globales.0.valor_dr', 'INVALID_FORMAT', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 5.125 }] }],
  ['descuentos_globales.0.valor_dr', 'OUT_OF_RANGE', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 120 }] }],
  ['descuentos_globales.0.valor_dr', 'INVALID_FORMAT', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'R', tpo_valor: '$', valor_dr: 10.5 }] }],
  ['descuentos_globales.0.ind_exe_dr', 'NOT_ALLOWED', exportacion, (b) => { b.descuentos_globales = [{ tpo_mov: 'R', tpo_valor: '$', valor_dr: 10, ind_exe_dr: 2 }] }],
  ['descuentos_globales.0.tpo_valor', 'INCONSISTENT', factura, (b) => { b.detalle[0]!.cod_imp_adic = 27; b.detalle.push({ nombre: 'Sin impuesto', cantidad: 1, precio: 1000 }); b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '$', valor_dr: 100 }] }],
  ['descuentos_globales.1.valor_dr', 'INCONSISTENT', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 50 }, { tpo_mov: 'D', tpo_valor: '$', valor_dr: 50000 }] }],
  ['descuentos_globales.0.valor_dr', 'INCONSISTENT', factura, (b) => { b.descuentos_globales = [{ tpo_mov: 'D', tpo_valor: '$', valor_dr: 10, ind_exe_dr: 1 }] }],
  ['detalle.0.cantidad', 'OUT_OF_RANGE', factura, (b) => { b.detalle[0] = { nombre: 'Enorme', cantidad: 999999999999, precio: 999999999999 } }],
  ['detalle', 'OUT_OF_RANGE', factura, (b) => { b.detalle = [1, 2].map(() => ({ nombre: 'Grande', cantidad: 1000, precio: 500_000_000_000 })) }],
  // exports (spec 2.11, DESIGN §12)
  ['export_data', 'REQUIRED', exportacion, (b) => { delete b.export_data }],
  ['export_data', 'NOT_ALLOWED', factura, (b) => { b.export_data = { tpo_moneda: 'DOLAR USA', tpo_cambio: 900 } }],
  ['export_data.tipo_doc_id', 'NOT_ALLOWED', exportacion, (b) => { b.export_data!.tipo_doc_id = 1 }],
  ['export_data.tipo_doc_id', 'NOT_ALLOWED', () => notaExportacion(112), (b) => { b.export_data!.tipo_doc_id = 2 }],
  ['export_data.tpo_cambio', 'REQUIRED', exportacion, (b) => { delete b.export_data!.tpo_cambio }],
  ['export_data.tpo_cambio', 'INVALID_FORMAT', exportacion, (b) => { b.export_data!.tpo_cambio = 950.12345 }],
  ['export_data.peso_bruto', 'INVALID_FORMAT', exportacion, (b) => { b.export_data!.peso_bruto = 10.125 }],
  ['export_data.mnt_flete', 'INVALID_FORMAT', exportacion, (b) => { b.export_data!.mnt_flete = 10.12345 }],
  ['export_data.clausula_venta', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.clausula_venta = 'XYZ' }],
  ['export_data.pais_recep', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.pais_recep = 'Narnia' }],
  ['export_data.pais_dest', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.pais_dest = '1234' }],
  ['export_data.nacionalidad', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.nacionalidad = 'Marte' }],
  ['export_data.tipo_bulto', 'INVALID_VALUE', exportacion, (b) => { b.export_data!.tipo_bulto = 'CAJITA' }],
]

describe('checkEmision: each broken rule gives exactly its field and detail code', () => {
  test.each(cases)('%s %s', (field, code, base, spoil) => {
    const request = base()
    expect(checkEmision(request, TODAY)).toEqual([])
    spoil(request)
    const errors = checkEmision(request, TODAY)
    expect(errors.map((e) => [e.field, e.code])).toEqual([[field, code]])
    expect(errors[0]!.message.length).toBeGreaterThan(0)
  })
})

describe('checkEmision: what is allowed', () => {
  test.each<[string, () => EmitirDte]>([
    ['a factura with typographic quotes, dashes and ellipsis (transliterated)', () => ({ ...factura(), detalle: [{ nombre: '“Taladro” — 750 W…', cantidad: 1, precio: 10 }] })],
    ['metadata with any character (never written to the XML)', () => ({ ...factura(), metadata: { nota: '€ 👍 日本', n: 1 } })],
    ['a fecha_emision equal to today', () => ({ ...factura(), fecha_emision: TODAY })],
    ['no fecha_emision at all', () => { const b = factura(); delete b.fecha_emision; return b }],
    ['retention 15 on a credit note of a 46', () => ({ ...notaCredito(), referencias: [{ tipo_doc_ref: 46, folio_ref: 9, fecha_ref: '2025-06-01', codigo_ref: 3, razon_ref: 'x' }], detalle: [{ nombre: 'x', cantidad: 1, precio: 1000, cod_imp_adic: 15 }] })],
    ['commissions on a 46', () => ({ ...compra(), comisiones: [{ tipo_movim: 'C', glosa: 'Comisión', val_com_neto: 100, val_com_exe: 0 }] })],
    ['a negative liquidación line', () => ({ ...liquidacion(), detalle: [...liquidacion().detalle, { nombre: 'Anticipo', tipo_doc_liq: '99', monto_item: -50000 }] })],
    ['an export in PESO CL without tpo_cambio', () => ({ ...exportacion(), export_data: { tpo_moneda: 'PESO CL' } })],
    ['a price with 4 decimals in DOLAR USA (USD 12.50, 0.1234)', () => ({ ...exportacion(), detalle: [{ nombre: 'Horas', cantidad: 100, precio: 12.5 }, { nombre: 'Tornillo', cantidad: 7, precio: 0.1234 }] })],
    ['a monto_item with 4 decimals on a 111 in EURO', () => ({ ...notaExportacion(111), export_data: { tpo_moneda: 'EURO', tpo_cambio: 1021.17 }, detalle: [{ nombre: 'Flete', monto_item: 10.0505 }] })],
    ['a whole price written 12.0 in pesos', () => ({ ...factura(), detalle: [{ nombre: 'Martillo', cantidad: 1, precio: 12.0 }] })],
    ['Customs labels instead of codes', () => ({ ...exportacion(), export_data: { tpo_moneda: 'EURO', tpo_cambio: 1000, clausula_venta: 'fob', pais_recep: 'Japón', pais_dest: 'España', nacionalidad: '505', tipo_bulto: 'Pallets' } })],
    ['a SET reference next to the corrected document', () => ({ ...notaCredito(), referencias: [{ tipo_doc_ref: 'SET', folio_ref: 0, fecha_ref: '2025-06-01', razon_ref: 'CASO 4267228-2' }, ...notaCredito().referencias!] })],
    ['an annulment with an accompanying reference without codigo_ref (a DUS, an order)', () => ({ ...notaCredito(1), referencias: [...notaCredito(1).referencias!, { tipo_doc_ref: '801', folio_ref: 55, fecha_ref: '2025-05-01', razon_ref: 'OC' }] })],
    ['a text correction without quantity nor price', correccionTexto],
    ['a boleta with an exempt and an affected line', () => ({ ...boleta(), detalle: [...boleta().detalle, { nombre: 'Libro', cantidad: 1, precio: 1500, ind_exe: 1 }] })],
    ['a $ global discount when every affected line has the same tax code', () => ({ ...factura(), detalle: [{ nombre: 'Bebida', cantidad: 1, precio: 1000, cod_imp_adic: 27 }], descuentos_globales: [{ tpo_mov: 'D', tpo_valor: '$', valor_dr: 100 }] })],
    ['montos_brutos on 33, 56 and 61', () => ({ ...notaCredito(), montos_brutos: true })],
  ])('%s', (_, make) => expect(checkEmision(make(), TODAY)).toEqual([]))

  test('an export that does not say its currency is not judged for its decimals: the missing export_data is the error', () => {
    const request = { ...exportacion(), detalle: [{ nombre: 'Horas', cantidad: 100, precio: 12.5 }] }
    delete request.export_data
    expect(checkEmision(request, TODAY).map((e) => [e.field, e.code])).toEqual([['export_data', 'REQUIRED']])
  })

  test('a decimal price names the currency rule in Spanish', () => {
    const pesos = checkEmision({ ...factura(), detalle: [{ nombre: 'Martillo', cantidad: 1, precio: 12.5 }] }, TODAY)
    expect(pesos[0]!.message).toStartWith('En pesos, precio es un número entero')
    const peso_cl = checkEmision({ ...exportacion(), export_data: { tpo_moneda: 'PESO CL' }, detalle: [{ nombre: 'x', cantidad: 1, precio: 1.5 }] }, TODAY)
    expect(peso_cl[0]!.message).toContain('PESO CL')
    const usd = checkEmision({ ...exportacion(), detalle: [{ nombre: 'x', cantidad: 1, precio: 1.23456 }] }, TODAY)
    expect(usd[0]!.message).toBe('En moneda extranjera, precio admite como máximo 4 decimales.')
  })

  test('all failures are reported at once', () => {
    const request = factura()
    request.receptor.rut = '11111111-2'
    request.fecha_emision = '2026-01-01'
    request.ind_traslado = 3
    request.detalle.push({ nombre: 'Ítem €', cantidad: 1 })
    expect(checkEmision(request, TODAY).map((e) => [e.field, e.code])).toEqual([
      ['receptor.rut', 'INVALID_RUT'],
      ['fecha_emision', 'OUT_OF_RANGE'],
      ['detalle.1.nombre', 'INVALID_VALUE'],
      ['ind_traslado', 'NOT_ALLOWED'],
      ['detalle.1.precio', 'REQUIRED'],
    ])
  })
})

// ------------------------------------------------------------------------------------------------ receptor per type

// The receptor fields SII-FMT v2.2 grades 1 per type (docs/sii-protocol.md §2.2, docs/decisions/receptor-rules.md).
describe('checkEmision: the receptor fields the SII requires of each type', () => {
  const TAGS = { giro: 'GiroRecep', direccion: 'DirRecep', comuna: 'CmnaRecep', ciudad: 'CiudadRecep' } as const
  type Field = keyof typeof TAGS
  const requiring: Array<[tipo: TipoDte, base: () => EmitirDte, fields: Field[]]> = [
    [33, factura, ['giro', 'direccion', 'comuna']],
    [34, exenta, ['giro', 'direccion', 'comuna']],
    [43, liquidacion, ['giro', 'direccion', 'comuna']],
    [46, compra, ['giro', 'direccion', 'comuna']],
    [52, guia, ['giro', 'direccion', 'comuna']],
    [110, exportacion, ['direccion', 'ciudad']],
  ]
  const cases = requiring.flatMap(([tipo, base, fields]) =>
    fields.flatMap((field) => [
      [tipo, field, 'missing', base, (b: EmitirDte) => { delete b.receptor[field] }] as const,
      [tipo, field, 'blank', base, (b: EmitirDte) => { b.receptor[field] = ' \t ' }] as const,
    ]),
  )

  test.each(cases)('%i without receptor.%s (%s) → REQUIRED there, naming the rule', (tipo, field, _, base, spoil) => {
    const request = base()
    expect(checkEmision(request, TODAY)).toEqual([])
    spoil(request)
    const errors = checkEmision(request, TODAY)
    expect(errors.map((e) => [e.field, e.code])).toEqual([[`receptor.${field}`, 'REQUIRED']])
    expect(errors[0]!.message).toStartWith('El SII exige')
    expect(errors[0]!.message).toContain(`(${TAGS[field]})`)
    expect(errors[0]!.message).toContain(`(tipo ${tipo})`)
    expect(errors[0]!.message).toContain('Formato DTE v2.2')
  })

  test('the message of the issue: a factura without comuna', () => {
    const request = factura()
    delete request.receptor.comuna
    expect(checkEmision(request, TODAY)[0]!.message).toBe(
      'El SII exige la comuna del receptor (CmnaRecep) en la factura electrónica (tipo 33); Formato DTE v2.2.',
    )
  })

  test('every missing field is reported at once', () => {
    const request = { ...guia(), receptor: { rut: '76.555.835-2', razon_social: 'Comercializadora Ñuñoa Ltda.' } }
    expect(checkEmision(request, TODAY).map((e) => e.field)).toEqual(['receptor.giro', 'receptor.direccion', 'receptor.comuna'])
  })

  const bare = (b: EmitirDte): EmitirDte => ({ ...b, receptor: { rut: b.receptor.rut, razon_social: b.receptor.razon_social } })
  test.each<[string, () => EmitirDte]>([
    ['a 56 (the SII grades them 3)', () => bare({ ...notaCredito(), tipo_dte: 56 })],
    ['a 61', () => bare(notaCredito())],
    ['a 61 correcting text', () => bare(correccionTexto())],
    ['a 111', () => bare(notaExportacion(111))],
    ['a 112', () => bare(notaExportacion(112))],
    ['a 39 to the anonymous consumer', () => bare(boleta())],
    ['a 41 to the anonymous consumer', () => bare({ ...boleta(), tipo_dte: 41 })],
    ['a 39 to a named buyer', () => ({ ...boleta(), receptor: { rut: '12.345.678-5', razon_social: 'Juana Pérez' } })],
    ['a 110 without giro nor comuna (graded 3 on exports)', exportacion],
  ])('accepted without giro, dirección, comuna or ciudad: %s', (_, make) => expect(checkEmision(make(), TODAY)).toEqual([]))
})

describe('receptor.rut of a boleta: the anonymous consumer is 66666666-6', () => {
  test('a blank RUT on a 39 or a 41 → REQUIRED at receptor.rut, saying 66666666-6 is the anonymous consumer', () => {
    for (const tipo_dte of [39, 41] as const) {
      const errors = checkEmision({ ...boleta(), tipo_dte, receptor: { rut: '   ', razon_social: 'Consumidor final' } }, TODAY)
      expect(errors.map((e) => [e.field, e.code])).toEqual([['receptor.rut', 'REQUIRED']])
      expect(errors[0]!.message).toContain(`use ${RUT_CONSUMIDOR_ANONIMO}, el consumidor final anónimo`)
      expect(errors[0]!.message).toContain(`(tipo ${tipo_dte})`)
    }
  })

  test('a blank RUT on a factura is REQUIRED too, without the boleta hint', () => {
    const errors = checkEmision({ ...factura(), receptor: { ...receptor(), rut: ' ' } }, TODAY)
    expect(errors.map((e) => [e.field, e.code])).toEqual([['receptor.rut', 'REQUIRED']])
    expect(errors[0]!.message).not.toContain(RUT_CONSUMIDOR_ANONIMO)
  })

  test('the rules over a 39 whose RUT the schema refused say it too (checkSalvagedEmision)', () => {
    const salvaged = { ...boleta(), receptor: { razon_social: 'Consumidor final' } } as unknown as EmitirDte
    const errors = checkSalvagedEmision(salvaged, TODAY)
    expect(errors).toContainEqual(expect.objectContaining({ field: 'receptor.rut', code: 'REQUIRED' }))
    expect(errors.find((e) => e.field === 'receptor.rut')!.message).toContain(RUT_CONSUMIDOR_ANONIMO)
  })

  test('and over a 39 without any receptor, at receptor', () => {
    const { receptor: _receptor, ...salvaged } = boleta()
    const errors = checkSalvagedEmision(salvaged as EmitirDte, TODAY)
    expect(errors).toEqual([expect.objectContaining({ field: 'receptor', code: 'REQUIRED' })])
    expect(errors[0]!.message).toContain(RUT_CONSUMIDOR_ANONIMO)
  })

  test('66666666-6 itself is a valid RUT for any boleta', () => {
    expect(checkEmision({ ...boleta(), receptor: { rut: RUT_CONSUMIDOR_ANONIMO, razon_social: 'Consumidor final' } }, TODAY)).toEqual([])
  })
})

// ------------------------------------------------------------------------------------------------ shape

type ShapeCase = [field: string, code: string, spoil: (b: object) => void]

/** The object holding the last segment of a dot path (`detalle.0.precio` → detalle[0]). */
function holder(root: object, path: string): [Record<string, unknown>, string] {
  const parts = path.split('.')
  const last = parts.pop()!
  const parent = parts.reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], root)
  return [parent as Record<string, unknown>, last]
}
function set(root: object, path: string, value: unknown): void {
  const [parent, key] = holder(root, path)
  parent[key] = value
}
function unset(root: object, path: string): void {
  const [parent, key] = holder(root, path)
  delete parent[key]
}

const shapeCases: ShapeCase[] = [
  ['tipo_dte', 'REQUIRED', (b) => unset(b, 'tipo_dte')],
  ['tipo_dte', 'INVALID_VALUE', (b) => set(b, 'tipo_dte', 99)],
  ['tipo_dte', 'INVALID_VALUE', (b) => set(b, 'tipo_dte', '33')],
  ['receptor', 'REQUIRED', (b) => unset(b, 'receptor')],
  ['receptor.rut', 'REQUIRED', (b) => unset(b, 'receptor.rut')],
  ['receptor.razon_social', 'REQUIRED', (b) => unset(b, 'receptor.razon_social')],
  ['receptor.razon_social', 'REQUIRED', (b) => set(b, 'receptor.razon_social', '')],
  ['receptor.razon_social', 'TOO_LONG', (b) => set(b, 'receptor.razon_social', 'x'.repeat(201))],
  ['receptor.giro', 'TOO_LONG', (b) => set(b, 'receptor.giro', 'x'.repeat(201))],
  ['receptor.direccion', 'TOO_LONG', (b) => set(b, 'receptor.direccion', 'x'.repeat(301))],
  ['receptor.comuna', 'TOO_LONG', (b) => set(b, 'receptor.comuna', 'x'.repeat(101))],
  ['receptor.ciudad', 'TOO_LONG', (b) => set(b, 'receptor.ciudad', 'x'.repeat(101))],
  ['receptor.email', 'INVALID_FORMAT', (b) => set(b, 'receptor.email', 'no es un correo')],
  ['fecha_emision', 'INVALID_FORMAT', (b) => set(b, 'fecha_emision', '10-06-2025')],
  ['detalle', 'REQUIRED', (b) => unset(b, 'detalle')],
  ['detalle', 'TOO_FEW', (b) => set(b, 'detalle', [])],
  ['detalle', 'TOO_MANY', (b) => set(b, 'detalle', Array.from({ length: 61 }, () => ({ nombre: 'x', cantidad: 1, precio: 1 })))],
  ['detalle.0.nombre', 'REQUIRED', (b) => unset(b, 'detalle.0.nombre')],
  ['detalle.0.nombre', 'TOO_LONG', (b) => set(b, 'detalle.0.nombre', 'x'.repeat(201))],
  ['detalle.0.dsc_item', 'TOO_LONG', (b) => set(b, 'detalle.0.dsc_item', 'x'.repeat(1001))],
  ['detalle.0.unidad', 'TOO_LONG', (b) => set(b, 'detalle.0.unidad', 'CAJAS')],
  ['detalle.0.tipo_doc_liq', 'TOO_LONG', (b) => set(b, 'detalle.0.tipo_doc_liq', '3333')],
  ['detalle.0.cantidad', 'OUT_OF_RANGE', (b) => set(b, 'detalle.0.cantidad', 0)],
  // 999999999999.999999, QtyItem's maximum, is 1e12 as a JSON number: past the XSD, refused (it used to be signed).
  ['detalle.0.cantidad', 'OUT_OF_RANGE', (b) => set(b, 'detalle.0.cantidad', 999999999999.999999)],
  ['detalle.0.cantidad', 'INVALID_TYPE', (b) => set(b, 'detalle.0.cantidad', '2')],
  ['detalle.0.precio', 'INVALID_TYPE', (b) => set(b, 'detalle.0.precio', 10.5)],
  ['detalle.0.precio', 'INVALID_TYPE', (b) => set(b, 'detalle.0.precio', '1000')],
  ['detalle.0.precio', 'OUT_OF_RANGE', (b) => set(b, 'detalle.0.precio', -1)],
  ['detalle.0.descuento_pct', 'OUT_OF_RANGE', (b) => set(b, 'detalle.0.descuento_pct', 101)],
  ['detalle.0.recargo_pct', 'OUT_OF_RANGE', (b) => set(b, 'detalle.0.recargo_pct', -1)],
  ['detalle.0.ind_exe', 'INVALID_VALUE', (b) => set(b, 'detalle.0.ind_exe', 2)],
  ['detalle.0.foo', 'NOT_ALLOWED', (b) => set(b, 'detalle.0.foo', 1)],
  ['referencias', 'TOO_MANY', (b) => set(b, 'referencias', Array.from({ length: 41 }, () => ({ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025-01-01', razon_ref: 'x' })))],
  ['referencias.0.tipo_doc_ref', 'REQUIRED', (b) => set(b, 'referencias', [{ folio_ref: 1, fecha_ref: '2025-01-01', razon_ref: 'x' }])],
  ['referencias.0.tipo_doc_ref', 'INVALID_VALUE', (b) => set(b, 'referencias', [{ tipo_doc_ref: 'ABCD', folio_ref: 1, fecha_ref: '2025-01-01', razon_ref: 'x' }])],
  ['referencias.0.folio_ref', 'REQUIRED', (b) => set(b, 'referencias', [{ tipo_doc_ref: 33, fecha_ref: '2025-01-01', razon_ref: 'x' }])],
  ['referencias.0.fecha_ref', 'INVALID_FORMAT', (b) => set(b, 'referencias', [{ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025/01/01', razon_ref: 'x' }])],
  ['referencias.0.codigo_ref', 'INVALID_VALUE', (b) => set(b, 'referencias', [{ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025-01-01', codigo_ref: 4, razon_ref: 'x' }])],
  ['referencias.0.razon_ref', 'REQUIRED', (b) => set(b, 'referencias', [{ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025-01-01' }])],
  ['referencias.0.razon_ref', 'TOO_LONG', (b) => set(b, 'referencias', [{ tipo_doc_ref: 33, folio_ref: 1, fecha_ref: '2025-01-01', razon_ref: 'x'.repeat(201) }])],
  ['descuentos_globales', 'TOO_MANY', (b) => set(b, 'descuentos_globales', Array.from({ length: 21 }, () => ({ tpo_mov: 'D', tpo_valor: '%', valor_dr: 1 })))],
  ['descuentos_globales.0.tpo_mov', 'INVALID_VALUE', (b) => set(b, 'descuentos_globales', [{ tpo_mov: 'X', tpo_valor: '%', valor_dr: 1 }])],
  ['descuentos_globales.0.tpo_valor', 'INVALID_VALUE', (b) => set(b, 'descuentos_globales', [{ tpo_mov: 'D', tpo_valor: 'P', valor_dr: 1 }])],
  ['descuentos_globales.0.valor_dr', 'OUT_OF_RANGE', (b) => set(b, 'descuentos_globales', [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 0 }])],
  ['descuentos_globales.0.glosa_dr', 'TOO_LONG', (b) => set(b, 'descuentos_globales', [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 1, glosa_dr: 'x'.repeat(46) }])],
  ['descuentos_globales.0.ind_exe_dr', 'INVALID_VALUE', (b) => set(b, 'descuentos_globales', [{ tpo_mov: 'D', tpo_valor: '%', valor_dr: 1, ind_exe_dr: 3 }])],
  ['comisiones.0.tipo_movim', 'INVALID_VALUE', (b) => set(b, 'comisiones', [{ tipo_movim: 'X', glosa: 'g', val_com_neto: 1, val_com_exe: 0 }])],
  ['comisiones.0.val_com_exe', 'REQUIRED', (b) => set(b, 'comisiones', [{ tipo_movim: 'C', glosa: 'g', val_com_neto: 1 }])],
  ['impuestos_retenciones.0.tipo_imp', 'REQUIRED', (b) => set(b, 'impuestos_retenciones', [{ monto_imp: 1 }])],
  ['impuestos_retenciones.0.tasa_imp', 'OUT_OF_RANGE', (b) => set(b, 'impuestos_retenciones', [{ tipo_imp: 27, tasa_imp: 101 }])],
  ['ind_traslado', 'OUT_OF_RANGE', (b) => set(b, 'ind_traslado', 10)],
  ['tipo_despacho', 'OUT_OF_RANGE', (b) => set(b, 'tipo_despacho', 4)],
  ['ind_servicio', 'OUT_OF_RANGE', (b) => set(b, 'ind_servicio', 7)],
  ['auto_send', 'INVALID_TYPE', (b) => set(b, 'auto_send', 'yes')],
  ['montos_brutos', 'INVALID_TYPE', (b) => set(b, 'montos_brutos', 1)],
  ['metadata', 'INVALID_TYPE', (b) => set(b, 'metadata', 'texto')],
  ['export_data.tpo_moneda', 'REQUIRED', (b) => set(b, 'export_data', {})],
  ['export_data.tpo_moneda', 'INVALID_VALUE', (b) => set(b, 'export_data', { tpo_moneda: 'USD' })],
  ['export_data.tpo_cambio', 'OUT_OF_RANGE', (b) => set(b, 'export_data', { tpo_moneda: 'EURO', tpo_cambio: 0 })],
  ['export_data.num_id', 'TOO_LONG', (b) => set(b, 'export_data', { tpo_moneda: 'EURO', num_id: 'x'.repeat(21) })],
  ['export_data.marcas', 'TOO_LONG', (b) => set(b, 'export_data', { tpo_moneda: 'EURO', marcas: 'x'.repeat(256) })],
  ['export_data.bar', 'NOT_ALLOWED', (b) => set(b, 'export_data', { tpo_moneda: 'EURO', bar: 1 })],
  ['foo', 'NOT_ALLOWED', (b) => set(b, 'foo', true)],
]

describe('validateEmision: the shape (EmitirDteBody) fails at the exact path', () => {
  test.each(shapeCases)('%s %s', (field, code, spoil) => {
    const body = structuredClone(factura())
    spoil(body)
    const result = validateEmision(body, TODAY)
    expect(result.ok).toBe(false)
    if (!result.ok) expect(result.errors.map((e) => [e.field, e.code])).toContainEqual([field, code])
  })

  test('a valid body comes back typed; rules run after the shape', () => {
    expect(validateEmision(factura(), TODAY)).toEqual({ ok: true, value: factura() })
    const result = validateEmision({ ...notaCredito(), referencias: [] }, TODAY)
    expect(result).toEqual({ ok: false, errors: [expect.objectContaining({ field: 'referencias', code: 'REQUIRED' })] })
  })

  test('metadata takes any keys and values', () => {
    expect(validateEmision({ ...factura(), metadata: { pedido: 'A-1', items: [1, 2], anidado: { ok: true } } }, TODAY).ok).toBe(true)
  })

  test('tipo_doc_ref takes a TipoDTE, a short code or SET', () => {
    for (const tipo_doc_ref of [33, '801', 'DUS', 'SET'])
      expect(validateEmision({ ...factura(), referencias: [{ tipo_doc_ref, folio_ref: tipo_doc_ref === 'SET' ? 0 : 1, fecha_ref: '2025-06-01', razon_ref: 'CASO 1' }] }, TODAY).ok).toBe(true)
  })
})

// ------------------------------------------------------------------------------------------------ notes over notes

describe('checkEmision: retention codes on a note whose references lead to a 46 through other notes', () => {
  const refA = (tipo_doc_ref: TipoDte, folio_ref: number, codigo_ref: 1 | 3 = 1) => ({ tipo_doc_ref, folio_ref, fecha_ref: '2025-06-01', codigo_ref, razon_ref: 'x' })
  const debitoRetenido = (tipo: TipoDte, folio: number): EmitirDte => ({
    ...notaCredito(1),
    tipo_dte: 56,
    referencias: [refA(tipo, folio)],
    detalle: [{ nombre: 'Chatarra', cantidad: 1, precio: 1000, cod_imp_adic: 15 }],
    impuestos_retenciones: [{ tipo_imp: 15, tasa_imp: 19 }],
  })
  const notas = (entries: Array<[string, Array<{ tipo_doc_ref: number | string; folio_ref: number }>]>) => ({ notas: new Map(entries) })
  const fields = (errors: { field: string; code: string }[]) => errors.map((e) => `${e.field}:${e.code}`)
  const REFUSED = ['detalle.0.cod_imp_adic:NOT_ALLOWED', 'impuestos_retenciones.0.tipo_imp:NOT_ALLOWED']

  test('without context every referenced note is unknown: a 56 over a 61 keeps its retention', () => {
    expect(checkEmision(debitoRetenido(61, 7), TODAY)).toEqual([])
  })

  test.each<[string, Array<[string, Array<{ tipo_doc_ref: number | string; folio_ref: number }>]>]>([
    ['the 61 of a 46', [['61:7', [{ tipo_doc_ref: 46, folio_ref: 3 }]]]],
    ['the 61 of a 56 of a 46', [['61:7', [{ tipo_doc_ref: 56, folio_ref: 2 }]], ['56:2', [{ tipo_doc_ref: 46, folio_ref: 3 }]]]],
    ['the 61 of a 56 not in the store', [['61:7', [{ tipo_doc_ref: 56, folio_ref: 2 }]]]],
    ['the 61 of a SET case and a 46', [['61:7', [{ tipo_doc_ref: 'SET', folio_ref: 0 }, { tipo_doc_ref: 46, folio_ref: 3 }]]]],
  ])('accepted: a 56 over %s', (_, entries) => {
    expect(checkEmision(debitoRetenido(61, 7), TODAY, notas(entries))).toEqual([])
  })

  test.each<[string, Array<[string, Array<{ tipo_doc_ref: number | string; folio_ref: number }>]>]>([
    ['the 61 of a 33', [['61:7', [{ tipo_doc_ref: 33, folio_ref: 3 }]]]],
    ['the 61 of a 56 of a 33', [['61:7', [{ tipo_doc_ref: 56, folio_ref: 2 }]], ['56:2', [{ tipo_doc_ref: 33, folio_ref: 3 }]]]],
    ['two notes referencing each other, neither reaching a 46', [['61:7', [{ tipo_doc_ref: 56, folio_ref: 2 }]], ['56:2', [{ tipo_doc_ref: 61, folio_ref: 7 }]]]],
  ])('refused at the same paths as a 56 over a 33: a 56 over %s', (_, entries) => {
    expect(fields(checkEmision(debitoRetenido(61, 7), TODAY, notas(entries)))).toEqual(REFUSED)
    expect(fields(checkEmision(debitoRetenido(33, 3), TODAY))).toEqual(REFUSED)
  })

  test('one reference leading to a 46 is enough', () => {
    const request = { ...debitoRetenido(61, 7), referencias: [refA(61, 7, 3), refA(61, 8, 3)] }
    expect(fields(checkEmision(request, TODAY, notas([['61:7', [{ tipo_doc_ref: 33, folio_ref: 1 }]], ['61:8', [{ tipo_doc_ref: 33, folio_ref: 2 }]]])))).toEqual(REFUSED)
    expect(checkEmision(request, TODAY, notas([['61:7', [{ tipo_doc_ref: 33, folio_ref: 1 }]], ['61:8', [{ tipo_doc_ref: 46, folio_ref: 2 }]]]))).toEqual([])
  })
})

// ------------------------------------------------------------------------------------------------ amount limits

describe('checkEmision: amounts the SII schema cannot take are refused at the line or zone they come from', () => {
  const fieldsOf = (request: EmitirDte) => checkEmision(request, TODAY).map((e) => [e.field, e.code])
  // 10^15 − 1 = 1271 × 786 782 061 369: the largest MontoItem accepted (MONTO_MAX), computed as cantidad × precio.
  const MAYOR = { nombre: 'Represa', cantidad: 1271, precio: 786_782_061_369 }

  test('the issue: cantidad and precio of 12 digits with descuento_pct 100 → OUT_OF_RANGE at detalle.0.cantidad, naming the limit', () => {
    const request = { ...factura(), detalle: [{ nombre: 'Enorme', cantidad: 999_999_999_999, precio: 999_999_999_999, descuento_pct: 100 }] }
    const errors = checkEmision(request, TODAY)
    expect(errors.map((e) => [e.field, e.code])).toEqual([['detalle.0.cantidad', 'OUT_OF_RANGE']])
    expect(errors[0]!.message).toContain('DescuentoMonto')
    expect(errors[0]!.message).toContain('999999999998000000000001')  // (10^12 − 1)², exact: no exponent form
    expect(errors[0]!.message).toContain('999999999999999 (15 dígitos)')
  })

  test('boundary: a line of exactly 999 999 999 999 999 is accepted (34: MntTotal is the line); one peso more is not', () => {
    expect(checkEmision({ ...exenta(), detalle: [MAYOR] }, TODAY)).toEqual([])
    expect(fieldsOf({ ...exenta(), detalle: [{ ...MAYOR, precio: MAYOR.precio + 1 }] })).toEqual([['detalle.0.cantidad', 'OUT_OF_RANGE']])
    expect(fieldsOf({ ...exenta(), detalle: [{ nombre: 'Ajuste', monto_item: 999_999_999_999_999 }] })).toEqual([])
  })

  test('boundary of a 33: the largest neto whose total with IVA fits is accepted; one more is refused at detalle', () => {
    // round(840 336 134 453 781 × 1.19) = 999 999 999 999 999 (MntTotal); the next neto's total has 16 digits.
    const at = (neto: number) => ({ ...factura(), detalle: [{ nombre: 'Puerto', monto_item: neto }] })
    expect(checkEmision(at(840_336_134_453_781), TODAY)).toEqual([])
    const errors = checkEmision(at(840_336_134_453_782), TODAY)
    expect(errors.map((e) => [e.field, e.code])).toEqual([['detalle', 'OUT_OF_RANGE']])
    expect(errors[0]!.message).toContain('MntTotal')
  })

  test.each<[string, string, () => EmitirDte]>([
    ['a surcharge that takes MontoItem past the limit', 'detalle.1.cantidad', () => ({ ...exenta(), detalle: [exenta().detalle[0]!, { ...MAYOR, recargo_pct: 0.01 }] })],
    ['a boleta line', 'detalle.0.cantidad', () => ({ ...boleta(), detalle: [{ nombre: 'x', cantidad: 10_000, precio: 999_999_999_999 }] })],
    ['an export line past 14 integer digits (MontoItem of Exportaciones)', 'detalle.0.cantidad', () => ({ ...exportacion(), detalle: [{ nombre: 'x', cantidad: 101, precio: 999_999_999_999 }] })],
    ['an export monto_item past 14 integer digits', 'detalle.0.monto_item', () => ({ ...exportacion(), detalle: [{ nombre: 'x', monto_item: 100_000_000_000_000 }] })],
    // In a foreign currency an export amount keeps 11 integer digits and 4 decimals: 15 digits, exact as a number.
    ['export lines that fit, whose total does not', 'detalle', () => ({ ...exportacion(), detalle: [1, 2].map(() => ({ nombre: 'x', cantidad: 60, precio: 999_999_999 })) })],
    ['an export line of USD 100 000 000 000 (12 integer digits)', 'detalle.0.cantidad', () => ({ ...exportacion(), detalle: [{ nombre: 'x', cantidad: 100, precio: 1_000_000_000 }] })],
    ['an export total that fits in dollars but not in pesos (OtraMoneda)', 'export_data.tpo_cambio', () => ({ ...exportacion(), export_data: { tpo_moneda: 'DOLAR USA', tpo_cambio: 20_000 }, detalle: [{ nombre: 'x', cantidad: 10, precio: 1_000_000_000 }] })],
    ['an explicit monto_imp of 16 digits', 'impuestos_retenciones.0.monto_imp', () => ({ ...factura(), impuestos_retenciones: [{ tipo_imp: 28, monto_imp: 1_000_000_000_000_000 }], detalle: [{ nombre: 'Diésel', cantidad: 1, precio: 1000, cod_imp_adic: 28 }] })],
    ['a commission of 16 digits', 'comisiones.0.val_com_neto', () => ({ ...liquidacion(), comisiones: [{ tipo_movim: 'C', glosa: 'x', val_com_neto: -1_000_000_000_000_000, val_com_exe: 0 }] })],
    ['additional taxes that fit one by one, whose total does not', 'detalle', () => ({ ...factura(), detalle: [{ nombre: 'x', cantidad: 1, precio: 1000, cod_imp_adic: 28 }], impuestos_retenciones: [{ tipo_imp: 28, monto_imp: 999_999_999_999_999 }] })],
  ])('%s → OUT_OF_RANGE at %s', (_, field, make) => {
    expect(fieldsOf(make())).toEqual([[field, 'OUT_OF_RANGE']])
  })
})
