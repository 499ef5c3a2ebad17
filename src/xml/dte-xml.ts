// The unsigned DTE: `<DTE version="1.0">` with its Documento, Liquidacion or Exportaciones (or the boleta's
// Documento of EnvioBOLETA_v11.xsd BOLETADefType), every element in the XSD's sequence order, texts cut to the XSD's
// lengths, compact. The TED comes in already built and goes in verbatim before TmstFirma (docs/sii-protocol.md §2.1, §3, §7.2).
//
// Written as a string, element by element (issue 31): the same bytes xmlbuilder2's DOM wrote, at about a tenth of its
// cost in the signing worker. test/unit/xml/dte-xml-differential.test.ts holds the DOM builder as it was and proves the
// two agree byte for byte on every fixture and on random documents (docs/decisions/performance.md).
import { isTextCorrection, resolveFechaEmision, TIPO_DOC_REF_SET, type EmitirDte, type Linea } from '../domain/emision'
import { normalizeRut } from '../domain/rut'
import { cleanText, truncateChars } from '../domain/text'
import { CLAUSULAS_VENTA, PAISES, TIPOS, TIPOS_BULTO, aduanaCode, type ReglasTipo } from '../domain/tipos'
import {
  amountDecimals,
  comisionIva,
  formatDecimal,
  computeLineas,
  computeTotals,
  grupoDescuento,
  toScaled,
  type LineaCalculada,
  type Totales,
} from '../domain/totals'
import { SII_NS, XSI_NS } from './dsig-profile'
import type { TedData } from './ted'


/** The issuer as the company record holds it (DESIGN §8: empresa fields take the XSD maxima, acteco 1 to 4). */
export interface EmpresaEmisora {
  readonly rut: string
  readonly razon_social: string
  readonly giro: string
  readonly acteco: readonly number[]
  readonly direccion: string
  readonly comuna: string
  readonly ciudad: string
  /** Used by the envelope's Caratula, not by the DTE. */
  readonly fecha_resolucion?: string
  readonly numero_resolucion?: number
}

export interface DteInput {
  readonly empresa: EmpresaEmisora
  readonly folio: number
  readonly request: EmitirDte
  /** Business date in Santiago: the FchEmis when the request has no fecha_emision (spec 2.3). */
  readonly today: string
}

export interface DteXmlInput extends DteInput {
  /** The `<TED version="1.0">…</TED>` fragment, built from `tedDataFor(input)`; inserted byte for byte. */
  readonly ted: string
  /** TmstFirma, `YYYY-MM-DDTHH:MM:SS` in Santiago local time (DESIGN §12 "Time"). */
  readonly tmstFirma: string
}

/** What the TED's DD says about the document (docs/sii-protocol.md §3.1): xml/ted.ts `TedData` but the stamping time. */
export type TedInput = Omit<TedData, 'timestamp'>

// ------------------------------------------------------------------------------------------------ values

/**
 * A text as the XML carries it: transliterated, controls replaced (DESIGN §12), line breaks as LF (a CR would come
 * back as LF from any parser and change what was signed: docs/sii-protocol.md §1.2), cut to the XSD length in characters.
 */
export function xmlText(value: string, maxChars: number): string {
  return truncateChars(cleanText(value).replace(/\r\n?/g, '\n'), maxChars)
}


/** `F60T33`, the xs:ID the signature references (docs/sii-protocol.md §1.3, as the SII's own example). */
export function documentId(tipoDte: number, folio: number): string {
  return `F${folio}T${tipoDte}`
}

function rut(value: string): string {
  const canonical = normalizeRut(value)
  if (canonical === null) throw new Error('invalid RUT reached the XML builder: checkEmision must run first')
  return canonical
}

// The last guard: a number past 2^53 is no longer the integer it stands for, and past 10^21 (or below 10^-6) String()
// writes it as 9.99e+23, which no XSD type accepts. emision-rules refuses such amounts first; here it would be a bug.
function numberText(value: number): string {
  const text = String(value)
  if (!Number.isFinite(value) || /e/i.test(text) || (Number.isInteger(value) && !Number.isSafeInteger(value)))
    throw new Error(`${text} cannot be written to the DTE: not an exact decimal`)
  return text
}

/**
 * Text content as a serializer writes it (DOM Parsing's "serialize a Text node"): `&`, `<` and `>` escaped, quotes,
 * tabs and line breaks as they are. Every `&` becomes `&amp;`, so a name typed as "A &amp; B" reads back as itself.
 */
function escapeText(value: string): string {
  return /[&<>]/.test(value) ? value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;') : value
}

/** The document as it is written: start tags, texts and end tags appended in the XSD's order. */
class XmlWriter {
  xml = ''

  /** `<name>…</name>` around what `children` writes; `<name/>` when they write nothing, as a serializer does. */
  el(name: string, children: () => void): void {
    const before = this.xml
    this.xml += `<${name}>`
    const empty = this.xml.length
    children()
    this.xml = this.xml.length === empty ? `${before}<${name}/>` : `${this.xml}</${name}>`
  }

  /** `<name>text</name>`, written even when the text is empty (`<name></name>`). */
  req(name: string, value: string | number): void {
    // The last guard, as the DOM builder's was: a value of another type (a request the rules did not check) is a bug,
    // never "undefined" or "[object Object]" in a signed document.
    if (typeof value !== 'string' && typeof value !== 'number') throw new Error(`${name}: ${String(value)} cannot be written to the DTE`)
    this.xml += `<${name}>${escapeText(typeof value === 'number' ? numberText(value) : value)}</${name}>`
  }

  /** `<name>text</name>` when there is something to say. */
  opt(name: string, value: string | number | null | undefined): void {
    if (value === undefined || value === null || value === '') return
    this.req(name, value)
  }
}

// ------------------------------------------------------------------------------------------------ TED data

/** The DD fields of the document `buildDteXml(input)` writes, for building its TED first (docs/sii-protocol.md §3.1). */
export function tedDataFor(input: DteInput): TedInput {
  const { request } = input
  const totales = computeTotals(request)
  return {
    rutEmisor: rut(input.empresa.rut),
    tipoDte: request.tipo_dte,
    folio: input.folio,
    fechaEmision: resolveFechaEmision(request, input.today),
    rutReceptor: rut(request.receptor.rut),
    razonSocialReceptor: truncateChars(xmlText(request.receptor.razon_social, 100), 40),
    montoTotal: totales.exportacion ? exportAmount(request, totales.exportacion.monto_total) : totales.monto_total,
    item1: truncateChars(xmlText(request.detalle[0]?.nombre ?? '', 80), 40),
  }
}

function exportAmount(request: EmitirDte, amount: number): string {
  return formatDecimal(amount, amountDecimals(request))
}


// Re-exported from the domain (where the main thread reads them without the XML builder, issue 17).
export { formatDecimal, montoTotalMoneda } from '../domain/totals'

// ------------------------------------------------------------------------------------------------ document

interface Ctx {
  readonly input: DteXmlInput
  readonly request: EmitirDte
  readonly reglas: ReglasTipo
  readonly isBoleta: boolean
  readonly lineas: readonly LineaCalculada[]
  readonly totales: Totales
}

/** The DTE as a JS string with an ISO-8859-1 declaration; encode it with a Latin-1 guard (xml/latin1.ts). */
export function buildDteXml(input: DteXmlInput): string {
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
  const w = new XmlWriter()
  // xmlns:xsi on <DTE> as the envelopes declare it, so inclusive C14N gives the same bytes standalone and inside
  // EnvioDTE/EnvioBOLETA and the DTE signature verifies both ways (docs/sii-protocol.md §4.3, consequence 6).
  w.xml = `<?xml version="1.0" encoding="ISO-8859-1"?><DTE xmlns="${SII_NS}" version="1.0" xmlns:xsi="${XSI_NS}">`
  w.xml += `<${reglas.container} ID="${documentId(request.tipo_dte, input.folio)}">`
  w.el('Encabezado', () => encabezado(w, ctx))
  ctx.lineas.forEach((calc, i) => w.el('Detalle', () => detalle(w, ctx, request.detalle[i]!, calc)))
  if (reglas.allowsDescuentosGlobales) descuentosGlobales(w, ctx)
  referencias(w, ctx)
  if (!ctx.isBoleta) comisiones(w, ctx)
  const beforeTed = w.xml
  w.xml = ''
  w.req('TmstFirma', checkedTimestamp(input.tmstFirma))
  const xml = `${beforeTed}${checkedTed(input.ted)}${w.xml}</${reglas.container}></DTE>`
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

function encabezado(w: XmlWriter, ctx: Ctx): void {
  w.el('IdDoc', () => idDoc(w, ctx))
  w.el('Emisor', () => (ctx.isBoleta ? emisorBoleta(w, ctx.input.empresa) : emisor(w, ctx)))
  w.el('Receptor', () => receptor(w, ctx))
  if (ctx.reglas.isExport) transporteExport(w, ctx)
  w.el('Totales', () => totales(w, ctx))
  if (ctx.totales.exportacion?.tpo_cambio) w.el('OtraMoneda', () => otraMoneda(w, ctx))
}

function idDoc(w: XmlWriter, ctx: Ctx): void {
  const { request, reglas, input } = ctx
  w.req('TipoDTE', request.tipo_dte)
  w.req('Folio', input.folio)
  w.req('FchEmis', resolveFechaEmision(request, input.today))
  if (ctx.isBoleta) {
    // IndServicio is mandatory in a boleta; 3 "ventas y servicios" by default (DESIGN §12).
    w.req('IndServicio', request.ind_servicio ?? reglas.defaultIndServicio ?? 3)
    return
  }
  if (reglas.container !== 'Liquidacion') w.opt('TipoDespacho', request.tipo_despacho)
  if (reglas.container === 'Documento') w.opt('IndTraslado', request.ind_traslado)
  w.opt('IndServicio', request.ind_servicio)
  // MntBruto=1: line, discount and surcharge amounts include IVA (docs/sii-protocol.md §2.3, DESIGN §12).
  if (request.montos_brutos === true) w.req('MntBruto', 1)
  if (reglas.isExport) w.opt('FmaPagExp', request.export_data?.forma_pago_exp)
}

function emisor(w: XmlWriter, ctx: Ctx): void {
  const empresa = ctx.input.empresa
  w.req('RUTEmisor', rut(empresa.rut))
  w.req('RznSoc', xmlText(empresa.razon_social, 100))
  w.req('GiroEmis', xmlText(empresa.giro, 80))
  for (const acteco of empresa.acteco.slice(0, 4)) w.req('Acteco', acteco)
  // Liquidacion makes DirOrigen mandatory; the company record always has it (DESIGN §8).
  w.opt('DirOrigen', xmlText(empresa.direccion, 70))
  w.opt('CmnaOrigen', xmlText(empresa.comuna, 20))
  w.opt('CiudadOrigen', xmlText(empresa.ciudad, 20))
}

// EnvioBOLETA_v11.xsd spells the issuer differently and has no Acteco (docs/sii-protocol.md §7.2).
function emisorBoleta(w: XmlWriter, empresa: EmpresaEmisora): void {
  w.req('RUTEmisor', rut(empresa.rut))
  w.opt('RznSocEmisor', xmlText(empresa.razon_social, 100))
  w.opt('GiroEmisor', xmlText(empresa.giro, 80))
  w.opt('DirOrigen', xmlText(empresa.direccion, 70))
  w.opt('CmnaOrigen', xmlText(empresa.comuna, 20))
  w.opt('CiudadOrigen', xmlText(empresa.ciudad, 20))
}

function receptor(w: XmlWriter, ctx: Ctx): void {
  const { receptor: r, export_data: data } = ctx.request
  w.req('RUTRecep', rut(r.rut))
  w.req('RznSocRecep', xmlText(r.razon_social, 100))
  if (ctx.reglas.isExport && (data?.num_id !== undefined || data?.nacionalidad !== undefined)) {
    w.el('Extranjero', () => {
      w.opt('NumId', data.num_id === undefined ? undefined : xmlText(data.num_id, 20))
      w.opt('Nacionalidad', data.nacionalidad === undefined ? undefined : aduanaCode(data.nacionalidad, PAISES, 3))
    })
  }
  if (!ctx.isBoleta) w.opt('GiroRecep', r.giro === undefined ? undefined : xmlText(r.giro, 40))
  if (!ctx.isBoleta) w.opt('CorreoRecep', correoRecep(r.email))
  w.opt('DirRecep', r.direccion === undefined ? undefined : xmlText(r.direccion, 70))
  // Exports leave CmnaRecep out: a foreign receiver has no Chilean comuna (docs/sii-protocol.md §2.6, as LibreDTE does).
  if (!ctx.reglas.isExport) w.opt('CmnaRecep', r.comuna === undefined ? undefined : xmlText(r.comuna, 20))
  w.opt('CiudadRecep', r.ciudad === undefined ? undefined : xmlText(r.ciudad, 20))
}

/**
 * The receptor's mail as CorreoRecep (DTE_v10.xsd, after Contacto; EnvioBOLETA_v11.xsd has no such element). SiiTypes
 * MailType allows 80 characters, the request 254 (RFC 5321's limit, as cliente.email): a longer address is left out of
 * the XML rather than cut, because a cut address is a wrong one; it is still the address the DTE is mailed to (DESIGN
 * §13), which reads the stored request. docs/decisions/intercambio.md "CorreoRecep".
 */
export const CORREO_RECEP_MAX = 80

function correoRecep(email: string | undefined): string | undefined {
  if (email === undefined) return undefined
  const text = cleanText(email).trim()
  return text.length > 0 && text.length <= CORREO_RECEP_MAX ? text : undefined
}

// Transporte/Aduana of an export, from export_data (docs/sii-protocol.md §2.6). A port named instead of coded goes in the
// IdAdicPto* text the XSD keeps for it.
function transporteExport(w: XmlWriter, ctx: Ctx): void {
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
  w.el('Transporte', () =>
    w.el('Aduana', () => {
      for (const [name, value] of fields) w.opt(name, value)
      if (hasBultos)
        w.el('TipoBultos', () => {
          w.opt('CodTpoBultos', d.tipo_bulto === undefined ? undefined : aduanaCode(d.tipo_bulto, TIPOS_BULTO, 3))
          w.opt('CantBultos', d.tipo_bulto === undefined ? undefined : d.total_bultos)
          w.opt('Marcas', d.marcas === undefined ? undefined : xmlText(d.marcas, 255))
        })
      for (const [name, value] of tail) w.opt(name, value)
    }),
  )
}

function puerto(cod: string, adic: string, value: string | undefined): Array<[string, string | number | undefined]> {
  if (value === undefined) return []
  const trimmed = value.trim()
  if (/^\d{1,4}$/.test(trimmed) && Number(trimmed) > 0) return [[`CodPto${cod}`, Number(trimmed)]]
  return [[`IdAdicPto${adic}`, xmlText(trimmed, 20)]]
}

function totales(w: XmlWriter, ctx: Ctx): void {
  const t = ctx.totales
  if (t.exportacion) {
    w.req('TpoMoneda', t.exportacion.tpo_moneda)
    w.req('MntExe', exportAmount(ctx.request, t.exportacion.monto_exento))
    w.req('MntTotal', exportAmount(ctx.request, t.exportacion.monto_total))
    return
  }
  w.opt('MntNeto', t.monto_neto)
  w.opt('MntExe', t.monto_exento)
  if (!ctx.isBoleta && t.monto_neto !== null) w.req('TasaIVA', t.tasa_iva)
  w.opt('IVA', t.iva)
  if (ctx.isBoleta) {
    w.req('MntTotal', t.monto_total)
    if (t.monto_no_facturable !== null) w.req('MontoNF', t.monto_no_facturable)
    return
  }
  for (const imp of t.impuestos)
    w.el('ImptoReten', () => {
      w.req('TipoImp', imp.tipo_imp)
      w.opt('TasaImp', imp.tasa_imp === null ? null : formatDecimal(imp.tasa_imp, 2))
      w.req('MontoImp', imp.monto_imp)
    })
  if (ctx.reglas.container === 'Documento') w.opt('IVANoRet', t.iva_no_retenido)
  const com = t.comisiones
  if (com)
    w.el('Comisiones', () => {
      w.req('ValComNeto', com.val_com_neto)
      w.req('ValComExe', com.val_com_exe)
      w.req('ValComIVA', com.val_com_iva)
    })
  w.req('MntTotal', t.monto_total)
  if (ctx.reglas.container === 'Documento' && t.monto_no_facturable !== null) w.req('MontoNF', t.monto_no_facturable)
}

// Since 2017 an export in another currency carries its peso amounts in OtraMoneda (docs/sii-protocol.md §2.6, DESIGN §12).
function otraMoneda(w: XmlWriter, ctx: Ctx): void {
  const t = ctx.totales
  w.req('TpoMoneda', 'PESO CL')
  w.req('TpoCambio', formatDecimal(t.exportacion!.tpo_cambio!, 4))
  w.req('MntExeOtrMnda', t.monto_exento ?? 0)
  w.req('MntTotOtrMnda', t.monto_total)
}

// ------------------------------------------------------------------------------------------------ lines

function detalle(w: XmlWriter, ctx: Ctx, linea: Linea, calc: LineaCalculada): void {
  const { reglas } = ctx
  w.req('NroLinDet', calc.nro_lin_det)
  if (reglas.container === 'Liquidacion') w.req('TpoDocLiq', xmlText(linea.tipo_doc_liq ?? '', 3))
  // Every export line is exempt; LibreDTE writes IndExe 1 on each (docs/sii-protocol.md §2.6).
  if (linea.ind_exe === 1 || reglas.isExport) w.req('IndExe', 1)
  w.req('NmbItem', xmlText(linea.nombre, 80))
  w.opt('DscItem', linea.dsc_item === undefined ? undefined : xmlText(linea.dsc_item, 1000))
  // A text correction's line says what is corrected; quantity and price are left out (spec 2.4).
  const isTextOnly = isTextCorrection(ctx.request) && !linea.precio && !linea.monto_item
  if (!isTextOnly) w.opt('QtyItem', linea.cantidad === undefined ? undefined : formatDecimal(linea.cantidad, 6))
  w.opt('UnmdItem', linea.unidad === undefined ? undefined : xmlText(linea.unidad, 4))
  // PrcItem (Dec12_6Type) as written: whole pesos, or a foreign currency's price with its decimals (DESIGN §12).
  if (!isTextOnly && linea.precio) w.req('PrcItem', formatDecimal(linea.precio, amountDecimals(ctx.request)))
  lineDiscounts(w, linea, calc)
  if (!ctx.isBoleta && !reglas.isExport) w.opt('CodImpAdic', linea.cod_imp_adic)
  w.req('MontoItem', reglas.isExport ? exportAmount(ctx.request, calc.monto_item) : calc.monto_item)
}

// DescuentoPct needs its DescuentoMonto and the XSD wants it positive: a discount that rounds to 0 is left out.
function lineDiscounts(w: XmlWriter, linea: Linea, calc: LineaCalculada): void {
  if (calc.descuento_monto !== null) {
    w.req('DescuentoPct', formatDecimal(linea.descuento_pct!, 2))
    w.req('DescuentoMonto', calc.descuento_monto)
  }
  if (calc.recargo_monto !== null) {
    w.req('RecargoPct', formatDecimal(linea.recargo_pct!, 2))
    w.req('RecargoMonto', calc.recargo_monto)
  }
}

// ------------------------------------------------------------------------------------------------ other zones

function descuentosGlobales(w: XmlWriter, ctx: Ctx): void {
  ;(ctx.request.descuentos_globales ?? []).forEach((dr, i) => w.el('DscRcgGlobal', () => {
    w.req('NroLinDR', dr.nro_lin_dr ?? i + 1)
    w.req('TpoMov', dr.tpo_mov)
    w.opt('GlosaDR', dr.glosa_dr === undefined ? undefined : xmlText(dr.glosa_dr, 45))
    w.req('TpoValor', dr.tpo_valor)
    w.req('ValorDR', formatDecimal(dr.valor_dr, 2))
    // Exempt and export documents infer IndExeDR 1 (spec 2.10).
    const grupo = grupoDescuento(ctx.request, dr)
    w.opt('IndExeDR', grupo === 'exento' ? 1 : grupo === 'noFacturable' ? 2 : undefined)
  }))
}

function referencias(w: XmlWriter, ctx: Ctx): void {
  ;(ctx.request.referencias ?? []).forEach((r, i) => w.el('Referencia', () => {
    w.req('NroLinRef', i + 1)
    // SET (certification case) is written as given, with FolioRef 0 (DESIGN §12 "SII certification").
    w.req('TpoDocRef', xmlText(String(r.tipo_doc_ref), 3))
    w.req('FolioRef', r.folio_ref)
    // The boleta's Referencia has no FchRef (EnvioBOLETA_v11.xsd, docs/sii-protocol.md §7.2).
    if (!ctx.isBoleta) w.req('FchRef', r.fecha_ref)
    // A boleta marks its certification case in CodRef too: the SII's boleta set asks CodRef SET, RazonRef CASO-<n>
    // (docs/decisions/certificacion.md "Boletas"); a boleta's CodRef is free text (EnvioBOLETA_v11.xsd).
    w.opt('CodRef', ctx.isBoleta && r.tipo_doc_ref === TIPO_DOC_REF_SET ? TIPO_DOC_REF_SET : r.codigo_ref)
    w.opt('RazonRef', xmlText(r.razon_ref, 90))
  }))
}

function comisiones(w: XmlWriter, ctx: Ctx): void {
  ;(ctx.request.comisiones ?? []).forEach((c, i) => w.el('Comisiones', () => {
    w.req('NroLinCom', i + 1)
    w.req('TipoMovim', c.tipo_movim)
    w.req('Glosa', xmlText(c.glosa, 60))
    w.opt('TasaComision', c.tasa_comision === undefined ? undefined : formatDecimal(c.tasa_comision, 2))
    w.req('ValComNeto', c.val_com_neto)
    w.req('ValComExe', c.val_com_exe)
    w.req('ValComIVA', comisionIva(c))
  }))
}

