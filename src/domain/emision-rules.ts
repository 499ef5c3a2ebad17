// Rules of an issuance request that its shape cannot express: across fields and per document type (spec 2.3–2.11,
// docs/sii-protocol.md §2.2–2.7, §7.2, DESIGN §12). The TypeBox schema has already checked types, required fields and lengths;
// this collects every other failure at once, each at its dot path with a DESIGN §5 detail code.
import type { DetailCode, FieldError } from '../errors'
import {
  PESO_CL,
  TIPO_DOC_REF_SET,
  documentReferences,
  isTextCorrection,
  type EmitirDte,
  type ExportData,
  type Linea,
  type Referencia,
} from './emision'
import { parseRut } from './rut'
import { cleanText, describeCodePoint, firstNonLatin1 } from './text'
import {
  CLAUSULAS_VENTA,
  PAISES,
  SIN_NOTAS,
  TIPOS,
  TIPOS_BULTO,
  aduanaCode,
  allowsRetenciones,
  isLineaExenta,
  reglaImpuesto,
  type NotasEmitidas,
  type ReceptorRequerido,
  type ReglasTipo,
} from './tipos'
import {
  amountDecimals,
  codesCoveringAllAffected,
  computeExentoExacto,
  computeLineAmounts,
  computeTotals,
  decimalPlaces,
  EXPORT_DECIMALS,
  findNegativeDescuento,
  type LineAmounts,
  type Totales,
} from './totals'

/** DESIGN §12: `metadata` over 16 KB serialized is TOO_LONG. */
export const METADATA_MAX_BYTES = 16 * 1024

/** FechaType of SiiTypes_v10.xsd (docs/sii-protocol.md §1.3); Exportaciones' FchRef starts in 1950. */
const FECHA_MIN = '2000-01-01'
const FECHA_REF_EXPORT_MIN = '1950-01-01'
const FECHA_MAX = '2050-12-31'

function fail(field: string, code: DetailCode, message: string): FieldError {
  return { field, code, message }
}

/** What the rules may know beyond the request itself, resolved from the store by the service. */
export interface EmisionContext {
  /**
   * The company's notes that the request's references reach (tipos.ts NotasEmitidas). Without it every referenced note
   * counts as unknown, and a 56/61 over a note keeps its retention codes: the door (contracts/dte.ts) checks the
   * request without the store, and services/issue-dte.ts checks it again with the notes it found, refusing at the same
   * field paths when they lead nowhere near a 46.
   */
  readonly notas?: NotasEmitidas
}

/** Runs one group of rules; see checkSalvagedEmision for why it may be other than calling it. */
type RunRules = (rules: () => FieldError[]) => FieldError[]

function ruleFailures(request: EmitirDte, today: string, notas: NotasEmitidas, run: RunRules): FieldError[] {
  return [
    ...run(() => checkReceptorRut(request)),
    ...run(() => checkReceptorRequired(request)),
    ...run(() => checkFechaEmision(request, today)),
    ...run(() => checkMetadata(request)),
    ...run(() => checkText(request)),
    ...run(() => checkIndicadores(request)),
    ...run(() => checkMontosBrutos(request)),
    ...run(() => request.detalle.flatMap((linea, i) => run(() => checkLinea(request, linea, i, notas)))),
    ...run(() => checkDetalleAsAWhole(request)),
    ...run(() => checkReferencias(request)),
    ...run(() => checkComisiones(request)),
    ...run(() => checkImpuestos(request, notas)),
    ...run(() => checkDescuentosGlobales(request)),
    ...run(() => checkExportData(request)),
  ]
}

/** Every rule failure of `request`, none when it can be issued. `today` is the business date in Santiago. */
export function checkEmision(request: EmitirDte, today: string, context: EmisionContext = {}): FieldError[] {
  const errors = ruleFailures(request, today, context.notas ?? SIN_NOTAS, (rules) => rules())
  // Amounts are computed only from a request that passed every other rule: they assume it.
  return errors.length > 0 ? errors : checkAmounts(request)
}

/**
 * The rules over a request whose shape failed, so `details` lists every failing field at once (DESIGN §5): a bad
 * receptor RUT is reported beside a line with `cantidad` 0. `salvaged` is the request without the fields its schema
 * refused, so it is typed only in part: a group of rules (or one line's) that cannot read what is left throws and
 * adds nothing, since the schema's own detail already names the missing field. Amounts are not computed on a
 * salvaged request.
 */
export function checkSalvagedEmision(salvaged: EmitirDte, today: string): FieldError[] {
  return ruleFailures(salvaged, today, SIN_NOTAS, (rules) => {
    try {
      return rules()
    } catch {
      // Reading a removed field throws (a TypeError, or a BigInt of `undefined`): this group cannot judge. On a body
      // of the right shape the same rules run unguarded in checkEmision, so a real fault still surfaces there.
      return []
    }
  })
}

// ------------------------------------------------------------------------------------------------ header

/** The receptor of a boleta sold to someone who gives no RUT (docs/decisions/receptor-rules.md, docs/sii-protocol.md §7.2). */
export const RUT_CONSUMIDOR_ANONIMO = '66666666-6'

// A blank RUT is missing, not mistyped. On a salvaged body (checkSalvagedEmision) an absent RUT, or an absent
// receptor, reads the same: a boleta's REQUIRED then says what to send when the buyer gives no RUT. The schema's own
// detail at that field comes first in the merge (contracts/validation.ts mergeDetails).
function checkReceptorRut(request: EmitirDte): FieldError[] {
  const receptor = request.receptor as Partial<EmitirDte['receptor']> | undefined
  const rut = receptor?.rut
  if ((rut ?? '').trim() === '') {
    return [fail(receptor === undefined ? 'receptor' : 'receptor.rut', 'REQUIRED', receptorRutRequired(request.tipo_dte))]
  }
  return parseRut(rut!) ? [] : [fail('receptor.rut', 'INVALID_RUT', 'RUT inválido: revise el dígito verificador.')]
}

function receptorRutRequired(tipo: EmitirDte['tipo_dte']): string {
  // A salvaged body may have lost its tipo_dte too: then it is not known to be a boleta.
  const reglas = TIPOS[tipo] as ReglasTipo | undefined
  if (reglas?.envelope !== 'EnvioBOLETA') return 'Campo requerido: el RUT del receptor (RUTRecep) va en todo DTE.'
  return `La boleta (tipo ${tipo}) requiere el RUT del receptor (RUTRecep, EnvioBOLETA_v11.xsd); si el comprador no lo ` +
    `entrega, use ${RUT_CONSUMIDOR_ANONIMO}, el consumidor final anónimo.`
}

/** How a required receptor field is named to the integrator, and its tag in SII-FMT v2.2 zone A. */
const RECEPTOR_REQUERIDO: Readonly<Record<ReceptorRequerido, { readonly nombre: string; readonly tag: string }>> = {
  giro: { nombre: 'el giro', tag: 'GiroRecep' },
  direccion: { nombre: 'la dirección', tag: 'DirRecep' },
  comuna: { nombre: 'la comuna', tag: 'CmnaRecep' },
  ciudad: { nombre: 'la ciudad', tag: 'CiudadRecep' },
}

// The receptor fields SII-FMT v2.2 grades 1 for the type (tipos.ts requiredReceptor), blank counting as missing.
function checkReceptorRequired(request: EmitirDte): FieldError[] {
  const reglas = TIPOS[request.tipo_dte]
  return reglas.requiredReceptor.flatMap((field) => {
    if ((request.receptor[field] ?? '').trim() !== '') return []
    const { nombre, tag } = RECEPTOR_REQUERIDO[field]
    const documento = `${reglas.nombre.toLowerCase()} (tipo ${request.tipo_dte})`
    return [fail(`receptor.${field}`, 'REQUIRED', `El SII exige ${nombre} del receptor (${tag}) en la ${documento}; Formato DTE v2.2.`)]
  })
}

/** A calendar date that exists: 2024-02-30 has the right shape and is still not a date. */
export function isCalendarDate(value: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)
  if (!m) return false
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])]
  const date = new Date(Date.UTC(y, mo - 1, d))
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d
}

function checkFecha(field: string, value: string, min: string): FieldError[] {
  if (!isCalendarDate(value)) return [fail(field, 'INVALID_FORMAT', 'Fecha inexistente; se espera YYYY-MM-DD.')]
  if (value < min || value > FECHA_MAX) return [fail(field, 'OUT_OF_RANGE', `Debe estar entre ${min} y ${FECHA_MAX} (esquema del SII).`)]
  return []
}

// A document cannot be dated after today in Santiago (DESIGN §12 "Time").
function checkFechaEmision(request: EmitirDte, today: string): FieldError[] {
  if (request.fecha_emision === undefined) return []
  const errors = checkFecha('fecha_emision', request.fecha_emision, FECHA_MIN)
  if (errors.length === 0 && request.fecha_emision > today)
    errors.push(fail('fecha_emision', 'OUT_OF_RANGE', `No puede ser posterior a hoy (${today}).`))
  return errors
}

function checkMetadata(request: EmitirDte): FieldError[] {
  if (request.metadata === undefined) return []
  const bytes = new TextEncoder().encode(JSON.stringify(request.metadata)).length
  return bytes > METADATA_MAX_BYTES
    ? [fail('metadata', 'TOO_LONG', `Excede ${METADATA_MAX_BYTES} bytes serializado (${bytes}).`)]
    : []
}

// Every text that reaches the XML must be ISO-8859-1 once typographic characters are transliterated (DESIGN §12);
// metadata never reaches the XML, so it may hold anything.
function checkText(request: EmitirDte): FieldError[] {
  const { metadata: _metadata, ...xmlBound } = request
  return [...stringsOf(xmlBound, '')].flatMap(([path, value]) => {
    const bad = firstNonLatin1(cleanText(value))
    return bad === null
      ? []
      : [fail(path, 'INVALID_VALUE', `Contiene un carácter que el SII no admite (${describeCodePoint(bad)} «${bad}», fuera de ISO-8859-1).`)]
  })
}

function* stringsOf(value: unknown, path: string): Generator<[string, string]> {
  if (typeof value === 'string') yield [path, value]
  else if (Array.isArray(value)) for (const [i, v] of value.entries()) yield* stringsOf(v, `${path}.${i}`)
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value)) yield* stringsOf(v, path ? `${path}.${k}` : k)
}

// ind_traslado is mandatory on 52 and exists nowhere else; tipo_despacho and IndServicio only where the schema and
// docs/sii-protocol.md §2.2 put them.
function checkIndicadores(request: EmitirDte): FieldError[] {
  const reglas = TIPOS[request.tipo_dte]
  const errors: FieldError[] = []
  if (reglas.requiresIndTraslado && request.ind_traslado === undefined)
    errors.push(fail('ind_traslado', 'REQUIRED', 'La guía de despacho (52) requiere ind_traslado.'))
  if (!reglas.requiresIndTraslado && request.ind_traslado !== undefined)
    errors.push(notAllowed('ind_traslado', request))
  if (!reglas.allowsTipoDespacho && request.tipo_despacho !== undefined) errors.push(notAllowed('tipo_despacho', request))
  if (request.ind_servicio !== undefined) {
    if (reglas.indServicio.length === 0) errors.push(notAllowed('ind_servicio', request))
    else if (!reglas.indServicio.includes(request.ind_servicio))
      errors.push(fail('ind_servicio', 'INVALID_VALUE', `Para el tipo ${request.tipo_dte} se acepta: ${reglas.indServicio.join(', ')}.`))
  }
  return errors
}

function notAllowed(field: string, request: EmitirDte): FieldError {
  return fail(field, 'NOT_ALLOWED', `No corresponde al tipo de documento ${request.tipo_dte}.`)
}

function hasImpuestos(request: EmitirDte): boolean {
  return (request.impuestos_retenciones ?? []).length > 0 || request.detalle.some((l) => l.cod_imp_adic !== undefined)
}

// MntBruto=1 is for facturas and notas without additional taxes (docs/sii-protocol.md §2.3); Timbre allows it on 33, 56, 61
// (DESIGN §12). `false` is the default and always fine.
function checkMontosBrutos(request: EmitirDte): FieldError[] {
  if (request.montos_brutos !== true) return []
  if (!TIPOS[request.tipo_dte].allowsMontosBrutos)
    return [fail('montos_brutos', 'NOT_ALLOWED', 'Solo se admite en los tipos 33, 56 y 61.')]
  if (hasImpuestos(request))
    return [fail('montos_brutos', 'NOT_ALLOWED', 'No se admite con impuestos adicionales o retenciones (MntBruto).')]
  return []
}

// ------------------------------------------------------------------------------------------------ lines

function checkLinea(request: EmitirDte, linea: Linea, i: number, notas: NotasEmitidas): FieldError[] {
  const at = (field: string) => `detalle.${i}.${field}`
  return [
    ...checkLineaCantidades(request, linea, at),
    ...checkLineaDecimales(request, linea, at),
    ...checkLineaDescuentos(request, linea, at),
    ...checkTipoDocLiq(request, linea, at),
    ...checkCodImpAdic(request, linea, at, notas),
  ]
}

// Quantity and price may be omitted only in text corrections (spec 2.4) or when the line total is given directly.
function checkLineaCantidades(request: EmitirDte, linea: Linea, at: (f: string) => string): FieldError[] {
  const errors: FieldError[] = []
  const textCorrection = isTextCorrection(request)
  if (linea.cantidad !== undefined && decimalPlaces(linea.cantidad) > 6)
    errors.push(fail(at('cantidad'), 'INVALID_FORMAT', 'Admite como máximo 6 decimales.'))
  if (textCorrection) {
    if ((linea.precio ?? 0) !== 0) errors.push(textCorrectionAmount(at('precio')))
    if ((linea.monto_item ?? 0) !== 0) errors.push(textCorrectionAmount(at('monto_item')))
    return errors
  }
  if (linea.monto_item === undefined) {
    if (linea.cantidad === undefined) errors.push(fail(at('cantidad'), 'REQUIRED', 'Campo requerido.'))
    if (linea.precio === undefined) errors.push(fail(at('precio'), 'REQUIRED', 'Campo requerido.'))
  } else if (linea.monto_item < 0 && request.tipo_dte !== 43) {
    // Only the Liquidacion's MontoItem is signed (ValorType); elsewhere it is MontoType, non-negative.
    errors.push(fail(at('monto_item'), 'OUT_OF_RANGE', 'Solo la liquidación-factura (43) admite montos negativos.'))
  }
  return errors
}

/**
 * The currency of the document's amounts, as far as the request says: pesos on every domestic type and on an export
 * in PESO CL, `foreign` on an export in another currency, null when an export does not say (export_data or its
 * tpo_moneda missing, already reported at its own field).
 */
function monedaDeMontos(request: EmitirDte): 'pesos' | 'foreign' | null {
  if (!TIPOS[request.tipo_dte].isExport) return 'pesos'
  const moneda = request.export_data?.tpo_moneda
  if (moneda === undefined) return null
  return moneda === PESO_CL ? 'pesos' : 'foreign'
}

// A price is in the document's currency (DESIGN §12 "Exports"): whole pesos, or up to 4 decimals of a foreign currency
// (1/10 000, what Exportaciones' MontoItem and totals keep; PrcItem, Dec12_6Type, would take 6, but a fifth decimal
// could only be rounded away in MontoItem). `monto_item` is a line amount and follows the same rule.
function checkLineaDecimales(request: EmitirDte, linea: Linea, at: (f: string) => string): FieldError[] {
  const moneda = monedaDeMontos(request)
  if (moneda === null) return []
  return (['precio', 'monto_item'] as const).flatMap((field) => {
    const value = linea[field]
    if (value === undefined) return []
    if (moneda === 'pesos' && !Number.isInteger(value)) return [fail(at(field), 'INVALID_TYPE', enPesosEsEntero(request, field))]
    if (moneda === 'foreign' && decimalPlaces(value) > EXPORT_DECIMALS)
      return [fail(at(field), 'INVALID_FORMAT', `En moneda extranjera, ${field} admite como máximo ${EXPORT_DECIMALS} decimales.`)]
    return []
  })
}

function enPesosEsEntero(request: EmitirDte, field: 'precio' | 'monto_item'): string {
  const donde = TIPOS[request.tipo_dte].isExport ? ` (la exportación está en ${PESO_CL})` : ''
  return `En pesos, ${field} es un número entero${donde}; solo una exportación en moneda extranjera admite decimales.`
}

function textCorrectionAmount(field: string): FieldError {
  return fail(field, 'INCONSISTENT', 'Una corrección de texto (codigo_ref 2) no lleva montos.')
}

function checkLineaDescuentos(request: EmitirDte, linea: Linea, at: (f: string) => string): FieldError[] {
  const errors: FieldError[] = []
  for (const field of ['descuento_pct', 'recargo_pct'] as const) {
    const pct = linea[field]
    if (pct === undefined) continue
    if (!TIPOS[request.tipo_dte].allowsLineDiscounts)
      errors.push(fail(at(field), 'NOT_ALLOWED', 'La liquidación-factura (43) no lleva descuentos ni recargos por línea.'))
    else if (linea.monto_item !== undefined)
      errors.push(fail(at(field), 'NOT_ALLOWED', 'Con monto_item la línea ya trae su total; no se aplican porcentajes.'))
    else if (decimalPlaces(pct) > 2) errors.push(fail(at(field), 'INVALID_FORMAT', 'Admite como máximo 2 decimales.'))
  }
  return errors
}

// TpoDocLiq is mandatory on every line of a Liquidacion and exists nowhere else (DTE_v10.xsd, docs/sii-protocol.md §2.4).
function checkTipoDocLiq(request: EmitirDte, linea: Linea, at: (f: string) => string): FieldError[] {
  const required = TIPOS[request.tipo_dte].requiresTipoDocLiq
  if (required && (linea.tipo_doc_liq ?? '').trim() === '')
    return [fail(at('tipo_doc_liq'), 'REQUIRED', 'La liquidación-factura (43) requiere el tipo del documento liquidado.')]
  if (!required && linea.tipo_doc_liq !== undefined)
    return [fail(at('tipo_doc_liq'), 'NOT_ALLOWED', 'Solo corresponde a la liquidación-factura (43).')]
  return []
}

function checkCodImpAdic(request: EmitirDte, linea: Linea, at: (f: string) => string, notas: NotasEmitidas): FieldError[] {
  const code = linea.cod_imp_adic
  if (code === undefined) return []
  const field = at('cod_imp_adic')
  if (!TIPOS[request.tipo_dte].allowsImpuestos) return [notAllowed(field, request)]
  const regla = reglaImpuesto(code)
  if (regla === undefined) return [fail(field, 'INVALID_VALUE', `Código de impuesto adicional o retención no soportado: ${code}.`)]
  if (isLineaExenta(request.tipo_dte, linea))
    return [fail(field, 'INCONSISTENT', 'Una línea exenta (ind_exe 1) no lleva impuesto adicional.')]
  if (regla.clase === 'R' && !allowsRetenciones(request.tipo_dte, documentReferences(request), notas)) return [retencionNotAllowed(field)]
  return []
}

function retencionNotAllowed(field: string): FieldError {
  return fail(field, 'NOT_ALLOWED', 'Las retenciones de IVA solo corresponden a la factura de compra (46) y a las notas que la modifican, directamente o a través de otras notas.')
}

// A factura or boleta whose lines are all exempt must be issued as its exempt type (docs/sii-protocol.md §2.3: 33 → 34).
const EXEMPT_COUNTERPART: Readonly<Partial<Record<number, number>>> = { 33: 34, 39: 41 }

function checkDetalleAsAWhole(request: EmitirDte): FieldError[] {
  const counterpart = EXEMPT_COUNTERPART[request.tipo_dte]
  if (counterpart === undefined || !request.detalle.every((l) => l.ind_exe === 1)) return []
  return [fail('detalle', 'INCONSISTENT', `Todas las líneas son exentas: emita un tipo ${counterpart}.`)]
}

// ------------------------------------------------------------------------------------------------ references

function checkReferencias(request: EmitirDte): FieldError[] {
  const referencias = request.referencias ?? []
  const errors = referencias.flatMap((r, i) => checkReferencia(request, r, i))
  const documentos = documentReferences(request)
  if (TIPOS[request.tipo_dte].requiresReferencias) {
    if (documentos.length === 0)
      errors.push(fail('referencias', 'REQUIRED', `El tipo ${request.tipo_dte} debe referenciar el documento que modifica.`))
    else if (!documentos.some((r) => r.codigo_ref !== undefined))
      errors.push(fail(`referencias.${referencias.indexOf(documentos[0]!)}.codigo_ref`, 'REQUIRED', 'Indique codigo_ref: 1 anula, 2 corrige texto, 3 corrige montos.'))
  }
  return [...errors, ...checkSingleCorrection(referencias)]
}

// Annulments (1) and text corrections (2) modify one document: no other reference may carry a codigo_ref
// (docs/sii-protocol.md §2.2). References without codigo_ref (an order, a DUS) may accompany them.
function checkSingleCorrection(referencias: readonly Referencia[]): FieldError[] {
  const coded = referencias.flatMap((r, i) => (r.tipo_doc_ref !== TIPO_DOC_REF_SET && r.codigo_ref !== undefined ? [i] : []))
  const hasExclusive = coded.some((i) => referencias[i]!.codigo_ref !== 3)
  if (!hasExclusive || coded.length < 2) return []
  return coded.slice(1).map((i) =>
    fail(`referencias.${i}.codigo_ref`, 'INCONSISTENT', 'Una anulación o corrección de texto modifica un solo documento.'),
  )
}

// SET references carry the certification case: FolioRef 0, RazonRef "CASO <n>" (DESIGN §12 "SII certification"), or
// "CASO-<n>" as the SII's boleta set names its cases (docs/decisions/certificacion.md "Boletas").
function checkReferencia(request: EmitirDte, r: Referencia, i: number): FieldError[] {
  const at = (field: string) => `referencias.${i}.${field}`
  const min = TIPOS[request.tipo_dte].isExport ? FECHA_REF_EXPORT_MIN : FECHA_MIN
  const errors = checkFecha(at('fecha_ref'), r.fecha_ref, min)
  if (r.tipo_doc_ref === TIPO_DOC_REF_SET) {
    if (r.folio_ref !== 0) errors.push(fail(at('folio_ref'), 'INVALID_VALUE', 'Una referencia SET lleva folio_ref 0.'))
    if (!/^CASO(?:\s+|-)\S/.test(r.razon_ref)) errors.push(fail(at('razon_ref'), 'INVALID_FORMAT', 'Una referencia SET lleva razon_ref «CASO <número>».'))
  } else if (r.folio_ref < 1) {
    errors.push(fail(at('folio_ref'), 'OUT_OF_RANGE', 'Debe ser como mínimo 1.'))
  }
  return errors
}

// ------------------------------------------------------------------------------------------------ zones

function checkComisiones(request: EmitirDte): FieldError[] {
  const mode = TIPOS[request.tipo_dte].comisiones
  const comisiones = request.comisiones ?? []
  if (mode === 'required' && comisiones.length === 0)
    return [fail('comisiones', 'REQUIRED', 'La liquidación-factura (43) requiere sus comisiones (docs/sii-protocol.md §2.2).')]
  if (mode === 'forbidden' && comisiones.length > 0) return [notAllowed('comisiones', request)]
  return comisiones.flatMap((c, i) => {
    const errors: FieldError[] = []
    if (c.tasa_comision !== undefined && decimalPlaces(c.tasa_comision) > 2)
      errors.push(fail(`comisiones.${i}.tasa_comision`, 'INVALID_FORMAT', 'Admite como máximo 2 decimales.'))
    // Only the Liquidacion's commission values are signed (ValorType); the Documento's are MontoType.
    for (const field of ['val_com_neto', 'val_com_exe', 'val_com_iva'] as const) {
      if (request.tipo_dte !== 43 && (c[field] ?? 0) < 0) errors.push(fail(`comisiones.${i}.${field}`, 'OUT_OF_RANGE', 'No puede ser negativo.'))
      else if (Math.abs(c[field] ?? 0) > MONTO_MAX) errors.push(fail(`comisiones.${i}.${field}`, 'OUT_OF_RANGE', `Debe ser como máximo ${LIMITE_PESOS}.`))
    }
    return errors
  })
}

function checkImpuestos(request: EmitirDte, notas: NotasEmitidas): FieldError[] {
  const impuestos = request.impuestos_retenciones ?? []
  if (impuestos.length > 0 && !TIPOS[request.tipo_dte].allowsImpuestos) return [notAllowed('impuestos_retenciones', request)]
  const errors = impuestos.flatMap((t, i) => checkImpuesto(request, i, notas))
  return [...errors, ...checkLineCodesHaveAmounts(request)]
}

function checkImpuesto(request: EmitirDte, i: number, notas: NotasEmitidas): FieldError[] {
  const t = request.impuestos_retenciones![i]!
  const at = (field: string) => `impuestos_retenciones.${i}.${field}`
  const regla = reglaImpuesto(t.tipo_imp)
  if (regla === undefined) return [fail(at('tipo_imp'), 'INVALID_VALUE', `Código de impuesto adicional o retención no soportado: ${t.tipo_imp}.`)]
  const errors: FieldError[] = []
  if (request.impuestos_retenciones!.findIndex((o) => o.tipo_imp === t.tipo_imp) !== i)
    errors.push(fail(at('tipo_imp'), 'INCONSISTENT', 'Código repetido: informe cada impuesto una vez.'))
  if (regla.clase === 'R' && !allowsRetenciones(request.tipo_dte, documentReferences(request), notas)) errors.push(retencionNotAllowed(at('tipo_imp')))
  if (t.tasa_imp !== undefined && decimalPlaces(t.tasa_imp) > 2)
    errors.push(fail(at('tasa_imp'), 'INVALID_FORMAT', 'Admite como máximo 2 decimales.'))
  if (t.monto_imp !== undefined && t.monto_imp < 0 && request.tipo_dte !== 43)
    errors.push(fail(at('monto_imp'), 'OUT_OF_RANGE', 'No puede ser negativo.'))
  else if (t.monto_imp !== undefined && Math.abs(t.monto_imp) > MONTO_MAX)
    errors.push(fail(at('monto_imp'), 'OUT_OF_RANGE', `Debe ser como máximo ${LIMITE_PESOS}.`))
  if (t.monto_imp === undefined && t.tasa_imp === undefined && regla.tasa === null)
    errors.push(fail(at('monto_imp'), 'REQUIRED', `El código ${t.tipo_imp} no tiene tasa fija: informe monto_imp o tasa_imp.`))
  return errors
}

// Specific taxes and margins (28, 35, 14, 50…) have no rate to compute from: their amount must be informed.
function checkLineCodesHaveAmounts(request: EmitirDte): FieldError[] {
  const informed = new Set((request.impuestos_retenciones ?? []).map((t) => t.tipo_imp))
  const missing = new Set(
    request.detalle.flatMap((l) => (l.cod_imp_adic !== undefined && reglaImpuesto(l.cod_imp_adic)?.tasa === null ? [l.cod_imp_adic] : [])),
  )
  return [...missing]
    .filter((code) => !informed.has(code))
    .map((code) => fail('impuestos_retenciones', 'REQUIRED', `Informe monto_imp del código ${code}: no tiene tasa fija.`))
}

function checkDescuentosGlobales(request: EmitirDte): FieldError[] {
  const descuentos = request.descuentos_globales ?? []
  if (descuentos.length === 0) return []
  if (!TIPOS[request.tipo_dte].allowsDescuentosGlobales) return [notAllowed('descuentos_globales', request)]
  if (isTextCorrection(request))
    return [fail('descuentos_globales', 'NOT_ALLOWED', 'Una corrección de texto (codigo_ref 2) no lleva montos.')]
  return descuentos.flatMap((dr, i) => checkDescuentoGlobal(request, i))
}

function checkDescuentoGlobal(request: EmitirDte, i: number): FieldError[] {
  const dr = request.descuentos_globales![i]!
  const at = (field: string) => `descuentos_globales.${i}.${field}`
  const errors: FieldError[] = []
  if (decimalPlaces(dr.valor_dr) > 2) errors.push(fail(at('valor_dr'), 'INVALID_FORMAT', 'Admite como máximo 2 decimales.'))
  else if (dr.tpo_valor === '%' && dr.valor_dr > 100) errors.push(fail(at('valor_dr'), 'OUT_OF_RANGE', 'Un porcentaje no puede superar 100.'))
  else if (dr.tpo_valor === '$' && amountDecimals(request) === 0 && !Number.isInteger(dr.valor_dr))
    errors.push(fail(at('valor_dr'), 'INVALID_FORMAT', 'Un monto en pesos es un número entero.'))
  if (dr.ind_exe_dr === 2 && TIPOS[request.tipo_dte].isExport)
    errors.push(fail(at('ind_exe_dr'), 'NOT_ALLOWED', 'Los documentos de exportación no tienen montos no facturables.'))
  if (dr.tpo_valor === '$' && dr.ind_exe_dr === undefined && !TIPOS[request.tipo_dte].isExemptOnly && hasMixedTaxCodes(request))
    errors.push(fail(at('tpo_valor'), 'INCONSISTENT', 'Con líneas de distintos impuestos adicionales el descuento global debe ser en %.'))
  return errors
}

// "When lines carry different additional-tax codes, a global discount must be in %" (docs/sii-protocol.md §2.4, SII-FMT zone D).
function hasMixedTaxCodes(request: EmitirDte): boolean {
  const afectas = request.detalle.filter((l) => !isLineaExenta(request.tipo_dte, l))
  return afectas.some((l) => l.cod_imp_adic !== undefined) && codesCoveringAllAffected(request).size === 0
}

// ------------------------------------------------------------------------------------------------ exports

// export_data belongs to 110–112 and is required there; tipo_doc_id is forbidden (spec 2.11); a foreign currency
// needs its exchange rate (DESIGN §12 "Exports").
function checkExportData(request: EmitirDte): FieldError[] {
  const isExport = TIPOS[request.tipo_dte].isExport
  const data = request.export_data
  if (data === undefined) return isExport ? [fail('export_data', 'REQUIRED', 'Los documentos de exportación requieren export_data.')] : []
  if (!isExport) return [notAllowed('export_data', request)]
  const errors: FieldError[] = []
  if (data.tipo_doc_id !== undefined)
    errors.push(fail('export_data.tipo_doc_id', 'NOT_ALLOWED', 'No se usa en los tipos 110, 111 y 112.'))
  if (data.tpo_moneda !== PESO_CL && data.tpo_cambio === undefined)
    errors.push(fail('export_data.tpo_cambio', 'REQUIRED', `Una moneda distinta de ${PESO_CL} requiere el tipo de cambio.`))
  return [...errors, ...checkExportDecimals(data), ...checkAduanaCodes(data)]
}

/** Decimals the XSD allows for each decimal field of export_data (Dec6_4, Dec16_2, Dec14_4, PesoBruto 10,2). */
const EXPORT_DECIMAL_FIELDS = { tpo_cambio: 4, total_clausula: 2, peso_bruto: 2, peso_neto: 2, mnt_flete: 4, mnt_seguro: 4 } as const

function checkExportDecimals(data: ExportData): FieldError[] {
  return Object.entries(EXPORT_DECIMAL_FIELDS).flatMap(([field, max]) => {
    const value = data[field as keyof typeof EXPORT_DECIMAL_FIELDS]
    return value !== undefined && decimalPlaces(value) > max
      ? [fail(`export_data.${field}`, 'INVALID_FORMAT', `Admite como máximo ${max} decimales.`)]
      : []
  })
}

const ADUANA_FIELDS = [
  { field: 'clausula_venta', table: CLAUSULAS_VENTA, digits: 2, what: 'una cláusula (FOB, CIF…) o su código de Aduana' },
  { field: 'tipo_bulto', table: TIPOS_BULTO, digits: 3, what: 'el código de Aduana del tipo de bulto' },
  { field: 'pais_recep', table: PAISES, digits: 3, what: 'el código de país de Aduana' },
  { field: 'pais_dest', table: PAISES, digits: 3, what: 'el código de país de Aduana' },
  { field: 'nacionalidad', table: PAISES, digits: 3, what: 'el código de país de Aduana' },
] as const

function checkAduanaCodes(data: ExportData): FieldError[] {
  return ADUANA_FIELDS.flatMap(({ field, table, digits, what }) => {
    const value = data[field]
    return value === undefined || aduanaCode(value, table, digits) !== null
      ? []
      : [fail(`export_data.${field}`, 'INVALID_VALUE', `Valor desconocido: use ${what}.`)]
  })
}

// ------------------------------------------------------------------------------------------------ amounts

/**
 * Largest peso amount accepted (15 digits). MontoType, MntImpType and ValorType (SiiTypes_v10.xsd) take 18 digits, but
 * every amount also travels as a JavaScript and a JSON number, exact only up to 2^53 − 1 (16 digits): 15 digits keep
 * each amount and the sums of them exact, inside the XSD.
 */
export const MONTO_MAX = 999_999_999_999_999

/**
 * Integer digits of an export's amounts: Exportaciones' MontoItem, MntExe and MntTotal are xs:decimal up to
 * 99 999 999 999 999.9999 (DTE_v10.xsd), and so are OtraMoneda's peso amounts (Dec14_4-0Type).
 */
export const EXPORT_INTEGER_DIGITS = 14

const LIMITE_PESOS = `${MONTO_MAX} (15 dígitos)`

/**
 * Significant digits an amount keeps exactly as a JavaScript number (the request, the totals and the XML writer all
 * hold amounts as numbers): 15, as MONTO_MAX. An export in a foreign currency has 4 decimals, so its integer part
 * gets 11 digits, not the XSD's 14: 99 999 999 999 999.9999 would be written 100000000000000, past the XSD's maximum.
 */
const EXACT_DIGITS = 15

function exportIntegerDigits(decimals: number): number {
  return Math.min(EXPORT_INTEGER_DIGITS, EXACT_DIGITS - decimals)
}

/** The largest amount, in the smallest unit of `decimals`, that an export's MontoItem, MntExe, MntTotal can take. */
function exportMaxScaled(decimals: number): bigint {
  return 10n ** BigInt(exportIntegerDigits(decimals) + decimals) - 1n
}

function exportLimitText(decimals: number): string {
  return `${scaledText(exportMaxScaled(decimals), decimals)} (${exportIntegerDigits(decimals)} dígitos enteros)`
}

/** An exact scaled amount as a decimal text, never in exponent form: 123456789n with 4 decimals → 12345.6789. */
function scaledText(value: bigint, decimals: number): string {
  const digits = (value < 0n ? -value : value).toString().padStart(decimals + 1, '0')
  const int = digits.slice(0, digits.length - decimals)
  const frac = decimals > 0 ? `.${digits.slice(digits.length - decimals)}` : ''
  return `${value < 0n ? '-' : ''}${int}${frac}`
}

const abs = (n: bigint): bigint => (n < 0n ? -n : n)

// Amounts are checked once every other rule passed (they assume a well-formed request): lines first, computed exactly
// (totals.ts computeLineAmounts) before any of them becomes a number (one past 10^21 prints as 9.99e+23, which no
// XSD amount type accepts), then the totals.
function checkAmounts(request: EmitirDte): FieldError[] {
  const amounts = computeLineAmounts(request)
  const lineErrors = request.detalle.flatMap((linea, i) => checkLineAmounts(request, linea, i, amounts[i]!))
  return lineErrors.length > 0 ? lineErrors : checkTotals(request)
}

// DescuentoMonto and RecargoMonto are MntImpType (whole units even in exports, DESIGN §12), MontoItem MontoType, or
// the export's decimal. The line answers at the field its amounts come from: monto_item when given, else cantidad,
// which multiplies a precio that is already within PrcItem's 12 digits.
function checkLineAmounts(request: EmitirDte, linea: Linea, i: number, amounts: LineAmounts): FieldError[] {
  const decimals = amountDecimals(request)
  const unit = 10n ** BigInt(decimals)
  const isExport = TIPOS[request.tipo_dte].isExport
  const source = linea.monto_item !== undefined ? 'monto_item' : linea.cantidad !== undefined ? 'cantidad' : 'precio'
  const hint = source === 'monto_item' ? 'reduzca monto_item' : 'reduzca la cantidad o el precio'
  const over = (element: string, value: string, limit: string) =>
    fail(`detalle.${i}.${source}`, 'OUT_OF_RANGE', `El ${element} de la línea sería ${value}, más que el máximo de ${limit} del esquema del SII: ${hint}.`)
  if (amounts.descuento / unit > BigInt(MONTO_MAX)) return [over('descuento (DescuentoMonto)', String(amounts.descuento / unit), LIMITE_PESOS)]
  if (amounts.recargo / unit > BigInt(MONTO_MAX)) return [over('recargo (RecargoMonto)', String(amounts.recargo / unit), LIMITE_PESOS)]
  if (isExport && abs(amounts.montoItem) > exportMaxScaled(decimals))
    return [over('monto (MontoItem)', scaledText(amounts.montoItem, decimals), exportLimitText(decimals))]
  if (!isExport && abs(amounts.montoItem) > BigInt(MONTO_MAX)) return [over('monto (MontoItem)', String(amounts.montoItem), LIMITE_PESOS)]
  return []
}

// Every amount of a Documento, Exportaciones or boleta is non-negative in the XSD (MontoType); only 43 may go below.
function checkTotals(request: EmitirDte): FieldError[] {
  const negativeAt = findNegativeDescuento(request)
  if (negativeAt !== null && request.tipo_dte !== 43)
    return [fail(`descuentos_globales.${negativeAt}.valor_dr`, 'INCONSISTENT', 'El descuento deja un total negativo.')]
  const totales = computeTotals(request)
  const tooLarge = TIPOS[request.tipo_dte].isExport ? checkExportTotals(request, totales) : checkPesoTotals(totales)
  if (tooLarge.length > 0) return tooLarge
  if (request.tipo_dte === 43 || totales.monto_total >= 0) return []
  const field = (request.comisiones ?? []).length > 0 ? 'comisiones' : 'impuestos_retenciones'
  return [fail(field, 'INCONSISTENT', 'Las retenciones o comisiones superan el total del documento.')]
}

function totalTooLarge(field: string, element: string, limit: string): FieldError {
  return fail(field, 'OUT_OF_RANGE', `El ${element} del documento supera el máximo de ${limit} del esquema del SII.`)
}

// Totales of a Documento, Liquidacion or boleta: each amount is an exact integer here (its parts are at most 15 digits
// each, summed as BigInt in totals.ts); one past MONTO_MAX is refused at the zone it comes from.
function checkPesoTotals(totales: Totales): FieldError[] {
  const amounts: Array<[field: string, element: string, value: number | null]> = [
    ['detalle', 'neto (MntNeto)', totales.monto_neto],
    ['detalle', 'exento (MntExe)', totales.monto_exento],
    ['detalle', 'IVA', totales.iva],
    ['detalle', 'no facturable (MontoNF)', totales.monto_no_facturable],
    ...totales.impuestos.map((t): [string, string, number] => ['impuestos_retenciones', `impuesto ${t.tipo_imp} (MontoImp)`, t.monto_imp]),
    ['impuestos_retenciones', 'IVA no retenido (IVANoRet)', totales.iva_no_retenido],
    ['comisiones', 'neto de comisiones (ValComNeto)', totales.comisiones?.val_com_neto ?? null],
    ['comisiones', 'exento de comisiones (ValComExe)', totales.comisiones?.val_com_exe ?? null],
    ['comisiones', 'IVA de comisiones (ValComIVA)', totales.comisiones?.val_com_iva ?? null],
    ['detalle', 'total (MntTotal)', totales.monto_total],
  ]
  const first = amounts.find(([, , value]) => value !== null && Math.abs(value) > MONTO_MAX)
  return first ? [totalTooLarge(first[0], first[1], LIMITE_PESOS)] : []
}

// An export's Totales in its currency (MntExe = MntTotal), and its peso amounts, written in OtraMoneda when the
// currency is foreign (Dec14_4-0Type): both take 14 integer digits.
function checkExportTotals(request: EmitirDte, totales: Totales): FieldError[] {
  const decimals = amountDecimals(request)
  if (computeExentoExacto(request) > exportMaxScaled(decimals)) return [totalTooLarge('detalle', 'total (MntTotal)', exportLimitText(decimals))]
  if (totales.monto_total > Number(exportMaxScaled(0))) return [totalTooLarge('export_data.tpo_cambio', 'total en pesos (MntTotOtrMnda)', exportLimitText(0))]
  return []
}
