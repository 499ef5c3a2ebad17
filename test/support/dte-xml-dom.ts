// The DTE builder as it was before issue 31, through xmlbuilder2's DOM: the reference the string builder in
// src/xml/dte-xml.ts must match byte for byte (test/unit/xml/dte-xml-differential.test.ts). Frozen: it is the old
// behaviour, kept only to compare against. Change it only to follow a deliberate change of the DTE's bytes, and say so.
import { create } from 'xmlbuilder2'
import type { XMLBuilder } from 'xmlbuilder2/lib/interfaces'
import { isTextCorrection, resolveFechaEmision, TIPO_DOC_REF_SET, type EmitirDte, type Linea } from '../../src/domain/emision'
import { normalizeRut } from '../../src/domain/rut'
import { cleanText, truncateChars } from '../../src/domain/text'
import { CLAUSULAS_VENTA, PAISES, TIPOS, TIPOS_BULTO, aduanaCode, type ReglasTipo } from '../../src/domain/tipos'
import {
  amountDecimals,
  comisionIva,
  formatDecimal,
  computeLineas,
  computeTotals,
  grupoDescuento,
  type LineaCalculada,
  type Totales,
} from '../../src/domain/totals'
import { SII_NS, XSI_NS } from '../../src/xml/dsig-profile'
import type { DteXmlInput, EmpresaEmisora } from '../../src/xml/dte-xml'

const XMLNS_NS = 'http://www.w3.org/2000/xmlns/'
const TED_PLACEHOLDER = 'timbre-ted'
const CORREO_RECEP_MAX = 80

// Its own copies of the value helpers it used, so a change to src/xml/dte-xml.ts cannot move both builders together.
function xmlText(value: string, maxChars: number): string {
  return truncateChars(cleanText(value).replace(/\r\n?/g, '\n'), maxChars)
}

function documentId(tipoDte: number, folio: number): string {
  return `F${folio}T${tipoDte}`
}

// ------------------------------------------------------------------------------------------------ values

function rut(value: string): string {
  const canonical = normalizeRut(value)
  if (canonical === null) throw new Error('invalid RUT reached the XML builder: checkEmision must run first')
  return canonical
}

/**
 * xmlbuilder2 leaves text that already looks like an entity (`&amp;`, `&#209;`, `&A;`) unescaped, so a name typed as
 * "A &amp; B" would be read back as "A & B" and disagree with its TED, and "&A;" would not parse. Escaping `&` first
 * makes every `&` literal: xmlbuilder2 then sees only well-formed `&amp;` and writes it as it is.
 */
function literalText(value: string | number): string {
  return (typeof value === 'number' ? numberText(value) : value).replace(/&/g, '&amp;')
}

// The last guard: a number past 2^53 is no longer the integer it stands for, and past 10^21 (or below 10^-6) String()
// writes it as 9.99e+23, which no XSD type accepts. emision-rules refuses such amounts first; here it would be a bug.
function numberText(value: number): string {
  const text = String(value)
  if (!Number.isFinite(value) || /e/i.test(text) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
    throw new Error(`${text} cannot be written to the DTE: not an exact decimal`)
  return text
}

/** Adds `<name>text</name>` when there is something to say. */
function opt(parent: XMLBuilder, name: string, value: string | number | null | undefined): void {
  if (value === undefined || value === null || value === '') return
  parent.ele(name).txt(literalText(value))
}

function req(parent: XMLBuilder, name: string, value: string | number): void {
  parent.ele(name).txt(literalText(value))
}

function exportAmount(request: EmitirDte, amount: number): string {
  return formatDecimal(amount, amountDecimals(request))
}

// ------------------------------------------------------------------------------------------------ document

interface Ctx {
  readonly input: DteXmlInput
  readonly request: EmitirDte
  readonly reglas: ReglasTipo
  readonly isBoleta: boolean
  readonly lineas: readonly LineaCalculada[]
  readonly totales: Totales
}

/** The DTE as the DOM builder wrote it. */
export function buildDteXmlDom(input: DteXmlInput): string {
  const { request } = input
  const reglas = TIPOS[request.tipo_dte]
  const ctx: Ctx = {
    input,
    request,
    reglas,
    isBoleta: reglas.envelope === 'EnvioBOLETA',
    lineas: computeLineas(request),
    totales: computeTotals(request),
  }
  const doc = create({ version: '1.0', encoding: 'ISO-8859-1' })
  const dte = doc.ele(SII_NS, 'DTE', { version: '1.0' })
  // xmlns:xsi on <DTE> as the envelopes declare it, so inclusive C14N gives the same bytes standalone and inside
  // EnvioDTE/EnvioBOLETA and the DTE signature verifies both ways (docs/sii-protocol.md §4.3, consequence 6).
  dte.att(XMLNS_NS, 'xmlns:xsi', XSI_NS)
  const body = dte.ele(reglas.container, { ID: documentId(request.tipo_dte, input.folio) })
  encabezado(body.ele('Encabezado'), ctx)
  ctx.lineas.forEach((calc, i) => detalle(body.ele('Detalle'), ctx, request.detalle[i]!, calc))
  if (reglas.allowsDescuentosGlobales) descuentosGlobales(body, ctx)
  referencias(body, ctx)
  if (!ctx.isBoleta) comisiones(body, ctx)
  body.ins(TED_PLACEHOLDER)
  req(body, 'TmstFirma', checkedTimestamp(input.tmstFirma))
  const xml = doc.end({ prettyPrint: false }).replace(`<?${TED_PLACEHOLDER}?>`, () => checkedTed(input.ted))
  assertXmlSafe(xml)
  return xml
}

function checkedTimestamp(value: string): string {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(value)) throw new Error(`TmstFirma must be YYYY-MM-DDTHH:MM:SS, got ${value}`)
  return value
}

function checkedTed(ted: string): string {
  if (!/^<TED[\s>][\s\S]*<\/TED>$/.test(ted)) throw new Error('the TED must be one <TED>…</TED> element')
  return ted
}

// The last guard (DESIGN §12 "Text"): nothing that XML 1.0 or ISO-8859-1 cannot carry leaves this builder.
function assertXmlSafe(xml: string): void {
  const bad = /[^\t\n\r\u0020-\u00ff]/.exec(xml)
  if (bad) throw new Error(`character U+${bad[0].charCodeAt(0).toString(16).padStart(4, '0')} cannot be written to the DTE`)
}

// ------------------------------------------------------------------------------------------------ Encabezado

function encabezado(enc: XMLBuilder, ctx: Ctx): void {
  idDoc(enc.ele('IdDoc'), ctx)
  if (ctx.isBoleta) emisorBoleta(enc.ele('Emisor'), ctx.input.empresa)
  else emisor(enc.ele('Emisor'), ctx)
  receptor(enc.ele('Receptor'), ctx)
  if (ctx.reglas.isExport) transporteExport(enc, ctx)
  totales(enc.ele('Totales'), ctx)
  if (ctx.totales.exportacion?.tpo_cambio) otraMoneda(enc.ele('OtraMoneda'), ctx)
}

function idDoc(id: XMLBuilder, ctx: Ctx): void {
  const { request, reglas, input } = ctx
  req(id, 'TipoDTE', request.tipo_dte)
  req(id, 'Folio', input.folio)
  req(id, 'FchEmis', resolveFechaEmision(request, input.today))
  if (ctx.isBoleta) {
    // IndServicio is mandatory in a boleta; 3 "ventas y servicios" by default (DESIGN §12).
    req(id, 'IndServicio', request.ind_servicio ?? reglas.defaultIndServicio ?? 3)
    return
  }
  if (reglas.container !== 'Liquidacion') opt(id, 'TipoDespacho', request.tipo_despacho)
  if (reglas.container === 'Documento') opt(id, 'IndTraslado', request.ind_traslado)
  opt(id, 'IndServicio', request.ind_servicio)
  // MntBruto=1: line, discount and surcharge amounts include IVA (docs/sii-protocol.md §2.3, DESIGN §12).
  if (request.montos_brutos === true) req(id, 'MntBruto', 1)
  if (reglas.isExport) opt(id, 'FmaPagExp', request.export_data?.forma_pago_exp)
}

function emisor(em: XMLBuilder, ctx: Ctx): void {
  const empresa = ctx.input.empresa
  req(em, 'RUTEmisor', rut(empresa.rut))
  req(em, 'RznSoc', xmlText(empresa.razon_social, 100))
  req(em, 'GiroEmis', xmlText(empresa.giro, 80))
  for (const acteco of empresa.acteco.slice(0, 4)) req(em, 'Acteco', acteco)
  // Liquidacion makes DirOrigen mandatory; the company record always has it (DESIGN §8).
  opt(em, 'DirOrigen', xmlText(empresa.direccion, 70))
  opt(em, 'CmnaOrigen', xmlText(empresa.comuna, 20))
  opt(em, 'CiudadOrigen', xmlText(empresa.ciudad, 20))
}

// EnvioBOLETA_v11.xsd spells the issuer differently and has no Acteco (docs/sii-protocol.md §7.2).
function emisorBoleta(em: XMLBuilder, empresa: EmpresaEmisora): void {
  req(em, 'RUTEmisor', rut(empresa.rut))
  opt(em, 'RznSocEmisor', xmlText(empresa.razon_social, 100))
  opt(em, 'GiroEmisor', xmlText(empresa.giro, 80))
  opt(em, 'DirOrigen', xmlText(empresa.direccion, 70))
  opt(em, 'CmnaOrigen', xmlText(empresa.comuna, 20))
  opt(em, 'CiudadOrigen', xmlText(empresa.ciudad, 20))
}

function receptor(rec: XMLBuilder, ctx: Ctx): void {
  const { receptor: r, export_data: data } = ctx.request
  req(rec, 'RUTRecep', rut(r.rut))
  req(rec, 'RznSocRecep', xmlText(r.razon_social, 100))
  if (ctx.reglas.isExport && (data?.num_id !== undefined || data?.nacionalidad !== undefined)) {
    const ext = rec.ele('Extranjero')
    opt(ext, 'NumId', data.num_id === undefined ? undefined : xmlText(data.num_id, 20))
    opt(ext, 'Nacionalidad', data.nacionalidad === undefined ? undefined : aduanaCode(data.nacionalidad, PAISES, 3))
  }
  if (!ctx.isBoleta) opt(rec, 'GiroRecep', r.giro === undefined ? undefined : xmlText(r.giro, 40))
  if (!ctx.isBoleta) opt(rec, 'CorreoRecep', correoRecep(r.email))
  opt(rec, 'DirRecep', r.direccion === undefined ? undefined : xmlText(r.direccion, 70))
  // Exports leave CmnaRecep out: a foreign receiver has no Chilean comuna (docs/sii-protocol.md §2.6, as LibreDTE does).
  if (!ctx.reglas.isExport) opt(rec, 'CmnaRecep', r.comuna === undefined ? undefined : xmlText(r.comuna, 20))
  opt(rec, 'CiudadRecep', r.ciudad === undefined ? undefined : xmlText(r.ciudad, 20))
}

function correoRecep(email: string | undefined): string | undefined {
  if (email === undefined) return undefined
  const text = cleanText(email).trim()
  return text.length > 0 && text.length <= CORREO_RECEP_MAX ? text : undefined
}

// Transporte/Aduana of an export, from export_data (docs/sii-protocol.md §2.6). A port named instead of coded goes in the
// IdAdicPto* text the XSD keeps for it.
function transporteExport(enc: XMLBuilder, ctx: Ctx): void {
  const d = ctx.request.export_data
  if (d === undefined) return
  const fields: Array<[string, string | number | undefined]> = [
    ['CodModVenta', d.modalidad_venta],
    ['CodClauVenta', d.clausula_venta === undefined ? undefined : (aduanaCode(d.clausula_venta, CLAUSULAS_VENTA, 2) ?? undefined)],
    ['TotClauVenta', d.total_clausula === undefined ? undefined : formatDecimal(d.total_clausula, 2)],
    ['CodViaTransp', d.via_transporte],
    ...puerto('Embarque', 'Emb', d.puerto_embarque),
    ...puerto('Desemb', 'Desemb', d.puerto_desembarque),
    ['Tara', d.tara],
    ['CodUnidMedTara', d.unidad_tara],
    ['PesoBruto', d.peso_bruto === undefined ? undefined : formatDecimal(d.peso_bruto, 2)],
    ['CodUnidPesoBruto', d.unidad_peso_bruto],
    ['PesoNeto', d.peso_neto === undefined ? undefined : formatDecimal(d.peso_neto, 2)],
    ['CodUnidPesoNeto', d.unidad_peso_neto],
    ['TotBultos', d.total_bultos],
  ]
  const tail: Array<[string, string | number | undefined]> = [
    ['MntFlete', d.mnt_flete ? formatDecimal(d.mnt_flete, 4) : undefined],
    ['MntSeguro', d.mnt_seguro ? formatDecimal(d.mnt_seguro, 4) : undefined],
    ['CodPaisRecep', d.pais_recep === undefined ? undefined : (aduanaCode(d.pais_recep, PAISES, 3) ?? undefined)],
    ['CodPaisDestin', d.pais_dest === undefined ? undefined : (aduanaCode(d.pais_dest, PAISES, 3) ?? undefined)],
  ]
  const hasBultos = d.tipo_bulto !== undefined || (d.marcas ?? '') !== ''
  if (![...fields, ...tail].some(([, v]) => v !== undefined) && !hasBultos) return
  const aduana = enc.ele('Transporte').ele('Aduana')
  for (const [name, value] of fields) opt(aduana, name, value)
  if (hasBultos) {
    const bultos = aduana.ele('TipoBultos')
    opt(bultos, 'CodTpoBultos', d.tipo_bulto === undefined ? undefined : aduanaCode(d.tipo_bulto, TIPOS_BULTO, 3))
    opt(bultos, 'CantBultos', d.tipo_bulto === undefined ? undefined : d.total_bultos)
    opt(bultos, 'Marcas', d.marcas === undefined ? undefined : xmlText(d.marcas, 255))
  }
  for (const [name, value] of tail) opt(aduana, name, value)
}

function puerto(cod: string, adic: string, value: string | undefined): Array<[string, string | number | undefined]> {
  if (value === undefined) return []
  const trimmed = value.trim()
  if (/^\d{1,4}$/.test(trimmed) && Number(trimmed) > 0) return [[`CodPto${cod}`, Number(trimmed)]]
  return [[`IdAdicPto${adic}`, xmlText(trimmed, 20)]]
}

function totales(tot: XMLBuilder, ctx: Ctx): void {
  const t = ctx.totales
  if (t.exportacion) {
    req(tot, 'TpoMoneda', t.exportacion.tpo_moneda)
    req(tot, 'MntExe', exportAmount(ctx.request, t.exportacion.monto_exento))
    req(tot, 'MntTotal', exportAmount(ctx.request, t.exportacion.monto_total))
    return
  }
  opt(tot, 'MntNeto', t.monto_neto)
  opt(tot, 'MntExe', t.monto_exento)
  if (!ctx.isBoleta && t.monto_neto !== null) req(tot, 'TasaIVA', t.tasa_iva)
  opt(tot, 'IVA', t.iva)
  if (ctx.isBoleta) {
    req(tot, 'MntTotal', t.monto_total)
    if (t.monto_no_facturable !== null) req(tot, 'MontoNF', t.monto_no_facturable)
    return
  }
  for (const imp of t.impuestos) {
    const el = tot.ele('ImptoReten')
    req(el, 'TipoImp', imp.tipo_imp)
    opt(el, 'TasaImp', imp.tasa_imp === null ? null : formatDecimal(imp.tasa_imp, 2))
    req(el, 'MontoImp', imp.monto_imp)
  }
  if (ctx.reglas.container === 'Documento') opt(tot, 'IVANoRet', t.iva_no_retenido)
  if (t.comisiones) {
    const com = tot.ele('Comisiones')
    req(com, 'ValComNeto', t.comisiones.val_com_neto)
    req(com, 'ValComExe', t.comisiones.val_com_exe)
    req(com, 'ValComIVA', t.comisiones.val_com_iva)
  }
  req(tot, 'MntTotal', t.monto_total)
  if (ctx.reglas.container === 'Documento' && t.monto_no_facturable !== null) req(tot, 'MontoNF', t.monto_no_facturable)
}

// Since 2017 an export in another currency carries its peso amounts in OtraMoneda (docs/sii-protocol.md §2.6, DESIGN §12).
function otraMoneda(om: XMLBuilder, ctx: Ctx): void {
  const t = ctx.totales
  req(om, 'TpoMoneda', 'PESO CL')
  req(om, 'TpoCambio', formatDecimal(t.exportacion!.tpo_cambio!, 4))
  req(om, 'MntExeOtrMnda', t.monto_exento ?? 0)
  req(om, 'MntTotOtrMnda', t.monto_total)
}

// ------------------------------------------------------------------------------------------------ lines

function detalle(det: XMLBuilder, ctx: Ctx, linea: Linea, calc: LineaCalculada): void {
  const { reglas } = ctx
  req(det, 'NroLinDet', calc.nro_lin_det)
  if (reglas.container === 'Liquidacion') req(det, 'TpoDocLiq', xmlText(linea.tipo_doc_liq ?? '', 3))
  // Every export line is exempt; LibreDTE writes IndExe 1 on each (docs/sii-protocol.md §2.6).
  if (linea.ind_exe === 1 || reglas.isExport) req(det, 'IndExe', 1)
  req(det, 'NmbItem', xmlText(linea.nombre, 80))
  opt(det, 'DscItem', linea.dsc_item === undefined ? undefined : xmlText(linea.dsc_item, 1000))
  // A text correction's line says what is corrected; quantity and price are left out (spec 2.4).
  const isTextOnly = isTextCorrection(ctx.request) && !linea.precio && !linea.monto_item
  if (!isTextOnly) opt(det, 'QtyItem', linea.cantidad === undefined ? undefined : formatDecimal(linea.cantidad, 6))
  opt(det, 'UnmdItem', linea.unidad === undefined ? undefined : xmlText(linea.unidad, 4))
  // PrcItem (Dec12_6Type) as written: whole pesos, or a foreign currency's price with its decimals (DESIGN §12).
  if (!isTextOnly && linea.precio) req(det, 'PrcItem', formatDecimal(linea.precio, amountDecimals(ctx.request)))
  lineDiscounts(det, linea, calc)
  if (!ctx.isBoleta && !reglas.isExport) opt(det, 'CodImpAdic', linea.cod_imp_adic)
  req(det, 'MontoItem', reglas.isExport ? exportAmount(ctx.request, calc.monto_item) : calc.monto_item)
}

// DescuentoPct needs its DescuentoMonto and the XSD wants it positive: a discount that rounds to 0 is left out.
function lineDiscounts(det: XMLBuilder, linea: Linea, calc: LineaCalculada): void {
  if (calc.descuento_monto !== null) {
    req(det, 'DescuentoPct', formatDecimal(linea.descuento_pct!, 2))
    req(det, 'DescuentoMonto', calc.descuento_monto)
  }
  if (calc.recargo_monto !== null) {
    req(det, 'RecargoPct', formatDecimal(linea.recargo_pct!, 2))
    req(det, 'RecargoMonto', calc.recargo_monto)
  }
}

// ------------------------------------------------------------------------------------------------ other zones

function descuentosGlobales(body: XMLBuilder, ctx: Ctx): void {
  ;(ctx.request.descuentos_globales ?? []).forEach((dr, i) => {
    const el = body.ele('DscRcgGlobal')
    req(el, 'NroLinDR', dr.nro_lin_dr ?? i + 1)
    req(el, 'TpoMov', dr.tpo_mov)
    opt(el, 'GlosaDR', dr.glosa_dr === undefined ? undefined : xmlText(dr.glosa_dr, 45))
    req(el, 'TpoValor', dr.tpo_valor)
    req(el, 'ValorDR', formatDecimal(dr.valor_dr, 2))
    // Exempt and export documents infer IndExeDR 1 (spec 2.10).
    const grupo = grupoDescuento(ctx.request, dr)
    opt(el, 'IndExeDR', grupo === 'exento' ? 1 : grupo === 'noFacturable' ? 2 : undefined)
  })
}

function referencias(body: XMLBuilder, ctx: Ctx): void {
  ;(ctx.request.referencias ?? []).forEach((r, i) => {
    const el = body.ele('Referencia')
    req(el, 'NroLinRef', i + 1)
    // SET (certification case) is written as given, with FolioRef 0 (DESIGN §12 "SII certification").
    req(el, 'TpoDocRef', xmlText(String(r.tipo_doc_ref), 3))
    req(el, 'FolioRef', r.folio_ref)
    // The boleta's Referencia has no FchRef (EnvioBOLETA_v11.xsd, docs/sii-protocol.md §7.2).
    if (!ctx.isBoleta) req(el, 'FchRef', r.fecha_ref)
    // A boleta marks its certification case in CodRef too: the SII's boleta set asks CodRef SET, RazonRef CASO-<n>
    // (docs/decisions/certificacion.md "Boletas"); a boleta's CodRef is free text (EnvioBOLETA_v11.xsd).
    opt(el, 'CodRef', ctx.isBoleta && r.tipo_doc_ref === TIPO_DOC_REF_SET ? TIPO_DOC_REF_SET : r.codigo_ref)
    opt(el, 'RazonRef', xmlText(r.razon_ref, 90))
  })
}

function comisiones(body: XMLBuilder, ctx: Ctx): void {
  ;(ctx.request.comisiones ?? []).forEach((c, i) => {
    const el = body.ele('Comisiones')
    req(el, 'NroLinCom', i + 1)
    req(el, 'TipoMovim', c.tipo_movim)
    req(el, 'Glosa', xmlText(c.glosa, 60))
    opt(el, 'TasaComision', c.tasa_comision === undefined ? undefined : formatDecimal(c.tasa_comision, 2))
    req(el, 'ValComNeto', c.val_com_neto)
    req(el, 'ValComExe', c.val_com_exe)
    req(el, 'ValComIVA', comisionIva(c))
  })
}

