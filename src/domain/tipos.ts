// What differs between the 12 document types, as data (STYLE §6): callers read a rule, they never switch on tipo_dte.
// Sources: docs/sii-protocol.md §1.1 (names, containers, schemas), §2.2 (which elements each type takes), §2.4–2.7, §7.2;
// DESIGN §8 (folio expiry), §12 (amounts, PDF cedible copy).
import type { TipoDte } from './emision'

export type Container = 'Documento' | 'Liquidacion' | 'Exportaciones'
/** Receptor fields a type may require, by their JSON names (spec 2.3). */
export type ReceptorRequerido = 'giro' | 'direccion' | 'comuna' | 'ciudad'
export type Envelope = 'EnvioDTE' | 'EnvioBOLETA'

export interface ReglasTipo {
  /** Printed name (docs/sii-protocol.md §1.1, SII-FMT "P" column). */
  readonly nombre: string
  /** The element under `<DTE>`: DTE_v10.xsd takes 43 only as Liquidacion and 110–112 only as Exportaciones. */
  readonly container: Container
  /** Boletas go in EnvioBOLETA to the boleta REST service, never in an EnvioDTE (docs/sii-protocol.md §1.1, §7.1). */
  readonly envelope: Envelope
  /** Notes must reference the document they modify (spec 2.3, docs/sii-protocol.md §2.2). */
  readonly requiresReferencias: boolean
  /** Affected amounts bear IVA (TasaIVA 19); false for exempt and export documents. */
  readonly carriesIva: boolean
  /** Every line is exempt by nature (34, 41, exports): `ind_exe` 1 and `ind_exe_dr` 1 are inferred (spec 2.10). */
  readonly isExemptOnly: boolean
  /** 110–112: amounts in `export_data.tpo_moneda`, Customs data, `export_data` required (spec 2.11). */
  readonly isExport: boolean
  /** 39: prices and line totals include IVA; neto and IVA are derived (docs/sii-protocol.md §7.2, DESIGN §12). */
  readonly hasGrossPrices: boolean
  /** `montos_brutos` may be set: 33, 56, 61 (DESIGN §12). */
  readonly allowsMontosBrutos: boolean
  /** Comisiones zone: mandatory on 43, optional on 46 and on notes (docs/sii-protocol.md §2.2). */
  readonly comisiones: 'required' | 'allowed' | 'forbidden'
  /** ImptoReten exists in the type's Totales (Documento and Liquidacion, not boletas nor exports). */
  readonly allowsImpuestos: boolean
  /** DscRcgGlobal exists in the type's schema (not in Liquidacion, docs/sii-protocol.md §2.1). */
  readonly allowsDescuentosGlobales: boolean
  /** Per-line discounts and surcharges exist in the type's Detalle (not in Liquidacion). */
  readonly allowsLineDiscounts: boolean
  /** `tipo_doc_liq` is required on every line (43) instead of forbidden. */
  readonly requiresTipoDocLiq: boolean
  /**
   * Receptor fields the SII grades 1 (mandatory) for the type in its *Formato Documentos Tributarios Electrónicos*
   * v2.2, zone A fields 57 GiroRecep, 60 DirRecep, 61 CmnaRecep, 62 CiudadRecep (docs/sii-protocol.md §2.2,
   * docs/decisions/receptor-rules.md). Graded 3 (optional) on notes; boletas have no such grade (EnvioBOLETA_v11.xsd
   * makes them optional, §7.2).
   */
  readonly requiredReceptor: readonly ReceptorRequerido[]
  /** `ind_traslado` is mandatory (52) instead of forbidden (docs/sii-protocol.md §2.2, §2.7). */
  readonly requiresIndTraslado: boolean
  /** `tipo_despacho` may be informed (docs/sii-protocol.md §2.2 table: 33, 34, 46, 52, 110). */
  readonly allowsTipoDespacho: boolean
  /** IndServicio values the type's schema accepts; empty when the element is not used (52). */
  readonly indServicio: readonly number[]
  /** Boletas must carry IndServicio; 3 when the request omits it (DESIGN §12, docs/sii-protocol.md §7.2). */
  readonly defaultIndServicio: number | null
  /** Folios of the type expire 180 days after the CAF's FA (docs/sii-protocol.md §3.3, DESIGN §8). */
  readonly foliosExpire: boolean
  /** A cedible copy may be printed (DESIGN §12: not for 39, 41, 56, 61, 110–112). */
  readonly isCedible: boolean
}

const FACTURA: ReglasTipo = {
  nombre: 'FACTURA ELECTRÓNICA',
  container: 'Documento',
  envelope: 'EnvioDTE',
  requiresReferencias: false,
  carriesIva: true,
  isExemptOnly: false,
  isExport: false,
  hasGrossPrices: false,
  allowsMontosBrutos: false,
  comisiones: 'forbidden',
  allowsImpuestos: true,
  allowsDescuentosGlobales: true,
  allowsLineDiscounts: true,
  requiresTipoDocLiq: false,
  // SII-FMT v2.2 grades GiroRecep, DirRecep and CmnaRecep 1 on 33, 34, 46, 52 and 43.
  requiredReceptor: ['giro', 'direccion', 'comuna'],
  requiresIndTraslado: false,
  allowsTipoDespacho: true,
  indServicio: [1, 2, 3],
  defaultIndServicio: null,
  foliosExpire: true,
  isCedible: true,
}

const NOTA: ReglasTipo = {
  ...FACTURA,
  requiresReferencias: true,
  allowsMontosBrutos: true,
  comisiones: 'allowed',
  // SII-FMT v2.2 grades the receptor's giro, dirección and comuna 3 (optional) on credit and debit notes.
  requiredReceptor: [],
  allowsTipoDespacho: false,
  isCedible: false,
}

const BOLETA: ReglasTipo = {
  ...FACTURA,
  nombre: 'BOLETA ELECTRÓNICA',
  envelope: 'EnvioBOLETA',
  hasGrossPrices: true,
  allowsImpuestos: false,
  // EnvioBOLETA_v11.xsd: only RUTRecep is mandatory (66666666-6 for the anonymous consumer); there is no GiroRecep.
  requiredReceptor: [],
  allowsTipoDespacho: false,
  // EnvioBOLETA_v11.xsd IndServicio: 1 servicios periódicos, 2 periódicos domiciliarios, 3 ventas y servicios,
  // 4 espectáculos por cuenta de terceros (docs/sii-protocol.md §7.2).
  indServicio: [1, 2, 3, 4],
  defaultIndServicio: 3,
  foliosExpire: false,
  isCedible: false,
}

const EXPORTACION: ReglasTipo = {
  ...FACTURA,
  nombre: 'FACTURA DE EXPORTACIÓN ELECTRÓNICA',
  container: 'Exportaciones',
  carriesIva: false,
  isExemptOnly: true,
  isExport: true,
  allowsImpuestos: false,
  // SII-FMT v2.2: DirRecep (the address abroad) and CiudadRecep are 1 on the 110; GiroRecep and CmnaRecep are 3.
  requiredReceptor: ['direccion', 'ciudad'],
  // Exportaciones IndServicio: 3 servicio calificado, 4 hotelería, 5 transporte terrestre internacional,
  // 6 servicios prestados y utilizados en el extranjero (docs/sii-protocol.md §2.2).
  indServicio: [3, 4, 5, 6],
  foliosExpire: false,
  isCedible: false,
}

export const TIPOS: Readonly<Record<TipoDte, ReglasTipo>> = {
  33: { ...FACTURA, allowsMontosBrutos: true },
  34: { ...FACTURA, nombre: 'FACTURA NO AFECTA O EXENTA ELECTRÓNICA', carriesIva: false, isExemptOnly: true, allowsImpuestos: false, foliosExpire: false },
  39: BOLETA,
  41: { ...BOLETA, nombre: 'BOLETA NO AFECTA O EXENTA ELECTRÓNICA', carriesIva: false, isExemptOnly: true, hasGrossPrices: false },
  43: {
    ...FACTURA,
    nombre: 'LIQUIDACIÓN FACTURA ELECTRÓNICA',
    container: 'Liquidacion',
    comisiones: 'required',
    allowsDescuentosGlobales: false,
    allowsLineDiscounts: false,
    requiresTipoDocLiq: true,
    allowsTipoDespacho: false,
  },
  46: { ...FACTURA, nombre: 'FACTURA DE COMPRA ELECTRÓNICA', comisiones: 'allowed' },
  52: {
    ...FACTURA,
    nombre: 'GUÍA DE DESPACHO ELECTRÓNICA',
    requiresIndTraslado: true,
    indServicio: [],
    foliosExpire: false,
  },
  56: { ...NOTA, nombre: 'NOTA DE DÉBITO ELECTRÓNICA' },
  61: { ...NOTA, nombre: 'NOTA DE CRÉDITO ELECTRÓNICA' },
  110: EXPORTACION,
  // SII-FMT v2.2 grades GiroRecep, DirRecep, CmnaRecep and CiudadRecep 3 (optional) on export notes.
  111: { ...EXPORTACION, nombre: 'NOTA DE DÉBITO DE EXPORTACIÓN ELECTRÓNICA', requiresReferencias: true, requiredReceptor: [], allowsTipoDespacho: false },
  112: { ...EXPORTACION, nombre: 'NOTA DE CRÉDITO DE EXPORTACIÓN ELECTRÓNICA', requiresReferencias: true, requiredReceptor: [], allowsTipoDespacho: false },
}

/** Whether a line of this document is exempt: marked `ind_exe` 1, or the type is exempt by nature. */
export function isLineaExenta(tipo: TipoDte, linea: { readonly ind_exe?: number }): boolean {
  return TIPOS[tipo].isExemptOnly || linea.ind_exe === 1
}

// ---------------------------------------------------------------------------------------------------------------
// Additional taxes and retentions (docs/sii-protocol.md §2.5). Rates change by law: they are data, and an integrator can always
// send the amount (`monto_imp`) or the rate (`tasa_imp`) explicitly.

export interface ReglaImpuesto {
  /** A: added to MntTotal (additional/specific taxes, anticipated VAT). R: VAT retained, subtracted. */
  readonly clase: 'A' | 'R'
  /** Default rate in percent; null when the amount must be informed (specific taxes, margins, cambio de sujeto). */
  readonly tasa: number | null
  readonly glosa: string
}

export const IMPUESTOS: Readonly<Record<number, ReglaImpuesto>> = {
  14: { clase: 'A', tasa: null, glosa: 'IVA de margen de comercialización' },
  15: { clase: 'R', tasa: 19, glosa: 'IVA retenido total' },
  17: { clase: 'A', tasa: 5, glosa: 'IVA anticipado faenamiento carne' },
  18: { clase: 'A', tasa: 5, glosa: 'IVA anticipado carne' },
  19: { clase: 'A', tasa: 12, glosa: 'IVA anticipado harina' },
  23: { clase: 'A', tasa: 15, glosa: 'Art. 37 letras a, b, c' },
  24: { clase: 'A', tasa: 31.5, glosa: 'Licores, piscos, whisky' },
  25: { clase: 'A', tasa: 20.5, glosa: 'Vinos' },
  26: { clase: 'A', tasa: 20.5, glosa: 'Cervezas y bebidas alcohólicas' },
  27: { clase: 'A', tasa: 10, glosa: 'Bebidas analcohólicas y minerales' },
  28: { clase: 'A', tasa: null, glosa: 'Impuesto específico diésel' },
  30: { clase: 'R', tasa: 10, glosa: 'IVA retenido legumbres' },
  31: { clase: 'R', tasa: 19, glosa: 'IVA retenido silvestres' },
  32: { clase: 'R', tasa: 8, glosa: 'IVA retenido ganado' },
  33: { clase: 'R', tasa: 8, glosa: 'IVA retenido madera' },
  34: { clase: 'R', tasa: 4, glosa: 'IVA retenido trigo' },
  35: { clase: 'A', tasa: null, glosa: 'Impuesto específico gasolina' },
  36: { clase: 'R', tasa: 10, glosa: 'IVA retenido arroz' },
  37: { clase: 'R', tasa: 10, glosa: 'IVA retenido hidrobiológicas' },
  38: { clase: 'R', tasa: 19, glosa: 'IVA retenido chatarra' },
  39: { clase: 'R', tasa: 19, glosa: 'IVA retenido PPA' },
  41: { clase: 'R', tasa: 19, glosa: 'IVA retenido construcción' },
  44: { clase: 'A', tasa: 15, glosa: 'Art. 37 letras e, h, i, l' },
  45: { clase: 'A', tasa: 50, glosa: 'Art. 37 letra j' },
  46: { clase: 'R', tasa: 19, glosa: 'IVA retenido oro' },
  47: { clase: 'R', tasa: 19, glosa: 'IVA retenido cartones' },
  48: { clase: 'R', tasa: 14, glosa: 'IVA retenido frambuesas y pasas' },
  49: { clase: 'R', tasa: 0, glosa: 'Factura de compra sin retención (Bolsa de Productos)' },
  50: { clase: 'A', tasa: null, glosa: 'IVA de margen de instrumentos de prepago' },
  51: { clase: 'A', tasa: null, glosa: 'Impuesto gas natural comprimido' },
  52: { clase: 'A', tasa: null, glosa: 'Impuesto gas licuado de petróleo' },
  53: { clase: 'R', tasa: 0.5, glosa: 'Retención suplementeros' },
  271: { clase: 'A', tasa: 18, glosa: 'Bebidas azucaradas' },
  301: { clase: 'R', tasa: null, glosa: 'IVA retenido legumbres (cambio de sujeto)' },
  321: { clase: 'R', tasa: null, glosa: 'IVA retenido ganado (cambio de sujeto)' },
  331: { clase: 'R', tasa: null, glosa: 'IVA retenido madera (cambio de sujeto)' },
  341: { clase: 'R', tasa: null, glosa: 'IVA retenido trigo (cambio de sujeto)' },
  361: { clase: 'R', tasa: null, glosa: 'IVA retenido arroz (cambio de sujeto)' },
  371: { clase: 'R', tasa: null, glosa: 'IVA retenido hidrobiológicas (cambio de sujeto)' },
  481: { clase: 'R', tasa: null, glosa: 'IVA retenido frambuesas y pasas (cambio de sujeto)' },
}

/** The supported code's rule, or undefined (16, 40, 54, 55 of the XSD enumeration have no documented class). */
export function reglaImpuesto(codigo: number): ReglaImpuesto | undefined {
  return Object.hasOwn(IMPUESTOS, codigo) ? IMPUESTOS[codigo] : undefined
}

/** What the retention rule reads of a reference: the referenced document's type and folio. */
export interface DocumentoRef {
  readonly tipo_doc_ref: number | string
  readonly folio_ref: number
}

/**
 * Credit and debit notes (56, 61) of the issuing company that a request's references reach, keyed by `notaKey`, each
 * with its own references. A note absent from the map is not in the company's store. The service resolves it
 * (services/issue-dte.ts); the domain only reads it, so it stays pure.
 */
export type NotasEmitidas = ReadonlyMap<string, readonly DocumentoRef[]>

export const SIN_NOTAS: NotasEmitidas = new Map()

export function notaKey(tipo: number | string, folio: number): string {
  return `${tipo}:${folio}`
}

/** A reference to a credit or debit note, whose own references say what it modifies. */
export function isNotaRef(r: DocumentoRef): boolean {
  return r.tipo_doc_ref === 56 || r.tipo_doc_ref === 61
}

/**
 * Retentions belong to purchase invoices (46) and the notes that modify one (docs/sii-protocol.md §2.4 "Factura de
 * compra"), directly or through other notes: the SII's certification set for the 46 has a debit note that annuls the
 * credit note of a 46 and carries the 46's IVA retention. A referenced note not in `notas` may lead to a 46 (it was
 * issued elsewhere, or not resolved): it is given the benefit of the doubt.
 */
export function allowsRetenciones(tipo: TipoDte, referencias: readonly (DocumentoRef | number | string)[], notas: NotasEmitidas = SIN_NOTAS): boolean {
  if (tipo === 46) return true
  // A bare type is a reference whose folio is not known: a note given so can only be unknown.
  const refs = referencias.map((r) => (typeof r === 'object' ? r : { tipo_doc_ref: r, folio_ref: 0 }))
  return (tipo === 56 || tipo === 61) && leadsTo46(refs, notas, new Map()) !== false
}

/** true: some reference reaches a 46; null: none does, but some reaches a note not in `notas`; false: none can. */
function leadsTo46(referencias: readonly DocumentoRef[], notas: NotasEmitidas, seen: Map<string, boolean | null>): boolean | null {
  let result: boolean | null = false
  for (const r of referencias) {
    if (r.tipo_doc_ref === 46) return true
    if (!isNotaRef(r)) continue
    const key = notaKey(r.tipo_doc_ref, r.folio_ref)
    if (!seen.has(key)) {
      seen.set(key, false)  // a cycle of notes adds nothing
      const own = notas.get(key)
      seen.set(key, own === undefined ? null : leadsTo46(own, notas, seen))
    }
    const found = seen.get(key)!
    if (found === true) return true
    if (found === null) result = null
  }
  return result
}

// ---------------------------------------------------------------------------------------------------------------
// Customs (Aduana) codes of the export data (docs/sii-protocol.md §2.6). The XML takes numeric codes; spec 2.11 also lets the
// integrator name the common ones. Only a short list of names is known here: anything else goes as its code.

/** Cláusulas de compraventa: Incoterm → Aduana code (CodClauVenta). */
export const CLAUSULAS_VENTA: Readonly<Record<string, number>> = {
  CIF: 1, CFR: 2, EXW: 3, FAS: 4, FOB: 5, 'S/CL': 6, OTROS: 8, DDP: 9, FCA: 10, CPT: 11, CIP: 12, DAT: 17, DAP: 18,
}

/** Tipos de bulto most exports use → Aduana code (CodTpoBultos). */
export const TIPOS_BULTO: Readonly<Record<string, number>> = {
  'CAJA DE CARTON': 22, FARDO: 23, BIDON: 34, BARRIL: 44, TAMBOR: 45, PAQUETE: 61, SACO: 62, BOLSA: 64, CONT20: 73,
  CONT40: 74, ROLLOS: 13, PALLETS: 80, BULTONOESP: 93, 'SIN BULTO': 98,
}

/** Countries most exports go to → Aduana code (CodPaisRecep, CodPaisDestin, Nacionalidad). */
export const PAISES: Readonly<Record<string, number>> = {
  ALEMANIA: 563, ARGENTINA: 224, AUSTRALIA: 406, BOLIVIA: 221, BRASIL: 220, CANADA: 226, CHILE: 997, CHINA: 336,
  COLOMBIA: 202, 'COREA DEL SUR': 333, ECUADOR: 218, ESPANA: 517, 'ESTADOS UNIDOS': 225, USA: 225, 'U.S.A.': 225,
  FRANCIA: 505, HOLANDA: 515, 'PAISES BAJOS': 515, INDIA: 317, ITALIA: 504, JAPON: 331, MEXICO: 216, PARAGUAY: 222,
  PERU: 219, 'REINO UNIDO': 510, URUGUAY: 223,
}

/** Accent- and case-insensitive key of a Customs label: 'Japón' → 'JAPON'. */
function aduanaKey(label: string): string {
  return label.normalize('NFD').replace(/[\u0300-\u036f]/g, '').trim().toUpperCase()
}

/** A Customs code given as digits (up to `maxDigits`) or as a label of `table`; null when neither. */
export function aduanaCode(value: string, table: Readonly<Record<string, number>>, maxDigits: number): number | null {
  const trimmed = value.trim()
  if (new RegExp(`^\\d{1,${maxDigits}}$`).test(trimmed)) return Number(trimmed) > 0 ? Number(trimmed) : null
  const key = aduanaKey(trimmed)
  return Object.hasOwn(table, key) ? table[key]! : null
}
