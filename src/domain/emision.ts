// The issuance request (spec 2.3–2.11, EmitirDTERequest) as TypeScript types, with the spec's JSON names verbatim.
// The TypeBox schema in contracts/dte.ts checks its shape; domain/emision-rules.ts checks the rules across fields.

/** spec 2.1 TipoDTE. */
export const TIPOS_DTE = [33, 34, 39, 41, 43, 46, 52, 56, 61, 110, 111, 112] as const
export type TipoDte = (typeof TIPOS_DTE)[number]

export function isTipoDte(value: unknown): value is TipoDte {
  return typeof value === 'number' && (TIPOS_DTE as readonly number[]).includes(value)
}

/** SiiTypes_v10.xsd TipMonType: currencies are names from the Customs table, not ISO codes (docs/sii-protocol.md §2.1). */
export const MONEDAS = [
  'BOLIVAR', 'BOLIVIANO', 'CHELIN', 'CORONA DIN', 'CORONA NOR', 'CORONA SC', 'CRUZEIRO REAL', 'DIRHAM', 'DOLAR AUST',
  'DOLAR CAN', 'DOLAR HK', 'DOLAR NZ', 'DOLAR SIN', 'DOLAR TAI', 'DOLAR USA', 'DRACMA', 'ESCUDO', 'EURO', 'FLORIN',
  'FRANCO BEL', 'FRANCO FR', 'FRANCO SZ', 'GUARANI', 'LIBRA EST', 'LIRA', 'MARCO AL', 'MARCO FIN', 'NUEVO SOL',
  'OTRAS MONEDAS', 'PESETA', 'PESO', 'PESO CL', 'PESO COL', 'PESO MEX', 'PESO URUG', 'RAND', 'RENMINBI', 'RUPIA',
  'SUCRE', 'YEN',
] as const
export type Moneda = (typeof MONEDAS)[number]

/** The Chilean peso's name in TipMonType: the currency that needs no exchange rate (DESIGN §12 "Exports"). */
export const PESO_CL: Moneda = 'PESO CL'

/** `referencias[].tipo_doc_ref` of a certification-set document (DESIGN §12 "SII certification"). */
export const TIPO_DOC_REF_SET = 'SET'

export interface Receptor {
  /** With check digit, dots optional (DESIGN §8). */
  rut: string
  razon_social: string
  giro?: string
  direccion?: string
  comuna?: string
  ciudad?: string
  /** Extension: the receiver's exchange mailbox (DESIGN §13); also CorreoRecep when it fits the XSD's 80 characters. */
  email?: string
}

/** spec 2.4. */
export interface Linea {
  nombre: string
  dsc_item?: string
  cantidad?: number
  unidad?: string
  precio?: number
  monto_item?: number
  descuento_pct?: number
  recargo_pct?: number
  ind_exe?: 1
  cod_imp_adic?: number
  tipo_doc_liq?: string
}

/** 1 annuls the referenced document, 2 corrects its text, 3 corrects its amounts (spec 2.5). */
export type CodigoRef = 1 | 2 | 3

/** spec 2.5; `tipo_doc_ref` is a TipoDTE, or a free code of up to 3 characters (DUS, MIC, 801, SET…). */
export interface Referencia {
  tipo_doc_ref: TipoDte | string
  folio_ref: number
  fecha_ref: string
  codigo_ref?: CodigoRef
  razon_ref: string
}

/** spec 2.8. */
export interface Comision {
  tipo_movim: 'C' | 'O'
  glosa: string
  tasa_comision?: number
  val_com_neto: number
  val_com_exe: number
  val_com_iva?: number
}

/** spec 2.9. */
export interface ImpuestoRetencion {
  tipo_imp: number
  tasa_imp?: number
  monto_imp?: number
}

/** spec 2.10. */
export interface DescuentoGlobal {
  nro_lin_dr?: number
  tpo_mov: 'D' | 'R'
  tpo_valor: '%' | '$'
  valor_dr: number
  glosa_dr?: string
  ind_exe_dr?: 1 | 2
}

/** spec 2.11. */
export interface ExportData {
  tpo_moneda: Moneda
  tpo_cambio?: number
  mnt_export?: number
  nacionalidad?: string
  num_id?: string
  tipo_doc_id?: number
  forma_pago_exp?: number
  modalidad_venta?: number
  clausula_venta?: string
  total_clausula?: number
  via_transporte?: number
  puerto_embarque?: string
  puerto_desembarque?: string
  tara?: number
  unidad_tara?: number
  peso_bruto?: number
  unidad_peso_bruto?: number
  peso_neto?: number
  unidad_peso_neto?: number
  tipo_bulto?: string
  total_bultos?: number
  marcas?: string
  mnt_flete?: number
  mnt_seguro?: number
  pais_recep?: string
  pais_dest?: string
}

/** spec 2.3 EmitirDTERequest, plus `montos_brutos` (DESIGN §12 "SII certification"). */
export interface EmitirDte {
  tipo_dte: TipoDte
  fecha_emision?: string
  receptor: Receptor
  detalle: Linea[]
  comisiones?: Comision[]
  impuestos_retenciones?: ImpuestoRetencion[]
  referencias?: Referencia[]
  ind_traslado?: number
  tipo_despacho?: number
  ind_servicio?: number
  descuentos_globales?: DescuentoGlobal[]
  auto_send?: boolean
  export_data?: ExportData
  metadata?: Record<string, unknown>
  /** Line prices and `$` discounts include IVA; 33, 56 and 61 without additional taxes (DESIGN §12). */
  montos_brutos?: boolean
}

/** `forma_pago_exp` 21 "sin pago" (docs/sii-protocol.md §2.6): peso amounts and `monto_total` are 0 (DESIGN §12 "Exports"). */
export const FORMA_PAGO_EXP_SIN_PAGO = 21

/** The business date the document carries: the request's, else today in Santiago (spec 2.3). */
export function resolveFechaEmision(request: Pick<EmitirDte, 'fecha_emision'>, today: string): string {
  return request.fecha_emision ?? today
}

/** The references that point at a real document, not at a certification-set case. */
export function documentReferences(request: Pick<EmitirDte, 'referencias'>): Referencia[] {
  return (request.referencias ?? []).filter((r) => r.tipo_doc_ref !== TIPO_DOC_REF_SET)
}

/** A note that only corrects texts (codigo_ref 2): its lines carry no amounts (spec 2.4, docs/sii-protocol.md §2.2). */
export function isTextCorrection(request: Pick<EmitirDte, 'referencias'>): boolean {
  return documentReferences(request).some((r) => r.codigo_ref === 2)
}
